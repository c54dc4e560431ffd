//! The solvers against independent computations: finite-difference gradients, a
//! general-purpose quasi-Newton minimisation of (2.22) written from the formula, weighted =
//! duplicated data, strong duality and the corrected Thm 1.2 at the optimum, weak duality
//! anywhere, and SGD against the batch optimum.

use bulwark_core::{Dataset, DenseMatrix, Fit, Sign};
use bulwark_gaussian::objective::CorrectionScratch;
use bulwark_gaussian::{GuruParams, Loss, NoiseNorm, Objective, RobustLoss, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// Two Gaussian classes in `d` dimensions, means `±mu·e₁`, with a fraction of flipped labels.
fn gaussian_classes(m: usize, d: usize, mu: f64, flip: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rows = Vec::with_capacity(m);
    let mut labels = Vec::with_capacity(m);
    for i in 0..m {
        let pos = i % 2 == 0;
        let mut row: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        row[0] += if pos { mu } else { -mu };
        rows.push(row);
        let flipped = rng.random::<f64>() < flip;
        labels.push(if pos != flipped { Sign::Pos } else { Sign::Neg });
    }
    Dataset::binary("gauss", DenseMatrix::from_rows(&rows).unwrap(), labels).unwrap()
}

/// (2.22) written out from the thesis, independently of the crate's loss code.
fn objective_from_formula(data: &Dataset, w: &[f64], sigma: f64) -> f64 {
    let y = data.binary_labels().unwrap();
    let wn = w.iter().map(|v| v * v).sum::<f64>().sqrt();
    let s = sigma * wn;
    let cdf = |t: f64| 0.5 * statrs_erfc(-t / 2f64.sqrt());
    (0..data.len())
        .map(|i| {
            let wx: f64 = data.row(i).dot(w);
            let b = 1.0 - y[i].as_f64() * wx;
            b * cdf(b / s)
                + s / (2.0 * std::f64::consts::PI).sqrt() * (-(b * b) / (2.0 * s * s)).exp()
        })
        .sum()
}

fn statrs_erfc(x: f64) -> f64 {
    // a different route to Φ than the crate's: the complementary error function via the
    // regularised incomplete gamma identity erfc(x) = Γ(½, x²)/√π for x ≥ 0
    if x >= 0.0 {
        statrs::function::gamma::gamma_ur(0.5, x * x)
    } else {
        2.0 - statrs::function::gamma::gamma_ur(0.5, x * x)
    }
}

/// BFGS with central finite-difference gradients and a backtracking line search: a
/// general-purpose minimiser that sees only objective values.
fn bfgs_fd(f: impl Fn(&[f64]) -> f64, x0: Vec<f64>, iters: usize) -> (Vec<f64>, f64) {
    let n = x0.len();
    let grad = |x: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|j| {
                let h = 1e-6 * (1.0 + x[j].abs());
                let mut a = x.to_vec();
                let mut b = x.to_vec();
                a[j] += h;
                b[j] -= h;
                (f(&a) - f(&b)) / (2.0 * h)
            })
            .collect()
    };
    let mut x = x0;
    let mut fx = f(&x);
    let mut g = grad(&x);
    let mut hinv = vec![vec![0.0; n]; n];
    for (i, row) in hinv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _ in 0..iters {
        let d: Vec<f64> = (0..n)
            .map(|i| -(0..n).map(|j| hinv[i][j] * g[j]).sum::<f64>())
            .collect();
        let slope: f64 = d.iter().zip(&g).map(|(a, b)| a * b).sum();
        if slope >= 0.0 {
            break;
        }
        let mut t = 1.0;
        let mut xn = x.clone();
        let mut fn_ = fx;
        let mut ok = false;
        for _ in 0..60 {
            xn = x.iter().zip(&d).map(|(a, b)| a + t * b).collect();
            fn_ = f(&xn);
            if fn_ <= fx + 1e-4 * t * slope {
                ok = true;
                break;
            }
            t *= 0.5;
        }
        if !ok {
            break;
        }
        let gn = grad(&xn);
        let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
        let yv: Vec<f64> = gn.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy: f64 = s.iter().zip(&yv).map(|(a, b)| a * b).sum();
        if sy > 1e-300 {
            let hy: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| hinv[i][j] * yv[j]).sum())
                .collect();
            let yhy: f64 = yv.iter().zip(&hy).map(|(a, b)| a * b).sum();
            for i in 0..n {
                for j in 0..n {
                    hinv[i][j] +=
                        (sy + yhy) * s[i] * s[j] / (sy * sy) - (hy[i] * s[j] + s[i] * hy[j]) / sy;
                }
            }
        }
        x = xn;
        fx = fn_;
        g = gn;
    }
    (x, fx)
}

