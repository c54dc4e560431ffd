//! One O2B epoch over 10000 × 784 dense data against a plain pass computing `Xw` over the same
//! data (acceptance: ≤ 3×). Run: `cargo bench -p bulwark-online --bench o2b`.

use std::hint::black_box;

use bulwark_core::{Dataset, DenseMatrix, FeatureBudget, Features, RowView, Sign, rng_from_seed};
use bulwark_online::O2bOnline;
use criterion::{Criterion, criterion_group, criterion_main};
use rand::Rng as _;

const M: usize = 10_000;
const N: usize = 784;

/// MNIST-shaped dense data: a noisy linear concept, rows scaled to ‖x‖₁ = 1 (Theorem 4).
fn data() -> Dataset {
    let mut rng = rng_from_seed(42);
    let truth: Vec<f64> = (0..N).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut values = Vec::with_capacity(M * N);
    let mut ys = Vec::with_capacity(M);
    for _ in 0..M {
        let row: Vec<f64> = (0..N).map(|_| rng.random_range(-1.0..1.0)).collect();
        let l1: f64 = row.iter().map(|v| v.abs()).sum();
        let s: f64 =
            row.iter().zip(&truth).map(|(a, b)| a * b).sum::<f64>() + rng.random_range(-1.0..1.0);
        ys.push(Sign::of_score(s));
        values.extend(row.iter().map(|v| v / l1));
    }
    Dataset::binary("bench", DenseMatrix::try_new(M, N, values).unwrap(), ys).unwrap()
}

fn bench(c: &mut Criterion) {
    let data = data();
    let y = data.binary_labels().unwrap().to_vec();
    let Features::Dense(dense) = data.features() else {
        unreachable!("dense data")
    };
    let w: Vec<f64> = (0..N).map(|j| (j as f64 * 0.37).sin()).collect();
    let mut g = c.benchmark_group("o2b_10000x784");
    g.sample_size(10);
    g.bench_function("xw_pass", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for i in 0..M {
                acc += data.row(i).dot(black_box(&w));
            }
            black_box(acc)
        })
    });
    g.bench_function("xw_pass_4acc", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for i in 0..M {
                let x = dense.row(i);
                let mut s = [0.0f64; 4];
                for (xc, wc) in x.chunks_exact(4).zip(w.chunks_exact(4)) {
                    for k in 0..4 {
                        s[k] += xc[k] * wc[k];
                    }
                }
                acc += (s[0] + s[1]) + (s[2] + s[3]);
            }
            black_box(acc)
        })
    });
    for budget in [0.0, 78.0] {
        let fb = FeatureBudget::uniform(N, budget).unwrap();
        g.bench_function(format!("o2b_epoch_N{budget}"), |b| {
            b.iter(|| {
                let mut o = O2bOnline::with_horizon(fb.clone(), 1.0, M).unwrap();
                for i in 0..M {
                    o.observe(RowView::Dense(dense.row(i)), y[i]).unwrap();
                }
                black_box(o.averaged())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
