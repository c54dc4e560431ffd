//! An optimality certificate for an iterate whose dual residual the solves cannot remove
//! (module docs of [`crate::ipm`], *Certificate*): the closed-form objective at the iterate's
//! `(w, b)` against the objective of an exactly feasible dual point repaired from its duals.
//! FDROP's QP has its own (module docs, *FDROP*).

use super::DsxIpm;

/// The closed-form primal objective at the iterate's `(w, b)` and the objective of the dual
/// point repaired from the iterate's, as sums (`c = 1` on every `ξ_i`), their relative gap,
/// and the repaired point's relative dual residual (the rounding of the bias equation).
#[derive(Debug, Clone, Copy)]
pub(super) struct Certificate {
    pub(super) primal: f64,
    pub(super) dual: f64,
    pub(super) gap: f64,
    pub(super) dual_residual: f64,
}

impl Certificate {
    /// Whether it proves optimality at tolerance `tol` (gap and repaired dual residual).
    pub(super) fn holds(&self, tol: f64) -> bool {
        self.gap <= tol && self.dual_residual <= tol
    }

    /// The outcome's `(primal, dual, primal residual, dual residual, gap)` when this certificate
    /// answers, with `pres` the primal residual of the iterate it was built from.
    pub(super) fn outcome(&self, pres: f64) -> (f64, f64, f64, f64, f64) {
        (self.primal, self.dual, pres, self.dual_residual, self.gap)
    }
}

