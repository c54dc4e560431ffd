//! Normal-equation solve (factor + solve) against a plain faer GEMM `XᵀDX` of the same shape,
//! measured in the same run. Fixed seeds; instances are built outside the timed closures.

use bulwark_linalg::{DsxScalings, DsxSettings, DsxSystem, PairScaling, Par, RowsRef, SchurKernel};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::{Accum, Mat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use std::time::Duration;

#[path = "support/scalings.rs"]
mod scalings;
use scalings::RandomScalings;

struct Inst {
    m: usize,
    n: usize,
    dense: Vec<f64>,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
    y: Vec<f64>,
    v: Vec<f64>,
    sc: RandomScalings,
}

/// `density = 1` gives dense rows (every feature in the support).
fn instance(m: usize, n: usize, density: f64, seed: u64) -> Inst {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut dense = vec![0.0; m * n];
    let mut indptr = vec![0];
    let mut indices = Vec::new();
    let mut values = Vec::new();
    for i in 0..m {
        for j in 0..n {
            if density >= 1.0 || rng.random_bool(density) {
                let x: f64 = rng.random_range(-1.0..1.0);
                dense[i * n + j] = x;
                indices.push(j);
                values.push(x);
            }
        }
        indptr.push(indices.len());
    }
    let nnz = indices.len();
    let sc = RandomScalings::draw(&mut rng, m, n, nnz);
    let y = (0..m)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let v = vec![1.0; n];
    Inst {
        m,
        n,
        dense,
        indptr,
        indices,
        values,
        y,
        v,
        sc,
    }
}

impl Inst {
    fn rows(&self, csr: bool) -> RowsRef<'_> {
        if csr {
            RowsRef::Csr {
                indptr: &self.indptr,
                indices: &self.indices,
                values: &self.values,
                n: self.n,
            }
        } else {
            RowsRef::Dense {
                data: &self.dense,
                m: self.m,
                n: self.n,
            }
        }
    }

    fn scalings(&self) -> DsxScalings<'_> {
        self.sc.view(0.0)
    }

    /// `X` (column-major, zero-filled) and `D X` for the GEMM baseline.
    fn x_and_dx(&self) -> (Mat<f64>, Mat<f64>) {
        let x = Mat::from_fn(self.m, self.n, |i, j| self.dense[i * self.n + j]);
        let dx = Mat::from_fn(self.m, self.n, |i, j| self.sc.theta[i] * x[(i, j)]);
        (x, dx)
    }
}

fn xtdx(c: &mut Mat<f64>, x: &Mat<f64>, dx: &Mat<f64>, par: Par) {
    faer::linalg::matmul::matmul(
        c.as_mut(),
        Accum::Replace,
        x.transpose(),
        dx.as_ref(),
        1.0,
        par,
    );
}

fn par_name(par: Par) -> &'static str {
    if par == Par::Seq { "seq" } else { "rayon2" }
}

fn bench_one(
    c: &mut Criterion,
    group: &str,
    inst: &Inst,
    csr: bool,
    kernel: SchurKernel,
    par: Par,
    label: &str,
) {
    let (m, n) = (inst.m, inst.n);
    let mut g = c.benchmark_group(group);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    let settings = DsxSettings {
        kernel,
        par,
        threads: if par == Par::Seq { 1 } else { 2 },
        ..DsxSettings::default()
    };
    let mut sys = DsxSystem::try_new_with(inst.rows(csr), &inst.y, &inst.v, 1.0, settings).unwrap();
    let sc = inst.scalings();
    let rhs: Vec<f64> = (0..sys.len()).map(|i| ((i % 7) as f64) - 3.0).collect();
    let mut z = rhs.clone();
    g.bench_function(
        BenchmarkId::new(
            format!("factor_solve/{label}/{}", par_name(par)),
            format!("{m}x{n}"),
        ),
        |b| {
            b.iter(|| {
                sys.factor(&sc).unwrap();
                z.copy_from_slice(&rhs);
                sys.solve_in_place(&sc, &mut z).unwrap();
                black_box(&z);
            })
        },
    );
    g.finish();
}

fn bench_xtdx(c: &mut Criterion, group: &str, inst: &Inst, par: Par) {
    let (m, n) = (inst.m, inst.n);
    let (x, dx) = inst.x_and_dx();
    let mut out = Mat::<f64>::zeros(n, n);
    let mut g = c.benchmark_group(group);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    g.bench_function(
        BenchmarkId::new(format!("xtdx/{}", par_name(par)), format!("{m}x{n}")),
        |b| {
            b.iter(|| {
                xtdx(&mut out, &x, &dx, par);
                black_box(&out);
            })
        },
    );
    g.finish();
}

fn main_size(c: &mut Criterion) {
    let inst = instance(10000, 784, 1.0, 1);
    for par in [Par::Seq, Par::rayon(2)] {
        bench_xtdx(c, "dense_10000x784", &inst, par);
        bench_one(
            c,
            "dense_10000x784",
            &inst,
            false,
            SchurKernel::Auto,
            par,
            "dense",
        );
    }
    drop(inst);
    let inst = instance(10000, 784, 0.19, 2);
    for par in [Par::Seq, Par::rayon(2)] {
        bench_xtdx(c, "sparse19_10000x784", &inst, par);
        bench_one(
            c,
            "sparse19_10000x784",
            &inst,
            true,
            SchurKernel::SparseScatter,
            par,
            "csr_scatter",
        );
        bench_one(
            c,
            "sparse19_10000x784",
            &inst,
            true,
            SchurKernel::DenseGemm,
            par,
            "csr_gemm",
        );
    }
}

fn scaling(c: &mut Criterion) {
    let par = Par::Seq;
    for m in [2500, 5000] {
        let inst = instance(m, 784, 1.0, 3);
        bench_xtdx(c, "scaling_m", &inst, par);
        bench_one(
            c,
            "scaling_m",
            &inst,
            false,
            SchurKernel::Auto,
            par,
            "dense",
        );
    }
    for n in [196, 392] {
        let inst = instance(10000, n, 1.0, 4);
        bench_xtdx(c, "scaling_n", &inst, par);
        bench_one(
            c,
            "scaling_n",
            &inst,
            false,
            SchurKernel::Auto,
            par,
            "dense",
        );
    }
    for density in [0.05, 0.5] {
        let inst = instance(10000, 784, density, 5);
        let label = format!("csr_scatter_d{}", (density * 100.0) as u32);
        bench_one(
            c,
            "scaling_density",
            &inst,
            true,
            SchurKernel::SparseScatter,
            par,
            &label,
        );
    }
}

criterion_group!(benches, main_size, scaling);
criterion_main!(benches);
