//! Training: LP (4) solved by a chain of solvers, each failure recorded.
//!
//! With the default [`LpBackend::Structured`] the chain is
//!
//! 1. `dsx-ipm`, the structured IPM of [`crate::ipm`];
//! 2. `hsd-engine/structured`: `bulwark-lp`'s homogeneous self-dual engine on the same
//!    structured factorisation ([`crate::StructuredBackend`]);
//! 3. on LPs of at most 300 000 variables, `hsd-engine/generic-ldl`: the engine with the generic
//!    sparse LDLᵀ of the full KKT system, on the equilibrated problem, then
//!    `hsd-engine/generic-ldl-unscaled` without equilibration.
//!
//! A solver that stops at its iteration limit or on a numerical error hands over to the next
//! (the equilibrated engine only on a numerical error); a time limit or a cancellation ends the
//! fit. Each failed attempt is recorded as `solver: status: reason (k iterations)` in
//! [`SolveDiagnostics::fallbacks`] and `FitReport::fallbacks`, and the solver that answered is
//! named in [`SolveDiagnostics::solver`]; the iterations of every attempt are counted.
//! [`DsxLpParams::fallback`]`(false)` keeps only the first solver. The other backends start the
//! chain at their own solver (`GenericSparse` and `Dense` retry once unscaled).
//!
//! `hsd-engine/structured` holds about 1 KiB per stored (example, feature) pair (the structured
//! IPM about 230 bytes): it is started only when that fits in
//! [`DsxLpParams::fallback_memory`] (default: the memory the system reports available). When it
//! does not, the fit ends with the structured IPM's `NotSolved` error, whose `not_started` names
//! the engine and the memory it would need — 60 000 Fashion-MNIST images against the rest need
//! some 45 GiB, and a 24 GiB machine killed the process.

use std::time::Instant;

use bulwark_linalg::{NormalEquations, human_bytes};

use bulwark_core::{
    Dataset, Error, FeatureBudget, FitReport, Fitted, LinearModel, ParamGuard, Sign, rng_from_seed,
};
use bulwark_lp::{BackendChoice, IpmSettings, IpmSolver, Status};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::backend::StructuredBackend;
use crate::error::{DeletionError, Result};
use crate::ipm::{DsxIpm, IpmOptions, IterateCheck, Progress};
use crate::layout::Lp4;
use crate::params::{DsxLp, DsxLpParams, LpBackend};
use crate::screening::ScreeningReport;

/// Largest LP (variables) for which a failure of both structured solvers falls back to the
/// generic sparse LDLᵀ (its fill-in grows with the dense coupling to `w`).
const GENERIC_FALLBACK_MAX_VARS: usize = 300_000;

/// Memory of `hsd-engine/structured` per stored (example, feature) pair of LP (4), rounded up
/// from the peak RSS of the whole process measured on real images (Fashion-MNIST T-shirt/shirt,
/// 580 and 2 993 examples × 784: 948 and 866 bytes; MNIST 4/9, 1 991 × 784: 839 bytes), against
/// about 230 for the structured IPM: the engine builds LP (4) as a general sparse problem.
const ENGINE_BYTES_PER_PAIR: u64 = 1024;

/// One solver of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    /// The structured IPM.
    DsxIpm,
    /// `bulwark-lp`'s engine with `backend`, on the equilibrated problem or not.
    Engine {
        backend: LpBackend,
        equilibrate: bool,
    },
}

