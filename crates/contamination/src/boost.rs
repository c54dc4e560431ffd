//! SmoothBoost (Servedio 2003) over an averaging weak learner: A_mlc (Klivans, Long & Servedio
//! 2009, Theorem 2: outlier removal, then averaging) and its label-noise form (Theorem 3: plain
//! averaging).
//!
//! The booster is the sample form of the KLS notes ("Smooth boosting"): on the training sample
//! `S` of size `m`,
//!
//! ```text
//! θ = γ/(2+γ);  M₁(j) = 1;  N₀(j) = 0
//! while (1/m) Σ M_t(j) ≥ κ:
//!     D_t(j) = M_t(j) / Σ M_t                    D_t(j) ≤ 1/(κm): 1/κ-smooth (checked)
//!     h_t = WL(D_t)                              advantage Σ D_t(j) y_j h_t(x_j) ≥ γ required
//!     N_t(j) = N_{t−1}(j) + y_j h_t(x_j) − θ
//!     M_{t+1}(j) = 1 if N_t(j) < 0, else (1−γ)^{N_t(j)/2}
//! H(x) = sign(Σ_t h_t(x))                        fewer than 2/(κγ²√(1−γ)) rounds (Servedio)
//! ```
//!
//! A weak hypothesis below the advantage `γ` ends the run (the theory's assumption failed; the
//! fit says so); so does the round bound, which the theory says is never reached.
//!
//! The weak learner A_mlcw (KLS §3.2) on a distribution `D` over `S`: drop points with
//! `‖x‖ > √(3 n ln m)`; while the top eigenvalue of `Σ D(j) x xᵀ` exceeds `c₀ ln(n/ε)`, drop the
//! points with `(w·x)² > c₀ ln(n/ε)` (`c₀` is unspecified in the paper; `ε = κ`); then
//! `v = Σ D(j) y x / Σ D(j)` over the survivors and `h(x) = clip(v·x / Z, −1, 1)`. The paper's
//! scale `Z = 3 n ln m` makes `h` so small that γ, and with it the round bound `∝ 1/γ²`, is
//! impractical at any size (`n = 20`, `ε = 0.1`: about 10⁹ rounds), so the default scale is the
//! 0.9-quantile of `|v·x|` over the sample; `Z = 3 n ln m` is [`OutputScale::Paper`].

use std::time::Instant;

use bulwark_core::{
    Dataset, DatasetView, Ensemble, Error, Fit, FitReport, FitView, Fitted, LinearModel, Result,
};

use crate::amu::{check_input, dense_rows};
use crate::spectral::{Gram, Lanczos, dot};

/// The weak learner boosted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeakLearner {
    /// Plain (weighted) averaging: KLS Theorem 3, adversarial label noise.
    Average,
    /// A_mlcw (KLS Theorem 2): norm filter `‖x‖ ≤ √(3 n ln m)`, variance test with constant
    /// `c₀` against `c₀ ln(n/ε)`, then averaging.
    OutlierRemoval {
        /// `c₀` (not given by the paper).
        c0: f64,
    },
}

/// The scale `Z` of the weak hypothesis `clip(v·x / Z, −1, 1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputScale {
    /// `3 n ln m` (KLS A_mlcw step 4): correct, and impractically small hypotheses.
    Paper,
    /// The given quantile (in `(0, 1]`) of `|v·x|` over the sample points the weak learner kept.
    Quantile(f64),
}

/// Why a SmoothBoost run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoostStop {
    /// `(1/m) Σ M(j) < κ`: Servedio's termination; `H` has margin `≥ θ` on all but `κm`
    /// sample points.
    Mass,
    /// A weak hypothesis had advantage below `γ`; the rounds before it are the hypothesis.
    WeakLearner,
    /// The round limit (Servedio's bound, or a smaller one given).
    RoundLimit,
}

impl BoostStop {
    /// A short name (`mass`, `weak-learner`, `round-limit`).
    pub fn as_str(self) -> &'static str {
        match self {
            BoostStop::Mass => "mass",
            BoostStop::WeakLearner => "weak-learner",
            BoostStop::RoundLimit => "round-limit",
        }
    }
}

