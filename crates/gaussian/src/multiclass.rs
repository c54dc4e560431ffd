//! M-GURU and M-GURU-S² (Ginodi Ch. 5): multiclass Gaussian-robust classification with the
//! Weston–Watkins sum of hinges (5.4) under a spectral-norm adversary, whose worst case is
//! isotropic noise (Thm 2.1 of Ch. 5), so that the objective (5.12)–(5.14) is
//!
//! `G(W) = Σ_m c_m Σ_{k ≠ y_m} ℓ(x_m, +1; w_{y_m} − w_k)`, `ℓ(x, +1; v) = σ‖v‖ f̃((1 − vᵀx)/(σ‖v‖))`,
//!
//! the binary robust hinge on every pairwise difference. With two classes it is the binary
//! objective (2.22) of `w = w₁ − w₀` (5.15)–(5.16).
//!
//! Gradient (the corrected form of the notes: `y' ≠ y_m`, `x_m`): with
//! `g(v) = −x f̃'(z) + σ v̂ r(z)`, `z = (1 − vᵀx)/(σ‖v‖)` (`r = φ` for the Gaussian loss; the limit
//! `g(0) = −x`), `∇_{w_{y_m}} = Σ_{k≠y_m} g(w_{y_m} − w_k)` and `∇_{w_k} = −g(w_{y_m} − w_k)`.
//!
//! **Algorithm 3 (M-GURU)**: for a drawn example every class is updated with the gradient at the
//! old point, step `η₀/√t`. **Algorithm 4 (M-GURU-S²)**: one class `r` drawn uniformly (after the
//! example, from the same seeded stream) is updated; `t` counts these single updates (the thesis
//! does not say). `W = 0` at the start. Both use GURU's epoch checks (objective at the iterate and
//! at the suffix average, the best kept) with the multiclass duality certificate of
//! `multiclass_batch.rs` (the thesis derives no multiclass dual; this one is derived like
//! (3.17)): they stop, `converged`, when the best checked objective is certified within
//! `tolerance` (relative gap), and stop unconverged when that objective has improved by at most
//! `tolerance` (relative) over the second half of the run (from the last check at or before
//! epoch `k/2` to epoch `k ≥ 4`: a plateau, which is a stall and not an optimum — the report's
//! `relative_improvement` and `stopped`), or at the epoch limit. `gap_to_batch(true)` also runs
//! the batch solver and reports the SGD objective's distance to its optimum.
//!
//! **Batch** (`Solver::Batch`): Newton–CG on (5.14) to a certified relative gap (default 1e-10),
//! `multiclass_batch.rs`.
//!
//! With two classes and step `2η₀`, M-GURU is GURU's SGD with step `η₀` on `w₁ − w₀` (tested).

use std::time::Instant;

use bulwark_core::{
    Dataset, DenseMatrix, Error, Features, Fit, FitReport, Fitted, MulticlassLinearModel,
    ParamGuard, Result,
};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::algorithm::UNDERFLOW;
use crate::hyperparams::{Solver, check_sgd};
use crate::loss::{Loss, perspective};
use crate::multiclass_batch::Work;
use crate::sgd::EpochChecks;

/// The multiclass objective of one fit: borrowed rows, class indices, weights.
#[derive(Debug)]
pub struct MulticlassObjective<'a> {
    data: &'a Dataset,
    pub(crate) class: Vec<usize>,
    pub(crate) classes: usize,
    pub(crate) loss: Loss,
    pub(crate) sigma: f64,
    bias: bool,
    n: usize,
}

