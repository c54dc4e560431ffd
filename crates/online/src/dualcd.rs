//! One dual coordinate-descent solver for the linear SVM (`K = 0`) and FDROP (`K > 0`), both
//! with an **unregularised** bias:
//!
//! ```text
//! min_{w,b}  ½‖w‖² + C Σ_i [1 − y_i(w·x_i + b) + Σ_{top K} [y_i w_j x_ij]_+]_+
//! ```
//!
//! **Dual.** Writing the loss as a maximum over `λ_i ∈ [0, C]` and deletion fractions
//! `σ_i ∈ [0,1]ⁿ`, `Σ_j σ_ij ≤ K` (`μ_i = λ_i σ_i` makes it jointly concave), the dual is
//!
//! ```text
//! max Σ_i λ_i − ½‖w‖²,  w = Σ_i y_i λ_i (1 − σ_i)∘x_i,  Σ_i y_i λ_i = 0,
//! 0 ≤ λ_i ≤ C,  0 ≤ μ_ij ≤ λ_i,  Σ_j μ_ij ≤ K λ_i.
//! ```
//!
//! With `K = 0` it is the SVM dual. **Bias.** LIBLINEAR's dual CD has no equality constraint
//! because it regularises the bias; here the constraint `Σ y_i λ_i = 0` is handled by an
//! augmented Lagrangian (method of multipliers): coordinate steps minimise
//! `½‖w‖² − Σλ + β s + ½ρ s²` with `s = Σ y_i λ_i` a maintained scalar, so a step costs exactly
//! what LIBLINEAR's costs (`O(nnz(x_i))`), and `β ← β + ρ s` after every pass. The current bias
//! estimate is `β + ρ s`. For FDROP each example's deletion block `μ_i` is first maximised
//! exactly for fixed `λ_i` (a separable quadratic with one sum constraint, solved exactly by a
//! sweep over the breakpoints of its multiplier), then `λ_i` takes an exact step along the ray `(1, σ_i)`.
//!
//! **Certificate.** The reported gap is certified: the primal is evaluated exactly at the
//! current `w` with the exactly optimal bias for that `w` (a weighted-median problem: the
//! `p`-th smallest of the hinge breakpoints, `p` = number of positives), and the dual at a
//! feasible point obtained by scaling the `λ` (and `μ`) of the heavier class so that
//! `Σ y_i λ_i = 0` exactly. Hence `primal − gap ≤ optimum ≤ primal`.

use bulwark_core::{Dataset, RowView, Sign, rng_from_seed};
use rand::seq::SliceRandom;

use crate::common::dot4;

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub c: f64,
    pub k: usize,
    pub tol: f64,
    pub max_passes: usize,
    pub seed: u64,
    pub rho: Option<f64>,
    /// With `false` there is no bias: `b = 0`, no equality constraint (LIBLINEAR's dual CD).
    pub bias: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Solution {
    pub w: Vec<f64>,
    pub b: f64,
    pub primal: f64,
    pub dual: f64,
    pub passes: usize,
    pub converged: bool,
    pub max_violation: f64,
    pub equality_residual: f64,
    pub support_vectors: usize,
    pub gap_checks: usize,
}

/// One deleted coordinate of an example: feature, deleted fraction σ, and x_ij.
#[derive(Debug, Clone, Copy)]
struct Del {
    j: usize,
    s: f64,
    x: f64,
}

#[inline]
fn row_dot(x: RowView<'_>, w: &[f64]) -> f64 {
    match x {
        RowView::Dense(v) => dot4(v, w),
        RowView::Sparse { .. } => x.dot(w),
    }
}

#[inline]
fn row_sq(x: RowView<'_>) -> f64 {
    match x {
        RowView::Dense(v) => dot4(v, v),
        RowView::Sparse { values, .. } => values.iter().map(|v| v * v).sum(),
    }
}

/// `Σ_{top K} [y w_j x_j]_+` with its features (integral worst-case deletion of K features).
fn top_k_harm(x: RowView<'_>, y: f64, w: &[f64], k: usize, buf: &mut Vec<(f64, usize)>) -> f64 {
    if k == 0 {
        return 0.0;
    }
    buf.clear();
    for (j, xj) in x.nonzeros() {
        let h = y * w[j] * xj;
        if h > 0.0 {
            buf.push((h, j));
        }
    }
    if buf.len() > k {
        buf.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        buf.truncate(k);
    }
    buf.iter().map(|p| p.0).sum()
}

