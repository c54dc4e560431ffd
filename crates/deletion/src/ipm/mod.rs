//! The custom primal–dual interior-point method of DSX §3 for LP (4): Mehrotra's
//! predictor–corrector on the natural inequality form, with every Newton step solved through
//! the block-arrow normal equations of [`bulwark_linalg::DsxSystem`].
//!
//! # Formulation
//!
//! With `u = (w, b, (α_i, λ_i, ξ_i)_i)` in the order of [`Lp4`], `G` the rows `a_i`, `b_ij` of
//! LP (4) and `h` their right-hand sides, the solver works on
//!
//! ```text
//!   min cᵀu   s.t.  G u − s = h,  s ≥ 0,   u_t ≥ 0 (t: α, λ, ξ),   −C ≤ w ≤ C,   b free
//! ```
//!
//! with `c = 1` on every `ξ_i` (LP (4)'s objective times `m`, so the duals are `O(1)`). Duals:
//! `y ≥ 0` on the rows, `z ≥ 0` on `u_t ≥ 0`, `z_l, z_u ≥ 0` on the box. Residuals
//! `r_p = G u − s − h`, `r_d = c − Gᵀy − Z` (`Z = z` on the tail, `z_l − z_u` on `w`, 0 on `b`).
//!
//! # Working scale
//!
//! The iterates hold `w' = w/s` with the working scale `s = min(C, 1)`: the box is
//! `|w'| ≤ C/s` and the rows read `(s x_ij) w'_j` (the system multiplies the caller's values by
//! `s` where it reads them, as every pass here does). For `C ≤ 1` that is the unit box, whose
//! complementarity pairs start on the scale of the others. For `C > 1` the unit box would
//! multiply `G`'s `w` columns by `C` (the normal equations' `w` block by `C²`), and the dual
//! equations of `w` then stalled above the tolerance (12 of `synth1`'s 100 fits at `C = 1000`
//! stopped short with a diverging dual residual), so the data keep their own scale and the box
//! its radius `C` (`docs/design/deletion.md`). FDROP's box, a radius of at least 1 at which
//! it is never active, gets `s = 1` by the same rule (its 3 `icml_random` fits at `C ≥ 100`
//! that stopped short in the unit box converge). The formulas below use the original `w` where
//! they say `y_i x_ij w_j`.
//!
//! # Newton step (DSX eqs. (13)–(15))
//!
//! With complementarity right-hand sides `r_s = σμ − s∘y − corr` (and `r_t`, `r_l`, `r_u` for
//! the bounds), eliminating `Δs`, `Δy` and the bound duals leaves the normal equations
//!
//! ```text
//!   (Gᵀ Θ G + D) Δu = Gᵀ q + e − r_d,     Θ = y/s,   q = (r_s − y∘r_p)/s,
//!   D = z/u_t (tail), z_l/p_l + z_u/p_u (w), 0 (b);   e = r_t/u_t, r_l/p_l − r_u/p_u, 0,
//! ```
//!
//! (`p_l = w + C`, `p_u = C − w`), then `Δs = GΔu + r_p`, `Δy = (r_s − y∘Δs)/s`,
//! `Δz = (r_t − z∘Δu_t)/u_t`, `Δz_l = (r_l − z_l∘Δw)/p_l`, `Δz_u = (r_u + z_u∘Δw)/p_u`.
//! `Gᵀ Θ G + D` is the block-arrow matrix `H` of `dsx-normal-equations.md`, factored once per
//! iteration in `O(Σ|S_i|²)` (DSX eqs. (16)–(21)) and used for the predictor and the corrector;
//! each solve is refined by preconditioned CG against the exact operator
//! ([`DsxSystem::solve_refined`]) when the direct solve is not accurate enough. Near the optimum
//! that refinement stalls at a relative residual of 1e-7–1e-5 (the rounding floor of computing
//! `H z` itself), all of it in the dual equation; in the final phase, and whenever the dual
//! residual already meets the tolerance near it (an unrefined step would spend it), the direction
//! is then refined on the dual equations in the original space (`refine`), which the same
//! factorisation does to full accuracy because the defect it solves for is small.
//!
//! Predictor `σ = 0`; corrector `σ = (μ_aff/μ)⁶` while both residuals are below the gap,
//! Mehrotra's `(μ_aff/μ)³` otherwise ([`DsxIpmSettings::sigma_power`]: the cube alone is too
//! cautious on this degenerate LP), with Mehrotra's second-order term, then up to two of
//! Gondzio's multiple centrality correctors after a short step (kept only when they lengthen
//! it; `centring`); separate primal and dual step lengths `min(1, η α_max)`, `η = 0.99`
//! (`step`). Starting point: `w = 0`, `b = 0` and every other variable, slack and dual at a
//! constant ([`DsxIpmSettings::start`]).
//!
//! Termination (`tol`): `‖r_p‖∞ / (1 + ‖h‖∞)`, `‖r_d‖∞ / (1 + ‖c‖∞)` and
//! `|cᵀu − d| / (1 + |cᵀu|)` below `tol`, with the dual objective
//! `d = hᵀy − C Σ_j (z_lj + z_uj)`. In `‖r_d‖∞` each `λ_i` component is divided by the size of
//! λ's column, `max(1, P, max_j v_j)` (`DsxIpm::lam_scale`): its terms `P_i y_a` and `v_j y_b`
//! are of the order of the number of features where every other column's are `O(1)`, so their
//! rounding alone kept it above 1e-8 at the optimum of near-square dense instances
//! (`docs/design/deletion.md`). This is the dual residual of the LP with λ's column scaled to
//! unit size; the iterates are unchanged. LP (4) is always feasible and bounded (`ξ` large,
//! objective `≥ 0`), so there is no infeasibility detection: a run ends optimal, at the
//! iteration or time limit, or with a numerical error (`residuals`).
//!
//! # Regularisation
//!
//! Near a degenerate optimum `S` can be singular to working precision in many directions:
//! on the SpamAssassin corpus (5913 e-mails × 5239 words, N = 5, an objective of 0.003 with
//! most `ξ_i = 0`), at a gap of 3e-7 the factorisation replaced 2859 of the 5240 pivots of
//! `S` by the dynamic regularisation's `δ` ([`DsxIpmSettings::dynamic_regularization_delta`]),
//! and the triangular solves with the resulting factor overflowed (multipliers of order
//! `1/δ` compounding over the columns). When the `(w, b)` part of the predictor comes out
//! non-finite, the iteration re-factors with the regularisation raised (`ε` and `δ` each 100×
//! per level, at most three levels, `MAX_BOOST`) and computes the predictor again;
//! the refinement against the exact operator keeps the directions' accuracy where it can, and
//! the next iteration factors with the settings' values again. A run that never meets a
//! non-finite direction is unchanged to the bit. The count is the outcome's
//! `regularization_boosts` (`regularization_boosts` of `train --json`).
//!
//! # Certificate
//!
//! Near the optimum of some real fits the solves cannot remove the dual residual (`H` too
//! ill-conditioned; `docs/design/deletion.md`): the gap and the primal residual meet the
//! tolerance while the dual residual stalls above it or grows. An iterate whose primal residual
//! meets the tolerance and whose gap is within [`DsxIpmSettings::certify_within`] times it, but
//! which misses a test, is therefore also tested by a certificate that needs no dual residual
//! (`certificate`): the closed-form objective `P` at its `(w, b)` (`w` projected onto the box;
//! core's fractional knapsack, the objective of a primal point feasible by construction, which
//! can also be below the iterate's `Σ ξ_i`) against the objective `D` of a dual point repaired
//! from its row duals so that every dual equation holds (`y_a` moved within the interval its
//! equations allow, `y_b` clipped only where that interval is empty, a class's duals scaled
//! for the bias equation, and the box duals at least cost). Weak duality gives `D ≤ optimum ≤ P`, so
//! `(P − D) / (1 + P) ≤ tol` ends the run optimal; [`IpmOutcome::repaired_from`] then keeps the
//! iterate's dual residual, and the outcome's objectives, gap and dual residual are the
//! certificate's.
//!
//! In the final phase, once the dual residual is below the tolerance and refinement cannot
//! bring a direction's dual defect there, the dual step is capped so that the dual residual
//! stays below it (`refine`). Where that cap binds, the point the uncapped step would reach is
//! certified first (its `(w, b)` and row duals; LP (4) only), and when the certificate holds
//! there it answers: the cap kept some LPs' final phase at steps below 1e-3 for tens of
//! iterations while the uncapped point was certified optimal (three Fashion-MNIST pairs,
//! `docs/design/deletion.md`), and where the certificate does not hold the capped step is taken
//! as before.
//!
//! # Almost optimal
//!
//! On some LPs the final phase meets a floor: near `μ = 1e-12` the solves are too inaccurate to
//! take a step (the direction's dual defect caps the dual step), and the run stalls or diverges
//! just above the tolerance (cases in `docs/design/deletion.md`). The run keeps the `(w, b)` of the
//! iterate with the smallest certified gap; when it stops short — [`Status::NumericalError`] or
//! [`Status::IterationLimit`] — and that gap (and the repaired point's dual residual) is within
//! [`DsxIpmSettings::accept_within`] times the tolerance, it returns that iterate with status
//! [`Status::AlmostOptimal`], the certificate's objectives, gap and dual residual, and a reason
//! that says why it stopped. The fit reports it as not converged (the gap reached against the
//! tolerance asked) instead of handing the LP to the fallback solvers, which meet the same floor
//! after far longer on large LPs.
//!
//! # Zero budget
//!
//! An example whose budget is zero (`N = 0`: `P_i = V_i`) has no adversary, and LP (4) leaves its
//! `λ_i` free: summing `a_i` and its rows `b_ij` gives the hinge constraint
//! `y_i(wᵀx_i + b) + ξ_i − Σ_j s_ij ≥ 1`, in which `λ_i` cancels, so raising `λ_i` by `t` and every
//! `α_ij` by `v_j t` keeps every iterate feasible at the same objective. The optimal face is then
//! unbounded, no dual point is strictly feasible (`z_α = 0`, `z_λ = 0` on it), the central path
//! does not exist, and the method drifts along the ray until its solves break down (every
//! `N = 0, C = 0.01` fit of the `stress` sweep did, at both tolerances). Two exact repairs:
//!
//! - **λ out of the rows.** When every example's budget is zero, `λ_i` is taken out of the rows
//!   (its coefficients in `G` become 0: `DsxSystem` gets `v = 0`, `P = 0`) and each row `b_ij`
//!   is shifted by `τ_ij` instead of `v_j λ_i`: `h_b = v_j/P + τ_ij`, `h_a = V0_i/P − Σ_j τ_ij`,
//!   with `τ_ij = |C x_ij|` for a feature with a value and `τ_ij = 0` for one of value 0 (which
//!   the adversary deletes for free: `α_ij ≥ [y_i x_ij w_j]₊`, as with λ in the rows). The
//!   shifts cancel in the sum of `a_i` and its rows, and `τ_ij ≥ y_i x_ij w_j` for every `w`
//!   in the box `|w_j| ≤ C`, so at the optimum every `α_ij = v_j/P + τ_ij − y_i x_ij w_j ≥
//!   v_j/P > 0` of a valued feature is strictly positive and the optimum is LP (4)'s. (A first
//!   version fixed `λ_i` at `t_i = max_j |C x_ij| / v_j`, the per-example shift `v_j t_i`: with
//!   small feature values — mutual information gives some features almost none — `t_i`
//!   reached 1e4 and more, the rows' right-hand sides with it, and the path stalled;
//!   `docs/design/deletion.md`.) The
//!   start satisfies the shifted rows at `w = 0` (`α_ij = start + h_b`).
//! - **λ capped.** Every zero-budget example's `λ_i` gets a cap `λ_i ≤ Λ_i`, which removes the
//!   ray and no optimum: with mixed budgets `Λ_i = 1 + 2 t_i`, since the inner problem's optimal
//!   `λ_i` is at most `t_i − 1/P`; with every budget zero `λ_i` is a variable of its own whose value
//!   does not matter, capped at 1. It is a bound like the box's, with its dual `z_c` (`r_d` of
//!   `λ_i` gains `+z_c`, `H` gains `z_c/(Λ_i − λ_i)`, the dual objective `−Λ_i z_c`).
//!
//! Examples with a budget have neither, and their iterates are unchanged.
//!
//! # FDROP
//!
//! FDROP (Globerson & Roweis 2006) has LP (4)'s constraints, with the same feature values `v`
//! and budget `N`, and two differences ([`crate::fdrop`]). Its threshold `t_i` (the harm per
//! unit of value `y_i x_ij w_j / v_j` at which the adversary's knapsack stops; with unit values
//! and `N = K`, the `K`-th largest harm) is bounded by 0 where LP (4)'s `λ_i + 1/P` is bounded
//! by `1/P` (LP (4) keeps the features whose harm per unit of value is below `1/P`, FDROP
//! deletes every positive harm the budget reaches): with `λ_i` standing for `t_i` the rows are
//! LP (4)'s with right-hand sides `h_a = 1` and `h_b = 0`. And its objective is
//! `½‖w‖² + C Σ ξ_i` instead of a box: divided by `C` and in the working variables,
//! `Σ ξ_i + (q/2)‖w‖²` with `q = s²/C` (`s` the working scale). The quadratic adds `q w` to
//! `w`'s dual residual, `q` to the `w` block of `H` (so the factorisation and the refined solves
//! are LP (4)'s), and `−(q/2)‖w‖²` to the dual objective (the QP's Wolfe dual); the primal and
//! dual steps are then equal (`w`'s dual residual depends on `w`). The box stays, with a radius
//! at which it is never active. The certificate is FDROP's own (`certificate`): FDROP's
//! objective at the iterate's `(w, b)` (the fractional knapsack per example; the top `K` with
//! unit values and an integer budget) against the value of FDROP's dual (Globerson & Roweis;
//! `bulwark-online`'s dual solver) at a feasible point repaired from the row duals — `λ_i = C y_a`,
//! `μ_ij = C (y_a − y_b)`, clipped into `0 ≤ μ_ij ≤ λ_i ≤ C`, scaled into
//! `Σ_j v_j μ_ij ≤ N λ_i`, the heavier class scaled so that `Σ_i y_i λ_i = 0` — whose value
//! `Σ λ − ½‖w(λ, μ)‖²` is a lower bound on the optimum whatever the iterate's residuals.
//!
//! All vectors are allocated once; the iteration loop allocates nothing.
//!
//! # Threads
//!
//! Every pass over the examples (scalings, right-hand side, recovery and step lengths,
//! residuals, complementarity, elementwise updates) runs over four blocks of consecutive
//! examples balanced by non-zeros, on rayon when more than one thread is available. The blocks
//! are fixed by the data and partial sums are combined in block order; `DsxSystem` gets
//! `threads` for its own bit-stable passes and `par = Par::Seq` for faer's kernels. The iterates
//! are therefore the same bits for any thread count.

