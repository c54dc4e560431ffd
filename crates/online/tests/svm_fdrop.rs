//! SVM and FDROP against a clarabel QP solve of the same primal; FDROP with k = 0 is the SVM.

mod common;

use bulwark_core::{Classifier, Dataset, DenseMatrix, Fit, Sign};
use bulwark_online::{FdropParams, FdropSolver, SvmParams, fdrop_objective};
use common::{clarabel_fdrop, clarabel_fdrop_with, gaussian_data};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
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
            // zero out about a third of the entries, then store as CSR
            data.features_mut()
                .map_in_place(|_, x| if x.abs() < 0.45 { 0.0 } else { x })
                .unwrap();
            data = data.with_features(data.features().to_csr().into()).unwrap();
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
            k: 1,
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
    // the interior-point solver itself names its bad parameters
    let ipm = bulwark_deletion::FdropIpm {
        k: 1,
        c: 1.0,
        tolerance: 1e-8,
        max_iter: 200,
        threads: None,
        settings: bulwark_deletion::DsxIpmSettings::default(),
    };
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
                k: 3,
                ..ipm.clone()
            },
            "`k`",
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
