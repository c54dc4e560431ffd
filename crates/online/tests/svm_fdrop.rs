//! SVM and FDROP against a clarabel QP solve of the same primal; FDROP with k = 0 is the SVM.

mod common;

use bulwark_core::{Classifier, Dataset, DenseMatrix, FeatureValues, Fit, Sign, rng_from_seed};
use bulwark_online::{
    FdropParams, FdropSolver, SvmParams, fdrop_objective, fdrop_objective_valued,
};
use common::{clarabel_fdrop, clarabel_fdrop_valued, clarabel_fdrop_with, gaussian_data};
use rand::Rng as _;

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

/// `data` with about a third of its entries (those below 0.45 in magnitude) zeroed, stored as
/// CSR (exact zeros, whose deletion pairs LP (4)'s CSR layout drops).
fn sparsified(data: &Dataset) -> Dataset {
    let mut data = data.clone();
    data.features_mut()
        .map_in_place(|_, x| if x.abs() < 0.45 { 0.0 } else { x })
        .unwrap();
    data.with_features(data.features().to_csr().into()).unwrap()
}

#[test]
fn svm_matches_clarabel_on_random_data() {
    for (seed, (m, n, c, shift)) in [
        (40, 5, 1.0, 0.5),
        (60, 8, 10.0, 0.3),
        (50, 3, 0.1, 1.0),
        (80, 10, 100.0, 1.5),
        (30, 20, 1.0, 0.2),
    ]
    .into_iter()
    .enumerate()
    {
        let data = gaussian_data(m, n, shift, seed as u64);
        let fitted = SvmParams::new()
            .c(c)
            .tolerance(1e-9)
            .max_passes(100_000)
            .fit(&data)
            .unwrap();
        let (qp, _, _) = clarabel_fdrop(&data, c, 0);
        let ours = fitted.report.objective.unwrap();
        let check = fdrop_objective(&fitted.model, &data, c, 0).unwrap();
        assert!(
            rel(check, ours) < 1e-12,
            "reported {ours} vs recomputed {check}"
        );
        assert!(fitted.report.converged, "{:?}", fitted.report);
        assert!(
            rel(ours, qp) < 1e-6,
            "seed {seed}: ours {ours} vs clarabel {qp} ({:?})",
            fitted.report
        );
        let gap = fitted.report.details["duality_gap"];
        assert!(
            gap >= -1e-9 * ours && gap <= 1e-9 * ours.max(1.0) * 1.0001,
            "gap {gap}"
        );
        // the certified lower bound is below the QP optimum
        assert!(fitted.report.details["dual_objective"] <= qp * (1.0 + 1e-8));
    }
}

/// Without a bias (LIBLINEAR's formulation, `bias(false)`) the dual has no equality
/// constraint; the solver must still certify the QP optimum with `b = 0`.
#[test]
fn svm_without_bias_matches_clarabel() {
    for (seed, (m, n, c, shift)) in [
        (40, 5, 1.0, 0.5),
        (60, 8, 10.0, 0.3),
        (50, 3, 0.1, 1.0),
        (30, 20, 1.0, 0.2),
    ]
    .into_iter()
    .enumerate()
    {
        // off-centre classes, so the bias is a real degree of freedom
        let mut data = gaussian_data(m, n, shift, 100 + seed as u64);
        data.features_mut().map_in_place(|_, x| x + 1.5).unwrap();
        for k in [0, 2] {
            let fitted = FdropParams::new()
                .k(k)
                .c(c)
                .bias(false)
                .tolerance(1e-9)
                .max_passes(100_000)
                .fit(&data)
                .unwrap();
            assert_eq!(fitted.model.bias(), 0.0);
            assert!(fitted.report.converged, "{:?}", fitted.report);
            let ours = fitted.report.objective.unwrap();
            let check = fdrop_objective(&fitted.model, &data, c, k).unwrap();
            assert!(rel(check, ours) < 1e-12, "reported {ours} vs {check}");
            let (qp, _, _) = clarabel_fdrop_with(&data, c, k, false);
            assert!(
                rel(ours, qp) < 1e-6,
                "seed {seed} k {k}: ours {ours} vs clarabel {qp}"
            );
            assert!(fitted.report.details["dual_objective"] <= qp * (1.0 + 1e-8));
        }
    }
}