/// One boosting round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoostRound {
    /// `(1/m) Σ M_t(j)` at the start of the round.
    pub mass: f64,
    /// `max_j D_t(j) · κ m`: at most 1 (the distribution is `1/κ`-smooth).
    pub smoothness: f64,
    /// `Σ D_t(j) y_j h_t(x_j)`.
    pub advantage: f64,
    /// Sample points the weak learner left out (norm filter and variance tests).
    pub removed: usize,
    /// `Z`.
    pub scale: f64,
}

/// A SmoothBoost run.
#[derive(Debug, Clone, PartialEq)]
pub struct BoostFit {
    /// `H = sign(Σ_t clip(h_t))`, the weak hypotheses with vote weight 1 each.
    pub ensemble: Ensemble<LinearModel>,
    /// Every round (including a last one whose hypothesis fell below γ and was not kept).
    pub rounds: Vec<BoostRound>,
    /// Why it ended.
    pub stop: BoostStop,
    /// Servedio's bound `2/(κγ²√(1−γ))` on the number of rounds.
    pub bound: f64,
    /// Sample points some weak learner left out at least once.
    pub removed: usize,
}

/// SmoothBoost's settings: `SmoothBoostParams::new().kappa(0.1).gamma(0.1).fit(&data)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmoothBoostParams {
    kappa: f64,
    gamma: f64,
    weak: WeakLearner,
    scale: OutputScale,
    max_rounds: Option<usize>,
}

impl Default for SmoothBoostParams {
    fn default() -> Self {
        Self {
            kappa: 0.1,
            gamma: 0.1,
            weak: WeakLearner::OutlierRemoval { c0: 1.0 },
            scale: OutputScale::Quantile(0.9),
            max_rounds: None,
        }
    }
}

