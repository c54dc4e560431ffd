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
