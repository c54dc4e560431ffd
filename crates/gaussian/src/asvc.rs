//! ASVC, Ginodi Appendix A: the SVM under a worst-case displacement of every training point
//! within a ball of radius `δ`, whose hinge becomes the ball loss (A.5)
//!
//! ```text
//! min_{w,b} ½‖w‖² + C Σ_m [1 − y_m(wᵀx_m + b) + δ‖w‖]₊
//! ```
//!
//! solved by rounds of the thesis's alternating Algorithm 5, damped so that they converge. For a
//! unit direction `u`, the SVM on the points moved to `x_m − δ y_m u` (the worst displacement when
//! `u = ŵ`: Thm 2.1/A and Algorithm 5 miss the `y`, restored as in TSVC, Bi & Zhang 2004) has
//! objective `S_u(w) ≤ J(w)` (it has `δ uᵀw ≤ δ‖w‖` in the hinge), so its optimal value `L(u)` is
//! a lower bound on `min J`, with equality at `u = ŵ*` (the subgradients of `S_{ŵ*}` and `J`
//! agree at `w*`). Algorithm 5 sets `u ← ŵ(u)`, the direction of the moved-point SVM's
//! solution; that cycles on plain data (`docs/design/gaussian.md`). Since `∇_u L = δ(Σα) w(u)`
//! (Danskin, `α` the SVM's dual variables), a step from `u` towards `ŵ(u)` on the sphere raises
//! `L` when short enough: each round tries the step `θ` (1 at first, Algorithm 5's round), keeps it
//! when the SVM's certified dual value rises, else halves `θ`; a stationary point has
//! `u ∥ w(u)` and is the global minimiser.
//!
//! **Certificate.** Every round's SVM dual value is a lower bound on `min J`; the rounds stop
//! when the best ball objective met and the best lower bound agree to the tolerance (relative).

use std::time::Instant;

use bulwark_core::{
    Dataset, DenseMatrix, Error, Fit, FitReport, Fitted, LinearModel, ParamGuard, Result,
};
use bulwark_online::SvmParams;
use serde::{Deserialize, Serialize};

/// Hyper-parameters of ASVC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AsvcParams {
    delta: f64,
    c: f64,
    tolerance: f64,
    max_rounds: usize,
}

impl Default for AsvcParams {
    fn default() -> Self {
        Self {
            delta: 0.1,
            c: 1.0,
            tolerance: 1e-4,
            max_rounds: 50,
        }
    }
}

impl AsvcParams {
    /// Defaults: `δ = 0.1`, `C = 1`, relative gap `1e-4`, at most 50 rounds.
    pub fn new() -> Self {
        Self::default()
    }
    /// The ball radius `δ ≥ 0` (0 is the SVM).
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = delta;
        self
    }
    /// The loss weight `C > 0`.
    pub fn c(mut self, c: f64) -> Self {
        self.c = c;
        self
    }
    /// The relative gap between the best ball objective and the best lower bound, in `(0, 1)`;
    /// each round's SVM is solved to a tenth of it.
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }
    /// The limit on alternating rounds.
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds;
        self
    }
}

