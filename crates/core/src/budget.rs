//! The feature-budget model of Dekel, Shamir & Xiao (2010) and the closed-form worst-case
//! deletion loss of one example.
//!
//! Each feature `j` has a value `v_j ≥ 0`; the adversary may delete any set of features whose
//! total value is at most the budget `N`, with `0 ≤ N < V([n])`, and `P = V([n]) − N > 0`.
//!
//! [`FeatureBudget::worst_case_deletion`] evaluates the per-example loss of LP (4): the hinge
//! loss (29) with the kept set replaced by fractional keep-weights `τ ∈ [0,1]ⁿ` (the LP
//! relaxation (7) of the worst-case deletion, solved in closed form as a fractional knapsack):
//!
//! ```text
//! ξ(w,b;x,y) = [ V([n])/P − y(b + w·x) + max_{σ∈[0,1]ⁿ, Σσ_j v_j ≤ N} Σ_j σ_j (y w_j x_j − v_j/P) ]_+
//! ```
//!
//! Greedy by decreasing ratio `r_j = y w_j x_j / v_j` over the features with `r_j > 1/P`
//! (positive profit) is optimal; features with `v_j = 0` and `y w_j x_j > 0` are deleted for free;
//! at most one feature is deleted fractionally. With `v ∈ {0,1}ⁿ` and integer `N` the greedy is
//! integral and the value equals the exact loss (29). Cost `O(k log k)` for the `k` non-zeros of
//! `x` with positive profit; zero entries of `x` are never deleted (their profit is `−v_j/P ≤ 0`).

use serde::{Deserialize, Serialize};

use crate::dataset::Sign;
use crate::error::{Error, Result};
use crate::matrix::RowView;

/// Checks that every feature value is finite and `≥ 0`, naming the first bad one (1-based:
/// `values[j]`). The one check used by [`FeatureValues`], [`FeatureBudget`] and the adversaries.
pub fn check_values(values: &[f64]) -> Result<()> {
    match values
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
    {
        Some((j, v)) => Err(Error::param(
            format!("values[{}]", j + 1),
            v,
            "a finite feature value >= 0",
        )),
        None => Ok(()),
    }
}

/// How a learner's feature values `v` are chosen: uniform, or given (e.g. the mutual-information
/// values of `bulwark_data::mutual_information_values`, or a user's file). Shared by every learner
/// that uses a [`FeatureBudget`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FeatureValues {
    /// `v_j = 1` for every feature.
    Uniform,
    /// One value per feature, finite and `≥ 0`.
    Given(Vec<f64>),
}

impl FeatureValues {
    /// Checks that given values are finite and `≥ 0` (naming the first bad one, 1-based).
    pub fn check(&self) -> Result<()> {
        match self {
            FeatureValues::Uniform => Ok(()),
            FeatureValues::Given(v) => check_values(v),
        }
    }
    /// The values for `n` features (checked; a shape error when a given vector has another length).
    pub fn resolve(&self, n: usize) -> Result<Vec<f64>> {
        self.check()?;
        match self {
            FeatureValues::Uniform => Ok(vec![1.0; n]),
            FeatureValues::Given(v) if v.len() == n => Ok(v.clone()),
            FeatureValues::Given(v) => {
                Err(Error::shape("feature values vs data features", n, v.len()))
            }
        }
    }
}

/// Feature values `v` and a deletion budget `N` (DSX §2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureBudget {
    values: Vec<f64>,
    budget: f64,
    total: f64,
}

