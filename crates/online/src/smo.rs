//! The kernel C-SVM with an unregularised bias, solved by SMO:
//! `max_α Σ α_i − ½ Σ α_i α_j y_i y_j K(x_i, x_j)` subject to `0 ≤ α_i ≤ C c_i`, `Σ y_i α_i = 0`
//! (`c_i` the example weights, 1 without them), classifier `sign(Σ α_i y_i K(x_i, x) + b)`.
//!
//! The method is LIBSVM's (Fan, Chen & Lin 2005, "Working set selection using second order
//! information", JMLR 6; Chang & Lin 2011, §4–5), written from the papers:
//! - working set: `i` the maximal violator of the first-order condition, `j` by the second-order
//!   gain `−(G_i ± G_j)²/a_ij` (Fan et al., WSS 2), with `a_ij ≤ 0` replaced by `τ = 1e-12`;
//! - the two-variable subproblem solved in closed form and clipped to the box;
//! - stopping when the maximal violation `m(α) − M(α) ≤ ε` (LIBSVM's `-e`, default 1e-3), the
//!   `tolerance` here;
//! - shrinking: every `min(l, 1000)` iterations the bounded examples that cannot re-enter the
//!   working set are moved out of the active set, and the full gradient is reconstructed from
//!   `Ḡ_i = Σ_{α_j = C_j} C_j Q_ij` before the final check (Chang & Lin §5.1);
//! - `Q_ij = y_i y_j K(x_i, x_j)` rows from a [`GramCache`] within the user's byte cap; rows hold
//!   only the active entries, examples are permuted so that the active ones come first.
//!
//! The bias is `b = −ρ`, `ρ` the mean of `y_i G_i` over the free `α_i` (or the midpoint of the
//! feasible interval when none is free). With every fit the report gives the primal and dual
//! objectives and their gap, the violation reached, the iterations and the kernel evaluations.

use std::ops::Range;
use std::time::Instant;

use bulwark_core::kernel::kernel_row;
use bulwark_core::{
    Dataset, DenseMatrix, Error, Features, Fit, FitReport, Fitted, GramCache, Kernel, KernelModel,
    ParamGuard, Result,
};
use serde::{Deserialize, Serialize};

use crate::common::check_c;

const TAU: f64 = 1e-12;

/// The kernel C-SVM solved by SMO; see the module notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSvmParams {
    kernel: Kernel,
    c: f64,
    tolerance: f64,
    cache_bytes: usize,
    shrinking: bool,
    max_iter: Option<usize>,
}

impl Default for KernelSvmParams {
    fn default() -> Self {
        Self {
            kernel: Kernel::Rbf { gamma: 1.0 },
            c: 1.0,
            tolerance: 1e-3,
            cache_bytes: 200 << 20,
            shrinking: true,
            max_iter: None,
        }
    }
}

impl KernelSvmParams {
    /// Defaults: RBF with `γ = 1` (SVM-light's), `C = 1`, tolerance 1e-3 (LIBSVM's `ε`),
    /// a 200 MiB Gram-row cache, shrinking on, `max(10⁷, 100 l)` iterations.
    pub fn new() -> Self {
        Self::default()
    }
    /// The kernel.
    pub fn kernel(mut self, k: Kernel) -> Self {
        self.kernel = k;
        self
    }
    /// The box `C > 0` (an example's bound is `C` times its weight).
    pub fn c(mut self, c: f64) -> Self {
        self.c = c;
        self
    }
    /// Stop when the maximal violating pair's gap `m(α) − M(α)` is at most this (LIBSVM's `ε`).
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }
    /// The Gram-row cache's cap in bytes (at least two rows are kept; the report says how many
    /// rows fitted).
    pub fn cache_bytes(mut self, b: usize) -> Self {
        self.cache_bytes = b;
        self
    }
    /// Shrinking on or off (the solution is the same; the time is not).
    pub fn shrinking(mut self, yes: bool) -> Self {
        self.shrinking = yes;
        self
    }
    /// Iteration limit (default `max(10⁷, 100 l)`); on reaching it the report says
    /// `converged: false` with the violation reached.
    pub fn max_iter(mut self, k: Option<usize>) -> Self {
        self.max_iter = k;
        self
    }
}

