//! L2-regularised logistic regression by a truncated Newton method (Newton–CG with Armijo
//! backtracking): Hessian–vector products cost one pass over the data, so nothing of size
//! `n × n` is ever formed and sparse data stay sparse.
//!
//! Objective (mean loss; the intercept, when fitted, is not penalised):
//!
//! ```text
//! f(w, b) = (1/m) Σ_i log(1 + exp(−y_i (w·x_i + b))) + (λ/2) ‖w‖²
//! ```
//!
//! With `λ = 0` and linearly separable data the infimum is not attained: the iterates grow
//! without bound. The solver then stops as soon as its iterate separates the training data and
//! reports `converged: false` with `separable = 1` (no fake convergence).

use std::time::Instant;

use bulwark_core::comm::{self, Communicator, Counted, Single};
use bulwark_core::{
    Dataset, Error, Fit, FitReport, Fitted, LinearModel, ParamGuard, Result, RowView,
};
use serde::{Deserialize, Serialize};

use crate::common::{check_at_least_one, check_tolerance, dot4, sigmoid, softplus};

/// Hyper-parameters of logistic regression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogregParams {
    l2: f64,
    intercept: bool,
    tolerance: f64,
    max_iter: usize,
}

impl Default for LogregParams {
    fn default() -> Self {
        Self {
            l2: 1e-4,
            intercept: true,
            tolerance: 1e-8,
            max_iter: 100,
        }
    }
}

impl LogregParams {
    /// Defaults: `λ = 1e-4`, intercept on, gradient tolerance 1e-8, 100 Newton iterations.
    pub fn new() -> Self {
        Self::default()
    }
    /// The L2 weight `λ ≥ 0` on `w` (not on the intercept).
    pub fn l2(mut self, lambda: f64) -> Self {
        self.l2 = lambda;
        self
    }
    /// Whether to fit an (unpenalised) intercept; without it `b = 0`.
    pub fn intercept(mut self, yes: bool) -> Self {
        self.intercept = yes;
        self
    }
    /// Stop when `‖∇f‖₂ ≤ tolerance · max(1, ‖∇f(0)‖₂)`.
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }
    /// Newton-iteration limit.
    pub fn max_iter(mut self, k: usize) -> Self {
        self.max_iter = k;
        self
    }
}

impl ParamGuard for LogregParams {
    type Checked = LogregParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&LogregParams> {
        bulwark_core::error::check_nonnegative("l2", self.l2)?;
        check_tolerance("tolerance", self.tolerance)?;
        check_at_least_one("max_iter", self.max_iter)?;
        Ok(self)
    }
    fn check(self) -> Result<LogregParams> {
        self.check_ref()?;
        Ok(self)
    }
}

#[inline]
fn row_dot(x: RowView<'_>, w: &[f64]) -> f64 {
    match x {
        RowView::Dense(v) => dot4(v, w),
        RowView::Sparse { .. } => x.dot(w),
    }
}

struct Problem<'a> {
    /// This rank's examples (all of them on one process).
    data: &'a Dataset,
    y: Vec<f64>,
    l2: f64,
    intercept: bool,
    n: usize,
    /// The number of examples over every rank.
    m: f64,
    /// Combines the per-example sums of the ranks ([`Single`] on one process: a no-op).
    comm: &'a dyn Communicator,
}