impl FeatureBudget {
    /// Validates `v_j ≥ 0` finite and `0 ≤ N < V([n])`.
    pub fn try_new(values: Vec<f64>, budget: f64) -> Result<Self> {
        check_values(&values)?;
        let total: f64 = values.iter().sum();
        if !(budget.is_finite() && budget >= 0.0 && budget < total) {
            return Err(Error::param(
                "budget",
                budget,
                format!("a number N with 0 <= N < V([n]) = {total} (the total feature value)"),
            ));
        }
        Ok(Self {
            values,
            budget,
            total,
        })
    }
    /// Unit values `v_j = 1` on `n` features with budget `N` (`0 ≤ N < n`).
    pub fn uniform(n: usize, budget: f64) -> Result<Self> {
        Self::try_new(vec![1.0; n], budget)
    }
    /// The values `v`.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// The budget `N`.
    pub fn budget(&self) -> f64 {
        self.budget
    }
    /// `V([n]) = Σ v_j`.
    pub fn total(&self) -> f64 {
        self.total
    }
    /// `P = V([n]) − N > 0`.
    pub fn p(&self) -> f64 {
        self.total - self.budget
    }
    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.values.len()
    }
    /// Whether every `v_j ∈ {0, 1}` and `N` is an integer — the case where LP (4) is exact
    /// (DSX Theorem 1(b), Lemma 1(c)).
    pub fn is_integral(&self) -> bool {
        self.budget.fract() == 0.0 && self.values.iter().all(|&v| v == 0.0 || v == 1.0)
    }

    /// The worst-case fractional deletion of one example (DSX eq. (7) solved in closed form; the
    /// per-example loss of LP (4)). `scratch` receives the deleted features `(j, σ_j)` and is
    /// reused across calls without allocation once warm.
    ///
    /// `w` must have the budget's feature count (checked in debug builds; callers validate once).
    pub fn worst_case_deletion(
        &self,
        w: &[f64],
        b: f64,
        x: RowView<'_>,
        y: Sign,
        scratch: &mut DeletionScratch,
    ) -> WorstCase {
        debug_assert_eq!(w.len(), self.values.len());
        let y = y.as_f64();
        let p = self.p();
        let inv_p = 1.0 / p;
        scratch.candidates.clear();
        scratch.deleted.clear();
        let mut margin = b;
        let mut gain = 0.0;
        for (j, xj) in x.nonzeros() {
            let c = y * w[j] * xj;
            margin += w[j] * xj;
            let vj = self.values[j];
            if vj == 0.0 {
                if c > 0.0 {
                    // free deletion: infinite ratio
                    scratch.deleted.push((j, 1.0));
                    gain += c;
                }
            } else {
                let r = c / vj;
                if r > inv_p {
                    scratch.candidates.push((r, j));
                }
            }
        }
        // Decreasing ratio; ties by feature index so the result is deterministic.
        scratch
            .candidates
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut left = self.budget;
        for &(_, j) in &scratch.candidates {
            if left <= 0.0 {
                break;
            }
            let vj = self.values[j];
            let profit = y * w[j] * x_value(x, j) - vj * inv_p;
            if vj <= left {
                scratch.deleted.push((j, 1.0));
                gain += profit;
                left -= vj;
            } else {
                let s = left / vj;
                scratch.deleted.push((j, s));
                gain += s * profit;
                left = 0.0;
            }
        }
        // DSX §A3 knapsack form: V/P − y(b + w·x) + Σ σ_j g_j
        let value = self.total * inv_p - y * margin + gain;
        WorstCase {
            value,
            loss: value.max(0.0),
        }
    }

    /// Mean worst-case deletion loss over a data set: the objective of LP (4) at `(w, b)`.
    pub fn mean_worst_case_loss(&self, w: &[f64], b: f64, data: &crate::Dataset) -> Result<f64> {
        if w.len() != self.n_features() || data.n_features() != self.n_features() {
            return Err(Error::shape(
                "budget features vs model/data features",
                self.n_features(),
                data.n_features(),
            ));
        }
        let y = data.binary_labels()?;
        let mut scratch = DeletionScratch::with_capacity(self.n_features());
        let sum: f64 = (0..data.len())
            .map(|i| {
                self.worst_case_deletion(w, b, data.row(i), y[i], &mut scratch)
                    .loss
            })
            .sum();
        Ok(sum / data.len().max(1) as f64)
    }
}

#[inline]
fn x_value(x: RowView<'_>, j: usize) -> f64 {
    match x {
        RowView::Dense(v) => v[j],
        RowView::Sparse { indices, values } => indices.binary_search(&j).map_or(0.0, |k| values[k]),
    }
}

/// The worst case of one example.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorstCase {
    /// The value inside the hinge, `V(τ)/P − y(b + Σ τ_j w_j x_j)` at the worst `τ`.
    pub value: f64,
    /// `[value]_+`: the loss (29) relaxed, i.e. `ξ_i` of LP (4).
    pub loss: f64,
}

/// Reusable buffers for [`FeatureBudget::worst_case_deletion`].
#[derive(Debug, Clone, Default)]
pub struct DeletionScratch {
    candidates: Vec<(f64, usize)>,
    deleted: Vec<(usize, f64)>,
}

impl DeletionScratch {
    /// Buffers for up to `n` features without reallocation.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            candidates: Vec::with_capacity(n),
            deleted: Vec::with_capacity(n),
        }
    }
    /// The features deleted by the last call, as `(j, σ_j)` with `σ_j ∈ (0, 1]` the deleted
    /// fraction (`τ_j = 1 − σ_j` is the keep-weight). At most one `σ_j` is fractional.
    pub fn deleted(&self) -> &[(usize, f64)] {
        &self.deleted
    }
}