impl<'a> MulticlassObjective<'a> {
    /// The objective on `data` (its classes, binary or multiclass, at least two; example
    /// weights honoured), with a constant feature per class when `bias`.
    pub fn new(data: &'a Dataset, loss: Loss, sigma: f64, bias: bool) -> Result<Self> {
        Ok(Self {
            data,
            class: data.multiclass_training_classes()?,
            classes: data.n_classes(),
            loss,
            sigma,
            bias,
            n: data.n_features(),
        })
    }
    /// Classes `C`.
    pub fn classes(&self) -> usize {
        self.classes
    }
    /// The length of one class's weights (features, plus one with the constant feature).
    pub fn dim(&self) -> usize {
        self.n + usize::from(self.bias)
    }
    pub(crate) fn weight(&self, i: usize) -> f64 {
        self.data.weights().map_or(1.0, |c| c[i])
    }
    /// Examples `M`.
    pub(crate) fn len(&self) -> usize {
        self.class.len()
    }
    pub(crate) fn dot(&self, i: usize, w: &[f64]) -> f64 {
        let d = self.data.row(i).dot(&w[..self.n]);
        if self.bias { d + w[self.n] } else { d }
    }
    pub(crate) fn axpy(&self, i: usize, a: f64, out: &mut [f64]) {
        self.data.row(i).axpy_into(a, &mut out[..self.n]);
        if self.bias {
            out[self.n] += a;
        }
    }
    /// `out[m·C + a] = x_mᵀ w_a` for every example `m` and class `a` (`w` class by class,
    /// `C · dim`): one matrix product `X Wᵀ` when the features are dense.
    pub(crate) fn scores_into(&self, w: &[f64], out: &mut [f64]) {
        let (c, d, m, n) = (self.classes, self.dim(), self.len(), self.n);
        match self.data.features() {
            Features::Dense(x) if n > 0 && m > 0 => {
                let x = MatRef::from_row_major_slice(x.as_slice(), m, n);
                let wt = MatRef::from_column_major_slice_with_stride(w, n, c, d);
                // (X Wᵀ)ᵀ = W Xᵀ into a column-major C × M destination
                let dst = MatMut::from_column_major_slice_mut(out, c, m);
                matmul(
                    dst,
                    Accum::Replace,
                    wt.transpose(),
                    x.transpose(),
                    1.0,
                    Par::Seq,
                );
                if self.bias {
                    for row in out.chunks_exact_mut(c) {
                        for (a, o) in row.iter_mut().enumerate() {
                            *o += w[a * d + n];
                        }
                    }
                }
            }
            _ => {
                for (i, row) in out.chunks_exact_mut(c).enumerate() {
                    for (a, o) in row.iter_mut().enumerate() {
                        *o = self.dot(i, &w[a * d..(a + 1) * d]);
                    }
                }
            }
        }
    }
    /// `w_a += Σ_m coef[m·C + a] x_m` for every class `a` (`out` class by class): one matrix
    /// product `coefᵀ X` when the features are dense.
    pub(crate) fn add_rows_into(&self, coef: &[f64], out: &mut [f64]) {
        let (c, d, m, n) = (self.classes, self.dim(), self.len(), self.n);
        match self.data.features() {
            Features::Dense(x) if n > 0 && m > 0 => {
                let x = MatRef::from_row_major_slice(x.as_slice(), m, n);
                let ct = MatRef::from_column_major_slice(coef, c, m);
                // (coefᵀ X)ᵀ = Xᵀ coef into a column-major N × C destination (stride `dim`)
                let dst = MatMut::from_column_major_slice_with_stride_mut(out, n, c, d);
                matmul(
                    dst,
                    Accum::Add,
                    x.transpose(),
                    ct.transpose(),
                    1.0,
                    Par::Seq,
                );
                if self.bias {
                    for row in coef.chunks_exact(c) {
                        for (a, v) in row.iter().enumerate() {
                            out[a * d + n] += v;
                        }
                    }
                }
            }
            _ => {
                for (i, row) in coef.chunks_exact(c).enumerate() {
                    for (a, &v) in row.iter().enumerate() {
                        if v != 0.0 {
                            self.axpy(i, v, &mut out[a * d..(a + 1) * d]);
                        }
                    }
                }
            }
        }
    }
    /// `out_j += a x_ij²` (with the constant feature).
    pub(crate) fn add_squares(&self, i: usize, a: f64, out: &mut [f64]) {
        for (j, x) in self.data.row(i).nonzeros() {
            out[j] += a * x * x;
        }
        if self.bias {
            out[self.n] += a;
        }
    }

    /// `G(W)` for `W` stored class by class (`C · dim` values).
    pub fn value(&self, w: &[f64]) -> f64 {
        let d = self.dim();
        let gram = row_gram(w, self.classes, d);
        let mut scores = vec![0.0; self.classes];
        let mut g = 0.0;
        for i in 0..self.class.len() {
            for (k, s) in scores.iter_mut().enumerate() {
                *s = self.dot(i, &w[k * d..(k + 1) * d]);
            }
            let y = self.class[i];
            let mut sum = 0.0;
            for k in (0..self.classes).filter(|&k| k != y) {
                let nsq = gram[y * self.classes + y] + gram[k * self.classes + k]
                    - 2.0 * gram[y * self.classes + k];
                let a = self.sigma * nsq.max(0.0).sqrt();
                sum += perspective(self.loss, a, 1.0 - (scores[y] - scores[k]));
            }
            g += self.weight(i) * sum;
        }
        g
    }

