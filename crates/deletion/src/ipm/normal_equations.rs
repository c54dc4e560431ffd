//! The normal equations `H = GᵀΘG + D` of a Newton step (DSX eqs. (13)–(21)): the scalings
//! gathered from the iterate, one factorisation of `H` per iteration by
//! [`bulwark_linalg::DsxSystem`], and solves refined against the exact operator when needed.

use std::time::Instant;

use bulwark_linalg::DynamicRegularization;

use super::parallel::{jobs, parts, parts_mut};
use super::{Dir, DsxIpm, DsxIpmSettings};
use crate::error::Result;

/// Levels the dynamic regularisation is raised by at most in one iteration before a non-finite
/// direction ends the run (module docs, *Regularisation*).
pub(super) const MAX_BOOST: u8 = 3;

/// The dynamic regularisation of `S` at `level` (module docs, *Regularisation*): the settings'
/// `ε` and `δ`, each raised 100× per level (level 0: the settings' own).
pub(super) fn regularization(settings: &DsxIpmSettings, level: u8) -> DynamicRegularization {
    let raise = 100f64.powi(i32::from(level));
    DynamicRegularization {
        epsilon: settings.dynamic_regularization_epsilon * raise,
        delta: settings.dynamic_regularization_delta * raise,
    }
}

