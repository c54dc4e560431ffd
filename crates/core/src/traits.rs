//! The trait family every learner, model and adversary of Bulwark implements.
//!
//! | role | trait | implemented by |
//! |---|---|---|
//! | hyper-parameter validation | [`ParamGuard`] | every `…Params` builder |
//! | batch training | [`Fit`] | LP (DSX), O2B, SVM, FDROP, logistic regression |
//! | incremental / online training | [`FitWith`] | the cube-projected Perceptron (O2B) |
//! | prediction | [`Classifier`] | every model: binary, multiclass, linear or kernel |
//! | real-valued binary score | [`DecisionFunction`] | binary models (linear, kernel, ensembles) |
//! | scores, binary or multi-output | [`Scores`] | every `DecisionFunction` (one output) and multiclass models |
//! | feature maps fitted on training data | [`crate::transform::FitTransform`] / [`crate::transform::Transform`] | scaling (`bulwark-data`), … |
//! | training-row filters | [`crate::transform::RowFilter`] | norm filtering, outlier removal |
//! | explicit `(w, b)` | [`Linear`] | linear models — what the deletion adversaries and certificates need |
//! | test-time attack | [`TestTimeAttack`] | greedy / random / exact deletion, corruption, noise clouds |
//! | training-time contamination | [`Contamination`] | malicious noise (KLS), label noise, RoLR outliers |
//!
//! Example weights have one meaning: a learner honours them or refuses data that carry them
//! with a typed error ([`Dataset::reject_weights`]); none ignores them.
//!
//! Training returns [`Fitted`]: the model plus a uniform [`FitReport`] (objective, iterations,
//! seconds, convergence), so the CLI and the bench harness print every learner the same way.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, Sign};
use crate::error::{Error, Result};
use crate::matrix::{DenseMatrix, Features, RowView};
use crate::rng::Rng;
use crate::view::DatasetView;

/// Unchecked hyper-parameters that validate into a checked form (linfa's `ParamGuard`).
pub trait ParamGuard {
    /// The validated parameters.
    type Checked;
    /// The validation error (names the parameter and the rejected value).
    type Error;
    /// Validates by reference.
    fn check_ref(&self) -> std::result::Result<&Self::Checked, Self::Error>;
    /// Validates, consuming the builder.
    fn check(self) -> std::result::Result<Self::Checked, Self::Error>;
}

/// What training reports besides the model, the same for every learner: which solver answered,
/// whether it met the tolerance asked, the tolerance it reached and how long it took.
///
/// A learner that falls back to another solver (or retries with other settings) records each
/// failed attempt in [`FitReport::fallbacks`] and names the solver that produced the model in
/// [`FitReport::solver`]; nothing is substituted silently.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// Learner name (`lp`, `o2b`, `svm`, …).
    pub algorithm: String,
    /// The solver that produced the returned model (`dsx-ipm`, `hsd-engine/structured`,
    /// `dual-cd`, `newton-cg`, …).
    #[serde(default)]
    pub solver: String,
    /// The training objective at the returned model, when the learner has one.
    pub objective: Option<f64>,
    /// Iterations / epochs / passes performed (summed over every attempt).
    pub iterations: Option<usize>,
    /// Wall-clock training time in seconds.
    pub seconds: f64,
    /// Whether the solver that answered met the tolerance asked ([`FitReport::tolerance`]).
    pub converged: bool,
    /// The tolerance asked of the solver, when it has one.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The value of the solver's own stopping measure at the returned model (relative gap,
    /// residual, …), comparable with [`FitReport::tolerance`].
    #[serde(default)]
    pub reached: Option<f64>,
    /// Attempts that did not answer, in order, each `solver: reason` (empty when the first
    /// solver answered).
    #[serde(default)]
    pub fallbacks: Vec<String>,
    /// Why the solver that answered stopped without meeting the tolerance, when it says
    /// (`solver: status: reason (k iterations)`; e.g. the structured IPM's `almost_optimal`
    /// answers: stalled or at its iteration limit, and the certified gap of the iterate
    /// returned). Not stored in model files (their binary layout is positional); `converged`
    /// and `reached` are.
    #[serde(skip)]
    pub stopped: Option<String>,
    /// How an interior-point method solved its normal equations (`feature-space`,
    /// `example-space`, `sparse-ldl`: the DSX LP's cost model or a forced method), when the
    /// learner has them. Not stored in model files, like `stopped`.
    #[serde(skip)]
    pub normal_equations: Option<String>,
    /// Learner-specific figures (duality gap, residuals, …).
    pub details: BTreeMap<String, f64>,
}