//! # Modules
//!
//! - `driver`: the main loop (starting point, predictor, corrector, step);
//! - `normal_equations`: the scalings, the factorisation of `H` and the refined solves;
//! - `newton`: the right-hand sides and the recovery of a Newton direction;
//! - `centring`: the σ rule, Mehrotra's second-order term and Gondzio's correctors;
//! - `refine`: refinement of a direction on the dual equations in the final phase;
//! - `certificate`: the closed-form primal objective and the repaired dual point;
//! - `residuals`: residuals, complementarity and the termination tests;
//! - `step`: ratio tests and the update of the iterate;
//! - `parallel`, `kernels`: the per-example blocks and the vectorised reductions;
//! - `settings`: [`DsxIpmSettings`], every tuning constant with its default.

mod centring;
mod certificate;
mod driver;
mod kernels;
mod newton;
mod normal_equations;
mod parallel;
mod refine;
mod residuals;
pub mod settings;
mod step;

use std::ops::ControlFlow;

use bulwark_core::DeletionScratch;
use bulwark_linalg::{
    DsxScalings, DsxSettings, DsxSystem, LinalgError, NormalEquations, PairScaling, Par, RowsRef,
};
use bulwark_lp::{IterationInfo, Status};

use crate::error::{DeletionError, Result};
use crate::layout::Lp4;
use kernels::inf_norm;
use parallel::{Exec, PARTS, Parts};
pub use settings::{DsxIpmSettings, DsxIpmSettingsBuilder};

