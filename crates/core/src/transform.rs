//! Transforms fitted on training data and chained before a learner.
//!
//! Two kinds, because they act at different times:
//! - a **feature map** ([`FitTransform`] → [`Transform`]: scaling, projections) is learned on the
//!   training rows and then applied to every row the model ever sees, at training and at
//!   prediction time — [`Transformed`] is the model that does both;
//! - a **row filter** ([`RowFilter`]: norm filtering, outlier removal) decides which training
//!   rows a learner sees; it returns a borrowed [`DatasetView`] (no copy of the features) and the
//!   rows it removed, and has no effect at prediction time.
//!
//! [`Pipeline`] and [`Filtered`] chain them before any learner and are learners themselves.

use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::matrix::{DenseMatrix, Features, RowView};
use crate::traits::{Classifier, DecisionFunction, Fit, FitView, Fitted};
use crate::view::DatasetView;

/// A feature map `ℝⁿ → ℝᵏ` fitted on training data.
pub trait Transform {
    /// The input dimension `n`.
    fn n_inputs(&self) -> usize;
    /// The output dimension `k`.
    fn n_outputs(&self) -> usize;
    /// Maps one row into `out` (of length [`Transform::n_outputs`]); no allocation.
    fn transform_row(&self, x: RowView<'_>, out: &mut [f64]);
    /// The transformed copy of `data` (dense; labels, names and weights kept).
    fn transform(&self, data: &Dataset) -> Result<Dataset> {
        if data.n_features() != self.n_inputs() {
            return Err(Error::shape(
                "transform inputs vs data features",
                self.n_inputs(),
                data.n_features(),
            ));
        }
        let k = self.n_outputs();
        let mut out = DenseMatrix::zeros(data.len(), k);
        for i in 0..data.len() {
            self.transform_row(data.row(i), out.row_mut(i));
        }
        let mut t = data.with_features(out.into())?;
        if k != data.n_features() {
            t = t.with_feature_names(crate::FeatureNames::Default(k))?;
        }
        Ok(t)
    }
}

/// Learns a [`Transform`] from the training rows.
pub trait FitTransform {
    /// The fitted map.
    type Fitted: Transform;
    /// Fits on `train`.
    fn fit_transform(&self, train: &DatasetView<'_>) -> Result<Self::Fitted>;
}

/// The rows a [`RowFilter`] kept and the ones it removed.
#[derive(Debug, Clone)]
pub struct FilteredRows<'a> {
    /// The kept rows, borrowed.
    pub kept: DatasetView<'a>,
    /// Indices (into the filtered view) of the removed rows, ascending.
    pub removed: Vec<usize>,
}

/// Chooses the training rows a learner sees (outlier removal, norm filtering).
pub trait RowFilter {
    /// Short name for reports (`norm-filter`, …).
    fn name(&self) -> &str;
    /// Splits `train` into kept and removed rows. Removing every row is a typed error.
    fn filter<'a>(&self, train: &DatasetView<'a>) -> Result<FilteredRows<'a>>;
}

/// A model applied after a fitted feature map: `x ↦ model(transform(x))`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transformed<T, M> {
    transform: T,
    model: M,
}

impl<T: Transform, M: Classifier> Transformed<T, M> {
    /// Chains `transform` before `model`; their dimensions must agree.
    pub fn try_new(transform: T, model: M) -> Result<Self> {
        if transform.n_outputs() != model.n_features() {
            return Err(Error::shape(
                "transform outputs vs model features",
                model.n_features(),
                transform.n_outputs(),
            ));
        }
        Ok(Self { transform, model })
    }
    /// The feature map.
    pub fn transform(&self) -> &T {
        &self.transform
    }
    /// The model on the mapped features.
    pub fn model(&self) -> &M {
        &self.model
    }
    fn mapped<R>(&self, x: RowView<'_>, f: impl FnOnce(RowView<'_>) -> R) -> R {
        let mut buf = vec![0.0; self.transform.n_outputs()];
        self.transform.transform_row(x, &mut buf);
        f(RowView::Dense(&buf))
    }
}

impl<T: Transform, M: Classifier> Classifier for Transformed<T, M> {
    fn n_features(&self) -> usize {
        self.transform.n_inputs()
    }
    fn n_classes(&self) -> usize {
        self.model.n_classes()
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        self.mapped(x, |z| self.model.predict_class(z))
    }
    fn is_mistake(&self, x: RowView<'_>, class: usize) -> bool {
        self.mapped(x, |z| self.model.is_mistake(z, class))
    }
    /// One buffer for every row.
    fn predict(&self, features: &Features) -> Result<Vec<usize>> {
        self.check_features(features)?;
        let mut buf = vec![0.0; self.transform.n_outputs()];
        Ok((0..features.rows())
            .map(|i| {
                self.transform.transform_row(features.row(i), &mut buf);
                self.model.predict_class(RowView::Dense(&buf))
            })
            .collect())
    }
}

impl<T: Transform, M: DecisionFunction> DecisionFunction for Transformed<T, M> {
    fn decision(&self, x: RowView<'_>) -> f64 {
        self.mapped(x, |z| self.model.decision(z))
    }
}

/// The learner "fit the feature map on the training data, then `learner` on the mapped data".
#[derive(Debug, Clone)]
pub struct Pipeline<F, L> {
    /// The feature map to fit first.
    pub transform: F,
    /// The learner trained on the mapped data.
    pub learner: L,
}

impl<F, L> Fit<Dataset> for Pipeline<F, L>
where
    F: FitTransform,
    L: Fit<Dataset>,
    L::Model: Classifier,
{
    type Model = Transformed<F::Fitted, L::Model>;
    type Error = L::Error;
    fn fit(&self, data: &Dataset) -> std::result::Result<Fitted<Self::Model>, L::Error> {
        let map = self.transform.fit_transform(&data.view())?;
        let mapped = map.transform(data)?;
        let inner = self.learner.fit(&mapped)?;
        Ok(Fitted {
            model: Transformed::try_new(map, inner.model)?,
            report: inner.report,
        })
    }
}

/// The learner "drop the rows `filter` removes, then `learner` on the rest"; the report's
/// `details["removed"]` counts the removed rows. The learner sees a borrowed view
/// ([`FitView`]): the features are not copied.
#[derive(Debug, Clone)]
pub struct Filtered<R, L> {
    /// The row filter.
    pub filter: R,
    /// The learner trained on the kept rows.
    pub learner: L,
}

impl<R, L> Fit<Dataset> for Filtered<R, L>
where
    R: RowFilter,
    L: FitView,
{
    type Model = L::Model;
    type Error = L::Error;
    fn fit(&self, data: &Dataset) -> std::result::Result<Fitted<L::Model>, L::Error> {
        let rows = self.filter.filter(&data.view())?;
        let mut inner = self.learner.fit_view(&rows.kept)?;
        inner
            .report
            .details
            .insert("removed".into(), rows.removed.len() as f64);
        Ok(inner)
    }
}
