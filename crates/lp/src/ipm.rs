//! The interior-point method: a homogeneous self-dual embedding solved by Mehrotra's
//! predictor–corrector.
//!
//! # Formulation
//!
//! After presolve (fixed variables eliminated, free and empty rows dropped, empty
//! columns fixed) and Ruiz equilibration, every inequality row `rl ≤ aᵢᵀx ≤ ru` gets a
//! slack `sᵢ = aᵢᵀx` carrying the row bounds, equality rows keep `aᵢᵀx = bᵢ`. With
//! `ξ = (x, s)` and `Ã = [A, −I_ineq]` the IPM works on
//!
//! ```text
//!   min cᵀξ   s.t.  Ãξ = b,   ξ_L − l_L ≥ 0,   u_U − ξ_U ≥ 0
//! ```
//!
//! (`L`, `U`: components with a finite lower/upper bound; free components have neither)
//! and on its dual `max bᵀy + l_Lᵀz_l − u_Uᵀz_u  s.t.  Ãᵀy + z_l − z_u = c, z ≥ 0`.
//!
//! The homogeneous self-dual embedding adds `τ, κ ≥ 0` and bound slacks `p_l, p_u`:
//!
//! ```text
//!   r_P = Ãξ − bτ                                  = 0
//!   r_L = ξ_L − l τ − p_l                          = 0
//!   r_U = u τ − ξ_U − p_u                          = 0
//!   r_D = Ãᵀy + z_l − z_u − cτ                     = 0
//!   r_G = cᵀξ − bᵀy − lᵀz_l + uᵀz_u + κ            = 0
//!   p_l∘z_l = 0,   p_u∘z_u = 0,   τκ = 0,          (p, z, τ, κ) ≥ 0
//! ```
//!
//! Any solution has `pᵀz + τκ = 0`: if `τ > 0`, `(ξ, y, z)/τ` is optimal; if `κ > 0`,
//! `bᵀy + lᵀz_l − uᵀz_u > 0` with `Ãᵀy + z_l − z_u ≈ 0` certifies primal infeasibility
//! and `cᵀξ < 0` with `Ãξ ≈ 0`, `ξ_L ≥ 0`, `ξ_U ≤ 0` certifies dual infeasibility
//! (unboundedness).
//!
//! # Newton step
//!
//! With `D_l = Z_l P_l⁻¹`, `D_u = Z_u P_u⁻¹`, `D = D_l + D_u`, a step that reduces the
//! residuals by the factor `1 − η` and targets `p∘z = σμ` (right-hand sides
//! `d_l = p_l∘z_l − σμ + corr`, `d_u`, `d_κ` likewise) reduces to
//!
//! ```text
//!   [ −D  Ãᵀ ] [Δξ]   [ −ηr_D + d_l/p_l − d_u/p_u + ηD_l r_L − ηD_u r_U ]        [ c − D_l l − D_u u ]
//!   [  Ã  0  ] [Δy] = [ −ηr_P                                          ] + Δτ [ b                 ]
//! ```
//!
//! solved for two right-hand sides with one factorisation, Δτ from the scalar `r_G` row,
//! then `Δp_l = Δξ_L − lΔτ + ηr_L`, `Δz_l = −(d_l + z_l Δp_l)/p_l` (and mirrored for
//! `u`), `Δκ = −(d_κ + κΔτ)/τ`. Eliminating the slack part of `Δξ` (diagonal `D_s`)
//! gives the backend system `[−D_x Aᵀ; A E]` with `E = D_s⁻¹` on inequality rows and
//! `0` on equality rows — see [`crate::kkt`]. Each solve is followed by iterative
//! refinement against the unregularised operator.
//!
//! Free variables (`D_j = 0`) are passed to the backend with a proximal diagonal
//! `ρ = free_reg` (default 1e-8, in the equilibrated units) so the factorisation stays
//! well defined; iterative refinement is against the exact operator with `D_j = 0`.
//!
//! Predictor: `η = 1`, `σ = 0`. Corrector: `σ = (μ_aff/μ)³`, `η = 1 − σ`, with
//! Mehrotra's second-order term `Δp_aff∘Δz_aff`. Step `α = min(1, 0.99 α_max)` (one
//! common step for all variables, as the embedding requires).
//! Starting point: Mehrotra's heuristic (least-norm primal `ξ` closest to the box
//! projection of 0 and least-norm dual `z = c − Ãᵀy`, both with `D = I`, shifted into
//! the positive orthant by Mehrotra's two shifts, then floored at 0.1 in the
//! equilibrated units), `τ = 1`, `κ = μ₀`.
//!
//! Termination also stops with `numerical_error` after 5 consecutive steps shorter than
//! 1e-8 or on a failed factorisation/solve; the solver then retries once without
//! equilibration (setting `retry_unscaled`).
//!
//! # Termination
//!
//! On the unscaled iterate `x = ξ/τ`, `y = y/τ`:
//! `pres = ‖(r_P, r_L, r_U)‖∞/τ / (1 + ‖b‖∞)` with `‖b‖∞` the largest finite row or
//! variable bound, `dres = ‖r_D‖∞/τ / (1 + ‖c‖∞)` (both in the original, unscaled
//! units; deliberately not normalised by `‖x‖`, which would hide absolute infeasibility
//! on problems with large primal values such as greenbea),
//! `gap = |pobj − dobj| / max(1, min(|pobj|, |dobj|))`. `optimal` iff all three are
//! below their tolerances. Infeasibility: the certificates above with
//! `‖Ãᵀy + z_l − z_u‖∞ ≤ ε·(bᵀy + lᵀz_l − uᵀz_u)`, resp.
//! `‖Ãξ‖∞ + bound violation ≤ ε·(−cᵀξ)`.