/// The limits of one solve (the rest is [`DsxIpmSettings`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct IpmOptions {
    pub tolerance: f64,
    pub max_iter: u32,
    pub time_limit: f64,
}

/// The outcome of one solve of LP (4).
#[derive(Debug, Clone)]
pub struct IpmOutcome {
    /// Final status.
    pub status: Status,
    /// `(w, b)`: the first `n + 1` variables.
    pub wb: Vec<f64>,
    /// LP (4)'s objective `(1/m) Σ ξ_i` at the final iterate (for FDROP's QP plus its
    /// quadratic term over `m`: module docs, *FDROP*).
    pub objective: f64,
    /// The dual objective, on the same scale.
    pub dual_objective: f64,
    /// Iterations performed.
    pub iterations: u32,
    /// Relative primal residual.
    pub primal_residual: f64,
    /// Relative dual residual.
    pub dual_residual: f64,
    /// Relative gap.
    pub gap: f64,
    /// Seconds in the factorisations.
    pub factor_seconds: f64,
    /// Seconds in the solves (including refinement).
    pub solve_seconds: f64,
    /// Total seconds.
    pub seconds: f64,
    /// Gondzio centrality correctors kept (total over the iterations).
    pub correctors: u32,
    /// Directions refined on the dual equations (`refine`; total over the iterations).
    pub refinements: u32,
    /// Factorisations repeated with a raised dynamic regularisation because a direction came
    /// out non-finite (module docs, *Regularisation*).
    pub regularization_boosts: u32,
    /// Why the run stopped when it is not optimal.
    pub reason: Option<String>,
    /// When the answer is certified by a dual point repaired from the last iterate's (module
    /// docs, *Certificate*): that iterate's relative dual residual. `dual_residual` is then
    /// the repaired point's, and `objective` the closed form at the returned `(w, b)`. When the
    /// certified point is the one an uncapped dual step would reach (module docs,
    /// *Certificate*), this and `primal_residual` are the residuals of the iterate it steps
    /// from: the point itself is certified, its residuals are not computed.
    pub repaired_from: Option<f64>,
    /// A caller's check of the iterate ended the run (example screening's early end of a
    /// round, [`crate::Screening::early_stop`]): `wb` is that iterate's, not an answer (status
    /// [`Status::TimeLimit`], which also means cancelled).
    pub ended_by_check: bool,
    /// How the normal equations were solved (`bulwark-linalg`'s cost model, or the method
    /// forced by [`DsxIpmSettings::normal_equations`]).
    pub normal_equations: NormalEquations,
}