impl Attempt {
    fn name(self) -> &'static str {
        match self {
            Self::DsxIpm => "dsx-ipm",
            Self::Engine {
                backend: LpBackend::GenericSparse,
                equilibrate: false,
            } => "hsd-engine/generic-ldl-unscaled",
            Self::Engine {
                backend: LpBackend::Dense,
                equilibrate: false,
            } => "hsd-engine/dense-unscaled",
            Self::Engine { backend, .. } => backend.solver_name(),
        }
    }

    /// The memory (bytes) this attempt would hold on `layout`, for the engines on the
    /// structured factorisation (`None`: not estimated — the structured IPM, whose memory is the
    /// first attempt's, and the generic engines, which run only on LPs of at most
    /// [`GENERIC_FALLBACK_MAX_VARS`] variables).
    fn memory_estimate(self, layout: &Lp4<'_>) -> Option<u64> {
        match self {
            Self::Engine {
                backend: LpBackend::EngineStructured | LpBackend::Structured,
                ..
            } => Some(ENGINE_BYTES_PER_PAIR * layout.nnz() as u64),
            _ => None,
        }
    }

    /// Whether a run that stopped with `status` hands over to the next solver.
    fn falls_back_on(self, status: Status) -> bool {
        match self {
            Self::Engine {
                equilibrate: true, ..
            } => status == Status::NumericalError,
            _ => matches!(status, Status::NumericalError | Status::IterationLimit),
        }
    }
}

/// What one attempt returned.
pub(crate) struct Run {
    status: Status,
    reason: Option<String>,
    wb: Vec<f64>,
    /// LP (4)'s objective `(1/m) Σ ξ_i` and the dual objective on the same scale.
    pub(crate) objective: f64,
    pub(crate) dual_objective: f64,
    iterations: u32,
    pub(crate) gap: f64,
    primal_residual: f64,
    dual_residual: f64,
    pub(crate) factor_seconds: f64,
    pub(crate) solve_seconds: f64,
    pub(crate) refinements: u32,
    pub(crate) regularization_boosts: u32,
    /// The last iterate's relative dual residual when the answer is certified by a repaired
    /// dual point (the structured IPM's *Certificate*).
    pub(crate) repaired_from: Option<f64>,
    /// The caller's check of the iterate ended the structured IPM ([`IterateCheck`]): `wb`
    /// is that iterate's, not an answer.
    pub(crate) ended_by_check: bool,
    /// How the structured linear algebra solved the normal equations (the structured IPM and
    /// the engine on the structured factorisation; `None` for the generic engines).
    pub(crate) normal_equations: Option<NormalEquations>,
}

impl Run {
    /// `status: reason (k iterations)`, the reason defaulting to the residuals.
    fn describe(&self) -> String {
        let reason = self.reason.clone().unwrap_or_else(|| {
            format!(
                "primal residual {:.2e}, dual residual {:.2e}, gap {:.2e}",
                self.primal_residual, self.dual_residual, self.gap
            )
        });
        format!("{}: {reason} ({} iterations)", self.status, self.iterations)
    }
}

/// The answer to one LP: the attempt that produced it and the failures before it.
pub(crate) struct Answer {
    pub(crate) run: Run,
    solver: &'static str,
    pub(crate) fallbacks: Vec<String>,
    /// Iterations of every attempt.
    pub(crate) iterations: u32,
}

/// One LP (4) solved: the model (`w` projected onto the box), the answer, and the LP's size.
pub(crate) struct Solved {
    pub(crate) model: LinearModel,
    pub(crate) answer: Answer,
    /// Variables and rows of the LP that answered.
    pub(crate) shape: (usize, usize),
}