    /// `∇G(W)` into `grad` (same layout as `W`); returns `G(W)`. Norms from the differences
    /// themselves (not the Gram expansion), as the SGD computes them.
    pub fn gradient(&self, w: &[f64], grad: &mut [f64]) -> f64 {
        let d = self.dim();
        grad.fill(0.0);
        let mut delta = vec![0.0; d];
        let mut g = 0.0;
        for i in 0..self.class.len() {
            let y = self.class[i];
            let c = self.weight(i);
            for k in (0..self.classes).filter(|&k| k != y) {
                for j in 0..d {
                    delta[j] = w[y * d + j] - w[k * d + j];
                }
                let (value, ax, bv) = pair_terms(self, i, &delta);
                g += c * value;
                // g(Δ) = ax·x + bv·Δ: added to ∇w_y, subtracted from ∇w_k
                self.axpy(i, c * ax, &mut grad[y * d..(y + 1) * d]);
                self.axpy(i, -c * ax, &mut grad[k * d..(k + 1) * d]);
                for j in 0..d {
                    grad[y * d + j] += c * bv * delta[j];
                    grad[k * d + j] -= c * bv * delta[j];
                }
            }
        }
        g
    }
}

/// `ℓ(x_i, +1; Δ)` and the coefficients of its gradient `g(Δ) = ax·x_i + bv·Δ`.
fn pair_terms(obj: &MulticlassObjective<'_>, i: usize, delta: &[f64]) -> (f64, f64, f64) {
    let norm = delta.iter().map(|v| v * v).sum::<f64>().sqrt();
    let b = 1.0 - obj.dot(i, delta);
    if norm > 0.0 {
        let a = obj.sigma * norm;
        let z = b / a;
        (
            perspective(obj.loss, a, b),
            -obj.loss.d1(z),
            obj.sigma * obj.loss.scale_derivative(z) / norm,
        )
    } else {
        // the w = 0 limit: [b]₊ and g = −x
        (b.max(0.0), -1.0, 0.0)
    }
}

/// `W Wᵀ` (`C × C`, row-major) of `W` stored class by class.
fn row_gram(w: &[f64], c: usize, d: usize) -> Vec<f64> {
    let mut g = vec![0.0; c * c];
    for a in 0..c {
        for b in a..c {
            let v: f64 = w[a * d..(a + 1) * d]
                .iter()
                .zip(&w[b * d..(b + 1) * d])
                .map(|(x, y)| x * y)
                .sum();
            g[a * c + b] = v;
            g[b * c + a] = v;
        }
    }
    g
}

/// M-GURU / M-GURU-S²; see the module notes.
#[derive(Debug, Clone, PartialEq)]
pub struct MGuruParams {
    sigma: f64,
    loss: Loss,
    solver: Solver,
    eta0: f64,
    seed: u64,
    tolerance: Option<f64>,
    max_epochs: usize,
    max_iter: usize,
    s2: bool,
    bias: bool,
    gap_to_batch: bool,
}

impl Default for MGuruParams {
    fn default() -> Self {
        Self {
            sigma: 1.0,
            loss: Loss::Gauss,
            solver: Solver::Sgd,
            eta0: 1.0,
            seed: 0,
            tolerance: None,
            max_epochs: 1000,
            max_iter: 100,
            s2: false,
            bias: false,
            gap_to_batch: false,
        }
    }
}