/// Per-iteration progress callback (`Break` stops the solve with status `time_limit`).
pub type Progress<'a> = &'a mut dyn FnMut(&IterationInfo) -> ControlFlow<()>;

/// A caller's check of the iterate, called once per iteration of the structured IPM with
/// `(w, b)` (the caller's scale), the relative gap and the relative primal residual; `true`
/// ends the run there ([`IpmOutcome::ended_by_check`]). Example screening uses it to end a round
/// whose iterate already leaves an example outside the working set with a loss
/// ([`crate::screening`]).
pub(crate) type IterateCheck<'a> = &'a mut dyn FnMut(&[f64], f64, f64, f64) -> bool;

/// A direction: primal `(Δu, Δs)` and dual `(Δy, Δz, Δz_l, Δz_u, Δz_c)`.
///
/// `s` and `y` have the length of `u` (the variables), of which the rows use the first
/// [`DsxIpm::rows`]: while `u` is solved for, `s`, `y` and `z` are the refined solve's work
/// vectors ([`DsxIpm::solve_h`]), so the linear-algebra layer keeps none of its own.
struct Dir {
    u: Vec<f64>,
    s: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    zl: Vec<f64>,
    zu: Vec<f64>,
    /// The caps' duals, per example (0 for an example without a cap; [`DsxIpm::capped`]).
    zc: Vec<f64>,
}

impl Dir {
    fn new(len: usize, rows: usize, n: usize, m: usize) -> Self {
        Self {
            u: vec![0.0; len],
            s: vec![0.0; rows.max(len)],
            y: vec![0.0; rows.max(len)],
            z: vec![0.0; len],
            zl: vec![0.0; n],
            zu: vec![0.0; n],
            zc: vec![0.0; m],
        }
    }
}

/// The scalings of the examples and of `(w, b)`, in the layout [`DsxScalings`] expects, and
/// `φ = y/s` of the rows `b_ij`, which every solve reads (twice per pair). `σ = z/u` of the
/// `α_ij`, which only the factorisation and the exact operator read, is not stored:
/// [`DsxSystem`] computes it from the iterate where it reads it ([`PairScaling::Ratio`], as
/// `z · (1/u)`, the expression of the passes that read `1/u`). (Computing `φ` where read too
/// saved one more array per pair but made the solves 45 % slower: `docs/design/deletion.md`.)
struct Scal {
    theta: Vec<f64>,
    phi: Vec<f64>,
    wd: Vec<f64>,
    rho: Vec<f64>,
    kappa: Vec<f64>,
}

impl Scal {
    /// The view for the iterate's `u` and `z` (over the variables) of an LP with `n` features.
    fn view<'s>(&'s self, n: usize, (u, z): Iterate<'s>) -> DsxScalings<'s> {
        DsxScalings {
            theta: &self.theta,
            phi: PairScaling::Values(&self.phi),
            w_diag: &self.wd,
            b_diag: 0.0,
            // example i's α_ij start its block of the variables (`Lp4::var_offset`)
            sigma: PairScaling::Ratio {
                num: z,
                den: u,
                lead: n + 1,
                per_example: 2,
            },
            rho: &self.rho,
            kappa: &self.kappa,
        }
    }
}

/// The iterate's `(u, z)`.
type Iterate<'s> = (&'s [f64], &'s [f64]);

