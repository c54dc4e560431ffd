//! Hyper-parameters, validation and training of the DSX LP classifier.

use std::time::Instant;

use bulwark_core::{
    Dataset, Error, FeatureBudget, FeatureValues, FitReport, Fitted, LinearModel, ParamGuard, Sign,
    rng_from_seed,
};
use bulwark_lp::{BackendChoice, IpmSettings, IpmSolver, Status};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::backend::StructuredBackend;
use crate::error::{DeletionError, Result};
use crate::ipm::{DsxIpm, IpmOptions, Progress};
use crate::layout::Lp4;

/// Largest LP (variables) for which a numerical failure of both structured solvers falls back to
/// the generic sparse LDLᵀ (its fill-in grows with the dense coupling to `w`).
const GENERIC_FALLBACK_MAX_VARS: usize = 300_000;

/// What one LP solve returned, whichever solver ran.
struct OneSolve {
    factor_seconds: f64,
    solve_seconds: f64,
    wb: Vec<f64>,
    objective: f64,
    iterations: u32,
    gap: f64,
    primal_residual: f64,
    dual_residual: f64,
    backend: String,
}

/// Which linear-system backend solves LP (4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LpBackend {
    /// The custom primal–dual interior-point method of DSX §3 ([`crate::ipm`]) on the
    /// block-arrow normal equations of `bulwark-linalg`: `O(Σ|S_i|²)` per iteration, `O(nnz)`
    /// memory. The default.
    Structured,
    /// `bulwark-lp`'s generic homogeneous self-dual engine with the structured KKT backend
    /// [`StructuredBackend`] (same linear algebra, generic iteration; for cross-checks).
    EngineStructured,
    /// `bulwark-lp`'s generic sparse LDLᵀ (for cross-checks).
    GenericSparse,
    /// `bulwark-lp`'s dense backend (tiny problems only).
    Dense,
}

/// Unchecked hyper-parameters of the DSX LP classifier (LP (4)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsxLpParams(DsxLp);

/// Validated hyper-parameters; see [`DsxLpParams`] for the meaning of each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsxLp {
    budget: f64,
    c: f64,
    values: FeatureValues,
    backend: LpBackend,
    tolerance: f64,
    max_iter: u32,
    time_limit: f64,
    chunks: Option<usize>,
    seed: u64,
    /// Worker threads of the custom IPM (`None`: rayon's current pool).
    #[serde(default)]
    threads: Option<usize>,
}

impl Default for DsxLpParams {
    fn default() -> Self {
        Self(DsxLp {
            budget: 1.0,
            c: 1.0,
            values: FeatureValues::Uniform,
            backend: LpBackend::Structured,
            tolerance: 1e-8,
            max_iter: 200,
            time_limit: f64::INFINITY,
            chunks: None,
            seed: 0,
            threads: None,
        })
    }
}

impl DsxLpParams {
    /// Defaults: `N = 1`, `C = 1`, uniform values, structured backend, tolerance 1e-8.
    pub fn new() -> Self {
        Self::default()
    }
    /// The deletion budget `N` (`0 ≤ N < V([n])`).
    pub fn budget(mut self, n: f64) -> Self {
        self.0.budget = n;
        self
    }
    /// The box radius `C` (`‖w‖∞ ≤ C`, `C > 0`).
    pub fn c(mut self, c: f64) -> Self {
        self.0.c = c;
        self
    }
    /// Feature values.
    pub fn values(mut self, v: FeatureValues) -> Self {
        self.0.values = v;
        self
    }
    /// Linear-system backend.
    pub fn backend(mut self, b: LpBackend) -> Self {
        self.0.backend = b;
        self
    }
    /// Relative residual and gap tolerance of the IPM (default 1e-8).
    pub fn tolerance(mut self, t: f64) -> Self {
        self.0.tolerance = t;
        self
    }
    /// IPM iteration limit (default 200). When the structured IPM reaches it (a stalled path)
    /// or stops on a numerical error, the fit falls back to `bulwark-lp`'s engine on the same
    /// factorisation (and, up to 300 000 variables, to the generic sparse backend), with the
    /// same limit; `SolveDiagnostics::backend` says which solver answered.
    pub fn max_iter(mut self, k: u32) -> Self {
        self.0.max_iter = k;
        self
    }
    /// Wall-clock limit per LP in seconds (default ∞).
    pub fn time_limit(mut self, s: f64) -> Self {
        self.0.time_limit = s;
        self
    }
    /// ICML 2008 variant: split the training set into `k` seeded chunks, solve LP (4) on each
    /// and average the weights and biases (bagging). `None` (default) solves one LP.
    pub fn chunks(mut self, k: Option<usize>) -> Self {
        self.0.chunks = k;
        self
    }
    /// Seed of the chunk assignment.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
    /// Worker threads of the structured IPM's per-example passes and factorisations
    /// (default `None`: rayon's current pool, i.e. every core unless `RAYON_NUM_THREADS` or an
    /// enclosing pool says otherwise). The blocks of work and the order of every sum are fixed
    /// by the data, so the model is bit-identical for any thread count.
    pub fn threads(mut self, t: Option<usize>) -> Self {
        self.0.threads = t;
        self
    }
}