impl MGuruParams {
    /// Defaults: `σ = 1`, the Gaussian loss, the SGD (Algorithm 3, every class per step),
    /// `η₀ = 1`, seed 0, a certified relative gap of 1e-4 (batch: 1e-10), 1000 epochs or 100
    /// Newton iterations, no constant feature.
    pub fn new() -> Self {
        Self::default()
    }
    /// The noise level `σ > 0`.
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.sigma = sigma;
        self
    }
    /// The scalar loss of the perspective.
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = loss;
        self
    }
    /// The solver: the thesis's SGD (Algorithms 3–4) or Newton–CG to a certified gap.
    pub fn solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }
    /// The initial step `η₀ > 0`.
    pub fn eta0(mut self, eta0: f64) -> Self {
        self.eta0 = eta0;
        self
    }
    /// The seed of the draws.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The relative duality gap to certify, in `(0, 1)` (default 1e-10 batch, 1e-4 SGD). The
    /// SGD also stops, uncertified, when the best checked objective improved by at most this
    /// (relative) over the second half of the run.
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = Some(t);
        self
    }
    /// The SGD's epoch limit (epochs of `M` draws).
    pub fn max_epochs(mut self, k: usize) -> Self {
        self.max_epochs = k;
        self
    }
    /// The batch solver's Newton-iteration limit.
    pub fn max_iter(mut self, k: usize) -> Self {
        self.max_iter = k;
        self
    }
    /// Algorithm 4 (M-GURU-S²: one random class updated per draw) instead of Algorithm 3.
    pub fn s2(mut self, yes: bool) -> Self {
        self.s2 = yes;
        self
    }
    /// Append a constant feature (its weight per class is the class's bias, part of the norms).
    pub fn bias(mut self, yes: bool) -> Self {
        self.bias = yes;
        self
    }
    /// After an SGD fit, also run the batch solver and report the SGD objective's relative
    /// distance to its optimum (`gap_to_batch` in the report's details).
    pub fn gap_to_batch(mut self, yes: bool) -> Self {
        self.gap_to_batch = yes;
        self
    }
    /// The tolerance in force.
    pub fn effective_tolerance(&self) -> f64 {
        self.tolerance
            .unwrap_or_else(|| self.solver.default_tolerance(1e-4))
    }
}

impl ParamGuard for MGuruParams {
    type Checked = MGuruParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&MGuruParams> {
        check_sgd(
            self.sigma,
            self.eta0,
            self.effective_tolerance(),
            self.max_epochs,
        )?;
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        Ok(self)
    }
    fn check(self) -> Result<MGuruParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// Scratch of the SGD step.
struct Step {
    a: Vec<f64>,
    b: Vec<f64>,
    acc: Vec<f64>,
    scores: Vec<f64>,
}

impl Step {
    fn new(classes: usize, dim: usize) -> Self {
        Self {
            a: vec![0.0; classes],
            b: vec![0.0; classes],
            acc: vec![0.0; dim],
            scores: vec![0.0; classes],
        }
    }
}

/// One draw of Algorithm 3 (`only = None`) or 4 (`only = Some(r)`) on example `i`.
fn step(
    obj: &MulticlassObjective<'_>,
    w: &mut [f64],
    s: &mut Step,
    i: usize,
    eta: f64,
    only: Option<usize>,
) {
    let (c, d) = (obj.classes, obj.dim());
    let y = obj.class[i];
    let cw = eta * obj.weight(i);
    for (k, sc) in s.scores.iter_mut().enumerate() {
        *sc = obj.dot(i, &w[k * d..(k + 1) * d]);
    }
    // g(Δ_k) = a_k x + b_k Δ_k at the old W, Δ_k = w_y − w_k
    for k in 0..c {
        if k == y || only.is_some_and(|r| r != y && r != k) {
            s.a[k] = 0.0;
            s.b[k] = 0.0;
            continue;
        }
        let norm = (0..d)
            .map(|j| {
                let v = w[y * d + j] - w[k * d + j];
                v * v
            })
            .sum::<f64>()
            .sqrt();
        let bm = 1.0 - (s.scores[y] - s.scores[k]);
        if norm > 0.0 {
            let z = bm / (obj.sigma * norm);
            s.a[k] = -obj.loss.d1(z);
            s.b[k] = obj.sigma * obj.loss.scale_derivative(z) / norm;
        } else {
            s.a[k] = -1.0;
            s.b[k] = 0.0;
        }
    }
    let update_y = only.is_none_or(|r| r == y);
    let (sum_a, sum_b): (f64, f64) = (s.a.iter().sum(), s.b.iter().sum());
    // acc = Σ_k b_k w_k (old), for w_y's update
    if update_y {
        s.acc.fill(0.0);
        for k in (0..c).filter(|&k| s.b[k] != 0.0) {
            for j in 0..d {
                s.acc[j] += s.b[k] * w[k * d + j];
            }
        }
    }
    // w_k ← w_k + η c g(Δ_k), reading the old w_y
    for k in (0..c).filter(|&k| k != y && only.is_none_or(|r| r == k)) {
        let (ak, bk) = (s.a[k], s.b[k]);
        if bk != 0.0 {
            for j in 0..d {
                let delta = w[y * d + j] - w[k * d + j];
                w[k * d + j] += cw * bk * delta;
            }
        }
        if ak != 0.0 {
            obj.axpy(i, cw * ak, &mut w[k * d..(k + 1) * d]);
        }
    }
    // w_y ← w_y − η c Σ_k g(Δ_k) = w_y − η c (Σa x + Σb w_y − Σ b_k w_k)
    if update_y {
        let wy = &mut w[y * d..(y + 1) * d];
        for (v, acc) in wy.iter_mut().zip(&s.acc) {
            *v -= cw * (sum_b * *v - acc);
        }
        if sum_a != 0.0 {
            obj.axpy(i, -cw * sum_a, wy);
        }
    }
}

impl MGuruParams {
    /// `W` (class by class) after the first `steps` draws, without checks: for the tests of
    /// the two-class equivalence with GURU.
    #[doc(hidden)]
    pub fn trajectory(&self, data: &Dataset, steps: u64) -> Result<Vec<f64>> {
        self.check_ref()?;
        let obj = MulticlassObjective::new(data, self.loss, self.sigma, self.bias)?;
        let (c, d, m) = (obj.classes, obj.dim(), data.len());
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut w = vec![0.0; c * d];
        let mut scratch = Step::new(c, d);
        for t in 1..=steps {
            let i = rng.random_range(0..m);
            let only = self.s2.then(|| rng.random_range(0..c));
            step(
                &obj,
                &mut w,
                &mut scratch,
                i,
                self.eta0 / (t as f64).sqrt(),
                only,
            );
        }
        Ok(w)
    }

