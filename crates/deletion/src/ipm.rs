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
//! ([`DsxSystem::solve_refined`]) when the direct solve is not accurate enough.
//!
//! Predictor `σ = 0`; corrector `σ = (μ_aff/μ)⁶` while both residuals are below the gap,
//! Mehrotra's `(μ_aff/μ)³` otherwise ([`SIGMA_POWER`]: the cube alone is too cautious on this
//! degenerate LP), with Mehrotra's second-order term, then up to
//! two of Gondzio's multiple centrality correctors after a short step (kept only when they
//! lengthen it);
//! separate primal and dual step lengths `min(1, η α_max)`, `η = 0.99`. Starting point: `w = 0`,
//! `b = 0` and every other variable, slack and dual at a constant ([`START`]).
//!
//! Termination (`tol`): `‖r_p‖∞ / (1 + ‖h‖∞)`, `‖r_d‖∞ / (1 + ‖c‖∞)` and
//! `|cᵀu − d| / (1 + |cᵀu|)` below `tol`, with the dual objective
//! `d = hᵀy − C Σ_j (z_lj + z_uj)`. In `‖r_d‖∞` each `λ_i` component is divided by the size of
//! λ's column, `max(1, P, max_j v_j)` (`DsxIpm::lam_scale`): its terms `P_i y_a` and `v_j y_b`
//! are of the order of the number of features where every other column's are `O(1)`, so their
//! rounding alone kept it above 1e-8 at the optimum of near-square dense instances (dense
//! 400 × 300: 47 iterations to a gap of 3e-9, then the fallback engine, 92 iterations and 8.7 s
//! in all; now optimal after 47 iterations in about 1 s). This is the dual residual of the LP
//! with λ's column scaled to unit size; the iterates are unchanged. LP (4) is always feasible
//! and bounded (`ξ` large, objective `≥ 0`), so there is no infeasibility detection: a run ends
//! optimal, at the iteration or time limit, or with a numerical error.
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

use std::ops::ControlFlow;
use std::time::Instant;

use bulwark_linalg::{DsxScalings, DsxSettings, DsxSystem, DynamicRegularization, Par, RowsRef};
use bulwark_lp::{IterationInfo, Status};
use rayon::prelude::*;

use crate::error::Result;
use crate::layout::Lp4;

/// Step-length factor `η` (fraction of the distance to the boundary).
const ETA: f64 = 0.99;
/// Centring exponent: `σ = (μ_aff/μ)^SIGMA_POWER` while the primal and dual residuals are
/// both below the gap, Mehrotra's [`MEHROTRA_POWER`] otherwise. On LP (4) the affine step stays
/// short to the end (`μ_aff/μ ≈ 0.7–0.9`), so the cube keeps `σ ≈ 0.5` and `μ` falls by about a
/// fifth per iteration. What cuts the step (MNIST-like 2000 × 784, iterations 27–43): 0–10 of the
/// ≈ 600 000 pairs of the feature rows `b_ij` and the `α_ij` per iteration, a different few each
/// time (near-degenerate pairs changing sides as `μ` falls); the other families would allow
/// 0.6–0.9. Solving the Newton systems to 1e-15 gave the same steps.
///
/// Iterations of the `lp_bench` cases (MNIST-like 2000 × 784 and 10000 × 784, dense
/// 1000 × 100 and 3000 × 50, sparse 5000 × 500 at 10 %, 3000 × 300 at 50 %, 2000 × 1000 at
/// 5 %, dense 400 × 300) with one exponent throughout: 3: 53 64 28 25 46 49 34 95 (total 394);
/// 5: 48 52 27 24 44 46 37 89 (367); 6: 46 47 27 32 43 43 33 86 (357); 8: 44 44 25 33 42 38
/// 33 91 (350); from 9 on `μ` outruns the solves' accuracy on MNIST-like 10000 × 784 (its dual
/// residual grows at the optimum and the fit ends in the fallback, 138 iterations in all).
/// A 6 throughout also did worse on the `stress` sweep (321 fallbacks instead of 304, 6 fits
/// at tolerance 1e-6 off the closed form instead of 3) — on those small degenerate fits the
/// dual residual lags, and pushing `μ` down then costs the solves their accuracy. Hence the
/// guard: with 6 only while `max(r_p, r_d) ≤ gap`: 43 43 24 30 45 43 32 92 (total 352); with 6
/// only while `r_d ≤ tol`: 43 43 24 30 52 43 32 94 (361).
const SIGMA_POWER: i32 = 6;
/// Mehrotra's centring exponent, used while an infeasibility exceeds the gap.
const MEHROTRA_POWER: i32 = 3;
/// Gondzio correctors: trial step increase `δ`, target box `[β_min, β_max]·σμ`, and the least
/// gain in `α_P + α_D` for a corrector to be kept.
const GONDZIO_DELTA: f64 = 0.2;
const GONDZIO_BETA_MIN: f64 = 0.1;
const GONDZIO_BETA_MAX: f64 = 10.0;
const GONDZIO_GAIN: f64 = 0.02;
/// Most Gondzio correctors per iteration where they pay off (measured with the least-squares
/// start on 2000 × 784 at 19 %: 0 → 68 iterations, 1 → 62, 2 → 54, 4 → 54, 6 → 52; dense
/// 1000 × 100: 30, 28, 24, 25, 25).
const MAX_CORRECTORS: usize = 2;
/// Correctors are tried only when the corrected step is shorter than this (`min(α_P, α_D)`):
/// the iterations where a few badly centred pairs block the step. Measured on MNIST-like
/// 10000 × 784 at 19 % (two threads, constant start): no correctors 79 iterations in 19.0 s;
/// up to two after every step 61 in 18.5 s; up to two after steps below 0.2 / 0.35 / 0.5:
/// 56 / 61 / 61 iterations in – / 16.7 / 18.4 s (one after steps below 0.2: 72 in 18.5 s).
/// 2000 × 784: 59 iterations in 3.18 s without, 54 in 3.22 s with the 0.35 trigger. (These
/// figures predate [`SIGMA_POWER`] 6; with it, triggers 0.25 / 0.35 / 0.5 gave 378 / 357 / 355
/// iterations over the eight `lp_bench` cases listed there.)
const GONDZIO_TRIGGER: f64 = 0.35;
/// Whether Gondzio correctors pay off. Each costs one more solve plus one right-hand-side and
/// one recovery pass over the examples and, tried only after short steps
/// ([`GONDZIO_TRIGGER`]), saves 10–25 % of the iterations. Deterministic cost model (the same
/// input always takes the same path): Schur-complement flops at the measured rates of the
/// kernels (BLAS-3 ≈ 8, blocked sparse scatter ≈ 6 flops per scalar-pass flop) plus the dense
/// Cholesky, against ≈ 14 passes over the non-zeros per solve; they are used when that ratio
/// is at least 4. Measured with two threads, three solves each, without against with (0.35
/// trigger): dense 400 × 300 (ratio 5.5) 105 iterations in 7.35 s against 95 in 5.57 s;
/// sparse 3000 × 300 at 50 % (ratio 10.6) 58 in 3.17–3.30 s against 52 in 3.36–3.65 s;
/// below the threshold: sparse 5000 × 500 at 10 % (ratio 2.3) 46 in 1.36 s against 42 in
/// 1.44 s, dense 1000 × 100 (ratio 1.8) 28 in 0.208 s against 25 in 0.235 s, dense 3000 × 50
/// 25 in 0.315 s against 25 in 0.359 s. MNIST-like 10000 × 784: ratio 4.3 (see above).
fn correctors_pay_off(lp: &Lp4) -> bool {
    let (m, n1) = (lp.m() as f64, (lp.n() + 1) as f64);
    let sum_k2: f64 = (0..lp.m())
        .map(|i| {
            let k = lp.support_len(i) as f64;
            k * k
        })
        .sum();
    let gemm = lp.dense || 16.0 * sum_k2 >= m * n1 * n1;
    let factor = if gemm {
        2.0 * m * n1 * n1 / 8.0
    } else {
        2.0 * sum_k2 / 6.0
    } + n1 * n1 * n1 / 24.0;
    let solve = 14.0 * lp.nnz() as f64 + 2.0 * n1 * n1;
    factor >= 4.0 * solve
}

