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
//! integral and the value equals the exact loss (29). Zero entries of `x` are never deleted
//! (their profit is `−v_j/P ≤ 0`).
//!
//! The greedy is evaluated without sorting: the candidates (`r_j > 1/P`) are collected in one
//! pass over the non-zeros of `x`, fused with the margin for dense rows under uniform values,
//! and only the features *before* the budget boundary in the order (ratio ↓, index ↑) are needed,
//! which a weighted quickselect finds in expected `O(k)` for `k` candidates — nothing at all when
//! `N = 0` or every candidate fits. Per call: one pass over the row (`O(n)` dense, `O(nnz(x))`
//! sparse) plus that selection. This is the inner loop of the cube-projected Perceptron
//! (`bulwark-online`), so it allocates nothing once the [`DeletionScratch`] is warm.

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
///
/// Serialised as `values`, `budget` and `total`; deserialisation re-validates through
/// [`FeatureBudget::try_new`] (the total is recomputed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BudgetRepr", into = "BudgetRepr")]
pub struct FeatureBudget {
    values: Vec<f64>,
    budget: f64,
    total: f64,
    /// `1/v_j` (0 where `v_j = 0`): the ratio `r_j = c_j / v_j` as a product in the inner loop.
    inv_values: Vec<f64>,
    /// Every `v_j = 1`.
    uniform: bool,
    /// Some `v_j = 0` (free deletions).
    has_zero: bool,
}

/// The serialised form of [`FeatureBudget`].
#[derive(Serialize, Deserialize)]
struct BudgetRepr {
    values: Vec<f64>,
    budget: f64,
    total: f64,
}

impl TryFrom<BudgetRepr> for FeatureBudget {
    type Error = Error;
    fn try_from(r: BudgetRepr) -> Result<Self> {
        Self::try_new(r.values, r.budget)
    }
}

impl From<FeatureBudget> for BudgetRepr {
    fn from(b: FeatureBudget) -> Self {
        Self {
            values: b.values,
            budget: b.budget,
            total: b.total,
        }
    }
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
            inv_values: values
                .iter()
                .map(|&v| if v > 0.0 { 1.0 / v } else { 0.0 })
                .collect(),
            uniform: values.iter().all(|&v| v == 1.0),
            has_zero: values.contains(&0.0),
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
    /// `w` and a dense `x` must have the budget's feature count, and a sparse `x` indices below it
    /// (checked in debug builds; callers validate once; out-of-range indices panic).
    pub fn worst_case_deletion(
        &self,
        w: &[f64],
        b: f64,
        x: RowView<'_>,
        y: Sign,
        scratch: &mut DeletionScratch,
    ) -> WorstCase {
        debug_assert_eq!(w.len(), self.values.len());
        scratch.reserve(self.values.len());
        let value = self.deletion_value(w, b, x, y.as_f64(), scratch);
        WorstCase {
            value,
            loss: value.max(0.0),
        }
    }

