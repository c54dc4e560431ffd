//! Test-time attacks on linear models: greedy, exact and random deletion, greedy corruption.
//!
//! Every attack rewrites each test example, never the labels. Deletion sets a feature to 0
//! (a CSR row loses the entry, a dense row stores 0); corruption replaces the value by a draw
//! from `N(mean_j, var_j)` with the moments of the **training** data ([`CorruptionStats::fit`]).
//! The objective and the tie rules are in [`crate::exact_deletion`]. Randomised attacks draw only from
//! the `rng` they are given, examples in order and features in increasing index, so a seed fixes
//! the attacked data bit for bit.
//!
//! [`Attack`] bundles the choice the CLI makes (`--attack`, `--values`, training statistics) and
//! takes the budget `N` at run time, so one `Attack` serves a whole error-versus-budget curve.

use std::fmt;
use std::str::FromStr;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use bulwark_core::missing::remaining_budget;
use bulwark_core::{
    CsrMatrix, Dataset, Error, Features, Linear, Result, Rng, RowView, Sign, TestTimeAttack,
};

use crate::budget::{AttackBudget, check_budget, check_values};
use crate::exact_deletion::{self as knapsack, DEFAULT_NODE_LIMIT, Item};
use crate::sample::standard_normal;

/// Per-feature mean and variance for corruption noise, estimated on training data only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorruptionStats {
    /// Mean of each feature over the training examples (implicit zeros included).
    pub mean: Vec<f64>,
    /// Population variance (divisor `m`) of each feature over the training examples.
    pub variance: Vec<f64>,
}

impl CorruptionStats {
    /// Estimates the moments on `train` (at least one example).
    pub fn fit(train: &Dataset) -> Result<Self> {
        let (m, n) = (train.len(), train.n_features());
        if m == 0 {
            return Err(Error::param(
                "training data",
                "empty",
                "at least one example for corruption statistics",
            ));
        }
        let mut mean = vec![0.0; n];
        for i in 0..m {
            train.row(i).axpy_into(1.0, &mut mean);
        }
        mean.iter_mut().for_each(|v| *v /= m as f64);
        // two-pass variance; each implicit zero contributes μ²
        let mut var = vec![0.0; n];
        let mut nnz = vec![0usize; n];
        for i in 0..m {
            for (j, x) in train.row(i).nonzeros() {
                let d = x - mean[j];
                var[j] += d * d;
                nnz[j] += 1;
            }
        }
        for j in 0..n {
            var[j] += (m - nnz[j]) as f64 * mean[j] * mean[j];
        }
        var.iter_mut().for_each(|v| *v = (*v / m as f64).max(0.0));
        Ok(Self {
            mean,
            variance: var,
        })
    }
    /// Validated statistics from explicit moments (finite means, finite variances `≥ 0`).
    pub fn try_new(mean: Vec<f64>, variance: Vec<f64>) -> Result<Self> {
        if mean.len() != variance.len() {
            return Err(Error::shape(
                "corruption means vs variances",
                mean.len(),
                variance.len(),
            ));
        }
        if let Some((j, v)) = mean.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::param(
                format!("mean[{}]", j + 1),
                v,
                "a finite number",
            ));
        }
        if let Some((j, v)) = variance
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(Error::param(
                format!("variance[{}]", j + 1),
                v,
                "a finite number >= 0",
            ));
        }
        Ok(Self { mean, variance })
    }
    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.mean.len()
    }
    /// One noise draw for feature `j`.
    pub fn draw(&self, j: usize, rng: &mut Rng) -> f64 {
        self.mean[j] + self.variance[j].sqrt() * standard_normal(rng)
    }
}

/// Checks the model against the data and returns the ±1 labels.
pub(crate) fn check_model_data<'d, M: Linear + ?Sized>(
    model: &M,
    data: &'d Dataset,
) -> Result<&'d [Sign]> {
    if model.weights().len() != data.n_features() {
        return Err(Error::shape(
            "model feature count vs data feature count",
            model.weights().len(),
            data.n_features(),
        ));
    }
    if !model.bias().is_finite() {
        return Err(Error::param("bias", model.bias(), "a finite number"));
    }
    if let Some((j, w)) = model
        .weights()
        .iter()
        .enumerate()
        .find(|(_, w)| !w.is_finite())
    {
        return Err(Error::param(
            format!("weights[{}]", j + 1),
            w,
            "a finite number",
        ));
    }
    data.binary_labels()
}

