//! The deterministic batch solver of (2.22): Newton–CG with an Armijo line search, stopped by
//! the duality certificate (a relative gap, not a gradient norm).
//!
//! The objective is smooth and strictly convex away from `w = 0` (Ginodi Thm 3.2) but not
//! differentiable at 0, where GURU starts. The batch solver starts instead on the ray of the
//! limit gradient, at the minimiser of `G(t d̂)`, `d̂ = Σ c y x/‖Σ c y x‖` (a convex function of
//! `t > 0`, minimised by golden-section search). A warm start `w₀` (e.g. the optimum at a
//! nearby `σ`) replaces `d̂` by `w₀/‖w₀‖` on the same ray search, so only its direction is
//! trusted. Each Newton direction solves `H d = −∇G` by
//! conjugate gradients with a Jacobi preconditioner to a relative residual
//! `min(0.5, √(‖∇G‖/‖∇G₀‖))` (superlinear local convergence); Hessian–vector products are one
//! pass over the rows, so nothing of size `n × n` is formed and sparse data stay sparse.
//! Every buffer is allocated before the first iteration.

use crate::algorithm::{Outcome, UNDERFLOW};
use crate::objective::{CorrectionScratch, Objective};

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The minimiser over `t > 0` of `G(t d̂)`, from `p_m = y_m x_mᵀd̂` (one pass done by the caller).
fn ray_minimiser(obj: &Objective<'_>, p: &[f64]) -> f64 {
    let spec = obj.spec();
    let value = |t: f64| -> f64 {
        let a = spec.sigma * t;
        obj.sum_ranks1(
            (0..p.len())
                .map(|i| obj.weight(i) * crate::loss::perspective(spec.loss, a, 1.0 - t * p[i]))
                .sum(),
        )
    };
    let pmax = obj
        .max_ranks1(p.iter().fold(0.0_f64, |m, v| m.max(v.abs())))
        .max(1e-300);
    minimise_on_ray(value, 1.0 / pmax)
}

/// The minimiser over `t > 0` of a convex `value(t)` that grows without bound (as `G(t d̂)`
/// does: the perspective adds `σt r(·) ≥ 0` and the hinge part grows linearly): `t` doubled from
/// `hi` until the value stops decreasing, so that the minimiser lies in `[0, 2t]`, then golden
/// section.
pub(crate) fn minimise_on_ray(value: impl Fn(f64) -> f64, mut hi: f64) -> f64 {
    let mut f_hi = value(hi);
    for _ in 0..200 {
        let f = value(2.0 * hi);
        if f >= f_hi {
            break;
        }
        hi *= 2.0;
        f_hi = f;
    }
    golden(value, 0.0, 2.0 * hi)
}

/// The minimiser over `t > 0` of `G(t d̂)` as the root of its derivative
/// `G'(t) = Σ c_m (σ r(u_m) − p_m f̃'(u_m))`, `u_m = (1 − t p_m)/(σt)`, which increases with
/// `G''(t) = Σ c_m f̃''(u_m)/(σt³)` (`G` is convex on the ray): bracketed by doubling or halving
/// from `t0`, then safeguarded Newton (bisection when a step leaves the bracket) to the last
/// bits. A root moves only at first order with rounding in `p`, where a search on the values of
/// a flat `G` is good to `√ε` (the kernel and the linear SGD must land on the same point).
/// `None` when `G` does not decrease from `t = 0` or no sign change is found.
fn ray_root(obj: &Objective<'_>, p: &[f64], t0: f64) -> Option<f64> {
    let spec = obj.spec();
    let (sigma, loss) = (spec.sigma, spec.loss);
    let slope = |t: f64| -> (f64, f64) {
        let a = sigma * t;
        let mut g = [0.0; 2];
        for (i, &pi) in p.iter().enumerate() {
            let u = (1.0 - t * pi) / a;
            let c = obj.weight(i);
            g[0] += c * (sigma * loss.scale_derivative(u) - pi * loss.d1(u));
            g[1] += c * loss.d2(u);
        }
        obj.sum_ranks(&mut g);
        (g[0], g[1] / (a * t * t))
    };
    root_of_slope(slope, t0)
}