    /// Fits and returns the model with its report.
    pub fn fit_report(&self, data: &Dataset) -> Result<Fitted<MulticlassLinearModel>> {
        self.fit_report_from(data, None)
    }

    /// [`Self::fit_report`] with a warm start for the batch solver: the direction of `warm`'s
    /// `W` (its weights, and its biases when [`MGuruParams::bias`] is on), e.g. the optimum at
    /// a nearby `σ` along a path; its length is found by a line search on the ray
    /// (`multiclass_batch.rs`). `warm` must have the data's classes and features (an error
    /// otherwise); a `W` without class differences is no start (the solver's own is used).
    /// SGD always starts at `W = 0` (Algorithms 3–4).
    pub fn fit_report_from(
        &self,
        data: &Dataset,
        warm: Option<&MulticlassLinearModel>,
    ) -> Result<Fitted<MulticlassLinearModel>> {
        let start = Instant::now();
        self.check_ref()?;
        let obj = MulticlassObjective::new(data, self.loss, self.sigma, self.bias)?;
        let tol = self.effective_tolerance();
        let (c, d, n) = (obj.classes, obj.dim(), data.n_features());
        let warm = match warm {
            None => None,
            Some(m) if m.weights().rows() != c || m.weights().cols() != n => {
                return Err(Error::param(
                    "warm",
                    format!("{} x {}", m.weights().rows(), m.weights().cols()),
                    format!("a model of {c} classes x {n} features"),
                ));
            }
            Some(m) => {
                let mut w = vec![0.0; c * d];
                for k in 0..c {
                    w[k * d..k * d + n].copy_from_slice(m.weights().row(k));
                    if self.bias {
                        w[k * d + n] = m.biases()[k];
                    }
                }
                Some(w)
            }
        };
        let (w, mut report) = match self.solver {
            Solver::Batch => self.batch(&obj, tol, warm.as_deref()),
            Solver::Sgd => self.sgd(&obj, tol),
        };
        let primal = report.objective.unwrap_or(f64::INFINITY);
        if primal <= UNDERFLOW {
            // the terms underflow: a gap of 0/0 certifies nothing
            report.converged = false;
            report.stopped = Some(format!(
                "the objective underflows (G = {primal:.1e}): the classes are separated with a margin sigma = {} cannot reach, so the optimum is not determined in floating point",
                self.sigma
            ));
        }
        let mut weights = DenseMatrix::zeros(c, n);
        let mut biases = vec![0.0; c];
        for k in 0..c {
            weights.row_mut(k).copy_from_slice(&w[k * d..k * d + n]);
            if self.bias {
                biases[k] = w[k * d + n];
            }
        }
        let model = MulticlassLinearModel::try_new(weights, biases)?;
        let dd = &mut report.details;
        dd.insert("classes".into(), c as f64);
        dd.insert("sigma".into(), self.sigma);
        report.tolerance = Some(tol);
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted { model, report })
    }

