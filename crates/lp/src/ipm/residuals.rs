//! Residuals of the homogeneous self-dual embedding (`r_P, r_L, r_U, r_D, r_G`; `ipm`
//! module docs, section "Formulation"), the complementarity measure `μ`, and the unscaled
//! termination measures and infeasibility certificate tests (section "Termination").

use super::engine::Engine;
use crate::solution::IterationInfo;

impl<'m, 'b> Engine<'m, 'b> {
    pub(super) fn residuals(&mut self) {
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

    pub(super) fn mu(&self) -> f64 {
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
    pub(super) fn metrics(&mut self, iter: u32) -> (IterationInfo, bool, bool) {
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
}
