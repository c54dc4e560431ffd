//! The GURU objective (Ginodi (2.22), with the family of (3.31)) over a data set, its gradient
//! (2.26), Hessian–vector products for the batch solver, and the duality certificate of (3.17).
//!
//! ```text
//! G(w) = Σ_m c_m · a f̃((1 − y_m wᵀx_m)/a),   a = σ‖w‖            (2.22), (3.31)
//! ```
//!
//! `c_m` are the data set's example weights (1 without weights). With the constant feature
//! (`bias`), `x_m` is extended by a trailing 1 that is never stored: the solver works on the
//! caller's rows.
//!
//! **Certificate.** For `α ∈ [0, c]` with `‖Σ α_m y_m x_m‖_* ≤ σ Σ c_m s(α_m/c_m)` (the dual
//! (3.17)/(3.32), `‖·‖_*` the dual norm), every `w` has `G(w) ≥ Σ α_m`: by the conjugate's
//! definition `a f̃(b/a) ≥ α b + a s(α)` for each example, and `wᵀv ≤ ‖w‖‖v‖_*`. The dual point
//! offered is `α_m = c_m f̃'(u_m)` at the current `w` (at the optimum it is feasible with equality,
//! and `Σ α_m = G(w*)`, the thesis's conjecture (3.22) — strong duality), scaled by the largest
//! `κ ∈ (0, 1]` that makes it feasible; the relative gap `(G(w) − κΣα)/G(w)` bounds the
//! suboptimality of `w` rigorously.
//!
//! **Over several ranks.** An objective built by [`Objective::over`] holds one rank's share of
//! the examples: every sum over examples (the value, the gradient, Hessian–vector products, the
//! curvature, the certificate and its correction) sums the local rows and combines the ranks'
//! partial sums through the [`Communicator`], so every rank gets the same numbers and takes the
//! same branches. Per-example buffers (margins, curvature weights) stay local.

use bulwark_core::comm::{Communicator, Single};
use bulwark_core::{Dataset, RowView, Sign};

use crate::loss::{Loss, NoiseNorm, perspective};

/// The loss of (2.22)/(3.31): scalar loss, noise norm and noise level `σ`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobustLoss {
    /// The scalar loss `f̃` in the perspective.
    pub loss: Loss,
    /// The norm of the perspective (the adversary's covariance class).
    pub norm: NoiseNorm,
    /// The noise standard deviation `σ > 0` (the thesis's `√β`).
    pub sigma: f64,
}

/// The objective of one fit: borrowed rows, labels and weights.
#[derive(Debug)]
pub struct Objective<'a> {
    data: &'a Dataset,
    y: Vec<f64>,
    weights: Option<&'a [f64]>,
    bias: bool,
    spec: RobustLoss,
    n: usize,
    /// Combines the ranks' partial sums ([`Single`] on one process).
    comm: &'a dyn Communicator,
    /// The number of examples over every rank.
    total: usize,
}

/// The scalars of a duality certificate at one `w` (Ginodi (3.17), (3.22)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Certificate {
    /// `G(w)`.
    pub primal: f64,
    /// `κ Σ α_m`: a lower bound on `min G`.
    pub dual: f64,
    /// `(G(w) − dual)/G(w)` (0 when both are 0): bounds `(G(w) − min G)/G(w)`.
    pub relative_gap: f64,
    /// The scale `κ ∈ [0, 1]` applied to `α_m = c_m f̃'(u_m)` to make it dual feasible.
    pub scale: f64,
    /// `(‖Σ α y x‖_* − σ Σ c s(α/c)) / (σ Σ c s(α/c))` at `κ = 1`: negative when the constraint
    /// is slack, positive when violated, 0 when tight (as at the optimum).
    pub constraint_residual: f64,
}

impl Certificate {
    /// The certificate of a lower bound `dual` on `min G` at a point of objective `primal`
    /// (the relative gap `(primal − dual)/primal`, 0 when `primal` is 0).
    pub(crate) fn new(primal: f64, dual: f64, scale: f64, constraint_residual: f64) -> Self {
        let relative_gap = if primal > 0.0 {
            ((primal - dual) / primal).max(0.0)
        } else {
            0.0
        };
        Self {
            primal,
            dual,
            relative_gap,
            scale,
            constraint_residual,
        }
    }

