//! RoLR (Feng, Xu, Mannor & Yan, NIPS 2014, Algorithm 1): remove the samples whose norm
//! exceeds a threshold, then maximise over the unit ball the sum of the `n` smallest signed
//! correlations `y_i⟨β, x_i⟩` (eq. (2)); the classifier is `sign(β̂ᵀx)`.
//!
//! The LP (3) as printed is degenerate (with `ν ≥ 0` its optimum is always `β = 0`); the
//! problem solved here is the corrected one (`ν` free, i.e. `Σ t_i = n`), in its min-norm form
//! (the crate's `minnorm` module). `n = m_total − n₁` is the number of inliers; when fewer than `n` samples
//! survive preprocessing the objective sums all `min(n, m)` of them (then nothing is trimmed and
//! `β̂ = Σ y x / ‖Σ y x‖`).
//!
//! **Breakdown.** The objective is concave and positively homogeneous, so either its maximum
//! is positive and `‖β̂‖ = 1`, or it is 0 and `β̂ = 0`: every unit vector has a negative trimmed
//! correlation. The fit then reports `breakdown = 1` and a zero model — never a silent zero.

use std::time::Instant;

use bulwark_core::{
    Dataset, DatasetView, Error, Fit, FitReport, FitView, Fitted, LinearModel, ParamGuard, Result,
    Sign,
};
use serde::{Deserialize, Serialize};

use crate::minnorm::{self, Settings, Status, sum_smallest};
use crate::threshold::{NormFilter, NormThreshold};

/// Hyper-parameters of RoLR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolrParams {
    outliers: usize,
    threshold: NormThreshold,
    tolerance: f64,
    breakdown_tolerance: f64,
    max_iter: usize,
}

impl Default for RolrParams {
    fn default() -> Self {
        Self {
            outliers: 0,
            threshold: NormThreshold::paper(),
            tolerance: 1e-10,
            breakdown_tolerance: 1e-9,
            max_iter: 20_000,
        }
    }
}

impl RolrParams {
    /// Defaults: no outliers, the paper's threshold with `σ_x` estimated, relative gap 1e-10,
    /// breakdown below 1e-9 of the largest possible value, 20 000 iterations.
    pub fn new() -> Self {
        Self::default()
    }
    /// The outlier bound `n₁` (the number of inliers is `n = samples − n₁`).
    pub fn outliers(mut self, n1: usize) -> Self {
        self.outliers = n1;
        self
    }
    /// The preprocessing threshold rule.
    pub fn threshold(mut self, t: NormThreshold) -> Self {
        self.threshold = t;
        self
    }
    /// The certified relative gap `(upper − lower)/upper` at which to stop, in `(0, 1)`.
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }
    /// Breakdown is declared when the optimal value is certified below this fraction of the
    /// largest value any unit vector could reach (the sum of the `n` largest `‖x_i‖`); in `(0, 1)`.
    pub fn breakdown_tolerance(mut self, t: f64) -> Self {
        self.breakdown_tolerance = t;
        self
    }
    /// The iteration limit of the solver.
    pub fn max_iter(mut self, k: usize) -> Self {
        self.max_iter = k;
        self
    }
    /// The preprocessing filter these parameters use (for LR+P: the same filter before
    /// another learner).
    pub fn filter(&self) -> NormFilter {
        NormFilter::new(self.threshold, self.outliers)
    }
}

impl ParamGuard for RolrParams {
    type Checked = RolrParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&RolrParams> {
        for (name, v) in [
            ("tolerance", self.tolerance),
            ("breakdown_tolerance", self.breakdown_tolerance),
        ] {
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::param(name, v, "a number in (0, 1)"));
            }
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        self.threshold.check()?;
        Ok(self)
    }
    fn check(self) -> Result<RolrParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// The RoLR objective `Σ_{i ≤ k} [y⟨β, x⟩]_(i)` (eq. (2)) on `rows`: the sum of the `k` smallest
/// signed correlations.
pub fn trimmed_correlation(rows: &DatasetView<'_>, beta: &[f64], k: usize) -> Result<f64> {
    let mut z = Vec::with_capacity(rows.len());
    for i in 0..rows.len() {
        z.push(rows.label(i)?.as_f64() * rows.row(i).dot(beta));
    }
    Ok(sum_smallest(&mut z, k.min(rows.len())))
}

impl FitView for RolrParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit_view(&self, data: &DatasetView<'_>) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        self.check_ref()?;
        let total = data.len();
        if total == 0 {
            return Err(Error::param("data", "empty", "at least one example"));
        }
        data.data().binary_labels()?;
        if data.n_features() == 0 {
            return Err(Error::param("data", "0 features", "at least one feature"));
        }
        data.data().check_finite()?;
        if data.is_weighted() {
            return Err(Error::param(
                "example weights",
                "given",
                "none: RoLR counts samples (use unweighted data)",
            ));
        }
        let (filtered, threshold) = self.filter().filter_with_threshold(data)?;
        let kept = &filtered.kept;
        let (m, p) = (kept.len(), kept.n_features());
        let n_inliers = total - self.outliers;
        let k = n_inliers.min(m);
        // A: rows y_i x_i of the kept samples (dense, row-major)
        let mut a = vec![0.0; m * p];
        for (i, row) in a.chunks_exact_mut(p).enumerate() {
            kept.row(i).to_dense_into(row);
            if kept.label(i)? == Sign::Neg {
                row.iter_mut().for_each(|v| *v = -*v);
            }
        }
        let sol = minnorm::solve(
            &a,
            m,
            p,
            k,
            Settings {
                tolerance: self.tolerance,
                breakdown_tolerance: self.breakdown_tolerance,
                max_iter: self.max_iter,
            },
        );
        let breakdown = sol.status == Status::Breakdown;
        let objective = trimmed_correlation(kept, &sol.beta, k)?;
        let model = LinearModel::try_new(sol.beta.clone(), 0.0)?;
        let solver = if sol.closed_form {
            "closed-form"
        } else {
            "minnorm-fista"
        };
        let mut report = FitReport::new("rolr", solver);
        report.objective = Some(objective);
        report.iterations = Some(sol.iterations);
        report.converged = sol.status != Status::IterationLimit;
        report.tolerance = Some(self.tolerance);
        let gap = if sol.upper > 0.0 {
            ((sol.upper - sol.lower.max(0.0)) / sol.upper).max(0.0)
        } else {
            0.0
        };
        report.reached = Some(gap);
        let d = &mut report.details;
        d.insert("breakdown".into(), f64::from(u8::from(breakdown)));
        d.insert("removed".into(), filtered.removed.len() as f64);
        d.insert("trimmed_sum_of".into(), k as f64);
        d.insert("upper_bound".into(), sol.upper);
        d.insert("lower_bound".into(), sol.lower);
        d.insert("relative_gap".into(), gap);
        d.insert("active_set_steps".into(), sol.active_set_steps as f64);
        d.insert("threshold".into(), threshold.unwrap_or(f64::INFINITY));
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted { model, report })
    }
}

impl Fit for RolrParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.fit_view(&data.view())
    }
}