impl FitReport {
    /// An empty report of `algorithm` answered by `solver`.
    pub fn new(algorithm: impl Into<String>, solver: impl Into<String>) -> Self {
        Self {
            algorithm: algorithm.into(),
            solver: solver.into(),
            ..Self::default()
        }
    }
    /// Whether another solver (or another setting) answered after the first attempt failed.
    pub fn fell_back(&self) -> bool {
        !self.fallbacks.is_empty()
    }
    /// One line for logs and tables: `solver (converged to 3e-9 ≤ 1e-8)` or
    /// `solver (NOT converged: 2e-4 > 1e-8; after: …)`.
    pub fn summary(&self) -> String {
        let mut s = self.solver.clone();
        let tol = match (self.reached, self.tolerance) {
            (Some(r), Some(t)) => format!(": {r:.1e} vs tolerance {t:.0e}"),
            (None, Some(t)) => format!(": tolerance {t:.0e}"),
            _ => String::new(),
        };
        if self.converged {
            s.push_str(&format!(" (converged{tol})"));
        } else {
            s.push_str(&format!(" (NOT converged{tol})"));
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!("; {why}"));
        }
        if self.fell_back() {
            s.push_str(&format!("; after {}", self.fallbacks.join("; ")));
        }
        s
    }
}

/// A trained model and its report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fitted<M> {
    /// The model.
    pub model: M,
    /// What training reported.
    pub report: FitReport,
}

/// Batch training: validated hyper-parameters turn a data set into a model.
pub trait Fit<D: ?Sized = Dataset> {
    /// The model produced.
    type Model;
    /// The error type (wraps [`crate::Error`]).
    type Error: std::error::Error + From<Error>;
    /// Trains on `data`.
    fn fit(&self, data: &D) -> std::result::Result<Fitted<Self::Model>, Self::Error>;
}

/// Batch training on a borrowed [`DatasetView`]: learners that read rows without copying the
/// features (what splits, boosting rounds and row filters hand them).
pub trait FitView {
    /// The model produced.
    type Model;
    /// The error type (wraps [`crate::Error`]).
    type Error: std::error::Error + From<Error>;
    /// Trains on the rows of `data`.
    fn fit_view(
        &self,
        data: &DatasetView<'_>,
    ) -> std::result::Result<Fitted<Self::Model>, Self::Error>;
}

/// Incremental training: continue from an optional previous model on a new batch (online
/// learners, warm starts).
pub trait FitWith<D: ?Sized = Dataset>: Fit<D> {
    /// Trains on `batch`, starting from `previous` when given.
    fn fit_with(
        &self,
        previous: Option<Self::Model>,
        batch: &D,
    ) -> std::result::Result<Fitted<Self::Model>, Self::Error>;
}

