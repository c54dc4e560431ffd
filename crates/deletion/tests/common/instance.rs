//! The seeded instance generator of `lp_bench` (benchmark shapes), shared with the tests that
//! solve one of its shapes and with the workspace bench `benches/lp4.rs` (`#[path]`-included by
//! all three).

use bulwark_core::{CsrMatrix, Dataset, DenseMatrix, Features, Sign};
use rand::{Rng, SeedableRng};

/// `m × n` data, each entry non-zero with probability `density` (every entry when
/// `density ≥ 1`), uniform in `[0, 1)` (`nonneg`) or `[−1, 1)`; labels from a random
/// hyperplane plus noise. CSR unless `density ≥ 1`.
pub fn instance(m: usize, n: usize, density: f64, nonneg: bool, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let w: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut x = vec![0.0; m * n];
    let mut y = Vec::with_capacity(m);
    for i in 0..m {
        for j in 0..n {
            if density >= 1.0 || rng.random_bool(density) {
                x[i * n + j] = if nonneg {
                    rng.random_range(0.0..1.0)
                } else {
                    rng.random_range(-1.0..1.0)
                };
            }
        }
        let s: f64 = (0..n).map(|j| x[i * n + j] * w[j]).sum::<f64>();
        let noise = rng.random_range(-0.3..0.3) * (n as f64).sqrt() / 3.0;
        y.push(if s + noise > 0.0 {
            Sign::Pos
        } else {
            Sign::Neg
        });
    }
    let d = DenseMatrix::try_new(m, n, x).unwrap();
    if density >= 1.0 {
        Dataset::binary("bench", d, y).unwrap()
    } else {
        Dataset::binary("bench", Features::Sparse(CsrMatrix::from_dense(&d)), y).unwrap()
    }
}