    /// The value inside the hinge; fills `s.deleted`. `s` holds buffers for every feature.
    fn deletion_value(
        &self,
        w: &[f64],
        b: f64,
        x: RowView<'_>,
        y: f64,
        s: &mut DeletionScratch,
    ) -> f64 {
        s.deleted.clear();
        let inv_p = 1.0 / self.p();
        // Dense rows with uniform values (the common case): one fused pass computes the margin
        // (the accumulation order of `dot4`) and the candidate features.
        if let RowView::Dense(v) = x
            && self.uniform
            && self.budget > 0.0
            && v.len() <= u32::MAX as usize
        {
            let n = v.len();
            let (w, idx) = (&w[..n], &mut s.idx32[..n]);
            let mut acc = [0.0f64; 4];
            let mut k = 0usize;
            let chunks = n / 4;
            for ch in 0..chunks {
                let j0 = 4 * ch;
                for l in 0..4 {
                    let p = w[j0 + l] * v[j0 + l];
                    acc[l] += p;
                    idx[k] = (j0 + l) as u32;
                    k += usize::from(y * p > inv_p);
                }
            }
            let mut tail = 0.0;
            for j in 4 * chunks..n {
                let p = w[j] * v[j];
                tail += p;
                idx[k] = j as u32;
                k += usize::from(y * p > inv_p);
            }
            let margin = b + ((acc[0] + acc[1]) + (acc[2] + acc[3]) + tail);
            let mut gain = 0.0;
            if k > 0 {
                for t in 0..k {
                    let j = idx[t] as usize;
                    s.rat[t] = y * w[j] * v[j];
                    s.idx[t] = j;
                }
                gain = self.select(s, k, k as f64, inv_p);
            }
            return self.total * inv_p - y * margin + gain;
        }
        let margin = b + match x {
            RowView::Dense(v) => dot4(v, w),
            RowView::Sparse { .. } => x.dot(w),
        };
        let mut gain = 0.0;
        if self.budget > 0.0 || self.has_zero {
            let (k, cand_weight) = match x {
                RowView::Dense(v) if !self.has_zero => {
                    let n = v.len();
                    let (rat, idx) = (&mut s.rat[..n], &mut s.idx[..n]);
                    let w = &w[..n];
                    let mut k = 0;
                    if self.uniform {
                        for j in 0..n {
                            let c = y * w[j] * v[j];
                            rat[k] = c;
                            idx[k] = j;
                            k += usize::from(c > inv_p);
                        }
                        (k, k as f64)
                    } else {
                        let (cs, iv) = (&mut s.cs[..n], &self.inv_values[..n]);
                        for j in 0..n {
                            let c = y * w[j] * v[j];
                            let r = c * iv[j];
                            rat[k] = r;
                            cs[k] = c;
                            idx[k] = j;
                            k += usize::from(r > inv_p);
                        }
                        let weight = idx[..k].iter().map(|&j| self.values[j]).sum();
                        (k, weight)
                    }
                }
                _ => {
                    let (mut k, mut weight) = (0, 0.0);
                    for (j, xj) in x.nonzeros() {
                        let c = y * w[j] * xj;
                        if self.has_zero && self.values[j] == 0.0 {
                            if c > 0.0 {
                                // free deletion: infinite ratio
                                s.deleted.push((j, 1.0));
                                gain += c;
                            }
                            continue;
                        }
                        let r = if self.uniform {
                            c
                        } else {
                            c * self.inv_values[j]
                        };
                        if r > inv_p {
                            s.rat[k] = r;
                            s.cs[k] = c;
                            s.idx[k] = j;
                            k += 1;
                            weight += self.values[j];
                        }
                    }
                    if self.uniform {
                        // the uniform selection reads c from `rat`
                        s.rat[..k].copy_from_slice(&s.cs[..k]);
                    }
                    (k, weight)
                }
            };
            if self.budget > 0.0 && k > 0 {
                gain += self.select(s, k, cand_weight, inv_p);
            }
        }
        // DSX §A3 knapsack form: V/P − y(b + w·x) + Σ σ_j g_j
        self.total * inv_p - y * margin + gain
    }