impl DsxIpm<'_> {
    /// Gathers the scalings into the layout of [`bulwark_linalg::DsxScalings`] and factors `H`.
    pub(super) fn factor(&mut self) -> Result<()> {
        let t = Instant::now();
        let lp = self.lp;
        for j in 0..self.n {
            // (+ q: the Hessian of a quadratic term, module docs, *FDROP*)
            self.sc.wd[j] = self.zl[j] / self.pl[j] + self.zu[j] / self.pu[j] + self.quad;
        }
        let t0 = self.t0();
        let p = self.parts;
        let (s, y) = (parts(&self.s, &p.rows), parts(&self.y, &p.rows));
        let (u, z) = (parts(&self.u[t0..], &p.tail), parts(&self.z[t0..], &p.tail));
        let mut theta = parts_mut(&mut self.sc.theta, &p.ex);
        let mut rho = parts_mut(&mut self.sc.rho, &p.ex);
        let mut kappa = parts_mut(&mut self.sc.kappa, &p.ex);
        let mut phi = parts_mut(&mut self.sc.phi, &p.nz);
        let work = jobs(|k| {
            (
                k,
                (s[k], y[k], u[k], z[k]),
                (
                    std::mem::take(&mut theta[k]),
                    std::mem::take(&mut rho[k]),
                    std::mem::take(&mut kappa[k]),
                    std::mem::take(&mut phi[k]),
                ),
            )
        });
        self.exec.run(work, |(k, (s, y, u, z), sc)| {
            let (theta, rho, kappa, phi) = sc;
            let (e0, nz_base) = (p.ex[k], p.nz[k]);
            for i in e0..p.ex[k + 1] {
                let (r0, a0) = p.local(lp, k, i);
                let kk = lp.support_len(i);
                let nz0 = lp.indptr[i] - nz_base;
                // Θ = y/s on the rows, D = z/u on the tail (module docs), as `y · (1/s)`: the
                // passes that read `1/s` and `1/u` compute them the same way (none is stored;
                // nor is `σ` of the α_ij, which `DsxSystem` computes where it reads it: `Scal`)
                theta[i - e0] = y[r0] * (1.0 / s[r0]);
                let (yb, sb) = (&y[r0 + 1..r0 + 1 + kk], &s[r0 + 1..r0 + 1 + kk]);
                for ((o, y), s) in phi[nz0..nz0 + kk].iter_mut().zip(yb).zip(sb) {
                    *o = y * (1.0 / s);
                }
                rho[i - e0] = z[a0 + kk] * (1.0 / u[a0 + kk]);
                kappa[i - e0] = z[a0 + kk + 1] * (1.0 / u[a0 + kk + 1]);
            }
        });
        // a cap's bound term on λ (module docs, *Zero budget*), like the box's on w
        for &i in &self.capped {
            let l = self.lam_index(i);
            self.sc.rho[i] += self.zc[i] / (self.cap[i] - self.u[l]);
        }
        let view = self.sc.view(self.n, (&self.u, &self.z));
        let sys = &mut self.sys;
        let info = self.exec.install(|| sys.factor(&view))?;
        // A factorisation without regularised or clamped pivots is trusted for the early,
        // loose solves; otherwise (and once the residuals are small) the first solve is checked.
        self.clean_factor = info.regularized_pivots == 0 && info.clamped_diagonals == 0;
        self.checked_solve = false;
        self.factor_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Factors again with the dynamic regularisation of `S` raised `level` steps (module docs,
    /// *Regularisation*): `ε` and `δ` each 100× per level. [`DsxIpm::restore_regularization`]
    /// puts the settings' values back before the next iteration's factorisation.
    pub(super) fn refactor_raised(&mut self, level: u8) -> Result<()> {
        self.sys
            .set_dynamic_regularization(Some(regularization(&self.settings, level)))?;
        self.boost = level;
        self.boosts += 1;
        self.factor()
    }

    /// The settings' dynamic regularisation again after [`DsxIpm::refactor_raised`].
    pub(super) fn restore_regularization(&mut self) -> Result<()> {
        if self.boost > 0 {
            self.sys
                .set_dynamic_regularization(Some(regularization(&self.settings, 0)))?;
            self.boost = 0;
        }
        Ok(())
    }

    /// Solves `H d.u = self.rhs` to the relative accuracy `tol` (2-norm), with `d.s`, `d.y` and
    /// `d.z` as the work vectors of a refined solve (their contents are lost). Early on (loose `tol`,
    /// clean factorisation) it is a plain direct solve. Otherwise the first solve after a
    /// factorisation measures the residual
    /// against the exact operator and refines by PCG when it exceeds `tol`; later solves with
    /// the same factorisation skip the check (one `O(nnz)` product each) unless the first one
    /// needed refinement.
    pub(super) fn solve_h(&mut self, d: &mut Dir, tol: f64) -> Result<()> {
        let t = Instant::now();
        let st = &self.settings;
        let (loose, max_pcg, accept) = (st.loose_solve_tol, st.max_pcg, st.direct_solve_accept);
        if self.checked_solve || (self.clean_factor && tol >= loose) {
            // the right-hand side becomes the solution in place (`newton_rhs` rewrites every
            // entry of `rhs` before the next solve)
            std::mem::swap(&mut d.u, &mut self.rhs);
            let it = (&self.u[..], &self.z[..]);
            let (view, sys) = (self.sc.view(self.n, it), &mut self.sys);
            self.exec.install(|| sys.solve_in_place(&view, &mut d.u))?;
        } else {
            let it = (&self.u[..], &self.z[..]);
            let (view, rhs, sys) = (self.sc.view(self.n, it), &self.rhs, &mut self.sys);
            let work = [&mut d.s[..], &mut d.y[..], &mut d.z[..]];
            let out = &mut d.u;
            let info = self
                .exec
                .install(|| sys.solve_refined_in(&view, rhs, out, tol, max_pcg, work))?;
            // later solves with this factorisation skip the check only when the direct solve was
            // accurate. (Skipping it also after a stagnated PCG saved its products at MNIST
            // scale but let the dual residual of sparse 3000 × 300 at 50 % grow from 1e-9 to
            // 4e-6 at the optimum: 117 iterations and a fallback instead of 48.)
            self.checked_solve = info.iterations == 0 && info.relative_residual <= accept * tol;
        }
        self.solve_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use bulwark_core::{Dataset, DenseMatrix, FeatureBudget, Sign, rng_from_seed};
    use rand::Rng;

    use super::super::{Dir, DsxIpm, DsxIpmSettings, IpmOptions};
    use super::MAX_BOOST;
    use crate::layout::Lp4;

    /// The raised regularisation (module docs of `ipm`, *Regularisation*) changes the
    /// factorisation the directions come from, not what they solve: near the optimum of a
    /// random LP, a direction from the factor raised by every level, refined against the exact
    /// operator, matches the settings' own to the solve tolerance; the level and count are
    /// kept, and restoring gives the settings' factor again, to the bit.
    #[test]
    fn raised_regularization_solves_the_same_system() {
        let mut rng = rng_from_seed(7);
        let (m, n) = (80, 12);
        let rows: Vec<Vec<f64>> = (0..m)
            .map(|_| (0..n).map(|_| rng.random_range(-1.0..1.0)).collect())
            .collect();
        let y = (0..m)
            .map(|i| {
                if rows[i][0] + 0.3 * rows[i][1] > 0.0 {
                    Sign::Pos
                } else {
                    Sign::Neg
                }
            })
            .collect();
        let d = Dataset::binary("r", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap();
        let fb = FeatureBudget::uniform(n, 2.0).unwrap();
        let lp = Lp4::new(&d, &fb, 1.0).unwrap();
        let mut ipm = DsxIpm::new(&lp, Some(1), &DsxIpmSettings::default()).unwrap();
        let opts = IpmOptions {
            tolerance: 1e-8,
            max_iter: 200,
            time_limit: f64::INFINITY,
        };
        let out = ipm.run(opts, None).unwrap();
        assert_eq!(out.status, bulwark_lp::Status::Optimal, "{out:?}");
        assert_eq!(out.regularization_boosts, 0);
        let len = ipm.len;
        let rhs: Vec<f64> = (0..len).map(|_| rng.random_range(-1.0..1.0)).collect();
        let solve = |ipm: &mut DsxIpm<'_>| {
            ipm.rhs.copy_from_slice(&rhs);
            let mut d = Dir::new(len, ipm.rows, n, m);
            ipm.solve_h(&mut d, 1e-12).unwrap();
            d.u
        };
        ipm.factor().unwrap();
        let base = solve(&mut ipm);
        let scale = base.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for level in 1..=MAX_BOOST {
            ipm.refactor_raised(level).unwrap();
            assert_eq!(ipm.boost, level);
            let raised = ipm.sys.settings().dynamic_regularization.unwrap();
            let f = 100f64.powi(i32::from(level));
            assert_eq!(
                raised.delta,
                DsxIpmSettings::default().dynamic_regularization_delta * f
            );
            let z = solve(&mut ipm);
            let diff = z
                .iter()
                .zip(&base)
                .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
            assert!(
                diff <= 1e-6 * scale,
                "level {level}: {diff:e} against {scale:e}"
            );
        }
        assert_eq!(ipm.boosts, u32::from(MAX_BOOST));
        ipm.restore_regularization().unwrap();
        assert_eq!(ipm.boost, 0);
        ipm.factor().unwrap();
        assert_eq!(solve(&mut ipm), base);
    }
}
