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

/// The budget in the form the inner loop wants, with candidate buffers kept between calls
/// (struct-of-arrays: ratio, feature, `c_j`).
#[derive(Debug, Clone)]
pub(crate) struct FastBudget {
    values: Vec<f64>,
    inv_values: Vec<f64>,
    budget: f64,
    total: f64,
    inv_p: f64,
    uniform: bool,
    has_zero: bool,
    rat: Vec<f64>,
    idx: Vec<usize>,
    idx32: Vec<u32>,
    cs: Vec<f64>,
    ratios: Vec<f64>,
    cand: Vec<Cand>,
    deleted: Vec<(usize, f64)>,
}

impl FastBudget {
    pub(crate) fn new(b: &FeatureBudget) -> Self {
        let values = b.values().to_vec();
        let n = values.len();
        Self {
            inv_values: values
                .iter()
                .map(|&v| if v > 0.0 { 1.0 / v } else { 0.0 })
                .collect(),
            uniform: values.iter().all(|&v| v == 1.0),
            has_zero: values.contains(&0.0),
            budget: b.budget(),
            total: b.total(),
            inv_p: 1.0 / b.p(),
            rat: vec![0.0; n],
            idx: vec![0; n],
            idx32: vec![0; n],
            cs: vec![0.0; n],
            ratios: Vec::with_capacity(n),
            cand: Vec::new(),
            deleted: Vec::with_capacity(n),
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
        self.deleted.clear();
        // Dense rows with uniform values (the common case): one fused pass computes the margin
        // (same 4-accumulator order as `dot4`) and the candidate features.
        if let RowView::Dense(v) = x
            && self.uniform
            && self.budget > 0.0
            && v.len() <= u32::MAX as usize
        {
            let n = v.len();
            let inv_p = self.inv_p;
            let (w, idx) = (&w[..n], &mut self.idx32[..n]);
            let mut s = [0.0f64; 4];
            let mut k = 0usize;
            let chunks = n / 4;
            for ch in 0..chunks {
                let j0 = 4 * ch;
                for l in 0..4 {
                    let p = w[j0 + l] * v[j0 + l];
                    s[l] += p;
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
            let margin = b + ((s[0] + s[1]) + (s[2] + s[3]) + tail);
            let mut gain = 0.0;
            if k > 0 {
                for t in 0..k {
                    let j = idx[t] as usize;
                    self.rat[t] = y * w[j] * v[j];
                    self.idx[t] = j;
                }
                gain = self.select(k, k as f64);
            }
            return self.total * inv_p - y * margin + gain;
        }
        let margin = b + match x {
            RowView::Dense(v) => dot4(v, w),
            RowView::Sparse { .. } => x.dot(w),
        };
        let mut gain = 0.0;
        if self.budget > 0.0 || self.has_zero {
            let inv_p = self.inv_p;
            let (k, cand_weight) = match x {
                RowView::Dense(v) if !self.has_zero => {
                    let n = v.len();
                    let (rat, idx) = (&mut self.rat[..n], &mut self.idx[..n]);
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
                        let (cs, iv) = (&mut self.cs[..n], &self.inv_values[..n]);
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
                                self.deleted.push((j, 1.0));
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
                            self.rat[k] = r;
                            self.cs[k] = c;
                            self.idx[k] = j;
                            k += 1;
                            weight += self.values[j];
                        }
                    }
                    if self.uniform {
                        // the uniform selection reads c from `rat`
                        self.rat[..k].copy_from_slice(&self.cs[..k]);
                    }
                    (k, weight)
                }
            };
            if self.budget > 0.0 && k > 0 {
                gain += self.select(k, cand_weight);
            }
        }
        self.total * self.inv_p - y * margin + gain
    }

    /// Greedy over the `k` candidates in the order (ratio ↓, index ↑) until the budget is
    /// spent, without sorting: returns the gain and fills `deleted`.
    fn select(&mut self, k: usize, cand_weight: f64) -> f64 {
        let inv_p = self.inv_p;
        let uniform = self.uniform;
        let (rat, idx, cs, values) = (&self.rat[..k], &self.idx[..k], &self.cs[..k], &self.values);
        let c_of = |t: usize| if uniform { rat[t] } else { cs[t] };
        let mut gain = 0.0;
        if cand_weight <= self.budget {
            // every candidate fits whole (each prefix sum ≤ the total ≤ budget)
            for t in 0..k {
                self.deleted.push((idx[t], 1.0));
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
            self.ratios.clear();
            self.ratios.extend_from_slice(rat);
            let (_, t, _) = self
                .ratios
                .select_nth_unstable_by(q - 1, |a, b| b.total_cmp(a));
            let t = *t;
            let mut full_left = whole;
            for s in 0..k {
                if rat[s] > t {
                    self.deleted.push((idx[s], 1.0));
                    gain += rat[s] - inv_p;
                    full_left -= 1;
                }
            }
            let mut frac_left = frac > 0.0;
            for s in 0..k {
                if rat[s] == t {
                    if full_left > 0 {
                        self.deleted.push((idx[s], 1.0));
                        gain += rat[s] - inv_p;
                        full_left -= 1;
                    } else if frac_left {
                        self.deleted.push((idx[s], frac));
                        gain += frac * (rat[s] - inv_p);
                        frac_left = false;
                    } else {
                        break;
                    }
                }
            }
            return gain;
        }
        self.cand.clear();
        self.cand.extend((0..k).map(|t| (rat[t], idx[t], cs[t])));
        let profit = |c: &Cand| c.2 - values[c.1] * inv_p;
        let cand = &mut self.cand[..];
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
                prop::collection::vec(
                    prop_oneof![3 => -2.0f64..2.0, 1 => Just(0.5), 1 => Just(-0.5)],
                    n,
                ),
                prop::collection::vec(
                    prop_oneof![3 => -1.0f64..1.0, 1 => Just(0.0), 1 => Just(1.0)],
                    n,
                ),
                prop::collection::vec(
                    prop_oneof![3 => 0.1f64..2.0, 1 => Just(0.0), 2 => Just(1.0)],
                    n,
                ),
                -1.0f64..1.0,
                any::<bool>(),
                0.0f64..1.0,
                0u8..4,
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Same value (to rounding) and the same deleted set as core's sort-based closed form.
        #[test]
        fn agrees_with_core((w, x, v, b, pos, frac, kind) in instance()) {
            let n = w.len();
            let v: Vec<f64> = match kind { 0 | 3 => vec![1.0; n], 1 => v.iter().map(|&a| if a == 0.0 { 0.0 } else { 1.0 }).collect(), _ => v };
            let total: f64 = v.iter().sum();
            prop_assume!(total > 0.0);
            let budget = if kind >= 2 { frac * total } else { (frac * total).floor().min(total - 1.0).max(0.0) };
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
                a.sort_by_key(|p| p.0);
                c.sort_by_key(|p| p.0);
                prop_assert_eq!(a.len(), c.len());
                for (p, q) in a.iter().zip(&c) {
                    prop_assert_eq!(p.0, q.0);
                    prop_assert!((p.1 - q.1).abs() <= 1e-12, "{:?} vs {:?}", p, q);
                }
            }
        }
    }
}
