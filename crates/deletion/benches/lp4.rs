//! Structured vs generic backend on LP (4): dense m × n data with uniform values.

use bulwark_core::{Dataset, DenseMatrix, Sign};
use bulwark_deletion::{DsxLpParams, FeatureValues, LpBackend};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};

fn synthetic(m: usize, n: usize, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let w: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut x = Vec::with_capacity(m * n);
    let mut y = Vec::with_capacity(m);
    for _ in 0..m {
        let row: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let s: f64 =
            row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + 0.3 * rng.random_range(-1.0..1.0);
        y.push(if s > 0.0 { Sign::Pos } else { Sign::Neg });
        x.extend(row);
    }
    Dataset::binary("bench", DenseMatrix::try_new(m, n, x).unwrap(), y).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("lp4");
    g.sample_size(10);
    for &(m, n) in &[(200, 20), (1000, 100)] {
        let data = synthetic(m, n, 1);
        let params = DsxLpParams::new()
            .budget(n as f64 / 10.0)
            .c(1.0)
            .values(FeatureValues::Uniform)
            // each benchmark times its named solver only (a fallback would be an error)
            .fallback(false);
        g.bench_with_input(
            BenchmarkId::new("structured", format!("{m}x{n}")),
            &data,
            |b, d| {
                b.iter(|| {
                    params
                        .clone()
                        .backend(LpBackend::Structured)
                        .fit(d)
                        .unwrap()
                })
            },
        );
        if m * n <= 4000 {
            g.bench_with_input(
                BenchmarkId::new("generic-sparse", format!("{m}x{n}")),
                &data,
                |b, d| {
                    b.iter(|| {
                        params
                            .clone()
                            .backend(LpBackend::GenericSparse)
                            .fit(d)
                            .unwrap()
                    })
                },
            );
        }
    }
    g.finish();
}

use bulwark_core::Fit;
criterion_group!(benches, bench);
criterion_main!(benches);
