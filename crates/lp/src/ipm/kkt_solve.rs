//! Products with `Ã = [A, −I_ineq]` and the solve of the reduced Newton system
//! `[−D Ãᵀ; Ã 0]`: the backend diagonals `D_x` (a proximal `ρ` for free variables) and
//! `E = D_s⁻¹`, the backend solve, iterative refinement against the exact operator, and
//! the slack part of `Δξ` (`ipm` module docs, section "Newton step"; [`crate::kkt`]).

use super::engine::Engine;
use super::inf_norm;
use crate::error::KktError;
use crate::kkt::RowKind;
use crate::presolve::Model;

impl<'m, 'b> Engine<'m, 'b> {
    /// `out = Ãξ` (length m).
    pub(super) fn mul_at(md: &Model, xi: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        md.a.mul_add(&xi[..md.n], out);
        for (k, &i) in md.slack_row.iter().enumerate() {
            out[i] -= xi[md.n + k];
        }
    }

    /// `out = Ãᵀy` (length nn).
    pub(super) fn mul_att(md: &Model, y: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        md.a.mul_t_add(y, &mut out[..md.n]);
        for (k, &i) in md.slack_row.iter().enumerate() {
            out[md.n + k] = -y[i];
        }
    }

    /// Sets the backend diagonals from `D = dl + du` and factors.
    pub(super) fn factor(&mut self) -> Result<(), KktError> {
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

    /// `ξᵀe_ξ − yᵀe_y` for the residual `e = (f, g) − [−D Ãᵀ; Ã 0] (ξ, y)` of a solution
    /// computed by [`Self::solve_xi`] against the exact operator (`D = 0` for free
    /// variables); `self.f`, `self.g` must still hold the right-hand side. Where the
    /// operator is singular (dependent equality rows, dependent free columns) the solve
    /// is one of the regularised operator and `e ≈ (−ρξ_free − δ_xξ, δ_y y)`, so the value
    /// is about `−ρ‖ξ_free‖² − δ_x‖ξ‖² − δ_y‖y‖² ≤ 0`; otherwise it is at rounding level.
    pub(super) fn residual_dot(&mut self, xi: &[f64], y: &[f64]) -> f64 {
        let md = self.md;
        Self::mul_at(md, xi, &mut self.t_m);
        Self::mul_att(md, y, &mut self.t_n);
        let mut s = 0.0;
        for j in 0..md.nn {
            let d = if j < md.n {
                self.var_exact[j]
            } else {
                self.dl[j] + self.du[j]
            };
            s += xi[j] * (self.f[j] + d * xi[j] - self.t_n[j]);
        }
        self.t_n.fill(0.0);
        for i in 0..md.m {
            s -= y[i] * (self.g[i] - self.t_m[i]);
        }
        s
    }

    /// Solves `[−D Ãᵀ; Ã 0] [out_xi; out_y] = [self.f; self.g]` via the backend system
    /// and iterative refinement against the exact operator.
    pub(super) fn solve_xi(
        &mut self,
        out_xi: &mut [f64],
        out_y: &mut [f64],
    ) -> Result<(), KktError> {
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
}
