//! The seeded instance generator of `lp_bench` (benchmark shapes), shared with the tests that
//! solve one of its shapes and with the workspace bench `benches/lp4.rs` (`#[path]`-included by
//! all three); each includer uses some of the generators.
#![allow(dead_code)]

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

/// A text-shaped instance: `m` documents over a vocabulary of `n` words drawn with Zipf
/// frequencies (exponent `s`, rank 1 the most frequent), each document `⌈−ℓ ln U⌉` draws long
/// (geometric lengths of mean about `mean_len`), its features the word counts; labels from a
/// random hyperplane plus noise. Stored sparse (CSR) without a dense copy, so shapes of the
/// size of a real corpus (20 000 × 100 000) are cheap to build.
pub fn text_instance(m: usize, n: usize, mean_len: f64, s: f64, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for r in 0..n {
        acc += 1.0 / ((r + 1) as f64).powf(s);
        cdf.push(acc);
    }
    let w: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
    let mut y = Vec::with_capacity(m);
    let mut words = Vec::new();
    for _ in 0..m {
        let u: f64 = rng.random();
        let len = (-(1.0 - u).ln() * mean_len).ceil().max(1.0) as usize;
        words.clear();
        for _ in 0..len {
            let t = rng.random::<f64>() * acc;
            words.push(cdf.partition_point(|&c| c < t).min(n - 1));
        }
        words.sort_unstable();
        let mut score = 0.0;
        let mut k = 0;
        while k < words.len() {
            let j = words[k];
            let count = words[k..].iter().take_while(|&&v| v == j).count();
            indices.push(j);
            values.push(count as f64);
            score += w[j] * count as f64;
            k += count;
        }
        indptr.push(indices.len());
        let noise = rng.random_range(-0.5..0.5) * (len as f64).sqrt();
        y.push(if score + noise > 0.0 {
            Sign::Pos
        } else {
            Sign::Neg
        });
    }
    let x = CsrMatrix::try_new(m, n, indptr, indices, values).unwrap();
    Dataset::binary("text", Features::Sparse(x), y).unwrap()
}