impl Problem<'_> {
    /// Parameter vector layout: `[w (n), b]` (b stays 0 without intercept).
    fn margins(&self, theta: &[f64], out: &mut [f64]) {
        let (w, b) = theta.split_at(self.n);
        for (i, o) in out.iter_mut().enumerate() {
            *o = row_dot(self.data.row(i), w) + b[0];
        }
    }
    fn value(&self, theta: &[f64], z: &[f64]) -> f64 {
        let loss: f64 = z.iter().zip(&self.y).map(|(z, y)| softplus(-y * z)).sum();
        let mut loss = [loss];
        self.comm.allreduce_sum(&mut loss);
        let w = &theta[..self.n];
        loss[0] / self.m + 0.5 * self.l2 * dot4(w, w)
    }
    /// Gradient and the Hessian weights `d_i = p_i (1 − p_i)` (of this rank's examples).
    fn gradient(&self, theta: &[f64], z: &[f64], g: &mut [f64], d: &mut [f64]) {
        let m = self.m;
        g.fill(0.0);
        let (gw, gb) = g.split_at_mut(self.n);
        for i in 0..self.y.len() {
            let y = self.y[i];
            let r = -y * sigmoid(-y * z[i]) / m;
            self.data.row(i).axpy_into(r, gw);
            if self.intercept {
                gb[0] += r;
            }
            let p = sigmoid(z[i]);
            d[i] = p * (1.0 - p) / m;
        }
        self.comm.allreduce_sum(g);
        for (g, w) in g[..self.n].iter_mut().zip(&theta[..self.n]) {
            *g += self.l2 * w;
        }
    }
    fn hess_vec(&self, d: &[f64], v: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        let (vw, vb) = v.split_at(self.n);
        let vb = if self.intercept { vb[0] } else { 0.0 };
        let (ow, ob) = out.split_at_mut(self.n);
        for i in 0..self.y.len() {
            let x = self.data.row(i);
            let t = d[i] * (row_dot(x, vw) + vb);
            x.axpy_into(t, ow);
            if self.intercept {
                ob[0] += t;
            }
        }
        self.comm.allreduce_sum(out);
        let (ow, ob) = out.split_at_mut(self.n);
        for (o, v) in ow.iter_mut().zip(vw) {
            *o += self.l2 * v;
        }
        if !self.intercept {
            ob[0] = 0.0;
        }
    }
    /// Whether the margins separate every example of every rank.
    fn separates(&self, z: &[f64]) -> bool {
        let mut missed = [f64::from(u8::from(
            !z.iter().zip(&self.y).all(|(z, y)| y * z > 0.0),
        ))];
        self.comm.allreduce_max(&mut missed);
        missed[0] == 0.0
    }
}

fn norm(v: &[f64]) -> f64 {
    dot4(v, v).sqrt()
}

/// Trains by Newton–CG; the report carries the objective, `gradient_norm`, `cg_iterations`
/// and `separable` (1 when `λ = 0` and the iterate separates the data).
impl Fit for LogregParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.fit_over(data, &Single)
    }
}