#[test]
fn fdrop_matches_clarabel_on_small_instances() {
    for (seed, (m, n, c, k)) in [
        (30, 5, 1.0, 1),
        (40, 6, 5.0, 2),
        (25, 4, 0.5, 3),
        (30, 8, 20.0, 4),
    ]
    .into_iter()
    .enumerate()
    {
        let data = gaussian_data(m, n, 0.8, 100 + seed as u64);
        let (qp, _, _) = clarabel_fdrop(&data, c, k);
        for (solver, name) in [
            (FdropSolver::DualCd, "dual-cd"),
            (FdropSolver::InteriorPoint, "dsx-ipm"),
        ] {
            let fitted = FdropParams::new()
                .k(k)
                .c(c)
                .tolerance(1e-9)
                .max_passes(200_000)
                .solver(solver)
                .fit(&data)
                .unwrap();
            // the solver asked for answered, not another
            assert_eq!(fitted.report.solver, name);
            let ours = fitted.report.objective.unwrap();
            let check = fdrop_objective(&fitted.model, &data, c, k).unwrap();
            assert!(
                rel(check, ours) < 1e-10,
                "{name}: reported {ours} vs recomputed {check}"
            );
            assert!(
                rel(ours, qp) < 1e-6,
                "{name} seed {seed} k {k}: ours {ours} vs clarabel {qp} ({:?})",
                fitted.report
            );
            assert!(fitted.report.converged, "{:?}", fitted.report);
        }
    }
}

/// The interior-point solver (the default for `k > 0`) against clarabel's QP over a wider range:
/// `C` from 0.01 to 100, budgets up to half the features, sparse data with exact zeros (whose
/// deletion pairs LP (4)'s CSR layout drops), and unbalanced classes.
#[test]
fn fdrop_interior_point_matches_clarabel() {
    for (seed, (m, n, c, k, sparse)) in [
        (40, 6, 0.01, 1, false),
        (50, 10, 1.0, 5, false),
        (35, 8, 100.0, 3, false),
        (60, 12, 3.0, 4, true),
        (45, 7, 0.3, 2, true),
    ]
    .into_iter()
    .enumerate()
    {
        let mut data = gaussian_data(m, n, 0.7, 300 + seed as u64);
        if sparse {
            data = sparsified(&data);
        }
        let fitted = FdropParams::new().k(k).c(c).fit(&data).unwrap();
        assert_eq!(
            fitted.report.solver, "dsx-ipm",
            "Auto picks the IPM for k > 0"
        );
        assert!(fitted.report.converged, "{:?}", fitted.report);
        let ours = fitted.report.objective.unwrap();
        let check = fdrop_objective(&fitted.model, &data, c, k).unwrap();
        assert!(
            rel(check, ours) < 1e-10,
            "reported {ours} vs recomputed {check}"
        );
        let (qp, _, _) = clarabel_fdrop(&data, c, k);
        assert!(
            rel(ours, qp) < 1e-7,
            "seed {seed} k {k} C {c}: ours {ours} vs clarabel {qp} ({:?})",
            fitted.report
        );
        // the box the method works in is never active: ‖w‖∞ well inside it
        let radius = fitted.report.details["box_radius"];
        let wmax = fitted
            .model
            .weights()
            .iter()
            .fold(0.0f64, |a, w| a.max(w.abs()));
        assert!(wmax < 0.9 * radius, "‖w‖∞ {wmax} vs box {radius}");
    }
}