/// What one fit reported (every LP of it when bagging).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveDiagnostics {
    /// LP (4)'s objective `(1/m) Σ ξ_i` as returned by the solver (when bagging: the closed
    /// form of the averaged model on the whole set).
    pub objective: f64,
    /// The mean closed-form worst-case deletion loss at the returned `(w, b)` (core's
    /// fractional knapsack); equals `objective` up to the solver tolerance.
    pub closed_form_objective: f64,
    /// Iterations of every solver attempt (summed over chunks).
    pub iterations: u32,
    /// Relative duality gap (max over chunks).
    pub gap: f64,
    /// Relative primal residual (max over chunks).
    pub primal_residual: f64,
    /// Relative dual residual (max over chunks).
    pub dual_residual: f64,
    /// Wall-clock seconds of the whole fit.
    pub seconds: f64,
    /// The solver that answered (`dsx-ipm`, `hsd-engine/structured`,
    /// `hsd-engine/generic-ldl`, …; see [`crate::fit`]). When bagging, the distinct solvers
    /// of the chunks in order, joined by ` + `.
    pub solver: String,
    /// The failed attempts before the answer, in order, each `solver: status: reason
    /// (k iterations)`; prefixed by `chunk k: ` when bagging. Empty when the first solver
    /// answered.
    pub fallbacks: Vec<String>,
    /// Whether the answering solver met the tolerance asked (every chunk's, when bagging).
    pub converged: bool,
    /// Why the answering solver stopped short of the tolerance, each `solver: almost_optimal:
    /// reason (k iterations)` (prefixed by `chunk k: ` when bagging): the structured IPM's
    /// answers certified within [`crate::DsxIpmSettings::accept_within`] times the tolerance
    /// after it stalled or reached its iteration limit (module docs of `ipm`, *Almost
    /// optimal*). Empty when every answer is optimal.
    #[serde(default)]
    pub stopped_short: Vec<String>,
    /// The tolerance asked.
    pub tolerance: f64,
    /// Seconds in factorisations of the normal equations (structured IPM only, else 0).
    pub factor_seconds: f64,
    /// Seconds in linear solves including refinement (structured IPM only, else 0).
    pub solve_seconds: f64,
    /// Newton directions of the structured IPM refined on the dual equations.
    pub refinements: u32,
    /// Factorisations the structured IPM repeated with a raised dynamic regularisation after a
    /// non-finite direction (module docs of `ipm`, *Regularisation*).
    #[serde(default)]
    pub regularization_boosts: u32,
    /// When an answer of the structured IPM is certified by the closed-form objective against
    /// a dual point repaired from its last iterate, which missed a test (usually the dual
    /// residual; module docs of `ipm`, *Certificate*): that iterate's relative dual residual
    /// (the largest over the LPs).
    /// `dual_residual` and `gap` are then the certificate's: the repaired point's and the
    /// closed-form objective's against its dual objective.
    #[serde(default)]
    pub dual_repaired_from: Option<f64>,
    /// Number of LPs solved (1, or the chunk count).
    pub lps: usize,
    /// LP variables and rows of the (last) LP.
    pub lp_vars: usize,
    /// See `lp_vars`.
    pub lp_rows: usize,
    /// What example screening did ([`crate::screening`]), per LP that was screened (empty when
    /// none was: the training set was smaller than [`crate::Screening::min_examples`]).
    #[serde(default)]
    pub screening: Vec<ScreeningReport>,
    /// How the normal equations of the LP that answered were solved (`feature-space`,
    /// `example-space` or `sparse-ldl`: `bulwark-linalg`'s cost model, or the method forced by
    /// [`crate::DsxIpmSettings::normal_equations`]); the distinct methods of the chunks joined
    /// by ` + ` when bagging; `None` when a generic engine answered.
    #[serde(default)]
    pub normal_equations: Option<String>,
}

impl SolveDiagnostics {
    /// The stopping measure reached: the largest of the gap and the relative residuals.
    pub fn reached(&self) -> f64 {
        self.gap.max(self.primal_residual).max(self.dual_residual)
    }
    /// Whether a solver other than the first answered (on any chunk).
    pub fn fell_back(&self) -> bool {
        !self.fallbacks.is_empty()
    }
}