#[test]
fn batch_optimum_agrees_with_a_general_purpose_minimisation() {
    for (seed, sigma) in [(1u64, 0.5), (2, 2.0), (3, 0.1)] {
        let data = gaussian_classes(60, 4, 1.0, 0.1, seed);
        let (fit, report) = GuruParams::new().sigma(sigma).fit_certified(&data).unwrap();
        assert_eq!(report.solver, "newton-cg");
        assert!(fit.converged, "{:?}", fit.stopped);
        let w = fit.model.weights().to_vec();
        let ours = objective_from_formula(&data, &w, sigma);
        assert!((ours - fit.certificate.primal).abs() <= 1e-12 * ours);
        let start = vec![0.1; 4];
        let (_, theirs) = bfgs_fd(|w| objective_from_formula(&data, w, sigma), start, 500);
        assert!(
            ours <= theirs * (1.0 + 1e-9),
            "sigma {sigma}: batch {ours} above BFGS {theirs}"
        );
        assert!((ours - theirs).abs() <= 1e-6 * theirs, "{ours} vs {theirs}");
    }
}

#[test]
fn strong_duality_and_the_corrected_norm_theorem_hold_at_the_batch_optimum() {
    let data = gaussian_classes(200, 6, 0.8, 0.15, 7);
    let sigma = 0.6;
    let (fit, _) = GuruParams::new().sigma(sigma).fit_certified(&data).unwrap();
    let w = fit.model.weights();
    let spec = RobustLoss {
        loss: Loss::Gauss,
        norm: NoiseNorm::L2,
        sigma,
    };
    let y = data.binary_labels().unwrap();
    let obj = Objective::new(&data, y, spec, false);
    let wn = NoiseNorm::L2.of(w);
    // α_m = Φ(z_m), z_m = (1 − y wᵀx)/(σ‖w‖): Σ α equals the primal objective (3.22)
    let z: Vec<f64> = (0..data.len())
        .map(|i| (1.0 - y[i].as_f64() * obj.dot(i, w)) / (sigma * wn))
        .collect();
    let alpha: Vec<(f64, f64)> = z
        .iter()
        .map(|&z| {
            (
                bulwark_gaussian::special::norm_cdf(z),
                bulwark_gaussian::special::norm_cdf(-z),
            )
        })
        .collect();
    let sum_alpha: f64 = alpha.iter().map(|a| a.0).sum();
    let primal = obj.value(w);
    assert!(
        (sum_alpha - primal).abs() <= 1e-8 * primal,
        "{sum_alpha} vs {primal}"
    );
    assert!(fit.certificate.constraint_residual.abs() <= 1e-8);
    assert!(fit.certificate.relative_gap <= 1e-10);
    // Thm 1.2 corrected: ‖w*‖ = 1/(σΦ⁻¹(α_m) + y_m ŵᵀx_m) for every m, ŵ from Σ α y x
    let norms = obj.norm_from_dual(&alpha);
    for (m, n) in norms.iter().enumerate() {
        assert!((n - wn).abs() <= 1e-6 * wn, "example {m}: {n} vs {wn}");
    }
    // the printed form (no σ) does not
    let printed_ok = (0..data.len()).all(|i| {
        let zi = bulwark_gaussian::special::norm_cdf_inv_pair(alpha[i].0, alpha[i].1);
        (1.0 / (zi + y[i].as_f64() * obj.dot(i, w) / wn) - wn).abs() <= 1e-6 * wn
    });
    assert!(!printed_ok);
}

#[test]
fn the_family_has_strong_duality_too() {
    let data = gaussian_classes(120, 5, 1.0, 0.1, 9);
    for loss in [Loss::Log, Loss::Huber] {
        let (fit, report) = GuruParams::new()
            .sigma(0.8)
            .loss(loss)
            .fit_certified(&data)
            .unwrap();
        assert!(
            fit.converged,
            "{loss:?}: {:?} {}",
            fit.stopped,
            report.summary()
        );
        assert!(fit.certificate.relative_gap <= 1e-10);
        assert!(
            fit.certificate.constraint_residual.abs() <= 1e-6,
            "{loss:?}"
        );
    }
}