/// Asked for 1e-9, the interior-point method's dual residual stalls at 3.8e-9 on this instance
/// (it then diverges to 8.7e-6: "dual residual diverging at the optimum"): FDROP's certificate
/// answers instead, with a certified gap within the tolerance at clarabel's optimum. With the
/// certificate off the run fails, so the certificate is what answered. (The instance of seed
/// 100, this test's before FDROP's IPM worked at the data's scale, `bulwark-deletion`'s
/// *Working scale*, now converges without the certificate.)
#[test]
fn fdrop_certificate_answers_where_the_dual_residual_stalls() {
    let data = gaussian_data(30, 5, 0.8, 17);
    let (qp, _, _) = clarabel_fdrop(&data, 1.0, 1);
    let solve = |certify_within: f64| {
        bulwark_deletion::FdropIpm {
            values: FeatureValues::Uniform,
            budget: 1.0,
            c: 1.0,
            tolerance: 1e-9,
            max_iter: 200,
            threads: Some(1),
            settings: bulwark_deletion::DsxIpmSettings::builder()
                .certify_within(certify_within)
                .build()
                .unwrap(),
        }
        .solve(&data)
        .unwrap()
    };
    let without = solve(0.0);
    assert!(!without.is_optimal(), "{without:?}");
    let sol = solve(100.0);
    assert!(sol.is_optimal(), "{sol:?}");
    assert!(sol.certified_from.is_some_and(|r| r > 1e-9), "{sol:?}");
    assert!(
        sol.gap <= 1e-9 && sol.dual_objective <= qp * (1.0 + 1e-8),
        "{sol:?}"
    );
    assert!(
        rel(sol.objective, qp) < 1e-7,
        "{} vs clarabel {qp}",
        sol.objective
    );
}

#[test]
fn fdrop_with_k_zero_is_the_svm() {
    let data = gaussian_data(70, 6, 0.6, 9);
    let svm = SvmParams::new().c(3.0).tolerance(1e-10).fit(&data).unwrap();
    let fd = FdropParams::new()
        .k(0)
        .c(3.0)
        .tolerance(1e-10)
        .fit(&data)
        .unwrap();
    assert_eq!(svm.model, fd.model);
    assert_eq!(svm.report.objective, fd.report.objective);
}

