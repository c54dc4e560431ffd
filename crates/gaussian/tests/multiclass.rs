//! M-GURU (Ginodi Ch. 5): the sum-of-robust-hinges objective and its corrected gradient against
//! finite differences and an independent evaluation; with two classes, M-GURU is GURU's SGD on
//! `w₁ − w₀` step for step; both algorithms learn separable classes; bad parameters are typed
//! errors.

use bulwark_core::{Classifier, Dataset, DenseMatrix, Fit, Sign};
use bulwark_gaussian::{
    GuruParams, Loss, MGuruParams, MulticlassObjective, NoiseNorm, Objective, RobustLoss, Solver,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// `c` Gaussian classes in `d` dimensions, class `k` centred at `mu·e_k`.
fn classes(m: usize, d: usize, c: usize, mu: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for i in 0..m {
        let k = i % c;
        let mut row: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        row[k % d] += mu;
        rows.push(row);
        y.push(k);
    }
    let names = (0..c).map(|k| format!("c{k}")).collect();
    Dataset::multiclass("mc", DenseMatrix::from_rows(&rows).unwrap(), y, names).unwrap()
}

/// (5.14) written out from the thesis: for every example and every other class, the binary
/// robust hinge of the difference, with Φ from erfc.
fn objective_from_formula(data: &Dataset, w: &[Vec<f64>], sigma: f64) -> f64 {
    let x = data.features().to_dense();
    let t = data.targets();
    let mut g = 0.0;
    for i in 0..data.len() {
        let y = t.class_index(i);
        for k in (0..w.len()).filter(|&k| k != y) {
            let delta: Vec<f64> = w[y].iter().zip(&w[k]).map(|(a, b)| a - b).collect();
            let norm = delta.iter().map(|v| v * v).sum::<f64>().sqrt();
            let b = 1.0 - delta.iter().zip(x.row(i)).map(|(a, b)| a * b).sum::<f64>();
            let a = sigma * norm;
            let u = b / a;
            let cdf = 0.5 * libm::erfc(-u / std::f64::consts::SQRT_2);
            let pdf = (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt();
            g += b * cdf + a * pdf;
        }
    }
    g
}

fn random_w(c: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..c * d).map(|_| rng.random_range(-1.0..1.0)).collect()
}

#[test]
fn objective_and_gradient_match_the_formula_and_finite_differences() {
    let data = classes(60, 4, 3, 1.5, 1);
    for (sigma, bias) in [(0.5, false), (1.0, true), (3.0, false)] {
        let obj = MulticlassObjective::new(&data, Loss::Gauss, sigma, bias).unwrap();
        let d = obj.dim();
        let w = random_w(3, d, 7);
        if !bias {
            let rows: Vec<Vec<f64>> = w.chunks(d).map(<[f64]>::to_vec).collect();
            let f = objective_from_formula(&data, &rows, sigma);
            let v = obj.value(&w);
            assert!(
                (f - v).abs() <= 1e-12 * f,
                "sigma {sigma}: {v} vs formula {f}"
            );
        }
        let mut grad = vec![0.0; w.len()];
        let g = obj.gradient(&w, &mut grad);
        assert!((g - obj.value(&w)).abs() <= 1e-12 * g);
        for j in 0..w.len() {
            let h = 1e-6;
            let (mut p, mut q) = (w.clone(), w.clone());
            p[j] += h;
            q[j] -= h;
            let fd = (obj.value(&p) - obj.value(&q)) / (2.0 * h);
            assert!(
                (fd - grad[j]).abs() <= 1e-6 * (1.0 + grad[j].abs()),
                "sigma {sigma} bias {bias} coordinate {j}: {} vs {fd}",
                grad[j]
            );
        }
    }
}

#[test]
fn two_class_m_guru_is_guru_on_the_difference() {
    // 2000 examples, one epoch: 2000 draws; M-GURU with η₀ moves w₁ − w₀ by 2η₀ g
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut rows, mut y) = (Vec::new(), Vec::new());
    for i in 0..2000 {
        let pos = i % 2 == 0;
        let mut r: Vec<f64> = (0..3).map(|_| StandardNormal.sample(&mut rng)).collect();
        r[0] += if pos { 0.7 } else { -0.7 };
        rows.push(r);
        y.push(if pos { Sign::Pos } else { Sign::Neg });
    }
    let data = Dataset::binary("b", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap();
    for (sigma, eta0, seed) in [(1.0, 0.125, 5), (0.25, 0.5, 9)] {
        let w = MGuruParams::new()
            .sigma(sigma)
            .eta0(eta0)
            .seed(seed)
            .trajectory(&data, 2000)
            .unwrap();
        let diff: Vec<f64> = (0..3).map(|j| w[3 + j] - w[j]).collect();
        let guru = GuruParams::new()
            .sigma(sigma)
            .solver(Solver::Sgd)
            .eta0(2.0 * eta0)
            .seed(seed)
            .tolerance(1e-14)
            .max_epochs(1)
            .fit(&data)
            .unwrap();
        // GURU returns its checked iterate moved along its ray to the minimum of G there (the
        // ray step): the same direction
        let g = guru.model.weights();
        let unit = |v: &[f64]| -> Vec<f64> {
            let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.iter().map(|x| x / n).collect()
        };
        for (a, b) in unit(&diff).iter().zip(unit(g)) {
            assert!((a - b).abs() <= 1e-10, "{diff:?} vs GURU {g:?}");
        }
        // and the objectives agree: (5.14) with two classes is (2.22) of the difference
        let obj = MulticlassObjective::new(&data, Loss::Gauss, sigma, false).unwrap();
        let labels = data.binary_labels().unwrap();
        let binary = Objective::new(
            &data,
            labels,
            RobustLoss {
                loss: Loss::Gauss,
                norm: NoiseNorm::L2,
                sigma,
            },
            false,
        );
        let (a, b) = (obj.value(&w), binary.value(&diff));
        assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
    }
}

#[test]
fn both_algorithms_learn_three_classes_and_are_seeded() {
    let data = classes(300, 5, 3, 3.0, 2);
    for s2 in [false, true] {
        let p = MGuruParams::new()
            .sigma(0.5)
            .eta0(0.25)
            .seed(1)
            .s2(s2)
            .tolerance(1e-2)
            .max_epochs(2000);
        let f = p.fit(&data).unwrap();
        assert_eq!(f.report.solver, if s2 { "m-guru-s2" } else { "m-guru" });
        // converged only when certified
        assert_eq!(
            f.report.converged,
            f.report.reached.unwrap() <= 1e-2,
            "{:?}",
            f.report
        );
        let err = f.model.error_rate(&data).unwrap();
        assert!(err < 0.1, "s2 {s2}: training error {err}");
        // the objective fell from its value at W = 0 (every pair at the hinge: 2 per example)
        assert!(f.report.objective.unwrap() < 0.5 * 600.0);
        assert_eq!(p.fit(&data).unwrap().model, f.model);
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    let data = classes(30, 3, 3, 1.0, 1);
    for (p, name) in [
        (MGuruParams::new().sigma(-1.0), "sigma"),
        (MGuruParams::new().eta0(0.0), "eta0"),
        (MGuruParams::new().tolerance(2.0), "tolerance"),
        (MGuruParams::new().max_epochs(0), "max_epochs"),
    ] {
        let e = p.fit(&data).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
}
