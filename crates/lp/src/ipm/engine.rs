//! The IPM state ([`Engine`], allocated once) and the predictor–corrector loop
//! ([`Engine::run`]). Each iteration: residuals and the termination tests, the scalings
//! `D_l = Z_l P_l⁻¹`, `D_u = Z_u P_u⁻¹`, one factorisation, the solve for the `τ` column
//! `(c − D_l l − D_u u, b)`, the predictor (`η = 1`, `σ = 0`), `σ = (μ_aff/μ)³`, the
//! corrector (`η = 1 − σ`, Mehrotra's second-order term) and the common step
//! `α = min(1, step_fraction · α_max)`; the equations are in the `ipm` module docs, section
//! "Newton step".

use super::CallbackFn;
use crate::kkt::KktBackend;
use crate::presolve::Model;
use crate::settings::IpmSettings;
use crate::solution::{IterationInfo, Status};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub(super) struct Outcome {
    pub(super) status: Status,
    pub(super) reason: Option<String>,
    pub(super) iterations: u32,
    pub(super) last: IterationInfo,
}

/// All IPM state; allocated once in `new`, the loop allocates nothing.
pub(super) struct Engine<'m, 'b> {
    pub(super) md: &'m Model,
    pub(super) kkt: &'b mut (dyn KktBackend + 'b),
    pub(super) st: IpmSettings,
    // iterate
    pub(super) xi: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) zl: Vec<f64>,
    pub(super) zu: Vec<f64>,
    pub(super) pl: Vec<f64>,
    pub(super) pu: Vec<f64>,
    pub(super) tau: f64,
    pub(super) kappa: f64,
    // residuals
    pub(super) r_p: Vec<f64>,
    pub(super) r_l: Vec<f64>,
    pub(super) r_u: Vec<f64>,
    pub(super) r_d: Vec<f64>,
    pub(super) r_g: f64,
    // scalings
    pub(super) dl: Vec<f64>,
    pub(super) du: Vec<f64>,
    pub(super) var_diag: Vec<f64>,
    pub(super) row_diag: Vec<f64>,
    // directions
    pub(super) a2_xi: Vec<f64>,
    pub(super) a2_y: Vec<f64>,
    pub(super) dxi: Vec<f64>,
    pub(super) dy: Vec<f64>,
    pub(super) dzl: Vec<f64>,
    pub(super) dzu: Vec<f64>,
    pub(super) dpl: Vec<f64>,
    pub(super) dpu: Vec<f64>,
    pub(super) dtau: f64,
    pub(super) dkappa: f64,
    // affine copies for the corrector
    pub(super) aff_dzl: Vec<f64>,
    pub(super) aff_dzu: Vec<f64>,
    pub(super) aff_dpl: Vec<f64>,
    pub(super) aff_dpu: Vec<f64>,
    // complementarity targets
    pub(super) dsl: Vec<f64>,
    pub(super) dsu: Vec<f64>,
    // solve scratch
    pub(super) f: Vec<f64>,
    pub(super) g: Vec<f64>,
    pub(super) rx: Vec<f64>,
    pub(super) ry: Vec<f64>,
    pub(super) sx: Vec<f64>,
    pub(super) sy: Vec<f64>,
    pub(super) ex: Vec<f64>,
    pub(super) ey: Vec<f64>,
    pub(super) px: Vec<f64>,
    pub(super) py: Vec<f64>,
    pub(super) t_m: Vec<f64>,
    pub(super) t_n: Vec<f64>,
    pub(super) history: Vec<IterationInfo>,
    pub(super) nbounds: usize,
    pub(super) last_refine_res: f64,
    pub(super) rho: f64,
    pub(super) rho_exact: f64,
    pub(super) var_exact: Vec<f64>,
    /// `a2_ξᵀe_ξ − a2_yᵀe_y` for the residual `e` of the refined `τ`-column solve; enters
    /// the `Δτ` denominator (see `direction`)
    pub(super) a2_err: f64,
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

impl<'m, 'b> Engine<'m, 'b> {
    pub(super) fn new(md: &'m Model, kkt: &'b mut (dyn KktBackend + 'b), st: &IpmSettings) -> Self {
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
            a2_err: 0.0,
        }
    }

    pub(super) fn run(
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
            self.a2_err = self.residual_dot(&a2x, &a2y);
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
}