impl DsxLp {
    /// The solvers tried on `layout`, in order.
    fn chain(&self, layout: &Lp4<'_>) -> Vec<Attempt> {
        let engine = |backend, equilibrate| Attempt::Engine {
            backend,
            equilibrate,
        };
        let mut chain = match self.backend {
            LpBackend::Structured => {
                let mut c = vec![Attempt::DsxIpm, engine(LpBackend::EngineStructured, false)];
                if layout.num_vars() <= GENERIC_FALLBACK_MAX_VARS {
                    c.push(engine(LpBackend::GenericSparse, true));
                    c.push(engine(LpBackend::GenericSparse, false));
                }
                c
            }
            LpBackend::EngineStructured => vec![engine(LpBackend::EngineStructured, false)],
            b => vec![engine(b, true), engine(b, false)],
        };
        if !self.fallback {
            chain.truncate(1);
        }
        chain
    }

    /// `bulwark-lp`'s settings for an engine attempt (its own retries are off: a retry without
    /// equilibration is an attempt of the chain here, so it is reported, and the regularised
    /// retry would answer unreported).
    fn engine_settings(&self, backend: LpBackend, equilibrate: bool) -> Result<IpmSettings> {
        let choice = match backend {
            LpBackend::Dense => BackendChoice::Dense,
            _ => BackendChoice::SparseLdl,
        };
        IpmSettings::builder()
            .tolerance(self.tolerance)
            .max_iter(self.max_iter)
            .time_limit(self.time_limit)
            .backend(choice)
            .equilibrate(equilibrate)
            .retry_unscaled(false)
            .retry_regularized(false)
            .presolve(backend != LpBackend::EngineStructured)
            .build()
            .map_err(|e| DeletionError::Lp(e.into()))
    }

    /// Runs one attempt on `layout`; `check` goes to the structured IPM (the engines have none).
    fn run(
        &self,
        attempt: Attempt,
        layout: &Lp4<'_>,
        progress: Option<Progress<'_>>,
        check: Option<IterateCheck<'_>>,
    ) -> Result<Run> {
        let (backend, equilibrate) = match attempt {
            Attempt::DsxIpm => {
                let s = &self.ipm_settings;
                let opts = IpmOptions {
                    tolerance: self.tolerance,
                    max_iter: s.max_iter.unwrap_or(self.max_iter),
                    time_limit: self.time_limit,
                };
                let out = DsxIpm::new(layout, self.threads, s)?.solve(opts, progress, check)?;
                return Ok(Run {
                    status: out.status,
                    reason: out.reason,
                    wb: out.wb,
                    objective: out.objective,
                    dual_objective: out.dual_objective,
                    iterations: out.iterations,
                    gap: out.gap,
                    primal_residual: out.primal_residual,
                    dual_residual: out.dual_residual,
                    factor_seconds: out.factor_seconds,
                    solve_seconds: out.solve_seconds,
                    refinements: out.refinements,
                    regularization_boosts: out.regularization_boosts,
                    repaired_from: out.repaired_from,
                    ended_by_check: out.ended_by_check,
                    normal_equations: Some(out.normal_equations),
                });
            }
            Attempt::Engine {
                backend,
                equilibrate,
            } => (backend, equilibrate),
        };
        let problem = layout.build()?;
        let mut solver = IpmSolver::new(&problem, self.engine_settings(backend, equilibrate)?)?;
        if let Some(cb) = progress {
            solver = solver.with_callback(cb);
        }
        let solution = match backend {
            LpBackend::EngineStructured | LpBackend::Structured => solver
                .with_backend(StructuredBackend::new(layout.clone(), None))
                .solve()?,
            _ => solver.solve()?,
        };
        Ok(Run {
            status: solution.status,
            reason: None,
            wb: solution.x[..=layout.n()].to_vec(),
            objective: solution.objective,
            dual_objective: solution.dual_objective,
            iterations: solution.iterations,
            gap: solution.gap,
            primal_residual: solution.primal_residual,
            dual_residual: solution.dual_residual,
            factor_seconds: 0.0,
            solve_seconds: 0.0,
            refinements: 0,
            regularization_boosts: 0,
            repaired_from: None,
            ended_by_check: false,
            normal_equations: None,
        })
    }