impl ParamGuard for KernelSvmParams {
    type Checked = KernelSvmParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&KernelSvmParams> {
        self.kernel.validate()?;
        check_c(self.c)?;
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(Error::param(
                "tolerance",
                self.tolerance,
                "a finite number > 0",
            ));
        }
        if self.cache_bytes == 0 {
            return Err(Error::param("cache_size", 0, "a positive size"));
        }
        if self.max_iter == Some(0) {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        Ok(self)
    }
    fn check(self) -> Result<KernelSvmParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// The rows of `Q` in the solver's order: `perm[k]` is the example at position `k`.
struct QRows<'a> {
    x: &'a Features,
    kernel: Kernel,
    perm: Vec<usize>,
    y: Vec<f64>,
    /// `‖x_r‖²` by original row `r`.
    sq: Vec<f64>,
    dense: Vec<f64>,
    evaluations: u64,
}

impl QRows<'_> {
    fn fill(&mut self, row: usize, range: Range<usize>, out: &mut [f64]) {
        self.evaluations += range.len() as u64;
        kernel_row(
            self.kernel,
            self.x,
            self.perm[row],
            &self.perm[range.clone()],
            &self.sq,
            &mut self.dense,
            out,
        );
        let yi = self.y[row];
        for (o, &yk) in out.iter_mut().zip(&self.y[range]) {
            *o *= yi * yk;
        }
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.perm.swap(i, j);
        self.y.swap(i, j);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Lower,
    Upper,
    Free,
}

/// `I_up` of Fan et al.: `y_t α_t` may increase.
fn in_up(y: f64, s: Bound) -> bool {
    if y > 0.0 {
        s != Bound::Upper
    } else {
        s != Bound::Lower
    }
}

/// `I_low` of Fan et al.: `y_t α_t` may decrease.
fn in_low(y: f64, s: Bound) -> bool {
    if y > 0.0 {
        s != Bound::Lower
    } else {
        s != Bound::Upper
    }
}

/// The solver's state, per position (see [`QRows::perm`]).
struct Smo<'a> {
    q: QRows<'a>,
    cache: GramCache,
    alpha: Vec<f64>,
    g: Vec<f64>,
    g_bar: Vec<f64>,
    cap: Vec<f64>,
    qd: Vec<f64>,
    status: Vec<Bound>,
    active: usize,
    unshrink: bool,
}

/// What the solver returns, in the examples' original order.
struct Solution {
    alpha: Vec<f64>,
    rho: f64,
    primal: f64,
    dual: f64,
    violation: f64,
    iterations: usize,
    converged: bool,
}

impl<'a> Smo<'a> {
    fn new(x: &'a Features, y: Vec<f64>, cap: Vec<f64>, kernel: Kernel, cache: GramCache) -> Self {
        let l = y.len();
        let sq: Vec<f64> = (0..l)
            .map(|i| x.row(i).nonzeros().map(|(_, v)| v * v).sum())
            .collect();
        let qd = sq.iter().map(|&s| kernel.from_dot(s, s, s)).collect();
        Self {
            q: QRows {
                x,
                kernel,
                perm: (0..l).collect(),
                y,
                sq,
                dense: vec![0.0; x.cols()],
                evaluations: 0,
            },
            cache,
            alpha: vec![0.0; l],
            // α = 0: G = Qα − e = −e, Ḡ = 0
            g: vec![-1.0; l],
            g_bar: vec![0.0; l],
            cap,
            qd,
            status: vec![Bound::Lower; l],
            active: l,
            unshrink: false,
        }
    }

    fn l(&self) -> usize {
        self.alpha.len()
    }

    fn set_status(&mut self, i: usize) {
        self.status[i] = if self.alpha[i] >= self.cap[i] {
            Bound::Upper
        } else if self.alpha[i] <= 0.0 {
            Bound::Lower
        } else {
            Bound::Free
        };
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.q.swap(i, j);
        self.cache.swap(i, j);
        self.alpha.swap(i, j);
        self.g.swap(i, j);
        self.g_bar.swap(i, j);
        self.cap.swap(i, j);
        self.qd.swap(i, j);
        self.status.swap(i, j);
    }