impl ParamGuard for DsxLpParams {
    type Checked = DsxLp;
    type Error = Error;
    fn check_ref(&self) -> std::result::Result<&DsxLp, Error> {
        let p = &self.0;
        bulwark_core::error::check_positive("C", p.c)?;
        bulwark_core::error::check_nonnegative("budget", p.budget)?;
        if !(p.tolerance.is_finite() && p.tolerance > 0.0 && p.tolerance < 1.0) {
            return Err(Error::param("tolerance", p.tolerance, "a number in (0, 1)"));
        }
        if p.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if p.time_limit.is_nan() || p.time_limit <= 0.0 {
            return Err(Error::param("time_limit", p.time_limit, "> 0 seconds"));
        }
        if let Some(k) = p.chunks
            && k == 0
        {
            return Err(Error::param("chunks", k, "at least 1"));
        }
        if let Some(t) = p.threads
            && t == 0
        {
            return Err(Error::param("threads", t, "at least 1"));
        }
        p.values.check()?;
        Ok(p)
    }
    fn check(self) -> std::result::Result<DsxLp, Error> {
        self.check_ref()?;
        Ok(self.0)
    }
}

/// What one LP solve reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveDiagnostics {
    /// LP (4)'s objective `(1/m) Σ ξ_i` as returned by the IPM (mean over chunks when bagging).
    pub objective: f64,
    /// The mean closed-form worst-case deletion loss at the returned `(w, b)` (core's
    /// fractional knapsack); equals `objective` up to the solver tolerance.
    pub closed_form_objective: f64,
    /// IPM iterations (summed over chunks).
    pub iterations: u32,
    /// Relative duality gap (max over chunks).
    pub gap: f64,
    /// Relative primal residual (max over chunks).
    pub primal_residual: f64,
    /// Relative dual residual (max over chunks).
    pub dual_residual: f64,
    /// Wall-clock seconds of the whole fit.
    pub seconds: f64,
    /// Backend name.
    pub backend: String,
    /// Seconds in factorisations of the normal equations (custom IPM only, else 0).
    pub factor_seconds: f64,
    /// Seconds in linear solves including refinement (custom IPM only, else 0).
    pub solve_seconds: f64,
    /// Number of LPs solved (1, or the chunk count).
    pub lps: usize,
    /// LP variables and rows of the (last) LP.
    pub lp_vars: usize,
    /// See `lp_vars`.
    pub lp_rows: usize,
}

impl DsxLp {
    /// The budget of this training set (values resolved, validated against the data).
    pub fn feature_budget(&self, n_features: usize) -> Result<FeatureBudget> {
        let v = self.values.resolve(n_features)?;
        Ok(FeatureBudget::try_new(v, self.budget)?)
    }

    fn settings(&self) -> Result<IpmSettings> {
        let backend = match self.backend {
            LpBackend::Dense => BackendChoice::Dense,
            _ => BackendChoice::SparseLdl,
        };
        IpmSettings::builder()
            .tolerance(self.tolerance)
            .max_iter(self.max_iter)
            .time_limit(self.time_limit)
            .backend(backend)
            .equilibrate(self.backend != LpBackend::EngineStructured)
            .presolve(self.backend != LpBackend::EngineStructured)
            .build()
            .map_err(|e| DeletionError::Lp(e.into()))
    }

    /// Solves LP (4) with `bulwark-lp`'s engine and the given backend.
    fn solve_engine(
        &self,
        layout: &Lp4,
        backend: LpBackend,
        progress: Option<Progress<'_>>,
    ) -> Result<OneSolve> {
        let n = layout.n();
        let problem = layout.build()?;
        let settings = DsxLp {
            backend,
            ..self.clone()
        }
        .settings()?;
        let mut solver = IpmSolver::new(&problem, settings)?;
        if let Some(cb) = progress {
            solver = solver.with_callback(cb);
        }
        let solution = match backend {
            LpBackend::EngineStructured | LpBackend::Structured => solver
                .with_backend(StructuredBackend::new(layout.clone(), None))
                .solve()?,
            _ => solver.solve()?,
        };
        if solution.status != Status::Optimal {
            return Err(DeletionError::not_solved(&solution));
        }
        Ok(OneSolve {
            factor_seconds: 0.0,
            solve_seconds: 0.0,
            wb: solution.x[..=n].to_vec(),
            objective: solution.objective,
            iterations: solution.iterations,
            gap: solution.gap,
            primal_residual: solution.primal_residual,
            dual_residual: solution.dual_residual,
            backend: solution.kkt.name.to_string(),
        })
    }

