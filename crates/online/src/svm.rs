//! The paper's SVM baseline and FDROP ("TGRS"), both solved by the dual coordinate-descent
//! solver of this crate with an unregularised bias and a certified duality gap; FDROP with
//! `k > 0` (or a value-weighted budget `N > 0`) by default by the structured interior-point
//! method of `bulwark-deletion` ([`FdropSolver`]).

use std::time::Instant;

use bulwark_core::{
    Dataset, Error, FeatureValues, Fit, FitReport, Fitted, LinearModel, ParamGuard, Result,
};
use serde::{Deserialize, Serialize};

use crate::common::{binary_training_labels, check_at_least_one, check_c, check_tolerance};
use crate::dualcd::{self, Settings};

/// Solver knobs shared by [`SvmParams`] and [`FdropParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Common {
    c: f64,
    tolerance: f64,
    max_passes: usize,
    seed: u64,
    rho: Option<f64>,
    #[serde(default = "yes")]
    bias: bool,
}

fn yes() -> bool {
    true
}

impl Default for Common {
    fn default() -> Self {
        Self {
            c: 1.0,
            tolerance: 1e-6,
            max_passes: 200_000,
            seed: 0,
            rho: None,
            bias: true,
        }
    }
}

impl Common {
    fn check(&self) -> Result<()> {
        check_c(self.c)?;
        check_tolerance("tolerance", self.tolerance)?;
        check_at_least_one("max_passes", self.max_passes)?;
        if let Some(r) = self.rho {
            bulwark_core::error::check_positive("rho", r)?;
        }
        Ok(())
    }
    fn run(&self, data: &Dataset, k: usize, algorithm: &str) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        let y = binary_training_labels(data, algorithm)?;
        if k > data.n_features() {
            return Err(Error::param(
                "k",
                k,
                format!("at most the number of features ({})", data.n_features()),
            ));
        }
        let sol = dualcd::solve(
            data,
            y,
            &Settings {
                c: self.c,
                k,
                tol: self.tolerance,
                max_passes: self.max_passes,
                seed: self.seed,
                rho: self.rho,
                bias: self.bias,
            },
        );
        let model = LinearModel::try_new(sol.w, sol.b).map_err(|_| Error::Numerical {
            algorithm: algorithm.into(),
            message: "non-finite weights (diverged)".into(),
        })?;
        let gap = sol.primal - sol.dual;
        let mut report = FitReport {
            algorithm: algorithm.into(),
            solver: "dual-cd".into(),
            objective: Some(sol.primal),
            iterations: Some(sol.passes),
            seconds: start.elapsed().as_secs_f64(),
            converged: sol.converged,
            tolerance: Some(self.tolerance),
            reached: Some(gap / sol.primal.abs().max(1e-300)),
            ..FitReport::default()
        };
        let d = &mut report.details;
        d.insert("dual_objective".into(), sol.dual);
        d.insert("duality_gap".into(), gap);
        d.insert("relative_gap".into(), gap / sol.primal.abs().max(1e-300));
        d.insert("max_kkt_violation".into(), sol.max_violation);
        d.insert("equality_residual".into(), sol.equality_residual);
        d.insert("support_vectors".into(), sol.support_vectors as f64);
        d.insert("gap_checks".into(), sol.gap_checks as f64);
        d.insert("C".into(), self.c);
        Ok(Fitted { model, report })
    }
}