#[test]
fn svm_separates_separable_data_and_handles_sparse() {
    let data = gaussian_data(100, 4, 3.0, 3);
    let fitted = SvmParams::new().c(10.0).fit(&data).unwrap();
    assert_eq!(fitted.model.error_rate(&data).unwrap(), 0.0);
    let sparse = data.with_features(data.features().to_csr().into()).unwrap();
    let fs = SvmParams::new().c(10.0).fit(&sparse).unwrap();
    let fd_dense = FdropParams::new()
        .k(2)
        .c(2.0)
        .tolerance(1e-8)
        .fit(&data)
        .unwrap();
    let fd_sparse = FdropParams::new()
        .k(2)
        .c(2.0)
        .tolerance(1e-8)
        .fit(&sparse)
        .unwrap();
    assert!(fd_dense.report.converged && fd_sparse.report.converged);
    assert!(
        rel(
            fd_sparse.report.objective.unwrap(),
            fd_dense.report.objective.unwrap()
        ) < 1e-7
    );
    assert!(
        rel(
            fs.report.objective.unwrap(),
            fitted.report.objective.unwrap()
        ) < 1e-5
    );
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = gaussian_data(10, 3, 1.0, 1);
    for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = SvmParams::new().c(c).fit(&data).unwrap_err().to_string();
        assert!(e.contains("`C`"), "{e}");
        let e = FdropParams::new().c(c).fit(&data).unwrap_err().to_string();
        assert!(e.contains("`C`"), "{e}");
    }
    let e = SvmParams::new()
        .tolerance(0.0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("tolerance"), "{e}");
    let e = SvmParams::new()
        .max_passes(0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("max_passes"), "{e}");
    for solver in [FdropSolver::DualCd, FdropSolver::InteriorPoint] {
        let e = FdropParams::new()
            .k(4)
            .solver(solver)
            .fit(&data)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`k`"), "{e}");
    }
    let e = FdropParams::new()
        .k(1)
        .bias(false)
        .solver(FdropSolver::InteriorPoint)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`solver`"), "{e}");
    // the value-weighted budget: its values and budget named, the solvers that cannot take it
    let valued = |v: Vec<f64>, n: f64| FdropParams::new().values(FeatureValues::Given(v)).budget(n);
    for (params, name) in [
        (valued(vec![1.0, -1.0, 1.0], 1.0), "`values[2]`"),
        (valued(vec![1.0, f64::INFINITY, 1.0], 1.0), "`values[2]`"),
        (
            valued(vec![1.0, 2.0], 1.0),
            "feature values vs data features",
        ),
        (valued(vec![1.0, 2.0, 0.5], f64::NAN), "`budget`"),
        (valued(vec![1.0, 2.0, 0.5], -1.0), "`budget`"),
        (
            valued(vec![1.0, 2.0, 0.5], 1.0).solver(FdropSolver::DualCd),
            "`solver`",
        ),
        (valued(vec![1.0, 2.0, 0.5], 1.0).bias(false), "`bias`"),
        (
            FdropParams::new().values(FeatureValues::Given(vec![1.0, 2.0, 0.5])),
            "`values`",
        ),
        (
            FdropParams::new()
                .budget(0.0)
                .solver(FdropSolver::InteriorPoint),
            "`budget`",
        ),
    ] {
        let e = params.fit(&data).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
    // the interior-point solver itself names its bad parameters
    // unit values, N = 1, C = 1, tolerance 1e-8, 200 iterations
    let ipm = bulwark_deletion::FdropIpm::default();
    for (bad, name) in [
        (
            bulwark_deletion::FdropIpm {
                c: f64::NAN,
                ..ipm.clone()
            },
            "`C`",
        ),
        (
            bulwark_deletion::FdropIpm {
                tolerance: 0.0,
                ..ipm.clone()
            },
            "`tolerance`",
        ),
        (
            bulwark_deletion::FdropIpm {
                max_iter: 0,
                ..ipm.clone()
            },
            "`max_iter`",
        ),
        (
            bulwark_deletion::FdropIpm {
                budget: 3.0,
                ..ipm.clone()
            },
            "`budget`",
        ),
        (
            bulwark_deletion::FdropIpm {
                budget: 0.0,
                ..ipm.clone()
            },
            "`budget`",
        ),
        (
            bulwark_deletion::FdropIpm {
                values: FeatureValues::Given(vec![1.0, -0.5, 1.0]),
                ..ipm.clone()
            },
            "`values[2]`",
        ),
        (
            bulwark_deletion::FdropIpm {
                values: FeatureValues::Given(vec![1.0, 1.0, f64::NAN]),
                ..ipm.clone()
            },
            "`values[3]`",
        ),
        (
            bulwark_deletion::FdropIpm {
                values: FeatureValues::Given(vec![1.0, 1.0]),
                ..ipm.clone()
            },
            "feature values vs data features",
        ),
    ] {
        let e = bad.solve(&data).unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
    }
    let one = Dataset::binary(
        "one",
        DenseMatrix::from_rows(&[vec![1.0], vec![2.0]]).unwrap(),
        vec![Sign::Pos; 2],
    )
    .unwrap();
    let e = SvmParams::new().fit(&one).unwrap_err();
    assert!(matches!(e, bulwark_core::Error::SingleClass { .. }), "{e}");
}

/// Random feature values in `[0.2, 3]`, every `zero_every`-th one 0 (free deletions).
fn random_values(n: usize, zero_every: usize, seed: u64) -> Vec<f64> {
    let mut rng = rng_from_seed(seed);
    (0..n)
        .map(|j| {
            if zero_every > 0 && j % zero_every == zero_every - 1 {
                0.0
            } else {
                rng.random_range(0.2..3.0)
            }
        })
        .collect()
}