/// Rewrites every row: `edit(i, row, out)` lists `(feature, new value)` for stored non-zeros of
/// the row (increasing feature index); a new value of 0 deletes the entry. Keeps the format.
pub(crate) fn rewrite_rows(
    data: &Dataset,
    mut edit: impl FnMut(usize, RowView<'_>, &mut Vec<(usize, f64)>) -> Result<()>,
) -> Result<Dataset> {
    let mut edits = Vec::new();
    let features = match data.features() {
        Features::Dense(d) => {
            let mut out = d.clone();
            for i in 0..data.len() {
                edits.clear();
                edit(i, data.row(i), &mut edits)?;
                let r = out.row_mut(i);
                for &(j, v) in &edits {
                    r[j] = v;
                }
            }
            Features::Dense(out)
        }
        Features::Sparse(s) => {
            let mut indptr = Vec::with_capacity(s.rows() + 1);
            let mut indices = Vec::with_capacity(s.nnz());
            let mut values = Vec::with_capacity(s.nnz());
            indptr.push(0);
            for i in 0..data.len() {
                edits.clear();
                edit(i, data.row(i), &mut edits)?;
                edits.sort_by_key(|e| e.0);
                let (idx, val) = s.row(i);
                let mut e = edits.iter().peekable();
                for (&j, &v) in idx.iter().zip(val) {
                    let mut nv = v;
                    while let Some(&&(ej, ev)) = e.peek() {
                        if ej < j {
                            e.next();
                        } else {
                            if ej == j {
                                nv = ev;
                                e.next();
                            }
                            break;
                        }
                    }
                    if nv != 0.0 {
                        indices.push(j);
                        values.push(nv);
                    }
                }
                indptr.push(indices.len());
            }
            Features::Sparse(CsrMatrix::try_new(
                s.rows(),
                s.cols(),
                indptr,
                indices,
                values,
            )?)
        }
    };
    data.with_features(features)
}

/// Greedy deletion exactly as DSX §4 (see [`crate::exact_deletion::greedy`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GreedyDelete {
    /// Values and budget.
    pub budget: AttackBudget,
}

/// Greedy corruption: the greedy's choice, values replaced by `N(mean_j, var_j)` (training moments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GreedyCorrupt {
    /// Values and budget.
    pub budget: AttackBudget,
    /// Training-data moments.
    pub stats: CorruptionStats,
}

/// Exact worst-case deletion: the 0/1 knapsack optimum per example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactDelete {
    /// Values and budget.
    pub budget: AttackBudget,
    /// Branch-and-bound node limit per example; when hit, the best set found is deleted.
    pub node_limit: u64,
}

/// Random deletion of `count` non-zero features per example, uniformly without replacement
/// (the Globerson–Roweis protocol of ICML 2008; all non-zeros when there are fewer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RandomDelete {
    /// Non-zero features deleted per example.
    pub count: usize,
}

/// What an attack did besides rewriting the data.
#[derive(Debug, Clone, PartialEq)]
pub struct AttackOutcome {
    /// The attacked data (same labels, names and format).
    pub data: Dataset,
    /// Features deleted or corrupted, summed over examples.
    pub touched: usize,
    /// Examples whose exact search hit the node limit (the best set found was used).
    pub incomplete: usize,
}

fn deletion_attack<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    budget: &AttackBudget,
    mut choose: impl FnMut(&[Item], f64) -> (Vec<usize>, bool),
    mut replace: impl FnMut(usize) -> f64,
) -> Result<AttackOutcome> {
    let y = check_model_data(model, data)?;
    budget.check_features(data.n_features())?;
    let (w, v, n) = (model.weights(), budget.values(), budget.budget());
    let mut items = Vec::new();
    let (mut touched, mut incomplete) = (0, 0);
    let mask = data.missing();
    let data = rewrite_rows(data, |i, row, out| {
        knapsack::items(w, row, y[i], v, &mut items);
        // what is missing counts against the budget (bulwark_core::missing)
        let (chosen, complete) = choose(&items, remaining_budget(mask, i, v, n));
        touched += chosen.len();
        incomplete += usize::from(!complete);
        out.extend(chosen.into_iter().map(|j| (j, replace(j))));
        Ok(())
    })?;
    Ok(AttackOutcome {
        data,
        touched,
        incomplete,
    })
}

