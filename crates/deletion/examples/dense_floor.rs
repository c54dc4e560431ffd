//! The memory floor of one dense iteration of the structured IPM, against one `XᵀDX` of the same
//! matrix (issue 61's dense point; the measurements are in `docs/design/deletion.md`).
//!
//! `dense_floor [m] [n] [reps]` (default 12 000 × 784, the Fashion-MNIST pair's shape; best of
//! 5) times, on 1 and on 2 threads:
//! - one `XᵀDX` as `lp_bench` measures it (faer GEMM `Xᵀ (D X)`, `m × n`);
//! - the least the per-pair arrays of a Mehrotra iteration (predictor and corrector, no
//!   Gondzio corrector) can be streamed in, fused as far as the algebra allows: three sweeps
//!   over the `m n` pairs, 256 bytes per pair:
//!   1. the update of the iterate `(s, y, u, z)` along the last direction, the scalings the
//!      factorisation reads and the predictor's right-hand side (read `x`, the iterate and the
//!      direction, write the iterate and one scaling: 72 + 40 bytes);
//!   2. the predictor's recovery, its second-order products and the corrector's right-hand
//!      side as two partial sums (`σμ` enters linearly; read `x` and the iterate, write two
//!      products: 40 + 16 bytes);
//!   3. the corrector's recovery with its ratio tests (read `x`, the iterate and the products,
//!      write the direction: 56 + 32 bytes).
//!
//! The arithmetic is of the same kind as the solver's (a division per pair for `1/s`, `1/u`,
//! products and sums, the right-hand sides' per-feature sums); the values are not an LP's. The
//! floor of an iteration is one `XᵀDX` (forming `S`) plus the three sweeps; the residuals, the
//! certificate, the factorisation of `S`, the solves and any corrector come on top.

#![allow(clippy::print_stdout)] // a measurement program reports on stdout

use std::time::Instant;

use faer::{Mat, Par};
use rayon::prelude::*;

#[path = "../tests/common/xtdx.rs"]
mod xtdx;

/// The per-pair arrays of the iterate and of one direction, and the data.
struct Pairs {
    x: Vec<f64>,
    it: [Vec<f64>; 4],
    dir: [Vec<f64>; 4],
    scal: Vec<f64>,
    prod: [Vec<f64>; 2],
}