    /// Solves LP (4) once on `data`; returns `(w, b)` and the solver figures.
    fn solve_one(
        &self,
        data: &Dataset,
        budget: &FeatureBudget,
        progress: Option<Progress<'_>>,
    ) -> Result<(LinearModel, OneSolve, Lp4)> {
        let layout = Lp4::new(data, budget, self.c)?;
        let n = layout.n();
        let one = if self.backend == LpBackend::Structured {
            let out = DsxIpm::new(
                &layout,
                self.threads,
                &crate::ipm::DsxIpmSettings::default(),
            )?
            .solve(
                IpmOptions {
                    tolerance: self.tolerance,
                    max_iter: self.max_iter,
                    time_limit: self.time_limit,
                },
                progress,
            )?;
            if out.status == Status::Optimal {
                OneSolve {
                    factor_seconds: out.factor_seconds,
                    solve_seconds: out.solve_seconds,
                    wb: out.wb,
                    objective: out.objective,
                    iterations: out.iterations,
                    gap: out.gap,
                    primal_residual: out.primal_residual,
                    dual_residual: out.dual_residual,
                    backend: "dsx-ipm (block-arrow normal equations)".into(),
                }
            } else if matches!(out.status, Status::NumericalError | Status::IterationLimit) {
                // The normal equations lose accuracy on some degenerate instances (tiny slacks
                // next to large variables, e.g. few examples in many dimensions with a small C).
                // bulwark-lp's homogeneous self-dual engine on the same structured factorisation,
                // with its regularisation and refinement against the full KKT operator, solves
                // them (and, on small problems, the generic sparse backend after it): fall back
                // and say so in `backend`.
                // The same when the path stalls until the iteration limit (seen once in the
                // harness: USPS, C = 0.1, N = 0, gap stuck at 1.3 with tiny residuals).
                // Last resort on small problems: the generic sparse LDLᵀ of the full KKT system.
                let mut one = match self.solve_engine(&layout, LpBackend::EngineStructured, None) {
                    Err(DeletionError::NotSolved { .. })
                        if layout.num_vars() <= GENERIC_FALLBACK_MAX_VARS =>
                    {
                        self.solve_engine(&layout, LpBackend::GenericSparse, None)?
                    }
                    other => other?,
                };
                one.iterations += out.iterations;
                one.backend = format!(
                    "{} (after dsx-ipm {}: {})",
                    one.backend,
                    out.status.as_str(),
                    out.reason.as_deref().unwrap_or("no reason given")
                );
                one
            } else {
                return Err(DeletionError::NotSolved {
                    reason: out.reason.clone(),
                    status: out.status.as_str().to_string(),
                    iterations: out.iterations,
                    primal_residual: out.primal_residual,
                    dual_residual: out.dual_residual,
                    gap: out.gap,
                });
            }
        } else {
            self.solve_engine(&layout, self.backend, progress)?
        };
        // Project onto the box: the iterate may exceed it by the feasibility tolerance.
        let w: Vec<f64> = one.wb[..n]
            .iter()
            .map(|w| w.clamp(-self.c, self.c))
            .collect();
        let model = LinearModel::try_new(w, one.wb[n])?;
        Ok((model, one, layout))
    }

    /// Trains and returns the model with full diagnostics.
    pub fn fit_with_diagnostics(&self, data: &Dataset) -> Result<(LinearModel, SolveDiagnostics)> {
        self.fit_with_progress(data, None)
    }