use crate::error::{KktError, LpError};
use crate::kkt::{
    DenseBackend, FaerLdlBackend, KktBackend, KktInfo, KktProblem, Regularization, RowKind,
};
use crate::presolve::{Decided, Model, build_model};
use crate::problem::{LpProblem, Sense};
use crate::settings::{BackendChoice, IpmSettings};
use crate::solution::{IterationInfo, Solution, Status};
use std::io::Write;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

const START_FLOOR: f64 = 0.1;

type CallbackFn<'a> = dyn FnMut(&IterationInfo) -> ControlFlow<()> + 'a;
type Callback<'a> = Box<CallbackFn<'a>>;

/// Solves `problem` with `settings` and the built-in backend they select.
pub fn solve(problem: &LpProblem, settings: &IpmSettings) -> Result<Solution, LpError> {
    IpmSolver::new(problem, settings.clone())?.solve()
}

/// The interior-point solver: configure with the `with_*` methods, then [`IpmSolver::solve`].
pub struct IpmSolver<'a> {
    problem: &'a LpProblem,
    settings: IpmSettings,
    backend: Option<Box<dyn KktBackend + 'a>>,
    log: Option<Box<dyn Write + 'a>>,
    callback: Option<Callback<'a>>,
    cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for IpmSolver<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpmSolver")
            .field("settings", &self.settings)
            .field("backend", &self.backend)
            .field("has_log", &self.log.is_some())
            .field("has_callback", &self.callback.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> IpmSolver<'a> {
    /// Validates the problem and the settings.
    pub fn new(problem: &'a LpProblem, settings: IpmSettings) -> Result<Self, LpError> {
        problem.validate()?;
        settings.validate()?;
        Ok(Self {
            problem,
            settings,
            backend: None,
            log: None,
            callback: None,
            cancel: None,
        })
    }

    /// Uses a custom KKT backend instead of the one selected in the settings.
    pub fn with_backend(mut self, backend: impl KktBackend + 'a) -> Self {
        self.backend = Some(Box::new(backend));
        self
    }

    /// Target of the iteration log (written only when `verbose` is set).
    pub fn with_log(mut self, log: impl Write + 'a) -> Self {
        self.log = Some(Box::new(log));
        self
    }

    /// Progress callback, called once per iteration; `ControlFlow::Break` stops the
    /// solve with status `time_limit`.
    pub fn with_callback(mut self, f: impl FnMut(&IterationInfo) -> ControlFlow<()> + 'a) -> Self {
        self.callback = Some(Box::new(f));
        self
    }

    /// Cancellation flag, checked once per iteration (set it from any thread); a
    /// cancelled solve ends with status `time_limit`.
    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Runs the solver. Errors are setup failures only; once iterating, the outcome is
    /// always a [`Solution`] whose [`Status`] says what happened.
    pub fn solve(mut self) -> Result<Solution, LpError> {
        let start = Instant::now();
        let s = &self.settings;
        let reg = Regularization {
            static_reg: s.static_reg,
            static_reg_var: s.static_reg_var,
            dynamic_eps: s.dynamic_reg_eps,
            dynamic_delta: s.dynamic_reg_delta,
        };
        let mut backend: Box<dyn KktBackend + 'a> = match self.backend.take() {
            Some(b) => b,
            None => match s.backend {
                BackendChoice::Dense => Box::new(DenseBackend::new(reg)),
                BackendChoice::SparseLdl => Box::new(FaerLdlBackend::new(reg)),
                BackendChoice::Auto => Box::new(FaerLdlBackend::new(reg)),
            },
        };
        let keep = backend.requires_original_layout();
        let model = build_model(
            self.problem,
            s.presolve,
            s.equilibrate,
            s.equilibrate_iters,
            keep,
            backend.name(),
        )?;
        let verbose = s.verbose && self.log.is_some();
        if verbose && let Some(w) = self.log.as_mut() {
            {
                let p = self.problem;
                let _ = writeln!(
                    w,
                    "bulwark-lp {}: homogeneous self-dual IPM, Mehrotra predictor-corrector",
                    env!("CARGO_PKG_VERSION")
                );
                let _ = writeln!(
                    w,
                    "problem {}: {} rows, {} cols, {} nnz; presolved: {} rows ({} inequality), {} cols, {} nnz",
                    p.name().unwrap_or("(unnamed)"),
                    p.num_rows(),
                    p.num_vars(),
                    p.nnz(),
                    model.m,
                    model.slack_row.len(),
                    model.n,
                    model.a.nnz()
                );
            }
        }
        if let Some(d) = model.decided.clone() {
            let sol = decided_solution(self.problem, &model, d, start, backend.info());
            if verbose && let Some(w) = self.log.as_mut() {
                let _ = writeln!(w, "presolve decided: {}", sol.status);
            }
            return Ok(sol);
        }
        let mut model = model;
        let mut prior_iterations = 0u32;
        let (sol, reason) = loop {
            backend.analyze(KktProblem {
                a: model.a.as_ref(),
                row_kind: &model.row_kind,
            })?;
            let mut engine = Engine::new(&model, backend.as_mut(), &self.settings);
            let log: Option<&mut (dyn Write + 'a)> = if verbose {
                self.log.as_deref_mut()
            } else {
                None
            };
            let out = engine.run(
                log,
                self.callback.as_deref_mut(),
                self.cancel.as_deref(),
                start,
            );
            let retry = out.status == Status::NumericalError
                && self.settings.retry_unscaled
                && self.settings.equilibrate
                && !keep
                && prior_iterations == 0;
            let reason = out.reason.clone();
            let mut sol = engine.finish(self.problem, out, start);
            sol.iterations += prior_iterations;
            if !retry {
                break (sol, reason);
            }
            // a numerical failure on the equilibrated problem: retry once unscaled
            prior_iterations = sol.iterations.max(1);
            if verbose && let Some(w) = self.log.as_mut() {
                let _ = writeln!(
                    w,
                    "numerical_error ({}) after {} iterations; retrying without equilibration",
                    reason.unwrap_or_default(),
                    sol.iterations
                );
            }
            model = build_model(
                self.problem,
                self.settings.presolve,
                false,
                0,
                keep,
                backend.name(),
            )?;
        };
        if verbose && let Some(w) = self.log.as_mut() {
            {
                let _ = writeln!(
                    w,
                    "status {}{} after {} iterations, {:.3}s; objective {:+.12e}; pres {:.2e} dres {:.2e} gap {:.2e}",
                    sol.status,
                    reason.map(|r| format!(" ({r})")).unwrap_or_default(),
                    sol.iterations,
                    sol.seconds,
                    sol.objective,
                    sol.primal_residual,
                    sol.dual_residual,
                    sol.gap
                );
            }
        }
        Ok(sol)
    }
}

