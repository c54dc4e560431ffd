//! The direct solve with the factorisation (DSX eqs. (15)–(18), with the corrected (18)): the
//! per-example solve and the two passes over the examples, on one or two threads.

use core::ops::Range;

use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{MatMut, MatRef};

use super::cols::{Cols, Ident};
use super::example::NO_REC;
use super::{DsxScalings, DsxSystem, NormalEquations, PairScaling};
use crate::error::{LinalgError, Result, check_len};

impl DsxSystem<'_> {
    /// Solves the augmented per-example system `K_i [u; μ] = [r; rμ]` in place on
    /// `u = (α_i, λ_i, ξ_i)` (length `|S_i| + 2`) and returns `μ`. Without the μ row this is
    /// `u ← H_ii⁻¹ u` (DSX eq. (15) with (19)–(21)): the arrow part `(Δ, κ)` is eliminated
    /// without fill-in, then the 2×2 corner on `(λ, μ)` is solved with the stored `C2⁻¹`.
    #[inline]
    fn example_solve<C: Cols>(
        &self,
        i: usize,
        r: Range<usize>,
        cols: C,
        phi: &[f64],
        u: &mut [f64],
        r_mu: f64,
    ) -> f64 {
        let k = r.len();
        let e = self.ex[i];
        let inv_delta = &self.inv_delta[r];
        let v = &self.v;
        let (ua, rest) = u.split_at_mut(k);
        // forward: y_d = A_d⁻¹ r_d ; r̂_c = r_c − Bᵀ y_d, B rows: α_j → (−φ v, −1), ξ → (0, 1)
        let mut rl = rest[0];
        let mut rm = r_mu;
        if C::CONTIGUOUS {
            // dense rows: four-lane accumulators so the loop vectorises
            let (c4, vv) = (k / 4 * 4, &v[..k]);
            let (mut l4, mut m4) = ([0.0f64; 4], [0.0f64; 4]);
            for (((u4, i4), p4), v4) in ua[..c4]
                .chunks_exact_mut(4)
                .zip(inv_delta[..c4].chunks_exact(4))
                .zip(phi[..c4].chunks_exact(4))
                .zip(vv[..c4].chunks_exact(4))
            {
                for l in 0..4 {
                    let ya = u4[l] * i4[l];
                    u4[l] = ya;
                    l4[l] += p4[l] * v4[l] * ya;
                    m4[l] += ya;
                }
            }
            rl += (l4[0] + l4[1]) + (l4[2] + l4[3]);
            rm += (m4[0] + m4[1]) + (m4[2] + m4[3]);
            for a in c4..k {
                let ya = ua[a] * inv_delta[a];
                ua[a] = ya;
                rl += phi[a] * vv[a] * ya;
                rm += ya;
            }
        } else {
            // four independent accumulators: the sums are latency-bound chains otherwise
            let c4 = k / 4 * 4;
            let (mut l4, mut m4) = ([0.0f64; 4], [0.0f64; 4]);
            let mut a = 0;
            while a < c4 {
                for l in 0..4 {
                    let ya = ua[a + l] * inv_delta[a + l];
                    ua[a + l] = ya;
                    l4[l] += phi[a + l] * v[cols.at(a + l)] * ya;
                    m4[l] += ya;
                }
                a += 4;
            }
            rl += (l4[0] + l4[1]) + (l4[2] + l4[3]);
            rm += (m4[0] + m4[1]) + (m4[2] + m4[3]);
            for a in c4..k {
                let ya = ua[a] * inv_delta[a];
                ua[a] = ya;
                rl += phi[a] * v[cols.at(a)] * ya;
                rm += ya;
            }
        }
        let yx = rest[1] * e.inv_kappa;
        rm -= yx;
        // corner: x_c = C2⁻¹ r̂_c
        let xl = e.p11 * rl - e.p12 * rm;
        let xm = -e.p12 * rl - e.p22 * rm;
        // backward: x_d = y_d − A_d⁻¹ B x_c
        let mut sum_a: f64;
        if C::CONTIGUOUS {
            let (c4, vv) = (k / 4 * 4, &v[..k]);
            let mut s4 = [0.0f64; 4];
            for (((u4, i4), p4), v4) in ua[..c4]
                .chunks_exact_mut(4)
                .zip(inv_delta[..c4].chunks_exact(4))
                .zip(phi[..c4].chunks_exact(4))
                .zip(vv[..c4].chunks_exact(4))
            {
                for l in 0..4 {
                    u4[l] += (p4[l] * v4[l] * xl + xm) * i4[l];
                    s4[l] += u4[l];
                }
            }
            sum_a = (s4[0] + s4[1]) + (s4[2] + s4[3]);
            for a in c4..k {
                ua[a] += (phi[a] * vv[a] * xl + xm) * inv_delta[a];
                sum_a += ua[a];
            }
        } else {
            let c4 = k / 4 * 4;
            let mut s4 = [0.0f64; 4];
            let mut a = 0;
            while a < c4 {
                for l in 0..4 {
                    let t = a + l;
                    ua[t] += (phi[t] * v[cols.at(t)] * xl + xm) * inv_delta[t];
                    s4[l] += ua[t];
                }
                a += 4;
            }
            sum_a = (s4[0] + s4[1]) + (s4[2] + s4[3]);
            for a in c4..k {
                ua[a] += (phi[a] * v[cols.at(a)] * xl + xm) * inv_delta[a];
                sum_a += ua[a];
            }
        }
        rest[0] = xl;
        rest[1] = yx - xm * e.inv_kappa;
        if e.rec != NO_REC {
            // θ exceeds the smallest diagonal pivot (Δ_ij or κ_i) of the example: recover that
            // variable from row a_i, gᵀu − μ/θ = rμ, instead of (r − B x_c)/pivot, which
            // cancels when the pivot is ≪ θ.
            let gu = -sum_a + self.p_eff[i] * xl + rest[1];
            let target = r_mu + xm * e.inv_theta;
            let rec = e.rec as usize;
            if rec == k + 1 {
                rest[1] += target - gu;
            } else {
                ua[rec] -= target - gu;
            }
        }
        xm
    }

    /// Solves `(H + δI) z = rhs` in place with the current factorisation: `O(nnz + n²)`,
    /// no allocation. DSX eqs. (15)–(18) (with the corrected (18)).
    ///
    /// `sc` must be the scalings passed to the last [`DsxSystem::factor`]: the solve reads
    /// their `φ` (the system keeps no copy of them).
    pub fn solve_in_place(&mut self, sc: &DsxScalings<'_>, rhs: &mut [f64]) -> Result<()> {
        if !self.factored {
            return Err(LinalgError::NotFactored);
        }
        check_len("rhs", self.len(), rhs.len())?;
        sc.phi.check_len("phi", &self.indptr)?;
        let phi = sc.phi;
        let [w0, w1] = &mut self.work;
        let mut bufs = (
            [
                core::mem::take(&mut w0.kbuf1),
                core::mem::take(&mut w0.phibuf),
            ],
            [
                core::mem::take(&mut w1.kbuf1),
                core::mem::take(&mut w1.phibuf),
            ],
            core::mem::take(&mut self.rb_part),
        );
        if self.dense {
            self.solve_first_pass(phi, rhs, &mut bufs, |_, _| Ident);
        } else {
            self.solve_first_pass(phi, rhs, &mut bufs, |idx, r| &idx[r]);
        }
        // Eq. (17): S z_B = r_B − Σ M_iᵀ ẑ_i, by the normal-equations method
        self.solve_reduced(&mut rhs[..self.n + 1]);
        if self.dense {
            self.solve_second_pass(phi, rhs, &mut bufs, |_, _| Ident);
        } else {
            self.solve_second_pass(phi, rhs, &mut bufs, |idx, r| &idx[r]);
        }
        let [w0, w1] = &mut self.work;
        ([w0.kbuf1, w0.phibuf], [w1.kbuf1, w1.phibuf], self.rb_part) = bufs;
        Ok(())
    }

    /// Pass 1 of a solve on examples `i0..i1` (their tail `rl` starts at example `i0`):
    /// `ẑ_i = K_i⁻¹ [r_i; 0]` in place, `acc −= M_iᵀ ẑ_i` (DSX eqs. (15), (17)). `pbuf`: an
    /// example's `φ` when it is computed where read.
    #[allow(clippy::too_many_arguments)]
    fn solve_forward<'s, C: Cols + 's>(
        &'s self,
        phi_all: PairScaling<'_>,
        (i0, i1): (usize, usize),
        rl: &[f64],
        acc: &mut [f64],
        ubuf: &mut [f64],
        pbuf: &mut [f64],
        cols_of: &(impl Fn(&'s [usize], Range<usize>) -> C + Sync),
    ) {
        let n = self.n;
        let mut off = 0;
        for i in i0..i1 {
            let r = self.nz_range(i);
            let k = r.len();
            let cols = cols_of(&self.indices, r.clone());
            let u = &mut ubuf[..k + 2];
            u.copy_from_slice(&rl[off..off + k + 2]);
            let phi = phi_all.example(i, r.clone()).slice(pbuf);
            let mu = self.example_solve(i, r.clone(), cols, phi, u, 0.0);
            let yi = self.y[i];
            let zl = u[k];
            let x = &self.x[r];
            for a in 0..k {
                let j = cols.at(a);
                let d = phi[a] * yi * (self.scale * x[a]);
                acc[j] -= d * (u[a] - self.v[j] * zl);
            }
            acc[n] -= yi * mu;
            off += k + 2;
        }
    }

    /// Pass 2 of a solve on examples `i0..i1` (corrected eq. (18)):
    /// `[z_i; μ_i] = K_i⁻¹ ([r_i; 0] − M_i z_B)` in place on their tail `rl`. `pbuf`: as in
    /// [`DsxSystem::solve_forward`].
    fn solve_backward<'s, C: Cols + 's>(
        &'s self,
        phi_all: PairScaling<'_>,
        (i0, i1): (usize, usize),
        rb: &[f64],
        rl: &mut [f64],
        pbuf: &mut [f64],
        cols_of: &(impl Fn(&'s [usize], Range<usize>) -> C + Sync),
    ) {
        let n = self.n;
        let zb = rb[n];
        let mut off = 0;
        for i in i0..i1 {
            let r = self.nz_range(i);
            let k = r.len();
            let cols = cols_of(&self.indices, r.clone());
            let u = &mut rl[off..off + k + 2];
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let phi = phi_all.example(i, r.clone()).slice(pbuf);
            // four accumulators (a single sum is a latency-bound chain)
            let c4 = k / 4 * 4;
            let mut l4 = [0.0f64; 4];
            let mut a = 0;
            while a < c4 {
                for (l, acc) in l4.iter_mut().enumerate() {
                    let j = cols.at(a + l);
                    let dw = phi[a + l] * yi * (self.scale * x[a + l]) * rb[j];
                    u[a + l] -= dw;
                    *acc += self.v[j] * dw;
                }
                a += 4;
            }
            let mut lam = (l4[0] + l4[1]) + (l4[2] + l4[3]);
            for a in c4..k {
                let j = cols.at(a);
                let dw = phi[a] * yi * (self.scale * x[a]) * rb[j];
                u[a] -= dw;
                lam += self.v[j] * dw;
            }
            u[k] += lam;
            self.example_solve(i, r, cols, phi, u, -yi * zb);
            off += k + 2;
        }
    }

    /// Pass 1 of a solve on the two example halves (split at [`DsxSystem::solve_mid`], fixed by
    /// the data): on two threads when `par` allows, else one after the other. Each half sums
    /// into its own accumulator and the two are added in order, so the result is the same bits
    /// either way.
    fn solve_first_pass<'s, C: Cols + 's>(
        &'s self,
        phi: PairScaling<'_>,
        rhs: &mut [f64],
        ([ubuf0, pbuf0], [ubuf1, pbuf1], part): &mut ([Vec<f64>; 2], [Vec<f64>; 2], Vec<f64>),
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C + Sync,
    ) {
        let n = self.n;
        let n1 = n + 1;
        let mid = self.solve_mid;
        let cut = self.indptr[mid] + 2 * mid;
        let par = self.settings.threads >= 2 && self.m >= 2;
        let (rb, rl) = rhs.split_at_mut(n1);
        // Pass 1 (eqs. (15), (17)): ẑ_i = K_i⁻¹ [r_i; 0]; r_B −= M_iᵀ ẑ_i.
        part.fill(0.0);
        {
            let (rl_a, rl_b) = rl.split_at(cut);
            let (h0, h1) = ((0, mid), (mid, self.m));
            let (rb_a, part_b) = (&mut *rb, &mut part[..]);
            let (ub0, ub1) = (&mut ubuf0[..], &mut ubuf1[..]);
            let (pb0, pb1) = (&mut pbuf0[..], &mut pbuf1[..]);
            if par {
                rayon::join(
                    || self.solve_forward(phi, h0, rl_a, rb_a, ub0, pb0, &cols_of),
                    || self.solve_forward(phi, h1, rl_b, part_b, ub1, pb1, &cols_of),
                );
            } else {
                self.solve_forward(phi, h0, rl_a, rb_a, ub0, pb0, &cols_of);
                self.solve_forward(phi, h1, rl_b, part_b, ub1, pb1, &cols_of);
            }
        }
        for (o, p) in rb.iter_mut().zip(part.iter()) {
            *o += p;
        }
    }

    /// Eq. (17): `S z_B = r_B` in place on `rb` (length `n + 1`) with the factorisation of the
    /// chosen normal-equations method.
    fn solve_reduced(&mut self, rb: &mut [f64]) {
        match self.method {
            NormalEquations::ExampleSpace => self.solve_example_space(rb),
            NormalEquations::SparseLdl => self.solve_sparse(rb),
            _ => {
                let n1 = self.n + 1;
                let l = MatRef::from_column_major_slice(&self.s, n1, n1);
                solve_lower_triangular_in_place(
                    l,
                    MatMut::from_column_major_slice_mut(rb, n1, 1),
                    self.settings.par,
                );
                solve_upper_triangular_in_place(
                    l.transpose(),
                    MatMut::from_column_major_slice_mut(rb, n1, 1),
                    self.settings.par,
                );
            }
        }
    }

    /// Pass 2 of a solve (corrected eq. (18)) on the two example halves, as
    /// [`DsxSystem::solve_first_pass`].
    fn solve_second_pass<'s, C: Cols + 's>(
        &'s self,
        phi: PairScaling<'_>,
        rhs: &mut [f64],
        ([_, pbuf0], [_, pbuf1], _): &mut ([Vec<f64>; 2], [Vec<f64>; 2], Vec<f64>),
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C + Sync,
    ) {
        let n1 = self.n + 1;
        let mid = self.solve_mid;
        let cut = self.indptr[mid] + 2 * mid;
        let par = self.settings.threads >= 2 && self.m >= 2;
        let (rb, rl) = rhs.split_at_mut(n1);
        // Pass 2 (corrected eq. (18)): [z_i; μ_i] = K_i⁻¹ ([r_i; 0] − M_i z_B).
        let (rl_a, rl_b) = rl.split_at_mut(cut);
        let rb = &*rb;
        let (pb0, pb1) = (&mut pbuf0[..], &mut pbuf1[..]);
        if par {
            rayon::join(
                || self.solve_backward(phi, (0, mid), rb, rl_a, pb0, &cols_of),
                || self.solve_backward(phi, (mid, self.m), rb, rl_b, pb1, &cols_of),
            );
        } else {
            self.solve_backward(phi, (0, mid), rb, rl_a, pb0, &cols_of);
            self.solve_backward(phi, (mid, self.m), rb, rl_b, pb1, &cols_of);
        }
    }
}
