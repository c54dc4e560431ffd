//! An optimality certificate for an iterate whose dual residual the solves cannot remove
//! (module docs of [`crate::ipm`], *Certificate*): the closed-form objective at the iterate's
//! `(w, b)` against the objective of an exactly feasible dual point repaired from its duals.

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

    /// `Σ_i ξ_i` at the iterate's `w` (projected onto the box) and `b`, each `ξ_i` the
    /// closed-form worst-case loss (core's fractional knapsack, DSX eq. (7)): the objective of a
    /// primal point that is feasible by construction.
    fn closed_form_primal(&mut self) -> f64 {
        let (n, lp) = (self.n, self.lp);
        // the model's weights: C times the working variables (module docs of `DsxIpm::new`)
        let w = &mut self.qbufs[..n];
        for (o, &u) in w.iter_mut().zip(&self.u[..n]) {
            *o = lp.c * u.clamp(-self.c_box, self.c_box);
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
    /// equations of `ξ_i`, `α_ij` and `λ_i` ask `z_ξ = 1 − y_a ≥ 0`, `z_α = y_a − y_b ≥ 0`
    /// and `z_λ = P_i y_a − Σ_j v_j y_b + z_c ≥ 0`. The repair changes `y_a` first, which only
    /// makes them slacker and leaves `w`'s equations alone:
    ///
    /// - `y_b ← max(y_b, 0)`, and `y_a` raised to `max(y_a, max_j y_b, Σ_j v_j y_b / P_i)`
    ///   when that is at most 1; otherwise `y_a = 1`, `y_b ← min(y_b, 1)`, and the excess of
    ///   `λ_i`'s equation goes to the cap's dual `z_c` (objective `−Λ_i z_c`) of a capped
    ///   `λ_i`, or the example's `y_b` are scaled down until it holds;
    /// - the bias equation `Σ_i y_i y_a,i = 0`: the class with the smaller `Σ y_a` has its
    ///   `y_a` raised in proportion to their room `1 − y_a` (the class with the larger sum is
    ///   scaled down instead when that room is too small: every equation above is homogeneous);
    /// - `w_j`'s equation through the box duals: `z_l − z_u = −g_j` with
    ///   `g_j = Σ_i C y_i x_ij y_b,ij`, at least cost `z_l + z_u = |g_j|`.
    ///
    /// The objective `Σ h_a y_a + Σ h_b y_b − C Σ_j |g_j| − Σ Λ_i z_c` (working box `C = 1`)
    /// is then a lower bound on LP (4)'s optimum (weak duality).
    fn repaired_dual(&mut self) -> (f64, f64) {
        let (n, lp) = (self.n, self.lp);
        let (xs_all, cx) = (self.sys.values(), self.sys.scale());
        let rows_b = super::rows_b!(self);
        let (y, lam_p, lam_v, cap) = (&self.y, &self.lam_p, &self.lam_v, &self.cap);
        // example i's repaired y_a, the bound and factor on its y_b, and its cap's dual
        let example = |i: usize| {
            let r0 = lp.row_offset(i);
            let (mut top, mut vb) = (0.0f64, 0.0);
            for t in 0..lp.support_len(i) {
                let yb = y[r0 + 1 + t].max(0.0);
                top = top.max(yb);
                vb += lam_v[lp.col(i, t)] * yb;
            }
            let mut ya = y[r0].clamp(0.0, 1.0).max(top);
            if vb > lam_p[i] * ya {
                ya = ya.max(vb / lam_p[i]);
            }
            if ya <= 1.0 {
                return (ya, f64::INFINITY, 1.0, 0.0);
            }
            let mut vb = 0.0;
            for t in 0..lp.support_len(i) {
                vb += lam_v[lp.col(i, t)] * y[r0 + 1 + t].clamp(0.0, 1.0);
            }
            let need = lam_p[i];
            if vb <= need {
                (1.0, 1.0, 1.0, 0.0)
            } else if cap[i].is_finite() {
                (1.0, 1.0, 1.0, vb - need)
            } else {
                (1.0, 1.0, need / vb, 0.0)
            }
        };
        // class sums of y_a and their room 1 − y_a
        let (mut sum, mut room) = ([0.0f64; 2], [0.0f64; 2]);
        for i in 0..self.m {
            let ya = example(i).0;
            let c = usize::from(lp.y[i] > 0.0);
            sum[c] += ya;
            room[c] += 1.0 - ya;
        }
        // per class: (share of the room raised, factor)
        let (light, heavy) = if sum[1] < sum[0] { (1, 0) } else { (0, 1) };
        let deficit = sum[heavy] - sum[light];
        let mut adjust = [(0.0, 1.0); 2];
        if deficit > 0.0 {
            if deficit <= room[light] {
                adjust[light].0 = deficit / room[light];
            } else {
                adjust[heavy].1 = sum[light] / sum[heavy];
            }
        }
        let g = &mut self.qbufs[..n];
        g.fill(0.0);
        let (mut dual, mut bias) = (0.0, 0.0);
        for i in 0..self.m {
            let (ya, bound, f, zc) = example(i);
            let (raise, k) = adjust[usize::from(lp.y[i] > 0.0)];
            let ya_k = k * (ya + raise * (1.0 - ya));
            let r0 = lp.row_offset(i);
            let xs = &xs_all[lp.indptr[i]..lp.indptr[i + 1]];
            for (t, &x) in xs.iter().enumerate() {
                let j = lp.col(i, t);
                let yb = k * (f * y[r0 + 1 + t].clamp(0.0, bound));
                dual += rows_b.h(i, j) * yb;
                g[j] += lp.y[i] * (cx * x) * yb;
            }
            dual += self.h_a[i] * ya_k;
            if zc > 0.0 {
                dual -= cap[i] * (k * zc);
            }
            bias += lp.y[i] * ya_k;
        }
        let gsum: f64 = g.iter().map(|v| v.abs()).sum();
        dual -= self.c_box * gsum;
        (dual, bias.abs() / 2.0)
    }
}