fn decided_solution(
    p: &LpProblem,
    model: &Model,
    d: Decided,
    start: Instant,
    kkt: KktInfo,
) -> Solution {
    let n = p.num_vars();
    let m = p.num_rows();
    let mut x = vec![0.0; n];
    let mut y = vec![0.0; m];
    let status = match d {
        Decided::PrimalInfeasible { row, sign } => {
            y[row] = sign;
            Status::PrimalInfeasible
        }
        Decided::DualInfeasible { col, sign } => {
            x[col] = sign;
            Status::DualInfeasible
        }
    };
    let _ = model;
    Solution {
        status,
        x,
        row_duals: y,
        reduced_costs: vec![0.0; n],
        objective: f64::NAN,
        dual_objective: f64::NAN,
        primal_residual: f64::NAN,
        dual_residual: f64::NAN,
        gap: f64::NAN,
        iterations: 0,
        seconds: start.elapsed().as_secs_f64(),
        kkt,
        history: Vec::new(),
    }
}

struct Outcome {
    status: Status,
    reason: Option<String>,
    iterations: u32,
    last: IterationInfo,
}

/// All IPM state; allocated once in `new`, the loop allocates nothing.
struct Engine<'m, 'b> {
    md: &'m Model,
    kkt: &'b mut (dyn KktBackend + 'b),
    st: IpmSettings,
    // iterate
    xi: Vec<f64>,
    y: Vec<f64>,
    zl: Vec<f64>,
    zu: Vec<f64>,
    pl: Vec<f64>,
    pu: Vec<f64>,
    tau: f64,
    kappa: f64,
    // residuals
    r_p: Vec<f64>,
    r_l: Vec<f64>,
    r_u: Vec<f64>,
    r_d: Vec<f64>,
    r_g: f64,
    // scalings
    dl: Vec<f64>,
    du: Vec<f64>,
    var_diag: Vec<f64>,
    row_diag: Vec<f64>,
    // directions
    a2_xi: Vec<f64>,
    a2_y: Vec<f64>,
    dxi: Vec<f64>,
    dy: Vec<f64>,
    dzl: Vec<f64>,
    dzu: Vec<f64>,
    dpl: Vec<f64>,
    dpu: Vec<f64>,
    dtau: f64,
    dkappa: f64,
    // affine copies for the corrector
    aff_dzl: Vec<f64>,
    aff_dzu: Vec<f64>,
    aff_dpl: Vec<f64>,
    aff_dpu: Vec<f64>,
    // complementarity targets
    dsl: Vec<f64>,
    dsu: Vec<f64>,
    // solve scratch
    f: Vec<f64>,
    g: Vec<f64>,
    rx: Vec<f64>,
    ry: Vec<f64>,
    sx: Vec<f64>,
    sy: Vec<f64>,
    ex: Vec<f64>,
    ey: Vec<f64>,
    px: Vec<f64>,
    py: Vec<f64>,
    t_m: Vec<f64>,
    t_n: Vec<f64>,
    history: Vec<IterationInfo>,
    nbounds: usize,
    last_refine_res: f64,
    rho: f64,
    rho_exact: f64,
    var_exact: Vec<f64>,
}

/// Scientific notation with a signed two-digit exponent (`-4.64753143e+02`, `2.93e-12`),
/// written without allocating.
struct Sci(f64, usize, bool);

impl std::fmt::Display for Sci {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (v, prec, sign) = (self.0, self.1, self.2);
        if !v.is_finite() || v == 0.0 {
            let w = prec + 6 + usize::from(sign);
            return if sign {
                write!(f, "{v:>+w$.prec$}")
            } else {
                write!(f, "{v:>w$.prec$}")
            };
        }
        let mut e = v.abs().log10().floor() as i32;
        let mut m = v / 10f64.powi(e);
        let scale = 10f64.powi(prec as i32);
        if (m.abs() * scale).round() / scale >= 10.0 {
            e += 1;
            m /= 10.0;
        }
        if sign {
            write!(f, "{m:+.prec$}e{e:+03}")
        } else {
            write!(f, "{m:.prec$}e{e:+03}")
        }
    }
}

/// ∞-norm that propagates NaN (`f64::max` would silently drop it).
#[inline]
fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |a, x| {
        if x.is_nan() || a.is_nan() {
            f64::NAN
        } else {
            a.max(x.abs())
        }
    })
}

