//! The Newton direction for one right-hand side (`η` and complementarity targets): the
//! reduced solve, `Δτ` from the gap row, then `Δp`, `Δz`, `Δκ` (`ipm` module docs,
//! section "Newton step"); and the largest step that keeps `(p, z, τ, κ) ≥ 0`.

use super::engine::Engine;
use crate::error::KktError;

impl<'m, 'b> Engine<'m, 'b> {
    /// Computes the full direction for the given η and complementarity targets in
    /// `self.dsl`, `self.dsu`, `dsk`.
    pub(super) fn direction(&mut self, eta: f64, dsk: f64) -> Result<(), KktError> {
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
        // den = wᵀa2_ξ − bᵀa2_y − lᵀD_l l − uᵀD_u u − κ/τ, w = c + D_l l + D_u u. With
        // the residual e = h − K a2 of the computed a2 it equals
        // −(Σ D_l (a2_ξ − l)² + Σ D_u (u − a2_ξ)² + κ/τ) + a2_ξᵀe_ξ − a2_yᵀe_y, which is
        // evaluated without cancellation. The residual term is at rounding level unless K
        // is singular; then a2 solves the regularised operator, a2_y (or a2_ξ) is of order
        // 1/δ along the null space and so is the term (≤ 0): dropping it would make Δτ
        // inconsistent with the gap row, with huge, useless directions (rank-deficient
        // infeasible problems stalled that way).
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
        let den = -den + self.a2_err;
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

    pub(super) fn max_step(&self) -> f64 {
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
}