impl DsxIpm<'_> {
    /// The certificate of the current iterate (module docs of [`crate::ipm`]). Two passes over
    /// the rows and one closed-form pass over the examples; allocates nothing.
    pub(super) fn certificate(&mut self) -> Certificate {
        let primal = self.closed_form_primal();
        let (dual, dual_residual) = self.repaired_dual();
        Certificate {
            primal,
            dual,
            gap: (primal - dual).abs() / (1.0 + primal.abs()),
            dual_residual,
        }
    }

    /// The certificate of the point the step `(ap, ad)` along `self.dir` reaches (its `(w, b)`
    /// and row duals, the only parts [`DsxIpm::certificate`] reads), built in `self.aff`, whose
    /// direction is spent by then (every solve rewrites it before reading it); the iterate is
    /// left as it was, to the bit. On return `self.aff.u[..=n]` holds that point's `(w, b)`.
    pub(super) fn certify_step(&mut self, ap: f64, ad: f64) -> Certificate {
        let n = self.n;
        // the same updates as `take_step`'s
        for j in 0..=n {
            self.aff.u[j] = self.u[j] + ap * self.dir.u[j];
        }
        for ((t, &y), &dy) in self.aff.y[..self.rows]
            .iter_mut()
            .zip(&self.y)
            .zip(&self.dir.y[..self.rows])
        {
            *t = y + ad * dy;
        }
        std::mem::swap(&mut self.u, &mut self.aff.u);
        std::mem::swap(&mut self.y, &mut self.aff.y);
        let cert = self.certificate();
        std::mem::swap(&mut self.u, &mut self.aff.u);
        std::mem::swap(&mut self.y, &mut self.aff.y);
        cert
    }

    /// FDROP's certificate of the current iterate (module docs of [`crate::ipm`], *FDROP*), on
    /// the solver's scale (FDROP's objective over `C`): its primal objective at the iterate's
    /// `(w, b)` and the dual value at the feasible point repaired from the row duals. Three
    /// passes over the rows; allocates nothing.
    pub(super) fn fdrop_certificate(&mut self) -> Certificate {
        let (n, lp) = (self.n, self.lp);
        // FDROP's C: q = s² / C (module docs, *FDROP*)
        let c = self.w_scale * self.w_scale / self.quad;
        // the adversary: the k form's top K when the values are 1 and N an integer (the same
        // bits), else the fractional knapsack over the values (`crate::fdrop`)
        let deletion = crate::fdrop::Deletion::of(&lp.budget);
        let (v, budget) = (lp.v(), lp.budget.budget());
        let (w, b) = (&mut self.qbufs[..n], self.u[n]);
        for (o, &u) in w.iter_mut().zip(&self.u[..n]) {
            *o = self.w_scale * u;
        }
        // the primal: ‖w‖²/(2C) + Σ_i [1 − y_i(w·x_i + b) + max_σ Σ_j σ_j [y_i w_j x_ij]_+]_+
        let mut primal = w.iter().map(|v| v * v).sum::<f64>() / (2.0 * c);
        for i in 0..lp.m() {
            let (yi, nz) = (lp.y[i], lp.indptr[i]);
            let mut margin = b;
            self.harm.clear();
            for t in 0..lp.support_len(i) {
                let j = lp.col(i, t);
                let wx = w[j] * lp.x[nz + t];
                margin += wx;
                self.harm.push(&deletion, j, yi * wx);
            }
            primal += self.harm.loss(&deletion, yi * margin);
        }
        // the dual point: per example λ' = y_a clipped into [0, 1] and the kept weights
        // λ' − μ'_j = y_b clipped into [0, λ'], with the deletions μ' scaled into
        // Σ_j v_j μ'_j ≤ N λ'; the bias equation Σ y_i λ_i = 0: the heavier class scaled down
        let (mut pos, mut neg) = (0.0, 0.0);
        for i in 0..lp.m() {
            let ya = self.y[lp.row_offset(i)].clamp(0.0, 1.0);
            if lp.y[i] > 0.0 { pos += ya } else { neg += ya }
        }
        let (sp, sn) = if pos > neg {
            (if pos > 0.0 { neg / pos } else { 0.0 }, 1.0)
        } else {
            (1.0, if neg > 0.0 { pos / neg } else { 0.0 })
        };
        // g = Σ_i y_i Σ_j (λ'_i − μ'_ij) x_ij, so w(λ, μ) = C g and the dual value over C is
        // Σ λ' − (C/2)‖g‖²
        let g = &mut self.qbufs[..n];
        g.fill(0.0);
        let mut dual = 0.0;
        for i in 0..lp.m() {
            let (yi, nz) = (lp.y[i], lp.indptr[i]);
            let s = if yi > 0.0 { sp } else { sn };
            let kk = lp.support_len(i);
            let ya = self.y[lp.row_offset(i)].clamp(0.0, 1.0);
            dual += s * ya;
            if kk == 0 {
                continue;
            }
            let r0 = lp.row_offset(i);
            // (a unit value multiplies exactly: the k form's bits)
            let del: f64 = (0..kk)
                .map(|t| v[lp.col(i, t)] * (ya - self.y[r0 + 1 + t].clamp(0.0, ya)))
                .sum();
            let f = if del > budget * ya {
                budget * ya / del
            } else {
                1.0
            };
            for t in 0..kk {
                let kept = ya - f * (ya - self.y[r0 + 1 + t].clamp(0.0, ya));
                g[lp.col(i, t)] += yi * s * kept * lp.x[nz + t];
            }
        }
        dual -= 0.5 * c * g.iter().map(|v| v * v).sum::<f64>();
        Certificate {
            primal,
            dual,
            gap: (primal - dual).abs() / (1.0 + primal.abs()),
            dual_residual: 0.0,
        }
    }

    /// `Σ_i ξ_i` at the iterate's `w` (projected onto the box) and `b`, each `ξ_i` the
    /// closed-form worst-case loss (core's fractional knapsack, DSX eq. (7)): the objective of a
    /// primal point that is feasible by construction.
    fn closed_form_primal(&mut self) -> f64 {
        let (n, lp) = (self.n, self.lp);
        // the model's weights: `s` times the working variables (module docs, *Working scale*)
        let w = &mut self.qbufs[..n];
        for (o, &u) in w.iter_mut().zip(&self.u[..n]) {
            *o = self.w_scale * u.clamp(-self.c_box, self.c_box);
        }
        let b = self.u[n];
        let signs = lp
            .data
            .binary_labels()
            .expect("LP (4) is laid out for binary labels");
        let mut sum = 0.0;
        for (i, &yi) in signs.iter().enumerate() {
            let row = lp.data.row(i);
            sum += lp
                .budget
                .worst_case_deletion(w, b, row, yi, &mut self.worst_case)
                .loss;
        }
        sum
    }

    /// The objective of a dual point repaired from the iterate's row duals so that every dual
    /// equation holds exactly (to rounding in the bias equation), and that equation's relative
    /// residual. With `y_a`, `y_b` the duals of the rows `a_i`, `b_ij` (module docs), the
    /// equations of `ξ_i`, `α_ij` and `λ_i` ask `z_ξ = 1 − y_a ≥ 0`, `z_α = y_a − y_b ≥ 0` and
    /// `z_λ = Σ_j v_j y_b − P_i y_a + z_c ≥ 0`: per example `y_a` must lie in
    /// `[max_j y_b, min(1, Σ_j v_j y_b / P_i)]`. `y_a` appears in no `w` equation, so the repair
    /// moves it first and `y_b` only where it must:
    ///
    /// - `y_b ← max(y_b, 0)` (and `min(y_b, 1)`), then `y_a` clamped into its interval; an
    ///   empty interval (the iterate's residual) is resolved by the cap's dual `z_c`
    ///   (objective `−Λ_i z_c`) of a capped `λ_i`, else by clipping the example's `y_b` at the
    ///   largest `t` with `P_i t ≤ Σ_j v_j min(y_b, t)` and setting `y_a = t`;
    /// - the bias equation `Σ_i y_i y_a,i = 0`: the class with the smaller `Σ y_a` has its
    ///   `y_a` raised within their intervals, then the other class's lowered within theirs,
    ///   in proportion to the room; what is left is removed by scaling the heavier class's
    ///   duals down (every equation above is homogeneous in them);
    /// - `w_j`'s equation through the box duals: `z_l − z_u = −g_j` with
    ///   `g_j = Σ_i y_i (s x_ij) y_b,ij` (working scale), at least cost `z_l + z_u = |g_j|`.
    ///
    /// The objective `Σ h_a y_a + Σ h_b y_b − (C/s) Σ_j |g_j| − Σ Λ_i z_c` (the working box's
    /// radius `C/s`) is then a lower bound on LP (4)'s optimum (weak duality).
    fn repaired_dual(&mut self) -> (f64, f64) {
        let (n, lp) = (self.n, self.lp);
        let (xs_all, cx) = (self.sys.values(), self.sys.scale());
        let rows_b = super::rows_b!(self);
        let adjust = self.balance();
        // the scratch moved out for the pass (no allocation) and back after it
        let mut scratch = std::mem::take(&mut self.qbufs);
        let g = &mut scratch[..n];
        g.fill(0.0);
        let (mut dual, mut bias) = (0.0, 0.0);
        for i in 0..self.m {
            let (e, ya, k) = self.balanced(&adjust, i);
            let r0 = lp.row_offset(i);
            let xs = &xs_all[lp.indptr[i]..lp.indptr[i + 1]];
            for (t, &x) in xs.iter().enumerate() {
                let j = lp.col(i, t);
                let yb = k * self.y[r0 + 1 + t].clamp(0.0, e.clip);
                dual += rows_b.h(j, cx * x) * yb;
                g[j] += lp.y[i] * (cx * x) * yb;
            }
            dual += self.h_a[i] * (k * ya);
            if e.capped {
                // (`Λ_i` is +∞ without a cap)
                dual -= self.cap[i] * (k * e.zc(self.lam_p[i], ya));
            }
            bias += lp.y[i] * (k * ya);
        }
        let gsum: f64 = g.iter().map(|v| v.abs()).sum();
        self.qbufs = scratch;
        dual -= self.c_box * gsum;
        (dual, bias.abs() / 2.0)
    }

    /// Example `i`'s repair with the classes balanced (`adjust`: [`DsxIpm::balance`]): the
    /// repair, its final `y_a` before the factor, and the factor.
    fn balanced(&self, adjust: &[(f64, f64, f64); 2], i: usize) -> (Repaired, f64, f64) {
        let e = self.repair(i);
        let (raise, lower, k) = adjust[usize::from(self.lp.y[i] > 0.0)];
        let ya = e.ya + raise * (e.hi - e.ya) - lower * (e.ya - e.lo);
        (e, ya, k)
    }

    /// The balance of the bias equation (per class: the share of the room to raise `y_a`, the
    /// share of the room to lower it, and the factor on every dual; [`DsxIpm::repaired_dual`]).
    fn balance(&self) -> [(f64, f64, f64); 2] {
        let lp = self.lp;
        // per class: Σ y_a, and the room to raise and to lower it
        let (mut sum, mut up, mut down) = ([0.0f64; 2], [0.0f64; 2], [0.0f64; 2]);
        for i in 0..self.m {
            let e = self.repair(i);
            let c = usize::from(lp.y[i] > 0.0);
            sum[c] += e.ya;
            up[c] += e.hi - e.ya;
            down[c] += e.ya - e.lo;
        }
        let (light, heavy) = if sum[1] < sum[0] { (1, 0) } else { (0, 1) };
        let mut deficit = sum[heavy] - sum[light];
        let mut adjust = [(0.0, 0.0, 1.0); 2];
        if deficit > 0.0 && up[light] > 0.0 {
            let r = (deficit / up[light]).min(1.0);
            adjust[light].0 = r;
            deficit -= r * up[light];
        }
        if deficit > 0.0 && down[heavy] > 0.0 {
            let r = (deficit / down[heavy]).min(1.0);
            adjust[heavy].1 = r;
            deficit -= r * down[heavy];
        }
        if deficit > 0.0 {
            let lighter = sum[light] + adjust[light].0 * up[light];
            let heavier = sum[heavy] - adjust[heavy].1 * down[heavy];
            adjust[heavy].2 = lighter / heavier;
        }
        adjust
    }

    /// Writes the repaired dual point into the iterate's duals (`y`, the tail's `z`, the box
    /// duals and the caps' duals), so that [`DsxIpm::residuals`] can check it.
    #[cfg(test)]
    fn write_repaired(&mut self) {
        let (n, lp) = (self.n, self.lp);
        let (xs_all, cx) = (self.sys.values(), self.sys.scale());
        let adjust = self.balance();
        let mut g = vec![0.0; n];
        for i in 0..self.m {
            let (e, ya, k) = self.balanced(&adjust, i);
            let (r0, a0) = (lp.row_offset(i), lp.var_offset(i));
            let kk = lp.support_len(i);
            let xs = &xs_all[lp.indptr[i]..lp.indptr[i + 1]];
            let mut vb = 0.0;
            for (t, &x) in xs.iter().enumerate() {
                let j = lp.col(i, t);
                let yb = k * self.y[r0 + 1 + t].clamp(0.0, e.clip);
                self.y[r0 + 1 + t] = yb;
                self.z[a0 + t] = k * ya - yb;
                vb += self.lam_v[j] * yb;
                g[j] += lp.y[i] * (cx * x) * yb;
            }
            let zc = k * e.zc(self.lam_p[i], ya);
            self.y[r0] = k * ya;
            self.zc[i] = zc;
            self.z[a0 + kk] = vb - self.lam_p[i] * (k * ya) + zc;
            self.z[a0 + kk + 1] = 1.0 - k * ya;
        }
        for j in 0..n {
            self.zl[j] = (-g[j]).max(0.0);
            self.zu[j] = g[j].max(0.0);
        }
    }
}

