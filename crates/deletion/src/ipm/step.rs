//! Step lengths: the ratio tests (the largest step keeping a vector non-negative) and the
//! update of the iterate along the combined direction.

use super::DsxIpm;
use super::kernels::LANES;
use super::parallel::{Exec, PARTS, jobs, parts, parts_mut};

/// `x += α dx`, `y += β dy`, block by block.
fn step2(
    exec: &Exec,
    bounds: &[usize; PARTS + 1],
    (x, dx, alpha): (&mut [f64], &[f64], f64),
    (y, dy, beta): (&mut [f64], &[f64], f64),
) {
    let (dx, dy) = (parts(dx, bounds), parts(dy, bounds));
    let (mut x, mut y) = (parts_mut(x, bounds), parts_mut(y, bounds));
    let work = jobs(|k| {
        (
            std::mem::take(&mut x[k]),
            dx[k],
            std::mem::take(&mut y[k]),
            dy[k],
        )
    });
    exec.run(work, |(x, dx, y, dy)| {
        for (x, dx) in x.iter_mut().zip(dx) {
            *x += alpha * dx;
        }
        for (y, dy) in y.iter_mut().zip(dy) {
            *y += beta * dy;
        }
    });
}

/// `max(0, max_k (−d_k · inv_k))`: with `inv = 1/v`, `v > 0`, the largest step keeping
/// `v + α d ≥ 0` is `1 / max`. Vectorised (NaN entries are ignored; callers check finiteness).
#[inline]
pub(super) fn max_neg_ratio(d: &[f64], inv: &[f64]) -> f64 {
    max_ratio_by(d, inv, |a, b| -a * b)
}

/// `max(0, max_k (−d_k / v_k))` for `v > 0` (the dual ratio test without stored reciprocals),
/// vectorised. NaN entries are ignored, as in [`max_neg_ratio`].
#[inline]
pub(super) fn max_neg_ratio_div(d: &[f64], v: &[f64]) -> f64 {
    max_ratio_by(d, v, |a, b| -a / b)
}

/// `max(0, max_k ratio(d_k, x_k))` in [`LANES`] independent lanes (NaN ratios are ignored).
#[inline(always)]
fn max_ratio_by(d: &[f64], x: &[f64], ratio: impl Fn(f64, f64) -> f64) -> f64 {
    let k = d.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    for (a, b) in d[..k].chunks_exact(LANES).zip(x[..k].chunks_exact(LANES)) {
        for l in 0..LANES {
            let r = ratio(a[l], b[l]);
            acc[l] = if r > acc[l] { r } else { acc[l] };
        }
    }
    let mut m = acc.iter().fold(0.0f64, |x, &y| if y > x { y } else { x });
    for (&a, &b) in d[k..].iter().zip(&x[k..]) {
        let r = ratio(a, b);
        if r > m {
            m = r;
        }
    }
    m
}

/// `max(m, −d/v)` for `m ≥ 0`, `v > 0`: compares `−d` with `m·v` and divides only when the
/// maximum grows (rarely, after the first entries), so the dual ratio test needs no stored
/// reciprocals of `y` and `z`. A NaN `d` is ignored, as in [`max_neg_ratio`].
#[inline(always)]
pub(super) fn mx_ratio(m: f64, d: f64, v: f64) -> f64 {
    if -d > m * v { -d / v } else { m }
}

impl DsxIpm<'_> {
    /// The step lengths `(ap, ad)` shortened, where they must be, by the box `−C ≤ w ≤ C` along
    /// `dw` and its duals `z_l, z_u` along `dzl, dzu`.
    pub(super) fn box_steps(
        &self,
        (mut ap, mut ad): (f64, f64),
        dw: &[f64],
        dzl: &[f64],
        dzu: &[f64],
    ) -> (f64, f64) {
        for j in 0..self.n {
            let dw = dw[j];
            if dw < 0.0 {
                ap = ap.min(-self.pl[j] / dw);
            } else if dw > 0.0 {
                ap = ap.min(self.pu[j] / dw);
            }
            if dzl[j] < 0.0 {
                ad = ad.min(-self.zl[j] / dzl[j]);
            }
            if dzu[j] < 0.0 {
                ad = ad.min(-self.zu[j] / dzu[j]);
            }
        }
        (ap, ad)
    }

    /// The step lengths `(ap, ad)` shortened, where they must be, by the caps `λ_i ≤ Λ_i` along
    /// `dlam(index of λ_i)` and their duals along `dzc`.
    pub(super) fn cap_steps(
        &self,
        (mut ap, mut ad): (f64, f64),
        dlam: impl Fn(usize) -> f64,
        dzc: &[f64],
    ) -> (f64, f64) {
        for &i in &self.capped {
            let l = self.lam_index(i);
            let dl = dlam(l);
            if dl > 0.0 {
                ap = ap.min((self.cap[i] - self.u[l]) / dl);
            }
            if dzc[i] < 0.0 {
                ad = ad.min(-self.zc[i] / dzc[i]);
            }
        }
        (ap, ad)
    }

    /// Moves the iterate along the combined direction: the primal part `(u, s)` by `ap`, the
    /// dual part `(y, z, z_l, z_u)` by `ad`.
    pub(super) fn take_step(&mut self, ap: f64, ad: f64) {
        let (n, t0) = (self.n, self.t0());
        let p = self.parts;
        let d = &self.dir;
        let (s, y) = (
            (&mut self.s[..], &d.s[..self.rows], ap),
            (&mut self.y[..], &d.y[..self.rows], ad),
        );
        step2(&self.exec, &p.rows, s, y);
        let (ut, zt) = (&mut self.u[t0..], &mut self.z[t0..]);
        step2(
            &self.exec,
            &p.tail,
            (ut, &d.u[t0..], ap),
            (zt, &d.z[t0..], ad),
        );
        for (u, du) in self.u[..t0].iter_mut().zip(&d.u[..t0]) {
            *u += ap * du;
        }
        for j in 0..n {
            self.pl[j] += ap * d.u[j];
            self.pu[j] -= ap * d.u[j];
            self.zl[j] += ad * d.zl[j];
            self.zu[j] += ad * d.zu[j];
        }
        for &i in &self.capped {
            self.zc[i] += ad * d.zc[i];
        }
    }
}