impl LogregParams {
    /// Trains on the examples of every rank of `comm`, `local` being this rank's share: each
    /// pass over the examples (loss, gradient, Hessian–vector product, the separability test)
    /// sums over the local rows and combines the ranks' partial sums with one
    /// [`Communicator::allreduce_sum`]; the Newton–CG step and the line search run on every rank
    /// alike, so every rank returns the same model. With [`Single`] this is [`Fit::fit`]. With
    /// more than one rank the report adds `ranks`, `allreduce_calls` and `allreduce_values`
    /// (the `f64`s each rank sent).
    pub fn fit_over(
        &self,
        local: &Dataset,
        comm: &dyn Communicator,
    ) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        self.check_ref()?;
        let counted = Counted::new(comm);
        let (labels, m_all) = comm::binary_training_labels(local, &counted)?;
        comm::agree(&counted, local.reject_weights("logreg"))?;
        let (m, n) = (local.len(), local.n_features());
        let pb = Problem {
            data: local,
            y: labels.iter().map(|s| s.as_f64()).collect(),
            l2: self.l2,
            intercept: self.intercept,
            n,
            m: m_all as f64,
            comm: &counted,
        };
        let dim = n + 1;
        let mut theta = vec![0.0; dim];
        let mut z = vec![0.0; m];
        let mut z_new = vec![0.0; m];
        let mut g = vec![0.0; dim];
        let mut d = vec![0.0; m];
        let (mut p, mut r, mut q, mut dir) = (
            vec![0.0; dim],
            vec![0.0; dim],
            vec![0.0; dim],
            vec![0.0; dim],
        );
        let mut trial = vec![0.0; dim];
        pb.margins(&theta, &mut z);
        let mut f = pb.value(&theta, &z);
        pb.gradient(&theta, &z, &mut g, &mut d);
        let g0 = norm(&g).max(1.0);
        let mut iters = 0;
        let mut cg_total = 0usize;
        let mut converged = false;
        let mut separable = false;
        loop {
            let gn = norm(&g);
            if gn <= self.tolerance * g0 {
                converged = true;
                break;
            }
            if self.l2 == 0.0 && pb.separates(&z) {
                separable = true;
                break;
            }
            if iters >= self.max_iter {
                break;
            }
            iters += 1;
            // CG on H dir = −g, forcing term min(0.5, √‖g‖)
            let eta = 0.5f64.min(gn.sqrt());
            dir.fill(0.0);
            for k in 0..dim {
                r[k] = -g[k];
            }
            p.copy_from_slice(&r);
            let mut rr = dot4(&r, &r);
            for _ in 0..(2 * dim).min(500) {
                pb.hess_vec(&d, &p, &mut q);
                cg_total += 1;
                let pq = dot4(&p, &q);
                if pq <= 1e-300 {
                    break;
                }
                let alpha = rr / pq;
                for k in 0..dim {
                    dir[k] += alpha * p[k];
                    r[k] -= alpha * q[k];
                }
                let rr_new = dot4(&r, &r);
                if rr_new.sqrt() <= eta * gn {
                    break;
                }
                let beta = rr_new / rr;
                rr = rr_new;
                for k in 0..dim {
                    p[k] = r[k] + beta * p[k];
                }
            }
            if !self.intercept {
                dir[n] = 0.0;
            }
            let mut slope = dot4(&g, &dir);
            if slope >= 0.0 {
                // not a descent direction (numerical): fall back to steepest descent
                for k in 0..dim {
                    dir[k] = -g[k];
                }
                slope = -gn * gn;
            }
            let mut step = 1.0;
            let mut accepted = false;
            for _ in 0..60 {
                for k in 0..dim {
                    trial[k] = theta[k] + step * dir[k];
                }
                pb.margins(&trial, &mut z_new);
                let f_new = pb.value(&trial, &z_new);
                if f_new <= f + 1e-4 * step * slope {
                    theta.copy_from_slice(&trial);
                    std::mem::swap(&mut z, &mut z_new);
                    f = f_new;
                    accepted = true;
                    break;
                }
                step *= 0.5;
            }
            pb.gradient(&theta, &z, &mut g, &mut d);
            if !accepted {
                break; // no decrease possible at machine precision
            }
        }
        let gn = norm(&g);
        let bias = theta[n];
        theta.truncate(n);
        let model = LinearModel::try_new(theta, bias).map_err(|_| Error::Numerical {
            algorithm: "logreg".into(),
            message: "non-finite weights".into(),
        })?;
        let mut report = FitReport {
            algorithm: "logreg".into(),
            solver: "newton-cg".into(),
            objective: Some(f),
            iterations: Some(iters),
            seconds: start.elapsed().as_secs_f64(),
            converged,
            tolerance: Some(self.tolerance),
            reached: Some(gn / g0),
            ..FitReport::default()
        };
        report.details.insert("gradient_norm".into(), gn);
        report
            .details
            .insert("cg_iterations".into(), cg_total as f64);
        report
            .details
            .insert("separable".into(), f64::from(u8::from(separable)));
        report.details.insert("l2".into(), self.l2);
        counted.record(&mut report.details);
        Ok(Fitted { model, report })
    }
}

/// The logistic objective `f(w, b)` of a model (for checks and reports).
pub fn logreg_objective(model: &LinearModel, data: &Dataset, l2: f64) -> Result<f64> {
    let y = data.binary_labels()?;
    if model.weights().len() != data.n_features() {
        return Err(Error::shape(
            "model weights vs data features",
            data.n_features(),
            model.weights().len(),
        ));
    }
    let m = data.len().max(1) as f64;
    let loss: f64 = (0..data.len())
        .map(|i| softplus(-y[i].as_f64() * (data.row(i).dot(model.weights()) + model.bias())))
        .sum();
    Ok(loss / m + 0.5 * l2 * model.weights().iter().map(|w| w * w).sum::<f64>())
}