#[test]
fn gradient_matches_finite_differences() {
    let data = gaussian_classes(30, 3, 1.0, 0.2, 4);
    let y = data.binary_labels().unwrap();
    for (loss, norm, bias) in [
        (Loss::Gauss, NoiseNorm::L2, false),
        (Loss::Gauss, NoiseNorm::L2, true),
        (Loss::Log, NoiseNorm::L2, false),
        (Loss::Huber, NoiseNorm::L2, true),
        (Loss::Gauss, NoiseNorm::Linf, false),
    ] {
        let obj = Objective::new(
            &data,
            y,
            RobustLoss {
                loss,
                norm,
                sigma: 0.7,
            },
            bias,
        );
        let w: Vec<f64> = [0.9, -0.4, 0.25, 0.1][..obj.dim()].to_vec();
        let mut b = vec![0.0; data.len()];
        let (mut v, mut g) = (vec![0.0; obj.dim()], vec![0.0; obj.dim()]);
        obj.value_into(&w, &mut b);
        obj.gradient_from(&w, &b, &mut v, &mut g);
        for j in 0..obj.dim() {
            let h = 1e-6;
            let (mut a, mut c) = (w.clone(), w.clone());
            a[j] += h;
            c[j] -= h;
            let fd = (obj.value(&a) - obj.value(&c)) / (2.0 * h);
            assert!(
                (fd - g[j]).abs() <= 1e-6 * (1.0 + fd.abs()),
                "{loss:?} {norm:?} j={j}"
            );
        }
    }
}

#[test]
fn weak_duality_holds_at_any_pair_of_points() {
    // the certificate at one w is a lower bound on G at every other w
    let data = gaussian_classes(50, 3, 0.5, 0.3, 5);
    let y = data.binary_labels().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for loss in Loss::ALL {
        for norm in [NoiseNorm::L2, NoiseNorm::Linf] {
            let obj = Objective::new(
                &data,
                y,
                RobustLoss {
                    loss,
                    norm,
                    sigma: 0.4,
                },
                false,
            );
            for _ in 0..20 {
                let w: Vec<f64> = (0..3).map(|_| rng.random_range(-2.0..2.0)).collect();
                let mut b = vec![0.0; data.len()];
                let (mut v, mut g) = (vec![0.0; 3], vec![0.0; 3]);
                let p = obj.value_into(&w, &mut b);
                obj.gradient_from(&w, &b, &mut v, &mut g);
                let cert = obj.certificate(&w, &b, &v, p);
                assert!(cert.dual <= p * (1.0 + 1e-12));
                for _ in 0..20 {
                    let w2: Vec<f64> = (0..3).map(|_| rng.random_range(-3.0..3.0)).collect();
                    assert!(
                        cert.dual <= obj.value(&w2) * (1.0 + 1e-12),
                        "{loss:?} {norm:?}"
                    );
                }
            }
        }
    }
}

/// The corrected dual point is certified like any other: its bound never exceeds `G` anywhere,
/// at random points (far from the optimum, where the correction's Newton rounds take large
/// shifts) and at every `σ` from near the hinge to smooth.
#[test]
fn the_corrected_certificate_is_a_lower_bound_everywhere() {
    let data = gaussian_classes(80, 3, 0.8, 0.15, 12);
    let y = data.binary_labels().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut scratch = CorrectionScratch::default();
    let mut moved = 0;
    for sigma in [1.0 / 2048.0, 1.0 / 64.0, 0.25, 2.0] {
        for loss in Loss::ALL {
            let spec = RobustLoss {
                loss,
                norm: NoiseNorm::L2,
                sigma,
            };
            let obj = Objective::new(&data, y, spec, false);
            for _ in 0..15 {
                let w: Vec<f64> = (0..3).map(|_| rng.random_range(-3.0..3.0)).collect();
                let mut b = vec![0.0; data.len()];
                let (mut v, mut g) = (vec![0.0; 3], vec![0.0; 3]);
                let p = obj.value_into(&w, &mut b);
                obj.gradient_from(&w, &b, &mut v, &mut g);
                let plain = obj.certificate(&w, &b, &v, p);
                let cert =
                    obj.certificate_corrected(plain, &w, &b, &v, 0.0, usize::MAX, &mut scratch);
                assert!(cert.dual >= plain.dual);
                moved += usize::from(cert.dual > plain.dual);
                assert!(cert.dual <= p * (1.0 + 1e-12));
                for _ in 0..20 {
                    let w2: Vec<f64> = (0..3).map(|_| rng.random_range(-4.0..4.0)).collect();
                    assert!(
                        cert.dual <= obj.value(&w2) * (1.0 + 1e-12),
                        "{loss:?} sigma {sigma}"
                    );
                }
            }
        }
    }
    assert!(moved > 0, "the correction never raised a bound");
    assert!(scratch.passes() > 0);
}