    /// The greedy over the `k` candidates in `s` in the order (ratio ↓, index ↑) until the
    /// budget is spent, without sorting: returns the gain `Σ σ_j (c_j − v_j/P)` and fills
    /// `s.deleted`. `cand_weight` is the candidates' total value.
    fn select(&self, s: &mut DeletionScratch, k: usize, cand_weight: f64, inv_p: f64) -> f64 {
        let uniform = self.uniform;
        let values = &self.values;
        let (rat, idx, cs) = (&s.rat[..k], &s.idx[..k], &s.cs[..k]);
        let deleted = &mut s.deleted;
        let c_of = |t: usize| if uniform { rat[t] } else { cs[t] };
        let mut gain = 0.0;
        if cand_weight <= self.budget {
            // every candidate fits whole (each prefix sum ≤ the total ≤ budget)
            for t in 0..k {
                deleted.push((idx[t], 1.0));
                gain += c_of(t) - values[idx[t]] * inv_p;
            }
            return gain;
        }
        let mut left = self.budget;
        if uniform {
            // v_j = 1: in the order (ratio ↓, index ↑) the first ⌊N⌋ candidates go whole and the
            // next one by N − ⌊N⌋. Find the ratio t of the last affected candidate by a
            // selection on the ratios alone; candidates above t are whole, ties at t are taken
            // in index order (the candidates are stored in index order).
            let whole = left.floor() as usize;
            let frac = left - whole as f64;
            let q = whole + usize::from(frac > 0.0); // 1 ≤ q ≤ k since k > budget
            s.ratios.clear();
            s.ratios.extend_from_slice(rat);
            let (_, t, _) = s
                .ratios
                .select_nth_unstable_by(q - 1, |a, b| b.total_cmp(a));
            let t = *t;
            let mut full_left = whole;
            for u in 0..k {
                if rat[u] > t {
                    deleted.push((idx[u], 1.0));
                    gain += rat[u] - inv_p;
                    full_left -= 1;
                }
            }
            let mut frac_left = frac > 0.0;
            for u in 0..k {
                if rat[u] == t {
                    if full_left > 0 {
                        deleted.push((idx[u], 1.0));
                        gain += rat[u] - inv_p;
                        full_left -= 1;
                    } else if frac_left {
                        deleted.push((idx[u], frac));
                        gain += frac * (rat[u] - inv_p);
                        frac_left = false;
                    } else {
                        break;
                    }
                }
            }
            return gain;
        }
        s.cand.clear();
        s.cand.extend((0..k).map(|t| (rat[t], idx[t], cs[t])));
        let profit = |c: &Cand| c.2 - values[c.1] * inv_p;
        let cand = &mut s.cand[..];
        let (mut lo, mut hi) = (0usize, cand.len());
        // invariant: cand[..lo] are deleted whole (already counted); the boundary is in lo..hi
        loop {
            if left <= 0.0 || lo >= hi {
                break;
            }
            if hi - lo <= 16 {
                cand[lo..hi].sort_unstable_by(before);
                for c in &cand[lo..hi] {
                    if left <= 0.0 {
                        break;
                    }
                    let v = values[c.1];
                    if v <= left {
                        deleted.push((c.1, 1.0));
                        gain += profit(c);
                        left -= v;
                    } else {
                        let f = left / v;
                        deleted.push((c.1, f));
                        gain += f * profit(c);
                        left = 0.0;
                    }
                }
                break;
            }
            let mid = lo + (hi - lo) / 2;
            cand[lo..hi].select_nth_unstable_by(mid - lo, before);
            let wsum: f64 = cand[lo..mid].iter().map(|c| values[c.1]).sum();
            if wsum > left {
                hi = mid;
                continue;
            }
            // cand[lo..mid] all fit whole (each prefix sum ≤ wsum ≤ left)
            for c in &cand[lo..mid] {
                deleted.push((c.1, 1.0));
                gain += profit(c);
            }
            left -= wsum;
            let c = cand[mid];
            if left <= 0.0 {
                break;
            }
            let v = values[c.1];
            if v <= left {
                deleted.push((c.1, 1.0));
                gain += profit(&c);
                left -= v;
                lo = mid + 1;
            } else {
                let f = left / v;
                deleted.push((c.1, f));
                gain += f * profit(&c);
                break;
            }
        }
        gain
    }

    /// Mean worst-case deletion loss over a data set: the objective of LP (4) at `(w, b)`.
    pub fn mean_worst_case_loss(&self, w: &[f64], b: f64, data: &crate::Dataset) -> Result<f64> {
        let sum: f64 = self
            .worst_case_values(w, b, data)?
            .iter()
            .map(|v| v.max(0.0))
            .sum();
        Ok(sum / data.len().max(1) as f64)
    }