macro_rules! common_setters {
    () => {
        /// The loss weight `C > 0` (the objective is `½‖w‖² + C Σ loss`).
        pub fn c(mut self, c: f64) -> Self {
            self.common.c = c;
            self
        }
        /// Stop when the certified relative duality gap `(P − D)/P` is at most this (default 1e-6).
        pub fn tolerance(mut self, t: f64) -> Self {
            self.common.tolerance = t;
            self
        }
        /// Limit on passes over the data (default 200 000; shrunk passes are cheap); on hitting it the report says
        /// `converged: false` and carries the certified gap reached.
        pub fn max_passes(mut self, k: usize) -> Self {
            self.common.max_passes = k;
            self
        }
        /// Seed of the per-pass random order of the coordinates (default 0).
        pub fn seed(mut self, seed: u64) -> Self {
            self.common.seed = seed;
            self
        }
        /// Augmented-Lagrangian penalty for `Σ y_i α_i = 0` (default: `0.05 ×` the mean `‖x_i‖²`, scale-invariant; smaller values gave faster runs in our measurements, any value `> 0` converges).
        pub fn rho(mut self, rho: Option<f64>) -> Self {
            self.common.rho = rho;
            self
        }
        /// With `false`, no bias (`b = 0`, no equality constraint in the dual: LIBLINEAR's
        /// formulation; append a constant feature for a regularised bias). Default `true`: the
        /// unregularised bias of SVM-light.
        pub fn bias(mut self, yes: bool) -> Self {
            self.common.bias = yes;
            self
        }
    };
}

/// Linear SVM with an unregularised bias (the paper's SVM-light baseline):
/// `min ½‖w‖² + C Σ max(0, 1 − y_i(w·x_i + b))`, solved to a certified relative duality gap.
/// Report details: `duality_gap`, `relative_gap`, `dual_objective`, `support_vectors`, ….
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SvmParams {
    common: Common,
}

impl SvmParams {
    /// Defaults: `C = 1`, tolerance 1e-6, 200 000 passes, seed 0.
    pub fn new() -> Self {
        Self::default()
    }
    common_setters!();
}

impl ParamGuard for SvmParams {
    type Checked = SvmParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&SvmParams> {
        self.common.check()?;
        Ok(self)
    }
    fn check(self) -> Result<SvmParams> {
        self.check_ref()?;
        Ok(self)
    }
}

impl Fit for SvmParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.check_ref()?;
        self.common.run(data, 0, "svm")
    }
}

/// FDROP (Globerson & Roweis 2006; "TGRS" in DSX §4): the SVM whose hinge is taken after the
/// worst deletion of features, unregularised bias. The adversary deletes, per example, features
/// of total value at most the budget `N` (DSX §2.1's values `v_j ≥ 0`; relaxed to fractions
/// `σ_j ∈ [0, 1]` with `Σ_j σ_j v_j ≤ N`):
/// `min ½‖w‖² + C Σ max(0, 1 − y_i(w·x_i + b) + max_σ Σ_j σ_j [y_i w_j x_ij]_+)`. With unit
/// values and an integer `N = k` this is the `k` form ([`FdropParams::k`]):
/// `Σ_{top k} [y_i w_j x_ij]_+`, and `k = 0` is exactly [`SvmParams`]. The solver is chosen by
/// [`FdropParams::solver`]; a value-weighted budget needs the interior-point method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FdropParams {
    common: Common,
    k: usize,
    /// The budget `N` in feature-value units (`None`: the `k` form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    budget: Option<f64>,
    /// The feature values of the budget.
    #[serde(default = "uniform")]
    values: FeatureValues,
    #[serde(default)]
    solver: FdropSolver,
}

fn uniform() -> FeatureValues {
    FeatureValues::Uniform
}

impl Default for FdropParams {
    fn default() -> Self {
        Self {
            common: Common::default(),
            k: 0,
            budget: None,
            values: FeatureValues::Uniform,
            solver: FdropSolver::default(),
        }
    }
}