/// The adversary's inner maximum `max Σ_j σ_j h_j` over `σ ∈ [0, 1]^n`, `Σ_j σ_j v_j ≤ N`, of
/// the positive harms `h_j`, computed twice and independently of the library: by the
/// fractional knapsack (features by `h_j / v_j`, largest first, value 0 first, until `N` is
/// spent) and by its LP dual `min_{t ≥ 0} N t + Σ_j [h_j − v_j t]_+`, a convex piecewise-linear
/// function of `t` minimised at 0 or at a breakpoint `h_j / v_j`; the two must agree.
fn inner_max(h: &[f64], v: &[f64], budget: f64) -> f64 {
    let mut order: Vec<usize> = (0..h.len()).filter(|&j| h[j] > 0.0).collect();
    let key = |j: usize| if v[j] == 0.0 { f64::MAX } else { h[j] / v[j] };
    order.sort_by(|&a, &b| key(b).partial_cmp(&key(a)).unwrap());
    let (mut left, mut knapsack) = (budget, 0.0);
    for j in order {
        let take = if v[j] == 0.0 {
            1.0
        } else {
            (left / v[j]).min(1.0)
        };
        knapsack += take * h[j];
        left -= take * v[j];
        if left <= 0.0 {
            left = 0.0;
        }
    }
    let dual_at = |t: f64| {
        budget * t
            + h.iter()
                .zip(v)
                .map(|(&hj, &vj)| (hj - vj * t).max(0.0))
                .sum::<f64>()
    };
    let dual = std::iter::once(0.0)
        .chain(
            (0..h.len())
                .filter(|&j| v[j] > 0.0 && h[j] > 0.0)
                .map(|j| h[j] / v[j]),
        )
        .map(dual_at)
        .fold(f64::INFINITY, f64::min);
    assert!(
        (knapsack - dual).abs() <= 1e-12 * (1.0 + dual.abs()),
        "knapsack {knapsack} vs its dual {dual}"
    );
    knapsack
}

/// The value-weighted FDROP objective of `(w, b)` from [`inner_max`] (no library code).
fn independent_objective(w: &[f64], b: f64, data: &Dataset, c: f64, v: &[f64], n: f64) -> f64 {
    let y = data.binary_labels().unwrap();
    let mut x = vec![0.0; data.n_features()];
    let mut loss = 0.0;
    for (i, yi) in y.iter().enumerate() {
        let yi = yi.as_f64();
        data.row(i).to_dense_into(&mut x);
        let h: Vec<f64> = x.iter().zip(w).map(|(xj, wj)| yi * wj * xj).collect();
        let margin = yi * (b + x.iter().zip(w).map(|(xj, wj)| xj * wj).sum::<f64>());
        loss += (1.0 - margin + inner_max(&h, v, n)).max(0.0);
    }
    0.5 * w.iter().map(|a| a * a).sum::<f64>() + c * loss
}

/// FDROP with a value-weighted budget (random values, some of them 0, fractional budgets, dense
/// and sparse data): the interior-point answer is certified optimal, its reported objective is
/// the library's value-weighted objective and an independent computation of it (the knapsack
/// and its dual, [`inner_max`]), and it matches clarabel's QP of the same primal to 1e-6.
#[test]
fn fdrop_value_weighted_matches_clarabel_and_an_independent_objective() {
    for (seed, (m, n, c, budget, zero_every, sparse)) in [
        (30, 5, 1.0, 1.5, 0, false),
        (40, 6, 5.0, 2.0, 4, false),
        (35, 8, 0.3, 4.7, 3, false),
        (50, 10, 20.0, 3.2, 0, true),
        (45, 7, 1.0, 0.4, 5, true),
        (40, 6, 2.0, 6.5, 0, false),
    ]
    .into_iter()
    .enumerate()
    {
        let seed = seed as u64;
        let mut data = gaussian_data(m, n, 0.7, 500 + seed);
        if sparse {
            data = sparsified(&data);
        }
        let v = random_values(n, zero_every, 600 + seed);
        assert!(budget < v.iter().sum::<f64>());
        let fitted = FdropParams::new()
            .values(FeatureValues::Given(v.clone()))
            .budget(budget)
            .c(c)
            .fit(&data)
            .unwrap();
        assert_eq!(fitted.report.solver, "dsx-ipm");
        assert!(fitted.report.converged, "{:?}", fitted.report);
        assert_eq!(fitted.report.details["budget"], budget);
        let ours = fitted.report.objective.unwrap();
        let (w, b) = (fitted.model.weights(), fitted.model.bias());
        let library = fdrop_objective_valued(&fitted.model, &data, c, &v, budget).unwrap();
        let independent = independent_objective(w, b, &data, c, &v, budget);
        assert!(rel(library, ours) < 1e-12, "{ours} vs library {library}");
        assert!(
            rel(independent, ours) < 1e-10,
            "seed {seed}: {ours} vs independent {independent}"
        );
        let (qp, _, _) = clarabel_fdrop_valued(&data, c, &v, budget, true);
        assert!(
            rel(ours, qp) < 1e-6,
            "seed {seed} N {budget} C {c}: ours {ours} vs clarabel {qp} ({:?})",
            fitted.report
        );
        // the certified lower bound is below the QP optimum
        assert!(fitted.report.details["dual_objective"] <= qp * (1.0 + 1e-8));
        // the solver itself, certified optimal
        let sol = bulwark_deletion::FdropIpm {
            values: FeatureValues::Given(v.clone()),
            budget,
            c,
            ..Default::default()
        }
        .solve(&data)
        .unwrap();
        assert!(sol.is_optimal(), "{sol:?}");
        assert!(rel(sol.objective, qp) < 1e-6, "{} vs {qp}", sol.objective);
    }
}