    /// As [`DsxLp::fit_with_diagnostics`], calling `progress` once per IPM iteration (of every
    /// LP when bagging); `ControlFlow::Break` stops the solve (a `NotSolved` error with status
    /// `time_limit`).
    pub fn fit_with_progress(
        &self,
        data: &Dataset,
        mut progress: Option<Progress<'_>>,
    ) -> Result<(LinearModel, SolveDiagnostics)> {
        let start = Instant::now();
        data.require_two_classes()?;
        let budget = self.feature_budget(data.n_features())?;
        let parts: Vec<Dataset> = match self.chunks {
            None | Some(1) => vec![data.clone()],
            Some(k) => chunk(data, k, self.seed)?,
        };
        let n = data.n_features();
        let mut w = vec![0.0; n];
        let mut b = 0.0;
        let mut diag = SolveDiagnostics {
            objective: 0.0,
            closed_form_objective: 0.0,
            iterations: 0,
            gap: 0.0,
            primal_residual: 0.0,
            dual_residual: 0.0,
            seconds: 0.0,
            backend: String::new(),
            factor_seconds: 0.0,
            solve_seconds: 0.0,
            lps: parts.len(),
            lp_vars: 0,
            lp_rows: 0,
        };
        for part in &parts {
            let (model, sol, layout) =
                self.solve_one(part, &budget, progress.as_mut().map(|p| &mut **p as _))?;
            model
                .weights
                .iter()
                .zip(&mut w)
                .for_each(|(a, s)| *s += a / parts.len() as f64);
            b += model.bias / parts.len() as f64;
            diag.objective += sol.objective / parts.len() as f64;
            diag.iterations += sol.iterations;
            diag.gap = diag.gap.max(sol.gap);
            diag.primal_residual = diag.primal_residual.max(sol.primal_residual);
            diag.dual_residual = diag.dual_residual.max(sol.dual_residual);
            diag.backend = sol.backend;
            diag.factor_seconds += sol.factor_seconds;
            diag.solve_seconds += sol.solve_seconds;
            diag.lp_vars = layout.num_vars();
            diag.lp_rows = layout.num_rows();
        }
        let model = LinearModel::try_new(w, b)?;
        diag.closed_form_objective =
            budget.mean_worst_case_loss(&model.weights, model.bias, data)?;
        if parts.len() > 1 {
            // the averaged model's LP (4) objective on the whole set is the closed form
            diag.objective = diag.closed_form_objective;
        }
        diag.seconds = start.elapsed().as_secs_f64();
        Ok((model, diag))
    }
}

/// Seeded, class-stratified chunks; every chunk keeps both classes.
fn chunk(data: &Dataset, k: usize, seed: u64) -> Result<Vec<Dataset>> {
    let y = data.require_two_classes()?;
    let mut rng = rng_from_seed(seed);
    let mut parts = vec![Vec::new(); k];
    for class in [Sign::Neg, Sign::Pos] {
        let mut idx: Vec<usize> = (0..data.len()).filter(|&i| y[i] == class).collect();
        if idx.len() < k {
            return Err(Error::param(
                "chunks",
                k,
                format!("at most the size of the smaller class ({})", idx.len()),
            )
            .into());
        }
        idx.shuffle(&mut rng);
        for (t, i) in idx.into_iter().enumerate() {
            parts[t % k].push(i);
        }
    }
    Ok(parts
        .into_iter()
        .map(|mut p| {
            p.sort_unstable();
            data.select(&p)
        })
        .collect())
}

impl bulwark_core::Fit for DsxLpParams {
    type Model = LinearModel;
    type Error = DeletionError;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.fit_with_progress(data, None)
    }
}

impl DsxLpParams {
    /// [`bulwark_core::Fit::fit`] with a per-iteration progress callback (for progress bars and
    /// cancellation: `ControlFlow::Break` stops the solve with a `NotSolved` error).
    pub fn fit_with_progress(
        &self,
        data: &Dataset,
        progress: Option<Progress<'_>>,
    ) -> Result<Fitted<LinearModel>> {
        let p = self.check_ref()?;
        let (model, d) = p.fit_with_progress(data, progress)?;
        let mut report = FitReport {
            algorithm: "lp".into(),
            solver: d.backend.clone(),
            objective: Some(d.objective),
            iterations: Some(d.iterations as usize),
            seconds: d.seconds,
            converged: true,
            tolerance: Some(p.tolerance),
            reached: Some(d.gap.max(d.primal_residual).max(d.dual_residual)),
            ..FitReport::default()
        };
        for (k, v) in [
            ("closed_form_objective", d.closed_form_objective),
            ("gap", d.gap),
            ("primal_residual", d.primal_residual),
            ("dual_residual", d.dual_residual),
            ("lps", d.lps as f64),
            ("lp_vars", d.lp_vars as f64),
            ("lp_rows", d.lp_rows as f64),
            ("factor_seconds", d.factor_seconds),
            ("solve_seconds", d.solve_seconds),
        ] {
            report.details.insert(k.into(), v);
        }
        Ok(Fitted { model, report })
    }
}