/// The solver state for one LP (4).
pub(crate) struct DsxIpm<'a> {
    lp: &'a Lp4<'a>,
    sys: DsxSystem<'a>,
    m: usize,
    n: usize,
    len: usize,
    rows: usize,
    /// Radius `C/s` of the box in the working variables (module docs, *Working scale*).
    c_box: f64,
    /// The working scale `s`: `w = s·w'` (module docs, *Working scale*).
    w_scale: f64,
    /// The weight `q` of a quadratic term `(q/2)‖w‖²` (working variables) added to the
    /// objective: 0 for LP (4); FDROP's QP otherwise ([`DsxIpm::for_fdrop`], module docs,
    /// *FDROP*).
    quad: f64,
    /// The right-hand sides `h` of the rows `a_i`, per example; those of the rows `b_ij` are
    /// `v_j / P + v_j t_i` ([`h_b`]), computed where they are read instead of stored.
    h_a: Vec<f64>,
    /// `v_j / P` per feature.
    v_over_p: Vec<f64>,
    /// Every budget is zero: λ is taken out of the rows, which are shifted by `τ_ij` instead
    /// (module docs, *Zero budget*).
    lam_fixed: bool,
    /// `‖h‖∞`.
    h_norm: f64,
    /// `max(1, P, max_j v_j)`, the size of λ's column in `G` (`P_i ≤ P` in `a_i`, `v_j` in
    /// `b_ij`): λ's components of the dual residual are measured relative to it (module docs).
    lam_scale: f64,
    /// λ's coefficients in the rows `b_ij`: `v_j`, or 0 when λ is fixed (module docs, *Zero
    /// budget*).
    lam_v: Vec<f64>,
    /// λ's coefficients in the rows `a_i`: `P_i`, or 0 when λ is fixed.
    lam_p: Vec<f64>,
    // iterate
    u: Vec<f64>,
    s: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    zl: Vec<f64>,
    zu: Vec<f64>,
    /// The box slacks `p_l = w + C` and `p_u = C − w`, stepped along `±Δw` instead of computed
    /// from `w`: with `w` near a bound, `C − w` keeps only the digits of `w` (an absolute 1e-16),
    /// while the slack itself falls with `μ` far below that (one real fit reached `p_u = 0`,
    /// an infinite box scaling, at a gap of 6e-8).
    pl: Vec<f64>,
    pu: Vec<f64>,
    /// The examples whose `λ_i` is capped at `cap[i]` (module docs, *Zero budget*), in order.
    capped: Vec<usize>,
    /// `Λ_i` for a capped example, `+∞` otherwise.
    cap: Vec<f64>,
    /// The caps' duals (0 for an example without a cap).
    zc: Vec<f64>,
    /// The caps' complementarity right-hand sides.
    rc: Vec<f64>,
    // residuals (`residuals`), stored where they are not per non-zero: the components of the
    // rows `b_ij` and the variables `α_ij` are computed where they are read, from the iterate
    // ([`RowsB::rp`], [`rd_alpha`]), so no array of them is kept
    /// `r_p` of the rows `a_i`, per example.
    rp_a: Vec<f64>,
    /// `r_d` of `(w, b)`.
    rd_w: Vec<f64>,
    /// `r_d` of `λ_i` and of `ξ_i`, per example.
    rd_lam: Vec<f64>,
    rd_xi: Vec<f64>,
    // complementarity right-hand sides of the rows and the tail: after the predictor, which
    // writes them in its recovery pass, Mehrotra's second-order products `Δs∘Δy`, `Δu∘Δz` of
    // the affine direction (`so_target` is then `Some(σμ)`, and the right-hand side read is
    // `σμ − s∘y − rs`, `σμ − u∘z − rt`: the bits a stored `r_s` would have); after a Gondzio
    // corrector, the right-hand sides themselves (`so_target` `None`)
    rs: Vec<f64>,
    rt: Vec<f64>,
    so_target: Option<f64>,
    /// A Gondzio correction still to be added to `rs`, `rt` (by the next right-hand side's
    /// pass, `newton_rhs`).
    centrality: Option<centring::Centrality>,
    rl: Vec<f64>,
    ru: Vec<f64>,
    // directions: affine (predictor) and combined
    aff: Dir,
    dir: Dir,
    // scratch
    /// Per-block scratch of length `n` (dense rows), `PARTS × n`.
    qbufs: Vec<f64>,
    /// Per-block scratch for one example's affine `Δs`, `Δy` and `Δz` (`recover`), which are
    /// not stored: `PARTS × 3(n + 2)`.
    abufs: Vec<f64>,
    /// Per-block accumulators of the `w` part of the right-hand side, `PARTS × n`.
    wacc: Vec<f64>,
    /// `(w, b)` of the iterate with the smallest certified gap so far (`driver`, *Almost
    /// optimal*), `n + 1`.
    best_wb: Vec<f64>,
    /// The example blocks of the data-parallel passes.
    parts: Parts,
    /// Where the blocks run.
    exec: Exec,
    rhs: Vec<f64>,
    sc: Scal,
    factor_seconds: f64,
    solve_seconds: f64,
    /// Most Gondzio correctors per iteration on this LP
    /// ([`DsxIpmSettings::max_correctors`] where the cost model says they pay off, else 0).
    max_correctors: usize,
    /// The tuning constants.
    settings: DsxIpmSettings,
    /// The first solve with the current factorisation was accurate without refinement.
    checked_solve: bool,
    /// The current factorisation regularised or clamped no pivot.
    clean_factor: bool,
    /// The closed-form objective's scratch ([`DsxIpm::certificate`]).
    worst_case: DeletionScratch,
    /// The harms of one example (FDROP's certificate, [`DsxIpm::fdrop_certificate`]).
    harm: crate::fdrop::Harms,
    /// Correctors kept (total).
    correctors: u32,
    /// Directions refined on the dual equations.
    refinements: u32,
    /// The level of the current factorisation's raised regularisation (0: the settings').
    boost: u8,
    /// Factorisations repeated with a raised regularisation (total).
    boosts: u32,
    /// The primal residual is at rounding level ([`DsxIpmSettings::primal_rounding`]): the
    /// Newton steps take it as zero and do not read it.
    rp_zero: bool,
}

