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

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