    /// The batch solver (`multiclass_batch.rs`).
    fn batch(
        &self,
        obj: &MulticlassObjective<'_>,
        tol: f64,
        warm: Option<&[f64]>,
    ) -> (Vec<f64>, FitReport) {
        let out = crate::multiclass_batch::solve(obj, tol, self.max_iter, warm);
        let mut report = FitReport::new("m-guru", out.solver);
        report.iterations = Some(out.iterations as usize);
        report.converged = out.converged;
        report.stopped = out.stopped;
        out.certificate.write_to(&mut report);
        let dd = &mut report.details;
        dd.insert(out.count.0.into(), out.count.1);
        dd.insert("data_passes".into(), out.passes as f64);
        (out.w, report)
    }

    /// Algorithm 3 or 4, the certificate at every check (`converged` only when it meets the
    /// tolerance), and the batch optimum when asked (`gap_to_batch`).
    fn sgd(&self, obj: &MulticlassObjective<'_>, tol: f64) -> (Vec<f64>, FitReport) {
        let (c, d, m) = (obj.classes, obj.dim(), obj.len());
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut w = vec![0.0; c * d];
        let mut scratch = Step::new(c, d);
        let mut checks = EpochChecks::new(c * d);
        let mut work = Work::new(obj);
        let mut grad = vec![0.0; c * d];
        let mut t: u64 = 1;
        let (mut epochs, mut converged) = (0, false);
        let mut stopped = None;
        let mut history: Vec<(usize, f64)> = Vec::new();
        let mut improvement = f64::INFINITY;
        while epochs < self.max_epochs {
            epochs += 1;
            for _ in 0..m {
                let i = rng.random_range(0..m);
                let only = self.s2.then(|| rng.random_range(0..c));
                let eta = self.eta0 / (t as f64).sqrt();
                t += 1;
                step(obj, &mut w, &mut scratch, i, eta, only);
            }
            if !checks.end_epoch(epochs, &w, epochs == self.max_epochs) {
                continue;
            }
            for which in 0..checks.candidates() {
                let cand = checks.candidate(which, &w);
                work.set_point(obj, cand);
                let value = work.gradient(obj, &mut grad);
                let cert = work.certificate(obj, value);
                checks.offer(which, &w, cert);
            }
            let gap = checks.settle();
            if gap <= tol {
                converged = true;
                break;
            }
            let best = checks.best_primal();
            history.push((epochs, best));
            // the best objective at the last check in the first half of the run
            if let Some(&(_, half)) = history.iter().rev().find(|(e, _)| 2 * e <= epochs) {
                improvement = if best > 0.0 {
                    (half - best) / best
                } else {
                    0.0
                };
                if epochs >= 4 && improvement <= tol {
                    stopped = Some(format!(
                        "stalled: the best objective improved by {:.2e} (relative) over the second half of the run, short of the certificate (gap {gap:.2e})",
                        improvement.max(0.0)
                    ));
                    break;
                }
            }
        }
        if !converged && stopped.is_none() {
            stopped = Some(format!("epoch limit {} reached", self.max_epochs));
        }
        let (best_w, best) = checks.into_best();
        let name = if self.s2 { "m-guru-s2" } else { "m-guru" };
        let mut report = FitReport::new("m-guru", name);
        report.iterations = Some((t - 1) as usize);
        report.converged = converged;
        report.stopped = stopped;
        best.write_to(&mut report);
        let dd = &mut report.details;
        dd.insert("epochs".into(), epochs as f64);
        dd.insert("relative_improvement".into(), improvement.max(0.0));
        dd.insert("eta0".into(), self.eta0);
        if self.gap_to_batch {
            let opt = crate::multiclass_batch::solve(obj, 1e-10, self.max_iter, None);
            let g = opt.certificate.primal;
            dd.insert("batch_objective".into(), g);
            dd.insert("batch_duality_gap".into(), opt.certificate.relative_gap);
            dd.insert("batch_converged".into(), f64::from(u8::from(opt.converged)));
            dd.insert(
                "gap_to_batch".into(),
                if g > 0.0 { (best.primal - g) / g } else { 0.0 },
            );
        }
        (best_w, report)
    }
}

/// Fits M-GURU (or M-GURU-S², or the batch solver); `report.reached` is the certified relative
/// gap of the returned point.
impl Fit for MGuruParams {
    type Model = MulticlassLinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<MulticlassLinearModel>> {
        self.fit_report(data)
    }
}
