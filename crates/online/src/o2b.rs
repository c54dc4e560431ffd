//! The cube-projected Perceptron of DSX §3.1 trained against the worst-case deletion, with the
//! online-to-batch averaging of §3.2 ("O2B").
//!
//! Decisions (see the DSX notes, A7, A8, Theorem 4, "What an implementation must decide", Errata
//! 1 and 12):
//!
//! - **Loss and update.** Round `t` suffers the LP-(4) per-example loss
//!   `ξ(w_t, b_t; x_t, y_t)` computed by core's closed form
//!   ([`FeatureBudget::worst_case_deletion`], the fractional knapsack of notes A3). When it is
//!   positive, the update is the projected subgradient step on that loss:
//!   `w ← Π(w + τ y (κ∘x))`, `b ← Π(b + τ y)` with keep-weights `κ_j = 1 − σ_j` from
//!   [`DeletionScratch::deleted`] and `Π` the clip to `[−C, C]`. With `v ∈ {0,1}ⁿ` and integer `N`
//!   every `σ_j ∈ {0, 1}`, so this is exactly the update "on the kept features `J_i`" of A7 and the
//!   loss is exactly (29); for general values it is the fractional relaxation, for which
//!   Theorem 4 holds unchanged (`‖κ∘x‖₂ ≤ ‖x‖₁`). Features deleted in full are not touched.
//! - **Step.** `τ = C·√((n+1)/(2T))` with `T` the number of rounds (Erratum 1: the printed
//!   `C√(n+1/2m)` lost its grouping); [`O2bParams::step`] overrides it.
//! - **Bias.** Clipped to `|b| ≤ C` like the weights (the cube `[−C, C]^{n+1}` of Theorem 4).
//! - **Averaging.** The returned model averages the hypotheses *used* in rounds `1..T`,
//!   `w_1 = 0, …, w_T` (Erratum 12), kept in `O(n)` memory through the identity
//!   `Σ_{t≤T} w_t = T·w_{T+1} − Σ_s s·Δ_s` (`Δ_s` the update of round `s`), so a round costs
//!   `O(nnz(x))` (plus an expected-linear selection for the deletion) and the state never grows.
//! - **Worst case.** The loss and deletion are core's closed form, which selects the deleted
//!   features without sorting (expected `O(k)` for `k` candidate features) and allocates
//!   nothing once its [`DeletionScratch`] is warm.
//! - **Epochs.** One pass in the data order is the setting of the theory. Several epochs
//!   (optionally reshuffled with a seed) are offered as a practical option *beyond the
//!   theory*: the stream is then the concatenation of the passes, `T = epochs·m`, and Theorem 4
//!   still bounds the regret of that stream, but the online-to-batch guarantee (i.i.d. rounds)
//!   no longer applies.
//! - **Scaling.** Theorem 4 assumes `‖x_i‖₁ ≤ 1`; the data are used as given, and the report
//!   carries `max_l1_norm` so callers can tell whether the bound applies.

use std::time::Instant;

use bulwark_core::{
    Dataset, DeletionScratch, Error, FeatureBudget, Fit, FitReport, FitWith, Fitted, LinearModel,
    ParamGuard, Result, RowView, Sign, rng_from_seed,
};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::common::{binary_training_labels, check_at_least_one, check_c};
use bulwark_core::FeatureValues;

/// `[t]_{±C}` as two selects (vectorises; inputs are finite).
#[inline(always)]
fn clip(t: f64, c: f64) -> f64 {
    let t = if t > c { c } else { t };
    if t < -c { -c } else { t }
}

/// The Theorem-4 step `τ = C·√((n+1)/(2T))` for `n` features and `T` rounds.
pub fn theorem4_step(c: f64, n_features: usize, rounds: usize) -> f64 {
    c * ((n_features as f64 + 1.0) / (2.0 * rounds.max(1) as f64)).sqrt()
}

/// Theorem 4's regret bound `C·√(2(n+1)/T)` (valid when every `‖x_i‖₁ ≤ 1` and the step is
/// [`theorem4_step`] for the same `T`).
pub fn theorem4_bound(c: f64, n_features: usize, rounds: usize) -> f64 {
    c * (2.0 * (n_features as f64 + 1.0) / rounds.max(1) as f64).sqrt()
}

/// The streaming state of the cube-projected Perceptron: feed examples one at a time with
/// [`O2bOnline::observe`]; [`O2bOnline::averaged`] is the online-to-batch hypothesis. Memory is
/// `O(n)` whatever the stream length.
#[derive(Debug, Clone)]
pub struct O2bOnline {
    budget: FeatureBudget,
    c: f64,
    step: f64,
    w: Vec<f64>,
    b: f64,
    /// `Σ_s s·Δ_s` over the updates `Δ_s = w_{s+1} − w_s`: `Σ_{t≤T} w_t = T·w_{T+1} − u`.
    u: Vec<f64>,
    u_b: f64,
    rounds: u64,
    updates: u64,
    cumulative_loss: f64,
    keep: Vec<f64>,
    scratch: DeletionScratch,
}