struct State<'a> {
    data: &'a Dataset,
    y: Vec<f64>,
    c: f64,
    k: usize,
    bias: bool,
    rho: f64,
    lambda: Vec<f64>,
    dels: Vec<Vec<Del>>,
    sq: Vec<f64>,
    w: Vec<f64>,
    beta: f64,
    s: f64,
    buf: Vec<(f64, usize)>,
    cand: Vec<(f64, f64, usize, f64)>,
    events: Vec<(f64, f64)>,
}

impl State<'_> {
    /// `w·x̃_i` and `‖x̃_i‖²` with `x̃_i = (1 − σ_i)∘x_i`.
    #[inline]
    fn tilde(&self, i: usize) -> (f64, f64) {
        let x = self.data.row(i);
        let mut d = row_dot(x, &self.w);
        let mut q = self.sq[i];
        for e in &self.dels[i] {
            d -= e.s * e.x * self.w[e.j];
            q -= e.s * (2.0 - e.s) * e.x * e.x;
        }
        (d, q.max(0.0))
    }

    /// `w += a x̃_i`.
    #[inline]
    fn axpy_tilde(&mut self, i: usize, a: f64) {
        let x = self.data.row(i);
        x.axpy_into(a, &mut self.w);
        for e in &self.dels[i] {
            self.w[e.j] -= a * e.s * e.x;
        }
    }

    /// Exact maximisation of the dual over the deletion block of example `i` for fixed `λ_i`
    /// (or, when `λ_i = 0`, the integral best response that orients the next `λ_i` step).
    fn update_deletions(&mut self, i: usize) {
        let x = self.data.row(i);
        let yi = self.y[i];
        let li = self.lambda[i];
        if li == 0.0 {
            let mut buf = std::mem::take(&mut self.buf);
            top_k_harm(x, yi, &self.w, self.k, &mut buf);
            let dels = &mut self.dels[i];
            dels.clear();
            for &(_, j) in &buf {
                dels.push(Del {
                    j,
                    s: 1.0,
                    x: x_at(x, j),
                });
            }
            self.buf = buf;
            return;
        }
        // r = w without example i's deletions; σ_j(θ) = clip((a_j r_j − θ)/a_j², 0, 1), a_j = y λ x_ij
        let old = std::mem::take(&mut self.dels[i]);
        for e in &old {
            self.w[e.j] += yi * li * e.s * e.x;
        }
        self.cand.clear();
        for (j, xj) in x.nonzeros() {
            let a = yi * li * xj;
            let ar = a * self.w[j];
            if ar > 0.0 {
                self.cand.push((ar, a * a, j, xj));
            }
        }
        let kf = self.k as f64;
        let total0: f64 = self
            .cand
            .iter()
            .map(|&(ar, aa, _, _)| (ar / aa).min(1.0))
            .sum();
        let mut theta = 0.0;
        if total0 > kf {
            // S(θ) = Σ clip((ar − θ)/aa, 0, 1) is piecewise linear and decreasing: sweep its
            // breakpoints (ar where σ leaves 0, ar − aa where it reaches 1) downwards from
            // the largest and solve on the segment where S crosses K (exists at θ > 0).
            self.events.clear();
            for &(ar, aa, _, _) in &self.cand {
                self.events.push((ar, 1.0 / aa));
                self.events.push((ar - aa, -1.0 / aa));
            }
            self.events.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            let (mut s_cur, mut slope, mut cur) = (0.0, 0.0, self.events[0].0);
            theta = 0.0;
            for &(t, ds) in &self.events {
                let s_at = s_cur + slope * (cur - t);
                if s_at >= kf && slope > 0.0 {
                    theta = cur - (kf - s_cur) / slope;
                    break;
                }
                s_cur = s_at;
                cur = t;
                slope += ds;
            }
            theta = theta.max(0.0);
        }
        let sum_sigma: f64 = self
            .cand
            .iter()
            .map(|&(ar, aa, _, _)| ((ar - theta) / aa).clamp(0.0, 1.0))
            .sum();
        // guard against rounding: never exceed the budget K
        let shrink = if sum_sigma > kf { kf / sum_sigma } else { 1.0 };
        let mut dels = old;
        dels.clear();
        for &(ar, aa, j, xj) in &self.cand {
            let s = ((ar - theta) / aa).clamp(0.0, 1.0) * shrink;
            if s > 0.0 {
                dels.push(Del { j, s, x: xj });
                self.w[j] -= yi * li * s * xj;
            }
        }
        self.dels[i] = dels;
    }

    /// Certified primal, dual and optimal bias for the current `w`.
    fn certificate(&mut self, b_hint: f64) -> (f64, f64, f64) {
        let m = self.y.len();
        let mut cvals = Vec::with_capacity(m);
        let mut npos = 0usize;
        let mut buf = std::mem::take(&mut self.buf);
        for i in 0..m {
            let x = self.data.row(i);
            let yi = self.y[i];
            let z = row_dot(x, &self.w);
            let h = top_k_harm(x, yi, &self.w, self.k, &mut buf);
            cvals.push(1.0 - yi * z + h);
            if yi > 0.0 {
                npos += 1;
            }
        }
        self.buf = buf;
        if !self.bias {
            // no bias and no equality constraint: every λ ∈ [0, C]^m is dual feasible
            let loss: f64 = cvals.iter().map(|c| c.max(0.0)).sum();
            let primal = 0.5 * dot4(&self.w, &self.w) + self.c * loss;
            let dual = self.lambda.iter().sum::<f64>() - 0.5 * dot4(&self.w, &self.w);
            return (primal, dual, 0.0);
        }
        // breakpoints t_i = y_i c_i; slope of Σ[c_i − y_i b]_+ is −p + #{t_i ≤ b}
        let mut t: Vec<f64> = cvals.iter().zip(&self.y).map(|(c, y)| c * y).collect();
        let b = {
            let p = npos;
            let (lo_part, pth, _) = t.select_nth_unstable_by(p - 1, f64::total_cmp);
            let _ = lo_part;
            let lo = *pth;
            let hi = if p < m {
                let rest = &mut t[p..];
                *rest.iter().min_by(|a, b| a.total_cmp(b)).unwrap_or(&lo)
            } else {
                lo
            };
            b_hint.clamp(lo, hi.max(lo))
        };
        let loss: f64 = cvals
            .iter()
            .zip(&self.y)
            .map(|(c, y)| (c - y * b).max(0.0))
            .sum();
        let primal = 0.5 * dot4(&self.w, &self.w) + self.c * loss;

        // dual at the feasible point: scale the heavier class
        let (mut lp, mut ln) = (0.0, 0.0);
        for (l, y) in self.lambda.iter().zip(&self.y) {
            if *y > 0.0 {
                lp += l;
            } else {
                ln += l;
            }
        }
        let (heavy, gamma) = if lp > ln {
            (1.0, if lp > 0.0 { ln / lp } else { 1.0 })
        } else {
            (-1.0, if ln > 0.0 { lp / ln } else { 1.0 })
        };
        let mut w2 = self.w.clone();
        if gamma < 1.0 {
            let saved = std::mem::take(&mut self.w);
            self.w = w2;
            for i in 0..m {
                if self.y[i] == heavy && self.lambda[i] > 0.0 {
                    let a = -(1.0 - gamma) * self.y[i] * self.lambda[i];
                    self.axpy_tilde(i, a);
                }
            }
            w2 = std::mem::replace(&mut self.w, saved);
        }
        let sum_l = if heavy > 0.0 {
            gamma * lp + ln
        } else {
            lp + gamma * ln
        };
        let dual = sum_l - 0.5 * dot4(&w2, &w2);
        (primal, dual, b)
    }
}

