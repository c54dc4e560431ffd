//! Seeded samplers: the uniform distribution on the unit ball and isotropic log-concave laws
//! (KLS notes, "Distributions and sampling"), plus labelled halfspace data.
//!
//! Every draw comes from [`bulwark_core::Rng`] through `rand`'s `f64` uniform on `[0, 1)`, and the
//! transforms below are written out here (Box–Muller, inverse CDFs), so a seed fixes every bit.

use std::f64::consts::{PI, SQRT_2};

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use bulwark_core::{Dataset, DenseMatrix, Error, Result, Rng, Sign};

/// A standard normal draw (Box–Muller, cosine branch; two uniforms per draw).
pub fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos()
}

/// A uniform draw on `(-a, a)` (`a ≥ 0`).
pub fn uniform_symmetric(rng: &mut Rng, a: f64) -> f64 {
    a * (2.0 * rng.random::<f64>() - 1.0)
}

/// The distributions of the KLS experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distribution {
    /// Uniform on the unit ball `Bⁿ` (`E xxᵀ = I/(n+2)`): `U^{1/n} g/‖g‖`.
    UnitBall,
    /// Standard Gaussian `N(0, I)` (isotropic log-concave).
    Gaussian,
    /// Uniform on the cube `[−√3, √3]ⁿ` (unit variance per coordinate).
    Cube,
    /// i.i.d. Laplace with scale `1/√2` (unit variance).
    Laplace,
    /// Uniform on the ball of radius `√(n+2)` (isotropic).
    IsotropicBall,
    /// i.i.d. centred exponential `Exp(1) − 1` (asymmetric, unit variance).
    CenteredExponential,
}

impl Distribution {
    /// Every distribution, in declaration order.
    pub const ALL: [Distribution; 6] = [
        Distribution::UnitBall,
        Distribution::Gaussian,
        Distribution::Cube,
        Distribution::Laplace,
        Distribution::IsotropicBall,
        Distribution::CenteredExponential,
    ];

    /// Whether the law is isotropic (mean 0, covariance `I`). `UnitBall` is not (`I/(n+2)`).
    pub fn is_isotropic(self) -> bool {
        self != Distribution::UnitBall
    }

    /// One point in `out` (its length is the dimension `n ≥ 1`).
    pub fn sample_into(self, rng: &mut Rng, out: &mut [f64]) {
        let n = out.len();
        match self {
            Distribution::Gaussian => out.iter_mut().for_each(|v| *v = standard_normal(rng)),
            Distribution::Cube => out
                .iter_mut()
                .for_each(|v| *v = uniform_symmetric(rng, 3f64.sqrt())),
            Distribution::Laplace => out.iter_mut().for_each(|v| {
                // inverse CDF with scale 1/√2
                let u = rng.random::<f64>() - 0.5;
                let a = (1.0 - 2.0 * u.abs()).max(f64::MIN_POSITIVE); // (0, 1]
                *v = -u.signum() * a.ln() / SQRT_2;
            }),
            Distribution::CenteredExponential => out.iter_mut().for_each(|v| {
                let u = 1.0 - rng.random::<f64>(); // (0, 1]
                *v = -u.ln() - 1.0;
            }),
            Distribution::UnitBall | Distribution::IsotropicBall => {
                let mut norm2 = 0.0;
                loop {
                    for v in out.iter_mut() {
                        *v = standard_normal(rng);
                        norm2 += *v * *v;
                    }
                    if norm2 > 0.0 {
                        break;
                    }
                }
                let u: f64 = rng.random::<f64>();
                let mut r = u.powf(1.0 / n as f64);
                if self == Distribution::IsotropicBall {
                    r *= ((n + 2) as f64).sqrt();
                }
                let s = r / norm2.sqrt();
                out.iter_mut().for_each(|v| *v *= s);
            }
        }
    }

    /// `m` points in `n ≥ 1` dimensions, one per row.
    pub fn sample(self, m: usize, n: usize, rng: &mut Rng) -> Result<DenseMatrix> {
        if n == 0 {
            return Err(Error::param("dimension", n, "at least 1"));
        }
        let mut data = vec![0.0; m * n];
        for row in data.chunks_exact_mut(n) {
            self.sample_into(rng, row);
        }
        DenseMatrix::try_new(m, n, data)
    }
}

/// `m` points from `dist`, labelled by the origin-centred halfspace `sign(u·x)` (0 → −1).
pub fn halfspace_data(dist: Distribution, u: &[f64], m: usize, rng: &mut Rng) -> Result<Dataset> {
    if let Some((j, v)) = u.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::param(format!("u[{}]", j + 1), v, "a finite number"));
    }
    let x = dist.sample(m, u.len(), rng)?;
    let y = (0..m).map(|i| Sign::of_score(dot(x.row(i), u))).collect();
    Dataset::binary("halfspace", x, y)
}