impl O2bOnline {
    /// A learner starting at `w = 0, b = 0` with box radius `c` and constant step `step`.
    pub fn new(budget: FeatureBudget, c: f64, step: f64) -> Result<Self> {
        check_c(c)?;
        bulwark_core::error::check_positive("step", step)?;
        let n = budget.n_features();
        Ok(Self {
            c,
            step,
            w: vec![0.0; n],
            b: 0.0,
            u: vec![0.0; n],
            u_b: 0.0,
            rounds: 0,
            updates: 0,
            cumulative_loss: 0.0,
            keep: vec![1.0; n],
            scratch: DeletionScratch::with_capacity(n),
            budget,
        })
    }
    /// A learner whose step is the Theorem-4 step for a stream of `horizon` rounds.
    pub fn with_horizon(budget: FeatureBudget, c: f64, horizon: usize) -> Result<Self> {
        check_at_least_one("horizon", horizon)?;
        let step = theorem4_step(c, budget.n_features(), horizon);
        Self::new(budget, c, step)
    }
    /// Starts from `start` projected onto the cube instead of from 0 (warm start).
    pub fn starting_at(mut self, start: &LinearModel) -> Result<Self> {
        if start.weights().len() != self.w.len() {
            return Err(Error::shape(
                "starting model weights vs budget features",
                self.w.len(),
                start.weights().len(),
            ));
        }
        let c = self.c;
        for (w, s) in self.w.iter_mut().zip(start.weights()) {
            *w = s.clamp(-c, c);
        }
        self.b = start.bias().clamp(-c, c);
        Ok(self)
    }

    /// One round: suffers the loss of the current hypothesis on `(x, y)` (returned), then updates.
    /// Fails (without changing the state) on a row of the wrong dimension or a non-finite value.
    pub fn observe(&mut self, x: RowView<'_>, y: Sign) -> Result<f64> {
        let n = self.w.len();
        match x {
            RowView::Dense(v) if v.len() != n => {
                return Err(Error::shape("example length vs features", n, v.len()));
            }
            RowView::Sparse { indices, values } => {
                if indices.len() != values.len() {
                    return Err(Error::shape(
                        "sparse example values vs indices",
                        indices.len(),
                        values.len(),
                    ));
                }
                if let Some(&j) = indices.iter().find(|&&j| j >= n) {
                    return Err(Error::shape("sparse example index vs features", n, j + 1));
                }
            }
            RowView::Dense(_) => {}
        }
        // A non-finite entry makes the loss value non-finite (NaN/∞ reach the margin through
        // w_j·x_j, and 0·∞ = NaN), so the row is scanned only when the value is not finite.
        let value = self.worst_case_value(x, y);
        if !value.is_finite() {
            return Err(match x.nonzeros().find(|(_, v)| !v.is_finite()) {
                Some((j, v)) => Error::NonFinite {
                    location: bulwark_core::Location::source("o2b stream")
                        .line(self.rounds as usize + 1)
                        .column(j + 1),
                    value: v.to_string(),
                },
                None => Error::Numerical {
                    algorithm: "o2b".into(),
                    message: format!("loss overflowed to {value} on a finite example"),
                },
            });
        }
        Ok(self.apply(x, y, value))
    }

    #[inline]
    pub(crate) fn observe_unchecked(&mut self, x: RowView<'_>, y: Sign) -> f64 {
        let value = self.worst_case_value(x, y);
        self.apply(x, y, value)
    }

    /// The value inside the hinge at the current hypothesis; `self.scratch` receives the deletion.
    #[inline]
    fn worst_case_value(&mut self, x: RowView<'_>, y: Sign) -> f64 {
        self.budget
            .worst_case_deletion(&self.w, self.b, x, y, &mut self.scratch)
            .value
    }

    /// Completes a round whose loss value was just computed by `worst_case_value`.
    #[inline]
    fn apply(&mut self, x: RowView<'_>, y: Sign, value: f64) -> f64 {
        let loss = value.max(0.0);
        self.rounds += 1;
        self.cumulative_loss += loss;
        if loss > 0.0 {
            self.update(x, y.as_f64() * self.step);
        }
        loss
    }