/// The root over `t > 0` of an increasing `slope(t) = (G'(t), G''(t))` (a convex `G` on a ray):
/// bracketed by doubling or halving from `t0`, then safeguarded Newton (bisection when a step
/// leaves the bracket) to the last bits ([`ray_root`]). `None` when no sign change is found.
pub(crate) fn root_of_slope(slope: impl Fn(f64) -> (f64, f64), t0: f64) -> Option<f64> {
    if !(t0 > 0.0 && t0.is_finite()) {
        return None;
    }
    // the bracket [lo, hi]: slope(lo) < 0 ≤ slope(hi)
    let (mut lo, mut hi) = (t0, t0);
    let s0 = slope(t0);
    let mut found = false;
    if s0.0 >= 0.0 {
        for _ in 0..400 {
            lo *= 0.5;
            if slope(lo).0 < 0.0 {
                found = true;
                break;
            }
            hi = lo;
        }
    } else {
        for _ in 0..400 {
            hi *= 2.0;
            if slope(hi).0 >= 0.0 {
                found = true;
                break;
            }
            lo = hi;
        }
    }
    if !found {
        return None;
    }
    let mut t = 0.5 * (lo + hi);
    for _ in 0..200 {
        let (g1, g2) = slope(t);
        if g1 >= 0.0 {
            hi = t;
        } else {
            lo = t;
        }
        let newton = t - g1 / g2;
        let next = if newton.is_finite() && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if next == t || hi - lo <= 4.0 * f64::EPSILON * hi || (next - t).abs() <= 1e-15 * t {
            t = next;
            break;
        }
        t = next;
    }
    Some(t)
}

/// Moves a point `w ≠ 0` (of norm `norm` in the noise norm, objective `value`, margin terms
/// `b_m = 1 − y_m wᵀx_m`) to the minimiser `τw` of `G` on its ray, from the margins alone (they
/// scale with the point: no pass over the data). When that lowers `G`, writes `τw` into `out`
/// and the new margin terms into `b`, and returns `(τ, G(τw))`; `along` is scratch of the
/// length of `b`.
///
/// At the minimiser on the ray `G = Σ c_m f̃'(u_m)`, the dual objective at `α_m = c_m f̃'(u_m)`
/// (Euler's identity for the 1-homogeneous perspective `g(a, b) = a f̃(b/a)`: `g = a g_a + b g_b`,
/// and `dG/dτ = 0` cancels the `g_a` terms), so the certificate's gap there is only what the
/// feasibility scaling `κ` (3.17) costs, which is second order in the direction's error.
pub(crate) fn onto_ray_minimum(
    obj: &Objective<'_>,
    w: &[f64],
    out: &mut [f64],
    norm: f64,
    value: f64,
    b: &mut [f64],
    along: &mut [f64],
) -> Option<(f64, f64)> {
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    for (p, b) in along.iter_mut().zip(b.iter()) {
        *p = (1.0 - b) / norm;
    }
    // the point itself is at t = norm on the ray of d̂ = w/norm
    let t = ray_root(obj, along, norm)?;
    let spec = obj.spec();
    let a = spec.sigma * t;
    let moved = obj.sum_ranks1(
        (0..along.len())
            .map(|i| obj.weight(i) * crate::loss::perspective(spec.loss, a, 1.0 - t * along[i]))
            .sum(),
    );
    // (a NaN never moves the point)
    if moved.partial_cmp(&value) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    for (b, p) in b.iter_mut().zip(along.iter()) {
        *b = 1.0 - t * p;
    }
    let factor = t / norm;
    for (o, x) in out.iter_mut().zip(w) {
        *o = x * factor;
    }
    Some((factor, moved))
}

fn golden(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let mut c = b - r * (b - a);
    let mut d = a + r * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..100 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - r * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + r * (b - a);
            fd = f(d);
        }
        if (b - a) <= 1e-12 * b.abs().max(1e-300) {
            break;
        }
    }
    let t = 0.5 * (a + b);
    if t > 0.0 { t } else { b }
}

fn outcome(
    w: Vec<f64>,
    certificate: crate::objective::Certificate,
    iterations: usize,
    cg_iterations: usize,
    passes: usize,
    stopped: Option<String>,
) -> Outcome {
    Outcome {
        w,
        certificate,
        iterations: iterations as u64,
        passes,
        converged: stopped.is_none(),
        stopped,
        solver: "newton-cg",
        count: ("cg_iterations", cg_iterations as f64),
    }
}

/// Newton iterations without the certified gap halving (the objective settled) before the
/// plain certificate's dual point is corrected ([`Objective::certificate_corrected`]).
const STALL: usize = 10;