impl<'a> DsxIpm<'a> {
    /// The solver of LP (4) on `lp`, at the working scale `s = min(C, 1)` (module docs,
    /// *Working scale*). Memory `O(nnz + m + n²)`. `threads`: workers of the per-example passes
    /// and of the factorisation (`None`: rayon's current pool); the result does not depend on
    /// it. `settings` are taken as validated.
    pub(crate) fn new(
        lp: &'a Lp4<'a>,
        threads: Option<usize>,
        settings: &DsxIpmSettings,
    ) -> Result<Self> {
        let current = rayon::current_num_threads();
        let threads = threads.unwrap_or(current).max(1);
        let pool = if threads > 1 && threads != current {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| {
                        crate::error::DeletionError::Core(bulwark_core::Error::param(
                            "threads",
                            threads,
                            format!("could not start the thread pool: {e}"),
                        ))
                    })?,
            )
        } else {
            None
        };
        let exec = Exec {
            par: threads > 1 && lp.num_vars() >= settings.parallel_min_vars,
            pool,
        };
        let dsx_settings = DsxSettings {
            // our passes split the work the same way for any thread count (same bits); faer's
            // parallel kernels would not, so they stay sequential
            par: Par::Seq,
            threads: if exec.par { threads } else { 1 },
            static_regularization: settings.static_regularization,
            dynamic_regularization: Some(normal_equations::regularization(settings, 0)),
            normal_equations: settings.normal_equations,
            ..DsxSettings::default()
        };
        // dense data: the dense kernels of `DsxSystem` (no column indices, contiguous values)
        let rows = if lp.dense {
            RowsRef::Dense {
                data: &lp.x,
                m: lp.m(),
                n: lp.n(),
            }
        } else {
            RowsRef::Csr {
                indptr: &lp.indptr,
                indices: &lp.indices[..],
                values: &lp.x,
                n: lp.n(),
            }
        };
        let (capped, mut cap) = caps(lp);
        // zero budget everywhere: λ out of the rows (module docs, *Zero budget*), a variable of
        // its own whose value does not matter, kept in `[0, 1]`
        let fixed = capped.len() == lp.m();
        if fixed {
            cap.fill(1.0);
        }
        let (lam_v, lam_p, p_sys) = if fixed {
            (vec![0.0; lp.n()], vec![0.0; lp.m()], 0.0)
        } else {
            (lp.v().to_vec(), lp.p_i.clone(), lp.p())
        };
        // the working scale (module docs, *Working scale*): w = s·w' in the box |w'| ≤ C/s, the
        // data s·x. The system reads the caller's values (no copy) and multiplies by `s` where
        // it reads them; so do the passes here (`s·x` computed where read: the same bits as a
        // scaled copy).
        let w_scale = lp.c.min(1.0);
        let c_box = lp.c / w_scale;
        // the memory the normal equations may take: the limit less the method's own vectors
        let limit = settings.memory_limit.or_else(crate::memory::available);
        let own = ipm_bytes(lp);
        let dsx_settings = DsxSettings {
            memory_limit: limit.map(|l| l.saturating_sub(own)),
            ..dsx_settings
        };
        let sys = DsxSystem::try_borrow_with(rows, w_scale, &lp.y, &lam_v, p_sys, dsx_settings)
            .map_err(|e| match e {
                LinalgError::TooLarge { plan } => DeletionError::TooLarge {
                    plan,
                    ipm_bytes: own,
                    limit: limit.unwrap_or(u64::MAX),
                    limit_given: settings.memory_limit.is_some(),
                },
                e => e.into(),
            })?;
        let (m, n, nnz) = (lp.m(), lp.n(), lp.nnz());
        let len = sys.len();
        let nrows = sys.n_rows();
        debug_assert_eq!(len, lp.num_vars());
        debug_assert_eq!(nrows, lp.num_rows());
        // DSX eq. (4): a_i ≥ V0_i / P, b_ij ≥ v_j / P; with λ taken out of the rows, the
        // shifts `τ_ij = |C x_ij|` (`C/s` times the working `|s x_ij|`) move to the right-hand
        // sides (module docs, *Zero budget*)
        let v_over_p: Vec<f64> = lp.v().iter().map(|v| v / lp.p()).collect();
        let (xs_all, cx) = (sys.values(), sys.scale());
        let h_a: Vec<f64> = (0..m)
            .map(|i| {
                let shift = if fixed {
                    let xs = &xs_all[lp.indptr[i]..lp.indptr[i + 1]];
                    let vp = |t: usize| v_over_p[lp.col(i, t)];
                    xs.iter()
                        .enumerate()
                        .map(|(t, &x)| tau(vp(t), c_box * (cx * x)))
                        .sum()
                } else {
                    0.0
                };
                lp.v0[i] / lp.p() - shift
            })
            .collect();
        let mut h_norm = inf_norm(&h_a);
        for i in 0..m {
            for (t, &x) in xs_all[lp.indptr[i]..lp.indptr[i + 1]].iter().enumerate() {
                let j = lp.col(i, t);
                let h = if fixed {
                    h_b(v_over_p[j], c_box * (cx * x))
                } else {
                    v_over_p[j]
                };
                h_norm = h_norm.max(h.abs());
            }
        }
        let max_correctors = if centring::correctors_pay_off(lp, settings.corrector_cost_ratio) {
            settings.max_correctors
        } else {
            0
        };
        let z = |k: usize| vec![0.0; k];
        Ok(Self {
            lp,
            sys,
            m,
            n,
            len,
            rows: nrows,
            c_box,
            w_scale,
            quad: 0.0,
            h_a,
            v_over_p,
            lam_fixed: fixed,
            h_norm,
            lam_scale: if fixed {
                1.0
            } else {
                lp.v().iter().fold(lp.p().max(1.0), |a, &v| a.max(v))
            },
            lam_v,
            lam_p,
            u: z(len),
            s: z(nrows),
            y: z(nrows),
            z: z(len),
            zl: z(n),
            zu: z(n),
            pl: z(n),
            pu: z(n),
            capped,
            cap,
            zc: z(m),
            rc: z(m),
            rp_a: z(m),
            rd_w: z(n + 1),
            rd_lam: z(m),
            rd_xi: z(m),
            rs: z(nrows),
            rt: z(len),
            so_target: None,
            centrality: None,
            rl: z(n),
            ru: z(n),
            aff: Dir::new(len, nrows, n, m),
            dir: Dir::new(len, nrows, n, m),
            rhs: z(len),
            qbufs: z(PARTS * n),
            abufs: z(PARTS * 3 * (n + 2)),
            wacc: z(PARTS * n),
            best_wb: z(n + 1),
            parts: Parts::new(lp),
            exec,
            sc: Scal {
                theta: z(m),
                phi: z(nnz),
                wd: z(n),
                rho: z(m),
                kappa: z(m),
            },
            factor_seconds: 0.0,
            solve_seconds: 0.0,
            max_correctors,
            settings: settings.clone(),
            checked_solve: false,
            clean_factor: false,
            worst_case: DeletionScratch::with_capacity(n),
            harm: crate::fdrop::Harms::with_capacity(n),
            correctors: 0,
            refinements: 0,
            boost: 0,
            boosts: 0,
            rp_zero: false,
        })
    }

    /// FDROP's QP on `lp` (module docs, *FDROP*) with loss weight `c` (FDROP's `C`; `lp`'s box
    /// is a radius at which the box is never active): at the working scale `s = min(radius, 1)`
    /// (module docs, *Working scale*), `(q/2)‖w'‖²` with `q = s²/c` added to the objective
    /// `Σ ξ_i` (FDROP's objective over `c`), and the right-hand sides `h_a = 1`, `h_b = 0`
    /// (LP (4)'s `λ_i + 1/P` is FDROP's threshold `t_i ≥ 0`). `c > 0` and finite; a budget that is
    /// zero to rounding (a capped example: module docs, *Zero budget*) is an error naming it. `threads` and `settings` as for
    /// [`DsxIpm::new`].
    pub(crate) fn for_fdrop(
        lp: &'a Lp4<'a>,
        threads: Option<usize>,
        settings: &DsxIpmSettings,
        c: f64,
    ) -> Result<Self> {
        let mut s = Self::new(lp, threads, settings)?;
        if s.lam_fixed || !s.capped.is_empty() {
            // a budget that is zero to rounding beside an example's support value
            return Err(bulwark_core::Error::param(
                "budget",
                lp.budget.budget(),
                "a budget N > 0 that is not zero to rounding beside the total feature value",
            )
            .into());
        }
        let q = s.w_scale * s.w_scale / c;
        debug_assert!(q.is_finite() && q > 0.0);
        s.quad = q;
        s.h_a.fill(1.0);
        s.v_over_p.fill(0.0);
        s.h_norm = 1.0;
        Ok(s)
    }

    /// First index of the tail `(α, λ, ξ)` variables.
    fn t0(&self) -> usize {
        self.n + 1
    }

    /// Index of `λ_i` in `u`.
    fn lam_index(&self, i: usize) -> usize {
        self.lp.var_offset(i) + self.lp.support_len(i)
    }
}

