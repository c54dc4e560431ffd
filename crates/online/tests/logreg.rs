//! Logistic regression against its optimality conditions (finite differences).

mod common;

use bulwark_core::{Dataset, DenseMatrix, Fit, LinearModel, Sign};
use bulwark_online::{LogregParams, logreg_objective};
use common::gaussian_data;

/// Central finite-difference gradient of the objective in (w, b).
fn fd_gradient(model: &LinearModel, data: &Dataset, l2: f64) -> Vec<f64> {
    let h = 1e-6;
    let n = model.weights().len();
    (0..=n)
        .map(|k| {
            let shifted = |d: f64| {
                let mut w = model.weights().to_vec();
                let mut b = model.bias();
                if k < n {
                    w[k] += d;
                } else {
                    b += d;
                }
                LinearModel::try_new(w, b).unwrap()
            };
            let (plus, minus) = (shifted(h), shifted(-h));
            (logreg_objective(&plus, data, l2).unwrap()
                - logreg_objective(&minus, data, l2).unwrap())
                / (2.0 * h)
        })
        .collect()
}

#[test]
fn stationary_point_with_and_without_intercept() {
    for (seed, l2, intercept) in [
        (1, 1e-2, true),
        (2, 1e-4, true),
        (3, 0.1, false),
        (4, 0.0, true),
    ] {
        let data = gaussian_data(200, 6, 0.3, seed);
        let fitted = LogregParams::new()
            .l2(l2)
            .intercept(intercept)
            .fit(&data)
            .unwrap();
        assert!(fitted.report.converged, "{:?}", fitted.report);
        let f = fitted.report.objective.unwrap();
        assert!((f - logreg_objective(&fitted.model, &data, l2).unwrap()).abs() < 1e-12);
        let g = fd_gradient(&fitted.model, &data, l2);
        let gmax = g[..6]
            .iter()
            .chain(if intercept { &g[6..] } else { &[][..] })
            .fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(gmax < 1e-6, "finite-difference gradient {g:?}");
        if !intercept {
            assert_eq!(fitted.model.bias(), 0.0);
        }
        // a random perturbation never decreases the convex objective
        let mut w = fitted.model.weights().to_vec();
        w[0] += 1e-3;
        let b = fitted.model.bias() + if intercept { -1e-3 } else { 0.0 };
        let other = LinearModel::try_new(w, b).unwrap();
        assert!(logreg_objective(&other, &data, l2).unwrap() >= f);
    }
}

#[test]
fn separable_without_regularisation_is_reported_not_converged() {
    let data = gaussian_data(60, 3, 5.0, 5);
    let fitted = LogregParams::new().l2(0.0).fit(&data).unwrap();
    assert!(!fitted.report.converged);
    assert_eq!(fitted.report.details["separable"], 1.0);
    // with a little regularisation it converges
    let fitted = LogregParams::new().l2(1e-3).fit(&data).unwrap();
    assert!(fitted.report.converged, "{:?}", fitted.report);
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = gaussian_data(10, 3, 1.0, 1);
    for l2 in [-1.0, f64::NAN, f64::INFINITY] {
        let e = LogregParams::new()
            .l2(l2)
            .fit(&data)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`l2`"), "{e}");
    }
    let e = LogregParams::new()
        .max_iter(0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("max_iter"), "{e}");
    let one = Dataset::binary(
        "one",
        DenseMatrix::from_rows(&[vec![1.0], vec![2.0]]).unwrap(),
        vec![Sign::Neg; 2],
    )
    .unwrap();
    assert!(matches!(
        LogregParams::new().fit(&one).unwrap_err(),
        bulwark_core::Error::SingleClass { .. }
    ));
}

/// Over K = 1, 2, 3 ranks (threads, `ThreadRanks`; `mpirun` runs the same code), each holding a
/// contiguous share of the rows: every rank returns the same model, with the single process's
/// objective (1e-9 relative) and iteration count; one rank is the single process to the bit.
#[test]
fn over_one_two_three_ranks_matches_one_process() {
    use bulwark_core::Communicator;
    use bulwark_core::comm::ThreadRanks;
    let data = gaussian_data(301, 6, 0.3, 5);
    let params = LogregParams::new().l2(1e-3);
    let single = params.fit(&data).unwrap();
    for k in 1..=3 {
        let fits = ThreadRanks::run(k, |comm| {
            let rows: Vec<usize> = comm.share(data.len()).collect();
            params.fit_over(&data.select(&rows), comm).unwrap()
        });
        let f = &fits[0];
        assert!(
            fits.iter().all(|g| g.model == f.model),
            "K={k}: ranks differ"
        );
        let (a, b) = (
            f.report.objective.unwrap(),
            single.report.objective.unwrap(),
        );
        assert!((a - b).abs() <= 1e-9 * b, "K={k}: objective {a} vs {b}");
        assert_eq!(f.report.iterations, single.report.iterations, "K={k}");
        if k == 1 {
            assert_eq!(a, b);
        } else {
            assert_eq!(f.report.details["ranks"], k as f64);
        }
    }
}
