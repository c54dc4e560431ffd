//! Iterative refinement of a Newton direction on the dual equations, in the original space.
//!
//! The normal equations' solves reach a relative residual of only about 1e-7 near the optimum
//! (the operator `GᵀΘG + D` is computed with `Θ` spanning many orders of magnitude), and that
//! error lands entirely in the dual equation `GᵀΔy + ΔZ = r_d`: the primal equation and the
//! complementarity are exact by construction of the recovery. Refinement measures the defect
//! `e = r_d − GᵀΔy − ΔZ` and solves once more with it as the right-hand side:
//! `H δu = −e`, `δs = G δu`, `δy = −Θ δs`, `δz = −(z/u) δu` (and the box's), so that the
//! corrected direction satisfies the dual equation up to the solve's relative error times `‖e‖`,
//! a tiny number, while the other equations stay exact.
//!
//! When the factorisation is too inaccurate for that (rounds that do not halve the defect are
//! undone) and the dual residual is already below the tolerance, the driver caps the dual step so
//! that `(1 − α) dres + α defect` stays below it ([`DsxIpm::refine_dual`] returns the defect in
//! the measure of the dual residual) and lets the primal step close the gap.

use super::{Dir, DsxIpm, DsxIpmSettings, rd_alpha};
use crate::error::Result;

/// When to refine: in the final phase, or from the first iteration whose dual residual fell
/// less than the dual step promised (`r_d` shrinks by `1 − α_D` in exact arithmetic).
#[derive(Debug, Default)]
pub(super) struct Refinement {
    /// The dual residual lagged once: refine every later iteration.
    sticky: bool,
    /// The dual residual and the dual step of the last iteration.
    last: Option<(f64, f64)>,
    /// The last iteration's direction was refined.
    last_refined: bool,
}

impl Refinement {
    /// Whether to refine this iteration's direction: the primal residual has converged
    /// (`r_p` is then at rounding level and the direction's error is all in the dual
    /// equation), and the dual residual lagged before, or it already meets the tolerance with
    /// the gap within [`DsxIpmSettings::keep_dual_within`] times it (an unrefined step would
    /// spend it: `(1 − α) dres + α defect`), or the iterate is within
    /// [`DsxIpmSettings::refine_within`] times the tolerance of optimal.
    pub(super) fn now(
        &mut self,
        st: &DsxIpmSettings,
        tol: f64,
        (pres, dres, gap): (f64, f64, f64),
    ) -> bool {
        if !st.dual_refinement || pres > tol {
            return false;
        }
        if let Some((prev, ad)) = self.last
            && dres > tol
            && dres > st.refine_lag * (1.0 - ad) * prev
        {
            self.sticky = true;
        }
        self.sticky
            || (dres <= tol && gap <= st.keep_dual_within * tol)
            || gap.max(dres) <= st.refine_within * tol
    }

    /// Records the step just taken (`refined`: along a refined direction).
    pub(super) fn stepped(&mut self, dres: f64, ad: f64, refined: bool) {
        self.last = Some((dres, ad));
        self.last_refined = refined;
    }

    /// Whether the step that produced the current iterate was along a refined direction.
    pub(super) fn refined(&self) -> bool {
        self.last_refined
    }
}