fn seeded(len: usize, seed: u64, lo: f64) -> Vec<f64> {
    // a fixed linear congruential sequence (the values only need to be positive and varied)
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

impl Pairs {
    fn new(pairs: usize) -> Self {
        let v = |s| seeded(pairs, s, 0.5);
        Self {
            x: seeded(pairs, 1, -0.5),
            it: [v(2), v(3), v(4), v(5)],
            dir: [v(6), v(7), v(8), v(9)].map(|d| d.into_iter().map(|e| e - 1.0).collect()),
            scal: vec![0.0; pairs],
            prod: [vec![0.0; pairs], vec![0.0; pairs]],
        }
    }
}

/// Rows of `n` pairs handed to one job.
const ROWS_PER_JOB: usize = 64;

/// The three sweeps of one iteration; returns a checksum (so that nothing is optimised away).
/// `ARITH`: with arithmetic of the solver's kind; else the same arrays read and written with
/// additions and multiplications only (the floor the memory alone sets).
fn sweeps<const ARITH: bool>(p: &mut Pairs, n: usize, w: &[f64]) -> f64 {
    let job = ROWS_PER_JOB * n;
    let alpha = 0.9;
    // 1. update, scalings, predictor right-hand side
    let [s, y, u, z] = &mut p.it;
    let [ds, dy, du, dz] = &p.dir;
    let r1: f64 = (
        s.par_chunks_mut(job),
        y.par_chunks_mut(job),
        u.par_chunks_mut(job),
        z.par_chunks_mut(job),
        p.scal.par_chunks_mut(job),
    )
        .into_par_iter()
        .zip(p.x.par_chunks(job))
        .zip((ds.par_chunks(job), dy.par_chunks(job)).into_par_iter())
        .zip((du.par_chunks(job), dz.par_chunks(job)).into_par_iter())
        .map(|((((s, y, u, z, sc), x), (ds, dy)), (du, dz))| {
            let mut acc = vec![0.0; n];
            for o in (0..x.len()).step_by(n) {
                let r = o..o + n;
                let (s, y, u, z, sc) = (
                    &mut s[r.clone()],
                    &mut y[r.clone()],
                    &mut u[r.clone()],
                    &mut z[r.clone()],
                    &mut sc[r.clone()],
                );
                let (x, ds, dy, du, dz) = (
                    &x[r.clone()],
                    &ds[r.clone()],
                    &dy[r.clone()],
                    &du[r.clone()],
                    &dz[r],
                );
                let acc = &mut acc[..n];
                for k in 0..n {
                    let j = k;
                    let sn = s[k] + alpha * ds[k];
                    let yn = y[k] + alpha * dy[k];
                    let un = u[k] + alpha * du[k];
                    let zn = z[k] + alpha * dz[k];
                    s[k] = sn;
                    y[k] = yn;
                    u[k] = un;
                    z[k] = zn;
                    if ARITH {
                        sc[k] = yn / sn + zn / un;
                        acc[j] += x[k] * yn;
                    } else {
                        sc[k] = x[k] * (sn + yn + un + zn);
                    }
                }
            }
            acc.iter().sum::<f64>()
        })
        .sum();
    // 2. predictor recovery, second-order products, the corrector's right-hand side
    let [s, y, u, z] = &p.it;
    let [rs, rt] = &mut p.prod;
    let r2: f64 = (rs.par_chunks_mut(job), rt.par_chunks_mut(job))
        .into_par_iter()
        .zip((s.par_chunks(job), y.par_chunks(job)).into_par_iter())
        .zip((u.par_chunks(job), z.par_chunks(job)).into_par_iter())
        .zip(p.x.par_chunks(job))
        .map(|((((rs, rt), (s, y)), (u, z)), x)| {
            let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
            let mut pm = 0.0f64;
            for o in (0..x.len()).step_by(n) {
                let r = o..o + n;
                let (rs, rt) = (&mut rs[r.clone()], &mut rt[r.clone()]);
                let (s, y, u, z, x) = (
                    &s[r.clone()],
                    &y[r.clone()],
                    &u[r.clone()],
                    &z[r.clone()],
                    &x[r],
                );
                let (a, b, w) = (&mut a[..n], &mut b[..n], &w[..n]);
                for k in 0..n {
                    let j = k;
                    if !ARITH {
                        rs[k] = x[k] * s[k] + y[k];
                        rt[k] = x[k] * u[k] + z[k];
                        continue;
                    }
                    let (is, iu) = (1.0 / s[k], 1.0 / u[k]);
                    let dsa = x[k] * w[j] - 0.25 * u[k];
                    let dya = -y[k] * (1.0 + dsa * is);
                    let dua = 0.5 * dsa;
                    let dza = -z[k] * (1.0 + dua * iu);
                    rs[k] = dsa * dya;
                    rt[k] = dua * dza;
                    a[j] += x[k] * (rs[k] * is);
                    b[j] += x[k] * is;
                    pm = pm.max(-dsa * is).max(-dua * iu);
                }
            }
            a.iter().sum::<f64>() + b.iter().sum::<f64>() + pm
        })
        .sum();
    // 3. corrector recovery and ratio tests
    let [ds, dy, du, dz] = &mut p.dir;
    let [rs, rt] = &p.prod;
    let target = 0.01;
    let r3: f64 = (
        ds.par_chunks_mut(job),
        dy.par_chunks_mut(job),
        du.par_chunks_mut(job),
        dz.par_chunks_mut(job),
    )
        .into_par_iter()
        .zip((s.par_chunks(job), y.par_chunks(job)).into_par_iter())
        .zip((u.par_chunks(job), z.par_chunks(job)).into_par_iter())
        .zip((rs.par_chunks(job), rt.par_chunks(job), p.x.par_chunks(job)).into_par_iter())
        .map(|((((ds, dy, du, dz), (s, y)), (u, z)), (rs, rt, x))| {
            let (mut pm, mut dm) = (0.0f64, 0.0f64);
            for o in (0..x.len()).step_by(n) {
                let r = o..o + n;
                let (ds, dy, du, dz) = (
                    &mut ds[r.clone()],
                    &mut dy[r.clone()],
                    &mut du[r.clone()],
                    &mut dz[r.clone()],
                );
                let (s, y, u, z) = (&s[r.clone()], &y[r.clone()], &u[r.clone()], &z[r.clone()]);
                let (rs, rt, x, w) = (&rs[r.clone()], &rt[r], &x[o..o + n], &w[..n]);
                for k in 0..n {
                    let j = k;
                    if !ARITH {
                        let a = x[k] * 0.25 - s[k];
                        (ds[k], dy[k]) = (a, rs[k] - y[k] * a);
                        (du[k], dz[k]) = (0.5 * a - u[k], rt[k] - z[k] * a);
                        continue;
                    }
                    let (is, iu) = (1.0 / s[k], 1.0 / u[k]);
                    let dsn = x[k] * w[j] - 0.25 * u[k];
                    let dun = 0.5 * dsn;
                    let dyn_ = (target - s[k] * y[k] - rs[k] - y[k] * dsn) * is;
                    let dzn = (target - u[k] * z[k] - rt[k] - z[k] * dun) * iu;
                    ds[k] = dsn;
                    dy[k] = dyn_;
                    du[k] = dun;
                    dz[k] = dzn;
                    pm = pm.max(-dsn * is).max(-dun * iu);
                    dm = dm.max(-dyn_ / y[k]).max(-dzn / z[k]);
                }
            }
            pm + dm
        })
        .sum();
    r1 + r2 + r3
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("usage: dense_floor [m] [n] [reps]"))
        .collect();
    let m = args.first().copied().unwrap_or(12_000);
    let n = args.get(1).copied().unwrap_or(784);
    let reps = args.get(2).copied().unwrap_or(5);
    let pairs = m * n;
    let x = Mat::<f64>::from_fn(m, n, |i, j| ((i * 31 + j * 17) % 13) as f64 / 13.0 - 0.5);
    let dx = Mat::<f64>::from_fn(m, n, |i, j| (0.5 + (i % 7) as f64 / 7.0) * x[(i, j)]);
    let mut out = Mat::<f64>::zeros(n, n);
    let mut p = Pairs::new(pairs);
    let w = seeded(n, 10, -0.5);
    let bytes = 256.0 * pairs as f64;
    println!(
        "m = {m}, n = {n}: {pairs} pairs, {:.2} GB streamed per iteration at the floor",
        bytes / 1e9
    );
    println!(
        "threads | XᵀDX (s) | three sweeps (s) | GB/s | floor in XᵀDX | traffic only (s) | GB/s | floor in XᵀDX"
    );
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        let par = if threads == 1 {
            Par::Seq
        } else {
            Par::rayon(threads)
        };
        let (g, f, t, sum) = pool.install(|| {
            let g = xtdx::best_seconds(&x, &dx, &mut out, par, reps);
            let mut best = f64::INFINITY;
            let mut sum = 0.0;
            for _ in 0..reps {
                let t = Instant::now();
                sum += sweeps::<true>(&mut p, n, &w);
                best = best.min(t.elapsed().as_secs_f64());
            }
            let mut bare = f64::INFINITY;
            for _ in 0..reps {
                let t = Instant::now();
                sum += sweeps::<false>(&mut p, n, &w);
                bare = bare.min(t.elapsed().as_secs_f64());
            }
            (g, best, bare, sum)
        });
        std::hint::black_box(sum);
        println!(
            "{threads} | {g:.4} | {f:.4} | {:.1} | {:.2} | {t:.4} | {:.1} | {:.2}",
            bytes / f / 1e9,
            1.0 + f / g,
            bytes / t / 1e9,
            1.0 + t / g
        );
    }
}
