//! The exact worst-case deletion of one example — a 0/1 knapsack — and its three solvers: the DSX
//! greedy, the fractional relaxation, and the exact optimum (dynamic programming or branch and
//! bound), used by the exact deletion attack and by the certificates.
//!
//! # The objective
//!
//! For a linear model `(w, b)` and an example `(x, y)` the adversary deletes (sets to 0) a set
//! `D` of features with `Σ_{j∈D} v_j ≤ N` so as to **minimise the margin**
//!
//! ```text
//! y (b + Σ_{j∉D} w_j x_j)  =  m − Σ_{j∈D} c_j,      m = y (b + w·x),   c_j = y w_j x_j .
//! ```
//!
//! Equivalently it maximises the *damage* `Σ_{j∈D} c_j`: a 0/1 knapsack with item weights `v_j`
//! and profits `c_j`, where only items with `c_j > 0` are ever worth taking ([`items`]). The
//! example is **broken** iff the minimal margin is `≤ 0` (a score of 0 is a mistake), i.e. iff
//! the maximal damage is `≥ m`.
//!
//! * [`greedy`] — DSX §4: features by `c_j / v_j` descending (`v_j = 0` and `c_j > 0`: ratio
//!   `+∞`, a free deletion), ties by feature index; a feature that does not fit in what is left
//!   of the budget is **skipped and the scan continues** (DSX Errata 17). The bias is ignored.
//! * [`relaxation`] — the fractional knapsack (`σ_j ∈ [0, 1]`): the same order, the first item
//!   that does not fit is taken fractionally. It bounds the damage from above. (Core's
//!   `FeatureBudget::worst_case_deletion` is a different fractional knapsack — the hinge of LP (4),
//!   with threshold `r_j > 1/P` — and is not used here.)
//! * [`exact`] — the 0/1 optimum: dynamic programming when every `v_j` of a candidate item is an
//!   integer (capacity `⌊N⌋`, table at most [`DP_MAX_CELLS`]), otherwise depth-first branch and
//!   bound over the items in ratio order with the fractional bound, the greedy as first
//!   incumbent, and a node limit. When the limit is hit the best set found is returned with
//!   `complete = false` — never a wrong "exact".
//!
//! Always `greedy ≤ exact ≤ relaxation` (in damage); for `v ∈ {0,1}ⁿ` all three coincide
//! (the greedy deletes the free features and then the `⌊N⌋` largest contributions).

use serde::{Deserialize, Serialize};

use bulwark_core::{RowView, Sign};

/// One candidate deletion: feature `feature` with damage `damage = y w_j x_j > 0` and cost `v_j`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Feature index (0-based).
    pub feature: usize,
    /// `c_j = y w_j x_j` (> 0).
    pub damage: f64,
    /// `v_j` (≥ 0).
    pub cost: f64,
}

/// A set of deleted features.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Deletion {
    /// Deleted features, increasing.
    pub features: Vec<usize>,
    /// `Σ c_j` over the deleted features.
    pub damage: f64,
    /// `Σ v_j` over the deleted features (≤ N).
    pub cost: f64,
}

/// Which exact method produced a [`ExactDeletion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExactMethod {
    /// Nothing to decide: every candidate fits (or there is none).
    Trivial,
    /// Dynamic programming over the integer capacity `⌊N⌋`.
    DynamicProgramming,
    /// Branch and bound with the fractional bound.
    BranchAndBound,
}

/// Result of [`exact`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactDeletion {
    /// The best deletion found (the optimum when `complete`).
    pub deletion: Deletion,
    /// Whether optimality is proven (`false`: the node limit was hit).
    pub complete: bool,
    /// Branch-and-bound nodes visited (0 for DP / trivial).
    pub nodes: u64,
    /// The method used.
    pub method: ExactMethod,
}

/// Largest DP table (items × (capacity + 1)) before falling back to branch and bound.
pub const DP_MAX_CELLS: usize = 20_000_000;

/// Default per-example branch-and-bound node limit.
pub const DEFAULT_NODE_LIMIT: u64 = 1_000_000;

