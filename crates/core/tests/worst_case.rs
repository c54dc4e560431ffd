//! The closed-form worst-case deletion loss against independent computations:
//! brute force over every deletion set (v ∈ {0,1}, integer N: exact by DSX Lemma 1(c)), and a
//! general LP solver (clarabel) on the relaxation (7) for general v.

use bulwark_core::{DeletionScratch, FeatureBudget, RowView, Sign};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use proptest::prelude::*;

/// Exact loss (29): max over deletion sets D with V(D) ≤ N of [V(J)/P − y(b + Σ_J w_j x_j)]_+.
fn brute_force_29(v: &[f64], n_budget: f64, w: &[f64], b: f64, x: &[f64], y: f64) -> f64 {
    let n = v.len();
    let total: f64 = v.iter().sum();
    let p = total - n_budget;
    let mut best = f64::NEG_INFINITY;
    for mask in 0u32..(1 << n) {
        let deleted_value: f64 = (0..n).filter(|j| mask >> j & 1 == 1).map(|j| v[j]).sum();
        if deleted_value > n_budget + 1e-12 {
            continue;
        }
        let kept: Vec<usize> = (0..n).filter(|j| mask >> j & 1 == 0).collect();
        let vj: f64 = kept.iter().map(|&j| v[j]).sum();
        let score = b + kept.iter().map(|&j| w[j] * x[j]).sum::<f64>();
        best = best.max(vj / p - y * score);
    }
    best.max(0.0)
}

/// Relaxation (7) solved by clarabel: θ = y b + min Σ τ_j (y w_j x_j − v_j/P) over
/// τ ∈ [0,1]ⁿ, Σ τ_j v_j ≥ P; the LP (4) loss is [−θ]_+.
fn clarabel_relaxation_7(v: &[f64], n_budget: f64, w: &[f64], b: f64, x: &[f64], y: f64) -> f64 {
    let n = v.len();
    let p = v.iter().sum::<f64>() - n_budget;
    let q: Vec<f64> = (0..n).map(|j| y * w[j] * x[j] - v[j] / p).collect();
    // rows: τ_j ≤ 1 (n rows), −τ_j ≤ 0 (n rows), −Σ v_j τ_j ≤ −P (1 row)
    let rows = 2 * n + 1;
    let mut colptr = vec![0usize];
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    for j in 0..n {
        rowval.extend([j, n + j, 2 * n]);
        nzval.extend([1.0, -1.0, -v[j]]);
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(rows, n, colptr, rowval, nzval);
    let mut rhs = vec![1.0; n];
    rhs.extend(std::iter::repeat_n(0.0, n));
    rhs.push(-p);
    let pm = CscMatrix::zeros((n, n));
    let cones = [SupportedConeT::NonnegativeConeT(rows)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-11)
        .tol_gap_rel(1e-11)
        .tol_feas(1e-11)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&pm, &q, &a, &rhs, &cones, settings).unwrap();
    solver.solve();
    assert_eq!(solver.solution.status, SolverStatus::Solved);
    let theta = y * b + solver.solution.obj_val;
    (-theta).max(0.0)
}

fn loss(
    v: &[f64],
    n_budget: f64,
    w: &[f64],
    b: f64,
    x: &[f64],
    y: Sign,
) -> (f64, Vec<(usize, f64)>) {
    let budget = FeatureBudget::try_new(v.to_vec(), n_budget).unwrap();
    let mut s = DeletionScratch::default();
    let wc = budget.worst_case_deletion(w, b, RowView::Dense(x), y, &mut s);
    (wc.loss, s.deleted().to_vec())
}

#[test]
fn worked_example_from_the_notes() {
    // DSX notes A3: ξ = 0.3 (relaxed), integer worst case 0.1333
    let (v, w, x) = ([0.5, 1.0, 1.0], [1.0, 1.0, 1.0], [0.9, 1.0, 0.2]);
    let (l, deleted) = loss(&v, 1.0, &w, 0.0, &x, Sign::Pos);
    assert!((l - 0.3).abs() < 1e-12, "{l}");
    assert_eq!(deleted.len(), 2);
    assert_eq!(deleted[0], (0, 1.0));
    assert_eq!(deleted[1].0, 1);
    assert!((deleted[1].1 - 0.5).abs() < 1e-12);
    let exact = brute_force_29(&v, 1.0, &w, 0.0, &x, 1.0);
    assert!((exact - 0.4 / 3.0).abs() < 1e-12, "{exact}");
}