/// A uniformly random unit vector in `n ≥ 1` dimensions.
pub fn random_unit_vector(n: usize, rng: &mut Rng) -> Result<Vec<f64>> {
    if n == 0 {
        return Err(Error::param("dimension", n, "at least 1"));
    }
    loop {
        let v: Vec<f64> = (0..n).map(|_| standard_normal(rng)).collect();
        let norm = dot(&v, &v).sqrt();
        if norm > 0.0 {
            return Ok(v.into_iter().map(|a| a / norm).collect());
        }
    }
}

/// `Pr[sign(v·x) ≠ sign(u·x)]` under any rotation-invariant distribution (the unit ball, the
/// Gaussian, the isotropic ball): the angle between `u` and `v` over π (KLS eq. (4)). A zero
/// `v` (no decision) errs everywhere: 1.
pub fn rotation_invariant_error(u: &[f64], v: &[f64]) -> Result<f64> {
    if u.len() != v.len() {
        return Err(Error::shape("hypothesis vs target", u.len(), v.len()));
    }
    let (uu, vv) = (dot(u, u), dot(v, v));
    if !(uu > 0.0 && uu.is_finite()) {
        return Err(Error::param(
            "target",
            "0 or not finite",
            "a non-zero finite vector",
        ));
    }
    if !vv.is_finite() {
        return Err(Error::param("hypothesis", "not finite", "a finite vector"));
    }
    if vv == 0.0 {
        return Ok(1.0);
    }
    // KLS eq. (4): (1/π) arctan(‖v − (v·û)û‖ / (û·v)), as atan2 over the full range
    let along = dot(u, v) / uu.sqrt();
    let across = (vv - along * along).max(0.0).sqrt();
    Ok(across.atan2(along) / PI)
}

/// `Pr[h(x) ≠ sign(u·x)]` estimated on `m` fresh draws from `dist` (Monte Carlo, seeded):
/// for distributions that are not rotation invariant. `h` returns a score (`≤ 0`: negative).
pub fn monte_carlo_error(
    dist: Distribution,
    u: &[f64],
    h: impl Fn(&[f64]) -> f64,
    m: usize,
    rng: &mut Rng,
) -> Result<f64> {
    if m == 0 {
        return Err(Error::param("draws", 0, "at least 1"));
    }
    let mut x = vec![0.0; u.len()];
    let mut wrong = 0usize;
    for _ in 0..m {
        dist.sample_into(rng, &mut x);
        if Sign::of_score(h(&x)) != Sign::of_score(dot(&x, u)) {
            wrong += 1;
        }
    }
    Ok(wrong as f64 / m as f64)
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::rng_from_seed as seeded;

    #[test]
    fn the_exact_error_matches_monte_carlo_on_rotation_invariant_laws() {
        let mut rng = seeded(11);
        for n in [2, 5, 30] {
            let u = random_unit_vector(n, &mut rng).unwrap();
            for t in [0.05f64, 0.4, 1.3, 2.9] {
                // v at angle t from u
                let z = random_unit_vector(n, &mut rng).unwrap();
                let c = dot(&z, &u);
                let mut p: Vec<f64> = z.iter().zip(&u).map(|(a, b)| a - c * b).collect();
                let np = dot(&p, &p).sqrt();
                p.iter_mut().for_each(|a| *a /= np);
                let v: Vec<f64> = u
                    .iter()
                    .zip(&p)
                    .map(|(a, b)| 2.5 * (t.cos() * a + t.sin() * b))
                    .collect();
                let exact = rotation_invariant_error(&u, &v).unwrap();
                assert!((exact - t / PI).abs() < 1e-12);
                for dist in [Distribution::UnitBall, Distribution::Gaussian] {
                    let mc = monte_carlo_error(dist, &u, |x| dot(x, &v), 40_000, &mut rng).unwrap();
                    // 4 standard errors of a proportion near 1/2 at 40000 draws: 0.01
                    assert!(
                        (mc - exact).abs() < 0.01,
                        "{dist:?} n={n} t={t}: {mc} vs {exact}"
                    );
                }
            }
        }
        assert_eq!(
            rotation_invariant_error(&[1.0, 0.0], &[0.0, 0.0]).unwrap(),
            1.0
        );
        assert!(rotation_invariant_error(&[0.0, 0.0], &[1.0, 0.0]).is_err());
        // the cube is not rotation invariant: a diagonal target is where it differs
        let u = [1.0, 1.0];
        let v = [1.0, 0.0];
        let mc =
            monte_carlo_error(Distribution::Cube, &u, |x| dot(x, &v), 40_000, &mut rng).unwrap();
        assert!((mc - 0.25).abs() < 0.01, "{mc}");
    }
}
