//! Status, per-iteration information, the solution and a serialisable summary.

use crate::kkt::KktInfo;
use crate::problem::LpProblem;
use serde::{Deserialize, Serialize};

/// Outcome of a solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Relative primal and dual residuals and the relative gap all meet the tolerances.
    Optimal,
    /// A Farkas certificate (dual ray) proves that no feasible point exists.
    PrimalInfeasible,
    /// A primal ray proves the objective is unbounded (the dual is infeasible).
    DualInfeasible,
    /// The iteration limit was reached.
    IterationLimit,
    /// The time limit was reached, or the solve was cancelled.
    TimeLimit,
    /// The linear algebra broke down or the iteration stalled.
    NumericalError,
    /// The solve stopped short of the tolerances (stalled, or at the iteration limit) at a
    /// point certified within a reduced tolerance: an answer that did not converge. The
    /// solver's outcome says how close it is and why it stopped (the structured IPM of
    /// `bulwark-deletion`; this crate's engine never returns it).
    AlmostOptimal,
}

impl Status {
    /// The snake_case name (as in JSON output).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Optimal => "optimal",
            Self::PrimalInfeasible => "primal_infeasible",
            Self::DualInfeasible => "dual_infeasible",
            Self::IterationLimit => "iteration_limit",
            Self::TimeLimit => "time_limit",
            Self::NumericalError => "numerical_error",
            Self::AlmostOptimal => "almost_optimal",
        }
    }
    /// True for the two infeasibility statuses.
    pub fn is_infeasible(self) -> bool {
        matches!(self, Self::PrimalInfeasible | Self::DualInfeasible)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Per-iteration information passed to the progress callback (all quantities refer to
/// the original, unscaled problem).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IterationInfo {
    /// Iteration number (0 = starting point).
    pub iter: u32,
    /// Primal objective `cᵀx + c₀` of the current iterate `x = ξ/τ`.
    pub pobj: f64,
    /// Dual objective.
    pub dobj: f64,
    /// Relative primal residual.
    pub pres: f64,
    /// Relative dual residual.
    pub dres: f64,
    /// Relative gap `|pobj − dobj| / max(1, min(|pobj|, |dobj|))`.
    pub gap: f64,
    /// Complementarity `μ`.
    pub mu: f64,
    /// Centring parameter of the last step.
    pub sigma: f64,
    /// Step length of the last step.
    pub step: f64,
    /// Homogeneous variable τ.
    pub tau: f64,
    /// Homogeneous variable κ.
    pub kappa: f64,
    /// Seconds since the start of the solve.
    pub seconds: f64,
}

/// Result of a solve. `x`, `row_duals` and `reduced_costs` refer to the original
/// problem; duals satisfy `c = Aᵀy + z` at optimality (for `Maximize`, in the
/// maximisation's own sign). For `PrimalInfeasible` the duals hold the Farkas ray, for
/// `DualInfeasible` `x` holds the primal ray; both are normalised to unit ∞-norm. For
/// non-optimal statuses `objective`, residuals and gap describe the last iterate (NaN
/// when presolve decided the status without iterating).
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// Final status.
    pub status: Status,
    /// Primal point (or ray).
    pub x: Vec<f64>,
    /// Row duals `y` (or Farkas ray).
    pub row_duals: Vec<f64>,
    /// Reduced costs `z = c − Aᵀy`.
    pub reduced_costs: Vec<f64>,
    /// Primal objective `cᵀx + c₀`.
    pub objective: f64,
    /// Dual objective.
    pub dual_objective: f64,
    /// Relative primal residual at the end.
    pub primal_residual: f64,
    /// Relative dual residual at the end.
    pub dual_residual: f64,
    /// Relative gap at the end.
    pub gap: f64,
    /// IPM iterations performed.
    pub iterations: u32,
    /// Wall-clock seconds (setup + solve).
    pub seconds: f64,
    /// KKT backend information.
    pub kkt: KktInfo,
    /// Per-iteration history (when `record_history` is set).
    pub history: Vec<IterationInfo>,
    /// The retries after a numerical failure, in order, each with the failure that caused it
    /// (empty when the first attempt answered); `iterations` counts every attempt.
    pub retries: Vec<String>,
}

impl Solution {
    /// A serialisable summary for command-line output.
    pub fn summary(&self, problem: &LpProblem) -> SolveSummary {
        SolveSummary {
            status: self.status,
            objective: self.objective,
            dual_objective: self.dual_objective,
            iterations: self.iterations,
            seconds: self.seconds,
            primal_residual: self.primal_residual,
            dual_residual: self.dual_residual,
            gap: self.gap,
            name: problem.name().map(str::to_string),
            rows: problem.num_rows(),
            cols: problem.num_vars(),
            nnz: problem.nnz(),
            backend: self.kkt.name.to_string(),
            retries: self.retries.clone(),
        }
    }
}

/// A serialisable summary of a solve (what `bulwark lp solve --json` prints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveSummary {
    /// Status string (`optimal`, `primal_infeasible`, …).
    pub status: Status,
    /// Primal objective.
    pub objective: f64,
    /// Dual objective.
    pub dual_objective: f64,
    /// Iterations.
    pub iterations: u32,
    /// Seconds.
    pub seconds: f64,
    /// Relative primal residual.
    pub primal_residual: f64,
    /// Relative dual residual.
    pub dual_residual: f64,
    /// Relative gap.
    pub gap: f64,
    /// Problem name.
    pub name: Option<String>,
    /// Number of rows.
    pub rows: usize,
    /// Number of variables.
    pub cols: usize,
    /// Non-zeros of `A`.
    pub nnz: usize,
    /// KKT backend name.
    pub backend: String,
    /// The retries after a numerical failure ([`Solution::retries`]; absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<String>,
}