    fn update(&mut self, x: RowView<'_>, a: f64) {
        self.updates += 1;
        let round = self.rounds as f64;
        let c = self.c;
        for &(j, s) in self.scratch.deleted() {
            self.keep[j] = 1.0 - s;
        }
        let (w, u, keep) = (&mut self.w, &mut self.u, &self.keep);
        match x {
            RowView::Dense(v) => {
                for (((wj, uj), &kj), &xj) in w.iter_mut().zip(u.iter_mut()).zip(keep).zip(v) {
                    let new = clip(*wj + a * kj * xj, c);
                    *uj += round * (new - *wj);
                    *wj = new;
                }
            }
            RowView::Sparse { indices, values } => {
                for (&j, &xj) in indices.iter().zip(values) {
                    let new = clip(w[j] + a * keep[j] * xj, c);
                    u[j] += round * (new - w[j]);
                    w[j] = new;
                }
            }
        }
        for &(j, _) in self.scratch.deleted() {
            self.keep[j] = 1.0;
        }
        let new_b = (self.b + a).clamp(-c, c);
        self.u_b += round * (new_b - self.b);
        self.b = new_b;
    }

    /// The online-to-batch hypothesis: the average of the hypotheses used in rounds `1..T`
    /// (the current hypothesis before any round).
    pub fn averaged(&self) -> LinearModel {
        if self.rounds == 0 {
            return self.current();
        }
        let t = self.rounds as f64;
        let weights = self
            .w
            .iter()
            .zip(&self.u)
            .map(|(&w, &u)| (w - u / t).clamp(-self.c, self.c))
            .collect();
        LinearModel::try_new(weights, (self.b - self.u_b / t).clamp(-self.c, self.c))
            .expect("iterates are clamped to the box [-C, C]: finite")
    }
    /// The current (last) hypothesis `(w_{T+1}, b_{T+1})`.
    pub fn current(&self) -> LinearModel {
        LinearModel::try_new(self.w.clone(), self.b)
            .expect("iterates are clamped to the box [-C, C]: finite")
    }
    /// Rounds observed so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }
    /// Rounds with a positive loss (an update).
    pub fn updates(&self) -> u64 {
        self.updates
    }
    /// `Σ_t ξ(w_t, b_t; x_t, y_t)`, the left side of Theorem 4 times `T`.
    pub fn cumulative_loss(&self) -> f64 {
        self.cumulative_loss
    }
    /// Mean loss suffered per round (0 before the first round).
    pub fn average_loss(&self) -> f64 {
        self.cumulative_loss / (self.rounds.max(1) as f64)
    }
    /// The constant step `τ`.
    pub fn step(&self) -> f64 {
        self.step
    }
    /// The box radius `C`.
    pub fn c(&self) -> f64 {
        self.c
    }
    /// The feature budget the loss uses.
    pub fn budget(&self) -> &FeatureBudget {
        &self.budget
    }
}

/// Hyper-parameters of O2B (unchecked; [`ParamGuard`] validates them, and [`Fit`] does so too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct O2bParams {
    c: f64,
    budget: f64,
    values: FeatureValues,
    epochs: usize,
    shuffle_seed: Option<u64>,
    step: Option<f64>,
}

impl Default for O2bParams {
    fn default() -> Self {
        Self {
            c: 1.0,
            budget: 0.0,
            values: FeatureValues::Uniform,
            epochs: 1,
            shuffle_seed: None,
            step: None,
        }
    }
}