impl GreedyDelete {
    /// The attack with its outcome counts.
    pub fn run<M: Linear + ?Sized>(&self, model: &M, data: &Dataset) -> Result<AttackOutcome> {
        deletion_attack(
            model,
            data,
            &self.budget,
            |items, n| (knapsack::greedy(items, n).features, true),
            |_| 0.0,
        )
    }
}

impl GreedyCorrupt {
    /// The attack with its outcome counts.
    pub fn run<M: Linear + ?Sized>(
        &self,
        model: &M,
        data: &Dataset,
        rng: &mut Rng,
    ) -> Result<AttackOutcome> {
        if self.stats.n_features() != data.n_features() {
            return Err(Error::shape(
                "corruption statistics vs data features",
                data.n_features(),
                self.stats.n_features(),
            ));
        }
        deletion_attack(
            model,
            data,
            &self.budget,
            |items, n| (knapsack::greedy(items, n).features, true),
            |j| self.stats.draw(j, rng),
        )
    }
}

impl ExactDelete {
    /// The attack with its outcome counts.
    pub fn run<M: Linear + ?Sized>(&self, model: &M, data: &Dataset) -> Result<AttackOutcome> {
        deletion_attack(
            model,
            data,
            &self.budget,
            |items, n| {
                let s = knapsack::exact(items, n, self.node_limit);
                (s.deletion.features, s.complete)
            },
            |_| 0.0,
        )
    }
}

impl RandomDelete {
    /// From a budget that must be a non-negative integer (`--budget N` of the CLI).
    pub fn from_budget(budget: f64) -> Result<Self> {
        check_budget(budget)?;
        if budget.fract() != 0.0 {
            return Err(Error::param(
                "budget",
                budget,
                "an integer number of features for random deletion",
            ));
        }
        Ok(Self {
            count: budget as usize,
        })
    }
    /// The attack with its outcome counts (the model only fixes the feature count).
    pub fn run<M: Linear + ?Sized>(
        &self,
        model: &M,
        data: &Dataset,
        rng: &mut Rng,
    ) -> Result<AttackOutcome> {
        check_model_data(model, data)?;
        self.run_on(data, rng)
    }

    /// The attack on `data` alone (it needs no model).
    pub fn run_on(&self, data: &Dataset, rng: &mut Rng) -> Result<AttackOutcome> {
        let mut nz = Vec::new();
        let mut touched = 0;
        let mask = data.missing();
        let data = rewrite_rows(data, |i, row, out| {
            nz.clear();
            nz.extend(row.nonzeros().map(|(j, _)| j));
            // missing features count against the number deleted (bulwark_core::missing)
            let spent = mask.map_or(0, |m| m.row(i).len());
            let k = self.count.saturating_sub(spent).min(nz.len());
            // partial Fisher–Yates: the first k entries are a uniform k-subset
            for t in 0..k {
                let r = rng.random_range(t..nz.len());
                nz.swap(t, r);
            }
            touched += k;
            out.extend(nz[..k].iter().map(|&j| (j, 0.0)));
            Ok(())
        })?;
        Ok(AttackOutcome {
            data,
            touched,
            incomplete: 0,
        })
    }
}

impl<M: Linear + ?Sized> TestTimeAttack<M> for GreedyDelete {
    fn name(&self) -> &str {
        AttackKind::GreedyDelete.as_str()
    }
    fn attack(&self, model: &M, data: &Dataset, _rng: &mut Rng) -> Result<Dataset> {
        self.run(model, data).map(|o| o.data)
    }
}

impl<M: Linear + ?Sized> TestTimeAttack<M> for GreedyCorrupt {
    fn name(&self) -> &str {
        AttackKind::GreedyCorrupt.as_str()
    }
    fn attack(&self, model: &M, data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        self.run(model, data, rng).map(|o| o.data)
    }
}

