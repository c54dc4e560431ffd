//! A selection-based evaluation of core's closed-form worst-case deletion
//! ([`bulwark_core::FeatureBudget::worst_case_deletion`]) for the Perceptron's inner loop.
//!
//! Core sorts the candidate features (`O(k log k)`); the fractional knapsack only needs the
//! features *before* the budget boundary in the order (ratio ↓, index ↑), which a weighted
//! quickselect finds in expected `O(k)`, and nothing at all when the budget is 0 or every
//! candidate fits. The order, the tie-break, the "whole item when `v_j ≤ left`" rule and the
//! single fractional item are core's, so the deleted set is the same; the value agrees with core
//! up to floating-point summation order (property-tested in this module).

use bulwark_core::{FeatureBudget, RowView, Sign};

use crate::common::dot4;

/// A candidate: ratio `r_j = y w_j x_j / v_j`, feature `j`, `c_j = y w_j x_j`.
type Cand = (f64, usize, f64);

#[inline]
fn before(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// The budget in the form the inner loop wants.
#[derive(Debug, Clone)]
pub(crate) struct FastBudget {
    values: Vec<f64>,
    inv_values: Vec<f64>,
    budget: f64,
    total: f64,
    inv_p: f64,
    uniform: bool,
    has_zero: bool,
    cand: Vec<Cand>,
    deleted: Vec<(usize, f64)>,
}

impl FastBudget {
    pub(crate) fn new(b: &FeatureBudget) -> Self {
        let values = b.values().to_vec();
        Self {
            inv_values: values
                .iter()
                .map(|&v| if v > 0.0 { 1.0 / v } else { 0.0 })
                .collect(),
            uniform: values.iter().all(|&v| v == 1.0),
            has_zero: values.iter().any(|&v| v == 0.0),
            budget: b.budget(),
            total: b.total(),
            inv_p: 1.0 / b.p(),
            cand: Vec::with_capacity(values.len()),
            deleted: Vec::with_capacity(values.len()),
            values,
        }
    }

    /// The deleted features `(j, σ_j)` of the last evaluation (any order).
    pub(crate) fn deleted(&self) -> &[(usize, f64)] {
        &self.deleted
    }

    /// The value inside the hinge (core's `WorstCase::value`); `deleted()` receives the deletion.
    pub(crate) fn value(&mut self, w: &[f64], b: f64, x: RowView<'_>, y: Sign) -> f64 {
        let y = y.as_f64();
        self.cand.clear();
        self.deleted.clear();
        let mut gain = 0.0;
        let mut cand_weight = 0.0;
        let margin = b + match x {
            RowView::Dense(v) => dot4(v, w),
            RowView::Sparse { .. } => x.dot(w),
        };
        let inv_p = self.inv_p;
        if self.budget > 0.0 || self.has_zero {
            match x {
                RowView::Dense(v) if !self.has_zero => {
                    // branch-free collection: write every slot, advance only on a candidate
                    let n = v.len();
                    self.cand.resize(n, (0.0, 0, 0.0));
                    let mut k = 0;
                    for (j, (&xj, &wj)) in v.iter().zip(w).enumerate() {
                        let c = y * wj * xj;
                        let r = if self.uniform { c } else { c * self.inv_values[j] };
                        self.cand[k] = (r, j, c);
                        k += usize::from(r > inv_p);
                    }
                    self.cand.truncate(k);
                    cand_weight = if self.uniform {
                        k as f64
                    } else {
                        self.cand.iter().map(|c| self.values[c.1]).sum()
                    };
                }
                _ => {
                    for (j, xj) in x.nonzeros() {
                        let c = y * w[j] * xj;
                        if self.has_zero && self.values[j] == 0.0 {
                            if c > 0.0 {
                                self.deleted.push((j, 1.0));
                                gain += c;
                            }
                            continue;
                        }
                        let r = if self.uniform { c } else { c * self.inv_values[j] };
                        if r > inv_p {
                            self.cand.push((r, j, c));
                            cand_weight += self.values[j];
                        }
                    }
                }
            }
        }
        if self.budget > 0.0 && !self.cand.is_empty() {
            gain += self.select(cand_weight);
        }
        self.total * inv_p - y * margin + gain
    }

    /// Greedy over the candidates in the order (ratio ↓, index ↑) until the budget is spent,
    /// without sorting: returns the gain and fills `deleted`.
    fn select(&mut self, cand_weight: f64) -> f64 {
        let inv_p = self.inv_p;
        let values = &self.values;
        let profit = |c: &Cand| c.2 - values[c.1] * inv_p;
        let mut gain = 0.0;
        if cand_weight <= self.budget {
            // Every candidate fits whole — but core spends the budget sequentially, so check
            // the running sum exactly as core does only when it could matter (it cannot: all
            // prefix sums are ≤ the total ≤ budget).
            for c in &self.cand {
                self.deleted.push((c.1, 1.0));
                gain += profit(c);
            }
            return gain;
        }
        let cand = &mut self.cand[..];
        let mut left = self.budget;
        if self.uniform {
            // v_j = 1: the first ⌊N⌋ candidates go whole, the next one by N − ⌊N⌋
            let whole = left.floor() as usize; // < cand.len() since cand_weight > budget
            if whole > 0 {
                cand.select_nth_unstable_by(whole - 1, before);
            }
            for c in &cand[..whole] {
                self.deleted.push((c.1, 1.0));
                gain += profit(c);
            }
            left -= whole as f64;
            if left > 0.0 {
                let rest = &mut cand[whole..];
                let (k, _) = rest
                    .iter()
                    .enumerate()
                    .min_by(|a, b| before(a.1, b.1))
                    .expect("a candidate remains");
                let c = rest[k];
                self.deleted.push((c.1, left));
                gain += left * profit(&c);
            }
            return gain;
        }
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
                        self.deleted.push((c.1, 1.0));
                        gain += profit(c);
                        left -= v;
                    } else {
                        let s = left / v;
                        self.deleted.push((c.1, s));
                        gain += s * profit(c);
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
                self.deleted.push((c.1, 1.0));
                gain += profit(c);
            }
            left -= wsum;
            let c = cand[mid];
            if left <= 0.0 {
                break;
            }
            let v = values[c.1];
            if v <= left {
                self.deleted.push((c.1, 1.0));
                gain += profit(&c);
                left -= v;
                lo = mid + 1;
            } else {
                let s = left / v;
                self.deleted.push((c.1, s));
                gain += s * profit(&c);
                break;
            }
        }
        gain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::DeletionScratch;
    use proptest::prelude::*;

    fn instance() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<f64>, f64, bool, f64, u8)> {
        (1usize..=60).prop_flat_map(|n| {
            (
                prop::collection::vec(prop_oneof![3 => -2.0f64..2.0, 1 => Just(0.5), 1 => Just(-0.5)], n),
                prop::collection::vec(prop_oneof![3 => -1.0f64..1.0, 1 => Just(0.0), 1 => Just(1.0)], n),
                prop::collection::vec(prop_oneof![3 => 0.1f64..2.0, 1 => Just(0.0), 2 => Just(1.0)], n),
                -1.0f64..1.0,
                any::<bool>(),
                0.0f64..1.0,
                0u8..3,
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Same value (to rounding) and the same deleted set as core's sort-based closed form.
        #[test]
        fn agrees_with_core((w, x, v, b, pos, frac, kind) in instance()) {
            let n = w.len();
            let v: Vec<f64> = match kind { 0 => vec![1.0; n], 1 => v.iter().map(|&a| if a == 0.0 { 0.0 } else { 1.0 }).collect(), _ => v };
            let total: f64 = v.iter().sum();
            prop_assume!(total > 0.0);
            let budget = if kind == 2 { frac * total } else { (frac * total).floor().min(total - 1.0).max(0.0) };
            let fb = FeatureBudget::try_new(v, budget).unwrap();
            let y = if pos { Sign::Pos } else { Sign::Neg };
            let mut s = DeletionScratch::default();
            let core = fb.worst_case_deletion(&w, b, RowView::Dense(&x), y, &mut s);
            let mut fast = FastBudget::new(&fb);
            for row in [RowView::Dense(&x), RowView::Sparse {
                indices: &(0..n).filter(|&j| x[j] != 0.0).collect::<Vec<_>>(),
                values: &x.iter().copied().filter(|v| *v != 0.0).collect::<Vec<_>>(),
            }] {
                let val = fast.value(&w, b, row, y);
                prop_assert!((val - core.value).abs() <= 1e-12 * (1.0 + core.value.abs()), "{val} vs {}", core.value);
                let mut a = fast.deleted().to_vec();
                let mut c = s.deleted().to_vec();
                a.sort_by(|p, q| p.0.cmp(&q.0));
                c.sort_by(|p, q| p.0.cmp(&q.0));
                prop_assert_eq!(a.len(), c.len());
                for (p, q) in a.iter().zip(&c) {
                    prop_assert_eq!(p.0, q.0);
                    prop_assert!((p.1 - q.1).abs() <= 1e-12, "{:?} vs {:?}", p, q);
                }
            }
        }
    }
}