impl O2bParams {
    /// Defaults: `C = 1`, `N = 0`, uniform values, one pass in data order, Theorem-4 step.
    pub fn new() -> Self {
        Self::default()
    }
    /// The box radius `C > 0` (`‖w‖∞ ≤ C`, `|b| ≤ C`).
    pub fn c(mut self, c: f64) -> Self {
        self.c = c;
        self
    }
    /// The deletion budget `N` (`0 ≤ N < V([n])`, checked against the data's values at fit).
    pub fn budget(mut self, n: f64) -> Self {
        self.budget = n;
        self
    }
    /// Feature values `v` (uniform by default).
    pub fn values(mut self, v: FeatureValues) -> Self {
        self.values = v;
        self
    }
    /// Number of passes (≥ 1; more than 1 is beyond the theory, see the module docs).
    pub fn epochs(mut self, e: usize) -> Self {
        self.epochs = e;
        self
    }
    /// Reshuffle the examples before every pass with this seed (`None`: data order).
    pub fn shuffle_seed(mut self, seed: Option<u64>) -> Self {
        self.shuffle_seed = seed;
        self
    }
    /// Overrides the Theorem-4 step `τ = C√((n+1)/(2T))` (`None`: the theorem's step).
    pub fn step(mut self, step: Option<f64>) -> Self {
        self.step = step;
        self
    }
    /// The budget of an `n`-feature problem (values resolved and validated).
    pub fn feature_budget(&self, n_features: usize) -> Result<FeatureBudget> {
        FeatureBudget::try_new(self.values.resolve(n_features)?, self.budget)
    }
    /// A streaming learner for `n_features` features and a stream of `horizon` rounds (the
    /// step uses `horizon` unless overridden). Feed it with [`O2bOnline::observe`].
    pub fn online(&self, n_features: usize, horizon: usize) -> Result<O2bOnline> {
        self.check_ref()?;
        let budget = self.feature_budget(n_features)?;
        match self.step {
            Some(s) => O2bOnline::new(budget, self.c, s),
            None => O2bOnline::with_horizon(budget, self.c, horizon),
        }
    }
    /// Trains on any stream of examples in constant memory (one pass over `stream`; `epochs`
    /// and `shuffle_seed` do not apply). `horizon` is the expected stream length, used for the
    /// step. The report's objective is the online average loss (the data are not kept).
    pub fn fit_stream<'a, I>(
        &self,
        n_features: usize,
        horizon: usize,
        stream: I,
    ) -> Result<Fitted<LinearModel>>
    where
        I: IntoIterator<Item = (RowView<'a>, Sign)>,
    {
        let start = Instant::now();
        let mut online = self.online(n_features, horizon)?;
        for (x, y) in stream {
            online.observe(x, y)?;
        }
        if online.rounds() == 0 {
            return Err(Error::param("stream", "empty", "at least one example"));
        }
        let model = online.averaged();
        let mut report = report_of(&online, start);
        report.objective = Some(online.average_loss());
        Ok(Fitted { model, report })
    }

    fn fit_from(
        &self,
        previous: Option<LinearModel>,
        data: &Dataset,
    ) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        self.check_ref()?;
        let y = binary_training_labels(data, "o2b")?;
        let (m, n) = (data.len(), data.n_features());
        let rounds = m.checked_mul(self.epochs).ok_or_else(|| {
            Error::param("epochs", self.epochs, "epochs × examples must fit in usize")
        })?;
        let mut online = self.online(n, rounds)?;
        if let Some(prev) = &previous {
            online = online.starting_at(prev)?;
        }
        let mut order: Vec<usize> = (0..m).collect();
        let mut rng = self.shuffle_seed.map(rng_from_seed);
        for _ in 0..self.epochs {
            if let Some(rng) = rng.as_mut() {
                order.shuffle(rng);
            }
            for &i in &order {
                online.observe_unchecked(data.row(i), y[i]);
            }
        }
        let model = online.averaged();
        let mut report = report_of(&online, start);
        report.objective = Some(online.budget.mean_worst_case_loss(
            model.weights(),
            model.bias(),
            data,
        )?);
        let max_l1 = (0..m)
            .map(|i| data.row(i).nonzeros().map(|(_, v)| v.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        report.details.insert("max_l1_norm".into(), max_l1);
        report.details.insert("epochs".into(), self.epochs as f64);
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted { model, report })
    }
}

fn report_of(online: &O2bOnline, start: Instant) -> FitReport {
    let mut report = FitReport {
        algorithm: "o2b".into(),
        solver: "cube-projected-perceptron".into(),
        objective: None,
        iterations: Some(online.rounds() as usize),
        seconds: start.elapsed().as_secs_f64(),
        // a fixed number of passes: there is no tolerance to meet
        converged: true,
        ..FitReport::default()
    };
    let d = &mut report.details;
    d.insert("step".into(), online.step());
    d.insert("online_average_loss".into(), online.average_loss());
    d.insert("updates".into(), online.updates() as f64);
    d.insert(
        "theorem4_bound".into(),
        theorem4_bound(
            online.c(),
            online.budget().n_features(),
            online.rounds() as usize,
        ),
    );
    report
}

impl ParamGuard for O2bParams {
    type Checked = O2bParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&O2bParams> {
        check_c(self.c)?;
        bulwark_core::error::check_nonnegative("budget", self.budget)?;
        check_at_least_one("epochs", self.epochs)?;
        self.values.check()?;
        if let Some(s) = self.step {
            bulwark_core::error::check_positive("step", s)?;
        }
        Ok(self)
    }
    fn check(self) -> Result<O2bParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// Trains O2B on a data set: `epochs` passes (reshuffled when a seed is set), the averaged
/// hypothesis, and as objective the mean LP-(4) loss of that hypothesis on the training data.
impl Fit for O2bParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.fit_from(None, data)
    }
}

/// Continues from a previous model (projected onto the cube); the average restarts.
impl FitWith for O2bParams {
    fn fit_with(
        &self,
        previous: Option<LinearModel>,
        batch: &Dataset,
    ) -> Result<Fitted<LinearModel>> {
        self.fit_from(previous, batch)
    }
}
