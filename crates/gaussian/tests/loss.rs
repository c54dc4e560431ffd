//! The loss family against independent computations: the thesis's bounds and identities,
//! Monte Carlo under the adversary's covariance, finite differences, and brute-force conjugates.

use bulwark_gaussian::loss::{Loss, NoiseNorm, perspective};
use bulwark_gaussian::special::{FRAC_1_SQRT_2PI, norm_cdf, norm_pdf, smooth_hinge};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

#[test]
#[allow(clippy::excessive_precision)] // the 20-digit reference values as mpmath printed them
fn smooth_hinge_bounds_and_symmetry_over_the_real_line() {
    // Thm 3.1: [z]+ ≤ f(z) ≤ [z]+ + 1/√(2π), and f(z) = z + f(−z)
    let mut z = -60.0;
    while z <= 60.0 {
        let f = smooth_hinge(z);
        let h = z.max(0.0);
        assert!(f >= h, "f({z}) = {f} below the hinge");
        assert!(f - h <= FRAC_1_SQRT_2PI + 1e-15, "f({z}) - hinge too large");
        let mirror = z + smooth_hinge(-z);
        assert!(
            (f - mirror).abs() <= 1e-15 * f.max(1.0),
            "f(z) != z + f(-z) at {z}"
        );
        z += 0.173;
    }
    assert!((smooth_hinge(0.0) - FRAC_1_SQRT_2PI).abs() < 1e-16);
    // relative accuracy across the line, against 50-digit values (mpmath: z Φ(z) + φ(z))
    for (z, exact) in [
        (-35.0, 3.2088044826024767636e-270),
        (-20.0, 1.3700124947295799431e-90),
        (-10.0, 7.4745602545893280366e-25),
        (-3.0, 0.00038215431704772359565),
        (2.5, 2.5020041371791281994),
        (7.0, 7.0000000000001760326),
    ] {
        let f = smooth_hinge(z);
        assert!(
            (f - exact).abs() <= 4e-15 * exact,
            "f({z}) = {f:e}, exact {exact:e}"
        );
    }
}

#[test]
fn derivatives_match_finite_differences() {
    for loss in Loss::ALL {
        for k in 0..80 {
            let z = -9.7 + 0.25 * k as f64;
            let h = 1e-5;
            let fd1 = (loss.value(z + h) - loss.value(z - h)) / (2.0 * h);
            assert!((fd1 - loss.d1(z)).abs() <= 1e-8, "{loss:?} f' at {z}");
            assert!((loss.d1(z) + loss.d1_complement(z) - 1.0).abs() <= 1e-15);
            // Huber's f'' jumps at ±4: skip the kinks
            if loss != Loss::Huber || (z.abs() - 4.0).abs() > 2.0 * h {
                let fd2 = (loss.d1(z + h) - loss.d1(z - h)) / (2.0 * h);
                assert!((fd2 - loss.d2(z)).abs() <= 1e-7, "{loss:?} f'' at {z}");
            }
            let r = loss.value(z) - z * loss.d1(z);
            assert!((r - loss.scale_derivative(z)).abs() <= 1e-12 * (1.0 + z.abs()));
            assert!(
                loss.scale_derivative(z) >= 0.0,
                "perspective must be nondecreasing in a"
            );
        }
    }
    // Gaussian: f' = Φ (2.17), f'' = φ (2.18), ∂g/∂a = φ (Lemma 4, corrected exponent)
    for z in [-3.0, -0.5, 0.0, 1.2, 4.0] {
        assert_eq!(Loss::Gauss.d1(z), norm_cdf(z));
        assert_eq!(Loss::Gauss.d2(z), norm_pdf(z));
        assert_eq!(Loss::Gauss.scale_derivative(z), norm_pdf(z));
    }
}

/// `min_z f̃(z) − αz` by golden-section search (f̃ − αz is convex).
fn brute_conjugate(loss: Loss, alpha: f64) -> (f64, f64) {
    let g = |z: f64| loss.value(z) - alpha * z;
    let (mut a, mut b) = (-60.0_f64, 60.0_f64);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..200 {
        let c = b - r * (b - a);
        let d = a + r * (b - a);
        if g(c) < g(d) {
            b = d;
        } else {
            a = c;
        }
    }
    let z = 0.5 * (a + b);
    (g(z), z)
}