impl DsxIpm<'_> {
    /// Refines `self.dir` on the dual equations (module docs), in up to
    /// [`DsxIpmSettings::max_refinements`] rounds, each kept only when it halves the defect
    /// `‖e‖∞` and keeps at least half of the step `min(α_P, α_D)` (when the factorisation is
    /// too inaccurate a round can meet the equations with a useless direction). `steps` are the
    /// step lengths of the direction as it is; returns those of the direction kept (before `η`).
    /// `tol` is the solves' tolerance. Rounds stop once `‖e‖∞` is a tenth of the IPM's tolerance `ipm_tol` (a dual residual
    /// that small needs no more). Also returns the defect of the direction kept in the measure of
    /// the relative dual residual ([`DsxIpm::defect_measure`]).
    pub(super) fn refine_dual(
        &mut self,
        tol: f64,
        ipm_tol: f64,
        mut steps: (f64, f64),
    ) -> Result<((f64, f64), f64)> {
        let mut defect = self.dual_defect();
        for _ in 0..self.settings.max_refinements {
            if defect <= 0.1 * ipm_tol {
                break;
            }
            // the refinement `δu` in the affine direction's buffers (not needed after the
            // corrector's right-hand side)
            let mut aff = std::mem::replace(&mut self.aff, Dir::new(0, 0, 0, 0));
            let solved = self.solve_h(&mut aff, tol);
            let du = &aff.u;
            let mut kept = None;
            if solved.is_ok() {
                self.apply_refinement(du, 1.0);
                let next = self.dual_defect();
                let (ap, ad) = self.step_lengths();
                if next <= 0.5 * defect && ap.min(ad) >= 0.5 * steps.0.min(steps.1) {
                    kept = Some((next, (ap, ad)));
                } else {
                    self.apply_refinement(du, -1.0);
                }
            }
            self.aff = aff;
            solved?;
            let Some((next, s)) = kept else {
                // `rhs` was overwritten by the rejected round: measure the direction kept again
                self.dual_defect();
                break;
            };
            self.refinements += 1;
            (defect, steps) = (next, s);
            // `rhs` holds the new defect for the next round
        }
        Ok((steps, self.defect_measure()))
    }

    /// The defect `−e` held in `rhs` (by [`DsxIpm::dual_defect`]) in the measure of the relative
    /// dual residual: the ∞-norm with λ's components divided by the size of λ's column, over
    /// `1 + ‖c‖∞ = 2` (`residuals`).
    fn defect_measure(&self) -> f64 {
        let lp = self.lp;
        let mut worst = self.rhs[..=self.n]
            .iter()
            .fold(0.0f64, |a, &v| a.max(v.abs()));
        let inv_lam = 1.0 / self.lam_scale;
        for i in 0..self.m {
            let (a0, kk) = (lp.var_offset(i), lp.support_len(i));
            for (t, v) in self.rhs[a0..a0 + kk + 2].iter().enumerate() {
                let v = if t == kk { v.abs() * inv_lam } else { v.abs() };
                worst = worst.max(v);
            }
        }
        worst / 2.0
    }

    /// The dual defect `e = r_d − GᵀΔy − ΔZ` of `self.dir`, written into `rhs` as `−e`;
    /// returns `‖e‖∞`.
    fn dual_defect(&mut self) -> f64 {
        let lp = self.lp;
        let (m, n) = (self.m, self.n);
        let d = &self.dir;
        let (xs, cx) = (self.sys.values(), self.sys.scale());
        let rhs = &mut self.rhs;
        rhs[..=n].fill(0.0);
        let mut gb = 0.0;
        for i in 0..m {
            let (r0, a0, kk) = (lp.row_offset(i), lp.var_offset(i), lp.support_len(i));
            let nz = lp.indptr[i];
            let dya = d.y[r0];
            gb += lp.y[i] * dya;
            let mut glam = self.lam_p[i] * dya;
            for t in 0..kk {
                let j = lp.col(i, t);
                let dyb = d.y[r0 + 1 + t];
                rhs[j] += lp.y[i] * (cx * xs[nz + t]) * dyb;
                glam -= self.lam_v[j] * dyb;
                let rd = rd_alpha(self.y[r0], self.y[r0 + 1 + t], self.z[a0 + t]);
                rhs[a0 + t] = -(rd - (dyb - dya + d.z[a0 + t]));
            }
            rhs[a0 + kk] = -(self.rd_lam[i] - (glam + d.z[a0 + kk] - d.zc[i]));
            rhs[a0 + kk + 1] = -(self.rd_xi[i] - (dya + d.z[a0 + kk + 1]));
        }
        let rd = &self.rd_w;
        // (a quadratic term adds q Δw to w's dual equation: module docs, *FDROP*)
        for j in 0..n {
            rhs[j] = -(rd[j] + self.quad * d.u[j] - (rhs[j] + d.zl[j] - d.zu[j]));
        }
        rhs[n] = -(rd[n] - gb);
        self.rhs.iter().fold(0.0f64, |a, &v| a.max(v.abs()))
    }

    /// Adds `sign ·` the refinement `δu` and the `δs, δy, δz` it implies to `self.dir`.
    fn apply_refinement(&mut self, du: &[f64], sign: f64) {
        let lp = self.lp;
        let (m, n) = (self.m, self.n);
        let d = &mut self.dir;
        let (xs, cx) = (self.sys.values(), self.sys.scale());
        let db = sign * du[n];
        for i in 0..m {
            let (r0, a0, kk) = (lp.row_offset(i), lp.var_offset(i), lp.support_len(i));
            let nz = lp.indptr[i];
            let (dl, dx) = (sign * du[a0 + kk], sign * du[a0 + kk + 1]);
            let mut act = self.lam_p[i] * dl + lp.y[i] * db + dx;
            for t in 0..kk {
                let j = lp.col(i, t);
                let da = sign * du[a0 + t];
                act -= da;
                let ds = lp.y[i] * (cx * xs[nz + t]) * sign * du[j] - self.lam_v[j] * dl + da;
                let r = r0 + 1 + t;
                d.s[r] += ds;
                d.y[r] -= self.y[r] * (1.0 / self.s[r]) * ds;
            }
            d.s[r0] += act;
            d.y[r0] -= self.y[r0] * (1.0 / self.s[r0]) * act;
            for v in a0..a0 + kk + 2 {
                d.u[v] += sign * du[v];
                d.z[v] -= self.z[v] * (1.0 / self.u[v]) * sign * du[v];
            }
        }
        for j in 0..=n {
            d.u[j] += sign * du[j];
        }
        for j in 0..n {
            let dw = sign * du[j];
            d.zl[j] -= self.zl[j] * dw / self.pl[j];
            d.zu[j] += self.zu[j] * dw / self.pu[j];
        }
        for &i in &self.capped {
            let l = lp.var_offset(i) + lp.support_len(i);
            d.zc[i] += self.zc[i] * sign * du[l] / (self.cap[i] - self.u[l]);
        }
    }

    /// The largest primal and dual step lengths along `self.dir` (before `η`).
    fn step_lengths(&self) -> (f64, f64) {
        let (n, t0) = (self.n, self.t0());
        let d = &self.dir;
        let mut pm = 0.0f64;
        let mut dm = 0.0f64;
        for (r, &ds) in d.s[..self.rows].iter().enumerate() {
            pm = pm.max(-ds * (1.0 / self.s[r]));
            dm = dm.max(-d.y[r] / self.y[r]);
        }
        for v in t0..d.u.len() {
            pm = pm.max(-d.u[v] * (1.0 / self.u[v]));
            dm = dm.max(-d.z[v] / self.z[v]);
        }
        let steps = self.box_steps((1.0 / pm, 1.0 / dm), &d.u[..n], &d.zl, &d.zu);
        self.cap_steps(steps, |l| d.u[l], &d.zc)
    }
}