    /// The worst-case value of every example at `(w, b)` ([`WorstCase::value`]: `ξ_i` of LP (4)
    /// before the hinge), in order.
    pub fn worst_case_values(&self, w: &[f64], b: f64, data: &crate::Dataset) -> Result<Vec<f64>> {
        if w.len() != self.n_features() || data.n_features() != self.n_features() {
            return Err(Error::shape(
                "budget features vs model/data features",
                self.n_features(),
                data.n_features(),
            ));
        }
        let y = data.binary_labels()?;
        let mut scratch = DeletionScratch::with_capacity(self.n_features());
        Ok((0..data.len())
            .map(|i| {
                self.worst_case_deletion(w, b, data.row(i), y[i], &mut scratch)
                    .value
            })
            .collect())
    }
}

/// A candidate of the non-uniform selection: ratio `r_j = c_j / v_j`, feature `j`,
/// `c_j = y w_j x_j`.
type Cand = (f64, usize, f64);

/// The greedy's order: ratio ↓, then feature index ↑ (deterministic ties).
#[inline]
fn before(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Dot product with four independent accumulators (vectorises; order-stable for a given length):
/// the margin of [`FeatureBudget::worst_case_deletion`] on dense rows, and the dot product of the
/// learners of `bulwark-online`.
#[inline]
pub fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0f64; 4];
    let chunks = n / 4;
    for k in 0..chunks {
        let i = 4 * k;
        s[0] += a[i] * b[i];
        s[1] += a[i + 1] * b[i + 1];
        s[2] += a[i + 2] * b[i + 2];
        s[3] += a[i + 3] * b[i + 3];
    }
    let mut tail = 0.0;
    for i in 4 * chunks..n {
        tail += a[i] * b[i];
    }
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

/// The worst case of one example.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorstCase {
    /// The value inside the hinge, `V(τ)/P − y(b + Σ τ_j w_j x_j)` at the worst `τ`.
    pub value: f64,
    /// `[value]_+`: the loss (29) relaxed, i.e. `ξ_i` of LP (4).
    pub loss: f64,
}

/// Reusable buffers for [`FeatureBudget::worst_case_deletion`] (sized to the feature count on
/// first use; one scratch can serve budgets of different sizes).
#[derive(Debug, Clone, Default)]
pub struct DeletionScratch {
    /// Candidate ratios (uniform values: `c_j` itself).
    rat: Vec<f64>,
    /// Candidate features.
    idx: Vec<usize>,
    /// Candidate features of the fused dense pass.
    idx32: Vec<u32>,
    /// Candidate `c_j = y w_j x_j` (non-uniform values).
    cs: Vec<f64>,
    /// Ratios permuted by the uniform selection.
    ratios: Vec<f64>,
    /// Candidates permuted by the non-uniform selection.
    cand: Vec<Cand>,
    deleted: Vec<(usize, f64)>,
}

impl DeletionScratch {
    /// Buffers for up to `n` features without reallocation.
    pub fn with_capacity(n: usize) -> Self {
        let mut s = Self::default();
        s.reserve(n);
        s
    }
    /// Grows the per-feature buffers to `n` entries.
    fn reserve(&mut self, n: usize) {
        if self.rat.len() < n {
            self.rat.resize(n, 0.0);
            self.idx.resize(n, 0);
            self.idx32.resize(n, 0);
            self.cs.resize(n, 0.0);
            self.ratios.reserve(n);
            self.cand.reserve(n);
            self.deleted.reserve(n);
        }
    }
    /// The features deleted by the last call, as `(j, σ_j)` with `σ_j ∈ (0, 1]` the deleted
    /// fraction (`τ_j = 1 − σ_j` is the keep-weight), in no particular order. At most one `σ_j`
    /// is fractional.
    pub fn deleted(&self) -> &[(usize, f64)] {
        &self.deleted
    }
}