/// The candidate items of one example: features with `c_j = y w_j x_j > 0` (zero entries of `x`
/// and non-positive contributions are never worth deleting). `w` and `values` must cover every
/// column of `x` (callers validate shapes once).
pub fn items(w: &[f64], x: RowView<'_>, y: Sign, values: &[f64], out: &mut Vec<Item>) {
    out.clear();
    let y = y.as_f64();
    for (j, xj) in x.nonzeros() {
        let c = y * w[j] * xj;
        if c > 0.0 {
            out.push(Item {
                feature: j,
                damage: c,
                cost: values[j],
            });
        }
    }
}

/// Sorts by ratio `damage / cost` descending (cost 0: `+∞`), ties by feature index.
fn sort_by_ratio(items: &mut [Item]) {
    items.sort_by(|a, b| {
        ratio(b)
            .total_cmp(&ratio(a))
            .then(a.feature.cmp(&b.feature))
    });
}

#[inline]
fn ratio(it: &Item) -> f64 {
    if it.cost == 0.0 {
        f64::INFINITY
    } else {
        it.damage / it.cost
    }
}

/// The deletion made of `features` (each the feature of one of `items`).
fn finish(mut features: Vec<usize>, items: &[Item]) -> Deletion {
    features.sort_unstable();
    let mut by_feature: Vec<(usize, f64, f64)> = items
        .iter()
        .map(|it| (it.feature, it.damage, it.cost))
        .collect();
    by_feature.sort_unstable_by_key(|t| t.0);
    let (mut damage, mut cost) = (0.0, 0.0);
    for &j in &features {
        if let Ok(k) = by_feature.binary_search_by_key(&j, |t| t.0) {
            damage += by_feature[k].1;
            cost += by_feature[k].2;
        }
    }
    Deletion {
        features,
        damage,
        cost,
    }
}

/// The DSX greedy (skip-and-continue, ties by index). `items` need not be sorted.
pub fn greedy(items: &[Item], budget: f64) -> Deletion {
    let mut sorted = items.to_vec();
    sort_by_ratio(&mut sorted);
    let mut spent = 0.0;
    let mut chosen = Vec::new();
    for it in &sorted {
        if spent + it.cost <= budget {
            spent += it.cost;
            chosen.push(it.feature);
        }
    }
    finish(chosen, items)
}

/// The fractional-knapsack upper bound on the damage: `max Σ σ_j c_j` over `σ ∈ [0,1]`,
/// `Σ σ_j v_j ≤ N`.
pub fn relaxation(items: &[Item], budget: f64) -> f64 {
    let mut sorted = items.to_vec();
    sort_by_ratio(&mut sorted);
    let mut left = budget;
    let mut value = 0.0;
    for it in &sorted {
        if it.cost <= left {
            left -= it.cost;
            value += it.damage;
        } else {
            value += it.damage * (left / it.cost);
            break;
        }
    }
    value
}

/// The exact 0/1 worst case (see the module docs) with at most `node_limit` branch-and-bound
/// nodes.
pub fn exact(items: &[Item], budget: f64, node_limit: u64) -> ExactDeletion {
    solve(items, budget, node_limit, None).0
}

/// Decision version used by certification: stops as soon as a deletion with damage `≥ target`
/// is found, and prunes every branch whose bound is `< target`. `complete` then means "decided":
/// a deletion reaching the target was found (the returned flag; broken) or `max damage < target`
/// is proven (robust). The flag is the search's own comparison, so a rounding difference in the
/// re-summed `deletion.damage` cannot turn a found attack into a "robust" verdict.
pub(crate) fn decide(
    items: &[Item],
    budget: f64,
    node_limit: u64,
    target: f64,
) -> (ExactDeletion, bool) {
    solve(items, budget, node_limit, Some(target))
}

