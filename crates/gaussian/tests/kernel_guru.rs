//! KEN-GURU (Ginodi Ch. 4): with the linear kernel it is GURU's SGD, step for step; the norm
//! recursion (4.13) equals the norm computed from the Gram matrix; its certificate is that of
//! the objective recomputed from the returned model; bad parameters are typed errors.

use bulwark_core::{Dataset, DecisionFunction, DenseMatrix, Fit, Kernel, Sign};
use bulwark_gaussian::{GuruParams, KenGuruParams, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

fn gaussian_classes(m: usize, d: usize, mu: f64, flip: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rows = Vec::with_capacity(m);
    let mut y = Vec::with_capacity(m);
    for i in 0..m {
        let s = if i % 2 == 0 { 1.0 } else { -1.0 };
        let row: Vec<f64> = (0..d)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                z + s * mu
            })
            .collect();
        let label = if rng.random::<f64>() < flip { -s } else { s };
        y.push(if label > 0.0 { Sign::Pos } else { Sign::Neg });
        rows.push(row);
    }
    Dataset::binary("g", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap()
}

fn gram(data: &Dataset, k: Kernel) -> Vec<Vec<f64>> {
    let x = data.features().to_dense();
    (0..data.len())
        .map(|i| {
            (0..data.len())
                .map(|j| k.eval_dense(x.row(i), x.row(j)))
                .collect()
        })
        .collect()
}

fn quad(k: &[Vec<f64>], b: &[f64]) -> f64 {
    k.iter()
        .zip(b)
        .map(|(row, bi)| bi * row.iter().zip(b).map(|(a, c)| a * c).sum::<f64>())
        .sum()
}

#[test]
fn linear_kernel_ken_guru_is_guru_step_for_step() {
    // 200 examples × 10 epochs = 2000 steps; the tolerance is out of reach, so both run every
    // epoch and pick the best checked iterate the same way
    let data = gaussian_classes(200, 5, 0.6, 0.1, 3);
    for (sigma, eta0, seed) in [(1.0, 0.25, 7), (0.3, 1.0, 11), (4.0, 0.05, 1)] {
        let guru = GuruParams::new()
            .sigma(sigma)
            .solver(Solver::Sgd)
            .eta0(eta0)
            .seed(seed)
            .tolerance(1e-14)
            .max_epochs(10)
            .fit(&data)
            .unwrap();
        let ken = KenGuruParams::new()
            .kernel(Kernel::Linear)
            .sigma(sigma)
            .eta0(eta0)
            .seed(seed)
            .tolerance(1e-14)
            .max_epochs(10)
            .fit_certified(&data)
            .unwrap()
            .0;
        assert_eq!(ken.steps, 2000);
        // w = Σ β_m x_m
        let x = data.features().to_dense();
        let mut w = vec![0.0; 5];
        for (m, b) in ken.beta.iter().enumerate() {
            for (wj, xj) in w.iter_mut().zip(x.row(m)) {
                *wj += b * xj;
            }
        }
        let g = guru.model.weights();
        let scale = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (a, b) in w.iter().zip(g) {
            assert!(
                (a - b).abs() <= 1e-10 * scale,
                "sigma {sigma}: KEN-GURU {w:?} vs GURU {g:?}"
            );
        }
        let (gp, kp) = (guru.report.objective.unwrap(), ken.certificate.primal);
        assert!((gp - kp).abs() <= 1e-10 * gp, "objective {kp} vs {gp}");
        assert_eq!(guru.model.bias(), 0.0);
    }
}

#[test]
fn the_norm_recursion_equals_the_norm_from_the_gram_matrix() {
    let data = gaussian_classes(120, 4, 0.4, 0.1, 5);
    for kernel in [
        Kernel::Linear,
        Kernel::Rbf { gamma: 0.5 },
        Kernel::Polynomial {
            degree: 2,
            gamma: 0.5,
            coef0: 1.0,
        },
    ] {
        let (beta, nu) = KenGuruParams::new()
            .kernel(kernel)
            .sigma(0.5)
            .eta0(0.5)
            .seed(2)
            .trajectory(&data, 2400)
            .unwrap();
        let direct = quad(&gram(&data, kernel), &beta).sqrt();
        assert!(
            (nu - direct).abs() <= 1e-9 * direct,
            "{kernel:?}: recursion {nu} vs direct {direct}"
        );
        assert!(beta.iter().filter(|b| **b != 0.0).count() > 10);
    }
}

#[test]
fn rbf_ken_guru_certifies_the_objective_of_its_model_and_is_seeded() {
    // a radial problem no linear classifier solves: inside the ring +1, outside −1
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let (mut rows, mut y) = (Vec::new(), Vec::new());
    while rows.len() < 150 {
        let p: [f64; 2] = [rng.random_range(-3.0..3.0), rng.random_range(-3.0..3.0)];
        let r = (p[0] * p[0] + p[1] * p[1]).sqrt();
        if (1.2..1.8).contains(&r) {
            continue;
        }
        rows.push(p.to_vec());
        y.push(if r < 1.5 { Sign::Pos } else { Sign::Neg });
    }
    let data = Dataset::binary("ring", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap();
    let kernel = Kernel::Rbf { gamma: 1.0 };
    let params = KenGuruParams::new()
        .kernel(kernel)
        .sigma(0.5)
        .eta0(0.5)
        .seed(4)
        .tolerance(2e-2)
        .max_epochs(3000);
    let (fit, report) = params.fit_certified(&data).unwrap();
    assert!(fit.converged, "{report:?}");
    assert_eq!(report.solver, "ken-guru-sgd");
    assert!(fit.certificate.relative_gap <= 2e-2);
    assert!(fit.certificate.dual <= fit.certificate.primal);
    // the objective (2.22) in feature space, recomputed from the model's decision values
    let nu = quad(&gram(&data, kernel), &fit.beta).sqrt();
    let labels = data.binary_labels().unwrap();
    let g: f64 = (0..data.len())
        .map(|i| {
            let b = 1.0 - labels[i].as_f64() * fit.model.decision(data.row(i));
            let a = 0.5 * nu;
            let u = b / a;
            // f(u) = uΦ(u) + φ(u), Φ from erfc
            let phi = (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt();
            let cdf = 0.5 * libm::erfc(-u / std::f64::consts::SQRT_2);
            a * (u * cdf + phi)
        })
        .sum();
    assert!(
        (g - fit.certificate.primal).abs() <= 1e-9 * g,
        "recomputed {g} vs certified {}",
        fit.certificate.primal
    );
    // it separates the ring
    let err = (0..data.len())
        .filter(|&i| labels[i].is_mistake(fit.model.decision(data.row(i))))
        .count();
    assert!(err <= 3, "{err} training errors");
    // same seed, same bits
    let again = params.fit_certified(&data).unwrap().0;
    assert_eq!(again.beta, fit.beta);
}

#[test]
fn bad_parameters_are_typed_errors() {
    let data = gaussian_classes(20, 3, 0.5, 0.0, 1);
    let cases = [
        (KenGuruParams::new().sigma(0.0), "sigma"),
        (KenGuruParams::new().eta0(-1.0), "eta0"),
        (
            KenGuruParams::new().kernel(Kernel::Rbf { gamma: -1.0 }),
            "gamma",
        ),
        (KenGuruParams::new().cache_bytes(0), "cache_size"),
        (KenGuruParams::new().max_epochs(0), "max_epochs"),
    ];
    for (p, name) in cases {
        let e = p.fit(&data).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
}