/// FDROP's solver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FdropSolver {
    /// The interior-point method for `0 < k < n` (`0 < N < V([n])` with other values) with a
    /// bias, dual coordinate descent otherwise.
    #[default]
    Auto,
    /// Dual coordinate descent (this crate): cheap passes and a certified gap, but on real
    /// images with `k ≥ 10` it can need thousands of passes (`docs/design/online.md`). The `k`
    /// form only (unit values, an integer budget; or a budget of 0 or of every feature's value).
    DualCd,
    /// `bulwark-deletion`'s structured interior-point method on FDROP's QP (LP (4)'s
    /// constraints with `½‖w‖²` for the box): tens of iterations, each one factorisation of an
    /// `(n + 1) × (n + 1)` matrix; always fits the bias; needs `0 < k < n` (`0 < N < V([n])`).
    /// Its tolerance is 1e-8 on its relative residuals and gap (the report's `tolerance`;
    /// FDROP's own is the dual solver's), `max_passes` its iteration limit when below 200.
    InteriorPoint,
}

/// What one fit solves, from the budget and the values on `n` features.
#[derive(Debug)]
enum Problem {
    /// The `k` form: the top `k` harms (unit values, or a budget of every feature's value).
    TopK(usize),
    /// A zero budget with features of value 0 that have entries: the adversary deletes those
    /// for free, so their weights are 0 at the optimum and FDROP is the SVM on the other
    /// features (the values).
    FreeOnly(Vec<f64>),
    /// The value-weighted budget (`0 < N < V([n])`, not the `k` form).
    Valued(bulwark_core::FeatureBudget),
}

impl FdropParams {
    /// Defaults: `k = 0`, `C = 1`, tolerance 1e-6, 200 000 passes, seed 0.
    pub fn new() -> Self {
        Self::default()
    }
    /// The `k` form: `k` features deleted per example, each of the same cost (unit values and
    /// the budget `N = k`; `k ≤ n`, checked at fit). Replaces a budget and values set before.
    pub fn k(mut self, k: usize) -> Self {
        self.k = k;
        self.budget = None;
        self.values = FeatureValues::Uniform;
        self
    }
    /// The deletion budget `N ≥ 0` in the units of the feature values ([`FdropParams::values`]):
    /// the adversary deletes features of total value at most `N` per example (a budget of at
    /// least the total value deletes every harmful feature). Replaces [`FdropParams::k`].
    pub fn budget(mut self, n: f64) -> Self {
        self.budget = Some(n);
        self
    }
    /// The feature values of the budget (default uniform; given values must be finite, `≥ 0`
    /// and one per feature, checked at fit).
    pub fn values(mut self, v: FeatureValues) -> Self {
        self.values = v;
        self
    }
    /// The solver (default [`FdropSolver::Auto`]).
    pub fn solver(mut self, solver: FdropSolver) -> Self {
        self.solver = solver;
        self
    }
    common_setters!();

    /// The problem on `data`: the `k` form where the budget allows it (unit values and an
    /// integer budget, a budget of 0 without free deletions, or a budget of every feature's
    /// value), else the value-weighted budget. Typed errors for a bad budget or values.
    fn problem(&self, data: &Dataset) -> Result<Problem> {
        let Some(n_budget) = self.budget else {
            return Ok(Problem::TopK(self.k));
        };
        let n = data.n_features();
        let v = self.values.resolve(n)?;
        let total: f64 = v.iter().sum();
        if n_budget >= total {
            // every feature fits in the budget: every positive harm is deleted
            return Ok(Problem::TopK(n));
        }
        if n_budget == 0.0 {
            let free = (0..data.len())
                .any(|i| data.row(i).nonzeros().any(|(j, x)| v[j] == 0.0 && x != 0.0));
            return Ok(if free {
                Problem::FreeOnly(v)
            } else {
                Problem::TopK(0)
            });
        }
        if n_budget.fract() == 0.0 && v.iter().all(|&x| x == 1.0) {
            return Ok(Problem::TopK(n_budget as usize));
        }
        Ok(Problem::Valued(bulwark_core::FeatureBudget::try_new(
            v, n_budget,
        )?))
    }
}