#[test]
fn each_conjugate_pair_holds() {
    // Lemma 6: φ∘Φ⁻¹; (3.26): H₂; (3.29): 4α(1 − α)
    for loss in Loss::ALL {
        for k in 1..40 {
            let alpha = k as f64 / 40.0;
            let (min, zmin) = brute_conjugate(loss, alpha);
            let s = loss.conjugate(alpha, 1.0 - alpha);
            assert!(
                (min - s).abs() <= 1e-10,
                "{loss:?} at {alpha}: {min} vs {s}"
            );
            let z = loss.conjugate_argmin(alpha, 1.0 - alpha);
            assert!((z - zmin).abs() <= 1e-5, "{loss:?} argmin at {alpha}");
        }
        assert_eq!(loss.conjugate(1.5, -0.5), f64::NEG_INFINITY);
    }
    let a: f64 = 0.3;
    let h2 = -a * a.log2() - (1.0 - a) * (1.0 - a).log2();
    assert!((Loss::Log.conjugate(a, 1.0 - a) - h2).abs() < 1e-15);
    assert_eq!(Loss::Huber.conjugate(0.25, 0.75), 0.75);
}

/// Proposition 1 / Thm 2.1: the closed form is E[1 − y wᵀ(x + n)]₊ under n ~ N(0, σ²ŵŵᵀ),
/// and the worst case beats isotropic noise of the same trace.
#[test]
fn closed_form_equals_monte_carlo_under_the_worst_covariance() {
    let w = [0.8, -0.5, 0.3];
    let x = [0.4, 0.1, -0.2];
    let y = 1.0;
    let sigma = 0.7;
    let wn = NoiseNorm::L2.of(&w);
    let b = 1.0 - y * (w[0] * x[0] + w[1] * x[1] + w[2] * x[2]);
    let closed = perspective(Loss::Gauss, sigma * wn, b);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let samples = 400_000;
    let (mut worst, mut iso) = (0.0, 0.0);
    let (mut worst_sq, mut iso_sq) = (0.0, 0.0);
    for _ in 0..samples {
        // Σ* = σ² ŵŵᵀ: y wᵀn = σ‖w‖ ε
        let e: f64 = StandardNormal.sample(&mut rng);
        let l = (b - y * sigma * wn * e).max(0.0);
        worst += l;
        worst_sq += l * l;
        // isotropic, trace σ²: n ~ N(0, σ²/3 I)
        let mut wtn = 0.0;
        for wj in w {
            let e: f64 = StandardNormal.sample(&mut rng);
            wtn += wj * sigma / 3f64.sqrt() * e;
        }
        let l = (b - y * wtn).max(0.0);
        iso += l;
        iso_sq += l * l;
    }
    let n = samples as f64;
    let (worst, iso) = (worst / n, iso / n);
    let se = ((worst_sq / n - worst * worst) / n).sqrt();
    assert!(
        (worst - closed).abs() <= 4.0 * se,
        "{worst} vs closed form {closed} (se {se})"
    );
    let se_iso = ((iso_sq / n - iso * iso) / n).sqrt();
    assert!(
        iso + 4.0 * se_iso < closed,
        "isotropic {iso} should be below {closed}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Thm 3.3: hinge ≤ ℓ ≤ hinge + σ‖w‖/√(2π), so ℓ → hinge as σ → 0.
    #[test]
    fn loss_sits_between_hinge_and_its_bound(b in -5.0f64..5.0, a in 1e-9f64..10.0) {
        let l = perspective(Loss::Gauss, a, b);
        let h = b.max(0.0);
        prop_assert!(l >= h - 1e-15);
        prop_assert!(l <= h + a * FRAC_1_SQRT_2PI + 1e-12);
    }

    /// The perspective's partial derivatives (Lemma 4): ∂g/∂a = r(b/a), ∂g/∂b = f̃'(b/a).
    #[test]
    fn perspective_partials_match_finite_differences(
        b in -3.0f64..3.0, a in 0.2f64..3.0, k in 0usize..3
    ) {
        let loss = Loss::ALL[k];
        let h = 1e-6;
        let ga = (perspective(loss, a + h, b) - perspective(loss, a - h, b)) / (2.0 * h);
        let gb = (perspective(loss, a, b + h) - perspective(loss, a, b - h)) / (2.0 * h);
        prop_assert!((ga - loss.scale_derivative(b / a)).abs() <= 1e-6);
        prop_assert!((gb - loss.d1(b / a)).abs() <= 1e-6);
    }
}

#[test]
fn loss_tends_to_the_hinge_as_sigma_vanishes() {
    for b in [-1.0, -0.1, 0.0, 0.3, 2.0] {
        let mut prev = f64::INFINITY;
        for k in 0..12 {
            let a = 10f64.powi(-k);
            let l = perspective(Loss::Gauss, a, b);
            assert!(l <= prev + 1e-15, "not monotone in a (Lemma 2)");
            prev = l;
        }
        assert!((prev - b.max(0.0)).abs() <= 1e-11 * FRAC_1_SQRT_2PI + 1e-15);
    }
    assert_eq!(perspective(Loss::Gauss, 0.0, 1.0), 1.0);
}
