//! The certified batch solvers of M-GURU (Ginodi (5.12)–(5.14)) and KEN-GURU (the kernel form
//! of (2.22)) against an independent L-BFGS written here on the same objectives, evaluated from
//! the thesis's formulas (Φ from erfc, the RBF Gram matrix computed here): the optima agree to
//! 1e-6 relative, the certificates' lower bounds lie below the independent optimum (also at
//! SGD points), `converged` is set only when the certificate meets the tolerance, and an SGD
//! that stalls above the optimum says so, with its distance to the batch optimum.

use std::collections::VecDeque;

mod common;

use bulwark_core::{Dataset, DenseMatrix, Fit, Kernel, Sign};
use bulwark_gaussian::{GuruParams, KenGuruParams, MGuruParams, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use common::{binary, classes};

fn cdf(u: f64) -> f64 {
    0.5 * libm::erfc(-u / std::f64::consts::SQRT_2)
}
fn pdf(u: f64) -> f64 {
    (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt()
}
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Ginodi eq. (5.14) and its gradient, written out: for every example and every other class the
/// binary robust hinge `b Φ(b/a) + a φ(b/a)` of the difference `Δ = w_y − w_k`
/// (`a = σ‖Δ‖`, `b = 1 − Δᵀx`), gradient `−Φ(u) x + σ φ(u) Δ/‖Δ‖` in `Δ`.
fn m_guru_objective(
    x: &DenseMatrix,
    y: &[usize],
    c: usize,
    sigma: f64,
    w: &[f64],
) -> (f64, Vec<f64>) {
    let d = x.cols();
    let mut g = 0.0;
    let mut grad = vec![0.0; c * d];
    for (i, &yi) in y.iter().enumerate() {
        let xi = x.row(i);
        for k in (0..c).filter(|&k| k != yi) {
            let delta: Vec<f64> = (0..d).map(|j| w[yi * d + j] - w[k * d + j]).collect();
            let n = dot(&delta, &delta).sqrt();
            let b = 1.0 - dot(&delta, xi);
            let a = sigma * n;
            let u = b / a;
            g += b * cdf(u) + a * pdf(u);
            for j in 0..d {
                let gj = -cdf(u) * xi[j] + sigma * pdf(u) * delta[j] / n;
                grad[yi * d + j] += gj;
                grad[k * d + j] -= gj;
            }
        }
    }
    (g, grad)
}

/// L-BFGS (memory 20, Armijo backtracking, curvature pairs with `⟨s, y⟩ > 0` only) in the
/// inner product `inner`, `f` returning the value and the gradient in that inner product;
/// stops when the gradient's norm is at most `gtol` or `f` stops decreasing.
fn lbfgs(
    mut x: Vec<f64>,
    f: impl Fn(&[f64]) -> (f64, Vec<f64>),
    inner: impl Fn(&[f64], &[f64]) -> f64,
    iters: usize,
    gtol: f64,
) -> (Vec<f64>, f64) {
    let (mut fx, mut g) = f(&x);
    let mut hist: VecDeque<(Vec<f64>, Vec<f64>, f64)> = VecDeque::new();
    let mut stalls = 0;
    for _ in 0..iters {
        let gn = inner(&g, &g).sqrt();
        if gn <= gtol {
            break;
        }
        let mut q = g.clone();
        let mut alpha = vec![0.0; hist.len()];
        for (i, (s, yv, rho)) in hist.iter().enumerate().rev() {
            alpha[i] = rho * inner(s, &q);
            for (qj, yj) in q.iter_mut().zip(yv) {
                *qj -= alpha[i] * yj;
            }
        }
        let gamma = match hist.back() {
            Some((s, yv, _)) => inner(s, yv) / inner(yv, yv),
            None => 1.0 / gn,
        };
        for qj in q.iter_mut() {
            *qj *= gamma;
        }
        for (i, (s, yv, rho)) in hist.iter().enumerate() {
            let beta = rho * inner(yv, &q);
            for (qj, sj) in q.iter_mut().zip(s) {
                *qj += (alpha[i] - beta) * sj;
            }
        }
        let mut dir: Vec<f64> = q.iter().map(|v| -v).collect();
        let mut slope = inner(&g, &dir);
        if slope >= 0.0 || !slope.is_finite() {
            hist.clear();
            dir = g.iter().map(|v| -v / gn).collect();
            slope = inner(&g, &dir);
        }
        let mut t = 1.0;
        let mut next = None;
        for _ in 0..60 {
            let xn: Vec<f64> = x.iter().zip(&dir).map(|(a, b)| a + t * b).collect();
            let (fv, gv) = f(&xn);
            if fv <= fx + 1e-4 * t * slope {
                next = Some((xn, fv, gv));
                break;
            }
            t *= 0.5;
        }
        let Some((xn, fv, gv)) = next else { break };
        // at the precision floor the Armijo test accepts steps that change nothing
        if fv >= fx {
            stalls += 1;
            if stalls >= 5 {
                break;
            }
        } else {
            stalls = 0;
        }
        let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
        let yv: Vec<f64> = gv.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = inner(&s, &yv);
        if sy > 0.0 {
            hist.push_back((s, yv, 1.0 / sy));
            if hist.len() > 20 {
                hist.pop_front();
            }
        }
        x = xn;
        fx = fv;
        g = gv;
    }
    (x, fx)
}

fn class_indices(data: &Dataset) -> Vec<usize> {
    (0..data.len())
        .map(|i| data.targets().class_index(i))
        .collect()
}

/// The M-GURU optimum by the independent L-BFGS, from a small random start.
fn m_guru_lbfgs(data: &Dataset, sigma: f64, seed: u64) -> f64 {
    let x = data.features().to_dense();
    let y = class_indices(data);
    let (c, d) = (data.n_classes(), data.n_features());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let w0: Vec<f64> = (0..c * d).map(|_| rng.random_range(-0.1..0.1)).collect();
    lbfgs(
        w0,
        |w| m_guru_objective(&x, &y, c, sigma, w),
        dot,
        20000,
        1e-10,
    )
    .1
}

#[test]
fn m_guru_batch_optimum_equals_an_independent_lbfgs_and_is_certified() {
    for (seed, c, d, sigma) in [
        (1, 3, 4, 0.5),
        (2, 4, 3, 1.0),
        (3, 3, 5, 2.0),
        (4, 5, 3, 0.25),
    ] {
        let data = classes(90, d, c, 1.0, 1.5, 0.15, seed);
        let p = MGuruParams::new().sigma(sigma).solver(Solver::Batch);
        let f = p.fit(&data).unwrap();
        let r = &f.report;
        assert_eq!(r.solver, "newton-cg");
        assert!(r.converged, "seed {seed}: {r:?}");
        assert!(r.reached.unwrap() <= 1e-10, "{r:?}");
        let gb = r.objective.unwrap();
        let g = m_guru_lbfgs(&data, sigma, seed);
        eprintln!(
            "m-guru seed {seed} C {c} sigma {sigma}: (batch − L-BFGS)/L-BFGS {:.2e}, certified gap {:.2e}, {} Newton iterations",
            (gb - g) / g,
            r.reached.unwrap(),
            r.iterations.unwrap()
        );
        assert!(
            (gb - g).abs() <= 1e-6 * g,
            "seed {seed}: batch {gb} vs L-BFGS {g}"
        );
        // the certified lower bound lies below the independent optimum
        let dual = r.details["dual_objective"];
        assert!(
            dual <= g * (1.0 + 1e-12),
            "seed {seed}: dual {dual} above {g}"
        );
        // the model's objective by the formula is the reported one
        let wm = f.model.weights().as_slice().to_vec();
        let x = data.features().to_dense();
        let again = m_guru_objective(&x, &class_indices(&data), c, sigma, &wm).0;
        assert!((again - gb).abs() <= 1e-10 * gb, "{again} vs {gb}");
        // same data, same bits
        assert_eq!(p.fit(&data).unwrap().model, f.model);
    }
}

#[test]
fn m_guru_certificate_bounds_the_optimum_at_sgd_points_and_converged_means_certified() {
    let data = classes(120, 4, 3, 1.0, 1.5, 0.1, 7);
    let sigma = 1.0;
    let g = m_guru_lbfgs(&data, sigma, 7);
    for (epochs, eta0, s2) in [(1, 0.5, false), (5, 0.25, true), (40, 0.1, false)] {
        let f = MGuruParams::new()
            .sigma(sigma)
            .eta0(eta0)
            .s2(s2)
            .max_epochs(epochs)
            .tolerance(1e-3)
            .fit(&data)
            .unwrap();
        let r = &f.report;
        let (primal, dual) = (r.objective.unwrap(), r.details["dual_objective"]);
        assert!(
            primal >= g * (1.0 - 1e-12),
            "{primal} below the optimum {g}"
        );
        assert!(
            dual <= g * (1.0 + 1e-12),
            "dual {dual} above the optimum {g}"
        );
        let gap = r.reached.unwrap();
        assert!(
            gap >= (primal - g) / primal - 1e-12,
            "gap {gap} misses the true gap"
        );
        assert_eq!(r.converged, gap <= 1e-3, "{r:?}");
    }
    // the batch solver stopped after one Newton iteration is not converged, and says why
    let f = MGuruParams::new()
        .sigma(sigma)
        .solver(Solver::Batch)
        .max_iter(1)
        .fit(&data)
        .unwrap();
    assert!(!f.report.converged, "{:?}", f.report);
    assert!(f.report.reached.unwrap() > 1e-10);
    assert!(
        f.report
            .stopped
            .as_deref()
            .unwrap_or("")
            .contains("iteration limit")
    );
}

#[test]
fn a_stalled_m_guru_sgd_is_not_converged_and_reports_its_distance() {
    // a large step: the SGD's best objective stops improving well above the optimum
    let data = classes(150, 4, 3, 1.0, 1.5, 0.1, 11);
    for s2 in [false, true] {
        let f = MGuruParams::new()
            .sigma(0.5)
            .eta0(8.0)
            .s2(s2)
            .tolerance(1e-3)
            .max_epochs(400)
            .gap_to_batch(true)
            .fit(&data)
            .unwrap();
        let r = &f.report;
        let distance = r.details["gap_to_batch"];
        eprintln!(
            "stalled sgd s2 {s2}: gap_to_batch {distance:.2e}, certified gap {:.2e}, {:?}",
            r.reached.unwrap(),
            r.stopped
        );
        assert_eq!(r.details["batch_converged"], 1.0, "{r:?}");
        assert!(distance > 1e-3, "s2 {s2}: {r:?}");
        assert!(!r.converged, "s2 {s2}: {r:?}");
        let why = r.stopped.as_deref().unwrap_or("");
        assert!(
            why.contains("stalled") || why.contains("epoch limit"),
            "{why}"
        );
        // the certified gap bounds the distance to the optimum
        let g = r.details["batch_objective"];
        let primal = r.objective.unwrap();
        assert!((primal - g) / primal <= r.reached.unwrap() + 1e-12);
        assert!((distance - (primal - g) / g).abs() <= 1e-12);
    }
}

#[test]
fn two_class_m_guru_batch_is_guru_batch_on_the_difference() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut rows, mut y) = (Vec::new(), Vec::new());
    for i in 0..200 {
        let pos = i % 2 == 0;
        let mut r: Vec<f64> = (0..3).map(|_| StandardNormal.sample(&mut rng)).collect();
        r[0] += if pos { 0.5 } else { -0.5 };
        rows.push(r);
        y.push(if pos { Sign::Pos } else { Sign::Neg });
    }
    let data = Dataset::binary("b", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap();
    for sigma in [0.3, 1.0, 3.0] {
        let m = MGuruParams::new()
            .sigma(sigma)
            .solver(Solver::Batch)
            .fit(&data)
            .unwrap();
        let g = GuruParams::new().sigma(sigma).fit(&data).unwrap();
        let (a, b) = (m.report.objective.unwrap(), g.report.objective.unwrap());
        assert!(m.report.converged, "{:?}", m.report);
        assert!((a - b).abs() <= 1e-9 * b, "sigma {sigma}: {a} vs GURU {b}");
        let w = m.model.weights();
        for j in 0..3 {
            let diff = w.row(1)[j] - w.row(0)[j];
            let gj = g.model.weights()[j];
            assert!(
                (diff - gj).abs() <= 1e-5 * (1.0 + gj.abs()),
                "{diff} vs {gj}"
            );
        }
    }
}

/// The RBF Gram matrix `exp(−γ‖x − x'‖²)`, computed here.
fn rbf_gram(data: &Dataset, gamma: f64) -> Vec<Vec<f64>> {
    let x = data.features().to_dense();
    (0..data.len())
        .map(|i| {
            (0..data.len())
                .map(|j| {
                    let d2: f64 = x
                        .row(i)
                        .iter()
                        .zip(x.row(j))
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum();
                    (-gamma * d2).exp()
                })
                .collect()
        })
        .collect()
}

/// The kernel form of (2.22) in `β` and its gradient in the RKHS inner product `⟨a, b⟩_K`:
/// `G = Σ σν f(u_m)`, `ν² = βᵀKβ`, `u_m = (1 − y_m (Kβ)_m)/(σν)`; `∇_K G = σ Σφ(u) β/ν − Φ(u)∘y`.
fn ken_objective(k: &[Vec<f64>], y: &[f64], sigma: f64, beta: &[f64]) -> (f64, Vec<f64>) {
    let kb: Vec<f64> = k.iter().map(|row| dot(row, beta)).collect();
    let nu = dot(beta, &kb).sqrt();
    let a = sigma * nu;
    let (mut g, mut r) = (0.0, 0.0);
    let mut grad = vec![0.0; beta.len()];
    for m in 0..y.len() {
        let b = 1.0 - y[m] * kb[m];
        let u = b / a;
        g += b * cdf(u) + a * pdf(u);
        r += pdf(u);
        grad[m] = -cdf(u) * y[m];
    }
    for (gm, bm) in grad.iter_mut().zip(beta) {
        *gm += sigma * r * bm / nu;
    }
    (g, grad)
}

#[test]
fn ken_guru_batch_optimum_with_an_rbf_kernel_equals_an_independent_lbfgs() {
    for (seed, gamma, sigma) in [(1, 0.5, 0.5), (2, 1.0, 1.0), (3, 0.25, 2.0)] {
        let data = binary(60, 2, 0.1, seed);
        let kernel = Kernel::Rbf { gamma };
        let params = KenGuruParams::new()
            .kernel(kernel)
            .sigma(sigma)
            .solver(Solver::Batch);
        let (fit, report) = params.fit_certified(&data).unwrap();
        assert_eq!(report.solver, "newton-cg");
        assert!(fit.converged && report.converged, "seed {seed}: {report:?}");
        assert!(fit.certificate.relative_gap <= 1e-10, "{report:?}");
        let k = rbf_gram(&data, gamma);
        let y: Vec<f64> = data
            .binary_labels()
            .unwrap()
            .iter()
            .map(|s| s.as_f64())
            .collect();
        let kinner = |a: &[f64], b: &[f64]| -> f64 {
            k.iter().zip(a).map(|(row, ai)| ai * dot(row, b)).sum()
        };
        let beta0: Vec<f64> = y.iter().map(|v| 0.01 * v).collect();
        let (_, g) = lbfgs(
            beta0,
            |b| ken_objective(&k, &y, sigma, b),
            kinner,
            20000,
            1e-10,
        );
        let gb = fit.certificate.primal;
        eprintln!(
            "ken-guru seed {seed} gamma {gamma} sigma {sigma}: (batch − L-BFGS)/L-BFGS {:.2e}, certified gap {:.2e} (factor {:.2e}, rank {})",
            (gb - g) / g,
            fit.certificate.relative_gap,
            report.details["factor_duality_gap"],
            report.details["factor_rank"]
        );
        assert!(
            (gb - g).abs() <= 1e-6 * g,
            "seed {seed}: batch {gb} vs L-BFGS {g}"
        );
        assert!(
            fit.certificate.dual <= g * (1.0 + 1e-12),
            "dual above the optimum"
        );
        // the objective of the returned coefficients, recomputed here
        let again = ken_objective(&k, &y, sigma, &fit.beta).0;
        assert!((again - gb).abs() <= 1e-9 * gb, "{again} vs {gb}");
        // deterministic
        assert_eq!(params.fit_certified(&data).unwrap().0.beta, fit.beta);
    }
}

#[test]
fn ken_guru_sgd_reports_its_distance_to_the_batch_optimum() {
    let data = binary(80, 2, 0.1, 5);
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let (fit, report) = KenGuruParams::new()
        .kernel(kernel)
        .sigma(1.0)
        .eta0(0.5)
        .max_epochs(5)
        .tolerance(1e-6)
        .gap_to_batch(true)
        .fit_certified(&data)
        .unwrap();
    assert!(!fit.converged, "{report:?}");
    assert!(report.stopped.is_some());
    let d = &report.details;
    assert_eq!(d["batch_converged"], 1.0, "{report:?}");
    let distance = d["gap_to_batch"];
    assert!(
        distance >= 0.0
            && distance
                <= fit.certificate.relative_gap * fit.certificate.primal / d["batch_objective"]
                    + 1e-12
    );
    assert!(distance > 0.0);
}

#[test]
fn bad_solver_parameters_are_typed_errors() {
    let data = classes(30, 3, 3, 1.0, 1.0, 0.0, 1);
    let e = MGuruParams::new()
        .solver(Solver::Batch)
        .max_iter(0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("max_iter"), "{e}");
    let e = MGuruParams::new()
        .solver(Solver::Batch)
        .tolerance(0.0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("tolerance"), "{e}");
    let b = binary(20, 2, 0.0, 1);
    let e = KenGuruParams::new()
        .solver(Solver::Batch)
        .max_iter(0)
        .fit(&b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("max_iter"), "{e}");
}
