//! KEN-GURU, Ginodi Algorithm 2 (Ch. 4): GURU's SGD in the feature space of a kernel, with the
//! model kept as `w = Σ_m β_m φ(x_m)` (`β_m = α_m y_m`, Thm 1.2 / (4.2)).
//!
//! Each step is the two-step update of (4.3)–(4.8) with the corrected formulas of the notes:
//! with `ζ = Σ_m β_m K(x_m, x_i)` (4.10) and `ν = ‖w‖`,
//! - rescale: `β ← γ β`, `γ = 1 − (η₀/√t) c_i σ r(u)/ν` (4.11, denominator `√(2π)·ν`: for the
//!   Gaussian loss `r(u) = φ(u)`), `u = (1 − y_i ζ)/(σν)`;
//! - add a support term: `β_i ← β_i + μ y_i`, `μ = (η₀/√t) c_i f̃'(u)` (4.12, without the printed
//!   stray `y x`; `Φ(u)` for the Gaussian loss);
//! - the norm by the O(1) recursion `ν² ← γ²ν² + 2γμ y_i ζ + μ² K_ii` (4.13), clamped at 0 and
//!   recomputed exactly (`ν² = βᵀKβ`) at every check.
//!
//! Everything else is GURU's SGD (`sgd.rs`): `t` from 1, `w = 0` at the start (where the limit
//! `γ = 1`, `μ = η₀/√t` applies), examples drawn by the same seeded ChaCha8 stream, `β` held as
//! `s·b` so that a rescale is O(1), the same check schedule, suffix average, ray step,
//! certificate and stopping rule — except the certificate's correction near the hinge
//! ([`crate::Objective::certificate_corrected`], which needs the features), so GURU may certify
//! and stop sooner. With the linear kernel the iterates are GURU's (tested to 1e-10).
//!
//! A step costs one Gram row (from a [`GramCache`] within the user's byte cap, else `O(M n)` to
//! compute) and an `O(M)` inner product; a check costs a product with the Gram matrix (`M` rows).
//!
//! **Batch** (`Solver::Batch`, `kernel_batch.rs`): the kernel form of (2.22) — `w = Σ β φ(x)`,
//! `‖w‖² = βᵀKβ` — by the linear batch solver on the rows of a pivoted Cholesky factor of `K`,
//! certified on the exact Gram matrix by the certificate above (`converged` only when it meets the
//! tolerance). `gap_to_batch(true)` makes an SGD fit also report its distance to that optimum.

use std::time::Instant;

use bulwark_core::kernel::kernel_row;
use bulwark_core::{
    Dataset, DenseMatrix, Error, Fit, FitReport, Fitted, GramCache, Kernel, KernelModel,
    ParamGuard, Result,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::batch::onto_ray_minimum;
use crate::hyperparams::{Solver, check_sgd};
use crate::loss::{Loss, NoiseNorm, perspective};
use crate::objective::{Certificate, Objective, RobustLoss};
use crate::sgd::EpochChecks;

/// KEN-GURU's hyper-parameters; see the module notes.
#[derive(Debug, Clone, PartialEq)]
pub struct KenGuruParams {
    pub(crate) kernel: Kernel,
    sigma: f64,
    loss: Loss,
    pub(crate) solver: Solver,
    eta0: f64,
    seed: u64,
    tolerance: Option<f64>,
    max_epochs: usize,
    pub(crate) max_iter: usize,
    pub(crate) cache_bytes: usize,
    gap_to_batch: bool,
}

impl Default for KenGuruParams {
    fn default() -> Self {
        Self {
            kernel: Kernel::Linear,
            sigma: 1.0,
            loss: Loss::Gauss,
            solver: Solver::Sgd,
            eta0: 1.0,
            seed: 0,
            tolerance: None,
            max_epochs: 1000,
            max_iter: 100,
            cache_bytes: 200 << 20,
            gap_to_batch: false,
        }
    }
}

impl KenGuruParams {
    /// Defaults: linear kernel, `σ = 1`, the Gaussian loss, the SGD (Algorithm 2), `η₀ = 1`,
    /// seed 0, relative gap 1e-3 (batch: 1e-10), 1000 epochs or 100 Newton iterations, a
    /// 200 MiB Gram-row cache.
    pub fn new() -> Self {
        Self::default()
    }
    /// The kernel.
    pub fn kernel(mut self, k: Kernel) -> Self {
        self.kernel = k;
        self
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
    /// The initial step `η₀ > 0`.
    pub fn eta0(mut self, eta0: f64) -> Self {
        self.eta0 = eta0;
        self
    }
    /// The seed of the example draws.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The relative duality gap at which to stop, in `(0, 1)` (default 1e-3 SGD, 1e-10 batch).
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = Some(t);
        self
    }
    /// The solver: Algorithm 2 (SGD) or the batch solver (`kernel_batch.rs`).
    pub fn solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }
    /// The batch solver's Newton-iteration limit.
    pub fn max_iter(mut self, k: usize) -> Self {
        self.max_iter = k;
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
            .unwrap_or_else(|| self.solver.default_tolerance(1e-3))
    }
    /// The epoch limit (epochs of `M` steps).
    pub fn max_epochs(mut self, k: usize) -> Self {
        self.max_epochs = k;
        self
    }
    /// The Gram-row cache's cap in bytes.
    pub fn cache_bytes(mut self, b: usize) -> Self {
        self.cache_bytes = b;
        self
    }
}