/// Near the hinge (the thesis's toys select σ down to 2^−11) the uncorrected certificate of a
/// point 1e-4 above the optimum says almost nothing (κ ≈ 0); the corrected one certifies the
/// SGD's 1e-3 and stays an upper bound on its true suboptimality.
#[test]
fn the_sgd_certifies_its_gap_near_the_hinge() {
    let data = gaussian_classes(200, 2, 1.0, 0.1, 21);
    let y = data.binary_labels().unwrap();
    let sigma = 1.0 / 2048.0;
    // the reference along the σ path, as the thesis's experiment computes it (a cold start
    // this close to the hinge stops at the line search's precision floor); every fit of the
    // path certified (without the batch solver's corrected certificate the fit at σ = 1/8
    // ended at its 1000-iteration limit with a plain gap of 4.8e-9)
    let mut warm: Option<Vec<f64>> = None;
    let mut opt = f64::NAN;
    for k in 0..=11 {
        let (batch, _) = GuruParams::new()
            .sigma(0.5_f64.powi(k))
            .max_iter(1000)
            .fit_certified_from(&data, warm.as_deref())
            .unwrap();
        assert!(
            batch.converged,
            "sigma 2^-{k}: {:?} gap {}",
            batch.stopped, batch.certificate.relative_gap
        );
        warm = Some(batch.model.weights().to_vec());
        opt = batch.certificate.primal;
    }
    let (sgd, _) = GuruParams::new()
        .sigma(sigma)
        .solver(Solver::Sgd)
        .eta0(4.0)
        .seed(5)
        .tolerance(1e-3)
        .max_epochs(2000)
        .fit_certified(&data)
        .unwrap();
    assert!(sgd.converged, "gap {}", sgd.certificate.relative_gap);
    let g = sgd.certificate.primal;
    assert!(sgd.certificate.dual <= opt * (1.0 + 1e-12));
    assert!((g - opt) / g <= sgd.certificate.relative_gap + 1e-12);
    // the uncorrected certificate at the same point
    let obj = Objective::new(
        &data,
        y,
        RobustLoss {
            loss: Loss::Gauss,
            norm: NoiseNorm::L2,
            sigma,
        },
        false,
    );
    let w = sgd.model.weights();
    let mut b = vec![0.0; data.len()];
    let (mut v, mut grad) = (vec![0.0; 2], vec![0.0; 2]);
    let p = obj.value_into(w, &mut b);
    obj.gradient_from(w, &b, &mut v, &mut grad);
    let plain = obj.certificate(w, &b, &v, p);
    assert!(plain.relative_gap > 0.1, "plain gap {}", plain.relative_gap);
}

#[test]
fn example_weights_equal_duplicated_rows() {
    let data = gaussian_classes(40, 3, 1.0, 0.1, 6);
    let weights: Vec<f64> = (0..40)
        .map(|i| if i % 3 == 0 { 2.0 } else { 1.0 })
        .collect();
    let weighted = data.clone().with_weights(weights).unwrap();
    let idx: Vec<usize> = (0..40)
        .flat_map(|i| if i % 3 == 0 { vec![i, i] } else { vec![i] })
        .collect();
    let dup = data.select(&idx);
    let a = GuruParams::new().sigma(0.5).fit(&weighted).unwrap();
    let b = GuruParams::new().sigma(0.5).fit(&dup).unwrap();
    let (oa, ob) = (a.report.objective.unwrap(), b.report.objective.unwrap());
    assert!((oa - ob).abs() <= 1e-9 * ob);
    for (x, y) in a.model.weights().iter().zip(b.model.weights()) {
        assert!((x - y).abs() <= 1e-6 * (1.0 + y.abs()));
    }
}