impl<M: Linear + ?Sized> TestTimeAttack<M> for ExactDelete {
    fn name(&self) -> &str {
        AttackKind::ExactDelete.as_str()
    }
    fn attack(&self, model: &M, data: &Dataset, _rng: &mut Rng) -> Result<Dataset> {
        self.run(model, data).map(|o| o.data)
    }
}

impl<M: Linear + ?Sized> TestTimeAttack<M> for RandomDelete {
    fn name(&self) -> &str {
        AttackKind::RandomDelete.as_str()
    }
    fn attack(&self, model: &M, data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        self.run(model, data, rng).map(|o| o.data)
    }
}

/// The attacks selectable by `--attack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttackKind {
    /// No attack: the clean error.
    None,
    /// [`GreedyDelete`].
    GreedyDelete,
    /// [`GreedyCorrupt`] (needs training statistics).
    GreedyCorrupt,
    /// [`RandomDelete`] (the budget is a feature count).
    RandomDelete,
    /// [`ExactDelete`].
    ExactDelete,
    /// [`crate::UniformNoise`]: i.i.d. `U(−a, a)` on every feature, the budget is `a`
    /// (Ginodi Figs. 2.5, 2.7).
    UniformNoise,
}

impl AttackKind {
    /// Every kind, in CLI order.
    pub const ALL: [AttackKind; 6] = [
        AttackKind::None,
        AttackKind::GreedyDelete,
        AttackKind::GreedyCorrupt,
        AttackKind::RandomDelete,
        AttackKind::ExactDelete,
        AttackKind::UniformNoise,
    ];
    /// The CLI spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AttackKind::None => "none",
            AttackKind::GreedyDelete => "greedy-delete",
            AttackKind::GreedyCorrupt => "greedy-corrupt",
            AttackKind::RandomDelete => "random-delete",
            AttackKind::ExactDelete => "exact-delete",
            AttackKind::UniformNoise => "uniform-noise",
        }
    }
}

impl fmt::Display for AttackKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AttackKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        AttackKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                Error::param(
                    "attack",
                    s,
                    "one of none, greedy-delete, greedy-corrupt, random-delete, exact-delete, uniform-noise",
                )
            })
    }
}

/// An attack chosen on the command line, with the budget supplied at run time.
///
/// ```
/// use bulwark_adversary::{Attack, AttackKind};
/// let a: Attack = "exact-delete".parse::<AttackKind>()?.into();
/// let a = a.with_values(vec![1.0, 2.0, 0.5])?.with_node_limit(10_000);
/// assert_eq!(a.name(), "exact-delete");
/// # Ok::<(), bulwark_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attack {
    /// Which attack.
    pub kind: AttackKind,
    /// Feature values `v` (`None`: uniform `v_j = 1`). Ignored by `random-delete` and `none`.
    pub values: Option<Vec<f64>>,
    /// Training-data moments, required by `greedy-corrupt`.
    pub corruption: Option<CorruptionStats>,
    /// Per-example node limit of `exact-delete`.
    pub node_limit: u64,
}

impl From<AttackKind> for Attack {
    fn from(kind: AttackKind) -> Self {
        Attack::new(kind)
    }
}

