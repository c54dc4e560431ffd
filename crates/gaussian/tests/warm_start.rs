//! Warm starts of the certified batch solvers along a σ path (M-GURU, Ginodi (5.14); KEN-GURU,
//! the kernel form of (2.22)): a fit started from the optimum at the next larger σ is certified
//! and lands on the cold fit's optimum to 1e-8 relative, on random instances — including
//! separable ones at small σ, where the optimum lies in the Gaussian tail (objective values of
//! 1e-10 and below) and the multiclass certificate's pair weights span many orders of magnitude.
//! Warm starts of the wrong shape are typed errors.

mod common;

use bulwark_core::Kernel;
use bulwark_gaussian::{KenGuruParams, MGuruParams, Solver};
use common::{binary, classes};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

#[test]
fn warm_started_m_guru_lands_on_the_cold_optimum_and_is_certified() {
    // (seed, classes, features, separation, label noise, the σ path)
    let cases = [
        (1, 3, 4, 1.5, 0.15, [1.0, 0.5, 0.25]),
        (2, 4, 3, 1.5, 0.1, [2.0, 1.0, 0.5]),
        // separable: at σ = 1/4 the optimum is in the tail (G ≈ 8e-10)
        (3, 3, 3, 3.0, 0.0, [1.0, 0.5, 0.25]),
    ];
    for (seed, c, d, mu, flip, path) in cases {
        let data = classes(60, d, c, 0.3, mu, flip, seed);
        let base = MGuruParams::new().solver(Solver::Batch).tolerance(1e-9);
        let mut prev = None;
        for sigma in path {
            let p = base.clone().sigma(sigma);
            let cold = p.fit_report(&data).unwrap();
            let warm = p.fit_report_from(&data, prev.as_ref()).unwrap();
            let (gc, gw) = (
                cold.report.objective.unwrap(),
                warm.report.objective.unwrap(),
            );
            eprintln!(
                "m-guru seed {seed} sigma {sigma}: G {gc:.6e}, warm − cold {:.1e} (relative), Newton iterations cold {:?} warm {:?}",
                rel(gw, gc),
                cold.report.iterations,
                warm.report.iterations
            );
            assert!(cold.report.converged, "seed {seed} sigma {sigma}: {cold:?}");
            assert!(warm.report.converged, "seed {seed} sigma {sigma}: {warm:?}");
            assert!(
                rel(gw, gc) <= 1e-8,
                "seed {seed} sigma {sigma}: {gw} vs {gc}"
            );
            // each certified lower bound lies below the other fit's objective
            for (a, b) in [(&cold, gw), (&warm, gc)] {
                assert!(a.report.details["dual_objective"] <= b * (1.0 + 1e-12));
            }
            prev = Some(warm.model);
        }
    }
}

#[test]
fn warm_started_ken_guru_lands_on_the_cold_optimum_and_is_certified() {
    for (seed, gamma, flip, path) in [
        (1, 0.5, 0.1, [1.0, 0.5, 0.25]),
        (2, 1.0, 0.0, [0.25, 0.125, 0.0625]),
    ] {
        let data = binary(60, 2, flip, seed);
        let base = KenGuruParams::new()
            .kernel(Kernel::Rbf { gamma })
            .solver(Solver::Batch)
            .tolerance(1e-10);
        let mut prev = None;
        for sigma in path {
            let p = base.clone().sigma(sigma);
            let (cold, _) = p.fit_certified(&data).unwrap();
            let (warm, _) = p.fit_certified_from(&data, prev.as_ref()).unwrap();
            let (gc, gw) = (cold.certificate.primal, warm.certificate.primal);
            eprintln!(
                "ken-guru seed {seed} sigma {sigma}: G {gc:.6e}, warm − cold {:.1e} (relative), Newton iterations cold {} warm {}",
                rel(gw, gc),
                cold.steps,
                warm.steps
            );
            assert!(
                cold.converged && warm.converged,
                "seed {seed} sigma {sigma}"
            );
            assert!(
                rel(gw, gc) <= 1e-8,
                "seed {seed} sigma {sigma}: {gw} vs {gc}"
            );
            assert!(cold.certificate.dual <= gw * (1.0 + 1e-12));
            assert!(warm.certificate.dual <= gc * (1.0 + 1e-12));
            prev = Some(warm);
        }
    }
}

#[test]
fn warm_starts_of_the_wrong_shape_are_typed_errors() {
    let a = classes(30, 3, 3, 0.3, 1.5, 0.1, 1);
    let b = classes(30, 4, 3, 0.3, 1.5, 0.1, 1);
    let p = MGuruParams::new().solver(Solver::Batch);
    let other = p.fit_report(&b).unwrap().model;
    let e = p.fit_report_from(&a, Some(&other)).unwrap_err().to_string();
    assert!(e.contains("warm"), "{e}");
    let k = KenGuruParams::new()
        .kernel(Kernel::Rbf { gamma: 1.0 })
        .solver(Solver::Batch);
    let (small, _) = k.fit_certified(&binary(20, 2, 0.1, 1)).unwrap();
    let e = k
        .fit_certified_from(&binary(30, 2, 0.1, 1), Some(&small))
        .unwrap_err()
        .to_string();
    assert!(e.contains("warm"), "{e}");
}
