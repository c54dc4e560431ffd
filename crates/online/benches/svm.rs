//! SVM (and FDROP) training time on a standard dense shape.
//! Run: `cargo bench -p bulwark-online --bench svm`.

use std::hint::black_box;

use bulwark_core::{Dataset, DenseMatrix, Fit, Sign, rng_from_seed};
use bulwark_online::{FdropParams, SvmParams};
use criterion::{Criterion, criterion_group, criterion_main};
use rand::Rng as _;

/// Two overlapping classes, `m × n` dense, values in [−1, 1] plus a class shift.
fn data(m: usize, n: usize) -> Dataset {
    let mut rng = rng_from_seed(7);
    let mut xs = Vec::with_capacity(m * n);
    let mut ys = Vec::with_capacity(m);
    for i in 0..m {
        let y = if i % 2 == 0 { Sign::Pos } else { Sign::Neg };
        for _ in 0..n {
            xs.push(rng.random_range(-1.0..1.0) + 0.1 * y.as_f64());
        }
        ys.push(y);
    }
    Dataset::binary("bench", DenseMatrix::try_new(m, n, xs).unwrap(), ys).unwrap()
}

fn bench(c: &mut Criterion) {
    let d = data(5000, 100);
    let mut g = c.benchmark_group("svm_5000x100");
    g.sample_size(10);
    for tol in [1e-3, 1e-6] {
        g.bench_function(format!("svm_C1_tol{tol:e}"), |b| {
            b.iter(|| black_box(SvmParams::new().c(1.0).tolerance(tol).fit(&d).unwrap()))
        });
    }
    g.finish();
    let small = data(1000, 50);
    let mut g = c.benchmark_group("fdrop_1000x50");
    g.sample_size(10);
    g.bench_function("fdrop_k5_C1_tol1e-3", |b| {
        b.iter(|| {
            black_box(
                FdropParams::new()
                    .k(5)
                    .c(1.0)
                    .tolerance(1e-3)
                    .fit(&small)
                    .unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