#[test]
fn sparse_and_dense_rows_agree() {
    let v = [1.0, 0.0, 2.0, 1.0, 0.5];
    let w = [0.3, -1.0, 0.7, 0.2, -0.4];
    let dense = [0.0, -2.0, 1.0, 0.0, -1.0];
    let budget = FeatureBudget::try_new(v.to_vec(), 1.7).unwrap();
    let mut s = DeletionScratch::default();
    let a = budget.worst_case_deletion(&w, 0.1, RowView::Dense(&dense), Sign::Pos, &mut s);
    let b = budget.worst_case_deletion(
        &w,
        0.1,
        RowView::Sparse {
            indices: &[1, 2, 4],
            values: &[-2.0, 1.0, -1.0],
        },
        Sign::Pos,
        &mut s,
    );
    assert_eq!(a, b);
}

#[test]
fn budget_validation_names_the_parameter() {
    let e = FeatureBudget::try_new(vec![1.0, 1.0], 2.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("budget") && e.contains("V([n])"), "{e}");
    let e = FeatureBudget::try_new(vec![1.0, -1.0], 0.5)
        .unwrap_err()
        .to_string();
    assert!(e.contains("values[2]"), "{e}");
    let e = FeatureBudget::try_new(vec![1.0, f64::NAN], 0.5)
        .unwrap_err()
        .to_string();
    assert!(e.contains("values[2]"), "{e}");
    assert!(FeatureBudget::try_new(vec![1.0, 1.0], -0.1).is_err());
    assert!(FeatureBudget::try_new(vec![1.0, 1.0], f64::INFINITY).is_err());
}