/// A trained classifier: predicts a class index for an example.
///
/// Binary models predict 0 for −1 and 1 for +1, matching [`crate::Targets::class_index`].
pub trait Classifier {
    /// Number of features the model expects.
    fn n_features(&self) -> usize;
    /// Number of classes it predicts.
    fn n_classes(&self) -> usize;
    /// Predicted class index of one example.
    fn predict_class(&self, x: RowView<'_>) -> usize;
    /// Whether the model errs on `x` of class `class`. Binary models with a score follow DSX
    /// eq. (1): a score of exactly 0 is a mistake whatever the label.
    fn is_mistake(&self, x: RowView<'_>, class: usize) -> bool {
        self.predict_class(x) != class
    }

    /// Checks that `data` has the feature count the model was trained on.
    fn check_features(&self, features: &Features) -> Result<()> {
        if features.cols() == self.n_features() {
            Ok(())
        } else {
            Err(Error::shape(
                "model feature count vs data feature count",
                self.n_features(),
                features.cols(),
            ))
        }
    }
    /// Predicted class indices for every row.
    fn predict(&self, features: &Features) -> Result<Vec<usize>> {
        self.check_features(features)?;
        Ok((0..features.rows())
            .map(|i| self.predict_class(features.row(i)))
            .collect())
    }
    /// Fraction of misclassified examples ([`Classifier::is_mistake`]; for binary models a
    /// score of exactly 0 is a mistake).
    fn error_rate(&self, data: &Dataset) -> Result<f64> {
        self.error_rate_view(&data.view())
    }
    /// [`Classifier::error_rate`] on a borrowed view (a split, a boosting round's rows, …),
    /// weighted by the example weights when the data carry them.
    fn error_rate_view(&self, data: &DatasetView<'_>) -> Result<f64> {
        self.check_features(data.features())?;
        if data.n_classes() != self.n_classes() {
            return Err(Error::shape(
                "model classes vs data classes",
                self.n_classes(),
                data.n_classes(),
            ));
        }
        if data.is_empty() {
            return Err(Error::param("data", "empty", "at least one example"));
        }
        let (mut wrong, mut total) = (0.0, 0.0);
        for i in 0..data.len() {
            let w = data.weight(i);
            total += w;
            if self.is_mistake(data.row(i), data.class_index(i)) {
                wrong += w;
            }
        }
        if total <= 0.0 {
            return Err(Error::param(
                "weights",
                "all zero",
                "a positive total example weight",
            ));
        }
        Ok(wrong / total)
    }
}

/// Real-valued scores, binary or multi-output: one output for a binary model (its signed
/// score, positive for class 1), one per class for a multiclass model. Every
/// [`DecisionFunction`] has it with one output.
pub trait Scores: Classifier {
    /// The number of outputs (1 for binary models, the class count otherwise).
    fn n_outputs(&self) -> usize;
    /// Writes the outputs for `x` into `out` (of length [`Scores::n_outputs`]); no allocation.
    fn scores_into(&self, x: RowView<'_>, out: &mut [f64]);
    /// Scores of every row: a `rows × n_outputs` matrix.
    fn scores(&self, features: &Features) -> Result<DenseMatrix> {
        self.check_features(features)?;
        let k = self.n_outputs();
        let mut out = DenseMatrix::zeros(features.rows(), k);
        for i in 0..features.rows() {
            self.scores_into(features.row(i), out.row_mut(i));
        }
        Ok(out)
    }
}

impl<T: DecisionFunction + ?Sized> Scores for T {
    fn n_outputs(&self) -> usize {
        1
    }
    fn scores_into(&self, x: RowView<'_>, out: &mut [f64]) {
        out[0] = self.decision(x);
    }
}

/// A binary classifier with a real-valued score; `predict = sign(score)`, 0 → −1.
pub trait DecisionFunction: Classifier {
    /// The score of one example.
    fn decision(&self, x: RowView<'_>) -> f64;
    /// The predicted sign of one example.
    fn predict_sign(&self, x: RowView<'_>) -> Sign {
        Sign::of_score(self.decision(x))
    }
    /// Scores of every row.
    fn decision_all(&self, features: &Features) -> Result<Vec<f64>> {
        self.check_features(features)?;
        Ok((0..features.rows())
            .map(|i| self.decision(features.row(i)))
            .collect())
    }
}

/// A model with explicit linear weights and bias — what deletion attacks and certificates use.
pub trait Linear: DecisionFunction {
    /// The weights `w`.
    fn weights(&self) -> &[f64];
    /// The bias `b`.
    fn bias(&self) -> f64;
}

/// A test-time attack: given the model, rewrites each test example (the labels stay).
/// Randomised attacks draw only from `rng`, so a seed fixes the result bit for bit.
pub trait TestTimeAttack<M: ?Sized> {
    /// Short name (`greedy-delete`, …).
    fn name(&self) -> &str;
    /// The attacked copy of `data`.
    fn attack(&self, model: &M, data: &Dataset, rng: &mut Rng) -> Result<Dataset>;
}

/// A training-time contamination: returns a corrupted training set (possibly with added
/// examples) and the indices of the examples the adversary touched.
pub trait Contamination {
    /// Short name (`malicious`, `label-noise`, `rolr-outliers`, …).
    fn name(&self) -> &str;
    /// The contaminated data and the indices (into the returned set) of corrupted examples.
    fn contaminate(&self, clean: &Dataset, rng: &mut Rng) -> Result<(Dataset, Vec<usize>)>;
}
