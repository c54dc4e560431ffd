//! The paper's SVM baseline and FDROP ("TGRS"), both solved by the dual coordinate-descent
//! solver of this crate with an unregularised bias and a certified duality gap; FDROP with
//! `k > 0` by default by the structured interior-point method of `bulwark-deletion`
//! ([`FdropSolver`]).

use std::time::Instant;

use bulwark_core::{Dataset, Error, Fit, FitReport, Fitted, LinearModel, ParamGuard, Result};
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
/// deletion of the `k` most harmful features of each example,
/// `min ½‖w‖² + C Σ max(0, 1 − y_i(w·x_i + b) + Σ_{top k} [y_i w_j x_ij]_+)`, unregularised
/// bias. `k = 0` is exactly [`SvmParams`]. With uniform feature values, a DSX budget `N`
/// corresponds to `k = ⌊N⌋`. The solver is chosen by [`FdropParams::solver`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FdropParams {
    common: Common,
    k: usize,
    #[serde(default)]
    solver: FdropSolver,
}

/// FDROP's solver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FdropSolver {
    /// The interior-point method for `0 < k < n` with a bias, dual coordinate descent otherwise.
    #[default]
    Auto,
    /// Dual coordinate descent (this crate): cheap passes and a certified gap, but on real
    /// images with `k ≥ 10` it can need thousands of passes (`docs/design/online.md`).
    DualCd,
    /// `bulwark-deletion`'s structured interior-point method on FDROP's QP (LP (4)'s
    /// constraints with `½‖w‖²` for the box): tens of iterations, each one factorisation of an
    /// `(n + 1) × (n + 1)` matrix; always fits the bias; needs `0 < k < n`. Its tolerance is
    /// 1e-8 on its relative residuals and gap (the report's `tolerance`; FDROP's own is the
    /// dual solver's), `max_passes` its iteration limit when below 200.
    InteriorPoint,
}

impl FdropParams {
    /// Defaults: `k = 0`, `C = 1`, tolerance 1e-6, 200 000 passes, seed 0.
    pub fn new() -> Self {
        Self::default()
    }
    /// Number of features the adversary deletes per example (`k ≤ n`, checked at fit).
    pub fn k(mut self, k: usize) -> Self {
        self.k = k;
        self
    }
    /// The solver (default [`FdropSolver::Auto`]).
    pub fn solver(mut self, solver: FdropSolver) -> Self {
        self.solver = solver;
        self
    }
    common_setters!();
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
        let ipm = match self.solver {
            FdropSolver::Auto => self.k > 0 && self.k < data.n_features() && self.common.bias,
            FdropSolver::DualCd => false,
            FdropSolver::InteriorPoint => true,
        };
        let mut fitted = if ipm {
            self.run_ipm(data)?
        } else {
            self.common.run(data, self.k, "fdrop")?
        };
        fitted.report.details.insert("k".into(), self.k as f64);
        Ok(fitted)
    }
}

impl FdropParams {
    /// FDROP by `bulwark-deletion`'s structured IPM ([`FdropSolver::InteriorPoint`]).
    fn run_ipm(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        binary_training_labels(data, "fdrop")?;
        let solver = bulwark_deletion::FdropIpm {
            k: self.k,
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