impl SmoothBoostParams {
    /// A_mlc with `κ = ε = 0.1`, `γ = 0.1`, `c₀ = 1` and the 0.9-quantile output scale.
    pub fn new() -> Self {
        Self::default()
    }
    /// `κ = ε ∈ (0, 1)`: the booster stops when the weight mass falls below it; every
    /// distribution is `1/κ`-smooth.
    pub fn kappa(mut self, kappa: f64) -> Self {
        self.kappa = kappa;
        self
    }
    /// `γ ∈ (0, 1/2)`: the advantage required of every weak hypothesis.
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.gamma = gamma;
        self
    }
    /// The weak learner.
    pub fn weak(mut self, weak: WeakLearner) -> Self {
        self.weak = weak;
        self
    }
    /// The weak hypotheses' scale `Z`.
    pub fn scale(mut self, scale: OutputScale) -> Self {
        self.scale = scale;
        self
    }
    /// At most this many rounds (default: Servedio's bound).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = Some(rounds);
        self
    }

    fn check(&self) -> Result<()> {
        if !(self.kappa > 0.0 && self.kappa < 1.0) {
            return Err(Error::param("kappa", self.kappa, "a number in (0, 1)"));
        }
        if !(self.gamma > 0.0 && self.gamma < 0.5) {
            return Err(Error::param("gamma", self.gamma, "a number in (0, 1/2)"));
        }
        if let WeakLearner::OutlierRemoval { c0 } = self.weak
            && !(c0.is_finite() && c0 > 0.0)
        {
            return Err(Error::param("c0", c0, "a finite number > 0"));
        }
        if let OutputScale::Quantile(q) = self.scale
            && !(q > 0.0 && q <= 1.0)
        {
            return Err(Error::param("output_scale", q, "a quantile in (0, 1]"));
        }
        if self.max_rounds == Some(0) {
            return Err(Error::param("max_rounds", 0, "at least 1"));
        }
        Ok(())
    }

    /// Servedio's bound `2/(κγ²√(1−γ))` on the number of rounds.
    pub fn round_bound(&self) -> f64 {
        2.0 / (self.kappa * self.gamma * self.gamma * (1.0 - self.gamma).sqrt())
    }

    /// Runs SmoothBoost on `data` (binary labels, no example weights, `m ≥ 2`, `n ≥ 2`).
    pub fn run(&self, data: &DatasetView<'_>) -> Result<BoostFit> {
        self.check()?;
        let (m, n) = (data.len(), data.n_features());
        check_input(data, "SmoothBoost sets its own")?;
        let x = dense_rows(data);
        let x: &[f64] = &x;
        let row = |i: usize| &x[i * n..(i + 1) * n];
        let y: Vec<f64> = (0..m)
            .map(|i| data.label(i).map(|s| s.as_f64()))
            .collect::<Result<_>>()?;
        let (mf, nf) = (m as f64, n as f64);
        let (kappa, gamma) = (self.kappa, self.gamma);
        let theta = gamma / (2.0 + gamma);
        let bound = self.round_bound();
        let limit = self
            .max_rounds
            .unwrap_or(usize::MAX)
            .min(bound.ceil() as usize);
        // A_mlcw step 2: the norm filter does not depend on the distribution
        let in_norm: Vec<bool> = match self.weak {
            WeakLearner::Average => vec![true; m],
            WeakLearner::OutlierRemoval { .. } => {
                let cap = 3.0 * nf * mf.ln(); // ‖x‖² ≤ 3 n ln m
                (0..m).map(|i| dot(row(i), row(i)) <= cap).collect()
            }
        };
        let mut big_m = vec![1.0; m];
        let mut big_n = vec![0.0; m];
        let mut d = vec![0.0; m];
        let mut c = vec![0.0; m];
        let mut keep = vec![false; m];
        let mut margin = vec![0.0; m];
        let mut absx = Vec::with_capacity(m);
        let mut left_out = vec![false; m];
        let mut w = vec![0.0; n];
        let mut v = vec![0.0; n];
        let mut lanczos = Lanczos::new(n);
        let mut gram = Gram::zeros(n);
        let mut rows_kept: Vec<usize> = Vec::with_capacity(m);
        let mut gone: Vec<usize> = Vec::with_capacity(m);
        let mut members = Vec::new();
        let mut rounds = Vec::new();
        let stop = loop {
            let total: f64 = big_m.iter().sum();
            let mass = total / mf;
            if mass < kappa {
                break BoostStop::Mass;
            }
            if rounds.len() >= limit {
                break BoostStop::RoundLimit;
            }
            d.iter_mut().zip(&big_m).for_each(|(d, m)| *d = m / total);
            let dmax = d.iter().fold(0.0f64, |a, &b| a.max(b));
            let smoothness = dmax * kappa * mf;
            if smoothness > 1.0 + 1e-9 {
                return Err(Error::param(
                    "smoothboost",
                    format!("a distribution with max D(j) = {smoothness} / (kappa m)"),
                    "a 1/kappa-smooth distribution (internal invariant)",
                ));
            }
            // the weak learner on D_t
            keep.copy_from_slice(&in_norm);
            c.iter_mut()
                .zip(&d)
                .zip(&keep)
                .for_each(|((c, d), &k)| *c = if k { *d } else { 0.0 });
            if let WeakLearner::OutlierRemoval { c0 } = self.weak {
                let cut = c0 * (nf / kappa).ln(); // KLS A_mlcw step 3 (ε = κ)
                rows_kept.clear();
                rows_kept.extend((0..m).filter(|&i| keep[i]));
                gram.clear();
                gram.add(x, &rows_kept, Some(&d), 1.0);
                loop {
                    let top = lanczos.top(&gram, 1e-8, 20_000, &mut w)?;
                    if top.value <= cut {
                        break;
                    }
                    gone.clear();
                    for &i in &rows_kept {
                        if keep[i] {
                            let p = dot(row(i), &w);
                            if p * p > cut {
                                keep[i] = false;
                                c[i] = 0.0;
                                gone.push(i);
                            }
                        }
                    }
                    if gone.is_empty() {
                        break; // rounding between the Rayleigh quotient and the projections
                    }
                    gram.add(x, &gone, Some(&d), -1.0);
                }
            }
            let kept: f64 = c.iter().sum();
            if kept <= 0.0 {
                return Err(Error::param(
                    "data",
                    "every sample point left out by the weak learner",
                    "points inside the norm filter (a larger c0)",
                ));
            }
            v.fill(0.0);
            for i in 0..m {
                if c[i] > 0.0 {
                    let a = c[i] * y[i];
                    v.iter_mut().zip(row(i)).for_each(|(s, b)| *s += a * b);
                }
            }
            v.iter_mut().for_each(|a| *a /= kept);
            let mut removed = 0;
            absx.clear();
            for i in 0..m {
                let s = dot(row(i), &v);
                margin[i] = s;
                if keep[i] {
                    absx.push(s.abs());
                } else {
                    removed += 1;
                    left_out[i] = true;
                }
            }
            let z = match self.scale {
                OutputScale::Paper => 3.0 * nf * mf.ln(),
                OutputScale::Quantile(q) => quantile(&mut absx, q),
            };
            let z = if z > 0.0 && z.is_finite() { z } else { 1.0 };
            let mut advantage = 0.0;
            for i in 0..m {
                margin[i] = y[i] * (margin[i] / z).clamp(-1.0, 1.0);
                advantage += d[i] * margin[i];
            }
            rounds.push(BoostRound {
                mass,
                smoothness,
                advantage,
                removed,
                scale: z,
            });
            if advantage < gamma {
                break BoostStop::WeakLearner;
            }
            let h = LinearModel::try_new(v.iter().map(|a| a / z).collect(), 0.0)?;
            members.push(h);
            for i in 0..m {
                big_n[i] += margin[i] - theta;
                big_m[i] = if big_n[i] < 0.0 {
                    1.0
                } else {
                    (1.0 - gamma).powf(big_n[i] / 2.0)
                };
            }
        };
        if members.is_empty() {
            return Err(Error::param(
                "gamma",
                gamma,
                format!(
                    "at most the first weak hypothesis's advantage, {:.4} (no round reached gamma)",
                    rounds.first().map_or(0.0, |r| r.advantage)
                ),
            ));
        }
        let k = members.len();
        Ok(BoostFit {
            ensemble: Ensemble::try_new(members, vec![1.0; k])?,
            rounds,
            stop,
            bound,
            removed: left_out.iter().filter(|&&b| b).count(),
        })
    }
}