impl ParamGuard for KenGuruParams {
    type Checked = KenGuruParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&KenGuruParams> {
        self.kernel.validate()?;
        check_sgd(
            self.sigma,
            self.eta0,
            self.effective_tolerance(),
            self.max_epochs,
        )?;
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if self.cache_bytes == 0 {
            return Err(Error::param("cache_size", 0, "a positive size"));
        }
        Ok(self)
    }
    fn check(self) -> Result<KenGuruParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// A fitted KEN-GURU model with its certificate.
#[derive(Debug, Clone)]
pub struct KenGuruFit {
    /// `x ↦ sign(Σ_m β_m K(x_m, x))` over the examples with `β_m ≠ 0`.
    pub model: KernelModel,
    /// The expansion coefficients `β_m` of every training example (0 off the support).
    pub beta: Vec<f64>,
    /// The duality certificate at the returned model.
    pub certificate: Certificate,
    /// SGD steps taken.
    pub steps: u64,
    /// Epochs run.
    pub epochs: usize,
    /// Whether the certified relative gap met the tolerance.
    pub converged: bool,
}

/// The Gram rows of one fit.
pub(crate) struct Gram<'a> {
    x: &'a bulwark_core::Features,
    kernel: Kernel,
    sq: Vec<f64>,
    dense: Vec<f64>,
    all: Vec<usize>,
    pub(crate) cache: GramCache,
    pub(crate) evaluations: u64,
}

impl Gram<'_> {
    pub(crate) fn row(&mut self, i: usize) -> &[f64] {
        let Gram {
            x,
            kernel,
            sq,
            dense,
            all,
            cache,
            evaluations,
        } = self;
        cache.row(i, all.len(), |r, range, out| {
            *evaluations += range.len() as u64;
            kernel_row(*kernel, x, r, &all[range], sq, dense, out);
        })
    }
    /// `out = K v`.
    pub(crate) fn product(&mut self, v: &[f64], out: &mut [f64]) {
        for (m, o) in out.iter_mut().enumerate() {
            *o = dot(self.row(m), v);
        }
    }
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    bulwark_core::budget::dot4(a, b)
}

/// The state of the SGD: `β = s·b`, `ν² = nsq`, step counter `t`.
struct State {
    b: Vec<f64>,
    s: f64,
    nsq: f64,
    t: u64,
}

impl State {
    fn new(m: usize) -> Self {
        Self {
            b: vec![0.0; m],
            s: 1.0,
            nsq: 0.0,
            t: 1,
        }
    }
    fn beta_into(&self, out: &mut [f64]) {
        for (o, b) in out.iter_mut().zip(&self.b) {
            *o = self.s * b;
        }
    }
}

pub(crate) struct Problem<'a> {
    pub(crate) y: Vec<f64>,
    weights: Option<&'a [f64]>,
    pub(crate) kdiag: Vec<f64>,
    pub(crate) spec: RobustLoss,
}

