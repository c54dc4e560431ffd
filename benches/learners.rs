//! Training time of the learners. `svm_5000x100` and `fdrop_1000x50`: the SVM to a certified
//! relative duality gap, and FDROP (K = 5); `learners_1000x50`: every learner of the workspace —
//! the DSX LP (4), O2B, the SVM, FDROP and logistic regression — on one data set.
//! Run: `cargo bench -p bulwark --bench learners`.

use std::hint::black_box;

use bulwark::core::rng_from_seed;
use bulwark::prelude::*;
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

    // budget N = 5 (10 % of the features) for the robust learners, C = 1 throughout
    let mut g = c.benchmark_group("learners_1000x50");
    g.sample_size(10);
    let lp = DsxLpParams::new().budget(5.0).c(1.0);
    g.bench_function("dsx_lp4", |b| b.iter(|| black_box(lp.fit(&small).unwrap())));
    let o2b = O2bParams::new().budget(5.0).c(1.0);
    g.bench_function("o2b", |b| b.iter(|| black_box(o2b.fit(&small).unwrap())));
    let svm = SvmParams::new().c(1.0).tolerance(1e-3);
    g.bench_function("svm", |b| b.iter(|| black_box(svm.fit(&small).unwrap())));
    let fdrop = FdropParams::new().k(5).c(1.0).tolerance(1e-3);
    g.bench_function("fdrop_k5", |b| {
        b.iter(|| black_box(fdrop.fit(&small).unwrap()))
    });
    let logreg = LogregParams::new().l2(1e-3);
    g.bench_function("logreg", |b| {
        b.iter(|| black_box(logreg.fit(&small).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