    /// Its figures in a fit report: the objective, the certified relative gap (`reached`,
    /// `duality_gap`), the dual bound, its scale and the constraint's residual.
    pub(crate) fn write_to(&self, report: &mut bulwark_core::FitReport) {
        report.objective = Some(self.primal);
        report.reached = Some(self.relative_gap);
        let d = &mut report.details;
        d.insert("duality_gap".into(), self.relative_gap);
        d.insert("dual_objective".into(), self.dual);
        d.insert("dual_scale".into(), self.scale);
        d.insert("dual_constraint_residual".into(), self.constraint_residual);
    }
}

impl<'a> Objective<'a> {
    /// The objective of `spec` on `data` (binary labels; example weights honoured), with a
    /// constant feature appended when `bias`.
    pub fn new(data: &'a Dataset, labels: &[Sign], spec: RobustLoss, bias: bool) -> Self {
        Self::over(data, labels, spec, bias, &Single, data.len())
    }

    /// The objective over the examples of every rank of `comm`, `data` (and `labels`) being this
    /// rank's share and `total` the number of examples over every rank.
    pub fn over(
        data: &'a Dataset,
        labels: &[Sign],
        spec: RobustLoss,
        bias: bool,
        comm: &'a dyn Communicator,
        total: usize,
    ) -> Self {
        Self {
            data,
            y: labels.iter().map(|s| s.as_f64()).collect(),
            weights: data.weights(),
            bias,
            spec,
            n: data.n_features(),
            comm,
            total,
        }
    }

    /// Replaces each entry of `buf` by its sum over the ranks (nothing on one process).
    #[inline]
    pub(crate) fn sum_ranks(&self, buf: &mut [f64]) {
        self.comm.allreduce_sum(buf);
    }
    /// `x` summed over the ranks.
    #[inline]
    pub(crate) fn sum_ranks1(&self, x: f64) -> f64 {
        let mut b = [x];
        self.comm.allreduce_sum(&mut b);
        b[0]
    }
    /// `x`'s maximum over the ranks.
    pub(crate) fn max_ranks1(&self, x: f64) -> f64 {
        let mut b = [x];
        self.comm.allreduce_max(&mut b);
        b[0]
    }

