//! Linear models: binary `(w, b)` and multiclass `(W, b)` with one weight row per class.
//!
//! Fields are private and every constructor (including deserialisation) checks the invariants
//! once: finite numbers, consistent shapes. A model that exists is valid.

use serde::{Deserialize, Serialize};

use crate::dataset::Sign;
use crate::error::{Error, Result};
use crate::matrix::{DenseMatrix, RowView};
use crate::traits::{Classifier, DecisionFunction, Linear, Scores};

fn check_finite(name: &str, values: &[f64]) -> Result<()> {
    match values.iter().enumerate().find(|(_, w)| !w.is_finite()) {
        Some((j, w)) => Err(Error::param(format!("{name}[{j}]"), w, "a finite number")),
        None => Ok(()),
    }
}

/// A binary linear classifier `x ↦ sign(w·x + b)`; a score of exactly 0 predicts −1 and is
/// always counted as a mistake (DSX eq. (1)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawLinear")]
pub struct LinearModel {
    weights: Vec<f64>,
    bias: f64,
}

#[derive(Deserialize)]
struct RawLinear {
    weights: Vec<f64>,
    bias: f64,
}

impl TryFrom<RawLinear> for LinearModel {
    type Error = Error;
    fn try_from(r: RawLinear) -> Result<Self> {
        Self::try_new(r.weights, r.bias)
    }
}

impl LinearModel {
    /// Validates that every weight and the bias are finite.
    pub fn try_new(weights: Vec<f64>, bias: f64) -> Result<Self> {
        check_finite("weights", &weights)?;
        if !bias.is_finite() {
            return Err(Error::param("bias", bias, "a finite number"));
        }
        Ok(Self { weights, bias })
    }
    /// The all-zero model on `n` features.
    pub fn zeros(n: usize) -> Self {
        Self {
            weights: vec![0.0; n],
            bias: 0.0,
        }
    }
    /// The weights `w`.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }
    /// The bias `b`.
    pub fn bias(&self) -> f64 {
        self.bias
    }
    /// `(w, b)`, consuming the model.
    pub fn into_parts(self) -> (Vec<f64>, f64) {
        (self.weights, self.bias)
    }
    /// `‖w‖∞`.
    pub fn max_abs_weight(&self) -> f64 {
        self.weights.iter().fold(0.0, |a, w| a.max(w.abs()))
    }
}

impl Classifier for LinearModel {
    fn n_features(&self) -> usize {
        self.weights.len()
    }
    fn n_classes(&self) -> usize {
        2
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        usize::from(Sign::of_score(self.decision(x)) == Sign::Pos)
    }
    fn is_mistake(&self, x: RowView<'_>, class: usize) -> bool {
        binary_mistake(self.decision(x), class)
    }
}

/// DSX eq. (1): a binary score `s` is a mistake on class `class` (0 = −1, 1 = +1) when
/// `y·s ≤ 0`, so a score of exactly 0 is always a mistake.
pub(crate) fn binary_mistake(score: f64, class: usize) -> bool {
    let y = if class == 1 { Sign::Pos } else { Sign::Neg };
    y.is_mistake(score)
}

impl DecisionFunction for LinearModel {
    #[inline]
    fn decision(&self, x: RowView<'_>) -> f64 {
        x.dot(&self.weights) + self.bias
    }
}

impl Linear for LinearModel {
    fn weights(&self) -> &[f64] {
        &self.weights
    }
    fn bias(&self) -> f64 {
        self.bias
    }
}

/// A multiclass linear classifier: a `C × n` weight matrix `W` and `C` biases; the scores are
/// `W x + b` and the prediction is the largest score (ties to the lowest class index).
/// One-vs-rest, Crammer–Singer and multiclass GURU all produce it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawMulticlass")]
pub struct MulticlassLinearModel {
    weights: DenseMatrix,
    biases: Vec<f64>,
}

#[derive(Deserialize)]
struct RawMulticlass {
    weights: DenseMatrix,
    biases: Vec<f64>,
}

impl TryFrom<RawMulticlass> for MulticlassLinearModel {
    type Error = Error;
    fn try_from(r: RawMulticlass) -> Result<Self> {
        Self::try_new(r.weights, r.biases)
    }
}

impl MulticlassLinearModel {
    /// Validates: at least two classes (rows of `weights`), one bias per class, finite numbers.
    pub fn try_new(weights: DenseMatrix, biases: Vec<f64>) -> Result<Self> {
        if weights.rows() < 2 {
            return Err(Error::param(
                "classes",
                weights.rows(),
                "at least 2 rows of weights (one per class)",
            ));
        }
        let cells = weights.rows().checked_mul(weights.cols());
        if cells != Some(weights.as_slice().len()) {
            return Err(Error::shape(
                "multiclass model: weight matrix storage",
                cells.unwrap_or(usize::MAX),
                weights.as_slice().len(),
            ));
        }
        if biases.len() != weights.rows() {
            return Err(Error::shape(
                "multiclass model: biases vs classes",
                weights.rows(),
                biases.len(),
            ));
        }
        check_finite("weights", weights.as_slice())?;
        check_finite("biases", &biases)?;
        Ok(Self { weights, biases })
    }
    /// Builds the model from one binary scorer per class (one-vs-rest).
    pub fn from_binary(classes: &[LinearModel]) -> Result<Self> {
        let n = classes.first().map_or(0, |c| c.weights.len());
        if let Some(c) = classes.iter().find(|c| c.weights.len() != n) {
            return Err(Error::shape(
                "multiclass model: per-class weight length",
                n,
                c.weights.len(),
            ));
        }
        let data = classes.iter().flat_map(|c| c.weights.iter().copied());
        let weights = DenseMatrix::try_new(classes.len(), n, data.collect())?;
        Self::try_new(weights, classes.iter().map(|c| c.bias).collect())
    }
    /// The `C × n` weight matrix (row `k` scores class `k`).
    pub fn weights(&self) -> &DenseMatrix {
        &self.weights
    }
    /// The per-class biases.
    pub fn biases(&self) -> &[f64] {
        &self.biases
    }
    /// The score of class `k` for `x`.
    #[inline]
    pub fn class_score(&self, k: usize, x: RowView<'_>) -> f64 {
        x.dot(self.weights.row(k)) + self.biases[k]
    }
}

impl Classifier for MulticlassLinearModel {
    fn n_features(&self) -> usize {
        self.weights.cols()
    }
    fn n_classes(&self) -> usize {
        self.weights.rows()
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        let mut best = (0, f64::NEG_INFINITY);
        for k in 0..self.weights.rows() {
            let s = self.class_score(k, x);
            if s > best.1 {
                best = (k, s);
            }
        }
        best.0
    }
}

impl Scores for MulticlassLinearModel {
    fn n_outputs(&self) -> usize {
        self.weights.rows()
    }
    fn scores_into(&self, x: RowView<'_>, out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.class_score(k, x);
        }
    }
}