impl<'m, 'b> Engine<'m, 'b> {
    fn new(md: &'m Model, kkt: &'b mut (dyn KktBackend + 'b), st: &IpmSettings) -> Self {
        let (n, m, nn) = (md.n, md.m, md.nn);
        let z = |k: usize| vec![0.0; k];
        let nbounds =
            md.has_lo.iter().filter(|&&b| b).count() + md.has_up.iter().filter(|&&b| b).count();
        Self {
            md,
            kkt,
            st: st.clone(),
            xi: z(nn),
            y: z(m),
            zl: z(nn),
            zu: z(nn),
            pl: z(nn),
            pu: z(nn),
            tau: 1.0,
            kappa: 1.0,
            r_p: z(m),
            r_l: z(nn),
            r_u: z(nn),
            r_d: z(nn),
            r_g: 0.0,
            dl: z(nn),
            du: z(nn),
            var_diag: z(n),
            row_diag: z(m),
            a2_xi: z(nn),
            a2_y: z(m),
            dxi: z(nn),
            dy: z(m),
            dzl: z(nn),
            dzu: z(nn),
            dpl: z(nn),
            dpu: z(nn),
            dtau: 0.0,
            dkappa: 0.0,
            aff_dzl: z(nn),
            aff_dzu: z(nn),
            aff_dpl: z(nn),
            aff_dpu: z(nn),
            dsl: z(nn),
            dsu: z(nn),
            f: z(nn),
            g: z(m),
            rx: z(n),
            ry: z(m),
            sx: z(n),
            sy: z(m),
            ex: z(n),
            ey: z(m),
            px: z(n),
            py: z(m),
            t_m: z(m),
            t_n: z(nn),
            history: Vec::with_capacity(if st.record_history {
                st.max_iter as usize + 1
            } else {
                0
            }),
            nbounds,
            last_refine_res: 0.0,
            rho: st.free_reg,
            rho_exact: 0.0,
            var_exact: z(n),
        }
    }

    /// `out = Ãξ` (length m).
    fn mul_at(md: &Model, xi: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        md.a.mul_add(&xi[..md.n], out);
        for (k, &i) in md.slack_row.iter().enumerate() {
            out[i] -= xi[md.n + k];
        }
    }

    /// `out = Ãᵀy` (length nn).
    fn mul_att(md: &Model, y: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        md.a.mul_t_add(y, &mut out[..md.n]);
        for (k, &i) in md.slack_row.iter().enumerate() {
            out[md.n + k] = -y[i];
        }
    }

    /// Sets the backend diagonals from `D = dl + du` and factors.
    fn factor(&mut self) -> Result<(), KktError> {
        let md = self.md;
        for j in 0..md.n {
            // free variables: the backend gets a proximal diagonal ρ (without it
            // H_jj = Σ a_ij²Θ_i → 0 when all rows of a free variable become inactive, e.g.
            // while τ → 0 on infeasible problems); refinement uses the exact D_j = 0
            self.var_diag[j] = if md.has_lo[j] || md.has_up[j] {
                self.dl[j] + self.du[j]
            } else {
                self.rho
            };
            self.var_exact[j] = if md.has_lo[j] || md.has_up[j] {
                self.var_diag[j]
            } else {
                0.0
            };
        }
        for i in 0..md.m {
            self.row_diag[i] = match md.row_kind[i] {
                RowKind::Equality => 0.0,
                RowKind::Inequality => {
                    let t = md.n + md.row_slack[i];
                    1.0 / (self.dl[t] + self.du[t]).max(1e-300)
                }
            };
        }
        self.kkt.factor(&self.var_diag, &self.row_diag)
    }

    /// Solves `[−D Ãᵀ; Ã 0] [out_xi; out_y] = [self.f; self.g]` via the backend system
    /// and iterative refinement against the exact operator.
    fn solve_xi(&mut self, out_xi: &mut [f64], out_y: &mut [f64]) -> Result<(), KktError> {
        let md = self.md;
        let n = md.n;
        self.rx.copy_from_slice(&self.f[..n]);
        self.ry.copy_from_slice(&self.g);
        for (k, &i) in md.slack_row.iter().enumerate() {
            self.ry[i] -= self.row_diag[i] * self.f[n + k];
        }
        self.sx.copy_from_slice(&self.rx);
        self.sy.copy_from_slice(&self.ry);
        self.kkt.solve(&mut self.sx, &mut self.sy)?;
        let rhs_norm = inf_norm(&self.rx).max(inf_norm(&self.ry));
        let mut prev = f64::INFINITY;
        for it in 0..=self.st.refine_max_iter {
            // residual e = r − K s with K = [−D_x Aᵀ; A E]
            for j in 0..n {
                self.ex[j] = self.rx[j] + self.var_exact[j] * self.sx[j];
            }
            md.a.as_ref().mul_t_add(&self.sy, &mut self.t_n[..n]);
            for j in 0..n {
                self.ex[j] -= self.t_n[j];
                self.t_n[j] = 0.0;
            }
            for i in 0..md.m {
                self.ey[i] = self.ry[i] - self.row_diag[i] * self.sy[i];
            }
            self.t_m.fill(0.0);
            md.a.mul_add(&self.sx, &mut self.t_m);
            for i in 0..md.m {
                self.ey[i] -= self.t_m[i];
            }
            let res = inf_norm(&self.ex).max(inf_norm(&self.ey));
            if !res.is_finite() {
                return Err(KktError::NonFinite("KKT solution"));
            }
            if res >= prev {
                // no improvement: revert the last correction
                self.sx.copy_from_slice(&self.px);
                self.sy.copy_from_slice(&self.py);
                break;
            }
            if res > 0.5 * prev {
                // slow progress: keep this (better) solution and stop
                self.last_refine_res = res / (1.0 + rhs_norm);
                break;
            }
            self.last_refine_res = res / (1.0 + rhs_norm);
            if res <= self.st.refine_tol * (1.0 + rhs_norm) || it == self.st.refine_max_iter {
                break;
            }
            prev = res;
            self.px.copy_from_slice(&self.sx);
            self.py.copy_from_slice(&self.sy);
            self.kkt.solve(&mut self.ex, &mut self.ey)?;
            for j in 0..n {
                self.sx[j] += self.ex[j];
            }
            for i in 0..md.m {
                self.sy[i] += self.ey[i];
            }
        }
        out_xi[..n].copy_from_slice(&self.sx);
        out_y.copy_from_slice(&self.sy);
        for (k, &i) in md.slack_row.iter().enumerate() {
            // −D_s Δs − Δy_i = f_s  ⇒  Δs = −E (f_s + Δy_i)
            out_xi[n + k] = -self.row_diag[i] * (self.f[n + k] + self.sy[i]);
        }
        Ok(())
    }

    fn starting_point(&mut self) -> Result<(), KktError> {
        let md = self.md;
        let nn = md.nn;
        // D = I (free variables included) for the least-squares start
        self.dl.fill(1.0);
        self.du.fill(0.0);
        self.rho = 1.0;
        self.rho_exact = 1.0;
        let r = self.factor();
        self.rho = self.st.free_reg;
        self.rho_exact = 0.0;
        r?;
        // primal: min ½‖ξ − ξ₀‖² s.t. Ãξ = b
        for j in 0..nn {
            let (l, u) = (
                if md.has_lo[j] {
                    md.lo[j]
                } else {
                    f64::NEG_INFINITY
                },
                if md.has_up[j] {
                    md.up[j]
                } else {
                    f64::INFINITY
                },
            );
            self.f[j] = -(0f64.clamp(l, u));
        }
        self.g.copy_from_slice(&md.b);
        let mut xi = std::mem::take(&mut self.xi);
        let mut y = std::mem::take(&mut self.y);
        self.solve_xi(&mut xi, &mut y)?;
        self.xi = xi;
        // dual: min ½‖z‖², z = c − Ãᵀy
        self.f.copy_from_slice(&md.c);
        self.g.fill(0.0);
        let mut w = std::mem::take(&mut self.dxi);
        self.solve_xi(&mut w, &mut y)?;
        self.y = y;
        // w = Ãᵀy − c = −z
        let mut min_p = f64::INFINITY;
        let mut min_z = f64::INFINITY;
        for j in 0..nn {
            let z = -w[j];
            if md.has_lo[j] {
                self.pl[j] = self.xi[j] - md.lo[j];
                self.zl[j] = if md.has_up[j] { z.max(0.0) } else { z };
                min_p = min_p.min(self.pl[j]);
                min_z = min_z.min(self.zl[j]);
            }
            if md.has_up[j] {
                self.pu[j] = md.up[j] - self.xi[j];
                self.zu[j] = if md.has_lo[j] { (-z).max(0.0) } else { -z };
                min_p = min_p.min(self.pu[j]);
                min_z = min_z.min(self.zu[j]);
            }
        }
        self.dxi = w;
        self.tau = 1.0;
        self.kappa = 1.0;
        if self.nbounds == 0 {
            return Ok(());
        }
        let dp = (-1.5 * min_p).max(0.0);
        let dz = (-1.5 * min_z).max(0.0);
        let (mut pz, mut sp, mut sz) = (0.0, 0.0, 0.0);
        for j in 0..nn {
            if md.has_lo[j] {
                self.pl[j] += dp;
                self.zl[j] += dz;
                pz += self.pl[j] * self.zl[j];
                sp += self.pl[j];
                sz += self.zl[j];
            }
            if md.has_up[j] {
                self.pu[j] += dp;
                self.zu[j] += dz;
                pz += self.pu[j] * self.zu[j];
                sp += self.pu[j];
                sz += self.zu[j];
            }
        }
        let (dp2, dz2) = if pz > 0.0 && sp > 0.0 && sz > 0.0 {
            (0.5 * pz / sz, 0.5 * pz / sp)
        } else {
            (1.0, 1.0)
        };
        let nb = self.nbounds as f64;
        // floor: the data are equilibrated, so unit scale is meaningful; a nearly
        // complementary but infeasible start (tiny μ) would otherwise stall
        let floor = START_FLOOR;
        let mut mu = 0.0;
        for j in 0..nn {
            if md.has_lo[j] {
                self.pl[j] = (self.pl[j] + dp2).max(floor);
                self.zl[j] = (self.zl[j] + dz2).max(floor);
                mu += self.pl[j] * self.zl[j];
            }
            if md.has_up[j] {
                self.pu[j] = (self.pu[j] + dp2).max(floor);
                self.zu[j] = (self.zu[j] + dz2).max(floor);
                mu += self.pu[j] * self.zu[j];
            }
        }
        self.kappa = (mu / nb).max(1e-8);
        Ok(())
    }

    fn residuals(&mut self) {
        let md = self.md;
        Self::mul_at(md, &self.xi, &mut self.r_p);
        for i in 0..md.m {
            self.r_p[i] -= md.b[i] * self.tau;
        }
        Self::mul_att(md, &self.y, &mut self.r_d);
        let mut cx = 0.0;
        let mut dual = 0.0;
        for j in 0..md.nn {
            self.r_d[j] += self.zl[j] - self.zu[j] - md.c[j] * self.tau;
            cx += md.c[j] * self.xi[j];
            self.r_l[j] = if md.has_lo[j] {
                self.xi[j] - md.lo[j] * self.tau - self.pl[j]
            } else {
                0.0
            };
            self.r_u[j] = if md.has_up[j] {
                md.up[j] * self.tau - self.xi[j] - self.pu[j]
            } else {
                0.0
            };
            if md.has_lo[j] {
                dual += md.lo[j] * self.zl[j];
            }
            if md.has_up[j] {
                dual -= md.up[j] * self.zu[j];
            }
        }
        let by: f64 = md.b.iter().zip(&self.y).map(|(b, y)| b * y).sum();
        self.r_g = cx - by - dual + self.kappa;
    }

    fn mu(&self) -> f64 {
        let md = self.md;
        let mut s = self.tau * self.kappa;
        for j in 0..md.nn {
            if md.has_lo[j] {
                s += self.pl[j] * self.zl[j];
            }
            if md.has_up[j] {
                s += self.pu[j] * self.zu[j];
            }
        }
        s / (self.nbounds as f64 + 1.0)
    }

    /// Unscaled metrics of the current iterate, and the infeasibility certificate tests.
    fn metrics(&mut self, iter: u32) -> (IterationInfo, bool, bool) {
        let md = self.md;
        let (n, tau, sig) = (md.n, self.tau, md.cscale);
        // primal residual (rows and bound rows), in original units
        let mut pres: f64 = 0.0;
        Self::mul_at(md, &self.xi, &mut self.t_m); // Ãξ, used by the primal ray test
        for i in 0..md.m {
            pres = pres.max(self.r_p[i].abs() / md.rowscale[i]);
        }
        for j in 0..md.nn {
            let s = if j < n {
                md.colscale[j]
            } else {
                1.0 / md.rowscale[md.slack_row[j - n]]
            };
            pres = pres.max(self.r_l[j].abs() * s).max(self.r_u[j].abs() * s);
        }
        let pres_rel = pres / tau / (1.0 + md.bnorm);
        // dual residual, and ‖Ãᵀy + z_l − z_u‖ for the Farkas test (homogeneous)
        let mut dres: f64 = 0.0;
        let mut ray_d: f64 = 0.0;
        for j in 0..md.nn {
            let s = if j < n {
                sig / md.colscale[j]
            } else {
                sig * md.rowscale[md.slack_row[j - n]]
            };
            dres = dres.max(self.r_d[j].abs() * s);
            ray_d = ray_d.max((self.r_d[j] + md.c[j] * tau).abs() * s);
        }
        let dres_rel = dres / tau / (1.0 + md.cnorm);
        // objectives
        let mut cx = 0.0;
        let mut bnd = 0.0;
        for j in 0..md.nn {
            cx += md.c[j] * self.xi[j];
            if md.has_lo[j] {
                bnd += md.lo[j] * self.zl[j];
            }
            if md.has_up[j] {
                bnd -= md.up[j] * self.zu[j];
            }
        }
        let by: f64 = md.b.iter().zip(&self.y).map(|(b, y)| b * y).sum();
        let dual_ray_obj = sig * (by + bnd);
        let primal_ray_obj = sig * cx;
        let pobj = primal_ray_obj / tau + md.offset;
        let dobj = dual_ray_obj / tau + md.offset;
        let gap = (pobj - dobj).abs() / pobj.abs().min(dobj.abs()).max(1.0);
        // primal ray residual: ‖Ãξ‖ + bound violations of the direction
        let mut ray_p: f64 = 0.0;
        for i in 0..md.m {
            ray_p = ray_p.max(self.t_m[i].abs() / md.rowscale[i]);
        }
        for j in 0..md.nn {
            let s = if j < n {
                md.colscale[j]
            } else {
                1.0 / md.rowscale[md.slack_row[j - n]]
            };
            if md.has_lo[j] {
                ray_p = ray_p.max((-self.xi[j]).max(0.0) * s);
            }
            if md.has_up[j] {
                ray_p = ray_p.max(self.xi[j].max(0.0) * s);
            }
        }
        let eps = self.st.tol_infeas;
        let primal_infeasible =
            dual_ray_obj > 0.0 && ray_d <= eps * dual_ray_obj && self.tau < self.kappa;
        let dual_infeasible =
            primal_ray_obj < 0.0 && ray_p <= eps * (-primal_ray_obj) && self.tau < self.kappa;
        let info = IterationInfo {
            iter,
            pobj,
            dobj,
            pres: pres_rel,
            dres: dres_rel,
            gap,
            mu: self.mu(),
            sigma: 0.0,
            step: 0.0,
            tau: self.tau,
            kappa: self.kappa,
            seconds: 0.0,
        };
        (info, primal_infeasible, dual_infeasible)
    }

    /// Computes the full direction for the given η and complementarity targets in
    /// `self.dsl`, `self.dsu`, `dsk`.
    fn direction(&mut self, eta: f64, dsk: f64) -> Result<(), KktError> {
        let md = self.md;
        let nn = md.nn;
        let mut rhs_g = -eta * self.r_g + dsk / self.tau;
        for j in 0..nn {
            let mut fj = -eta * self.r_d[j];
            if md.has_lo[j] {
                fj += self.dsl[j] / self.pl[j] + eta * self.dl[j] * self.r_l[j];
                rhs_g -= md.lo[j] * (self.dsl[j] / self.pl[j] + eta * self.dl[j] * self.r_l[j]);
            }
            if md.has_up[j] {
                fj -= self.dsu[j] / self.pu[j] + eta * self.du[j] * self.r_u[j];
                rhs_g += md.up[j] * (self.dsu[j] / self.pu[j] + eta * self.du[j] * self.r_u[j]);
            }
            self.f[j] = fj;
        }
        for i in 0..md.m {
            self.g[i] = -eta * self.r_p[i];
        }
        let mut dxi = std::mem::take(&mut self.dxi);
        let mut dy = std::mem::take(&mut self.dy);
        let r = self.solve_xi(&mut dxi, &mut dy);
        self.dxi = dxi;
        self.dy = dy;
        r?;
        // Δτ from the gap row
        // den = wᵀa2_ξ − bᵀa2_y − lᵀD_l l − uᵀD_u u − κ/τ, w = c + D_l l + D_u u. Using
        // K a2 = h it equals −(Σ D_l (a2_ξ − l)² + Σ D_u (u − a2_ξ)² + κ/τ) < 0, which is
        // evaluated without cancellation.
        let mut wa1 = 0.0;
        let mut den = self.kappa / self.tau;
        for j in 0..nn {
            let mut w = md.c[j];
            if md.has_lo[j] {
                w += self.dl[j] * md.lo[j];
                let t = self.a2_xi[j] - md.lo[j];
                den += self.dl[j] * t * t;
            }
            if md.has_up[j] {
                w += self.du[j] * md.up[j];
                let t = md.up[j] - self.a2_xi[j];
                den += self.du[j] * t * t;
            }
            wa1 += w * self.dxi[j];
        }
        let den = -den;
        let ba1: f64 = md.b.iter().zip(&self.dy).map(|(b, y)| b * y).sum();
        let dtau = (rhs_g - wa1 + ba1) / den;
        if !dtau.is_finite() {
            return Err(KktError::NonFinite("Δτ"));
        }
        self.dtau = dtau;
        for j in 0..nn {
            self.dxi[j] += dtau * self.a2_xi[j];
            if md.has_lo[j] {
                self.dpl[j] = self.dxi[j] - md.lo[j] * dtau + eta * self.r_l[j];
                self.dzl[j] = -(self.dsl[j] + self.zl[j] * self.dpl[j]) / self.pl[j];
            }
            if md.has_up[j] {
                self.dpu[j] = md.up[j] * dtau - self.dxi[j] + eta * self.r_u[j];
                self.dzu[j] = -(self.dsu[j] + self.zu[j] * self.dpu[j]) / self.pu[j];
            }
        }
        for i in 0..md.m {
            self.dy[i] += dtau * self.a2_y[i];
        }
        self.dkappa = -(dsk + self.kappa * dtau) / self.tau;
        Ok(())
    }

    fn max_step(&self) -> f64 {
        let md = self.md;
        let mut a: f64 = 1.0;
        let mut upd = |v: f64, d: f64| {
            if d < 0.0 {
                a = a.min(-v / d);
            }
        };
        for j in 0..md.nn {
            if md.has_lo[j] {
                upd(self.pl[j], self.dpl[j]);
                upd(self.zl[j], self.dzl[j]);
            }
            if md.has_up[j] {
                upd(self.pu[j], self.dpu[j]);
                upd(self.zu[j], self.dzu[j]);
            }
        }
        upd(self.tau, self.dtau);
        upd(self.kappa, self.dkappa);
        a
    }

    fn run(
        &mut self,
        mut log: Option<&mut (dyn Write + '_)>,
        mut callback: Option<&mut CallbackFn<'_>>,
        cancel: Option<&AtomicBool>,
        start: Instant,
    ) -> Outcome {
        let md = self.md;
        if let Some(w) = log.as_deref_mut() {
            let k = self.kkt.info();
            let _ = writeln!(
                w,
                "backend {}: KKT dim {}, nnz(K) {}, nnz(L) {}\n{:>4}  {:>16}  {:>16}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}",
                k.name,
                k.dim,
                k.matrix_nnz,
                k.factor_nnz,
                "iter",
                "pobj",
                "dobj",
                "pres",
                "dres",
                "gap",
                "mu",
                "step"
            );
        }
        let mut last = IterationInfo::default();
        if self.starting_point().is_err() {
            return Outcome {
                status: Status::NumericalError,
                reason: Some("starting point".into()),
                iterations: 0,
                last,
            };
        }
        let (mut sigma, mut step) = (0.0, 0.0);
        let mut stall = 0u32;
        let mut iter = 0u32;
        let nb1 = self.nbounds as f64 + 1.0;
        loop {
            self.residuals();
            let (mut info, pinf, dinf) = self.metrics(iter);
            info.sigma = sigma;
            info.step = step;
            info.seconds = start.elapsed().as_secs_f64();
            last = info;
            if let Some(w) = log.as_deref_mut() {
                let _ = writeln!(
                    w,
                    "{:>4}  {}  {}  {}  {}  {}  {}  {}",
                    iter,
                    Sci(info.pobj, 8, true),
                    Sci(info.dobj, 8, true),
                    Sci(info.pres, 2, false),
                    Sci(info.dres, 2, false),
                    Sci(info.gap, 2, false),
                    Sci(info.mu, 2, false),
                    Sci(info.step, 2, false)
                );
            }
            if self.st.record_history && self.history.len() < self.history.capacity() {
                self.history.push(info);
            }
            let finite = [
                info.pobj, info.dobj, info.pres, info.dres, info.mu, self.tau, self.kappa,
            ]
            .iter()
            .all(|v| v.is_finite());
            let st = &self.st;
            let status = if !finite {
                Some(Status::NumericalError)
            } else if info.pres <= st.tol_feas && info.dres <= st.tol_feas && info.gap <= st.tol_gap
            {
                Some(Status::Optimal)
            } else if pinf {
                Some(Status::PrimalInfeasible)
            } else if dinf {
                Some(Status::DualInfeasible)
            } else if iter >= st.max_iter {
                Some(Status::IterationLimit)
            } else if info.seconds >= st.time_limit
                || cancel.is_some_and(|c| c.load(Ordering::Relaxed))
                || callback
                    .as_deref_mut()
                    .is_some_and(|cb| cb(&info).is_break())
            {
                Some(Status::TimeLimit)
            } else if stall >= 5 {
                Some(Status::NumericalError)
            } else {
                None
            };
            if let Some(status) = status {
                let reason = (status == Status::NumericalError).then(|| {
                    if finite {
                        "stalled (step < 1e-8)".to_string()
                    } else {
                        "non-finite iterate".to_string()
                    }
                });
                return Outcome {
                    status,
                    reason,
                    iterations: iter,
                    last,
                };
            }
            // scalings
            for j in 0..md.nn {
                self.dl[j] = if md.has_lo[j] {
                    self.zl[j] / self.pl[j]
                } else {
                    0.0
                };
                self.du[j] = if md.has_up[j] {
                    self.zu[j] / self.pu[j]
                } else {
                    0.0
                };
            }
            if let Err(e) = self.factor() {
                return Outcome {
                    status: Status::NumericalError,
                    reason: Some(format!("factorisation: {e}")),
                    iterations: iter,
                    last,
                };
            }
            // constant right-hand side for Δτ: (c − D_l l − D_u u, b)
            for j in 0..md.nn {
                let mut v = md.c[j];
                if md.has_lo[j] {
                    v -= self.dl[j] * md.lo[j];
                }
                if md.has_up[j] {
                    v -= self.du[j] * md.up[j];
                }
                self.f[j] = v;
            }
            self.g.copy_from_slice(&md.b);
            let (mut a2x, mut a2y) = (
                std::mem::take(&mut self.a2_xi),
                std::mem::take(&mut self.a2_y),
            );
            let r = self.solve_xi(&mut a2x, &mut a2y);
            self.a2_xi = a2x;
            self.a2_y = a2y;
            if let Err(e) = r {
                return Outcome {
                    status: Status::NumericalError,
                    reason: Some(format!("solve: {e}")),
                    iterations: iter,
                    last,
                };
            }
            // predictor
            let mu = self.mu();
            for j in 0..md.nn {
                self.dsl[j] = self.pl[j] * self.zl[j];
                self.dsu[j] = self.pu[j] * self.zu[j];
            }
            if let Err(e) = self.direction(1.0, self.tau * self.kappa) {
                return Outcome {
                    status: Status::NumericalError,
                    reason: Some(format!("predictor: {e}")),
                    iterations: iter,
                    last,
                };
            }
            let a_aff = self.max_step();
            let mut mu_aff = (self.tau + a_aff * self.dtau) * (self.kappa + a_aff * self.dkappa);
            for j in 0..md.nn {
                if md.has_lo[j] {
                    mu_aff +=
                        (self.pl[j] + a_aff * self.dpl[j]) * (self.zl[j] + a_aff * self.dzl[j]);
                }
                if md.has_up[j] {
                    mu_aff +=
                        (self.pu[j] + a_aff * self.dpu[j]) * (self.zu[j] + a_aff * self.dzu[j]);
                }
            }
            mu_aff /= nb1;
            sigma = (mu_aff / mu).powi(3).clamp(0.0, 1.0);
            self.aff_dpl.copy_from_slice(&self.dpl);
            self.aff_dzl.copy_from_slice(&self.dzl);
            self.aff_dpu.copy_from_slice(&self.dpu);
            self.aff_dzu.copy_from_slice(&self.dzu);
            let (aff_dtau, aff_dkappa) = (self.dtau, self.dkappa);
            // corrector
            for j in 0..md.nn {
                self.dsl[j] = if md.has_lo[j] {
                    self.pl[j] * self.zl[j] + self.aff_dpl[j] * self.aff_dzl[j] - sigma * mu
                } else {
                    0.0
                };
                self.dsu[j] = if md.has_up[j] {
                    self.pu[j] * self.zu[j] + self.aff_dpu[j] * self.aff_dzu[j] - sigma * mu
                } else {
                    0.0
                };
            }
            let dsk = self.tau * self.kappa + aff_dtau * aff_dkappa - sigma * mu;
            if let Err(e) = self.direction(1.0 - sigma, dsk) {
                return Outcome {
                    status: Status::NumericalError,
                    reason: Some(format!("corrector: {e}")),
                    iterations: iter,
                    last,
                };
            }
            let alpha = (self.st.step_fraction * self.max_step()).min(1.0);
            for j in 0..md.nn {
                self.xi[j] += alpha * self.dxi[j];
                if md.has_lo[j] {
                    self.pl[j] += alpha * self.dpl[j];
                    self.zl[j] += alpha * self.dzl[j];
                }
                if md.has_up[j] {
                    self.pu[j] += alpha * self.dpu[j];
                    self.zu[j] += alpha * self.dzu[j];
                }
            }
            for i in 0..md.m {
                self.y[i] += alpha * self.dy[i];
            }
            self.tau += alpha * self.dtau;
            self.kappa += alpha * self.dkappa;
            step = alpha;
            stall = if alpha < 1e-8 { stall + 1 } else { 0 };
            iter += 1;
        }
    }

    fn finish(self, p: &LpProblem, out: Outcome, start: Instant) -> Solution {
        let md = self.md;
        let n0 = p.num_vars();
        let m0 = p.num_rows();
        let sgn = if p.sense == Sense::Maximize {
            -1.0
        } else {
            1.0
        };
        let ray_p = out.status == Status::DualInfeasible;
        let ray_d = out.status == Status::PrimalInfeasible;
        let tx = if ray_p { 1.0 } else { self.tau };
        let ty = if ray_d { 1.0 } else { self.tau };
        let mut x = vec![0.0; n0];
        for j in 0..n0 {
            if !md.fixed_x[j].is_nan() && !ray_p {
                x[j] = md.fixed_x[j];
            }
        }
        for (k, &j) in md.col_orig.iter().enumerate() {
            x[j] = md.colscale[k] * self.xi[k] / tx;
        }
        let mut y = vec![0.0; m0];
        for (k, &i) in md.row_orig.iter().enumerate() {
            y[i] = sgn * md.cscale * md.rowscale[k] * self.y[k] / ty;
        }
        if ray_p {
            let s = inf_norm(&x);
            if s > 0.0 {
                x.iter_mut().for_each(|v| *v /= s);
            }
        }
        if ray_d {
            let s = inf_norm(&y);
            if s > 0.0 {
                y.iter_mut().for_each(|v| *v /= s);
            }
        }
        let mut z = if ray_d { vec![0.0; n0] } else { p.c.clone() };
        let mut aty = vec![0.0; n0];
        p.a.mul_t_add(&y, &mut aty);
        for j in 0..n0 {
            z[j] -= aty[j];
        }
        let mut history = self.history;
        history.shrink_to_fit();
        Solution {
            status: out.status,
            x,
            row_duals: y,
            reduced_costs: z,
            objective: sgn * out.last.pobj,
            dual_objective: sgn * out.last.dobj,
            primal_residual: out.last.pres,
            dual_residual: out.last.dres,
            gap: out.last.gap,
            iterations: out.iterations,
            seconds: start.elapsed().as_secs_f64(),
            kkt: self.kkt.info(),
            history,
        }
    }
}