#[inline]
fn x_at(x: RowView<'_>, j: usize) -> f64 {
    match x {
        RowView::Dense(v) => v[j],
        RowView::Sparse { indices, values } => indices.binary_search(&j).map_or(0.0, |k| values[k]),
    }
}

/// Runs the solver. `labels` must contain both classes (checked by the callers).
pub(crate) fn solve(data: &Dataset, labels: &[Sign], settings: &Settings) -> Solution {
    let m = data.len();
    let n = data.n_features();
    let sq: Vec<f64> = (0..m).map(|i| row_sq(data.row(i))).collect();
    // without a bias the augmented-Lagrangian terms vanish (ρ = 0 keeps β = s·0 = 0)
    let rho = if settings.bias {
        settings
            .rho
            .unwrap_or_else(|| (0.05 * sq.iter().sum::<f64>() / m as f64).max(1e-12))
    } else {
        0.0
    };
    let mut st = State {
        data,
        y: labels.iter().map(|s| s.as_f64()).collect(),
        c: settings.c,
        k: settings.k,
        bias: settings.bias,
        rho,
        lambda: vec![0.0; m],
        dels: vec![Vec::new(); m],
        sq,
        w: vec![0.0; n],
        beta: 0.0,
        s: 0.0,
        buf: Vec::new(),
        cand: Vec::new(),
        events: Vec::new(),
    };
    let mut rng = rng_from_seed(settings.seed);
    let mut order: Vec<usize> = (0..m).collect();
    let c = settings.c;
    let mut passes = 0;
    let mut best: Option<(f64, f64, f64, Vec<f64>)> = None; // (primal, dual, b, w)
    let mut best_dual = f64::NEG_INFINITY;
    let mut converged = false;
    let mut max_violation = f64::INFINITY;
    let mut gap_checks = 0;
    let mut since_check = 0;
    // LIBLINEAR-style shrinking: a variable at a bound whose gradient pushes it further out
    // than the previous pass's extreme projected gradients leaves the active set; the PG
    // spread on the active set is tested against `eps`, then everything is reactivated and,
    // on a full pass, the certified gap decides (tightening `eps` when it is not yet met).
    let mut active = m;
    let (mut pgmax_old, mut pgmin_old) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut eps = 0.1f64;
    while passes < settings.max_passes {
        order[..active].shuffle(&mut rng);
        let (mut pgmax, mut pgmin) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut t = 0;
        while t < active {
            let i = order[t];
            if st.k > 0 {
                st.update_deletions(i);
            }
            let yi = st.y[i];
            let (d, q) = st.tilde(i);
            let g = yi * d - 1.0 + yi * (st.beta + st.rho * st.s);
            let li = st.lambda[i];
            let mut pg = 0.0;
            if li <= 0.0 {
                if g > pgmax_old {
                    active -= 1;
                    order.swap(t, active);
                    continue;
                } else if g < 0.0 {
                    pg = g;
                }
            } else if li >= c {
                if g < pgmin_old {
                    active -= 1;
                    order.swap(t, active);
                    continue;
                } else if g > 0.0 {
                    pg = g;
                }
            } else {
                pg = g;
            }
            pgmax = pgmax.max(pg);
            pgmin = pgmin.min(pg);
            if pg != 0.0 {
                let new = (li - g / (q + st.rho)).clamp(0.0, c);
                let delta = new - li;
                if delta != 0.0 {
                    st.lambda[i] = new;
                    st.axpy_tilde(i, delta * yi);
                    st.s += delta * yi;
                }
            }
            t += 1;
        }
        passes += 1;
        since_check += 1;
        st.beta += st.rho * st.s;
        if active == 0 {
            (pgmax, pgmin) = (0.0, 0.0);
        }
        let full = active == m;
        let spread = pgmax - pgmin;
        if full {
            max_violation = pgmax.max(-pgmin);
        }
        let last = passes == settings.max_passes;
        let mut check = last || since_check >= 500;
        if spread <= eps {
            if !full {
                active = m;
                (pgmax_old, pgmin_old) = (f64::INFINITY, f64::NEG_INFINITY);
                if !last {
                    continue;
                }
            }
            check = true;
        }
        if check {
            since_check = 0;
            gap_checks += 1;
            let (primal, dual, b) = st.certificate(st.beta + st.rho * st.s);
            best_dual = best_dual.max(dual);
            if best.as_ref().is_none_or(|bst| primal < bst.0) {
                best = Some((primal, best_dual, b, st.w.clone()));
            } else if let Some(bst) = best.as_mut() {
                bst.1 = best_dual;
            }
            let (p, dl) = best.as_ref().map(|b| (b.0, b.1)).unwrap_or((primal, dual));
            if p - dl <= settings.tol * p.abs().max(1e-300) {
                converged = true;
                break;
            }
            if spread <= eps {
                eps = (eps * 0.1).max(1e-15);
            }
            active = m;
            (pgmax_old, pgmin_old) = (f64::INFINITY, f64::NEG_INFINITY);
            continue;
        }
        pgmax_old = if pgmax <= 0.0 { f64::INFINITY } else { pgmax };
        pgmin_old = if pgmin >= 0.0 {
            f64::NEG_INFINITY
        } else {
            pgmin
        };
    }
    let (primal, dual, b, w) = best.expect("at least one certificate is computed");
    Solution {
        support_vectors: st.lambda.iter().filter(|l| **l > 0.0).count(),
        w,
        b,
        primal,
        dual,
        passes,
        converged,
        max_violation,
        equality_residual: if st.bias { st.s } else { 0.0 },
        gap_checks,
    }
}
