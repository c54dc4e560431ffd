//! Data sets: a feature matrix, targets (binary ±1 or multiclass), names and optional weights.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Location, Result};
use crate::matrix::{Features, RowView};
use crate::missing::MissingMask;
use crate::names::FeatureNames;

/// A binary label, −1 or +1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Sign {
    /// The negative class, −1.
    Neg,
    /// The positive class, +1.
    Pos,
}

impl Sign {
    /// −1.0 or +1.0.
    #[inline]
    pub fn as_f64(self) -> f64 {
        match self {
            Sign::Neg => -1.0,
            Sign::Pos => 1.0,
        }
    }
    /// The sign of a decision value; **0 maps to `Neg`** (DSX eq. (1): a zero score is never
    /// a correct prediction, see [`Sign::is_mistake`]).
    #[inline]
    pub fn of_score(score: f64) -> Self {
        if score > 0.0 { Sign::Pos } else { Sign::Neg }
    }
    /// Whether score `s` is a mistake on label `self`: `y·s ≤ 0` (DSX eq. (1), (2)).
    #[inline]
    pub fn is_mistake(self, score: f64) -> bool {
        self.as_f64() * score <= 0.0 || score.is_nan()
    }
    /// The other class.
    pub fn flip(self) -> Self {
        match self {
            Sign::Neg => Sign::Pos,
            Sign::Pos => Sign::Neg,
        }
    }
    /// Parses ±1, 0/1 style numeric labels (0 and −1 map to `Neg`, 1 and +1 to `Pos`).
    pub fn from_numeric(v: f64) -> Option<Self> {
        if v == 1.0 {
            Some(Sign::Pos)
        } else if v == -1.0 || v == 0.0 {
            Some(Sign::Neg)
        } else {
            None
        }
    }
}

/// The targets of a data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Targets {
    /// Binary ±1 labels. `class_names[0]` names −1, `class_names[1]` names +1.
    Binary(Vec<Sign>),
    /// Class indices `0..class_names.len()`.
    Multiclass(Vec<usize>),
}

impl Targets {
    /// Number of examples.
    pub fn len(&self) -> usize {
        match self {
            Targets::Binary(v) => v.len(),
            Targets::Multiclass(v) => v.len(),
        }
    }
    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Class index of example `i` (binary: 0 for −1, 1 for +1).
    pub fn class_index(&self, i: usize) -> usize {
        match self {
            Targets::Binary(v) => usize::from(v[i] == Sign::Pos),
            Targets::Multiclass(v) => v[i],
        }
    }
    fn select(&self, idx: &[usize]) -> Self {
        match self {
            Targets::Binary(v) => Targets::Binary(idx.iter().map(|&i| v[i]).collect()),
            Targets::Multiclass(v) => Targets::Multiclass(idx.iter().map(|&i| v[i]).collect()),
        }
    }
}

/// A labelled data set: `m` examples × `n` features.
///
/// Binary and multiclass data share this type; learners that need ±1 labels call
/// [`Dataset::binary_labels`], which fails with a typed error on multiclass data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    name: String,
    features: Features,
    targets: Targets,
    feature_names: FeatureNames,
    class_names: Vec<String>,
    weights: Option<Vec<f64>>,
    /// Missing cells (they hold 0 in `features`; see [`crate::missing`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    missing: Option<MissingMask>,
    /// Where the feature count was declared, when an input declared it (the largest index of
    /// a LIBSVM file), for messages about memory sized by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dimension_source: Option<Location>,
}

impl Dataset {
    /// A binary data set. `class_names` are (negative, positive); features must have one row per label.
    pub fn binary(
        name: impl Into<String>,
        features: impl Into<Features>,
        labels: Vec<Sign>,
    ) -> Result<Self> {
        let features = features.into();
        let n = features.cols();
        Self::try_new(
            name,
            features,
            Targets::Binary(labels),
            FeatureNames::Default(n),
            vec!["-1".to_string(), "+1".to_string()],
        )
    }

    /// A multiclass data set with class indices into `class_names`.
    pub fn multiclass(
        name: impl Into<String>,
        features: impl Into<Features>,
        labels: Vec<usize>,
        class_names: Vec<String>,
    ) -> Result<Self> {
        let features = features.into();
        let n = features.cols();
        Self::try_new(
            name,
            features,
            Targets::Multiclass(labels),
            FeatureNames::Default(n),
            class_names,
        )
    }