fn solve(
    items: &[Item],
    budget: f64,
    node_limit: u64,
    target: Option<f64>,
) -> (ExactDeletion, bool) {
    // Free deletions are always taken.
    let mut chosen: Vec<usize> = items
        .iter()
        .filter(|it| it.cost == 0.0)
        .map(|it| it.feature)
        .collect();
    let free_damage: f64 = items
        .iter()
        .filter(|it| it.cost == 0.0)
        .map(|it| it.damage)
        .sum();
    let mut rest: Vec<Item> = items
        .iter()
        .copied()
        .filter(|it| it.cost > 0.0 && it.cost <= budget)
        .collect();
    let total_cost: f64 = rest.iter().map(|it| it.cost).sum();
    let reached = |d: &Deletion| target.is_some_and(|t| d.damage >= t);
    if total_cost <= budget {
        chosen.extend(rest.iter().map(|it| it.feature));
        let deletion = finish(chosen, items);
        let r = reached(&deletion);
        let s = ExactDeletion {
            deletion,
            complete: true,
            nodes: 0,
            method: ExactMethod::Trivial,
        };
        return (s, r);
    }
    let sub_target = target.map(|t| t - free_damage);
    let integral = rest.iter().all(|it| it.cost.fract() == 0.0);
    let cap = budget.floor();
    if integral
        && cap < usize::MAX as f64
        && rest.len().saturating_mul(cap as usize + 1) <= DP_MAX_CELLS
    {
        chosen.extend(dynamic_programming(&rest, cap as usize));
        let deletion = finish(chosen, items);
        let r = reached(&deletion);
        let s = ExactDeletion {
            deletion,
            complete: true,
            nodes: 0,
            method: ExactMethod::DynamicProgramming,
        };
        return (s, r);
    }
    sort_by_ratio(&mut rest);
    let (picked, complete, nodes, hit) = branch_and_bound(&rest, budget, node_limit, sub_target);
    chosen.extend(picked);
    let deletion = finish(chosen, items);
    let r = hit || reached(&deletion);
    let s = ExactDeletion {
        deletion,
        complete,
        nodes,
        method: ExactMethod::BranchAndBound,
    };
    (s, r)
}

/// 0/1 knapsack by DP over integer capacities `0..=cap`; returns the chosen features.
fn dynamic_programming(items: &[Item], cap: usize) -> Vec<usize> {
    let width = cap + 1;
    let mut best = vec![0.0f64; width];
    let mut keep = vec![false; items.len() * width];
    for (i, it) in items.iter().enumerate() {
        let c = it.cost as usize;
        for r in (c..width).rev() {
            let cand = best[r - c] + it.damage;
            if cand > best[r] {
                best[r] = cand;
                keep[i * width + r] = true;
            }
        }
    }
    let mut r = cap;
    let mut out = Vec::new();
    for i in (0..items.len()).rev() {
        if keep[i * width + r] {
            out.push(items[i].feature);
            r -= items[i].cost as usize;
        }
    }
    out
}

struct Frame {
    i: usize,
    cap: f64,
    val: f64,
    state: u8,
    via_include: bool,
}