/// One example's repaired duals before the classes are balanced ([`DsxIpm::repaired_dual`]).
struct Repaired {
    /// `y_a`, and the interval it may move in without touching `y_b`.
    ya: f64,
    lo: f64,
    hi: f64,
    /// `y_b` is clipped to `[0, clip]`.
    clip: f64,
    /// `Σ_j v_j y_b` after clipping.
    vb: f64,
    /// `λ_i` is capped (its excess goes to `z_c`).
    capped: bool,
}

impl Repaired {
    /// The cap's dual at the final `y_a` (`P_i` is `p`): the excess of `λ_i`'s equation.
    fn zc(&self, p: f64, ya: f64) -> f64 {
        if self.capped {
            (p * ya - self.vb).max(0.0)
        } else {
            0.0
        }
    }
}

impl DsxIpm<'_> {
    /// Example `i`'s repair before the classes are balanced ([`DsxIpm::repaired_dual`]).
    fn repair(&self, i: usize) -> Repaired {
        let (lp, y, v, p) = (self.lp, &self.y, &self.lam_v, self.lam_p[i]);
        let capped = self.cap[i].is_finite();
        let r0 = lp.row_offset(i);
        let k = lp.support_len(i);
        let yb = |t: usize| y[r0 + 1 + t];
        let sum_clipped = |clip: f64| -> f64 {
            (0..k)
                .map(|t| v[lp.col(i, t)] * yb(t).clamp(0.0, clip))
                .sum()
        };
        let mut clip = 1.0f64;
        let top = (0..k).map(|t| yb(t).clamp(0.0, 1.0)).fold(0.0, f64::max);
        let mut vb = sum_clipped(clip);
        // y_a's interval: [max y_b, min(1, Σ v y_b / P_i)] (no λ equation when P_i = 0)
        let lo = top;
        let hi = if p > 0.0 { (vb / p).min(1.0) } else { 1.0 };
        let ya0 = y[r0].clamp(0.0, 1.0);
        if lo <= hi {
            return Repaired {
                ya: ya0.clamp(lo, hi),
                lo,
                hi,
                clip,
                vb,
                capped,
            };
        }
        if capped {
            // λ's excess P_i y_a − Σ v y_b goes to the cap's dual
            let ya = ya0.max(lo);
            return Repaired {
                ya,
                lo: ya,
                hi: ya,
                clip,
                vb,
                capped,
            };
        }
        // the largest t ≤ lo with P_i t ≤ Σ v min(y_b, t): {t ≥ 0 : Σ v min(y_b, t) − P_i t ≥ 0}
        // is an interval [0, t*] (a concave function, 0 at 0); bisection keeps its lower end
        // feasible
        let (mut a, mut b) = (0.0, lo);
        for _ in 0..60 {
            let mid = 0.5 * (a + b);
            if sum_clipped(mid) >= p * mid {
                a = mid;
            } else {
                b = mid;
            }
        }
        clip = a;
        vb = sum_clipped(clip);
        Repaired {
            ya: a,
            lo: a,
            hi: a,
            clip,
            vb,
            capped,
        }
    }
}

