//! Seeded positive scalings of `H` for the `DsxSystem` benches and the scatter-kernel unit tests
//! (`#[path]`-included by both; the including module has `DsxScalings` in scope).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{DsxScalings, PairScaling};

/// Positive scalings spread over `1e-2 … 1e2`.
pub struct RandomScalings {
    pub theta: Vec<f64>,
    pub phi: Vec<f64>,
    pub w_diag: Vec<f64>,
    pub sigma: Vec<f64>,
    pub rho: Vec<f64>,
    pub kappa: Vec<f64>,
}

impl RandomScalings {
    /// Draws from `rng`, in the order θ (`m`), φ (`nnz`), ω (`n`), σ (`nnz`), ρ (`m`), κ (`m`).
    pub fn draw(rng: &mut ChaCha8Rng, m: usize, n: usize, nnz: usize) -> Self {
        let mut pos = |k: usize| -> Vec<f64> {
            (0..k)
                .map(|_| 10f64.powf(rng.random_range(-2.0..2.0)))
                .collect()
        };
        let (theta, phi, w_diag, sigma, rho, kappa) =
            (pos(m), pos(nnz), pos(n), pos(nnz), pos(m), pos(m));
        Self {
            theta,
            phi,
            w_diag,
            sigma,
            rho,
            kappa,
        }
    }

    /// [`RandomScalings::draw`] from its own generator seeded with `seed`.
    #[allow(dead_code)]
    pub fn new(m: usize, n: usize, nnz: usize, seed: u64) -> Self {
        Self::draw(&mut ChaCha8Rng::seed_from_u64(seed), m, n, nnz)
    }

    pub fn view(&self, b_diag: f64) -> DsxScalings<'_> {
        DsxScalings {
            theta: &self.theta,
            phi: PairScaling::Values(&self.phi),
            w_diag: &self.w_diag,
            b_diag,
            sigma: PairScaling::Values(&self.sigma),
            rho: &self.rho,
            kappa: &self.kappa,
        }
    }
}
