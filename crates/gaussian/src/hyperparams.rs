//! Validated hyper-parameters of GURU and its batch solver.

use bulwark_core::{Error, ParamGuard, Result};
use serde::{Deserialize, Serialize};

use crate::loss::{Loss, NoiseNorm};
use crate::objective::RobustLoss;

/// Which solver minimises (2.22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Solver {
    /// GURU, Ginodi Algorithm 1: SGD with step `η₀/√t`.
    Sgd,
    /// Newton–CG with a line search, to a certified relative duality gap (Euclidean norm only).
    Batch,
}

impl Solver {
    /// The name on the command line (`sgd`, `batch`).
    pub fn name(self) -> &'static str {
        match self {
            Solver::Sgd => "sgd",
            Solver::Batch => "batch",
        }
    }
    /// The tolerance of a fit that asks none: `1e-10` (the batch solvers' certified gap) or
    /// the learner's SGD default `sgd`.
    pub(crate) fn default_tolerance(self, sgd: f64) -> f64 {
        match self {
            Solver::Batch => 1e-10,
            Solver::Sgd => sgd,
        }
    }
    /// The solver named `s`.
    pub fn parse(s: &str) -> Option<Solver> {
        [Solver::Sgd, Solver::Batch]
            .into_iter()
            .find(|x| x.name() == s)
    }
}

/// Hyper-parameters of a Gaussian-robust linear classifier (Ginodi ch. 2–3).
///
/// Defaults: Gaussian loss, Euclidean norm, `σ = 1`, the batch solver to a relative duality gap
/// of `1e-10` (SGD: `1e-3`), `η₀ = 1`, seed 0, at most 1000 SGD epochs or 100 Newton iterations,
/// no constant feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuruParams {
    pub(crate) sigma: f64,
    pub(crate) loss: Loss,
    pub(crate) norm: NoiseNorm,
    pub(crate) solver: Solver,
    pub(crate) eta0: f64,
    pub(crate) seed: u64,
    pub(crate) tolerance: Option<f64>,
    pub(crate) max_epochs: usize,
    pub(crate) max_iter: usize,
    pub(crate) bias: bool,
}

impl Default for GuruParams {
    fn default() -> Self {
        Self {
            sigma: 1.0,
            loss: Loss::Gauss,
            norm: NoiseNorm::L2,
            solver: Solver::Batch,
            eta0: 1.0,
            seed: 0,
            tolerance: None,
            max_epochs: 1000,
            max_iter: 100,
            bias: false,
        }
    }
}

impl GuruParams {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }
    /// The noise standard deviation `σ > 0` (the trace bound is `σ²`).
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.sigma = sigma;
        self
    }
    /// The scalar loss of the perspective.
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = loss;
        self
    }
    /// The noise norm (Euclidean: trace-bounded covariance; max: diagonal covariance).
    pub fn norm(mut self, norm: NoiseNorm) -> Self {
        self.norm = norm;
        self
    }
    /// The solver.
    pub fn solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }
    /// SGD's initial step `η₀ > 0` (step `η₀/√t`, `t = 1, 2, …`).
    pub fn eta0(mut self, eta0: f64) -> Self {
        self.eta0 = eta0;
        self
    }
    /// The seed of SGD's sampling.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The relative duality gap to certify, in `(0, 1)` (default `1e-10` batch, `1e-3` SGD).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = Some(tolerance);
        self
    }
    /// SGD's limit, in epochs of `M` steps.
    pub fn max_epochs(mut self, epochs: usize) -> Self {
        self.max_epochs = epochs;
        self
    }
    /// The batch solver's Newton-iteration limit.
    pub fn max_iter(mut self, iterations: usize) -> Self {
        self.max_iter = iterations;
        self
    }
    /// Appends a constant feature 1 (its weight is the model's bias, and it is part of `‖w‖`).
    pub fn bias(mut self, yes: bool) -> Self {
        self.bias = yes;
        self
    }

    /// The tolerance in force.
    pub fn effective_tolerance(&self) -> f64 {
        self.tolerance
            .unwrap_or_else(|| self.solver.default_tolerance(1e-3))
    }
    /// The loss these parameters minimise.
    pub fn robust_loss(&self) -> RobustLoss {
        RobustLoss {
            loss: self.loss,
            norm: self.norm,
            sigma: self.sigma,
        }
    }
}

impl ParamGuard for GuruParams {
    type Checked = GuruParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&GuruParams> {
        check_sgd(
            self.sigma,
            self.eta0,
            self.effective_tolerance(),
            self.max_epochs,
        )?;
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if self.solver == Solver::Batch && self.norm == NoiseNorm::Linf {
            return Err(Error::param(
                "solver",
                "batch",
                "sgd with --norm linf (the max-norm perspective is not differentiable; the Newton solver needs the Euclidean norm)",
            ));
        }
        Ok(self)
    }
    fn check(self) -> Result<GuruParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// The checks every GURU SGD (GURU, KEN-GURU, M-GURU) makes of its hyper-parameters: `σ` and
/// `η₀` finite and `> 0`, the tolerance in `(0, 1)`, at least one epoch; the error names the
/// parameter.
pub(crate) fn check_sgd(sigma: f64, eta0: f64, tolerance: f64, max_epochs: usize) -> Result<()> {
    bulwark_core::error::check_positive("sigma", sigma)?;
    bulwark_core::error::check_positive("eta0", eta0)?;
    if !(tolerance.is_finite() && tolerance > 0.0 && tolerance < 1.0) {
        return Err(Error::param("tolerance", tolerance, "a number in (0, 1)"));
    }
    if max_epochs == 0 {
        return Err(Error::param("max_epochs", 0, "at least 1"));
    }
    Ok(())
}
