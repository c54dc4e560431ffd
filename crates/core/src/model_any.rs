//! [`AnyModel`]: every kind of model a Bulwark learner produces, behind one type, so the
//! registry, model files and evaluation handle all learners alike. Attacks that need explicit
//! weights ask for [`AnyModel::as_linear`].

use serde::{Deserialize, Serialize};

use crate::ensemble::Ensemble;
use crate::error::{Error, Result};
use crate::kernel::KernelModel;
use crate::matrix::RowView;
use crate::model::{LinearModel, MulticlassLinearModel};
use crate::traits::{Classifier, DecisionFunction, Scores};

/// A trained model of any kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnyModel {
    /// `sign(w·x + b)`.
    Linear(LinearModel),
    /// `argmax_k (W x + b)_k`.
    MulticlassLinear(MulticlassLinearModel),
    /// `sign(Σ α_i K(s_i, x) + b)`.
    Kernel(KernelModel),
    /// `sign(Σ α_t clip(w_t·x + b_t, −1, 1))`.
    Ensemble(Ensemble<LinearModel>),
}

impl AnyModel {
    /// The linear model, when it is one.
    pub fn as_linear(&self) -> Option<&LinearModel> {
        match self {
            AnyModel::Linear(m) => Some(m),
            _ => None,
        }
    }
    /// The linear model, or a typed error saying that `what` needs one.
    pub fn require_linear(&self, what: &str) -> Result<&LinearModel> {
        self.as_linear().ok_or_else(|| self.not_linear(what))
    }
    /// The model, when it is linear; a typed error otherwise.
    pub fn into_linear(self, what: &str) -> Result<LinearModel> {
        match self {
            AnyModel::Linear(m) => Ok(m),
            other => Err(other.not_linear(what)),
        }
    }
    fn not_linear(&self, what: &str) -> Error {
        Error::param(
            "model",
            self.kind(),
            format!("a binary linear model ({what} needs explicit weights)"),
        )
    }
    /// `linear`, `multiclass-linear`, `kernel` or `ensemble`.
    pub fn kind(&self) -> &'static str {
        match self {
            AnyModel::Linear(_) => "linear",
            AnyModel::MulticlassLinear(_) => "multiclass-linear",
            AnyModel::Kernel(_) => "kernel",
            AnyModel::Ensemble(_) => "ensemble",
        }
    }
    /// The binary score, for binary models (`None` for multiclass ones).
    pub fn decision(&self, x: RowView<'_>) -> Option<f64> {
        match self {
            AnyModel::Linear(m) => Some(m.decision(x)),
            AnyModel::Kernel(m) => Some(m.decision(x)),
            AnyModel::Ensemble(m) => Some(m.decision(x)),
            AnyModel::MulticlassLinear(_) => None,
        }
    }
    /// The model as a scorer (and so as a classifier): the one dispatch over the kinds.
    fn inner(&self) -> &dyn Scores {
        match self {
            AnyModel::Linear(m) => m,
            AnyModel::MulticlassLinear(m) => m,
            AnyModel::Kernel(m) => m,
            AnyModel::Ensemble(m) => m,
        }
    }
}

impl From<LinearModel> for AnyModel {
    fn from(m: LinearModel) -> Self {
        AnyModel::Linear(m)
    }
}

impl Classifier for AnyModel {
    fn n_features(&self) -> usize {
        self.inner().n_features()
    }
    fn n_classes(&self) -> usize {
        self.inner().n_classes()
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        self.inner().predict_class(x)
    }
    fn is_mistake(&self, x: RowView<'_>, class: usize) -> bool {
        self.inner().is_mistake(x, class)
    }
}

impl Scores for AnyModel {
    fn n_outputs(&self) -> usize {
        self.inner().n_outputs()
    }
    fn scores_into(&self, x: RowView<'_>, out: &mut [f64]) {
        self.inner().scores_into(x, out)
    }
}
