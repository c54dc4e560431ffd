//! [`Fit`] for [`GuruParams`]: checks the data, runs the chosen solver and reports the
//! certificate.

use std::time::Instant;

use bulwark_core::comm::{self, Communicator, Counted, Single};
use bulwark_core::{Dataset, Error, Fit, FitReport, Fitted, LinearModel, ParamGuard, Result};

use crate::hyperparams::{GuruParams, Solver};
use crate::objective::{Certificate, Objective};
use crate::{batch, sgd};

/// At or below this objective the terms of (2.22) have underflowed and no fit is certified.
pub(crate) const UNDERFLOW: f64 = 1e-280;

/// What a solver of (2.22) returns.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub w: Vec<f64>,
    pub certificate: Certificate,
    /// Newton iterations or SGD steps.
    pub iterations: u64,
    pub passes: usize,
    pub converged: bool,
    /// Why it stopped before the tolerance, if it did.
    pub stopped: Option<String>,
    /// The solver's name in the report.
    pub solver: &'static str,
    /// One solver-specific count for the report's details (`cg_iterations`, `epochs`).
    pub count: (&'static str, f64),
}

/// A fitted Gaussian-robust classifier with its certificate and solver figures.
#[derive(Debug, Clone)]
pub struct GuruFit {
    /// `w` (and, with the constant feature, its weight as the bias).
    pub model: LinearModel,
    /// The duality certificate at the returned `w` (Ginodi (3.17)).
    pub certificate: Certificate,
    /// Newton iterations (batch) or SGD steps.
    pub iterations: u64,
    /// Passes over the data (objective, gradient, Hessian products, checks, SGD epochs).
    pub passes: usize,
    /// Whether the relative gap met the tolerance.
    pub converged: bool,
    /// Why the solver stopped before the tolerance (iteration limit, precision floor), if it did.
    pub stopped: Option<String>,
}

impl GuruParams {
    /// Fits and returns the full outcome (the [`Fit`] impl wraps it into a [`FitReport`]).
    pub fn fit_certified(&self, data: &Dataset) -> Result<(GuruFit, FitReport)> {
        self.fit_certified_from(data, None)
    }

    /// [`Self::fit_certified`] with a warm start for the batch solver: the direction of
    /// `warm` (weights, then the bias weight when [`GuruParams::bias`] is on), e.g. the optimum
    /// at a nearby `σ` along a regularisation path; its length is found by a line search. A
    /// `warm` of the wrong length, non-finite or zero is ignored (the solver's own start is
    /// used); SGD always starts at `w = 0` (Algorithm 1).
    pub fn fit_certified_from(
        &self,
        data: &Dataset,
        warm: Option<&[f64]>,
    ) -> Result<(GuruFit, FitReport)> {
        self.fit_certified_over(data, warm, &Single)
    }

    /// [`Self::fit_certified_from`] on the examples of every rank of `comm`, `local` being this
    /// rank's share: the batch solver's passes over the examples (objective, gradient,
    /// curvature, Hessian–vector products, the certificate and its correction, the line
    /// searches on the ray) sum the local rows and combine the ranks' partial sums through
    /// `comm` ([`Objective::over`]); the Newton–CG step runs on every rank alike, so every
    /// rank returns the same model and certificate. With [`Single`] this is
    /// [`Self::fit_certified_from`]. Over several ranks only [`Solver::Batch`] runs (SGD's
    /// steps are sequential), and the report adds `ranks`, `allreduce_calls` and
    /// `allreduce_values`.
    pub fn fit_certified_over(
        &self,
        local: &Dataset,
        warm: Option<&[f64]>,
        comm: &dyn Communicator,
    ) -> Result<(GuruFit, FitReport)> {
        let start = Instant::now();
        comm::agree(comm, self.check_ref().map(|_| ()))?;
        if comm.size() > 1 && self.solver != Solver::Batch {
            return Err(Error::Distributed {
                ranks: comm.size(),
                message: "GURU's sgd solver does not train over several ranks (its steps are sequential); use solver=batch".into(),
            });
        }
        let counted = Counted::new(comm);
        let (labels, total) = comm::binary_training_labels(local, &counted)?;
        let data = local;
        let obj = Objective::over(data, labels, self.robust_loss(), self.bias, &counted, total);
        let tol = self.effective_tolerance();
        let n = data.n_features();
        let Outcome {
            w,
            certificate,
            iterations,
            passes,
            mut converged,
            mut stopped,
            solver,
            count,
        } = match self.solver {
            Solver::Batch => batch::solve(&obj, tol, self.max_iter, warm),
            Solver::Sgd => sgd::solve(&obj, self.eta0, self.seed, tol, self.max_epochs),
        };
        if certificate.primal <= UNDERFLOW {
            // every term f(u) < 1e-300: the data are separated by a margin the noise cannot
            // reach, G underflows and a "gap" of 0/0 certifies nothing (any longer w is as good
            // in floating point)
            converged = false;
            stopped.get_or_insert_with(|| {
                format!(
                    "the objective underflows (G = {:.1e}): the data are separated with a margin sigma = {} cannot reach, so the optimum is not determined in floating point (a larger sigma is)",
                    certificate.primal, self.sigma
                )
            });
        }
        let mut details = std::collections::BTreeMap::new();
        details.insert(count.0.to_string(), count.1);
        let bias = if self.bias { w[n] } else { 0.0 };
        let model = LinearModel::try_new(w[..n].to_vec(), bias)?;
        let mut report = FitReport::new("guru", solver);
        report.objective = Some(certificate.primal);
        report.iterations = Some(iterations as usize);
        report.converged = converged;
        report.tolerance = Some(tol);
        report.reached = Some(certificate.relative_gap);
        details.insert("duality_gap".to_string(), certificate.relative_gap);
        details.insert("dual_objective".to_string(), certificate.dual);
        details.insert("dual_scale".to_string(), certificate.scale);
        details.insert(
            "dual_constraint_residual".to_string(),
            certificate.constraint_residual,
        );
        details.insert("data_passes".to_string(), passes as f64);
        details.insert("sigma".to_string(), self.sigma);
        details.insert("norm_w".to_string(), self.norm.of(&w));
        counted.record(&mut details);
        report.details = details;
        report.seconds = start.elapsed().as_secs_f64();
        Ok((
            GuruFit {
                model,
                certificate,
                iterations,
                passes,
                converged,
                stopped,
            },
            report,
        ))
    }
}

/// Fits (2.22) with the chosen solver; the report carries the objective, the relative duality
/// gap (`reached`, `details["duality_gap"]`), the dual value and the data passes.
impl Fit for GuruParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        let (fit, report) = self.fit_certified(data)?;
        Ok(Fitted {
            model: fit.model,
            report,
        })
    }
}