/// Unit values and an integer budget `N = k` are the `k` form to the bit: the same model from
/// `k(k)`, from `budget(k)` with uniform values and from `budget(k)` with given unit values, for
/// both solvers' ranges (`k = 0`: the SVM; `0 < k < n`: the IPM; `k = n`: dual CD), dense and
/// sparse; and the same bits from the IPM itself.
#[test]
fn fdrop_unit_values_are_the_k_form_bit_for_bit() {
    let bits = |m: &bulwark_core::LinearModel| {
        let mut b: Vec<u64> = m.weights().iter().map(|w| w.to_bits()).collect();
        b.push(m.bias().to_bits());
        b
    };
    for (seed, (m, n, c, k, sparse)) in [
        (40, 6, 1.0, 0, false),
        (40, 6, 1.0, 2, false),
        (50, 10, 3.0, 5, true),
        (30, 5, 0.5, 5, false),
    ]
    .into_iter()
    .enumerate()
    {
        let mut data = gaussian_data(m, n, 0.7, 700 + seed as u64);
        if sparse {
            data = sparsified(&data);
        }
        let base = FdropParams::new().c(c).tolerance(1e-8);
        let by_k = base.clone().k(k).fit(&data).unwrap();
        for other in [
            base.clone().budget(k as f64),
            base.clone()
                .budget(k as f64)
                .values(FeatureValues::Given(vec![1.0; n])),
        ] {
            let fit = other.fit(&data).unwrap();
            assert_eq!(bits(&fit.model), bits(&by_k.model), "seed {seed} k {k}");
            assert_eq!(fit.report.objective, by_k.report.objective);
            assert_eq!(fit.report.solver, by_k.report.solver);
        }
        if k > 0 && k < n {
            let ipm = |values| {
                bulwark_deletion::FdropIpm {
                    values,
                    budget: k as f64,
                    c,
                    ..Default::default()
                }
                .solve(&data)
                .unwrap()
            };
            let (a, b) = (
                ipm(FeatureValues::Uniform),
                ipm(FeatureValues::Given(vec![1.0; n])),
            );
            let shorthand = bulwark_deletion::FdropIpm {
                c,
                ..Default::default()
            }
            .k(k)
            .solve(&data)
            .unwrap();
            for s in [&b, &shorthand] {
                assert_eq!(
                    s.w.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
                    a.w.iter().map(|w| w.to_bits()).collect::<Vec<_>>()
                );
                assert_eq!(s.b.to_bits(), a.b.to_bits());
                assert_eq!(s.objective.to_bits(), a.objective.to_bits());
                assert_eq!(s.iterations, a.iterations);
            }
        }
    }
}