impl ParamGuard for FdropParams {
    type Checked = FdropParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&FdropParams> {
        self.common.check()?;
        if self.solver == FdropSolver::InteriorPoint && !self.common.bias {
            return Err(Error::param(
                "solver",
                "interior-point",
                "fits a bias: use dual-cd for bias(false)",
            ));
        }
        match self.budget {
            Some(n) if !(n.is_finite() && n >= 0.0) => {
                return Err(Error::param("budget", n, "a finite number >= 0"));
            }
            None if self.values != FeatureValues::Uniform => {
                return Err(Error::param(
                    "values",
                    "given",
                    "feature values weigh a budget: set the budget N (the k form has unit values)",
                ));
            }
            _ => {}
        }
        self.values.check()?;
        Ok(self)
    }
    fn check(self) -> Result<FdropParams> {
        self.check_ref()?;
        Ok(self)
    }
}

impl Fit for FdropParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.check_ref()?;
        let n = data.n_features();
        let mut fitted = match self.problem(data)? {
            Problem::TopK(k) => {
                let ipm = match self.solver {
                    FdropSolver::Auto => k > 0 && k < n && self.common.bias,
                    FdropSolver::DualCd => false,
                    FdropSolver::InteriorPoint => true,
                };
                let mut fitted = if ipm {
                    if k == 0 || k >= n {
                        return Err(if self.budget.is_some() {
                            Error::param(
                                "budget",
                                k,
                                format!("the interior-point method needs 0 < N < V([n]) = {n}"),
                            )
                        } else {
                            Error::param(
                                "k",
                                k,
                                format!("the interior-point method needs 1 <= k < n = {n}"),
                            )
                        });
                    }
                    self.run_ipm(data, FeatureValues::Uniform, k as f64)?
                } else {
                    self.common.run(data, k, "fdrop")?
                };
                fitted.report.details.insert("k".into(), k as f64);
                fitted
            }
            Problem::FreeOnly(v) => {
                if self.solver == FdropSolver::InteriorPoint {
                    return Err(Error::param(
                        "budget",
                        0,
                        "the interior-point method needs N > 0 (N = 0: dual-cd, the SVM on the features of positive value)",
                    ));
                }
                let mut features = data.features().clone();
                features.map_in_place(|j, x| if v[j] > 0.0 { x } else { 0.0 })?;
                let mut fitted = self
                    .common
                    .run(&data.with_features(features)?, 0, "fdrop")?;
                fitted.report.details.insert("k".into(), 0.0);
                fitted
            }
            Problem::Valued(budget) => {
                if self.solver == FdropSolver::DualCd {
                    return Err(Error::param(
                        "solver",
                        "dual-cd",
                        "the k form only (unit values, an integer budget): a value-weighted budget needs auto or interior-point",
                    ));
                }
                if !self.common.bias {
                    return Err(Error::param(
                        "bias",
                        false,
                        "a value-weighted budget needs the interior-point method, which fits a bias",
                    ));
                }
                let n_budget = budget.budget();
                let values = FeatureValues::Given(budget.values().to_vec());
                self.run_ipm(data, values, n_budget)?
            }
        };
        if let Some(n_budget) = self.budget {
            fitted.report.details.insert("budget".into(), n_budget);
        }
        Ok(fitted)
    }
}