    /// Number of examples (this rank's, over several ranks).
    pub fn len(&self) -> usize {
        self.y.len()
    }
    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
    /// Dimension of `w`: the features, plus one with the constant feature.
    pub fn dim(&self) -> usize {
        self.n + usize::from(self.bias)
    }
    /// The loss.
    pub fn spec(&self) -> RobustLoss {
        self.spec
    }
    /// The label `±1` of example `i`.
    pub fn label(&self, i: usize) -> f64 {
        self.y[i]
    }
    /// The weight `c_i` of example `i`.
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |c| c[i])
    }

    /// `wᵀx_i` (with the constant feature when there is one).
    #[inline]
    pub fn dot(&self, i: usize, w: &[f64]) -> f64 {
        let d = row_dot(self.data.row(i), &w[..self.n]);
        if self.bias { d + w[self.n] } else { d }
    }
    /// `out += s·x_i`.
    #[inline]
    pub fn axpy(&self, i: usize, s: f64, out: &mut [f64]) {
        self.data.row(i).axpy_into(s, &mut out[..self.n]);
        if self.bias {
            out[self.n] += s;
        }
    }
    /// `‖x_i‖₂²`.
    pub fn row_norm_sq(&self, i: usize) -> f64 {
        let r = match self.data.row(i) {
            RowView::Dense(v) => v.iter().map(|x| x * x).sum(),
            RowView::Sparse { values, .. } => values.iter().map(|x| x * x).sum(),
        };
        if self.bias { r + 1.0 } else { r }
    }
    /// The perspective's scale `a = σ‖w‖`.
    pub fn scale(&self, w: &[f64]) -> f64 {
        self.spec.sigma * self.spec.norm.of(w)
    }

    /// `G(w)` (Ginodi (2.22)); writes the margin terms `b_m = 1 − y_m wᵀx_m` into `b`.
    pub fn value_into(&self, w: &[f64], b: &mut [f64]) -> f64 {
        let a = self.scale(w);
        let mut g = 0.0;
        for i in 0..self.len() {
            b[i] = 1.0 - self.y[i] * self.dot(i, w);
            g += self.weight(i) * perspective(self.spec.loss, a, b[i]);
        }
        self.sum_ranks1(g)
    }
    /// `G(w)`.
    pub fn value(&self, w: &[f64]) -> f64 {
        let mut b = vec![0.0; self.len()];
        self.value_into(w, &mut b)
    }

    /// `G(w)` and its gradient (Ginodi (2.26) summed; at `w = 0` the limit `−Σ c y x`), from the
    /// margin terms `b` of [`Objective::value_into`] at the same `w`. Also returns
    /// `R = Σ c_m r(u_m)` and writes `v = Σ c_m f̃'(u_m) y_m x_m` (the dual's `Σ α y x`), so that
    /// `∇G = −v + σR ∇‖w‖`.
    pub fn gradient_from(&self, w: &[f64], b: &[f64], v: &mut [f64], grad: &mut [f64]) -> f64 {
        let a = self.scale(w);
        v.fill(0.0);
        let loss = self.spec.loss;
        let mut r_sum = 0.0;
        for i in 0..self.len() {
            let c = self.weight(i);
            let (d1, r) = if a > 0.0 {
                let u = b[i] / a;
                (loss.d1(u), loss.scale_derivative(u))
            } else {
                (if b[i] > 0.0 { 1.0 } else { 0.0 }, 0.0)
            };
            r_sum += c * r;
            if d1 != 0.0 {
                self.axpy(i, c * d1 * self.y[i], v);
            }
        }
        self.sum_ranks(v);
        let r_sum = self.sum_ranks1(r_sum);
        for (g, v) in grad.iter_mut().zip(v.iter()) {
            *g = -v;
        }
        if a > 0.0 {
            let norm = a / self.spec.sigma;
            self.spec
                .norm
                .add_gradient(w, norm, self.spec.sigma * r_sum, grad);
        }
        r_sum
    }

    /// The Hessian of `G` (Euclidean norm, `w ≠ 0`) applied to `p`:
    /// `Σ_m (c_m f̃''(u_m)/a) q_m q_mᵀ p + (σR/‖w‖)(I − ŵŵᵀ) p` with `q_m = −y_m x_m − u_m σŵ`
    /// (the chain rule through `g(a, b) = a f̃(b/a)`: `g_aa = u²f̃''/a`, `g_ab = −u f̃''/a`,
    /// `g_bb = f̃''/a`, `g_a = r(u)`). `k[m] = c_m f̃''(u_m)/a` and `u` come from
    /// [`Objective::curvature`].
    pub fn hess_vec(
        &self,
        w_hat: &[f64],
        w_norm: f64,
        r_sum: f64,
        u: &[f64],
        k: &[f64],
        p: &[f64],
        out: &mut [f64],
    ) {
        let sigma = self.spec.sigma;
        let wp: f64 = w_hat.iter().zip(p).map(|(a, b)| a * b).sum();
        out.fill(0.0);
        let mut sum_kqu = 0.0;
        for i in 0..self.len() {
            if k[i] == 0.0 {
                continue;
            }
            let q = -self.y[i] * self.dot(i, p) - u[i] * sigma * wp;
            let kq = k[i] * q;
            self.axpy(i, -kq * self.y[i], out);
            sum_kqu += kq * u[i];
        }
        self.sum_ranks(out);
        let sum_kqu = self.sum_ranks1(sum_kqu);
        let t = sigma * r_sum / w_norm;
        for j in 0..out.len() {
            out[j] += -sigma * w_hat[j] * sum_kqu + t * (p[j] - w_hat[j] * wp);
        }
    }

    /// The per-example curvature weights `k_m = c_m f̃''(u_m)/a` and `u_m = b_m/a` (`a > 0`),
    /// and the Hessian's diagonal into `diag` (for a Jacobi preconditioner); `kxy` is scratch of
    /// length [`Objective::dim`].
    pub fn curvature(
        &self,
        w_hat: &[f64],
        w_norm: f64,
        r_sum: f64,
        b: &[f64],
        u: &mut [f64],
        k: &mut [f64],
        diag: &mut [f64],
        kxy: &mut [f64],
    ) {
        let sigma = self.spec.sigma;
        let a = sigma * w_norm;
        diag.fill(0.0);
        // Σ k x_j² and Σ k u y x_j, then diag_j = that + 2σŵ_j Σ k u y x_j + σ²ŵ_j² Σ k u²
        kxy.fill(0.0);
        let mut sum_ku2 = 0.0;
        for i in 0..self.len() {
            u[i] = b[i] / a;
            k[i] = self.weight(i) * self.spec.loss.d2(u[i]) / a;
            if k[i] == 0.0 {
                continue;
            }
            sum_ku2 += k[i] * u[i] * u[i];
            let ki = k[i];
            let s = ki * u[i] * self.y[i];
            for (j, x) in self.data.row(i).nonzeros() {
                diag[j] += ki * x * x;
                kxy[j] += s * x;
            }
            if self.bias {
                diag[self.n] += ki;
                kxy[self.n] += s;
            }
        }
        self.sum_ranks(diag);
        self.sum_ranks(kxy);
        let sum_ku2 = self.sum_ranks1(sum_ku2);
        let t = sigma * r_sum / w_norm;
        for j in 0..diag.len() {
            let wj = w_hat[j];
            diag[j] +=
                2.0 * sigma * wj * kxy[j] + sigma * sigma * wj * wj * sum_ku2 + t * (1.0 - wj * wj);
        }
    }

    /// The certificate at `w` from the margin terms `b` and `v = Σ c f̃'(u) y x` of
    /// [`Objective::gradient_from`] at the same `w`, with the primal value `primal = G(w)`.
    pub fn certificate(&self, w: &[f64], b: &[f64], v: &[f64], primal: f64) -> Certificate {
        self.certificate_at(self.scale(w), b, self.spec.norm.dual_of(v), primal)
    }

    /// [`Objective::certificate`] from the scalars it needs: the perspective's scale
    /// `a = σ‖w‖`, the margin terms `b`, the dual norm `‖Σ c f̃'(u) y x‖_*` and `G(w)`. A kernel
    /// learner supplies them from Gram products (`‖Σ α y x‖² = (α∘y)ᵀK(α∘y)`).
    pub fn certificate_at(&self, a: f64, b: &[f64], vnorm: f64, primal: f64) -> Certificate {
        let loss = self.spec.loss;
        // p_m = f̃'(u_m) and its complement (α_m = c_m p_m)
        let p_of = |i: usize| -> (f64, f64) {
            if a > 0.0 {
                let u = b[i] / a;
                (loss.d1(u), loss.d1_complement(u))
            } else if b[i] > 0.0 {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        };
        self.certificate_of(p_of, vnorm, primal)
    }

    /// The certificate of the dual point `α_m = c_m p_m`, given as `(p_m, 1 − p_m)` pairs by
    /// `p_of`, with `vnorm = ‖Σ α y x‖_*` and the primal value `primal = G(w)`.
    fn certificate_of(
        &self,
        p_of: impl Fn(usize) -> (f64, f64),
        vnorm: f64,
        primal: f64,
    ) -> Certificate {
        let loss = self.spec.loss;
        let sigma = self.spec.sigma;
        let rhs = |kappa: f64| -> f64 {
            let mut s = 0.0;
            for i in 0..self.len() {
                let (p, q) = p_of(i);
                let kp = kappa * p;
                let kq = (1.0 - kappa) + kappa * q;
                s += self.weight(i) * loss.conjugate(kp, kq);
            }
            sigma * self.sum_ranks1(s)
        };
        let alpha_sum = self.sum_ranks1((0..self.len()).map(|i| self.weight(i) * p_of(i).0).sum());
        let r1 = rhs(1.0);
        let constraint_residual = if r1 > 0.0 {
            (vnorm - r1) / r1
        } else if vnorm > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        let scale = if vnorm <= r1 {
            1.0
        } else {
            // the largest κ with h(κ) = rhs(κ) − κ‖v‖ ≥ 0; h is concave with h(0) = 0 and
            // h(1) < 0, h' = σ Σ c p s'(κp) − ‖v‖ with s' = −z*
            let h = |kappa: f64| -> (f64, f64) {
                let mut vs = [0.0; 2];
                for i in 0..self.len() {
                    let (p, q) = p_of(i);
                    if p == 0.0 {
                        continue;
                    }
                    let c = self.weight(i);
                    let (sv, z) = loss.conjugate_and_argmin(kappa * p, (1.0 - kappa) + kappa * q);
                    vs[0] += c * sv;
                    vs[1] -= c * p * z;
                }
                self.sum_ranks(&mut vs);
                let [value, slope] = vs;
                (sigma * value - kappa * vnorm, sigma * slope - vnorm)
            };
            largest_feasible_scale(h)
        };
        Certificate::new(primal, scale * alpha_sum, scale, constraint_residual)
    }

    /// A certificate at `w` from a corrected dual point, when it beats `plain` (the
    /// certificate of [`Objective::certificate`] at the same `w`, whose margin terms `b` and
    /// `v = Σ c f̃'(u) y x` are given); otherwise `plain`. Euclidean norm only (other norms:
    /// `plain`).
    ///
    /// Near the hinge (small `σ`) the dual feasible set is thin: `σ Σ c s(α/c)` is small, and
    /// any error in `w` leaves `v = Σ α y x` off the ray `σ Σ c s(α/c) ŵ` by far more than
    /// scaling `α` by `κ` can repair without losing most of `Σ α` (on the thesis's toy (a) at
    /// `σ = 2^−11`, `κ` fell to 1e-68 at a point 1.5e-5 above the optimum). The correction
    /// moves the margins `u_m` (so `α_m = c_m f̃'(u_m)` stays in `[0, c_m]`) by Newton's method
    /// on the optimality condition `v(u) = σ Σ c s(α/c) ŵ` of the dual point, the direction
    /// fixed: a round shifts `u_m` by `y_m x_mᵀλ`, with `λ` from the linearised condition
    /// `(AᵀWA + σ ŵ gᵀ) λ = σΣs ŵ − v` (rows of `A`: `y_m x_mᵀ`; `W_m = c_m f̃''(u_m)`;
    /// `g = Σ u_m W_m y_m x_m`, since `σΣs` moves by `−σ Σ u δ`), solved by Sherman–Morrison
    /// from two Jacobi-preconditioned conjugate-gradient solves, and halves the shift until
    /// the condition's residual falls. It is the change of `α` a change of `w` would cause:
    /// near the optimum it moves `α` towards the optimal dual point and leaves the examples far
    /// from the margin (`W_m ≈ 0`) alone. Each round's point is certified like any dual point
    /// (the `κ` scaling), so the bound is rigorous whatever the correction's accuracy.
    /// Rounds stop after 8 rounds, when no shift lowers the residual, when the
    /// gap is at most `enough`, or when the call has cost `budget` passes over the data. A round costs two conjugate-gradient solves (two passes over
    /// the examples with `W_m > 0` per iteration) and a pass per trial shift.
    pub fn certificate_corrected(
        &self,
        plain: Certificate,
        w: &[f64],
        b: &[f64],
        v: &[f64],
        enough: f64,
        budget: usize,
        sc: &mut CorrectionScratch,
    ) -> Certificate {
        let a = self.scale(w);
        if self.spec.norm != NoiseNorm::L2 || a <= 0.0 || plain.relative_gap <= enough {
            return plain;
        }
        // budgets count rows over every rank (every rank takes the same branches)
        let (m, dim, total) = (self.len(), self.dim(), self.total);
        let (loss, sigma) = (self.spec.loss, self.spec.sigma);
        sc.resize(m, dim, total);
        let nw = a / sigma;
        for j in 0..dim {
            sc.w_hat[j] = w[j] / nw;
        }
        for i in 0..m {
            sc.u[i] = b[i] / a;
        }
        sc.vp.copy_from_slice(v);
        let mut ssum = self.sum_ranks1(
            (0..m)
                .map(|i| {
                    let z = sc.u[i];
                    self.weight(i) * loss.conjugate(loss.d1(z), loss.d1_complement(z))
                })
                .sum(),
        );
        let mut best = plain;
        sc.limit = sc.visits.saturating_add(budget.saturating_mul(total));
        for _ in 0..CORRECTION_ROUNDS {
            if sc.visits >= sc.limit {
                break;
            }
            // W, g and the Jacobi preconditioner (diag Σ W x²) at the current margins
            sc.g.fill(0.0);
            sc.diag.fill(0.0);
            let mut free = 0;
            for i in 0..m {
                let z = sc.u[i];
                sc.wt[i] = self.weight(i) * loss.d2(z);
                if sc.wt[i] > 0.0 {
                    free += 1;
                    self.axpy(i, z * sc.wt[i] * self.y[i], &mut sc.g);
                    self.add_weighted_squares(i, sc.wt[i], &mut sc.diag);
                }
            }
            self.sum_ranks(&mut sc.g);
            self.sum_ranks(&mut sc.diag);
            let free = self.sum_ranks1(free as f64) as usize;
            sc.visits += total;
            if free == 0 {
                break;
            }
            let trace: f64 = sc.diag.iter().sum();
            let rho = 1e-12 * trace / dim as f64;
            for d in sc.diag.iter_mut() {
                *d += rho;
            }
            // the residual −(v − σΣs ŵ) and Sherman–Morrison for the rank-one term
            for j in 0..dim {
                sc.rhs[j] = sigma * ssum * sc.w_hat[j] - sc.vp[j];
            }
            let res0 = dot(&sc.rhs, &sc.rhs).sqrt();
            if res0 == 0.0 {
                break;
            }
            self.solve_weighted_gram(
                rho,
                &sc.wt,
                &sc.diag,
                &sc.rhs,
                &mut sc.lam,
                &mut sc.cg,
                free,
                &mut sc.visits,
                sc.limit,
            );
            self.solve_weighted_gram(
                rho,
                &sc.wt,
                &sc.diag,
                &sc.w_hat,
                &mut sc.lam2,
                &mut sc.cg,
                free,
                &mut sc.visits,
                sc.limit,
            );
            let g1 = sigma * dot(&sc.g, &sc.lam);
            let g2 = sigma * dot(&sc.g, &sc.lam2);
            let f = g1 / (1.0 + g2);
            if f.is_finite() {
                for j in 0..dim {
                    sc.lam[j] -= f * sc.lam2[j];
                }
            }
            sc.visits += free;
            for i in 0..m {
                sc.shift[i] = if sc.wt[i] > 0.0 {
                    self.y[i] * self.dot(i, &sc.lam)
                } else {
                    0.0
                };
            }
            // the first shift t = 1, 1/2, … that lowers the residual
            let mut t = 1.0;
            let mut accepted = None;
            for _ in 0..CORRECTION_STEPS {
                if sc.visits >= sc.limit {
                    break;
                }
                sc.visits += total;
                sc.vp.fill(0.0);
                let mut s_t = 0.0;
                for i in 0..m {
                    let z = sc.u[i] + t * sc.shift[i];
                    let (p, q) = (loss.d1(z), loss.d1_complement(z));
                    s_t += self.weight(i) * loss.conjugate(p, q);
                    if p != 0.0 {
                        self.axpy(i, self.weight(i) * p * self.y[i], &mut sc.vp);
                    }
                }
                self.sum_ranks(&mut sc.vp);
                let s_t = self.sum_ranks1(s_t);
                let res = (0..dim)
                    .map(|j| (sc.vp[j] - sigma * s_t * sc.w_hat[j]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if res < res0 {
                    accepted = Some((t, s_t));
                    break;
                }
                t *= 0.5;
            }
            let Some((t, s_t)) = accepted else { break };
            for i in 0..m {
                sc.u[i] += t * sc.shift[i];
            }
            ssum = s_t;
            let vnorm = dot(&sc.vp, &sc.vp).sqrt();
            let u = &sc.u;
            let cert = self.certificate_of(
                |i| (loss.d1(u[i]), loss.d1_complement(u[i])),
                vnorm,
                plain.primal,
            );
            if cert.dual > best.dual {
                best = cert;
            }
            if best.relative_gap <= enough {
                break;
            }
        }
        best
    }

    /// `diag_j += W x_ij²` (with the constant feature).
    fn add_weighted_squares(&self, i: usize, wt: f64, diag: &mut [f64]) {
        for (j, x) in self.data.row(i).nonzeros() {
            diag[j] += wt * x * x;
        }
        if self.bias {
            diag[self.n] += wt;
        }
    }

    /// Jacobi-preconditioned conjugate gradients on `(Σ W x xᵀ + ρI) x = rhs` from `x = 0`
    /// (`diag` the matrix's diagonal; at most [`CORRECTION_CG_MAX`] iterations, to a relative
    /// residual of [`CORRECTION_CG_TOL`]).
    fn solve_weighted_gram(
        &self,
        rho: f64,
        wt: &[f64],
        diag: &[f64],
        rhs: &[f64],
        x: &mut [f64],
        cg: &mut CgScratch,
        free: usize,
        visits: &mut usize,
        limit: usize,
    ) {
        let dim = x.len();
        let CgScratch { r, z, dir, hd } = cg;
        x.fill(0.0);
        r.copy_from_slice(rhs);
        for j in 0..dim {
            z[j] = r[j] / diag[j];
        }
        dir.copy_from_slice(z);
        let rhs_norm = dot(rhs, rhs).sqrt();
        let mut rz = dot(r, z);
        for _ in 0..CORRECTION_CG_MAX {
            if *visits + 2 * free > limit {
                break;
            }
            *visits += 2 * free;
            self.weighted_gram_vec(wt, dir, hd);
            for j in 0..dim {
                hd[j] += rho * dir[j];
            }
            let dhd = dot(dir, hd);
            if dhd <= 0.0 || !dhd.is_finite() {
                break;
            }
            let step = rz / dhd;
            for j in 0..dim {
                x[j] += step * dir[j];
                r[j] -= step * hd[j];
            }
            if dot(r, r).sqrt() <= CORRECTION_CG_TOL * rhs_norm {
                break;
            }
            for j in 0..dim {
                z[j] = r[j] / diag[j];
            }
            let rz_new = dot(r, z);
            let beta = rz_new / rz;
            rz = rz_new;
            for j in 0..dim {
                dir[j] = z[j] + beta * dir[j];
            }
        }
    }

    /// `out = Σ_m W_m x_m x_mᵀ d` over the examples with `W_m > 0`.
    fn weighted_gram_vec(&self, wt: &[f64], d: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (i, &wi) in wt.iter().enumerate() {
            if wi > 0.0 {
                let t = wi * self.dot(i, d);
                self.axpy(i, t, out);
            }
        }
        self.sum_ranks(out);
    }

    /// Ginodi Thm 1.2, corrected (the printed form misses `σ`): at the optimum,
    /// `‖w*‖ = 1/(σ z*(α_m) + y_m ŵᵀx_m)` for every `m`, with `ŵ` the direction of `Σ α y x`
    /// (3.4) and `z*(α) = (f̃')⁻¹(α)` (`Φ⁻¹(α)` for the Gaussian loss). Returns one estimate per
    /// example from the dual point `α_m = f̃'(u_m)` (unweighted data, Euclidean norm), given as
    /// `(α_m, 1 − α_m)` pairs.
    pub fn norm_from_dual(&self, alpha: &[(f64, f64)]) -> Vec<f64> {
        let mut v = vec![0.0; self.dim()];
        for (i, (p, _)) in alpha.iter().enumerate() {
            self.axpy(i, p * self.y[i], &mut v);
        }
        self.sum_ranks(&mut v);
        let nv = NoiseNorm::L2.of(&v);
        let w_hat: Vec<f64> = v.iter().map(|x| x / nv).collect();
        alpha
            .iter()
            .enumerate()
            .map(|(i, &(p, q))| {
                let z = self.spec.loss.conjugate_argmin(p, q);
                1.0 / (self.spec.sigma * z + self.y[i] * self.dot(i, &w_hat))
            })
            .collect()
    }
}

/// The largest `κ ∈ [0, 1]` with `h(κ) ≥ 0`, for `h` concave with `h(0) = 0` and `h(1) < 0`,
/// given as `κ ↦ (h(κ), h'(κ))`: safeguarded Newton from `κ = 1`, bisection when a step leaves
/// the bracket; Newton from the infeasible side converges to the root from above, so its limit
/// is stepped back by 1e-12 relative and checked feasible. The answer is always a checked
/// feasible point (0 at worst). The scaling of a dual point into the dual's feasible set
/// (Ginodi (3.17); the multiclass certificate's pair constraints).
pub(crate) fn largest_feasible_scale(h: impl Fn(f64) -> (f64, f64)) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    let mut kappa = 1.0_f64;
    for _ in 0..200 {
        let (hv, hd) = h(kappa);
        if hv >= 0.0 {
            lo = kappa;
        } else {
            hi = kappa;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
        let newton = kappa - hv / hd;
        if hv < 0.0 && newton.is_finite() && kappa - newton <= 1e-12 * kappa {
            let back = newton * (1.0 - 1e-12);
            if back > lo && h(back).0 >= 0.0 {
                lo = back;
                break;
            }
        }
        kappa = if newton.is_finite() && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
    }
    lo
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// At most this many conjugate-gradient iterations per solve of the dual point's correction in [`Objective::certificate_corrected`].
const CORRECTION_CG_MAX: usize = 100;
/// The correction's conjugate gradients stop at this residual relative to the right-hand side
/// (an inexact Newton step: the rounds tighten it).
const CORRECTION_CG_TOL: f64 = 1e-3;
/// At most this many rounds of the correction (each two conjugate-gradient solves).
const CORRECTION_ROUNDS: usize = 8;
/// Steps `1, 1/2, …` tried per round.
const CORRECTION_STEPS: usize = 6;

/// Scratch memory of [`Objective::certificate_corrected`], kept by a solver across checks.
#[derive(Debug, Clone, Default)]
pub struct CorrectionScratch {
    wt: Vec<f64>,
    u: Vec<f64>,
    shift: Vec<f64>,
    w_hat: Vec<f64>,
    lam: Vec<f64>,
    lam2: Vec<f64>,
    g: Vec<f64>,
    diag: Vec<f64>,
    rhs: Vec<f64>,
    vp: Vec<f64>,
    cg: CgScratch,
    /// Rows visited (a product with `Σ W x xᵀ` visits the `W_m > 0` rows twice).
    visits: usize,
    rows: usize,
    limit: usize,
}

#[derive(Debug, Clone, Default)]
struct CgScratch {
    r: Vec<f64>,
    z: Vec<f64>,
    dir: Vec<f64>,
    hd: Vec<f64>,
}

impl CorrectionScratch {
    /// Whether the last correction stopped because its budget ran out.
    pub fn exhausted(&self) -> bool {
        self.visits >= self.limit
    }

    /// Passes over the data the corrections made with this scratch have cost: the rows they
    /// visited over the number of examples (a product with `Σ W x xᵀ` visits the examples with
    /// `W_m > 0` twice).
    pub fn passes(&self) -> usize {
        self.visits.div_ceil(self.rows.max(1))
    }

    /// Sizes the buffers for `m` local rows of dimension `dim`; `total` rows over every rank
    /// (what a pass costs).
    fn resize(&mut self, m: usize, dim: usize, total: usize) {
        self.rows = total;
        for v in [&mut self.wt, &mut self.u, &mut self.shift] {
            v.resize(m, 0.0);
        }
        let cg = &mut self.cg;
        for v in [
            &mut self.w_hat,
            &mut self.lam,
            &mut self.lam2,
            &mut self.g,
            &mut self.diag,
            &mut self.rhs,
            &mut self.vp,
            &mut cg.r,
            &mut cg.z,
            &mut cg.dir,
            &mut cg.hd,
        ] {
            v.resize(dim, 0.0);
        }
    }
}

#[inline]
fn row_dot(x: RowView<'_>, w: &[f64]) -> f64 {
    match x {
        RowView::Dense(v) => {
            let mut s = [0.0; 4];
            let chunks = v.len() / 4 * 4;
            for j in (0..chunks).step_by(4) {
                s[0] += v[j] * w[j];
                s[1] += v[j + 1] * w[j + 1];
                s[2] += v[j + 2] * w[j + 2];
                s[3] += v[j + 3] * w[j + 3];
            }
            let mut t = (s[0] + s[1]) + (s[2] + s[3]);
            for j in chunks..v.len() {
                t += v[j] * w[j];
            }
            t
        }
        RowView::Sparse { .. } => x.dot(w),
    }
}