    /// The general constructor; validates every size and class index. `feature_names` are the
    /// input's own (`Vec<String>`) or [`FeatureNames::Default`].
    pub fn try_new(
        name: impl Into<String>,
        features: Features,
        targets: Targets,
        feature_names: impl Into<FeatureNames>,
        class_names: Vec<String>,
    ) -> Result<Self> {
        let name = name.into();
        let feature_names = feature_names.into();
        if features.rows() != targets.len() {
            return Err(Error::shape(
                format!("{name}: labels vs feature rows"),
                features.rows(),
                targets.len(),
            ));
        }
        if feature_names.len() != features.cols() {
            return Err(Error::shape(
                format!("{name}: feature names vs columns"),
                features.cols(),
                feature_names.len(),
            ));
        }
        match &targets {
            Targets::Binary(_) if class_names.len() != 2 => {
                return Err(Error::shape(
                    format!("{name}: binary class names"),
                    2,
                    class_names.len(),
                ));
            }
            Targets::Multiclass(labels) => {
                if let Some((i, &c)) = labels
                    .iter()
                    .enumerate()
                    .find(|(_, c)| **c >= class_names.len())
                {
                    return Err(Error::input(
                        Location::source(name.clone()).line(i + 1),
                        format!(
                            "class index {c} out of range ({} classes)",
                            class_names.len()
                        ),
                    ));
                }
            }
            _ => {}
        }
        Ok(Self {
            name,
            features,
            targets,
            feature_names,
            class_names,
            weights: None,
            missing: None,
            dimension_source: None,
        })
    }

    /// Attaches non-negative finite example weights (one per example).
    pub fn with_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        if weights.len() != self.len() {
            return Err(Error::shape(
                format!("{}: example weights", self.name),
                self.len(),
                weights.len(),
            ));
        }
        if let Some((i, w)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
        {
            return Err(Error::input(
                Location::source(self.name.clone()).line(i + 1),
                format!("example weight {w} must be finite and >= 0"),
            ));
        }
        self.weights = Some(weights);
        Ok(self)
    }
    /// Marks missing cells (see [`crate::missing`]): the mask must have the data's shape and
    /// every masked cell must hold 0 in the features (the deleted value). A mask without any
    /// missing cell is dropped.
    pub fn with_missing(mut self, mask: MissingMask) -> Result<Self> {
        if mask.rows() != self.len() || mask.cols() != self.n_features() {
            return Err(Error::shape(
                format!("{}: missing mask rows", self.name),
                self.len(),
                mask.rows(),
            ));
        }
        for i in 0..mask.rows() {
            let row = self.features.row(i);
            if let Some(&j) = mask.row(i).iter().find(|&&j| row.get(j) != 0.0) {
                return Err(Error::input(
                    Location::source(self.name.clone())
                        .line(i + 1)
                        .column(j + 1)
                        .field(self.feature_names.get(j)),
                    "a missing cell must hold 0 in the feature matrix (the deleted value)",
                ));
            }
        }
        self.missing = (mask.count() > 0).then_some(mask);
        Ok(self)
    }
    /// The missing cells, if any ([`crate::missing`]).
    pub fn missing(&self) -> Option<&MissingMask> {
        self.missing.as_ref()
    }
    /// Number of missing cells.
    pub fn n_missing(&self) -> usize {
        self.missing.as_ref().map_or(0, MissingMask::count)
    }
    /// Number of records with at least one missing cell.
    pub fn incomplete_records(&self) -> usize {
        self.missing
            .as_ref()
            .map_or(0, MissingMask::incomplete_rows)
    }
    /// The records without any missing cell (weights follow) and the number removed.
    pub fn drop_incomplete(&self) -> (Self, usize) {
        let Some(mask) = &self.missing else {
            return (self.clone(), 0);
        };
        let keep: Vec<usize> = (0..self.len())
            .filter(|&i| mask.row(i).is_empty())
            .collect();
        let removed = self.len() - keep.len();
        let mut d = self.select(&keep);
        d.missing = None;
        (d, removed)
    }
    /// The same data with the mask forgotten: masked cells stay 0 and are from now on observed
    /// zeros (what a learner fitted under `--missing delete` sees).
    pub fn forget_missing(mut self) -> Self {
        self.missing = None;
        self
    }