    /// Why `next` is not started on `layout`: its memory estimate exceeds
    /// [`DsxLpParams::fallback_memory`], or by default the memory the system reports available
    /// (`None`: it is started — also where neither is known).
    fn too_big_to_start(&self, next: Attempt, layout: &Lp4<'_>) -> Option<String> {
        let need = next.memory_estimate(layout)?;
        let limit = self.fallback_memory.or_else(crate::memory::available)?;
        (need > limit).then(|| {
            format!(
                "{} not started: it would need about {} (about {ENGINE_BYTES_PER_PAIR} bytes per \
                 stored (example, feature) pair), {} {}",
                next.name(),
                human_bytes(need),
                human_bytes(limit),
                if self.fallback_memory.is_some() {
                    "allowed by the fallback memory limit"
                } else {
                    "available"
                }
            )
        })
    }

    /// Solves LP (4) on `layout` with the chain of solvers: the first optimal answer, or a
    /// `NotSolved` error naming the last solver tried and every failure before it. A run that
    /// `check` ended ([`IterateCheck`]) is returned as it is (`run.ended_by_check`): no fallback.
    fn answer(
        &self,
        layout: &Lp4<'_>,
        mut progress: Option<Progress<'_>>,
        mut check: Option<IterateCheck<'_>>,
    ) -> Result<Answer> {
        let chain = self.chain(layout);
        let mut fallbacks = Vec::new();
        let mut iterations = 0;
        for (k, &attempt) in chain.iter().enumerate() {
            let p = progress.as_mut().map(|p| &mut **p as _);
            let run = self.run(attempt, layout, p, check.as_mut().map(|c| &mut **c as _))?;
            iterations += run.iterations;
            // (an almost optimal answer is the structured IPM's: module docs of `ipm`)
            if run.ended_by_check || matches!(run.status, Status::Optimal | Status::AlmostOptimal) {
                return Ok(Answer {
                    run,
                    solver: attempt.name(),
                    fallbacks,
                    iterations,
                });
            }
            let mut not_started = None;
            if k + 1 < chain.len() && attempt.falls_back_on(run.status) {
                not_started = self.too_big_to_start(chain[k + 1], layout);
                if not_started.is_none() {
                    fallbacks.push(format!("{}: {}", attempt.name(), run.describe()));
                    continue;
                }
            }
            return Err(DeletionError::NotSolved {
                solver: attempt.name().to_string(),
                fallbacks,
                reason: run.reason,
                status: run.status,
                iterations: run.iterations,
                primal_residual: run.primal_residual,
                dual_residual: run.dual_residual,
                gap: run.gap,
                not_started,
            });
        }
        unreachable!("the chain of solvers is never empty")
    }

    /// Solves LP (4) on `data`: on working sets of examples when [`DsxLpParams::screening`]
    /// applies ([`crate::screening`]), else (or when screening gave up) as one LP. Returns
    /// the answer (its model, and the last LP's variables and rows) and what screening did.
    fn solve_one(
        &self,
        data: &Dataset,
        budget: &FeatureBudget,
        mut progress: Option<Progress<'_>>,
    ) -> Result<(Solved, Option<ScreeningReport>)> {
        if !self.screening.applies(data.len()) {
            return Ok((self.solve_whole(data, budget, progress, None)?, None));
        }
        let mut report = ScreeningReport::default();
        let mut before = Vec::new();
        let p = progress.as_mut().map(|p| &mut **p as _);
        if let Some(solved) = self.solve_screened(data, budget, p, &mut report, &mut before)? {
            return Ok((solved, Some(report)));
        }
        // screening gave up: the whole LP, with the rounds' iterations counted and the rounds'
        // own fallbacks first. The give-up itself is not a fallback — the same solver answers
        // the whole LP, and with screening on by default it is the usual outcome on tasks where
        // most examples keep a loss; the screening report says why (`SolveDiagnostics::screening`)
        match self.solve_whole(data, budget, progress, None) {
            Ok(mut solved) => {
                solved.answer.iterations += report.iterations;
                before.append(&mut solved.answer.fallbacks);
                solved.answer.fallbacks = before;
                Ok((solved, Some(report)))
            }
            Err(mut e) => {
                if let DeletionError::NotSolved { fallbacks, .. } = &mut e {
                    before.append(fallbacks);
                    *fallbacks = before;
                }
                Err(e)
            }
        }
    }