/// The `q`-quantile of `a` (the element of rank `⌈q·len⌉`), reordering `a`.
fn quantile(a: &mut [f64], q: f64) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    let k = ((q * a.len() as f64).ceil() as usize).clamp(1, a.len()) - 1;
    *a.select_nth_unstable_by(k, f64::total_cmp).1
}

impl FitView for SmoothBoostParams {
    type Model = Ensemble<LinearModel>;
    type Error = Error;
    fn fit_view(&self, data: &DatasetView<'_>) -> Result<Fitted<Ensemble<LinearModel>>> {
        let start = Instant::now();
        let fit = self.run(data)?;
        let mut report = FitReport::new("kls-boost", "smoothboost");
        report.converged = fit.stop == BoostStop::Mass;
        report.iterations = Some(fit.ensemble.members().len());
        let d = &mut report.details;
        d.insert("rounds".into(), fit.ensemble.members().len() as f64);
        d.insert("round_bound".into(), fit.bound);
        d.insert("removed".into(), fit.removed as f64);
        d.insert(
            "stopped_by_weak_learner".into(),
            f64::from(u8::from(fit.stop == BoostStop::WeakLearner)),
        );
        d.insert(
            "stopped_by_round_limit".into(),
            f64::from(u8::from(fit.stop == BoostStop::RoundLimit)),
        );
        d.insert(
            "final_mass".into(),
            fit.rounds.last().map_or(1.0, |r| r.mass),
        );
        d.insert(
            "min_advantage".into(),
            fit.rounds
                .iter()
                .map(|r| r.advantage)
                .fold(f64::INFINITY, f64::min),
        );
        d.insert(
            "max_smoothness".into(),
            fit.rounds.iter().map(|r| r.smoothness).fold(0.0, f64::max),
        );
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted {
            model: fit.ensemble,
            report,
        })
    }
}

impl Fit for SmoothBoostParams {
    type Model = Ensemble<LinearModel>;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<Ensemble<LinearModel>>> {
        self.fit_view(&data.view())
    }
}