fn instance(max_n: usize) -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<f64>, f64, bool)> {
    (1..=max_n).prop_flat_map(|n| {
        (
            prop::collection::vec(-2.0f64..2.0, n),
            prop::collection::vec(prop_oneof![3 => -2.0f64..2.0, 1 => Just(0.0)], n),
            prop::collection::vec(0u8..=1, n),
            -1.0f64..1.0,
            any::<bool>(),
        )
            .prop_map(|(w, x, v, b, y)| (w, x, v.into_iter().map(f64::from).collect(), b, y))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// v ∈ {0,1}, integer N: the closed form equals brute force over all deletion sets.
    #[test]
    fn integral_values_match_brute_force((w, x, v, b, pos) in instance(10), frac in 0.0f64..1.0) {
        let total: f64 = v.iter().sum();
        prop_assume!(total >= 1.0);
        let n_budget = (frac * total).floor().min(total - 1.0);
        let y = if pos { Sign::Pos } else { Sign::Neg };
        let (l, deleted) = loss(&v, n_budget, &w, b, &x, y);
        let exact = brute_force_29(&v, n_budget, &w, b, &x, y.as_f64());
        prop_assert!((l - exact).abs() <= 1e-9 * (1.0 + exact.abs()), "closed form {l} vs brute force {exact}");
        prop_assert!(deleted.iter().all(|&(_, s)| s == 1.0), "integral case must delete whole features");
    }

    /// General v: the closed form equals clarabel on relaxation (7), bounds the exact integer
    /// worst case from above, and deletes at most one feature fractionally.
    #[test]
    fn general_values_match_lp_relaxation(
        (w, x, _v, b, pos) in instance(8),
        raw_v in prop::collection::vec(prop_oneof![4 => 0.05f64..3.0, 1 => Just(0.0)], 8),
        frac in 0.0f64..0.999,
    ) {
        let n = w.len();
        let v = raw_v[..n].to_vec();
        let total: f64 = v.iter().sum();
        prop_assume!(total > 1e-3);
        let n_budget = frac * total;
        let y = if pos { Sign::Pos } else { Sign::Neg };
        let (l, deleted) = loss(&v, n_budget, &w, b, &x, y);
        let lp = clarabel_relaxation_7(&v, n_budget, &w, b, &x, y.as_f64());
        prop_assert!((l - lp).abs() <= 1e-6 * (1.0 + lp.abs()), "closed form {l} vs clarabel {lp}");
        let exact = brute_force_29(&v, n_budget, &w, b, &x, y.as_f64());
        prop_assert!(exact <= l + 1e-9, "integer worst case {exact} exceeds relaxation {l}");
        prop_assert!(deleted.iter().filter(|(_, s)| *s < 1.0).count() <= 1);
        // DSX §A3: the loss is ≥ 1 whenever some admissible deletion causes a mistake
        let total_v: f64 = v.iter().sum();
        let p = total_v - n_budget;
        for mask in 0u32..(1 << n) {
            let dv: f64 = (0..n).filter(|j| mask >> j & 1 == 1).map(|j| v[j]).sum();
            if dv <= n_budget {
                let s = b + (0..n).filter(|j| mask >> j & 1 == 0).map(|j| w[j] * x[j]).sum::<f64>();
                if y.as_f64() * s <= 0.0 {
                    prop_assert!(l >= 1.0 - 1e-9, "mistake possible but loss {l} < 1 (P = {p})");
                }
            }
        }
    }
}

/// The closed form by sorting (the textbook greedy of notes A3, DSX §A3): free deletions, then
/// the candidates `r_j > 1/P` by ratio ↓ (ties: index ↑), whole while they fit, then one
/// fractionally. Returns the value inside the hinge and the deleted `(j, σ_j)`.
fn sorted_greedy(
    v: &[f64],
    n_budget: f64,
    w: &[f64],
    b: f64,
    x: &[f64],
    y: f64,
) -> (f64, Vec<(usize, f64)>) {
    let total: f64 = v.iter().sum();
    let inv_p = 1.0 / (total - n_budget);
    let margin = b + (0..x.len()).map(|j| w[j] * x[j]).sum::<f64>();
    let (mut gain, mut deleted, mut cand) = (0.0, Vec::new(), Vec::new());
    for j in 0..x.len() {
        let c = y * w[j] * x[j];
        if x[j] == 0.0 {
            continue;
        }
        if v[j] == 0.0 {
            if c > 0.0 {
                deleted.push((j, 1.0));
                gain += c;
            }
        } else if c / v[j] > inv_p {
            cand.push((c / v[j], j));
        }
    }
    cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = n_budget;
    for (_, j) in cand {
        if left <= 0.0 {
            break;
        }
        let profit = y * w[j] * x[j] - v[j] * inv_p;
        if v[j] <= left {
            deleted.push((j, 1.0));
            gain += profit;
            left -= v[j];
        } else {
            deleted.push((j, left / v[j]));
            gain += left / v[j] * profit;
            left = 0.0;
        }
    }
    (total * inv_p - y * margin + gain, deleted)
}

#[allow(clippy::type_complexity)]
fn selection_instance() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<f64>, f64, bool, f64, u8)>
{
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

    /// The selection-based evaluation (no sort) returns the value (to rounding) and the deleted
    /// set of the sorted greedy, on dense and sparse rows, for uniform, 0/1 and general values
    /// and integral or fractional budgets (ties included: `w`, `x` and `v` repeat values).
    #[test]
    fn selection_matches_the_sorted_greedy((w, x, v, b, pos, frac, kind) in selection_instance()) {
        let n = w.len();
        let v: Vec<f64> = match kind {
            0 | 3 => vec![1.0; n],
            1 => v.iter().map(|&a| if a == 0.0 { 0.0 } else { 1.0 }).collect(),
            _ => v,
        };
        let total: f64 = v.iter().sum();
        prop_assume!(total > 0.0);
        let n_budget = if kind >= 2 {
            frac * total
        } else {
            (frac * total).floor().min(total - 1.0).max(0.0)
        };
        let budget = FeatureBudget::try_new(v.clone(), n_budget).unwrap();
        let y = if pos { Sign::Pos } else { Sign::Neg };
        let (value, mut expected) = sorted_greedy(&v, n_budget, &w, b, &x, y.as_f64());
        expected.sort_by_key(|p| p.0);
        let indices: Vec<usize> = (0..n).filter(|&j| x[j] != 0.0).collect();
        let values: Vec<f64> = indices.iter().map(|&j| x[j]).collect();
        let mut s = DeletionScratch::default();
        for row in [RowView::Dense(&x), RowView::Sparse { indices: &indices, values: &values }] {
            let wc = budget.worst_case_deletion(&w, b, row, y, &mut s);
            prop_assert!((wc.value - value).abs() <= 1e-12 * (1.0 + value.abs()), "{} vs {value}", wc.value);
            let mut got = s.deleted().to_vec();
            got.sort_by_key(|p| p.0);
            prop_assert_eq!(got.len(), expected.len());
            for (p, q) in got.iter().zip(&expected) {
                prop_assert_eq!(p.0, q.0);
                prop_assert!((p.1 - q.1).abs() <= 1e-12, "{:?} vs {:?}", p, q);
            }
        }
    }
}

#[test]
fn serde_round_trip_revalidates() {
    let budget = FeatureBudget::try_new(vec![0.5, 1.0, 0.0], 1.2).unwrap();
    let json = serde_json::to_string(&budget).unwrap();
    assert_eq!(json, r#"{"values":[0.5,1.0,0.0],"budget":1.2,"total":1.5}"#);
    let back: FeatureBudget = serde_json::from_str(&json).unwrap();
    assert_eq!(back, budget);
    let bad = r#"{"values":[0.5,1.0],"budget":1.5,"total":1.5}"#;
    let e = serde_json::from_str::<FeatureBudget>(bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("budget"), "{e}");
}