/// The starting value of every primal variable, row slack and dual except `w, b` (which
/// start at 0). Measured against Mehrotra's least-squares start with the usual shifts (solve
/// with `Θ = D = I`, then shift into the interior), iterations to 1e-8:
/// MNIST-like 10000 × 784 at 19 %: 79 → 72; 2000 × 784: 68 → 58; sparse 5000 × 500 at 10 %:
/// 54 → 46; sparse 3000 × 300 at 50 %: 68 → 58; dense 3000 × 50: 31 → 25; dense 1000 × 100:
/// 30 → 28; dense 400 × 300: 101 → 105. From the least-squares start the dual objective
/// overshot (10000 × 784: relative gap 0.51 → 2.9 → 22 in the first two iterations) and
/// iterations 3–7 took steps of 0.01–0.03. Constants 0.03, 0.3 and 1, and separate primal
/// and dual constants, were also tried: 0.1 had the fewest iterations over these cases.
const START: f64 = 0.1;

/// Solve tolerance at or above which a clean factorisation's solves are not checked against the
/// exact operator (the residuals are then still ≥ 1e-6 and are recomputed exactly every
/// iteration; saves one `O(nnz)` product and two vector passes per iteration, ≈ 9 % of the
/// instructions on dense 1000 × 100).
const LOOSE_SOLVE_TOL: f64 = 1e-8;

/// Relative primal residual (`‖r_p‖∞ / (1 + ‖h‖∞)`) at or below which the Newton steps take
/// `r_p` as zero and skip reading it (two of the ≈ 30 arrays a direction reads). Once a full
/// primal step has been taken the residual is rounding error (1e-15 on MNIST-like
/// 10000 × 784 from iteration 13 on); ignoring it changes each direction by that much.
const PRIMAL_ROUNDING: f64 = 1e-12;

/// Most PCG steps refining one normal-equation solve.
const MAX_PCG: usize = 4;

/// Options of one solve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IpmOptions {
    pub tolerance: f64,
    pub max_iter: u32,
    pub time_limit: f64,
}

/// Example blocks of the data-parallel passes. They are fixed by the data (balanced by
/// non-zeros), not by the thread count, and every partial sum is combined in block order, so
/// one thread and many give the same bits.
const PARTS: usize = 4;

/// Below this many LP variables the passes stay on the calling thread (a fork–join costs
/// more than it saves); the blocks and the order of every sum are the same either way.
const PAR_MIN_VARS: usize = 40_000;

/// Boundaries of the [`PARTS`] example blocks in each family of arrays (all relative: rows,
/// tail variables `(α, λ, ξ)` from index `n + 1`, support non-zeros, examples).
#[derive(Debug, Clone, Copy)]
struct Parts {
    ex: [usize; PARTS + 1],
    rows: [usize; PARTS + 1],
    tail: [usize; PARTS + 1],
    nz: [usize; PARTS + 1],
}

impl Parts {
    fn new(lp: &Lp4) -> Self {
        let m = lp.m();
        // weight of example i: its rows and tail variables, |S_i| + 2
        let total = lp.nnz() + 2 * m;
        let mut ex = [m; PARTS + 1];
        ex[0] = 0;
        let mut i = 0;
        for (k, e) in ex.iter_mut().enumerate().take(PARTS).skip(1) {
            let target = total * k / PARTS;
            while i < m && lp.indptr[i] + 2 * i < target {
                i += 1;
            }
            *e = i;
        }
        let t0 = lp.n() + 1;
        Self {
            ex,
            rows: ex.map(|i| lp.row_offset(i)),
            tail: ex.map(|i| lp.var_offset(i) - t0),
            nz: ex.map(|i| lp.indptr[i]),
        }
    }
}

impl Parts {
    /// Example `i`'s first row and first tail variable, relative to block `k`'s slices.
    #[inline]
    fn local(&self, lp: &Lp4, k: usize, i: usize) -> (usize, usize) {
        let t0 = lp.n() + 1;
        (
            lp.row_offset(i) - self.rows[k],
            lp.var_offset(i) - t0 - self.tail[k],
        )
    }
}

/// `v` cut at the block boundaries `b` (`b[0] = 0`, `b[PARTS] = v.len()`).
fn parts_mut<'a, T>(mut v: &'a mut [T], b: &[usize; PARTS + 1]) -> [&'a mut [T]; PARTS] {
    let mut out: [&'a mut [T]; PARTS] = Default::default();
    for (k, o) in out.iter_mut().enumerate() {
        let (a, rest) = std::mem::take(&mut v).split_at_mut(b[k + 1] - b[k]);
        *o = a;
        v = rest;
    }
    out
}

/// Shared-reference version of [`parts_mut`].
fn parts<'a, T>(mut v: &'a [T], b: &[usize; PARTS + 1]) -> [&'a [T]; PARTS] {
    let mut out: [&'a [T]; PARTS] = [&[]; PARTS];
    for (k, o) in out.iter_mut().enumerate() {
        let (a, rest) = v.split_at(b[k + 1] - b[k]);
        *o = a;
        v = rest;
    }
    out
}

/// `v` cut into [`PARTS`] consecutive pieces of length `len` (per-block scratch).
fn chunks<T>(v: &mut [T], len: usize) -> [&mut [T]; PARTS] {
    parts_mut(&mut v[..PARTS * len], &std::array::from_fn(|k| k * len))
}

/// Where the per-block jobs run.
#[derive(Debug)]
struct Exec {
    /// Run the blocks concurrently.
    par: bool,
    /// A dedicated pool (`threads` given and different from the current pool's size).
    pool: Option<rayon::ThreadPool>,
}

impl Exec {
    /// Runs `f` on every block's job: concurrently when `par`, else in block order.
    fn run<J: Send>(&self, jobs: [J; PARTS], f: impl Fn(J) + Sync + Send) {
        if !self.par {
            jobs.into_iter().for_each(f);
        } else if let Some(pool) = &self.pool {
            pool.install(|| jobs.into_par_iter().for_each(f));
        } else {
            jobs.into_par_iter().for_each(f);
        }
    }

    /// Runs `f` in the dedicated pool when there is one (so `bulwark-linalg`'s two-thread
    /// factorisation and solves, which use rayon, get the requested workers), else here.
    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

/// Builds `[J; PARTS]` from per-block pieces (`next` is called `PARTS` times, in order).
fn jobs<J>(next: impl FnMut(usize) -> J) -> [J; PARTS] {
    std::array::from_fn(next)
}

/// The outcome of one solve of LP (4).
#[derive(Debug, Clone)]
pub struct IpmOutcome {
    /// Final status.
    pub status: Status,
    /// `(w, b)`: the first `n + 1` variables.
    pub wb: Vec<f64>,
    /// LP (4)'s objective `(1/m) Σ ξ_i` at the final iterate.
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
    /// Why the run stopped when it is not optimal.
    pub reason: Option<String>,
}

/// Per-iteration progress callback (`Break` stops the solve with status `time_limit`).
pub type Progress<'a> = &'a mut dyn FnMut(&IterationInfo) -> ControlFlow<()>;

/// A direction: primal `(Δu, Δs)` and dual `(Δy, Δz, Δz_l, Δz_u)`.
struct Dir {
    u: Vec<f64>,
    s: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    zl: Vec<f64>,
    zu: Vec<f64>,
}

impl Dir {
    fn new(len: usize, rows: usize, n: usize) -> Self {
        Self {
            u: vec![0.0; len],
            s: vec![0.0; rows],
            y: vec![0.0; rows],
            z: vec![0.0; len],
            zl: vec![0.0; n],
            zu: vec![0.0; n],
        }
    }
}

/// Scalings in the layout [`DsxScalings`] expects.
struct Scal {
    theta: Vec<f64>,
    phi: Vec<f64>,
    wd: Vec<f64>,
    sigma: Vec<f64>,
    rho: Vec<f64>,
    kappa: Vec<f64>,
}

impl Scal {
    fn view(&self) -> DsxScalings<'_> {
        DsxScalings {
            theta: &self.theta,
            phi: &self.phi,
            w_diag: &self.wd,
            b_diag: 0.0,
            sigma: &self.sigma,
            rho: &self.rho,
            kappa: &self.kappa,
        }
    }
}

/// `f(out_k, a_k, b_k, c_k, d_k)` for every `k`, block by block.
#[allow(clippy::many_single_char_names)]
fn map5(
    exec: &Exec,
    bounds: &[usize; PARTS + 1],
    out: &mut [f64],
    [a, b, c, d]: [&[f64]; 4],
    f: impl Fn(&mut f64, f64, f64, f64, f64) + Sync + Send,
) {
    let (a, b, c, d) = (
        parts(a, bounds),
        parts(b, bounds),
        parts(c, bounds),
        parts(d, bounds),
    );
    let mut out = parts_mut(out, bounds);
    let work = jobs(|k| (std::mem::take(&mut out[k]), a[k], b[k], c[k], d[k]));
    exec.run(work, |(o, a, b, c, d)| {
        for ((((o, &a), &b), &c), &d) in o.iter_mut().zip(a).zip(b).zip(c).zip(d) {
            f(o, a, b, c, d);
        }
    });
}

/// `x += α dx`, `y += β dy`, block by block.
fn step2(
    exec: &Exec,
    bounds: &[usize; PARTS + 1],
    (x, dx, alpha): (&mut [f64], &[f64], f64),
    (y, dy, beta): (&mut [f64], &[f64], f64),
) {
    let (dx, dy) = (parts(dx, bounds), parts(dy, bounds));
    let (mut x, mut y) = (parts_mut(x, bounds), parts_mut(y, bounds));
    let work = jobs(|k| {
        (
            std::mem::take(&mut x[k]),
            dx[k],
            std::mem::take(&mut y[k]),
            dy[k],
        )
    });
    exec.run(work, |(x, dx, y, dy)| {
        for (x, dx) in x.iter_mut().zip(dx) {
            *x += alpha * dx;
        }
        for (y, dy) in y.iter_mut().zip(dy) {
            *y += beta * dy;
        }
    });
}

/// The solver state for one LP (4).
pub(crate) struct DsxIpm<'a> {
    lp: &'a Lp4,
    sys: DsxSystem,
    m: usize,
    n: usize,
    len: usize,
    rows: usize,
    /// Radius of the box in the working variables (`1`: see [`DsxIpm::new`]).
    c_box: f64,
    /// `C y_i x_ij` over the supports (the scaled data).
    yx: Vec<f64>,
    /// Row right-hand sides `h`.
    h: Vec<f64>,
    /// `‖h‖∞`.
    h_norm: f64,
    /// `max(1, P, max_j v_j)`, the size of λ's column in `G` (`P_i ≤ P` in `a_i`, `v_j` in
    /// `b_ij`): λ's components of the dual residual are measured relative to it (module docs).
    lam_scale: f64,
    // iterate
    u: Vec<f64>,
    s: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    zl: Vec<f64>,
    zu: Vec<f64>,
    // residuals
    rp: Vec<f64>,
    rd: Vec<f64>,
    // complementarity right-hand sides
    rs: Vec<f64>,
    rt: Vec<f64>,
    rl: Vec<f64>,
    ru: Vec<f64>,
    // directions: affine (predictor) and combined
    aff: Dir,
    dir: Dir,
    // reciprocals of the current iterate (set by `factor`): 1/s, and 1/u on the tail (the dual
    // ratio tests compare against y and z directly: `mx_ratio`)
    inv_s: Vec<f64>,
    inv_u: Vec<f64>,
    // scratch
    /// Per-block scratch of length `n` (dense rows), `PARTS × n`.
    qbufs: Vec<f64>,
    /// Per-block accumulators of the `w` part of the right-hand side, `PARTS × n`.
    wacc: Vec<f64>,
    /// The example blocks of the data-parallel passes.
    parts: Parts,
    /// Where the blocks run.
    exec: Exec,
    rhs: Vec<f64>,
    sc: Scal,
    factor_seconds: f64,
    solve_seconds: f64,
    /// Most Gondzio correctors per iteration.
    max_correctors: usize,
    /// The first solve with the current factorisation was accurate without refinement.
    checked_solve: bool,
    /// The current factorisation regularised or clamped no pivot.
    clean_factor: bool,
    /// Correctors kept (total).
    correctors: u32,
    /// The primal residual is at rounding level ([`PRIMAL_ROUNDING`]): the Newton steps take
    /// it as zero and do not read it.
    rp_zero: bool,
}

