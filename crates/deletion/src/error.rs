//! Errors of the DSX LP classifier.

/// What can go wrong training the DSX LP classifier.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeletionError {
    /// Bad data or hyper-parameters (names the parameter / location).
    #[error(transparent)]
    Core(#[from] bulwark_core::Error),
    /// The LP engine failed before producing a status.
    #[error(transparent)]
    Lp(#[from] bulwark_lp::LpError),
    /// The structured linear algebra rejected its input.
    #[error(transparent)]
    Linalg(#[from] bulwark_linalg::LinalgError),
    /// No solver of the chain answered LP (4) (status and figures of the last one tried; no
    /// model returned).
    #[error(
        "LP (4) not solved by {solver}: status {status}{} after {iterations} iterations (primal residual {primal_residual:.2e}, dual residual {dual_residual:.2e}, gap {gap:.2e}){}{}",
        reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default(),
        if fallbacks.is_empty() { String::new() } else { format!("; earlier attempts: {}", fallbacks.join("; ")) },
        not_started.as_ref().map(|r| format!("; {r}")).unwrap_or_default()
    )]
    NotSolved {
        /// The last solver tried (`dsx-ipm`, `hsd-engine/structured`, …; `chunk k: ` in front
        /// when bagging).
        solver: String,
        /// The attempts before it, each `solver: status: reason (k iterations)`.
        fallbacks: Vec<String>,
        /// Why the solver stopped, when it says.
        reason: Option<String>,
        /// Final solver status.
        status: bulwark_lp::Status,
        /// Iterations of the last solver.
        iterations: u32,
        /// Relative primal residual.
        primal_residual: f64,
        /// Relative dual residual.
        dual_residual: f64,
        /// Relative gap.
        gap: f64,
        /// The next solver of the chain when it was not started, and why (it would need more
        /// memory than [`crate::DsxLpParams::fallback_memory`] allows).
        not_started: Option<String>,
    },
    /// LP (4) does not fit in memory: no method for the structured IPM's normal equations
    /// fits in what is left of the limit after the method's own vectors (or the forced method
    /// does not). Nothing large was allocated; the plan names each method's predicted memory
    /// and time.
    #[error(
        "LP (4) on {} examples x {} features ({} stored entries) does not fit in {} ({}): the \
         structured IPM holds {} of its own, and {}. What can be done: `--algo o2b` (the \
         cube-projected Perceptron, memory linear in the data), fewer features (e.g. drop rare \
         ones), fewer training examples, example screening (`--screen-from K`: working sets of \
         examples, which pays where most examples end with no loss), or a larger limit \
         (`memory_limit_mib`)",
        plan.m, plan.n, plan.nnz,
        bulwark_linalg::human_bytes(*limit),
        if *limit_given { "the memory limit given" } else { "the memory the system reports available" },
        bulwark_linalg::human_bytes(*ipm_bytes),
        bulwark_linalg::LinalgError::TooLarge { plan: plan.clone() }
    )]
    TooLarge {
        /// The prediction for every method of the normal equations.
        plan: Box<bulwark_linalg::NormalEquationsPlan>,
        /// Bytes of the structured IPM's own vectors.
        ipm_bytes: u64,
        /// The memory limit (bytes).
        limit: u64,
        /// Whether the limit was given ([`crate::DsxIpmSettings::memory_limit`]) rather than
        /// read from the system.
        limit_given: bool,
    },
    /// The structured IPM would not finish within the time limit: its cost model predicts the
    /// fewest iterations it takes to outlast it. Nothing was computed.
    #[error(
        "LP (4) on {} examples x {} features ({} stored entries) would not be solved within the \
         time limit of {:.0} s: the normal equations by `{method}` are predicted to take at least \
         {:.0} s (15 iterations; {}). What can be done: `--algo o2b` (the cube-projected \
         Perceptron, linear in the data), fewer features or training examples, example \
         screening (`--screen-from K`), or a longer limit",
        plan.m, plan.n, plan.nnz, time_limit, seconds, plan.estimate(*method)
    )]
    TooSlow {
        /// The prediction for every method of the normal equations.
        plan: Box<bulwark_linalg::NormalEquationsPlan>,
        /// The method the solve would use.
        method: bulwark_linalg::NormalEquations,
        /// The predicted seconds of the fewest iterations.
        seconds: f64,
        /// The time limit (seconds).
        time_limit: f64,
    },
}

impl DeletionError {
    /// The error for a `bulwark-lp` solve by `solver` that ended with a non-optimal status.
    pub fn not_solved(solver: &str, s: &bulwark_lp::Solution) -> Self {
        DeletionError::NotSolved {
            solver: solver.to_string(),
            fallbacks: Vec::new(),
            reason: None,
            status: s.status,
            iterations: s.iterations,
            primal_residual: s.primal_residual,
            dual_residual: s.dual_residual,
            gap: s.gap,
            not_started: None,
        }
    }
}

/// Crate-local result.
pub type Result<T, E = DeletionError> = std::result::Result<T, E>;