pub(crate) fn solve(
    obj: &Objective<'_>,
    tolerance: f64,
    max_iter: usize,
    start: Option<&[f64]>,
) -> Outcome {
    let (m, dim) = (obj.len(), obj.dim());
    let mut w = vec![0.0; dim];
    let mut b = vec![0.0; m];
    let mut b_trial = vec![0.0; m];
    let mut v = vec![0.0; dim];
    let mut g = vec![0.0; dim];
    let (mut u, mut k) = (vec![0.0; m], vec![0.0; m]);
    let (mut diag, mut scratch) = (vec![0.0; dim], vec![0.0; dim]);
    let mut dir = vec![0.0; dim];
    let mut cg = CgScratch::new(dim);
    let mut w_hat = vec![0.0; dim];
    let mut w_trial = vec![0.0; dim];
    let mut passes = 0usize;

    // the limit gradient at 0 is −Σ c y x; start on its ray
    let mut value = obj.value_into(&w, &mut b);
    obj.gradient_from(&w, &b, &mut v, &mut g);
    passes += 2;
    let vn = dot(&v, &v).sqrt();
    if vn == 0.0 {
        // Σ c y x = 0: w = 0 is optimal (every direction's derivative at 0 is 0)
        let certificate = obj.certificate(&w, &b, &v, value);
        return outcome(w, certificate, 0, 0, passes, None);
    }
    let start = start.filter(|s| s.len() == dim && s.iter().all(|x| x.is_finite()));
    let sn = start.map_or(0.0, |s| dot(s, s).sqrt());
    match start {
        Some(s) if sn > 0.0 => {
            for (d, s) in dir.iter_mut().zip(s) {
                *d = s / sn;
            }
        }
        _ => {
            for (d, v) in dir.iter_mut().zip(&v) {
                *d = v / vn;
            }
        }
    }
    let proj: Vec<f64> = (0..m).map(|i| obj.label(i) * obj.dot(i, &dir)).collect();
    passes += 1;
    let t0 = ray_minimiser(obj, &proj);
    drop(proj);
    for (w, d) in w.iter_mut().zip(&dir) {
        *w = t0 * d;
    }

    let mut iterations = 0;
    let mut cg_total = 0;
    let mut g0 = f64::NAN;
    let mut stopped = None;
    let mut corr = CorrectionScratch::default();
    let mut anchor = f64::INFINITY;
    let mut stalled = 0;
    let mut last_value = f64::INFINITY;
    loop {
        value = obj.value_into(&w, &mut b);
        let r_sum = obj.gradient_from(&w, &b, &mut v, &mut g);
        passes += 2;
        let mut certificate = obj.certificate(&w, &b, &v, value);
        let plain_gap = certificate.relative_gap;
        if plain_gap <= 0.5 * anchor {
            anchor = plain_gap;
            stalled = 0;
        } else {
            stalled += 1;
        }
        // the objective's relative decrease in the last iteration: while it exceeds the
        // tolerance no certificate can meet the tolerance
        let decrease = (last_value - value) / value;
        last_value = value;
        if plain_gap > tolerance
            && ((stalled >= STALL && decrease <= tolerance)
                || iterations >= max_iter
                || stopped.is_some())
        {
            // the objective has settled but the plain certificate has not halved for STALL
            // iterations, or the solver is about to stop short (near the hinge the plain bound
            // is first order in the direction's error): its dual point corrected, within the
            // passes made so far
            let budget = passes.saturating_sub(corr.passes());
            certificate =
                obj.certificate_corrected(certificate, &w, &b, &v, tolerance, budget, &mut corr);
            stalled = 0;
            anchor = anchor.min(certificate.relative_gap);
        }
        let gnorm = dot(&g, &g).sqrt();
        if g0.is_nan() {
            g0 = gnorm.max(1e-300);
        }
        if certificate.relative_gap <= tolerance {
            return outcome(
                w,
                certificate,
                iterations,
                cg_total,
                passes + corr.passes(),
                None,
            );
        }
        if value <= UNDERFLOW {
            // the terms have underflowed: nothing smaller is distinguishable, stop here (the
            // fit reports it unconverged with the reason)
            stopped.get_or_insert_with(|| {
                format!("the objective underflows (G = {value:.1e}): the data are separated with a margin sigma cannot reach")
            });
        }
        if iterations >= max_iter {
            stopped.get_or_insert_with(|| format!("iteration limit {max_iter}"));
        }
        if let Some(why) = stopped {
            return outcome(
                w,
                certificate,
                iterations,
                cg_total,
                passes + corr.passes(),
                Some(why),
            );
        }
        iterations += 1;

        // Newton direction by preconditioned CG on H d = −g
        let wn = dot(&w, &w).sqrt();
        for (h, w) in w_hat.iter_mut().zip(&w) {
            *h = w / wn;
        }
        obj.curvature(
            &w_hat,
            wn,
            r_sum,
            &b,
            &mut u,
            &mut k,
            &mut diag,
            &mut scratch,
        );
        passes += 1;
        let dmax = diag.iter().fold(0.0_f64, |a, b| a.max(*b));
        for d in diag.iter_mut() {
            *d = d.max(1e-12 * dmax).max(1e-300);
        }
        let forcing = (gnorm / g0).sqrt().min(0.5);
        let its = newton_direction(
            |p, hp| obj.hess_vec(&w_hat, wn, r_sum, &u, &k, p, hp),
            |r, z| {
                for ((z, r), d) in z.iter_mut().zip(r).zip(&diag) {
                    *z = r / d;
                }
            },
            &g,
            &mut dir,
            &mut cg,
            forcing * gnorm,
            dim.clamp(20, 500),
        );
        passes += its;
        cg_total += its;

        // Armijo backtracking
        let slope = dot(&g, &dir);
        if slope >= 0.0 || !slope.is_finite() {
            stopped = Some("no descent direction (the precision floor)".into());
            continue;
        }
        let (accepted, tries) = armijo(&w, &dir, value, slope, &mut w_trial, |x| {
            obj.value_into(x, &mut b_trial)
        });
        passes += tries;
        if !accepted {
            stopped = Some("line search made no progress (the precision floor)".into());
            continue;
        }
        std::mem::swap(&mut w, &mut w_trial);
    }
}

