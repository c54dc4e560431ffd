//! LP (4) of Dekel, Shamir & Xiao on seeded dense `m × n` data (uniform values, `N = n/10`,
//! `C = 1`): the structured backend (the DSX interior-point method on the block-arrow normal
//! equations) against the generic sparse LP engine, on the instances of `lp_bench`
//! (`crates/deletion/tests/common/instance.rs`). Run: `cargo bench -p bulwark --bench lp4`.

use std::hint::black_box;

use bulwark::deletion::{DsxLpParams, FeatureValues, LpBackend};
use bulwark::prelude::Fit;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[path = "../crates/deletion/tests/common/instance.rs"]
mod instance;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("lp4");
    g.sample_size(10);
    for &(m, n) in &[(200, 20), (1000, 100)] {
        let data = instance::instance(m, n, 1.0, false, 1);
        let params = DsxLpParams::new()
            .budget(n as f64 / 10.0)
            .c(1.0)
            .values(FeatureValues::Uniform)
            // each benchmark times its named solver only (a fallback would be an error)
            .fallback(false);
        let mut backends = vec![("structured", LpBackend::Structured)];
        if m * n <= 4000 {
            backends.push(("generic-sparse", LpBackend::GenericSparse));
        }
        for (name, backend) in backends {
            let params = params.clone().backend(backend);
            g.bench_with_input(BenchmarkId::new(name, format!("{m}x{n}")), &data, |b, d| {
                b.iter(|| black_box(params.fit(d).unwrap()))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