#[test]
fn sgd_reaches_its_certified_gap_and_is_seeded() {
    let data = gaussian_classes(300, 5, 1.0, 0.1, 8);
    let sigma = 0.5;
    let (batch, _) = GuruParams::new().sigma(sigma).fit_certified(&data).unwrap();
    let opt = batch.certificate.primal;
    let params = GuruParams::new()
        .sigma(sigma)
        .solver(Solver::Sgd)
        .eta0(0.5)
        .seed(3)
        .tolerance(1e-3);
    let (sgd, report) = params.fit_certified(&data).unwrap();
    assert_eq!(report.solver, "guru-sgd");
    assert!(sgd.converged, "gap {}", sgd.certificate.relative_gap);
    let excess = (sgd.certificate.primal - opt) / sgd.certificate.primal;
    assert!(excess >= -1e-12 && excess <= sgd.certificate.relative_gap + 1e-12);
    assert!(sgd.certificate.relative_gap <= 1e-3);
    let (again, _) = params.fit_certified(&data).unwrap();
    assert_eq!(sgd.model, again.model);
    assert_eq!(sgd.iterations, again.iterations);
    let (other, _) = params.clone().seed(4).fit_certified(&data).unwrap();
    assert_ne!(sgd.model, other.model);
}

/// GURU's SGD returns its best checked point moved to the minimum of G on its ray, where
/// `G = Σ Φ(u_m)` (the dual objective at `α_m = Φ(u_m)`), so the certificate's gap is only the
/// feasibility scaling; checked with the independent formula, unconverged, at several σ.
#[test]
fn sgd_output_sits_at_the_minimum_of_its_ray() {
    let data = gaussian_classes(300, 5, 1.0, 0.1, 8);
    let y = data.binary_labels().unwrap();
    for (sigma, eta0) in [(0.5, 0.5), (0.1, 4.0), (2.0, 0.05)] {
        let (sgd, _) = GuruParams::new()
            .sigma(sigma)
            .solver(Solver::Sgd)
            .eta0(eta0)
            .seed(5)
            .tolerance(1e-14)
            .max_epochs(12)
            .fit_certified(&data)
            .unwrap();
        let w = sgd.model.weights();
        let g = objective_from_formula(&data, w, sigma);
        let s = sigma * w.iter().map(|v| v * v).sum::<f64>().sqrt();
        let alpha_sum: f64 = (0..data.len())
            .map(|i| {
                let b = 1.0 - y[i].as_f64() * data.row(i).dot(w);
                0.5 * statrs_erfc(-b / s / 2f64.sqrt())
            })
            .sum();
        assert!(
            (g - alpha_sum).abs() <= 1e-9 * g,
            "sigma {sigma}: G {g} vs sum alpha {alpha_sum}"
        );
        for f in [1.0 - 1e-3, 1.0 + 1e-3] {
            let scaled: Vec<f64> = w.iter().map(|v| v * f).collect();
            assert!(objective_from_formula(&data, &scaled, sigma) > g);
        }
    }
}

/// A warm start along the σ path certifies the cold start's optimum at every σ, in fewer Newton
/// iterations at the small-σ end where the cold start is hardest (it may even stop at its
/// iteration limit there); a useless start is ignored.
#[test]
fn warm_start_reaches_the_same_optimum() {
    let data = gaussian_classes(300, 8, 1.5, 0.05, 12);
    let (mut warm_iters, mut cold_iters) = (0, 0);
    let mut start: Option<Vec<f64>> = None;
    for k in (-8..=4).rev() {
        let params = GuruParams::new().sigma(2f64.powi(k)).tolerance(1e-9);
        let (cold, _) = params.fit_certified(&data).unwrap();
        let (warm, _) = params.fit_certified_from(&data, start.as_deref()).unwrap();
        // the cold start may stop at its iteration limit at small sigma: that is the point
        assert!(
            warm.converged,
            "sigma 2^{k}: warm {:?} {:.1e} {}",
            warm.stopped, warm.certificate.relative_gap, warm.iterations
        );
        let (a, b) = (cold.certificate.primal, warm.certificate.primal);
        let tol = 2e-9 + cold.certificate.relative_gap;
        assert!((a - b).abs() <= tol * a.max(b), "sigma 2^{k}: {a} vs {b}");
        if k <= -6 {
            warm_iters += warm.iterations;
            cold_iters += cold.iterations;
        }
        start = Some(warm.model.weights().to_vec());
    }
    assert!(
        warm_iters < cold_iters,
        "warm {warm_iters} vs cold {cold_iters}"
    );
    let params = GuruParams::new().sigma(0.5);
    let (cold, _) = params.fit_certified(&data).unwrap();
    for bad in [vec![0.0; 8], vec![1.0; 3], vec![f64::NAN; 8]] {
        let (f, _) = params.fit_certified_from(&data, Some(&bad)).unwrap();
        assert_eq!(f.model, cold.model);
    }
}