impl Problem<'_> {
    pub(crate) fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |c| c[i])
    }
}

/// One step of (4.10)–(4.13) on example `i` with step `η = η₀/√t`.
fn step(p: &Problem<'_>, gram: &mut Gram<'_>, st: &mut State, i: usize, eta0: f64) {
    let (sigma, loss) = (p.spec.sigma, p.spec.loss);
    let c = p.weight(i);
    let y = p.y[i];
    let eta = eta0 / (st.t as f64).sqrt();
    st.t += 1;
    // ζ = Σ β_m K(x_m, x_i)  (4.10)
    let zeta = st.s * dot(gram.row(i), &st.b);
    let n = st.nsq.sqrt();
    let (gamma, coef) = if n > 0.0 {
        let u = (1.0 - y * zeta) / (sigma * n);
        // γ (4.11) and μ y_i (4.12), corrected
        (
            1.0 - eta * c * sigma * loss.scale_derivative(u) / n,
            eta * c * y * loss.d1(u),
        )
    } else {
        // ν = 0: u = +∞, γ = 1, μ = η
        (1.0, eta * c * y)
    };
    // ν² (4.13), corrected
    st.nsq =
        (gamma * gamma * st.nsq + 2.0 * gamma * coef * zeta + coef * coef * p.kdiag[i]).max(0.0);
    st.s *= gamma;
    if st.s == 0.0 {
        st.b.fill(0.0);
        st.s = 1.0;
        st.nsq = 0.0;
    }
    if coef != 0.0 {
        st.b[i] += coef / st.s;
    }
    if !(1e-150..=1e150).contains(&st.s.abs()) {
        for b in st.b.iter_mut() {
            *b *= st.s;
        }
        st.s = 1.0;
    }
}