/// Bytes the structured IPM holds on `lp` besides the data and the normal equations: its
/// iterate, residuals, two directions and the scalings (twelve vectors over the variables,
/// three over the rows, two per stored entry, and a few per example and feature).
pub(crate) fn ipm_bytes(lp: &Lp4<'_>) -> u64 {
    let (len, rows, nnz) = (lp.num_vars() as u64, lp.num_rows() as u64, lp.nnz() as u64);
    8 * (12 * len + 3 * rows + 2 * nnz + 40 * (lp.m() + lp.n()) as u64)
}

/// The [`RowsB`] of a [`DsxIpm`]: a struct literal (not a method) borrows the solver's fields
/// one by one, so it can be built beside a mutable borrow of another field.
macro_rules! rows_b {
    ($s:expr) => {
        $crate::ipm::RowsB {
            lam_v: &$s.lam_v,
            v_over_p: &$s.v_over_p,
            fixed: $s.lam_fixed,
            c_box: $s.c_box,
        }
    };
}
pub(crate) use rows_b;

/// The data of the rows `b_ij` that their primal residual needs besides the iterate.
#[derive(Clone, Copy)]
pub(crate) struct RowsB<'a> {
    lam_v: &'a [f64],
    v_over_p: &'a [f64],
    fixed: bool,
    /// The box radius `C/s` in the working variables, which turns `s x_ij` into `C x_ij`.
    c_box: f64,
}

impl RowsB<'_> {
    /// The right-hand side `h` of the row `b_ij` of feature `j` with the working value
    /// `s x_ij` = `sx` ([`h_b`] of `C x_ij = (C/s) · sx` when λ is taken out of the rows, else
    /// `v_j / P`).
    #[inline(always)]
    fn h(&self, j: usize, sx: f64) -> f64 {
        if self.fixed {
            h_b(self.v_over_p[j], self.c_box * sx)
        } else {
            self.v_over_p[j]
        }
    }

    /// The primal residual `(G u − s − h)` of the row `b_ij` (DSX eq. (4):
    /// `y_i x_ij w_j − v_j λ_i + α_ij − s_ij − h_ij`), from `cyx_w = y_i (s x_ij) w'_j` (module
    /// docs, *Working scale*; `s x_ij` as `s` times the system's value), `λ_i`, `α_ij`, `s_ij`
    /// and `h = h_ij`
    /// ([`RowsB::h`]; the residual pass also sums it into the dual objective): every pass
    /// computes it with this one expression, so it is the same bits where
    /// [`DsxIpm::residuals`] measures it and where the Newton steps read it (it is not stored).
    #[inline(always)]
    fn rp(&self, j: usize, cyx_w: f64, lam: f64, alpha: f64, s: f64, h: f64) -> f64 {
        cyx_w - self.lam_v[j] * lam + alpha - s - h
    }
}