    /// Solves LP (4) once on every example of `data`; returns `(w, b)`, the answer and the LP's
    /// variables and rows. `check` may end the structured IPM early (`answer.run.ended_by_check`;
    /// [`IterateCheck`]).
    pub(crate) fn solve_whole(
        &self,
        data: &Dataset,
        budget: &FeatureBudget,
        progress: Option<Progress<'_>>,
        check: Option<IterateCheck<'_>>,
    ) -> Result<Solved> {
        let layout = Lp4::new(data, budget, self.c)?;
        let n = layout.n();
        let answer = self.answer(&layout, progress, check)?;
        // Project onto the box: the iterate may exceed it by the feasibility tolerance.
        let w: Vec<f64> = answer.run.wb[..n]
            .iter()
            .map(|w| w.clamp(-self.c, self.c))
            .collect();
        let model = LinearModel::try_new(w, answer.run.wb[n])?;
        Ok(Solved {
            model,
            answer,
            shape: (layout.num_vars(), layout.num_rows()),
        })
    }

    /// Trains and returns the model with full diagnostics.
    pub fn fit_with_diagnostics(&self, data: &Dataset) -> Result<(LinearModel, SolveDiagnostics)> {
        self.fit_with_progress(data, None)
    }

    /// As [`DsxLp::fit_with_diagnostics`], calling `progress` once per iteration of every
    /// solver attempt (of every LP when bagging; each attempt counts from 0);
    /// `ControlFlow::Break` stops the solve (a `NotSolved` error with status `time_limit`).
    pub fn fit_with_progress(
        &self,
        data: &Dataset,
        mut progress: Option<Progress<'_>>,
    ) -> Result<(LinearModel, SolveDiagnostics)> {
        let start = Instant::now();
        data.require_two_classes()?;
        // LP (4) weighs every example alike: example weights are refused, not ignored
        data.reject_weights("lp")?;
        let budget = self.feature_budget(data.n_features())?;
        // one LP on the caller's data, borrowed (no copy of the features), or the bagging chunks
        let chunks: Vec<Dataset> = match self.chunks {
            None | Some(1) => Vec::new(),
            Some(k) => chunk(data, k, self.seed)?,
        };
        let parts: Vec<&Dataset> = if chunks.is_empty() {
            vec![data]
        } else {
            chunks.iter().collect()
        };
        let bagging = parts.len() > 1;
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
            solver: String::new(),
            fallbacks: Vec::new(),
            converged: true,
            stopped_short: Vec::new(),
            tolerance: self.tolerance,
            factor_seconds: 0.0,
            solve_seconds: 0.0,
            refinements: 0,
            regularization_boosts: 0,
            dual_repaired_from: None,
            lps: parts.len(),
            lp_vars: 0,
            lp_rows: 0,
            screening: Vec::new(),
            normal_equations: None,
        };
        let mut solvers: Vec<&str> = Vec::new();
        let mut methods: Vec<&str> = Vec::new();
        for (k, part) in parts.iter().enumerate() {
            let chunk_label = |s: String| {
                if bagging {
                    format!("chunk {k}: {s}")
                } else {
                    s
                }
            };
            let solved = self.solve_one(part, &budget, progress.as_mut().map(|p| &mut **p as _));
            let (
                Solved {
                    model,
                    answer,
                    shape: (lp_vars, lp_rows),
                },
                screening,
            ) = match solved {
                Ok(one) => one,
                Err(mut e) => {
                    if let DeletionError::NotSolved {
                        solver, fallbacks, ..
                    } = &mut e
                    {
                        // the earlier chunks' fallbacks, then this chunk's
                        let mine = std::mem::take(fallbacks).into_iter().map(chunk_label);
                        *fallbacks = std::mem::take(&mut diag.fallbacks);
                        fallbacks.extend(mine);
                        *solver = chunk_label(std::mem::take(solver));
                    }
                    return Err(e);
                }
            };
            let sol = &answer.run;
            model
                .weights()
                .iter()
                .zip(&mut w)
                .for_each(|(a, s)| *s += a / parts.len() as f64);
            b += model.bias() / parts.len() as f64;
            diag.objective += sol.objective / parts.len() as f64;
            diag.iterations += answer.iterations;
            diag.gap = diag.gap.max(sol.gap);
            diag.primal_residual = diag.primal_residual.max(sol.primal_residual);
            diag.dual_residual = diag.dual_residual.max(sol.dual_residual);
            let reached = sol.gap.max(sol.primal_residual).max(sol.dual_residual);
            diag.converged &= reached <= self.tolerance;
            if !solvers.contains(&answer.solver) {
                solvers.push(answer.solver);
            }
            if let Some(m) = sol.normal_equations
                && !methods.contains(&m.name())
            {
                methods.push(m.name());
            }
            if sol.status == Status::AlmostOptimal {
                diag.stopped_short.push(chunk_label(format!(
                    "{}: {}",
                    answer.solver,
                    sol.describe()
                )));
            }
            diag.fallbacks
                .extend(answer.fallbacks.into_iter().map(chunk_label));
            diag.factor_seconds += sol.factor_seconds;
            diag.solve_seconds += sol.solve_seconds;
            diag.refinements += sol.refinements;
            diag.regularization_boosts += sol.regularization_boosts;
            if let Some(r) = sol.repaired_from {
                diag.dual_repaired_from = Some(diag.dual_repaired_from.map_or(r, |d| d.max(r)));
            }
            diag.lp_vars = lp_vars;
            diag.lp_rows = lp_rows;
            if let Some(r) = screening {
                diag.screening.push(r);
            }
        }
        diag.solver = solvers.join(" + ");
        diag.normal_equations = (!methods.is_empty()).then(|| methods.join(" + "));
        let model = LinearModel::try_new(w, b)?;
        diag.closed_form_objective =
            budget.mean_worst_case_loss(model.weights(), model.bias(), data)?;
        if bagging {
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
        let mut report = FitReport::new("lp", d.solver.clone());
        report.normal_equations = d.normal_equations.clone();
        report.objective = Some(d.objective);
        report.iterations = Some(d.iterations as usize);
        report.seconds = d.seconds;
        report.converged = d.converged;
        report.tolerance = Some(d.tolerance);
        report.reached = Some(d.reached());
        report.fallbacks = d.fallbacks.clone();
        report.stopped = (!d.stopped_short.is_empty()).then(|| d.stopped_short.join("; "));
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
            ("refinements", f64::from(d.refinements)),
            ("regularization_boosts", f64::from(d.regularization_boosts)),
            (
                "screening_rounds",
                f64::from(d.screening.iter().map(|r| r.rounds).sum::<u32>()),
            ),
            (
                "screening_gave_up",
                d.screening.iter().filter(|r| r.gave_up.is_some()).count() as f64,
            ),
            (
                "screening_ended_early",
                f64::from(d.screening.iter().map(|r| r.ended_early).sum::<u32>()),
            ),
        ] {
            report.details.insert(k.into(), v);
        }
        if let Some(r) = d.dual_repaired_from {
            report.details.insert("dual_repaired_from".into(), r);
        }
        Ok(Fitted { model, report })
    }
}