/// On separable data a small σ drives (2.22) below the smallest double: the fit must say it is
/// not certified (and why) instead of reporting a 0/0 "gap" of zero.
#[test]
fn an_underflowing_objective_is_not_certified() {
    let data = gaussian_classes(200, 3, 6.0, 0.0, 4);
    let (ok, _) = GuruParams::new().sigma(0.5).fit_certified(&data).unwrap();
    assert!(ok.converged && ok.certificate.primal > 0.0);
    let (f, report) = GuruParams::new().sigma(1e-3).fit_certified(&data).unwrap();
    assert!(f.certificate.primal <= 1e-280, "{}", f.certificate.primal);
    assert!(!f.converged && !report.converged);
    assert!(f.stopped.as_deref().unwrap_or("").contains("underflows"));
}

#[test]
fn sgd_with_the_max_norm_certifies_its_gap() {
    let data = gaussian_classes(200, 3, 1.0, 0.1, 10);
    let (fit, _) = GuruParams::new()
        .sigma(0.5)
        .norm(NoiseNorm::Linf)
        .solver(Solver::Sgd)
        .eta0(0.5)
        .tolerance(1e-2)
        .fit_certified(&data)
        .unwrap();
    assert!(fit.converged, "gap {}", fit.certificate.relative_gap);
}

#[test]
fn bad_parameters_and_data_are_typed_errors() {
    let data = gaussian_classes(20, 2, 1.0, 0.0, 1);
    for p in [
        GuruParams::new().sigma(0.0),
        GuruParams::new().sigma(-1.0),
        GuruParams::new().sigma(f64::NAN),
        GuruParams::new().sigma(f64::INFINITY),
        GuruParams::new().solver(Solver::Sgd).eta0(0.0),
        GuruParams::new().solver(Solver::Sgd).eta0(-2.0),
        GuruParams::new().tolerance(1.5),
        GuruParams::new().norm(NoiseNorm::Linf),
    ] {
        let e = p.fit(&data).unwrap_err();
        assert!(
            matches!(e, bulwark_core::Error::InvalidParameter { .. }),
            "{e}"
        );
    }
    let x = DenseMatrix::from_rows(&[vec![0.0], vec![1.0], vec![2.0]]).unwrap();
    let multi = Dataset::multiclass(
        "three",
        x,
        vec![0, 1, 2],
        vec!["a".into(), "b".into(), "c".into()],
    )
    .unwrap();
    let e = GuruParams::new().fit(&multi).unwrap_err();
    assert!(e.to_string().contains("binary task"), "{e}");
}

#[test]
fn bias_is_the_weight_of_a_constant_feature() {
    // all points on the positive side of x₁ = 3: only a bias separates them well
    let x = DenseMatrix::from_rows(&[
        vec![3.5],
        vec![4.0],
        vec![3.2],
        vec![2.6],
        vec![2.2],
        vec![2.9],
    ])
    .unwrap();
    let labels = vec![
        Sign::Pos,
        Sign::Pos,
        Sign::Pos,
        Sign::Neg,
        Sign::Neg,
        Sign::Neg,
    ];
    let data = Dataset::binary("shifted", x, labels).unwrap();
    let no_bias = GuruParams::new().sigma(0.1).fit(&data).unwrap();
    assert_eq!(no_bias.model.bias(), 0.0);
    let with = GuruParams::new().sigma(0.1).bias(true).fit(&data).unwrap();
    assert!(with.model.bias() < 0.0);
    assert!(with.report.objective.unwrap() < no_bias.report.objective.unwrap());
}