    /// Replaces the feature names (one per column).
    pub fn with_feature_names(mut self, names: impl Into<FeatureNames>) -> Result<Self> {
        let names = names.into();
        if names.len() != self.n_features() {
            return Err(Error::shape(
                format!("{}: feature names", self.name),
                self.n_features(),
                names.len(),
            ));
        }
        self.feature_names = names;
        Ok(self)
    }
    /// Replaces the class names (2 for binary data).
    pub fn with_class_names(mut self, names: Vec<String>) -> Result<Self> {
        let expected = match &self.targets {
            Targets::Binary(_) => 2,
            Targets::Multiclass(_) => self.class_names.len(),
        };
        if names.len() != expected {
            return Err(Error::shape(
                format!("{}: class names", self.name),
                expected,
                names.len(),
            ));
        }
        self.class_names = names;
        Ok(self)
    }
    /// Records where the feature count was declared (the largest index of a LIBSVM file).
    pub fn with_dimension_source(mut self, location: Location) -> Self {
        self.dimension_source = Some(location);
        self
    }
    /// Where the feature count was declared, if an input declared it.
    pub fn dimension_source(&self) -> Option<&Location> {
        self.dimension_source.as_ref()
    }
    /// The bytes the features, labels and weights take as stored (what the input contains),
    /// the measure memory sized by the feature count is held to ([`crate::memory`]).
    pub fn stored_bytes(&self) -> u64 {
        let per_row = std::mem::size_of::<usize>() as u64 * 2;
        let rows = self.len() as u64;
        self.features
            .stored_bytes()
            .saturating_add(per_row.saturating_mul(rows))
    }
    /// Renames the data set.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Data set name (file or built-in name, plus the task).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of examples `m`.
    pub fn len(&self) -> usize {
        self.targets.len()
    }
    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of features `n`.
    pub fn n_features(&self) -> usize {
        self.features.cols()
    }
    /// The feature matrix.
    pub fn features(&self) -> &Features {
        &self.features
    }
    /// The feature matrix, mutable (shape is fixed).
    pub fn features_mut(&mut self) -> &mut Features {
        &mut self.features
    }
    /// Example `i`.
    #[inline]
    pub fn row(&self, i: usize) -> RowView<'_> {
        self.features.row(i)
    }
    /// The targets.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }
    /// Feature names (the defaults `x1, …, xn` are computed when asked for).
    pub fn feature_names(&self) -> &FeatureNames {
        &self.feature_names
    }
    /// Class names (binary: negative then positive).
    pub fn class_names(&self) -> &[String] {
        &self.class_names
    }
    /// Number of classes (2 for binary).
    pub fn n_classes(&self) -> usize {
        self.class_names.len()
    }
    /// Example weights, if any.
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }
    /// The one meaning of example weights for a learner that does not honour them: a typed
    /// error naming the learner and the data, never a silent fit that ignores them.
    pub fn reject_weights(&self, algorithm: &str) -> Result<()> {
        if self.weights.is_some() {
            return Err(Error::input(
                Location::source(self.name.clone()),
                format!(
                    "{algorithm}: example weights are not supported by this learner; drop them or resample"
                ),
            ));
        }
        Ok(())
    }
    /// A borrowed view of every row.
    pub fn view(&self) -> crate::view::DatasetView<'_> {
        crate::view::DatasetView::full(self)
    }
    /// Whether the targets are binary.
    pub fn is_binary(&self) -> bool {
        matches!(self.targets, Targets::Binary(_))
    }

    /// The ±1 labels; a typed error on multiclass data.
    pub fn binary_labels(&self) -> Result<&[Sign]> {
        match &self.targets {
            Targets::Binary(y) => Ok(y),
            Targets::Multiclass(_) => Err(Error::input(
                Location::source(self.name.clone()),
                format!(
                    "a binary task is needed but the data have {} classes; choose one with a pair or a positive class",
                    self.class_names.len()
                ),
            )),
        }
    }

    /// Like [`Dataset::binary_labels`] but also requires both classes to be present.
    pub fn require_two_classes(&self) -> Result<&[Sign]> {
        let y = self.binary_labels()?;
        let pos = y.iter().filter(|s| **s == Sign::Pos).count();
        let neg = y.len() - pos;
        if pos == 0 || neg == 0 {
            let (class, count) = if pos == 0 {
                (&self.class_names[0], neg)
            } else {
                (&self.class_names[1], pos)
            };
            return Err(Error::SingleClass {
                context: self.name.clone(),
                class: class.clone(),
                count,
            });
        }
        Ok(y)
    }

    /// Number of examples per class name, in class order.
    pub fn class_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = vec![0usize; self.class_names.len()];
        for i in 0..self.len() {
            counts[self.targets.class_index(i)] += 1;
        }
        self.class_names.iter().cloned().zip(counts).collect()
    }

    /// A new data set with the examples `idx` (in that order); weights follow.
    pub fn select(&self, idx: &[usize]) -> Self {
        Self {
            name: self.name.clone(),
            features: self.features.select_rows(idx),
            targets: self.targets.select(idx),
            feature_names: self.feature_names.clone(),
            class_names: self.class_names.clone(),
            weights: self
                .weights
                .as_ref()
                .map(|w| idx.iter().map(|&i| w[i]).collect()),
            missing: self
                .missing
                .as_ref()
                .map(|m| m.select(idx))
                .filter(|m| m.count() > 0),
            dimension_source: self.dimension_source.clone(),
        }
    }

    /// Same labels and names, new features (same shape); used by attacks and scalers. A mask
    /// of missing cells is kept, and those cells are set to 0 in `features` (the deleted value,
    /// [`crate::missing`]).
    pub fn with_features(&self, mut features: Features) -> Result<Self> {
        if features.rows() != self.len() || features.cols() != self.n_features() {
            return Err(Error::shape(
                format!("{}: replacement features (rows)", self.name),
                self.len(),
                features.rows(),
            ));
        }
        if let Some(m) = &self.missing {
            features.delete_cells(m)?;
        }
        Ok(Self {
            features,
            ..self.clone()
        })
    }

    /// Replaces the targets (same length); class names must match the new targets.
    pub fn with_targets(&self, targets: Targets, class_names: Vec<String>) -> Result<Self> {
        Self::try_new(
            self.name.clone(),
            self.features.clone(),
            targets,
            self.feature_names.clone(),
            class_names,
        )
        .map(|d| Self {
            weights: self.weights.clone(),
            missing: self.missing.clone(),
            dimension_source: self.dimension_source.clone(),
            ..d
        })
    }

    /// The labels of a binary training set, after the checks every binary learner makes: at
    /// least one example and one feature, both classes present, every value finite. (Example
    /// weights are the learner's business: it honours them or calls
    /// [`Dataset::reject_weights`].)
    pub fn binary_training_labels(&self) -> Result<&[Sign]> {
        if self.is_empty() {
            return Err(Error::param("data", "empty", "at least one example"));
        }
        let y = self.require_two_classes()?;
        self.check_finite()?;
        if self.n_features() == 0 {
            return Err(Error::param("data", "0 features", "at least one feature"));
        }
        Ok(y)
    }

    /// The checks every multiclass learner makes before training, in this order: non-empty,
    /// every value finite, at least two classes; returns each example's class index.
    pub fn multiclass_training_classes(&self) -> Result<Vec<usize>> {
        if self.is_empty() {
            return Err(Error::param("data", "empty", "at least one example"));
        }
        self.check_finite()?;
        let classes = self.n_classes();
        if classes < 2 {
            return Err(Error::param("classes", classes, "at least 2"));
        }
        let t = self.targets();
        Ok((0..self.len()).map(|i| t.class_index(i)).collect())
    }

    /// Checks every feature value is finite (constructors of the matrix types already do).
    pub fn check_finite(&self) -> Result<()> {
        for i in 0..self.len() {
            for (j, v) in self.row(i).nonzeros() {
                if !v.is_finite() {
                    return Err(Error::NonFinite {
                        location: Location::source(self.name.clone())
                            .line(i + 1)
                            .column(j + 1)
                            .field(self.feature_names.get(j)),
                        value: v.to_string(),
                    });
                }
            }
        }
        Ok(())
    }
}