/// A budget of 0 with features of value 0 that have entries: the adversary deletes those for
/// free, so FDROP is the SVM on the other features (their weights 0), which clarabel's QP of the
/// value-weighted primal confirms; without such features a budget of 0 is the SVM itself.
#[test]
fn fdrop_zero_budget_deletes_the_free_features() {
    let data = gaussian_data(40, 5, 0.6, 21);
    let v = vec![1.0, 0.0, 2.0, 0.0, 0.5];
    let fitted = FdropParams::new()
        .values(FeatureValues::Given(v.clone()))
        .budget(0.0)
        .c(2.0)
        .tolerance(1e-10)
        .fit(&data)
        .unwrap();
    assert_eq!(fitted.model.weights()[1], 0.0);
    assert_eq!(fitted.model.weights()[3], 0.0);
    let ours = fitted.report.objective.unwrap();
    let independent = independent_objective(
        fitted.model.weights(),
        fitted.model.bias(),
        &data,
        2.0,
        &v,
        0.0,
    );
    assert!(rel(independent, ours) < 1e-12, "{ours} vs {independent}");
    let (qp, _, _) = clarabel_fdrop_valued(&data, 2.0, &v, 0.0, true);
    assert!(rel(ours, qp) < 1e-6, "{ours} vs clarabel {qp}");
    // without free features: the SVM, to the bit
    let svm = SvmParams::new().c(2.0).tolerance(1e-10).fit(&data).unwrap();
    let fd = FdropParams::new()
        .values(FeatureValues::Given(vec![1.0, 0.3, 2.0, 0.7, 0.5]))
        .budget(0.0)
        .c(2.0)
        .tolerance(1e-10)
        .fit(&data)
        .unwrap();
    assert_eq!(svm.model, fd.model);
}

/// The `k` form's models are those of the code before the value-weighted budget (commit
/// da25cce), to the bit, and so is the same problem given as unit values and a budget `N = k`:
/// the weights, bias and objective of two IPM fits (dense, and sparse with exact zeros)
/// recorded from that code.
#[test]
fn fdrop_k_form_keeps_its_bits() {
    let golden: [&[u64]; 2] = [
        &[
            0x3fdc1c9b1a45af25,
            0x3fd5fc2fbf657180,
            0x3fd00c0ee282f8f6,
            0x3fdea2db0f139d58,
            0x3fd8229d0e2a0cd5,
            0x3fdaa46bf6611299,
            0x3fe13ac6aa87bfd9,
            0x3fe0a917841ae317,
            0x3fe72ecc56163c08,
            0x3fd9a132bf062a4e,
            0xbfb2e989988e05f5,
            0x403e5c2ba484bc02,
        ],
        &[
            0x3fd91c1f2363b02c,
            0x3fe0eccfef080bc4,
            0x3fe298e62c3530a8,
            0x3fe2728ef57ed148,
            0x3fd45cc89b412d97,
            0x3fd2ab46137ecfc5,
            0x3fe020b95f7cd219,
            0x3fdaa1e30dee0011,
            0x3fec8d9df5b0699a,
            0x3febcaf11ea99169,
            0x3fe5bcffb6e1addf,
            0x3fe89a69a7ce669f,
            0x3fc026570fa0bf8d,
            0x405a367d65a97af1,
        ],
    ];
    for (seed, (m, n, c, k, sparse)) in [(50, 10, 1.0, 3, false), (60, 12, 3.0, 4, true)]
        .into_iter()
        .enumerate()
    {
        let mut data = gaussian_data(m, n, 0.7, 900 + seed as u64);
        if sparse {
            data = sparsified(&data);
        }
        for params in [
            FdropParams::new().k(k),
            FdropParams::new().budget(k as f64),
            FdropParams::new()
                .budget(k as f64)
                .values(FeatureValues::Given(vec![1.0; n])),
        ] {
            let f = params.c(c).fit(&data).unwrap();
            assert_eq!(f.report.solver, "dsx-ipm");
            let mut bits: Vec<u64> = f.model.weights().iter().map(|w| w.to_bits()).collect();
            bits.push(f.model.bias().to_bits());
            bits.push(f.report.objective.unwrap().to_bits());
            assert_eq!(bits, golden[seed], "seed {seed}");
        }
    }
}