/// Depth-first branch and bound over items sorted by ratio (all costs > 0). Returns the chosen
/// features, whether the search finished (optimum proven or target reached), the node count and
/// whether the target was reached.
fn branch_and_bound(
    items: &[Item],
    budget: f64,
    node_limit: u64,
    target: Option<f64>,
) -> (Vec<usize>, bool, u64, bool) {
    let k = items.len();
    let mut wsum = vec![0.0; k + 1];
    let mut psum = vec![0.0; k + 1];
    for (i, it) in items.iter().enumerate() {
        wsum[i + 1] = wsum[i] + it.cost;
        psum[i + 1] = psum[i] + it.damage;
    }
    let tol = 1e-12 * (1.0 + psum[k]);
    // fractional bound of items i.. with capacity cap
    let bound = |i: usize, cap: f64| -> f64 {
        // largest t ≥ i with wsum[t] − wsum[i] ≤ cap
        let limit = wsum[i] + cap;
        let t = i + wsum[i..].partition_point(|&s| s <= limit) - 1;
        let mut v = psum[t] - psum[i];
        if t < k {
            let left = cap - (wsum[t] - wsum[i]);
            v += items[t].damage * (left.max(0.0) / items[t].cost);
        }
        v
    };
    // greedy incumbent (skip-and-continue in ratio order)
    let mut best_set = Vec::new();
    let mut best_val = 0.0;
    {
        let mut spent = 0.0;
        for it in items {
            if spent + it.cost <= budget {
                spent += it.cost;
                best_val += it.damage;
                best_set.push(it.feature);
            }
        }
    }
    if target.is_some_and(|t| best_val >= t) {
        return (best_set, true, 0, true);
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(k);
    let mut frames = vec![Frame {
        i: 0,
        cap: budget,
        val: 0.0,
        state: 0,
        via_include: false,
    }];
    let mut nodes = 0u64;
    let mut complete = true;
    while let Some(f) = frames.last_mut() {
        match f.state {
            0 => {
                nodes += 1;
                if nodes > node_limit {
                    complete = false;
                    break;
                }
                if f.val > best_val {
                    best_val = f.val;
                    best_set.clone_from(&chosen);
                    if target.is_some_and(|t| best_val >= t) {
                        break;
                    }
                }
                let prune = f.i == k || {
                    let ub = f.val + bound(f.i, f.cap);
                    ub <= best_val + tol || target.is_some_and(|t| ub < t - tol)
                };
                if prune {
                    let f = frames.pop().expect("non-empty");
                    if f.via_include {
                        chosen.pop();
                    }
                    continue;
                }
                f.state = 1;
                let it = items[f.i];
                if it.cost <= f.cap {
                    let child = Frame {
                        i: f.i + 1,
                        cap: f.cap - it.cost,
                        val: f.val + it.damage,
                        state: 0,
                        via_include: true,
                    };
                    chosen.push(it.feature);
                    frames.push(child);
                }
            }
            1 => {
                f.state = 2;
                let child = Frame {
                    i: f.i + 1,
                    cap: f.cap,
                    val: f.val,
                    state: 0,
                    via_include: false,
                };
                frames.push(child);
            }
            _ => {
                let f = frames.pop().expect("non-empty");
                if f.via_include {
                    chosen.pop();
                }
            }
        }
    }
    let hit = target.is_some_and(|t| best_val >= t);
    (best_set, complete || hit, nodes, hit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(feature: usize, damage: f64, cost: f64) -> Item {
        Item {
            feature,
            damage,
            cost,
        }
    }

    #[test]
    fn dsx_worked_example() {
        // w = 1, x = (0.9, 1.0, 0.2), v = (0.5, 1, 1), N = 1: greedy deletes feature 1 only
        let items = [it(0, 0.9, 0.5), it(1, 1.0, 1.0), it(2, 0.2, 1.0)];
        let g = greedy(&items, 1.0);
        assert_eq!(g.features, vec![0]);
        let e = exact(&items, 1.0, 1000);
        assert!((e.deletion.damage - 1.0).abs() < 1e-12, "{e:?}");
        assert_eq!(e.deletion.features, vec![1]);
        assert!(e.complete);
        assert_eq!(e.method, ExactMethod::BranchAndBound);
        assert!((relaxation(&items, 1.0) - 1.4).abs() < 1e-12);
    }

    #[test]
    fn skip_and_continue() {
        // ratio order: 0 (2.0), 1 (1.5, too big after 0), 2 (1.0)
        let items = [it(0, 2.0, 1.0), it(1, 3.0, 2.0), it(2, 1.0, 1.0)];
        assert_eq!(greedy(&items, 2.0).features, vec![0, 2]);
        let e = exact(&items, 2.0, 1000);
        assert_eq!(e.deletion.features, vec![1]);
        assert_eq!(e.method, ExactMethod::DynamicProgramming);
    }

    #[test]
    fn free_items_and_huge_budget() {
        let items = [it(3, 0.5, 0.0), it(1, 1.0, 2.0), it(0, 1.0, 2.5)];
        let g = greedy(&items, 0.0);
        assert_eq!(g.features, vec![3]);
        let e = exact(&items, 100.0, 10);
        assert_eq!(e.deletion.features, vec![0, 1, 3]);
        assert_eq!(e.method, ExactMethod::Trivial);
    }

    #[test]
    fn node_limit_reports_incomplete() {
        let items: Vec<Item> = (0..40)
            .map(|j| {
                it(
                    j,
                    1.0 + (j as f64 * 0.37).sin().abs(),
                    1.0 + (j as f64 * 0.71).cos().abs(),
                )
            })
            .collect();
        let s = exact(&items, 10.3, 5);
        assert!(!s.complete);
        assert!(s.deletion.damage >= greedy(&items, 10.3).damage);
        assert!(s.deletion.cost <= 10.3);
    }
}