impl KenGuruParams {
    pub(crate) fn setup<'a>(&self, data: &'a Dataset) -> Result<(Problem<'a>, Gram<'a>)> {
        self.check_ref()?;
        let labels = data.binary_training_labels()?;
        let m = labels.len();
        let x = data.features();
        let sq: Vec<f64> = (0..m)
            .map(|i| x.row(i).nonzeros().map(|(_, v)| v * v).sum())
            .collect();
        let kdiag = sq.iter().map(|&s| self.kernel.from_dot(s, s, s)).collect();
        let problem = Problem {
            y: labels.iter().map(|s| s.as_f64()).collect(),
            weights: data.weights(),
            kdiag,
            spec: RobustLoss {
                loss: self.loss,
                norm: NoiseNorm::L2,
                sigma: self.sigma,
            },
        };
        let gram = Gram {
            x,
            kernel: self.kernel,
            sq,
            dense: vec![0.0; x.cols()],
            all: (0..m).collect(),
            cache: GramCache::new(m, self.cache_bytes)?,
            evaluations: 0,
        };
        Ok((problem, gram))
    }

    /// The first `steps` SGD steps without checks: `β` and `ν` from the recursion (4.13). For
    /// the tests of the recursion and of the linear-kernel equivalence with GURU.
    #[doc(hidden)]
    pub fn trajectory(&self, data: &Dataset, steps: u64) -> Result<(Vec<f64>, f64)> {
        let (p, mut gram) = self.setup(data)?;
        let m = p.y.len();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut st = State::new(m);
        for _ in 0..steps {
            let i = rng.random_range(0..m);
            step(&p, &mut gram, &mut st, i, self.eta0);
        }
        let mut beta = vec![0.0; m];
        st.beta_into(&mut beta);
        Ok((beta, st.nsq.sqrt()))
    }

    /// Fits and returns the full outcome (the [`Fit`] impl wraps it into a [`FitReport`]).
    pub fn fit_certified(&self, data: &Dataset) -> Result<(KenGuruFit, FitReport)> {
        self.fit_certified_from(data, None)
    }

    /// [`Self::fit_certified`] with a warm start for the batch solver: the direction of
    /// `warm`'s `w = Σ β_m φ(x_m)` (a fit on the same training data, e.g. the optimum at a
    /// nearby `σ` along a path), its length found by a line search on the ray
    /// (`kernel_batch.rs`). A `warm` fit on other data (another `β` length) is an error; SGD
    /// always starts at `w = 0` (Algorithm 2).
    pub fn fit_certified_from(
        &self,
        data: &Dataset,
        warm: Option<&KenGuruFit>,
    ) -> Result<(KenGuruFit, FitReport)> {
        let start = Instant::now();
        if let Some(f) = warm
            && f.beta.len() != data.len()
        {
            return Err(Error::param(
                "warm",
                format!("a fit with {} coefficients", f.beta.len()),
                format!("a fit on these {} training examples", data.len()),
            ));
        }
        let warm = warm.map(|f| f.beta.as_slice());
        let (fit, mut report) = match self.solver {
            Solver::Batch => {
                crate::kernel_batch::fit(self, data, self.effective_tolerance(), warm)?
            }
            Solver::Sgd => self.fit_sgd(data)?,
        };
        if self.solver == Solver::Sgd && self.gap_to_batch {
            let (opt, _) = crate::kernel_batch::fit(self, data, 1e-10, None)?;
            let g = opt.certificate.primal;
            let d = &mut report.details;
            d.insert("batch_objective".into(), g);
            d.insert("batch_duality_gap".into(), opt.certificate.relative_gap);
            d.insert("batch_converged".into(), f64::from(u8::from(opt.converged)));
            d.insert(
                "gap_to_batch".into(),
                if g > 0.0 {
                    (fit.certificate.primal - g) / g
                } else {
                    0.0
                },
            );
        }
        fit.certificate.write_to(&mut report);
        report.converged = fit.converged;
        report.tolerance = Some(self.effective_tolerance());
        report.details.insert("sigma".into(), self.sigma);
        report.seconds = start.elapsed().as_secs_f64();
        Ok((fit, report))
    }

    /// Algorithm 2 (module notes).
    fn fit_sgd(&self, data: &Dataset) -> Result<(KenGuruFit, FitReport)> {
        let tol = self.effective_tolerance();
        let (p, mut gram) = self.setup(data)?;
        let obj = Objective::new(data, data.binary_training_labels()?, p.spec, false);
        let m = p.y.len();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut st = State::new(m);
        let mut beta = vec![0.0; m];
        let mut checks = EpochChecks::new(m);
        let mut bufs = CheckBuffers::new(m);
        let mut epochs = 0;
        let mut converged = false;
        while epochs < self.max_epochs {
            epochs += 1;
            for _ in 0..m {
                let i = rng.random_range(0..m);
                step(&p, &mut gram, &mut st, i, self.eta0);
            }
            st.beta_into(&mut beta);
            if !checks.end_epoch(epochs, &beta, epochs == self.max_epochs) {
                continue;
            }
            for which in 0..checks.candidates() {
                let cand = checks.candidate(which, &beta);
                let (cert, on_ray, nu) = check_point(&p, &mut gram, &obj, cand, &mut bufs);
                if which == 0 {
                    st.nsq = nu * nu;
                }
                if on_ray {
                    checks.offer_point(&bufs.ray, cert);
                } else {
                    checks.offer(which, &beta, cert);
                }
            }
            if checks.settle() <= tol {
                converged = true;
                break;
            }
        }
        let (best_beta, best) = checks.into_best();
        let (model, support) = kernel_model(self.kernel, data, &best_beta)?;
        let (hits, misses, _) = gram.cache.stats();
        let mut report = FitReport::new("ken-guru", "ken-guru-sgd");
        report.iterations = Some((st.t - 1) as usize);
        if !converged {
            report.stopped = Some(format!("epoch limit {} reached", self.max_epochs));
        }
        let d = &mut report.details;
        d.insert("epochs".into(), epochs as f64);
        d.insert("support_vectors".into(), support as f64);
        d.insert("kernel_evaluations".into(), gram.evaluations as f64);
        d.insert("cache_rows".into(), gram.cache.capacity_rows() as f64);
        d.insert("cache_hits".into(), hits as f64);
        d.insert("cache_misses".into(), misses as f64);
        d.insert("eta0".into(), self.eta0);
        Ok((
            KenGuruFit {
                model,
                beta: best_beta,
                certificate: best,
                steps: st.t - 1,
                epochs,
                converged,
            },
            report,
        ))
    }
}

