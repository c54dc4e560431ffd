//! Interleaved min-of-N timing of `XᵀDX` (faer GEMM) and factor + solve on the same shape:
//! robust to a loaded machine (each repetition runs both back to back; the minimum over
//! repetitions is reported). Complements the criterion bench `normal_eq`.
#![allow(clippy::print_stdout)]

use bulwark_linalg::{DsxScalings, DsxSettings, DsxSystem, PairScaling, Par, RowsRef, SchurKernel};
use faer::{Accum, Mat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use std::time::Instant;

#[path = "support/scalings.rs"]
mod scalings;
use scalings::RandomScalings;

fn secs(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn case(m: usize, n: usize, density: f64, kernel: SchurKernel, par: Par, reps: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut dense = vec![0.0; m * n];
    let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
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
    let scalings = RandomScalings::draw(&mut rng, m, n, nnz);
    let y: Vec<f64> = (0..m)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let v = vec![1.0; n];
    let rows = if density >= 1.0 {
        RowsRef::Dense { data: &dense, m, n }
    } else {
        RowsRef::Csr {
            indptr: &indptr,
            indices: &indices,
            values: &values,
            n,
        }
    };
    let settings = DsxSettings {
        kernel,
        par,
        threads: if par == Par::Seq { 1 } else { 2 },
        ..DsxSettings::default()
    };
    let mut sys = DsxSystem::try_new_with(rows, &y, &v, 1.0, settings).unwrap();
    let sc = scalings.view(0.0);
    let rhs: Vec<f64> = (0..sys.len()).map(|i| ((i % 7) as f64) - 3.0).collect();
    let mut z = rhs.clone();
    let x = Mat::from_fn(m, n, |i, j| dense[i * n + j]);
    let dx = Mat::from_fn(m, n, |i, j| scalings.theta[i] * x[(i, j)]);
    let mut c = Mat::<f64>::zeros(n, n);
    let (mut tg, mut tf, mut ts) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let mut flops = 0.0;
    for _ in 0..reps {
        tg = tg.min(secs(|| {
            faer::linalg::matmul::matmul(
                c.as_mut(),
                Accum::Replace,
                x.transpose(),
                dx.as_ref(),
                1.0,
                par,
            );
            black_box(&c);
        }));
        tf = tf.min(secs(|| flops = sys.factor(&sc).unwrap().schur_flops));
        ts = ts.min(secs(|| {
            z.copy_from_slice(&rhs);
            sys.solve_in_place(&sc, &mut z).unwrap();
            black_box(&z);
        }));
    }
    let gemm_flops = 2.0 * (m * n * n) as f64;
    println!(
        "| {m}×{n} | {:>4.0} % | {:?} | {} | {:.1} ms ({:.1} GF/s) | {:.1} ms | {:.1} ms | {:.1} ms ({:.1} GF/s) | **{:.2}×** |",
        density * 100.0,
        sys.kernel(),
        if par == Par::Seq { "Seq" } else { "rayon(2)" },
        tg * 1e3,
        gemm_flops / tg * 1e-9,
        tf * 1e3,
        ts * 1e3,
        (tf + ts) * 1e3,
        flops / (tf + ts) * 1e-9,
        (tf + ts) / tg
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!(
        "| m×n | density | kernel | par | XᵀDX | factor | solve | factor+solve (Schur GF/s) | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for par in [Par::Seq, Par::rayon(2)] {
        case(10000, 784, 1.0, SchurKernel::Auto, par, 7);
        case(10000, 784, 0.19, SchurKernel::Auto, par, 7);
    }
    case(10000, 784, 0.19, SchurKernel::DenseGemm, Par::Seq, 5);
    case(2500, 784, 1.0, SchurKernel::Auto, Par::Seq, 7);
    case(5000, 784, 1.0, SchurKernel::Auto, Par::Seq, 7);
    case(10000, 196, 1.0, SchurKernel::Auto, Par::Seq, 9);
    case(10000, 392, 1.0, SchurKernel::Auto, Par::Seq, 7);
    case(10000, 784, 0.05, SchurKernel::Auto, Par::Seq, 7);
    case(10000, 784, 0.5, SchurKernel::SparseScatter, Par::Seq, 5);
}
