//! Mehrotra's starting point (Mehrotra 1992): least-norm primal and dual
//! solutions with `D = I`, shifted into the positive orthant and floored at
//! `START_FLOOR` (`ipm` module docs, section "Newton step").

use super::engine::Engine;
use crate::error::KktError;

const START_FLOOR: f64 = 0.1;

impl<'m, 'b> Engine<'m, 'b> {
    pub(super) fn starting_point(&mut self) -> Result<(), KktError> {
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
}