impl FdropParams {
    /// FDROP by `bulwark-deletion`'s structured IPM ([`FdropSolver::InteriorPoint`]) against
    /// `values` and the budget `n_budget`.
    fn run_ipm(
        &self,
        data: &Dataset,
        values: FeatureValues,
        n_budget: f64,
    ) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        binary_training_labels(data, "fdrop")?;
        let solver = bulwark_deletion::FdropIpm {
            values,
            budget: n_budget,
            c: self.common.c,
            tolerance: IPM_TOLERANCE,
            max_iter: self.common.max_passes.min(200) as u32,
            threads: None,
            // FDROP has no fallback to hand over to: a run that stops short returns its last
            // iterate, reported not converged, rather than its best certified one
            settings: bulwark_deletion::DsxIpmSettings {
                accept_within: 0.0,
                ..Default::default()
            },
        };
        let sol = solver.solve(data).map_err(deletion_error)?;
        let converged = sol.is_optimal();
        let model = LinearModel::try_new(sol.w, sol.b).map_err(|_| Error::Numerical {
            algorithm: "fdrop".into(),
            message: "non-finite weights".into(),
        })?;
        let mut report = FitReport {
            algorithm: "fdrop".into(),
            solver: "dsx-ipm".into(),
            objective: Some(sol.objective),
            iterations: Some(sol.iterations as usize),
            seconds: start.elapsed().as_secs_f64(),
            converged,
            tolerance: Some(solver.tolerance),
            reached: Some(sol.gap.max(sol.primal_residual).max(sol.dual_residual)),
            stopped: (!converged).then(|| {
                let why = sol
                    .reason
                    .as_deref()
                    .map_or(String::new(), |r| format!(": {r}"));
                format!(
                    "dsx-ipm: {}{why} ({} iterations)",
                    sol.status, sol.iterations
                )
            }),
            ..FitReport::default()
        };
        let d = &mut report.details;
        d.insert("dual_objective".into(), sol.dual_objective);
        d.insert("relative_gap".into(), sol.gap);
        d.insert("primal_residual".into(), sol.primal_residual);
        d.insert("dual_residual".into(), sol.dual_residual);
        d.insert("box_radius".into(), sol.box_radius);
        // FDROP's certificate ended the run: the last iterate's dual residual (the gap is then
        // certified: FDROP's objective against a feasible dual point's value)
        if let Some(r) = sol.certified_from {
            d.insert("dual_repaired_from".into(), r);
        }
        d.insert("C".into(), self.common.c);
        Ok(Fitted { model, report })
    }
}

/// An error of `bulwark-deletion` as this crate's: its parameter and data errors as they are,
/// a solver failure as a numerical error of FDROP.
fn deletion_error(e: bulwark_deletion::DeletionError) -> Error {
    match e {
        bulwark_deletion::DeletionError::Core(e) => e,
        e => Error::Numerical {
            algorithm: "fdrop".into(),
            message: e.to_string(),
        },
    }
}

/// The interior-point method's tolerance on its relative residuals and gap (the structured
/// IPM's default for LP (4)); FDROP's `tolerance`, a certified gap of the dual solver, does not
/// apply to it. Tighter tolerances meet the rounding floor of the solves (a 30 × 5 instance
/// reaches a dual residual of 1.0e-9 and then loses it), where only FDROP's certificate can
/// still end the run.
const IPM_TOLERANCE: f64 = 1e-8;

/// The FDROP objective `½‖w‖² + C Σ [1 − y(w·x + b) + Σ_{top k}[y w_j x_j]_+]_+` of a model
/// (`k = 0`: the SVM primal). For checks and reports (`bulwark_deletion::fdrop_objective`).
pub fn fdrop_objective(model: &LinearModel, data: &Dataset, c: f64, k: usize) -> Result<f64> {
    bulwark_deletion::fdrop_objective(model.weights(), model.bias(), data, c, k)
        .map_err(deletion_error)
}

/// The value-weighted FDROP objective
/// `½‖w‖² + C Σ [1 − y(w·x + b) + max_σ Σ_j σ_j [y w_j x_j]_+]_+`, `σ ∈ [0, 1]^n`,
/// `Σ_j σ_j v_j ≤ N`, of a model against `values` and the budget `n_budget`
/// (`0 ≤ N < V([n])`; `bulwark_deletion::fdrop_objective_valued`).
pub fn fdrop_objective_valued(
    model: &LinearModel,
    data: &Dataset,
    c: f64,
    values: &[f64],
    n_budget: f64,
) -> Result<f64> {
    let budget = bulwark_core::FeatureBudget::try_new(values.to_vec(), n_budget)?;
    bulwark_deletion::fdrop_objective_valued(model.weights(), model.bias(), data, c, &budget)
        .map_err(deletion_error)
}