impl ParamGuard for AsvcParams {
    type Checked = AsvcParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&AsvcParams> {
        bulwark_core::error::check_nonnegative("delta", self.delta)?;
        bulwark_core::error::check_positive("C", self.c)?;
        if !(self.tolerance.is_finite() && self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(Error::param(
                "tolerance",
                self.tolerance,
                "a number in (0, 1)",
            ));
        }
        if self.max_rounds == 0 {
            return Err(Error::param("max_rounds", 0, "at least 1"));
        }
        Ok(self)
    }
    fn check(self) -> Result<AsvcParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// The ball objective (A.5) `½‖w‖² + C Σ [1 − y(wᵀx + b) + δ‖w‖]₊`.
pub fn ball_objective(model: &LinearModel, data: &Dataset, delta: f64, c: f64) -> Result<f64> {
    let y = data.binary_labels()?;
    let w = model.weights();
    let wn = w.iter().map(|v| v * v).sum::<f64>().sqrt();
    let loss: f64 = (0..data.len())
        .map(|i| {
            let s = data.row(i).dot(w) + model.bias();
            (1.0 - y[i].as_f64() * s + delta * wn).max(0.0)
        })
        .sum();
    Ok(0.5 * wn * wn + c * loss)
}

/// Fits by alternating rounds; the report gives the ball objective, the certified relative gap
/// (`reached`), `rounds` and the SVM passes summed over rounds.
impl Fit for AsvcParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        self.check_ref()?;
        let y = data.binary_training_labels()?;
        data.reject_weights("asvc")?;
        let (m, n) = (data.len(), data.n_features());
        let svm = SvmParams::new().c(self.c).tolerance(self.tolerance / 10.0);
        // the SVM on the points moved by −δ y_m u (u = None: not moved); its dual value is
        // L(u) ≤ min J
        let solve = |u: Option<&[f64]>| -> Result<Fitted<LinearModel>> {
            let mut moved = DenseMatrix::zeros(m, n);
            for i in 0..m {
                let r = moved.row_mut(i);
                data.row(i).to_dense_into(r);
                if let Some(d) = u {
                    let s = -self.delta * y[i].as_f64();
                    for (v, dj) in r.iter_mut().zip(d) {
                        *v += s * dj;
                    }
                }
            }
            svm.fit(&data.with_features(moved.into())?)
        };
        let unit = |w: &[f64]| -> Option<Vec<f64>> {
            let wn = w.iter().map(|v| v * v).sum::<f64>().sqrt();
            (wn > 0.0).then(|| w.iter().map(|v| v / wn).collect())
        };
        let mut best: Option<(LinearModel, f64)> = None;
        let mut lower = f64::NEG_INFINITY;
        let (mut rounds, mut passes, mut svm_unconverged) = (0usize, 0usize, 0usize);
        let mut record = |fit: &Fitted<LinearModel>,
                          best: &mut Option<(LinearModel, f64)>,
                          lower: &mut f64|
         -> Result<f64> {
            passes += fit.report.iterations.unwrap_or(0);
            svm_unconverged += usize::from(!fit.report.converged);
            let l = fit.report.details["dual_objective"];
            *lower = lower.max(l);
            let value = ball_objective(&fit.model, data, self.delta, self.c)?;
            if best.as_ref().is_none_or(|(_, v)| value < *v) {
                *best = Some((fit.model.clone(), value));
            }
            Ok(l)
        };
        // round 1: the SVM on the points as given (Algorithm 5 starts at w = 0)
        let mut fit = solve(None)?;
        rounds += 1;
        let mut l_u = record(&fit, &mut best, &mut lower)?;
        let mut u: Option<Vec<f64>> = None;
        let mut theta = 1.0_f64;
        let gap_of = |best: &Option<(LinearModel, f64)>, lower: f64| -> f64 {
            let best_value = best.as_ref().map_or(f64::INFINITY, |b| b.1);
            ((best_value - lower) / best_value.abs().max(1e-300)).max(0.0)
        };
        loop {
            if gap_of(&best, lower) <= self.tolerance
                || self.delta == 0.0
                || rounds >= self.max_rounds
            {
                break;
            }
            let Some(w_hat) = unit(fit.model.weights()) else {
                // w(u) = 0: the displacement does not change the SVM's answer
                break;
            };
            // a step of length θ from u towards ŵ(u) on the sphere: θ = 1 is Algorithm 5's
            // round (y restored); ∇_u L = δ(Σα) w(u), so small steps raise L
            let candidate = match &u {
                None => w_hat,
                Some(u) => {
                    let mix: Vec<f64> = u
                        .iter()
                        .zip(&w_hat)
                        .map(|(a, b)| (1.0 - theta) * a + theta * b)
                        .collect();
                    match unit(&mix) {
                        Some(c) => c,
                        None => w_hat,
                    }
                }
            };
            let trial = solve(Some(&candidate))?;
            rounds += 1;
            let l = record(&trial, &mut best, &mut lower)?;
            if l > l_u {
                l_u = l;
                u = Some(candidate);
                fit = trial;
                theta = (2.0 * theta).min(1.0);
            } else {
                theta *= 0.5;
                if theta < 1e-8 {
                    // no step raises the lower bound: report the gap reached
                    break;
                }
            }
        }
        let gap = gap_of(&best, lower);
        let (model, value) = best.expect("at least one round");
        let converged = gap <= self.tolerance && svm_unconverged == 0;
        let mut report = FitReport::new("asvc", "damped-alternating dual-cd");
        report.objective = Some(value);
        report.iterations = Some(rounds);
        report.converged = converged;
        report.tolerance = Some(self.tolerance);
        report.reached = Some(gap);
        report.details.insert("rounds".into(), rounds as f64);
        report.details.insert("lower_bound".into(), lower);
        report.details.insert("svm_passes".into(), passes as f64);
        report
            .details
            .insert("svm_not_converged".into(), svm_unconverged as f64);
        report.details.insert("delta".into(), self.delta);
        report.details.insert("C".into(), self.c);
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted { model, report })
    }
}
