//! The KKT (Newton-system) backend seam.
//!
//! # The linear system
//!
//! Every IPM iteration solves, for the variables `x ∈ Rⁿ` and the rows `y ∈ Rᵐ` of the
//! matrix `A` handed to [`KktBackend::analyze`],
//!
//! ```text
//!   [ −D_x   Aᵀ ] [Δx]   [r_x]
//!   [  A     E  ] [Δy] = [r_y]
//! ```
//!
//! * `D_x = var_diag ≥ 0` (length n): the bound-complementarity scaling
//!   `z_l/(x−l) + z_u/(u−x)` of each variable. For a free variable the exact value is 0;
//!   the IPM passes the proximal value `free_reg` (default 1e-8) instead and refines
//!   against 0, so `var_diag > 0` always.
//! * `E = row_diag ≥ 0` (length m): for an inequality row (a row with a slack
//!   `s = aᵢᵀx` that has bounds), `E_i = 1/Θ_i` with `Θ_i = v_l/(s−rl) + v_u/(ru−s) > 0`
//!   the slack-complementarity scaling; for an equality row `E_i = 0` exactly.
//!
//! The matrix is symmetric quasi-definite once regularised: a backend may factor
//! `[−(D_x + δ) Aᵀ; A E + δ]` (static regularisation `δ`) and replace tiny pivots
//! (dynamic regularisation); the IPM performs iterative refinement against the
//! **exact, unregularised** operator above, computed with products by `A`, so every
//! backend gets the accuracy back. Backends report regularised pivots in [`KktInfo`].
//!
//! When every row is an inequality row (`E > 0`) the rows can be eliminated:
//! `Δy = E⁻¹(r_y − AΔx)` and
//!
//! ```text
//!   (D_x + Aᵀ Θ A) Δx = Aᵀ Θ r_y − r_x,   Θ = E⁻¹,
//! ```
//!
//! so a backend may factor the variable-space normal matrix `H = D_x + AᵀΘA` instead
//! (the structured DSX backend does). When `D_x > 0` the variables can be eliminated
//! instead (`(A D_x⁻¹ Aᵀ + E) Δy = r_y + A D_x⁻¹ r_x`).
//!
//! # Contract
//!
//! * [`analyze`](KktBackend::analyze) is called once per solve attempt (twice when the
//!   solver retries without equilibration), before the first iteration, with
//!   the exact matrix the IPM uses (after presolve and scaling unless the backend
//!   [requires the original layout](KktBackend::requires_original_layout)). It does the
//!   symbolic work and allocates everything `factor`/`solve` need.
//! * [`factor`](KktBackend::factor) is called every iteration with new diagonals and
//!   must not change the sparsity pattern (and should not allocate).
//! * [`solve`](KktBackend::solve) overwrites the right-hand side with the solution; it
//!   may be called several times per factorisation.

mod dense;
mod faer_ldl;

pub use dense::DenseBackend;
pub use faer_ldl::FaerLdlBackend;

use crate::error::KktError;
use crate::problem::CscRef;
use serde::{Deserialize, Serialize};

/// Kind of a row of the KKT matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// `aᵢᵀx = bᵢ`; `row_diag[i]` is always 0.
    Equality,
    /// A row with a bounded slack; `row_diag[i] > 0`.
    Inequality,
}

/// What a backend sees of the problem at analysis time.
#[derive(Debug, Clone, Copy)]
pub struct KktProblem<'a> {
    /// The constraint matrix `A` (m × n, CSC) exactly as the IPM uses it.
    pub a: CscRef<'a>,
    /// The kind of each row.
    pub row_kind: &'a [RowKind],
}

/// Information reported by a backend.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KktInfo {
    /// Backend name.
    pub name: &'static str,
    /// Order of the factored matrix.
    pub dim: usize,
    /// Non-zeros of the factored matrix (one triangle incl. diagonal).
    pub matrix_nnz: usize,
    /// Non-zeros of the factor.
    pub factor_nnz: usize,
    /// Regularised pivots in the last factorisation.
    pub regularized_pivots: usize,
    /// Regularised pivots over all factorisations.
    pub total_regularized_pivots: usize,
    /// Number of numeric factorisations.
    pub factorizations: usize,
    /// Number of solves.
    pub solves: usize,
}

/// A linear-system backend for the IPM Newton step. See the [module docs](self) for the
/// exact system and the contract.
pub trait KktBackend: Send + std::fmt::Debug {
    /// Short backend name.
    fn name(&self) -> &'static str;

    /// True if the backend needs the original variable/row layout and unscaled data
    /// (no presolve, no equilibration). Default: false.
    fn requires_original_layout(&self) -> bool {
        false
    }

    /// Symbolic analysis, once per sparsity pattern.
    fn analyze(&mut self, problem: KktProblem<'_>) -> Result<(), KktError>;

    /// Numeric factorisation with `var_diag = D_x` (length n) and `row_diag = E` (length m).
    fn factor(&mut self, var_diag: &[f64], row_diag: &[f64]) -> Result<(), KktError>;

    /// Solves the system in place: on entry `(rhs_x, rhs_y) = (r_x, r_y)`, on exit `(Δx, Δy)`.
    fn solve(&mut self, rhs_x: &mut [f64], rhs_y: &mut [f64]) -> Result<(), KktError>;

    /// Backend information.
    fn info(&self) -> KktInfo;
}

impl<B: KktBackend + ?Sized> KktBackend for Box<B> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn requires_original_layout(&self) -> bool {
        (**self).requires_original_layout()
    }
    fn analyze(&mut self, problem: KktProblem<'_>) -> Result<(), KktError> {
        (**self).analyze(problem)
    }
    fn factor(&mut self, var_diag: &[f64], row_diag: &[f64]) -> Result<(), KktError> {
        (**self).factor(var_diag, row_diag)
    }
    fn solve(&mut self, rhs_x: &mut [f64], rhs_y: &mut [f64]) -> Result<(), KktError> {
        (**self).solve(rhs_x, rhs_y)
    }
    fn info(&self) -> KktInfo {
        (**self).info()
    }
}

/// Regularisation parameters of the built-in backends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Regularization {
    /// Static regularisation δ_y added to the row block (`E + δ_y`).
    pub static_reg: f64,
    /// Static regularisation δ_x subtracted on the variable block (`−(D_x + δ_x)`);
    /// kept tiny because on degenerate problems `D_x` of basic variables is ~1e-15 and
    /// refinement cannot undo a larger shift.
    pub static_reg_var: f64,
    /// Pivots with magnitude below this (or of the wrong sign) are replaced.
    pub dynamic_eps: f64,
    /// Replacement magnitude for such pivots.
    pub dynamic_delta: f64,
}

impl Default for Regularization {
    fn default() -> Self {
        Self {
            static_reg: 1e-9,
            static_reg_var: 1e-13,
            dynamic_eps: 1e-13,
            dynamic_delta: 1e-7,
        }
    }
}

pub(crate) fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), KktError> {
    if got == expected {
        Ok(())
    } else {
        Err(KktError::Dimension {
            what,
            got,
            expected,
        })
    }
}
