//! Matrix-free products with the exact operator: `H z` (whole, or on the two example halves as
//! used by the refinement), `G z`, `Gᵀ y`, and the dense assembly of `H + δI` for tests.

use core::ops::Range;

use super::cols::{Cols, Ident};
use super::refine::norm2;
use super::{DsxScalings, DsxSystem};

impl DsxSystem<'_> {
    /// `out = H z` with the exact operator (no static regularisation), matrix-free in
    /// `O(nnz)`. Panics if the lengths are wrong or the scalings do not match the system.
    pub fn apply(&self, sc: &DsxScalings<'_>, z: &[f64], out: &mut [f64]) {
        assert_eq!(z.len(), self.len(), "z has the wrong length");
        assert_eq!(out.len(), self.len(), "out has the wrong length");
        assert_eq!(sc.theta.len(), self.m, "theta has the wrong length");
        assert!(
            sc.phi.check_len("phi", &self.indptr).is_ok(),
            "phi has the wrong length"
        );
        assert!(
            sc.sigma.check_len("sigma", &self.indptr).is_ok(),
            "sigma has the wrong length"
        );
        assert_eq!(sc.w_diag.len(), self.n, "w_diag has the wrong length");
        if self.dense {
            self.apply_impl(sc, z, out, |_, _| Ident);
        } else {
            self.apply_impl(sc, z, out, |idx, r| &idx[r]);
        }
    }

    fn apply_impl<'s, C: Cols + 's>(
        &'s self,
        sc: &DsxScalings<'_>,
        z: &[f64],
        out: &mut [f64],
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C,
    ) {
        let n = self.n;
        let n1 = n + 1;
        let (zb, zl) = z.split_at(n1);
        let (ob, ol) = out.split_at_mut(n1);
        for j in 0..n {
            ob[j] = sc.w_diag[j] * zb[j];
        }
        ob[n] = sc.b_diag * zb[n];
        self.apply_range::<C, false>(sc, (0, self.m), zb, zl, &[], ol, ob, &cols_of);
    }

    /// The examples `i0..i1` of `H z` (their tails `zl`, `rl`, `ol` start at example `i0`):
    /// writes their tail rows of `H z` — or, with `RES`, of `r − H z` — into `ol`, adds their
    /// `(w, b)` contributions to `acc`, and returns the sum of squares of what it wrote when
    /// `RES` (else 0).
    #[allow(clippy::too_many_arguments)]
    fn apply_range<'s, C: Cols + 's, const RES: bool>(
        &'s self,
        sc: &DsxScalings<'_>,
        (i0, i1): (usize, usize),
        zb: &[f64],
        zl: &[f64],
        rl: &[f64],
        ol: &mut [f64],
        acc: &mut [f64],
        cols_of: &impl Fn(&'s [usize], Range<usize>) -> C,
    ) -> f64 {
        let n = self.n;
        let mut off = 0;
        let mut sq = 0.0;
        for i in i0..i1 {
            let r = self.nz_range(i);
            let k = r.len();
            let cols = cols_of(&self.indices, r.clone());
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let phi = sc.phi.example(i, r.clone());
            let sigma = sc.sigma.example(i, r);
            let u = &zl[off..off + k + 2];
            let o = &mut ol[off..off + k + 2];
            let (lam, xi) = (u[k], u[k + 1]);
            // row a_i: P_i λ − Σ α + y b + ξ
            let mut act = self.p_eff[i] * lam + yi * zb[n] + xi;
            for a in 0..k {
                act -= u[a];
            }
            let ta = sc.theta[i] * act;
            let mut ol_lam = sc.rho[i] * lam + self.p_eff[i] * ta;
            for a in 0..k {
                let j = cols.at(a);
                // row b_ij: y x_ij w_j − v_j λ + α_ij
                let xa = self.scale * x[a];
                let fb = phi.at(a) * (yi * xa * zb[j] - self.v[j] * lam + u[a]);
                let h = sigma.at(a) * u[a] - ta + fb;
                if RES {
                    let e = rl[off + a] - h;
                    o[a] = e;
                    sq += e * e;
                } else {
                    o[a] = h;
                }
                ol_lam -= self.v[j] * fb;
                acc[j] += yi * xa * fb;
            }
            let hx = sc.kappa[i] * xi + ta;
            if RES {
                let (el, ex) = (rl[off + k] - ol_lam, rl[off + k + 1] - hx);
                o[k] = el;
                o[k + 1] = ex;
                sq += el * el + ex * ex;
            } else {
                o[k] = ol_lam;
                o[k + 1] = hx;
            }
            acc[n] += yi * ta;
            off += k + 2;
        }
        sq
    }

    /// `H z` (`RES = false`) or `r − H z` (`RES = true`, returning `‖r − H z‖₂`) into `out`,
    /// on the two example halves of the solve passes (two threads when the settings allow;
    /// each half accumulates its own `(w, b)` part and the two are added in order, so the
    /// result is the same bits either way).
    pub(super) fn apply_halves<const RES: bool>(
        &mut self,
        sc: &DsxScalings<'_>,
        z: &[f64],
        r: &[f64],
        out: &mut [f64],
    ) -> f64 {
        let mut part = core::mem::take(&mut self.rb_part);
        let res = if self.dense {
            self.apply_halves_impl::<_, RES>(sc, z, r, out, &mut part, |_, _| Ident)
        } else {
            self.apply_halves_impl::<_, RES>(sc, z, r, out, &mut part, |idx, r| &idx[r])
        };
        self.rb_part = part;
        res
    }

    fn apply_halves_impl<'s, C: Cols + 's, const RES: bool>(
        &'s self,
        sc: &DsxScalings<'_>,
        z: &[f64],
        r: &[f64],
        out: &mut [f64],
        part: &mut [f64],
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C + Sync,
    ) -> f64 {
        let n = self.n;
        let n1 = n + 1;
        let mid = self.solve_mid;
        let cut = self.indptr[mid] + 2 * mid;
        let par = self.settings.threads >= 2 && self.m >= 2;
        let (zb, zl) = z.split_at(n1);
        let (ob, ol) = out.split_at_mut(n1);
        let (rb, rl) = if RES {
            r.split_at(n1)
        } else {
            (&[][..], &[][..])
        };
        let (rl_a, rl_b) = if RES { rl.split_at(cut) } else { (rl, rl) };
        let (zl_a, zl_b) = zl.split_at(cut);
        let (ol_a, ol_b) = ol.split_at_mut(cut);
        ob.fill(0.0);
        part.fill(0.0);
        let (h0, h1) = ((0, mid), (mid, self.m));
        let (sq_a, sq_b) = {
            let (ob, part) = (&mut *ob, &mut *part);
            let cols = &cols_of;
            if par {
                rayon::join(
                    || self.apply_range::<C, RES>(sc, h0, zb, zl_a, rl_a, ol_a, ob, cols),
                    || self.apply_range::<C, RES>(sc, h1, zb, zl_b, rl_b, ol_b, part, cols),
                )
            } else {
                (
                    self.apply_range::<C, RES>(sc, h0, zb, zl_a, rl_a, ol_a, ob, cols),
                    self.apply_range::<C, RES>(sc, h1, zb, zl_b, rl_b, ol_b, part, cols),
                )
            }
        };
        let mut sq = sq_a + sq_b;
        for j in 0..n1 {
            let d = if j < n { sc.w_diag[j] } else { sc.b_diag };
            let h = d * zb[j] + (ob[j] + part[j]);
            if RES {
                let e = rb[j] - h;
                ob[j] = e;
                sq += e * e;
            } else {
                ob[j] = h;
            }
        }
        if !RES {
            return 0.0;
        }
        // the plain sum of squares unless it over- or underflowed
        if sq.is_finite() && sq > 1e-280 {
            sq.sqrt()
        } else {
            norm2(out)
        }
    }

    /// `out = G z` (row activities, length [`DsxSystem::n_rows`]): per example `i`, at
    /// [`DsxSystem::row_offset`]`(i)`, row `a_i = P_i λ_i − Σ α_ij + y_i b + ξ_i`, then rows
    /// `b_ij = y_i x_ij w_j − v_j λ_i + α_ij` in increasing `j`. `O(nnz)`.
    pub fn rows_apply(&self, z: &[f64], out: &mut [f64]) {
        assert_eq!(z.len(), self.len(), "z has the wrong length");
        assert_eq!(out.len(), self.n_rows(), "out has the wrong length");
        let n = self.n;
        let (zb, zl) = z.split_at(n + 1);
        let mut off = 0;
        for i in 0..self.m {
            let r = self.nz_range(i);
            let k = r.len();
            let ro = self.row_offset(i);
            let u = &zl[off..off + k + 2];
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let mut act = self.p_eff[i] * u[k] + yi * zb[n] + u[k + 1];
            for (a, j) in self.support(i).enumerate() {
                act -= u[a];
                out[ro + 1 + a] = yi * (self.scale * x[a]) * zb[j] - self.v[j] * u[k] + u[a];
            }
            out[ro] = act;
            off += k + 2;
        }
    }

    /// `out = Gᵀ yv` (length [`DsxSystem::len`]) for row values `yv` ordered as in
    /// [`DsxSystem::rows_apply`]. `O(nnz)`.
    pub fn rows_apply_transpose(&self, yv: &[f64], out: &mut [f64]) {
        assert_eq!(yv.len(), self.n_rows(), "yv has the wrong length");
        assert_eq!(out.len(), self.len(), "out has the wrong length");
        let n = self.n;
        let (ob, ol) = out.split_at_mut(n + 1);
        ob.iter_mut().for_each(|e| *e = 0.0);
        let mut off = 0;
        for i in 0..self.m {
            let r = self.nz_range(i);
            let k = r.len();
            let ro = self.row_offset(i);
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let ya = yv[ro];
            let o = &mut ol[off..off + k + 2];
            let mut lam = self.p_eff[i] * ya;
            for (a, j) in self.support(i).enumerate() {
                let yb = yv[ro + 1 + a];
                o[a] = -ya + yb;
                lam -= self.v[j] * yb;
                ob[j] += yi * (self.scale * x[a]) * yb;
            }
            o[k] = lam;
            o[k + 1] = ya;
            ob[n] += yi * ya;
            off += k + 2;
        }
    }

    /// Dense assembly of `H + δ I` (for tests and debugging on small instances: `O(len²)`
    /// memory).
    pub fn assemble_dense(&self, sc: &DsxScalings<'_>, delta: f64) -> faer::Mat<f64> {
        let len = self.len();
        let mut h = faer::Mat::<f64>::zeros(len, len);
        let mut e = vec![0.0; len];
        let mut col = vec![0.0; len];
        for c in 0..len {
            e[c] = 1.0;
            self.apply(sc, &e, &mut col);
            e[c] = 0.0;
            for rr in 0..len {
                h[(rr, c)] = col[rr];
            }
            h[(c, c)] += delta;
        }
        h
    }
}