/// Lanes of the hand-vectorised reductions (the compiler does not reorder floating-point sums).
const LANES: usize = 8;

/// `max(0, max_k (−d_k · inv_k))`: with `inv = 1/v`, `v > 0`, the largest step keeping
/// `v + α d ≥ 0` is `1 / max`. Vectorised (NaN entries are ignored; callers check finiteness).
#[inline]
fn max_neg_ratio(d: &[f64], inv: &[f64]) -> f64 {
    max_ratio_by(d, inv, |a, b| -a * b)
}

/// `max(0, max_k (−d_k / v_k))` for `v > 0` (the dual ratio test without stored reciprocals),
/// vectorised. NaN entries are ignored, as in [`max_neg_ratio`].
#[inline]
fn max_neg_ratio_div(d: &[f64], v: &[f64]) -> f64 {
    max_ratio_by(d, v, |a, b| -a / b)
}

/// `max(0, max_k ratio(d_k, x_k))` in [`LANES`] independent lanes (NaN ratios are ignored).
#[inline(always)]
fn max_ratio_by(d: &[f64], x: &[f64], ratio: impl Fn(f64, f64) -> f64) -> f64 {
    let k = d.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    for (a, b) in d[..k].chunks_exact(LANES).zip(x[..k].chunks_exact(LANES)) {
        for l in 0..LANES {
            let r = ratio(a[l], b[l]);
            acc[l] = if r > acc[l] { r } else { acc[l] };
        }
    }
    let mut m = acc.iter().fold(0.0f64, |x, &y| if y > x { y } else { x });
    for (&a, &b) in d[k..].iter().zip(&x[k..]) {
        let r = ratio(a, b);
        if r > m {
            m = r;
        }
    }
    m
}

/// `max(m, −d/v)` for `m ≥ 0`, `v > 0`: compares `−d` with `m·v` and divides only when the
/// maximum grows (rarely, after the first entries), so the dual ratio test needs no stored
/// reciprocals of `y` and `z`. A NaN `d` is ignored, as in [`max_neg_ratio`].
#[inline(always)]
fn mx_ratio(m: f64, d: f64, v: f64) -> f64 {
    if -d > m * v { -d / v } else { m }
}