impl Attack {
    /// `kind` with uniform values and the default node limit.
    pub fn new(kind: AttackKind) -> Self {
        Self {
            kind,
            values: None,
            corruption: None,
            node_limit: DEFAULT_NODE_LIMIT,
        }
    }
    /// Parses the CLI name.
    pub fn parse(name: &str) -> Result<Self> {
        name.parse::<AttackKind>().map(Self::new)
    }
    /// Sets the feature values (finite, `≥ 0`).
    pub fn with_values(mut self, values: Vec<f64>) -> Result<Self> {
        check_values(&values)?;
        self.values = Some(values);
        Ok(self)
    }
    /// Sets the training moments used by `greedy-corrupt`.
    pub fn with_corruption(mut self, stats: CorruptionStats) -> Self {
        self.corruption = Some(stats);
        self
    }
    /// Sets the per-example node limit of `exact-delete`.
    pub fn with_node_limit(mut self, node_limit: u64) -> Self {
        self.node_limit = node_limit;
        self
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        self.kind.as_str()
    }
    /// Values and budget for `n` features (uniform when no values were set).
    pub fn budget_for(&self, n: usize, budget: f64) -> Result<AttackBudget> {
        let b = match &self.values {
            Some(v) => AttackBudget::try_new(v.clone(), budget)?,
            None => AttackBudget::uniform(n, budget)?,
        };
        b.check_features(n)?;
        Ok(b)
    }
    /// Runs the attack with budget `N` (validated: finite, `≥ 0`; an integer for
    /// `random-delete`).
    pub fn run<M: Linear + ?Sized>(
        &self,
        model: &M,
        data: &Dataset,
        budget: f64,
        rng: &mut Rng,
    ) -> Result<AttackOutcome> {
        check_budget(budget)?;
        check_model_data(model, data)?;
        let n = model.weights().len();
        match self.kind {
            AttackKind::None => Ok(AttackOutcome {
                data: data.clone(),
                touched: 0,
                incomplete: 0,
            }),
            AttackKind::GreedyDelete => GreedyDelete {
                budget: self.budget_for(n, budget)?,
            }
            .run(model, data),
            AttackKind::GreedyCorrupt => {
                let stats = self.corruption.clone().ok_or_else(|| {
                    Error::param(
                        "corruption statistics",
                        "missing",
                        "CorruptionStats::fit on the training data (greedy-corrupt needs the training moments)",
                    )
                })?;
                GreedyCorrupt {
                    budget: self.budget_for(n, budget)?,
                    stats,
                }
                .run(model, data, rng)
            }
            AttackKind::RandomDelete => RandomDelete::from_budget(budget)?.run(model, data, rng),
            AttackKind::ExactDelete => ExactDelete {
                budget: self.budget_for(n, budget)?,
                node_limit: self.node_limit,
            }
            .run(model, data),
            AttackKind::UniformNoise => self.run_weightless(data, budget, rng),
        }
    }

    /// Whether the attack reads the model's weights (the deletion and corruption attacks); the
    /// others (`none`, `random-delete`, `uniform-noise`) apply to any model.
    pub fn needs_weights(&self) -> bool {
        matches!(
            self.kind,
            AttackKind::GreedyDelete | AttackKind::GreedyCorrupt | AttackKind::ExactDelete
        )
    }

    /// Runs an attack that needs no weights on `data`, for a model of any kind; an attack that
    /// needs them is a typed error naming it and `kind` (the model's kind).
    pub fn run_model_free(
        &self,
        kind: &str,
        data: &Dataset,
        budget: f64,
        rng: &mut Rng,
    ) -> Result<AttackOutcome> {
        if self.needs_weights() {
            return Err(Error::param(
                "attack",
                self.name(),
                format!(
                    "an attack that needs no weights (none, random-delete, uniform-noise): {} reads a binary linear model's weights, and this model is {kind}",
                    self.name()
                ),
            ));
        }
        check_budget(budget)?;
        self.run_weightless(data, budget, rng)
    }

    fn run_weightless(&self, data: &Dataset, budget: f64, rng: &mut Rng) -> Result<AttackOutcome> {
        match self.kind {
            AttackKind::RandomDelete => RandomDelete::from_budget(budget)?.run_on(data, rng),
            AttackKind::UniformNoise => {
                let data = crate::UniformNoise { a: budget }.apply(data, rng)?;
                // every feature of every example moves (a = 0 moves none)
                let touched = if budget > 0.0 {
                    data.len() * data.n_features()
                } else {
                    0
                };
                Ok(AttackOutcome {
                    data,
                    touched,
                    incomplete: 0,
                })
            }
            _ => Ok(AttackOutcome {
                data: data.clone(),
                touched: 0,
                incomplete: 0,
            }),
        }
    }
}

/// An [`Attack`] with its budget fixed, usable wherever a [`TestTimeAttack`] is expected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetedAttack {
    /// The attack.
    pub attack: Attack,
    /// The budget `N`.
    pub budget: f64,
}

impl Attack {
    /// Fixes the budget.
    pub fn at_budget(self, budget: f64) -> BudgetedAttack {
        BudgetedAttack {
            attack: self,
            budget,
        }
    }
}

impl<M: Linear + ?Sized> TestTimeAttack<M> for BudgetedAttack {
    fn name(&self) -> &str {
        self.attack.name()
    }
    fn attack(&self, model: &M, data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        self.attack
            .run(model, data, self.budget, rng)
            .map(|o| o.data)
    }
}