/// The model `x ↦ sign(Σ_m β_m K(x_m, x))` over the examples with `β_m ≠ 0`, and their count.
pub(crate) fn kernel_model(
    kernel: Kernel,
    data: &Dataset,
    beta: &[f64],
) -> Result<(KernelModel, usize)> {
    let support: Vec<usize> = (0..beta.len()).filter(|&i| beta[i] != 0.0).collect();
    let mut sv = DenseMatrix::zeros(support.len(), data.n_features());
    for (r, &i) in support.iter().enumerate() {
        data.row(i).to_dense_into(sv.row_mut(r));
    }
    let model = KernelModel::try_new(kernel, sv, support.iter().map(|&i| beta[i]).collect(), 0.0)
        .map_err(|e| Error::Numerical {
        algorithm: "ken-guru".into(),
        message: format!("the solver produced an invalid model ({e})"),
    })?;
    Ok((model, support.len()))
}

/// The buffers of [`check_point`].
pub(crate) struct CheckBuffers {
    zeta: Vec<f64>,
    margins: Vec<f64>,
    dual_coef: Vec<f64>,
    kp: Vec<f64>,
    along: Vec<f64>,
    /// The point moved along its ray, when [`check_point`] moved it.
    pub(crate) ray: Vec<f64>,
}

impl CheckBuffers {
    pub(crate) fn new(m: usize) -> Self {
        Self {
            zeta: vec![0.0; m],
            margins: vec![0.0; m],
            dual_coef: vec![0.0; m],
            kp: vec![0.0; m],
            along: vec![0.0; m],
            ray: vec![0.0; m],
        }
    }
}

/// The certificate of the coefficients `beta` on the exact Gram matrix: `ζ = Kβ`,
/// `ν² = βᵀKβ`, `G` (2.22) in feature space; the point moved to the minimum of `G` on its ray
/// when that lowers `G` (into `bufs.ray`, as GURU's SGD does: `sgd.rs`, *ray step*); the dual
/// point `α_m = c_m f̃'(u_m)` with `‖Σ α y φ(x)‖ = √(pᵀKp)`, `p = α∘y`. Returns the certificate,
/// whether the point moved, and `ν` of `beta`.
pub(crate) fn check_point(
    p: &Problem<'_>,
    gram: &mut Gram<'_>,
    obj: &Objective<'_>,
    beta: &[f64],
    bufs: &mut CheckBuffers,
) -> (Certificate, bool, f64) {
    let CheckBuffers {
        zeta,
        margins,
        dual_coef,
        kp,
        along,
        ray,
    } = bufs;
    let (sigma, loss) = (p.spec.sigma, p.spec.loss);
    gram.product(beta, zeta);
    let nu = dot(beta, zeta).max(0.0).sqrt();
    let mut a = sigma * nu;
    let mut g = 0.0;
    for (mi, (b, z)) in margins.iter_mut().zip(zeta.iter()).enumerate() {
        *b = 1.0 - p.y[mi] * z;
        g += p.weight(mi) * perspective(loss, a, *b);
    }
    let moved = onto_ray_minimum(obj, beta, ray, nu, g, margins, along);
    let on_ray = moved.is_some();
    if let Some((factor, moved)) = moved {
        g = moved;
        a *= factor;
    }
    for (mi, d) in dual_coef.iter_mut().enumerate() {
        let f1 = if a > 0.0 {
            loss.d1(margins[mi] / a)
        } else if margins[mi] > 0.0 {
            1.0
        } else {
            0.0
        };
        *d = p.weight(mi) * f1 * p.y[mi];
    }
    gram.product(dual_coef, kp);
    let vnorm = dot(dual_coef, kp).max(0.0).sqrt();
    (obj.certificate_at(a, margins, vnorm, g), on_ray, nu)
}

/// Fits KEN-GURU; the report carries the objective, the certified relative duality gap, the
/// epochs and the kernel evaluations.
impl Fit for KenGuruParams {
    type Model = KernelModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<KernelModel>> {
        let (fit, report) = self.fit_certified(data)?;
        Ok(Fitted {
            model: fit.model,
            report,
        })
    }
}