    fn up(&self, t: usize) -> bool {
        in_up(self.q.y[t], self.status[t])
    }
    fn low(&self, t: usize) -> bool {
        in_low(self.q.y[t], self.status[t])
    }

    /// WSS 2 of Fan et al.; `None` when `m(α) − M(α) < eps` (returned as the violation).
    fn select(&mut self, eps: f64) -> (Option<(usize, usize)>, f64) {
        let n = self.active;
        // i: argmax_{t ∈ I_up} −y_t G_t
        let mut gmax = f64::NEG_INFINITY;
        let mut best_i = None;
        for t in 0..n {
            if self.up(t) {
                let v = -self.q.y[t] * self.g[t];
                if v >= gmax {
                    gmax = v;
                    best_i = Some(t);
                }
            }
        }
        let mut gmax2 = f64::NEG_INFINITY;
        let mut best_j = None;
        let mut obj_min = f64::INFINITY;
        if let Some(i) = best_i {
            let q = &mut self.q;
            let qi = self.cache.row(i, n, |r, range, out| q.fill(r, range, out));
            let y = &self.q.y;
            let yi = y[i];
            for t in 0..n {
                if !in_low(y[t], self.status[t]) {
                    continue;
                }
                let yg = y[t] * self.g[t];
                gmax2 = gmax2.max(yg);
                let diff = gmax + yg;
                if diff > 0.0 {
                    // a_it = K_ii + K_tt − 2 K_it, with Q_it = y_i y_t K_it
                    let a = self.qd[i] + self.qd[t] - 2.0 * yi * y[t] * qi[t];
                    let obj = -(diff * diff) / if a > 0.0 { a } else { TAU };
                    if obj <= obj_min {
                        obj_min = obj;
                        best_j = Some(t);
                    }
                }
            }
        }
        let violation = gmax + gmax2;
        match (best_i, best_j) {
            (Some(i), Some(j)) if violation >= eps => (Some((i, j)), violation),
            _ => (None, violation.max(0.0)),
        }
    }