/// The buffers of [`newton_direction`].
pub(crate) struct CgScratch {
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    hp: Vec<f64>,
}

impl CgScratch {
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            r: vec![0.0; dim],
            z: vec![0.0; dim],
            p: vec![0.0; dim],
            hp: vec![0.0; dim],
        }
    }
}

/// The Newton direction by preconditioned conjugate gradients on `H d = −g` from `d = 0`:
/// `hess(p, out)` writes `H p`, `precond(r, z)` writes `z = M⁻¹ r` for a symmetric positive
/// (semi-)definite `M⁻¹` (definite where `H` is); stops at a residual `tol` or after `max_cg`
/// products. Without curvature along the first direction the direction is the preconditioned
/// gradient. Returns the products made.
pub(crate) fn newton_direction(
    mut hess: impl FnMut(&[f64], &mut [f64]),
    mut precond: impl FnMut(&[f64], &mut [f64]),
    g: &[f64],
    dir: &mut [f64],
    s: &mut CgScratch,
    tol: f64,
    max_cg: usize,
) -> usize {
    let CgScratch { r, z, p, hp } = s;
    dir.fill(0.0);
    for j in 0..g.len() {
        r[j] = -g[j];
    }
    precond(r, z);
    p.copy_from_slice(z);
    let mut rz = dot(r, z);
    let mut products = 0;
    for it in 0..max_cg {
        hess(p, hp);
        products += 1;
        let php = dot(p, hp);
        if php <= 0.0 || !php.is_finite() {
            if it == 0 {
                // no curvature along the preconditioned gradient: take it as the direction
                dir.copy_from_slice(z);
            }
            break;
        }
        let alpha = rz / php;
        for j in 0..g.len() {
            dir[j] += alpha * p[j];
            r[j] -= alpha * hp[j];
        }
        if dot(r, r).sqrt() <= tol {
            break;
        }
        precond(r, z);
        let rz_new = dot(r, z);
        let beta = rz_new / rz;
        rz = rz_new;
        for j in 0..g.len() {
            p[j] = z[j] + beta * p[j];
        }
    }
    products
}

/// Armijo backtracking from `w` along `dir` (`slope = ∇Gᵀdir < 0`, `G(w) = value0`): steps
/// `1, 1/2, …` (at most 60) until `value(trial) ≤ value0 + 1e-4 t slope`; the accepted point is
/// left in `trial`. Returns whether a step was accepted and the evaluations made.
pub(crate) fn armijo(
    w: &[f64],
    dir: &[f64],
    value0: f64,
    slope: f64,
    trial: &mut [f64],
    mut value: impl FnMut(&[f64]) -> f64,
) -> (bool, usize) {
    let mut t = 1.0;
    for tries in 1..=60 {
        for j in 0..w.len() {
            trial[j] = w[j] + t * dir[j];
        }
        if value(trial) <= value0 + 1e-4 * t * slope {
            return (true, tries);
        }
        t *= 0.5;
    }
    (false, 60)
}