/// What the primal residuals of one example's rows `b_ij` are computed from, for the passes
/// that read them ([`ExampleRp::at`]).
#[derive(Clone, Copy)]
struct ExampleRp<'a> {
    rows_b: RowsB<'a>,
    /// `y_i`.
    yi: f64,
    /// The system's values `x_ij` over the support (its rows are `s x_ij`).
    xs: &'a [f64],
    /// `s`, the system's [`DsxSystem::scale`].
    cx: f64,
    /// `w` (indexed by feature).
    w: &'a [f64],
    /// The example's tail of `u`: `α_ij` over the support, then `λ_i`, `ξ_i`.
    tail: &'a [f64],
    /// The example's rows' slacks: `s` of `a_i`, then of `b_ij` over the support.
    s: &'a [f64],
}

impl<'a> ExampleRp<'a> {
    #[inline(always)]
    fn new(
        rows_b: RowsB<'a>,
        yi: f64,
        (xs, cx): (&'a [f64], f64),
        w: &'a [f64],
        tail: &'a [f64],
        s: &'a [f64],
    ) -> Self {
        Self {
            rows_b,
            yi,
            xs,
            cx,
            w,
            tail,
            s,
        }
    }

    /// `r_p` of the row `b_ij` of the support's entry `t` (feature `j`), or 0 when `RP0` (the
    /// primal residual is at rounding level and taken as zero: module docs). A method, not a
    /// closure: a closure nested in the passes' closures was not inlined (a call per pair).
    #[inline(always)]
    fn at<const RP0: bool>(&self, t: usize, j: usize) -> f64 {
        if RP0 {
            return 0.0;
        }
        let lam = self.tail[self.xs.len()];
        let cyx_w = self.yi * (self.cx * self.xs[t]) * self.w[j];
        let h = self.rows_b.h(j, self.cx * self.xs[t]);
        self.rows_b
            .rp(j, cyx_w, lam, self.tail[t], self.s[t + 1], h)
    }
}

/// A pair's complementarity right-hand side `σμ − x z − Δx Δz` from the predictor's stored
/// product `Δx Δz` (`so_target` = `σμ`): the form `rs`, `rt` hold after the predictor.
#[inline(always)]
fn second_order(target: f64, x: f64, z: f64, prod: f64) -> f64 {
    target - x * z - prod
}

/// The dual residual `(c − Gᵀy − z)` of `α_ij`: `y_a,i − y_b,ij − z_ij` (DSX eq. (4): `α_ij`
/// has `+1` in the row `b_ij` and `−1` in `a_i`); computed where read, like [`RowsB::rp`].
#[inline(always)]
fn rd_alpha(ya: f64, yb: f64, z: f64) -> f64 {
    ya - yb - z
}

/// The right-hand side `v_j / P + τ_ij` of the row `b_ij` when λ is taken out of the rows
/// (module docs, *Zero budget*), from `v_j / P` and `C x_ij` = `cx`, as [`DsxIpm::new`] defines
/// it.
#[inline(always)]
fn h_b(v_over_p: f64, cx: f64) -> f64 {
    v_over_p + tau(v_over_p, cx)
}

/// The shift `τ_ij` of the row `b_ij` when λ is taken out of the rows (module docs, *Zero
/// budget*): `|C x_ij|` for a feature with a value (`v_j / P > 0`), 0 for a feature of value 0,
/// which the adversary deletes for free even with a zero budget. Every pass computes it with
/// this expression from `C x_ij` = `cx` (as `C/s` times `s` times the system's value: the
/// callers' `c_box * (s * x)`), so it is the same bits wherever it is read.
#[inline(always)]
fn tau(v_over_p: f64, cx: f64) -> f64 {
    if v_over_p > 0.0 { cx.abs() } else { 0.0 }
}

/// The examples with a zero budget and their caps `Λ_i` (module docs, *Zero budget*): an
/// example whose budget `V_i − P_i` is zero (to rounding) gets `Λ_i = 1 + 2 t_i` with
/// `t_i = max_j |C y_i x_ij| / v_j` over its support's features with `v_j > 0`, every other
/// example `Λ_i = +∞`.
fn caps(lp: &Lp4<'_>) -> (Vec<usize>, Vec<f64>) {
    let mut capped = Vec::new();
    let mut cap = vec![f64::INFINITY; lp.m()];
    for (i, cap_i) in cap.iter_mut().enumerate() {
        let nz = lp.indptr[i]..lp.indptr[i + 1];
        let col = |nz: usize| lp.col(i, nz - lp.indptr[i]);
        let v_i: f64 = nz.clone().map(|t| lp.v()[col(t)]).sum();
        if v_i - lp.p_i[i] > 1e-12 * v_i.max(1.0) {
            continue;
        }
        let top = nz
            .filter(|&t| lp.v()[col(t)] > 0.0)
            .map(|t| (lp.c * lp.x[t]).abs() / lp.v()[col(t)])
            .fold(0.0f64, f64::max);
        *cap_i = 1.0 + 2.0 * top;
        capped.push(i);
    }
    (capped, cap)
}