/// `Σ_k v_k`, vectorised.
#[inline]
fn sum(v: &[f64]) -> f64 {
    let k = v.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    for c in v[..k].chunks_exact(LANES) {
        for l in 0..LANES {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f64>() + v[k..].iter().sum::<f64>()
}

/// `Σ_k v_k w_k`, vectorised.
#[inline]
fn dot(v: &[f64], w: &[f64]) -> f64 {
    let k = v.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    for (v, w) in v[..k].chunks_exact(LANES).zip(w[..k].chunks_exact(LANES)) {
        for l in 0..LANES {
            acc[l] += v[l] * w[l];
        }
    }
    let mut sum: f64 = acc.iter().sum();
    for t in k..v.len() {
        sum += v[t] * w[t];
    }
    sum
}

/// `‖v‖∞`, NaN when any entry is not finite. Vectorised.
#[inline]
fn inf_norm(v: &[f64]) -> f64 {
    let k = v.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    // x·0 is NaN exactly for non-finite x: a cheap, vectorisable finiteness check
    let mut bad = [0.0f64; LANES];
    for c in v[..k].chunks_exact(LANES) {
        for l in 0..LANES {
            acc[l] = acc[l].max(c[l].abs());
            bad[l] += c[l] * 0.0;
        }
    }
    let mut m = acc.iter().fold(0.0f64, |a, &b| a.max(b));
    let mut nan: f64 = bad.iter().sum();
    for &x in &v[k..] {
        m = m.max(x.abs());
        nan += x * 0.0;
    }
    if nan.is_nan() { f64::NAN } else { m }
}

impl<'a> DsxIpm<'a> {
    /// Sizes every buffer for `lp`. Memory `O(nnz + m + n²)`. `threads`: workers of the
    /// per-example passes and of the factorisation (`None`: rayon's current pool); the result
    /// does not depend on it.
    pub(crate) fn new(lp: &'a Lp4, threads: Option<usize>) -> Result<Self> {
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
            par: threads > 1 && lp.num_vars() >= PAR_MIN_VARS,
            pool,
        };
        let settings = DsxSettings {
            // our passes split the work the same way for any thread count (same bits); faer's
            // parallel kernels would not, so they stay sequential
            par: Par::Seq,
            threads: if exec.par { threads } else { 1 },
            static_regularization: 1e-12,
            dynamic_regularization: Some(DynamicRegularization {
                epsilon: 1e-14,
                delta: 1e-10,
            }),
            ..DsxSettings::default()
        };
        // Work with w' = w / C in the unit box: the data become C·x (the LP is unchanged), which
        // keeps the box's complementarity pairs on the scale of the others for any C.
        let scaled: Vec<f64> = lp.x.iter().map(|x| lp.c * x).collect();
        let yx: Vec<f64> = lp.yx.iter().map(|x| lp.c * x).collect();
        // dense data: the dense kernels of `DsxSystem` (no column indices, contiguous values)
        let rows = if lp.dense {
            RowsRef::Dense {
                data: &scaled,
                m: lp.m(),
                n: lp.n(),
            }
        } else {
            RowsRef::Csr {
                indptr: &lp.indptr,
                indices: &lp.indices,
                values: &scaled,
                n: lp.n(),
            }
        };
        let sys = DsxSystem::try_new_with(rows, &lp.y, &lp.v, lp.p, settings)?;
        drop(scaled);
        let (m, n, nnz) = (lp.m(), lp.n(), lp.nnz());
        let len = sys.len();
        let nrows = sys.n_rows();
        debug_assert_eq!(len, lp.num_vars());
        debug_assert_eq!(nrows, lp.num_rows());
        let mut h = vec![0.0; nrows];
        for i in 0..m {
            let r0 = lp.row_offset(i);
            // DSX eq. (4): a_i ≥ V0_i / P, b_ij ≥ v_j / P
            h[r0] = lp.v0[i] / lp.p;
            for (t, nz) in (lp.indptr[i]..lp.indptr[i + 1]).enumerate() {
                h[r0 + 1 + t] = lp.v[lp.indices[nz]] / lp.p;
            }
        }
        let z = |k: usize| vec![0.0; k];
        let h_norm = inf_norm(&h);
        Ok(Self {
            lp,
            sys,
            m,
            n,
            len,
            rows: nrows,
            c_box: 1.0,
            yx,
            h,
            h_norm,
            lam_scale: lp.v.iter().fold(lp.p.max(1.0), |a, &v| a.max(v)),
            u: z(len),
            s: z(nrows),
            y: z(nrows),
            z: z(len),
            zl: z(n),
            zu: z(n),
            rp: z(nrows),
            rd: z(len),
            rs: z(nrows),
            rt: z(len),
            rl: z(n),
            ru: z(n),
            aff: Dir::new(len, nrows, n),
            dir: Dir::new(len, nrows, n),
            inv_s: z(nrows),
            inv_u: z(len),
            rhs: z(len),
            qbufs: z(PARTS * n),
            wacc: z(PARTS * n),
            parts: Parts::new(lp),
            exec,
            sc: Scal {
                theta: z(m),
                phi: z(nnz),
                wd: z(n),
                sigma: z(nnz),
                rho: z(m),
                kappa: z(m),
            },
            factor_seconds: 0.0,
            solve_seconds: 0.0,
            max_correctors: if correctors_pay_off(lp) {
                MAX_CORRECTORS
            } else {
                0
            },
            checked_solve: false,
            clean_factor: false,
            correctors: 0,
            rp_zero: false,
        })
    }

    /// First index of the tail `(α, λ, ξ)` variables.
    fn t0(&self) -> usize {
        self.n + 1
    }

    /// Gathers the scalings into the layout of [`DsxScalings`] and factors `H`.
    fn factor(&mut self) -> Result<()> {
        let t = Instant::now();
        let lp = self.lp;
        let (n, c) = (self.n, self.c_box);
        for j in 0..n {
            let w = self.u[j];
            self.sc.wd[j] = self.zl[j] / (w + c) + self.zu[j] / (c - w);
        }
        let t0 = self.t0();
        let p = self.parts;
        let (s, y) = (parts(&self.s, &p.rows), parts(&self.y, &p.rows));
        let (u, z) = (parts(&self.u[t0..], &p.tail), parts(&self.z[t0..], &p.tail));
        let mut inv_s = parts_mut(&mut self.inv_s, &p.rows);
        let mut inv_u = parts_mut(&mut self.inv_u[t0..], &p.tail);
        let mut theta = parts_mut(&mut self.sc.theta, &p.ex);
        let mut rho = parts_mut(&mut self.sc.rho, &p.ex);
        let mut kappa = parts_mut(&mut self.sc.kappa, &p.ex);
        let mut phi = parts_mut(&mut self.sc.phi, &p.nz);
        let mut sigma = parts_mut(&mut self.sc.sigma, &p.nz);
        let work = jobs(|k| {
            (
                k,
                (s[k], y[k], u[k], z[k]),
                (std::mem::take(&mut inv_s[k]), std::mem::take(&mut inv_u[k])),
                (
                    std::mem::take(&mut theta[k]),
                    std::mem::take(&mut rho[k]),
                    std::mem::take(&mut kappa[k]),
                    std::mem::take(&mut phi[k]),
                    std::mem::take(&mut sigma[k]),
                ),
            )
        });
        self.exec.run(work, |(k, (s, y, u, z), inv, sc)| {
            let (inv_s, inv_u) = inv;
            let (theta, rho, kappa, phi, sigma) = sc;
            for (o, v) in inv_s.iter_mut().zip(s) {
                *o = 1.0 / v;
            }
            for (o, v) in inv_u.iter_mut().zip(u) {
                *o = 1.0 / v;
            }
            let (e0, nz_base) = (p.ex[k], p.nz[k]);
            for i in e0..p.ex[k + 1] {
                let (r0, a0) = p.local(lp, k, i);
                let kk = lp.support_len(i);
                let nz0 = lp.indptr[i] - nz_base;
                // Θ = y/s on the rows, D = z/u on the tail (module docs)
                theta[i - e0] = y[r0] * inv_s[r0];
                let (yb, is) = (&y[r0 + 1..r0 + 1 + kk], &inv_s[r0 + 1..r0 + 1 + kk]);
                for ((o, y), is) in phi[nz0..nz0 + kk].iter_mut().zip(yb).zip(is) {
                    *o = y * is;
                }
                let (zb, iu) = (&z[a0..a0 + kk], &inv_u[a0..a0 + kk]);
                for ((o, z), iu) in sigma[nz0..nz0 + kk].iter_mut().zip(zb).zip(iu) {
                    *o = z * iu;
                }
                rho[i - e0] = z[a0 + kk] * inv_u[a0 + kk];
                kappa[i - e0] = z[a0 + kk + 1] * inv_u[a0 + kk + 1];
            }
        });
        let view = self.sc.view();
        let sys = &mut self.sys;
        let info = self.exec.install(|| sys.factor(&view))?;
        // A factorisation without regularised or clamped pivots is trusted for the early,
        // loose solves; otherwise (and once the residuals are small) the first solve is checked.
        self.clean_factor = info.regularized_pivots == 0 && info.clamped_diagonals == 0;
        self.checked_solve = false;
        self.factor_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Solves `H out = self.rhs` to the relative accuracy `tol` (2-norm). Early on (loose `tol`,
    /// clean factorisation) it is a plain direct solve. Otherwise the first solve after a
    /// factorisation measures the residual
    /// against the exact operator and refines by PCG when it exceeds `tol`; later solves with
    /// the same factorisation skip the check (one `O(nnz)` product each) unless the first one
    /// needed refinement.
    fn solve_h(&mut self, out: &mut Vec<f64>, tol: f64) -> Result<()> {
        let t = Instant::now();
        if self.checked_solve || (self.clean_factor && tol >= LOOSE_SOLVE_TOL) {
            // the right-hand side becomes the solution in place (`newton_rhs` rewrites every
            // entry of `rhs` before the next solve)
            std::mem::swap(out, &mut self.rhs);
            let sys = &mut self.sys;
            self.exec.install(|| sys.solve_in_place(out))?;
        } else {
            let (view, rhs, sys) = (self.sc.view(), &self.rhs, &mut self.sys);
            let info = self
                .exec
                .install(|| sys.solve_refined(&view, rhs, out, tol, MAX_PCG))?;
            // later solves with this factorisation skip the check only when the direct solve was
            // accurate. (Skipping it also after a stagnated PCG saved its products at MNIST
            // scale but let the dual residual of sparse 3000 × 300 at 50 % grow from 1e-9 to
            // 4e-6 at the optimum: 117 iterations and a fallback instead of 48.)
            self.checked_solve = info.iterations == 0 && info.relative_residual <= 0.01 * tol;
        }
        self.solve_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Newton direction for the current residuals and complementarity right-hand sides
    /// `rs, rt, rl, ru` (see the module docs), written into `d`.
    fn direction<const AFF: bool>(
        &mut self,
        which_aff: bool,
        tol: f64,
    ) -> Result<(f64, f64, [f64; 2])> {
        if self.rp_zero {
            self.newton_rhs::<AFF, true>();
        } else {
            self.newton_rhs::<AFF, false>();
        }
        let mut d = if which_aff {
            std::mem::replace(&mut self.aff, Dir::new(0, 0, 0))
        } else {
            std::mem::replace(&mut self.dir, Dir::new(0, 0, 0))
        };
        let r = self.solve_h(&mut d.u, tol).map(|()| {
            if self.rp_zero {
                self.recover::<AFF, true>(&mut d)
            } else {
                self.recover::<AFF, false>(&mut d)
            }
        });
        if which_aff {
            self.aff = d;
        } else {
            self.dir = d;
        }
        r
    }

    /// `rhs = Gᵀq + e − r_d` with `q = (r_s − y∘r_p)/s` (module docs), fused into one pass over
    /// the examples (`G`'s structure as in [`DsxSystem::rows_apply_transpose`], DSX eq. (4)),
    /// block by block; the `(w, b)` part is summed per block, then over the blocks in order.
    fn newton_rhs<const AFF: bool, const RP0: bool>(&mut self) {
        let lp = self.lp;
        let (n, c, t0) = (self.n, self.c_box, self.t0());
        let p = self.parts;
        let (rs, y) = (parts(&self.rs, &p.rows), parts(&self.y, &p.rows));
        let (rp, is) = (parts(&self.rp, &p.rows), parts(&self.inv_s, &p.rows));
        let (rt, iu) = (
            parts(&self.rt[t0..], &p.tail),
            parts(&self.inv_u[t0..], &p.tail),
        );
        let zt = parts(&self.z[t0..], &p.tail);
        let rd = parts(&self.rd[t0..], &p.tail);
        let (rhs_w, rhs_t) = self.rhs.split_at_mut(n + 1);
        let mut out = parts_mut(rhs_t, &p.tail);
        let mut wacc = chunks(&mut self.wacc, n);
        let mut qbuf = chunks(&mut self.qbufs, n);
        let mut rb = [0.0f64; PARTS];
        let mut rb_slots = chunks(&mut rb, 1);
        let yx_all = &self.yx;
        let work = jobs(|k| {
            (
                k,
                (rs[k], y[k], rp[k], is[k]),
                (rt[k], iu[k], rd[k], zt[k]),
                std::mem::take(&mut out[k]),
                std::mem::take(&mut wacc[k]),
                std::mem::take(&mut qbuf[k]),
                std::mem::take(&mut rb_slots[k]),
            )
        });
        self.exec.run(work, |(k, rows, tail, out, acc, qbuf, rb)| {
            let (rs, y, rp, is) = rows;
            let (rt, iu, rd, zt) = tail;
            let e0 = p.ex[k];
            acc.fill(0.0);
            let mut rbk = 0.0;
            for i in e0..p.ex[k + 1] {
                let (r0, a0) = p.local(lp, k, i);
                let kk = lp.support_len(i);
                let nz = lp.indptr[i]..lp.indptr[i + 1];
                let (cols, yx) = (&lp.indices[nz.clone()], &yx_all[nz]);
                let rr = r0..r0 + kk + 1;
                let vr = a0..a0 + kk + 2;
                let (rs, y, rp, is) = (&rs[rr.clone()], &y[rr.clone()], &rp[rr.clone()], &is[rr]);
                let (rt, iu, rd) = (&rt[vr.clone()], &iu[vr.clone()], &rd[vr.clone()]);
                let zt = &zt[vr.clone()];
                let out = &mut out[vr];
                // q = (r_s − y∘r_p)/s and r_t/u; for the predictor (`AFF`: r_s = −s∘y,
                // r_t = −u∘z) in closed form, without the stored right-hand sides
                // (`RP0`: r_p is at rounding level and taken as zero, without reading it)
                let qrow = |t: usize| match (AFF, RP0) {
                    (true, true) => -y[t],
                    (true, false) => -y[t] * (1.0 + rp[t] * is[t]),
                    (false, true) => rs[t] * is[t],
                    (false, false) => (rs[t] - y[t] * rp[t]) * is[t],
                };
                let rtu = |t: usize| if AFF { -zt[t] } else { rt[t] * iu[t] };
                let qa = qrow(0);
                rbk += lp.y[i] * qa;
                let mut lam = lp.p_i[i] * qa;
                if lp.dense {
                    // every feature in the support (j = t): data-parallel loops, then the
                    // reduction
                    let q = &mut qbuf[..kk];
                    for (t, qb) in q.iter_mut().enumerate() {
                        *qb = qrow(t + 1);
                    }
                    for ((w, &a), &qb) in acc[..kk].iter_mut().zip(yx).zip(q.iter()) {
                        *w += a * qb;
                    }
                    lam -= dot(&lp.v[..kk], q);
                    for (t, o) in out[..kk].iter_mut().enumerate() {
                        *o = (q[t] - qa) + rtu(t) - rd[t];
                    }
                } else {
                    for t in 0..kk {
                        let j = cols[t];
                        let qb = qrow(t + 1);
                        acc[j] += yx[t] * qb;
                        lam -= lp.v[j] * qb;
                        out[t] = (qb - qa) + rtu(t) - rd[t];
                    }
                }
                out[kk] = lam + rtu(kk) - rd[kk];
                out[kk + 1] = qa + rtu(kk + 1) - rd[kk + 1];
            }
            rb[0] = rbk;
        });
        rhs_w.fill(0.0);
        for acc in self.wacc.chunks_exact(n) {
            for (o, a) in rhs_w[..n].iter_mut().zip(acc) {
                *o += a;
            }
        }
        for j in 0..n {
            let w = self.u[j];
            rhs_w[j] += self.rl[j] / (w + c) - self.ru[j] / (c - w) - self.rd[j];
        }
        rhs_w[n] = rb.iter().sum::<f64>() - self.rd[n];
    }

    /// Recovers `Δs = GΔu + r_p`, `Δy = (r_s − y∘Δs)/s`, the bound-dual steps, and the largest
    /// primal and dual step lengths (before `η`), in one pass over the examples (block by
    /// block; the step lengths are maxima, exact in any order).
    fn recover<const AFF: bool, const RP0: bool>(&self, d: &mut Dir) -> (f64, f64, [f64; 2]) {
        let lp = self.lp;
        let (n, c, t0) = (self.n, self.c_box, self.t0());
        let p = self.parts;
        let (rs, y) = (parts(&self.rs, &p.rows), parts(&self.y, &p.rows));
        let (rp, is) = (parts(&self.rp, &p.rows), parts(&self.inv_s, &p.rows));
        let (rt, z) = (
            parts(&self.rt[t0..], &p.tail),
            parts(&self.z[t0..], &p.tail),
        );
        let iu = parts(&self.inv_u[t0..], &p.tail);
        let Dir {
            u: du,
            s: ds,
            y: dy,
            z: dz,
            zl: dzl,
            zu: dzu,
        } = d;
        let db = du[n];
        let (du_w, du_t) = du.split_at(n + 1);
        let du_t = parts(du_t, &p.tail);
        let mut ds = parts_mut(ds, &p.rows);
        let mut dy = parts_mut(dy, &p.rows);
        let mut dz = parts_mut(&mut dz[t0..], &p.tail);
        // largest −Δv/v over primal (s, u_t) and dual (y, z) components: the step is 1/max
        // per block: [primal max, dual max, Σ (y∘Δs + z∘Δu), Σ (Δs∘Δy + Δu∘Δz)] (the sums only
        // for the predictor, `AFF`)
        let mut maxima = [[0.0f64; 4]; PARTS];
        let mut slots = chunks(&mut maxima, 1);
        #[inline(always)]
        fn mx(a: f64, b: f64) -> f64 {
            if b > a { b } else { a }
        }
        let yx_all = &self.yx;
        let work = jobs(|k| {
            (
                k,
                (rs[k], y[k], rp[k], is[k]),
                (rt[k], z[k], iu[k], du_t[k]),
                (
                    std::mem::take(&mut ds[k]),
                    std::mem::take(&mut dy[k]),
                    std::mem::take(&mut dz[k]),
                ),
                std::mem::take(&mut slots[k]),
            )
        });
        self.exec.run(work, |(k, rows, tail, outs, slot)| {
            let (rs, y, rp, is) = rows;
            let (rt, z, iu, du) = tail;
            let (ds, dy, dz) = outs;
            let e0 = p.ex[k];
            let (mut pm, mut dm) = (0.0f64, 0.0f64);
            let (mut s1, mut s2) = (0.0f64, 0.0f64);
            for i in e0..p.ex[k + 1] {
                let (r0, a0) = p.local(lp, k, i);
                let kk = lp.support_len(i);
                let nz = lp.indptr[i]..lp.indptr[i + 1];
                let (cols, yx) = (&lp.indices[nz.clone()], &yx_all[nz]);
                // Δy = (r_s − y∘Δs)/s, Δz = (r_t − z∘Δu)/u; for the predictor (`AFF`) with
                // r_s = −s∘y, r_t = −u∘z in closed form
                let dyv = |t: usize, sb: f64| {
                    if AFF {
                        -y[t] * (1.0 + sb * is[t])
                    } else {
                        (rs[t] - y[t] * sb) * is[t]
                    }
                };
                let dzv = |t: usize, da: f64| {
                    if AFF {
                        -z[t] * (1.0 + da * iu[t])
                    } else {
                        (rt[t] - z[t] * da) * iu[t]
                    }
                };
                // this example's rows (a_i, then b_ij) and tail variables (α_i, λ_i, ξ_i)
                let rr = r0..r0 + kk + 1;
                let vr = a0..a0 + kk + 2;
                let (y, rp, is) = (&y[rr.clone()], &rp[rr.clone()], &is[rr.clone()]);
                let (ds, dy) = (&mut ds[rr.clone()], &mut dy[rr]);
                let (z, iu) = (&z[vr.clone()], &iu[vr.clone()]);
                let du = &du[vr.clone()];
                let dz = &mut dz[vr];
                let (dl, dx) = (du[kk], du[kk + 1]);
                let mut act = lp.p_i[i] * dl + lp.y[i] * db + dx;
                if lp.dense {
                    // every feature in the support (j = t): data-parallel loops, then reductions
                    let (ds_b, dy_b) = (&mut ds[1..], &mut dy[1..]);
                    for (t, (sb, yb)) in ds_b.iter_mut().zip(dy_b.iter_mut()).enumerate() {
                        let rpt = if RP0 { 0.0 } else { rp[t + 1] };
                        let s_new = yx[t] * du_w[t] - lp.v[t] * dl + du[t] + rpt;
                        *sb = s_new;
                        *yb = dyv(r0 + t + 1, s_new);
                    }
                    for (t, (dzb, &da)) in dz[..kk].iter_mut().zip(&du[..kk]).enumerate() {
                        *dzb = dzv(a0 + t, da);
                    }
                    pm = mx(pm, max_neg_ratio(&ds[1..], &is[1..]));
                    dm = mx(dm, max_neg_ratio_div(&dy[1..], &y[1..]));
                    dm = mx(dm, max_neg_ratio_div(&dz[..kk], &z[..kk]));
                } else {
                    let mut pa = 0.0f64;
                    for t in 0..kk {
                        let j = cols[t];
                        let da = du[t];
                        let rpt = if RP0 { 0.0 } else { rp[t + 1] };
                        let sb = yx[t] * du_w[j] - lp.v[j] * dl + da + rpt;
                        let yb = dyv(r0 + t + 1, sb);
                        let zb = dzv(a0 + t, da);
                        ds[t + 1] = sb;
                        dy[t + 1] = yb;
                        dz[t] = zb;
                        pa = mx(pa, -sb * is[t + 1]);
                        dm = mx_ratio(mx_ratio(dm, yb, y[t + 1]), zb, z[t]);
                    }
                    pm = mx(pm, pa);
                }
                // the sums and the α maximum in vectorised passes over the example's entries, hot
                // in L1 (single accumulators in the loops above are latency-bound chains)
                act -= sum(&du[..kk]);
                pm = mx(pm, max_neg_ratio(&du[..kk], &iu[..kk]));
                if AFF {
                    s1 += dot(&y[1..], &ds[1..]) + dot(&z[..kk], &du[..kk]);
                    s2 += dot(&ds[1..], &dy[1..]) + dot(&du[..kk], &dz[..kk]);
                }
                let sa = act + if RP0 { 0.0 } else { rp[0] };
                let ya = dyv(r0, sa);
                ds[0] = sa;
                dy[0] = ya;
                let zl = dzv(a0 + kk, dl);
                let zx = dzv(a0 + kk + 1, dx);
                if AFF {
                    s1 += y[0] * sa + z[kk] * dl + z[kk + 1] * dx;
                    s2 += sa * ya + dl * zl + dx * zx;
                }
                dz[kk] = zl;
                dz[kk + 1] = zx;
                pm = mx(mx(mx(pm, -sa * is[0]), -dl * iu[kk]), -dx * iu[kk + 1]);
                dm = mx_ratio(mx_ratio(mx_ratio(dm, ya, y[0]), zl, z[kk]), zx, z[kk + 1]);
            }
            slot[0] = [pm, dm, s1, s2];
        });
        let (mut pm, mut dm) = (0.0f64, 0.0f64);
        let mut sums = [0.0f64; 2];
        for [a, b, c1, c2] in maxima {
            pm = mx(pm, a);
            dm = mx(dm, b);
            sums[0] += c1;
            sums[1] += c2;
        }
        let du = du_w;
        if pm.is_nan() || dm.is_nan() {
            return (f64::NAN, f64::NAN, sums);
        }
        let mut ap = 1.0 / pm;
        let mut ad = 1.0 / dm;
        for j in 0..n {
            let (w, dw) = (self.u[j], du[j]);
            dzl[j] = (self.rl[j] - self.zl[j] * dw) / (w + c);
            dzu[j] = (self.ru[j] + self.zu[j] * dw) / (c - w);
            if dw < 0.0 {
                ap = ap.min(-(w + c) / dw);
            } else if dw > 0.0 {
                ap = ap.min((c - w) / dw);
            }
            if dzl[j] < 0.0 {
                ad = ad.min(-self.zl[j] / dzl[j]);
            }
            if dzu[j] < 0.0 {
                ad = ad.min(-self.zu[j] / dzu[j]);
            }
        }
        (ap, ad, sums)
    }

    /// Adds Gondzio's centrality correction to the complementarity right-hand sides: at the
    /// trial step `α̃ = min(1, α + δ)` along the current direction, products outside
    /// `[β_min σμ, β_max σμ]` are pulled back into it (Gondzio 1996; Colombo & Gondzio 2008).
    fn centrality_rhs(&mut self, ap: f64, ad: f64, target: f64) {
        let t0 = self.t0();
        let (n, c) = (self.n, self.c_box);
        let tp = (ap + GONDZIO_DELTA).min(1.0);
        let td = (ad + GONDZIO_DELTA).min(1.0);
        let (lo, hi) = (GONDZIO_BETA_MIN * target, GONDZIO_BETA_MAX * target);
        // clamp into [lo, hi], then cap the decrease at hi (branch-free `if`s, no NaN checks)
        let corr = |v: f64| {
            let t = if v < lo {
                lo
            } else if v > hi {
                hi
            } else {
                v
            };
            let d = t - v;
            if d < -hi { -hi } else { d }
        };
        let d = &self.dir;
        let p = &self.parts;
        let f = |r: &mut f64, x: f64, dx: f64, z: f64, dz: f64| {
            *r += corr((x + tp * dx) * (z + td * dz))
        };
        map5(
            &self.exec,
            &p.rows,
            &mut self.rs,
            [&self.s, &d.s, &self.y, &d.y],
            f,
        );
        let tail = [&self.u[t0..], &d.u[t0..], &self.z[t0..], &d.z[t0..]];
        map5(&self.exec, &p.tail, &mut self.rt[t0..], tail, f);
        for j in 0..n {
            let w = self.u[j] + tp * d.u[j];
            self.rl[j] += corr((w + c) * (self.zl[j] + td * d.zl[j]));
            self.ru[j] += corr((c - w) * (self.zu[j] + td * d.zu[j]));
        }
    }

    /// Complementarity `Σ (w + C)∘z_l + (C − w)∘z_u` of the box pairs after steps `(ap, ad)`
    /// along `d` (`d = None`: at the current iterate). The rows and the tail are summed by
    /// [`DsxIpm::residuals`] and [`DsxIpm::recover`] in their passes.
    fn box_complementarity(&self, d: Option<(&Dir, f64, f64)>) -> f64 {
        let c = self.c_box;
        let mut sum = 0.0;
        for j in 0..self.n {
            let (w, zl, zu) = match d {
                None => (self.u[j], self.zl[j], self.zu[j]),
                Some((d, ap, ad)) => (
                    self.u[j] + ap * d.u[j],
                    self.zl[j] + ad * d.zl[j],
                    self.zu[j] + ad * d.zu[j],
                ),
            };
            sum += (w + c) * zl + (c - w) * zu;
        }
        sum
    }

    fn n_pairs(&self) -> f64 {
        (self.rows + (self.len - self.t0()) + 2 * self.n) as f64
    }

    /// Residuals; returns `(pobj, dobj, pres, dres, gap)` and the complementarity
    /// `Σ s∘y + Σ u_t∘z_t` of the rows and the tail (the box pairs: [`DsxIpm::box_complementarity`]).
    fn residuals(&mut self) -> ((f64, f64, f64, f64, f64), f64) {
        let lp = self.lp;
        let (n, c, t0) = (self.n, self.c_box, self.t0());
        let p = self.parts;
        // r_p = G u − s − h and r_d = c − Gᵀy − Z (module docs; G's rows as in DSX eq. (4)),
        // fused into one pass over the examples per block; per block: Gᵀy on (w, b), hᵀy,
        // Σ ξ_i and the two ∞-norms (tail part of r_d)
        let (s, h, y) = (
            parts(&self.s, &p.rows),
            parts(&self.h, &p.rows),
            parts(&self.y, &p.rows),
        );
        let (u_w, u_t) = self.u.split_at(t0);
        let (u_t, z_t) = (parts(u_t, &p.tail), parts(&self.z[t0..], &p.tail));
        let mut rp = parts_mut(&mut self.rp, &p.rows);
        let mut rd = parts_mut(&mut self.rd[t0..], &p.tail);
        let mut wacc = chunks(&mut self.wacc, n);
        // per block: [b part of Gᵀy, hᵀy, Σ ξ, ‖r_p‖∞, ‖r_d tail‖∞, Σ s∘y + u∘z]
        let mut sums = [[0.0f64; 6]; PARTS];
        let mut slots = chunks(&mut sums, 1);
        let yx_all = &self.yx;
        let inv_lam_scale = 1.0 / self.lam_scale;
        let work = jobs(|k| {
            (
                k,
                (s[k], h[k], y[k], u_t[k], z_t[k]),
                std::mem::take(&mut rp[k]),
                std::mem::take(&mut rd[k]),
                std::mem::take(&mut wacc[k]),
                std::mem::take(&mut slots[k]),
            )
        });
        self.exec
            .run(work, |(k, (s, h, y, u, z), rp, rd, acc, slot)| {
                let e0 = p.ex[k];
                acc.fill(0.0);
                let (mut gb, mut hy, mut xi, mut np, mut nd) = (0.0, 0.0, 0.0, 0.0f64, 0.0f64);
                let mut cp = 0.0;
                // x·0 is NaN exactly for non-finite x: the norms turn NaN on any non-finite entry
                let mut bad = 0.0;
                let wb = u_w[n];
                for i in e0..p.ex[k + 1] {
                    let (r0, a0) = p.local(lp, k, i);
                    let kk = lp.support_len(i);
                    let nz = lp.indptr[i]..lp.indptr[i + 1];
                    let (cols, yx) = (&lp.indices[nz.clone()], &yx_all[nz]);
                    let (lam, xii) = (u[a0 + kk], u[a0 + kk + 1]);
                    let ya = y[r0];
                    let mut act = lp.p_i[i] * lam + lp.y[i] * wb + xii;
                    let mut glam = lp.p_i[i] * ya;
                    for t in 0..kk {
                        let j = if lp.dense { t } else { cols[t] };
                        let (alpha, yb) = (u[a0 + t], y[r0 + 1 + t]);
                        act -= alpha;
                        let r =
                            yx[t] * u_w[j] - lp.v[j] * lam + alpha - s[r0 + 1 + t] - h[r0 + 1 + t];
                        rp[r0 + 1 + t] = r;
                        np = np.max(r.abs());
                        bad += r * 0.0;
                        acc[j] += yx[t] * yb;
                        glam -= lp.v[j] * yb;
                        let d = ya - yb - z[a0 + t];
                        cp += s[r0 + 1 + t] * yb + alpha * z[a0 + t];
                        rd[a0 + t] = d;
                        nd = nd.max(d.abs());
                        bad += d * 0.0;
                        hy += h[r0 + 1 + t] * yb;
                    }
                    let r = act - s[r0] - h[r0];
                    rp[r0] = r;
                    let dl = -glam - z[a0 + kk];
                    let dx = 1.0 - ya - z[a0 + kk + 1];
                    rd[a0 + kk] = dl;
                    rd[a0 + kk + 1] = dx;
                    np = np.max(r.abs());
                    // λ's component relative to its column's size (module docs)
                    nd = nd.max(dl.abs() * inv_lam_scale).max(dx.abs());
                    bad += (r + dl + dx) * 0.0;
                    hy += h[r0] * ya;
                    gb += lp.y[i] * ya;
                    xi += xii;
                    cp += s[r0] * ya + lam * z[a0 + kk] + xii * z[a0 + kk + 1];
                }
                if bad.is_nan() {
                    (np, nd) = (f64::NAN, f64::NAN);
                }
                slot[0] = [gb, hy, xi, np, nd, cp];
            });
        let (mut gb, mut dobj, mut pobj, mut np, mut nd) = (0.0, 0.0, 0.0, 0.0f64, 0.0f64);
        let mut comp = 0.0;
        for [b, hy, xi, p_norm, d_norm, cp] in sums {
            gb += b;
            comp += cp;
            dobj += hy;
            pobj += xi;
            // NaN-propagating maxima
            np = if p_norm.is_nan() || np.is_nan() {
                f64::NAN
            } else {
                np.max(p_norm)
            };
            nd = if d_norm.is_nan() || nd.is_nan() {
                f64::NAN
            } else {
                nd.max(d_norm)
            };
        }
        let (rd_w, _) = self.rd.split_at_mut(t0);
        rd_w[..n].fill(0.0);
        for acc in self.wacc.chunks_exact(n) {
            for (o, a) in rd_w[..n].iter_mut().zip(acc) {
                *o += a;
            }
        }
        for j in 0..n {
            rd_w[j] = -rd_w[j] - (self.zl[j] - self.zu[j]);
            dobj -= c * (self.zl[j] + self.zu[j]);
        }
        rd_w[n] = -gb;
        let pres = np / (1.0 + self.h_norm);
        let nw = inf_norm(&self.rd[..t0]);
        let dres = if nw.is_nan() || nd.is_nan() {
            f64::NAN
        } else {
            nw.max(nd) / 2.0
        };
        let gap = (pobj - dobj).abs() / (1.0 + pobj.abs());
        ((pobj, dobj, pres, dres, gap), comp)
    }

    /// Starting point: `w = 0` (the centre of the box), `b = 0`, and every other primal
    /// variable, row slack and dual equal to [`START`] (see there). Infeasible, which the
    /// method allows; well centred (every product `START²`, the box products `START`).
    fn start(&mut self) {
        let t0 = self.t0();
        self.u[..t0].fill(0.0);
        self.u[t0..].fill(START);
        self.s.fill(START);
        self.y.fill(START);
        self.z[t0..].fill(START);
        self.zl.fill(START);
        self.zu.fill(START);
    }

    /// Runs the method.
    pub(crate) fn solve(
        mut self,
        opts: IpmOptions,
        mut progress: Option<Progress<'_>>,
    ) -> Result<IpmOutcome> {
        let start = Instant::now();
        let t0 = self.t0();
        let (n, c) = (self.n, self.c_box);
        let inv_m = 1.0 / self.m as f64;
        self.start();
        let npairs = self.n_pairs();
        let mut iter = 0u32;
        let (mut sigma, mut step) = (0.0, 0.0);
        let status;
        let mut reason = None;
        let mut last;
        let mut stalls = 0;
        // smallest dual residual seen (for the divergence check below)
        let mut best_dres = f64::INFINITY;
        loop {
            let ((pobj, dobj, pres, dres, gap), comp) = self.residuals();
            let mu = (comp + self.box_complementarity(None)) / npairs;
            self.rp_zero = pres <= PRIMAL_ROUNDING;
            last = (pobj, dobj, pres, dres, gap);
            let info = IterationInfo {
                iter,
                pobj: pobj * inv_m,
                dobj: dobj * inv_m,
                pres,
                dres,
                gap,
                mu,
                sigma,
                step,
                tau: 1.0,
                kappa: 0.0,
                seconds: start.elapsed().as_secs_f64(),
            };
            if let Some(cb) = progress.as_mut()
                && cb(&info).is_break()
            {
                status = Status::TimeLimit;
                reason = Some("cancelled by the callback".into());
                break;
            }
            if !(pres.is_finite() && dres.is_finite() && gap.is_finite()) {
                status = Status::NumericalError;
                reason = Some("non-finite residuals".into());
                break;
            }
            if pres <= opts.tolerance && dres <= opts.tolerance && gap <= opts.tolerance {
                status = Status::Optimal;
                break;
            }
            // Final-phase breakdown: the gap and the primal residual have converged but the dual
            // residual, stuck near the tolerance, grows again as `H` becomes too ill-conditioned
            // for the solves (tiny sparse fits of the `stress` sweep; a 400 × 300 dense instance
            // did this until λ's residual was measured on its column's scale). Further
            // iterations only make it worse: stop now, so the caller's fallback starts at once.
            if gap <= opts.tolerance
                && pres <= opts.tolerance
                && dres > 10.0 * best_dres.max(opts.tolerance)
            {
                status = Status::NumericalError;
                reason = Some(format!(
                    "dual residual diverging at the optimum ({dres:.2e}, best {best_dres:.2e})"
                ));
                break;
            }
            best_dres = best_dres.min(dres);
            if iter >= opts.max_iter {
                status = Status::IterationLimit;
                break;
            }
            if start.elapsed().as_secs_f64() > opts.time_limit {
                status = Status::TimeLimit;
                break;
            }
            iter += 1;
            if let Err(e) = self.factor() {
                status = Status::NumericalError;
                reason = Some(format!("factorisation failed: {e}"));
                break;
            }
            // linear-solve accuracy (relative to the right-hand side): well below the residuals
            // still to remove. (An absolute target on the dual residual was tried: it made the
            // solves 5-10x slower at MNIST scale without curing the breakdowns, which the
            // fallback in `params.rs` handles.)
            let tol = (0.01 * pres.max(dres).max(gap)).clamp(1e-13, 1e-8);
            // predictor (σ = 0)
            // (r_s = −s∘y and r_t = −u∘z enter `newton_rhs` and `recover` in closed form)
            let p = self.parts;
            for j in 0..n {
                let w = self.u[j];
                self.rl[j] = -(w + c) * self.zl[j];
                self.ru[j] = -(c - w) * self.zu[j];
            }
            let (ap, ad, [ys, dsdy]) = match self.direction::<true>(true, tol) {
                Ok(steps) => steps,
                Err(e) => {
                    status = Status::NumericalError;
                    reason = Some(format!("solve failed: {e}"));
                    break;
                }
            };
            let (ap, ad) = (ap.min(1.0), ad.min(1.0));
            // Σ (s + aΔs)∘(y + bΔy) over the rows and the tail is
            // comp + a Σ y∘Δs + b Σ s∘Δy + ab Σ Δs∘Δy, with s∘Δy = −s∘y − y∘Δs on the affine
            // direction (its sums come from `recover`)
            let rows_tail = comp + ap * ys - ad * (comp + ys) + ap * ad * dsdy;
            let box_aff = self.box_complementarity(Some((&self.aff, ap, ad)));
            let mu_aff = (rows_tail + box_aff) / npairs;
            // the aggressive exponent only while both infeasibilities are below the gap (see
            // `SIGMA_POWER`)
            let power = if pres.max(dres) <= gap {
                SIGMA_POWER
            } else {
                MEHROTRA_POWER
            };
            sigma = (mu_aff / mu).clamp(0.0, 1.0).powi(power);
            let target = sigma * mu;
            // corrector: σμ − x∘z − Δx_aff∘Δz_aff
            let second_order =
                |r: &mut f64, x: f64, z: f64, dx: f64, dz: f64| *r = target - x * z - dx * dz;
            let (a, rows) = (&self.aff, [&self.s[..], &self.y, &self.aff.s, &self.aff.y]);
            map5(&self.exec, &p.rows, &mut self.rs, rows, second_order);
            let tail = [&self.u[t0..], &self.z[t0..], &a.u[t0..], &a.z[t0..]];
            map5(&self.exec, &p.tail, &mut self.rt[t0..], tail, second_order);
            for j in 0..n {
                let (w, dw) = (self.u[j], self.aff.u[j]);
                self.rl[j] = target - (w + c) * self.zl[j] - dw * self.aff.zl[j];
                self.ru[j] = target - (c - w) * self.zu[j] + dw * self.aff.zu[j];
            }
            let (mut ap, mut ad) = match self.direction::<false>(false, tol) {
                Ok((ap, ad, _)) => (ap, ad),
                Err(e) => {
                    status = Status::NumericalError;
                    reason = Some(format!("solve failed: {e}"));
                    break;
                }
            };
            // Gondzio's multiple centrality correctors: each costs one more solve with the
            // same factorisation, tried only after a short step and kept only when it lengthens
            // the step
            for _ in 0..self.max_correctors {
                if ap.min(ad) >= GONDZIO_TRIGGER {
                    break;
                }
                self.centrality_rhs(ap, ad, target);
                let Ok((ap2, ad2, _)) = self.direction::<false>(true, tol) else {
                    break;
                };
                if ap2.min(1.0) + ad2.min(1.0) >= ap.min(1.0) + ad.min(1.0) + GONDZIO_GAIN
                    && ap2 >= 0.95 * ap
                    && ad2 >= 0.95 * ad
                {
                    std::mem::swap(&mut self.aff, &mut self.dir);
                    (ap, ad) = (ap2, ad2);
                    self.correctors += 1;
                } else {
                    break;
                }
            }
            let (ap, ad) = ((ETA * ap).min(1.0), (ETA * ad).min(1.0));
            step = ap.min(ad);
            if step < 1e-8 {
                stalls += 1;
                if stalls >= 5 {
                    status = Status::NumericalError;
                    reason = Some("step lengths below 1e-8".into());
                    break;
                }
            } else {
                stalls = 0;
            }
            let d = &self.dir;
            let (s, y) = (
                (&mut self.s[..], &d.s[..], ap),
                (&mut self.y[..], &d.y[..], ad),
            );
            step2(&self.exec, &p.rows, s, y);
            let (ut, zt) = (&mut self.u[t0..], &mut self.z[t0..]);
            step2(
                &self.exec,
                &p.tail,
                (ut, &d.u[t0..], ap),
                (zt, &d.z[t0..], ad),
            );
            for (u, du) in self.u[..t0].iter_mut().zip(&d.u[..t0]) {
                *u += ap * du;
            }
            for j in 0..n {
                self.zl[j] += ad * d.zl[j];
                self.zu[j] += ad * d.zu[j];
            }
        }
        let (pobj, dobj, pres, dres, gap) = last;
        Ok(IpmOutcome {
            status,
            wb: self.u[..n]
                .iter()
                .map(|w| self.lp.c * w)
                .chain([self.u[n]])
                .collect(),
            objective: pobj * inv_m,
            dual_objective: dobj * inv_m,
            iterations: iter,
            primal_residual: pres,
            dual_residual: dres,
            gap,
            factor_seconds: self.factor_seconds,
            solve_seconds: self.solve_seconds,
            seconds: start.elapsed().as_secs_f64(),
            correctors: self.correctors,
            reason,
        })
    }
}