    /// The two-variable subproblem on `(i, j)` and the gradient update.
    fn update(&mut self, i: usize, j: usize) {
        let n = self.active;
        let (yi, yj) = (self.q.y[i], self.q.y[j]);
        let (ci, cj) = (self.cap[i], self.cap[j]);
        let (old_i, old_j) = (self.alpha[i], self.alpha[j]);
        let q = &mut self.q;
        let (qi, qj) = self
            .cache
            .pair(i, j, n, |r, range, out| q.fill(r, range, out));
        let (mut ai, mut aj) = (old_i, old_j);
        if yi != yj {
            let a = self.qd[i] + self.qd[j] + 2.0 * qi[j];
            let a = if a > 0.0 { a } else { TAU };
            let delta = (-self.g[i] - self.g[j]) / a;
            let diff = ai - aj;
            ai += delta;
            aj += delta;
            if diff > 0.0 {
                if aj < 0.0 {
                    aj = 0.0;
                    ai = diff;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = -diff;
            }
            if diff > ci - cj {
                if ai > ci {
                    ai = ci;
                    aj = ci - diff;
                }
            } else if aj > cj {
                aj = cj;
                ai = cj + diff;
            }
        } else {
            let a = self.qd[i] + self.qd[j] - 2.0 * qi[j];
            let a = if a > 0.0 { a } else { TAU };
            let delta = (self.g[i] - self.g[j]) / a;
            let sum = ai + aj;
            ai -= delta;
            aj += delta;
            if sum > ci {
                if ai > ci {
                    ai = ci;
                    aj = sum - ci;
                }
            } else if aj < 0.0 {
                aj = 0.0;
                ai = sum;
            }
            if sum > cj {
                if aj > cj {
                    aj = cj;
                    ai = sum - cj;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = sum;
            }
        }
        let (di, dj) = (ai - old_i, aj - old_j);
        for ((g, a), b) in self.g[..n].iter_mut().zip(qi).zip(qj) {
            *g += a * di + b * dj;
        }
        self.alpha[i] = ai;
        self.alpha[j] = aj;
        for t in [i, j] {
            let was_upper = self.status[t] == Bound::Upper;
            self.set_status(t);
            let is_upper = self.status[t] == Bound::Upper;
            if was_upper != is_upper {
                let sign = if is_upper { 1.0 } else { -1.0 };
                let c = self.cap[t];
                let l = self.l();
                let q = &mut self.q;
                let qt = self.cache.row(t, l, |r, range, out| q.fill(r, range, out));
                for (gb, v) in self.g_bar.iter_mut().zip(qt) {
                    *gb += sign * c * v;
                }
            }
        }
    }

    /// `G` of the inactive positions from `Ḡ` and the free `α` (Chang & Lin §5.1).
    fn reconstruct(&mut self) {
        let (n, l) = (self.active, self.l());
        if n == l {
            return;
        }
        for t in n..l {
            self.g[t] = self.g_bar[t] - 1.0;
        }
        let free = (0..n).filter(|&t| self.status[t] == Bound::Free).count();
        if free * l > 2 * n * (l - n) {
            for t in n..l {
                let q = &mut self.q;
                let qt = self.cache.row(t, n, |r, range, out| q.fill(r, range, out));
                let mut s = 0.0;
                for (k, v) in qt.iter().enumerate() {
                    if self.status[k] == Bound::Free {
                        s += self.alpha[k] * v;
                    }
                }
                self.g[t] += s;
            }
        } else {
            for k in 0..n {
                if self.status[k] != Bound::Free {
                    continue;
                }
                let a = self.alpha[k];
                let q = &mut self.q;
                let qk = self.cache.row(k, l, |r, range, out| q.fill(r, range, out));
                for (g, v) in self.g[n..l].iter_mut().zip(&qk[n..l]) {
                    *g += a * v;
                }
            }
        }
        self.active = l;
    }

    fn shrinkable(&self, t: usize, gmax1: f64, gmax2: f64) -> bool {
        let yg = self.q.y[t] * self.g[t];
        match (self.status[t], self.q.y[t] > 0.0) {
            (Bound::Upper, true) | (Bound::Lower, false) => -yg > gmax1,
            (Bound::Upper, false) | (Bound::Lower, true) => yg > gmax2,
            (Bound::Free, _) => false,
        }
    }

    fn shrink(&mut self, eps: f64) {
        let (mut gmax1, mut gmax2) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for t in 0..self.active {
            let yg = self.q.y[t] * self.g[t];
            if self.up(t) {
                gmax1 = gmax1.max(-yg);
            }
            if self.low(t) {
                gmax2 = gmax2.max(yg);
            }
        }
        if !self.unshrink && gmax1 + gmax2 <= eps * 10.0 {
            self.unshrink = true;
            self.reconstruct();
        }
        let mut t = 0;
        while t < self.active {
            if self.shrinkable(t, gmax1, gmax2) {
                self.active -= 1;
                while self.active > t {
                    if !self.shrinkable(self.active, gmax1, gmax2) {
                        self.swap(t, self.active);
                        break;
                    }
                    self.active -= 1;
                }
            }
            t += 1;
        }
    }

    fn rho(&self) -> f64 {
        let (mut ub, mut lb) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut sum, mut free) = (0.0, 0usize);
        for t in 0..self.active {
            let yg = self.q.y[t] * self.g[t];
            let pos = self.q.y[t] > 0.0;
            match self.status[t] {
                Bound::Free => {
                    sum += yg;
                    free += 1;
                }
                Bound::Upper if !pos => ub = ub.min(yg),
                Bound::Lower if pos => ub = ub.min(yg),
                _ => lb = lb.max(yg),
            }
        }
        if free > 0 {
            sum / free as f64
        } else {
            (ub + lb) / 2.0
        }
    }

    fn solve(mut self, eps: f64, shrinking: bool, max_iter: usize) -> (Solution, Self) {
        let l = self.l();
        let mut counter = l.min(1000) + 1;
        let mut iterations = 0;
        let mut converged = false;
        let violation = loop {
            if iterations >= max_iter {
                self.reconstruct();
                break self.select(eps).1;
            }
            counter -= 1;
            if counter == 0 {
                counter = l.min(1000);
                if shrinking {
                    self.shrink(eps);
                }
            }
            let (i, j) = match self.select(eps).0 {
                Some(p) => p,
                None => {
                    // optimal on the active set: check every example
                    self.reconstruct();
                    match self.select(eps) {
                        (Some(p), _) => {
                            counter = 1;
                            p
                        }
                        (None, v) => {
                            converged = true;
                            break v;
                        }
                    }
                }
            };
            iterations += 1;
            self.update(i, j);
        };
        let rho = self.rho();
        // ½αᵀQα = ½ Σ α_i (G_i + 1); ξ_i = [y_i ρ − G_i]₊ (y_i f(x_i) = G_i + 1 − y_i ρ)
        let mut quad = 0.0;
        let mut sum_alpha = 0.0;
        let mut loss = 0.0;
        for t in 0..l {
            quad += self.alpha[t] * (self.g[t] + 1.0);
            sum_alpha += self.alpha[t];
            loss += self.cap[t] * (self.q.y[t] * rho - self.g[t]).max(0.0);
        }
        let mut alpha = vec![0.0; l];
        for (t, &a) in self.alpha.iter().enumerate() {
            alpha[self.q.perm[t]] = a;
        }
        let sol = Solution {
            alpha,
            rho,
            primal: 0.5 * quad + loss,
            dual: sum_alpha - 0.5 * quad,
            violation,
            iterations,
            converged,
        };
        (sol, self)
    }
}

impl Fit for KernelSvmParams {
    type Model = KernelModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<KernelModel>> {
        self.check_ref()?;
        let start = Instant::now();
        let labels = data.binary_training_labels()?;
        let y: Vec<f64> = labels.iter().map(|s| s.as_f64()).collect();
        let l = y.len();
        let cap: Vec<f64> = match data.weights() {
            Some(w) => w.iter().map(|c| self.c * c).collect(),
            None => vec![self.c; l],
        };
        let cache = GramCache::new(l, self.cache_bytes)?;
        let (cache_rows, cache_bytes) = (cache.capacity_rows(), cache.bytes());
        let max_iter = self
            .max_iter
            .unwrap_or_else(|| l.saturating_mul(100).max(10_000_000));
        let smo = Smo::new(data.features(), y.clone(), cap.clone(), self.kernel, cache);
        let (sol, smo) = smo.solve(self.tolerance, self.shrinking, max_iter);
        let sv: Vec<usize> = (0..l).filter(|&i| sol.alpha[i] > 0.0).collect();
        let bounded = sv.iter().filter(|&&i| sol.alpha[i] >= cap[i]).count();
        let mut support = DenseMatrix::zeros(sv.len(), data.n_features());
        for (r, &i) in sv.iter().enumerate() {
            data.row(i).to_dense_into(support.row_mut(r));
        }
        let coef = sv.iter().map(|&i| y[i] * sol.alpha[i]).collect();
        let model = KernelModel::try_new(self.kernel, support, coef, -sol.rho).map_err(|e| {
            Error::Numerical {
                algorithm: "svm".into(),
                message: format!("SMO produced an invalid model ({e})"),
            }
        })?;
        let gap = sol.primal - sol.dual;
        let relative = gap / sol.primal.abs().max(1e-300);
        let (hits, misses, computed) = smo.cache.stats();
        let mut report = FitReport {
            algorithm: "svm".into(),
            solver: "smo".into(),
            objective: Some(sol.primal),
            iterations: Some(sol.iterations),
            seconds: start.elapsed().as_secs_f64(),
            converged: sol.converged,
            tolerance: Some(self.tolerance),
            reached: Some(sol.violation),
            ..FitReport::default()
        };
        let d = &mut report.details;
        d.insert("dual_objective".into(), sol.dual);
        d.insert("duality_gap".into(), gap);
        d.insert("relative_gap".into(), relative);
        d.insert("max_violation".into(), sol.violation);
        d.insert("support_vectors".into(), sv.len() as f64);
        d.insert("bounded_support_vectors".into(), bounded as f64);
        d.insert("kernel_evaluations".into(), smo.q.evaluations as f64);
        d.insert("cache_rows".into(), cache_rows as f64);
        d.insert("cache_bytes".into(), cache_bytes as f64);
        d.insert("cache_hits".into(), hits as f64);
        d.insert("cache_misses".into(), misses as f64);
        d.insert("kernel_entries_computed".into(), computed as f64);
        d.insert("max_iter".into(), max_iter as f64);
        d.insert("C".into(), self.c);
        Ok(Fitted { model, report })
    }
}