#[cfg(test)]
mod tests {
    use bulwark_core::{Dataset, DenseMatrix, FeatureBudget, Sign, rng_from_seed};
    use rand::Rng;

    use super::super::{DsxIpm, DsxIpmSettings};
    use crate::layout::Lp4;

    /// Random data with both classes: `m × n`, entries in `[-1, 1]`, every fifth zero.
    fn data(m: usize, n: usize, seed: u64) -> Dataset {
        let mut rng = rng_from_seed(seed);
        let rows: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if (i + j) % 5 == 0 {
                            0.0
                        } else {
                            rng.random_range(-1.0..1.0)
                        }
                    })
                    .collect()
            })
            .collect();
        let y = (0..m)
            .map(|i| if i % 3 == 0 { Sign::Pos } else { Sign::Neg })
            .collect();
        Dataset::binary("random", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap()
    }

    /// FDROP's certificate (module docs of [`crate::ipm`], *FDROP*) is tight at the method's
    /// answer (a gap of 1e-7 at most) and a valid bound from any iterate: from the answer's
    /// duals perturbed by up to 5 %, and from random row duals (either sign, beyond 1) and a
    /// random `(w, b)`, its dual value is at most FDROP's optimum and its primal at least it.
    /// The optimum is the IPM's, which `bulwark-online`'s tests check against clarabel. The
    /// `k` form (unit values, `N = 1`) and value-weighted budgets (random values in `[0, 2]`,
    /// two of them 0, a fractional `N`).
    #[test]
    fn fdrop_certificate_bounds_the_optimum() {
        use crate::fdrop::FdropIpm;
        use bulwark_core::FeatureValues;
        for (seed, budget, c, valued) in [
            (1, 1.0, 1.0, false),
            (2, 1.0, 2.0, false),
            (3, 1.0, 10.0, false),
            (4, 1.0, 50.0, false),
            (5, 0.7, 2.0, true),
            (6, 1.3, 10.0, true),
        ] {
            // labels from a random direction and an offset (a bias worth fitting), 15 % flipped
            let d = {
                let raw = data(60, 20, seed);
                let mut rng = rng_from_seed(seed + 50);
                let a: Vec<f64> = (0..20).map(|_| rng.random_range(-1.0..1.0)).collect();
                let y: Vec<Sign> = (0..60)
                    .map(|i| {
                        let s = raw.row(i).dot(&a) > 0.3;
                        if s != (rng.random_range(0.0..1.0) < 0.15) {
                            Sign::Pos
                        } else {
                            Sign::Neg
                        }
                    })
                    .collect();
                Dataset::binary("signal", raw.features().to_dense(), y).unwrap()
            };
            let values: Vec<f64> = if valued {
                let mut rng = rng_from_seed(seed + 70);
                (0..20)
                    .map(|j| {
                        if j % 9 == 4 {
                            0.0
                        } else {
                            rng.random_range(0.0..2.0)
                        }
                    })
                    .collect()
            } else {
                vec![1.0; 20]
            };
            let plain = FdropIpm {
                values: FeatureValues::Given(values.clone()),
                budget,
                c,
                threads: Some(1),
                ..FdropIpm::default()
            }
            .solve(&d)
            .unwrap();
            assert!(plain.is_optimal(), "{plain:?}");
            let wmax = plain.w.iter().fold(0.0f64, |a, w| a.max(w.abs()));
            assert!(
                wmax > 0.1,
                "seed {seed}: a trivial model, objective {}",
                plain.objective
            );
            let opt = plain.objective;
            let fb = FeatureBudget::try_new(values, budget).unwrap();
            let lp = Lp4::new(&d, &fb, plain.box_radius).unwrap();
            let mut ipm = DsxIpm::for_fdrop(&lp, Some(1), &DsxIpmSettings::default(), c).unwrap();
            // at the method's own answer the certificate is tight
            let opts = super::super::IpmOptions {
                tolerance: 1e-8,
                max_iter: 200,
                time_limit: f64::INFINITY,
            };
            ipm.run(opts, None).unwrap();
            let cert = ipm.fdrop_certificate();
            assert!(cert.gap <= 1e-7, "{cert:?}");
            assert!(c * cert.dual <= opt * (1.0 + 1e-12), "{cert:?} vs {opt}");
            // its duals moved off the dual feasible set, along each constraint the repair
            // restores, stay a lower bound: one class's duals scaled (the bias equation), the
            // rows b_ij's scaled down (more deletions than K λ_i) or up (`y_b > y_a`: negative
            // deletions), random noise (the boxes)
            let duals = ipm.y.clone();
            let mut rng = rng_from_seed(seed + 100);
            for (move_kind, eps) in (0..4).flat_map(|kind| {
                [1e-3, -1e-3, 1e-5, -1e-5]
                    .into_iter()
                    .map(move |e| (kind, e))
            }) {
                ipm.y.copy_from_slice(&duals);
                for i in 0..lp.m() {
                    let (r0, kk) = (lp.row_offset(i), lp.support_len(i));
                    for r in r0..=r0 + kk {
                        let v = &mut ipm.y[r];
                        match move_kind {
                            0 if lp.y[i] > 0.0 => *v *= 1.0 + eps,
                            1 if r > r0 => *v *= 1.0 - eps.abs(),
                            3 if r > r0 => *v *= 1.0 + eps.abs(),
                            2 => *v += eps * rng.random_range(-1.0..1.0),
                            _ => {}
                        }
                    }
                }
                let cert = ipm.fdrop_certificate();
                assert!(
                    c * cert.dual <= opt * (1.0 + 1e-12),
                    "move {move_kind} by {eps:e}: {} vs {opt}",
                    c * cert.dual
                );
            }
            // from random duals and points
            for _ in 0..20 {
                for v in ipm.y.iter_mut() {
                    *v = rng.random_range(-0.3..1.3);
                }
                let n = ipm.n;
                for w in &mut ipm.u[..n] {
                    *w = rng.random_range(-0.2..0.2);
                }
                ipm.u[n] = rng.random_range(-2.0..2.0);
                let cert = ipm.fdrop_certificate();
                // the certificate works on FDROP's scale over C
                assert!(c * cert.dual <= opt * (1.0 + 1e-12), "{cert:?} vs {opt}");
                assert!(c * cert.primal >= opt * (1.0 - 1e-12), "{cert:?} vs {opt}");
            }
        }
    }

    /// From arbitrary row duals (either sign, beyond 1), the repaired point satisfies every
    /// dual equation of LP (4) as the solver's own residuals measure them, with every dual
    /// non-negative, and its objective is the one the certificate uses; the closed form at any
    /// `(w, b)` in the box is above it (weak duality).
    #[test]
    fn the_repaired_dual_point_is_feasible_from_any_duals() {
        for (seed, budget, c) in [(1, 2.0, 1.0), (2, 0.0, 0.5), (3, 4.5, 3.0), (4, 1.0, 0.1)] {
            let d = data(40, 7, seed);
            let fb = FeatureBudget::uniform(7, budget).unwrap();
            let lp = Lp4::new(&d, &fb, c).unwrap();
            let mut ipm = DsxIpm::new(&lp, Some(1), &DsxIpmSettings::default()).unwrap();
            let mut rng = rng_from_seed(seed + 100);
            for _ in 0..5 {
                for v in ipm.y.iter_mut() {
                    *v = rng.random_range(-0.3..1.3);
                }
                let n = ipm.n;
                for w in &mut ipm.u[..n] {
                    *w = rng.random_range(-1.0..1.0);
                }
                ipm.u[n] = rng.random_range(-2.0..2.0);
                let cert = ipm.certificate();
                assert!(cert.primal >= cert.dual, "{cert:?}");
                assert!(cert.dual_residual <= 1e-14, "{cert:?}");
                ipm.write_repaired();
                let ((_, dobj, _, dres, _), _) = ipm.residuals();
                assert!(dres <= 1e-13, "dual residual {dres:e} (seed {seed})");
                assert!(
                    (dobj - cert.dual).abs() <= 1e-12 * (1.0 + cert.dual.abs()),
                    "{dobj} vs {}",
                    cert.dual
                );
                let t0 = ipm.t0();
                let duals = ipm.y.iter().chain(&ipm.z[t0..]).chain(&ipm.zl);
                let min = duals
                    .chain(&ipm.zu)
                    .chain(&ipm.zc)
                    .fold(0.0f64, |a, &v| a.min(v));
                assert!(min >= -1e-15, "a negative dual {min:e} (seed {seed})");
            }
        }
    }
}
