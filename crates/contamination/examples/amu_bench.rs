//! The runner of `cargo xtask bench amu`: A_mu (Lanczos on a Gram matrix kept by rank-one
//! downdates) against the same algorithm written directly (the Gram matrix formed again and fully
//! decomposed every pass, faer's BLAS-3 product and symmetric eigensolver), in the same process
//! on the threads rayon is given. Appends one flat JSON object per case and constant to
//! `OUT.jsonl`.
//!
//! `amu_bench CASE OUT.jsonl` (release build); `amu_bench list` prints the cases:
//! - `ball-100000x784`: the size, m = 100 000 uniform on the unit ball in n = 784
//!   dimensions, labelled by a random halfspace, 10 % coordinated-pull noise (unit points
//!   orthogonal to the target, label +1);
//! - `fashion-60000x784`: Fashion-MNIST's 60 000 training images (real; `AMU_BENCH_FASHION`
//!   names `train-images-idx3-ubyte.gz`), T-shirt against the rest, centred and scaled into the
//!   unit ball, then the same 10 % coordinated pull (orthogonal to the class-mean direction).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::time::Instant;

use bulwark_adversary::{
    Distribution, MaliciousAdversary, MaliciousNoise, halfspace_data, random_unit_vector,
    rotation_invariant_error,
};
use bulwark_contamination::{AmuParams, average};
use bulwark_core::{Contamination, Dataset, DenseMatrix, Features, rng_from_seed};
use faer::{Mat, Par, Side};

const CASES: [&str; 2] = ["ball-100000x784", "fashion-60000x784"];

fn pull(clean: &Dataset, target: Option<Vec<f64>>) -> (Dataset, Vec<usize>) {
    let noise = MaliciousNoise {
        eta: 0.1,
        adversary: MaliciousAdversary::CoordinatedPull {
            angle: 0.0,
            radius: 1.0,
        },
        target,
    };
    noise
        .contaminate(clean, &mut rng_from_seed(9))
        .expect("contamination")
}

fn ball() -> (Dataset, Vec<usize>, Option<Vec<f64>>, String) {
    let mut rng = rng_from_seed(2009);
    let u = random_unit_vector(784, &mut rng).expect("u");
    let clean = halfspace_data(Distribution::UnitBall, &u, 100_000, &mut rng).expect("sample");
    let (d, dirty) = pull(&clean, Some(u.clone()));
    (
        d,
        dirty,
        Some(u),
        "synthetic: uniform on the unit ball, a random halfspace".into(),
    )
}

fn fashion() -> (Dataset, Vec<usize>, Option<Vec<f64>>, String) {
    let path = std::env::var("AMU_BENCH_FASHION").unwrap_or_else(|_| {
        eprintln!(
            "amu_bench: set AMU_BENCH_FASHION to Fashion-MNIST's train-images-idx3-ubyte.gz \
             (`cargo xtask bench amu` installs it)"
        );
        std::process::exit(2)
    });
    let (raw, _) = bulwark_data::load(&path, None).expect("Fashion-MNIST training images");
    let task = bulwark_data::binary_task(&raw, &bulwark_data::BinaryTask::Positive("0".into()))
        .expect("T-shirt against the rest");
    let (m, n) = (task.len(), task.n_features());
    let mut x = task.features().to_dense().into_vec();
    // centred, then scaled so that the largest norm is 1
    let mut mean = vec![0.0; n];
    for row in x.chunks_exact(n) {
        mean.iter_mut()
            .zip(row)
            .for_each(|(s, v)| *s += v / m as f64);
    }
    let mut r2: f64 = 0.0;
    for row in x.chunks_exact_mut(n) {
        row.iter_mut().zip(&mean).for_each(|(v, c)| *v -= c);
        r2 = r2.max(row.iter().map(|v| v * v).sum());
    }
    let s = 1.0 / r2.sqrt();
    x.iter_mut().for_each(|v| *v *= s);
    let clean = task
        .with_features(Features::Dense(
            DenseMatrix::try_new(m, n, x).expect("shape"),
        ))
        .expect("features");
    let (d, dirty) = pull(&clean, None);
    (
        d,
        dirty,
        None,
        "Fashion-MNIST training images (real, Debian dataset-fashion-mnist), T-shirt against the rest, centred and scaled into the unit ball".into(),
    )
}

/// A_mu written directly: the Gram matrix of the survivors formed again and fully decomposed
/// every pass. Returns the removed indices and `v`.
fn direct(data: &Dataset, c: f64) -> (Vec<usize>, Vec<f64>, usize) {
    let (m, n) = (data.len(), data.n_features());
    let Features::Dense(d) = data.features() else {
        unreachable!("dense")
    };
    let x = d.as_slice();
    let row = |i: usize| &x[i * n..(i + 1) * n];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
    let lm = (m as f64).ln();
    let mut alive: Vec<usize> = (0..m)
        .filter(|&i| dot(row(i), row(i)) <= 1.0 + 1e-9)
        .collect();
    let par = Par::rayon(0);
    let mut passes = 0;
    loop {
        passes += 1;
        let xs = Mat::from_fn(alive.len(), n, |i, j| x[alive[i] * n + j]);
        let mut a = Mat::<f64>::zeros(n, n);
        faer::linalg::matmul::matmul(
            a.as_mut(),
            faer::Accum::Replace,
            xs.transpose(),
            xs.as_ref(),
            1.0,
            par,
        );
        let e = a.self_adjoint_eigen(Side::Lower).expect("eigen");
        let s = e.S().column_vector();
        let top = (0..n)
            .max_by(|&p, &q| s[p].total_cmp(&s[q]))
            .expect("n > 0");
        if s[top] < c * m as f64 * lm / n as f64 {
            break;
        }
        let w: Vec<f64> = (0..n).map(|j| e.U()[(j, top)]).collect();
        alive.retain(|&i| dot(row(i), &w).powi(2) < c * lm / n as f64);
    }
    let y = data.binary_labels().expect("binary");
    let mut v = vec![0.0; n];
    for &i in &alive {
        let s = y[i].as_f64();
        v.iter_mut().zip(row(i)).for_each(|(a, b)| *a += s * b);
    }
    v.iter_mut().for_each(|a| *a /= alive.len() as f64);
    let mut keep = alive.iter().peekable();
    let removed = (0..m)
        .filter(|i| {
            if keep.peek() == Some(&i) {
                keep.next();
                false
            } else {
                true
            }
        })
        .collect();
    (removed, v, passes)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("list") {
        for c in CASES {
            println!("{c}");
        }
        return Ok(());
    }
    let [_, case, out] = args.as_slice() else {
        return Err("usage: amu_bench CASE OUT.jsonl | amu_bench list".into());
    };
    let (data, dirty, u, what) = match case.as_str() {
        "ball-100000x784" => ball(),
        "fashion-60000x784" => fashion(),
        other => return Err(format!("unknown case {other}").into()),
    };
    let (m, n) = (data.len(), data.n_features());
    let threads = rayon::current_num_threads();
    for c in [10.0, 1.0] {
        let params = AmuParams::new().constant(c);
        // median of 3 runs of ours, every run checked to give the same bits
        let mut times = Vec::new();
        let mut first = None;
        for _ in 0..3 {
            let t = Instant::now();
            let fit = params.run(&data.view())?;
            times.push(t.elapsed().as_secs_f64());
            if let Some(f) = &first {
                assert_eq!(f, &fit, "A_mu is deterministic");
            } else {
                first = Some(fit);
            }
        }
        times.sort_by(f64::total_cmp);
        let fit = first.expect("three runs");
        let t = Instant::now();
        let (removed, v, direct_passes) = direct(&data, c);
        let direct_s = t.elapsed().as_secs_f64();
        let same_removed = removed == fit.removed;
        let v_diff = fit
            .v
            .iter()
            .zip(&v)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let dirty_removed = fit
            .removed
            .iter()
            .filter(|i| dirty.binary_search(i).is_ok())
            .count();
        let (err, avg_err) = match &u {
            Some(u) => (
                rotation_invariant_error(u, &fit.v)?,
                rotation_invariant_error(u, &average(&data.view())?)?,
            ),
            None => (f64::NAN, f64::NAN),
        };
        let line = serde_json::json!({
            "case": case, "what": what, "m": m, "n": n, "eta": 0.1, "dirty": dirty.len(),
            "constant": c, "threads": threads,
            "seconds": times[1], "seconds_min": times[0], "seconds_max": times[2],
            "passes": fit.passes.len(), "removed": fit.removed.len(),
            "removed_dirty": dirty_removed, "removed_clean": fit.removed.len() - dirty_removed,
            "matvecs": fit.passes.iter().map(|p| p.matvecs).sum::<usize>(),
            "all_converged": fit.passes.iter().all(|p| p.converged),
            "direct_seconds": direct_s, "direct_passes": direct_passes,
            "same_removed": same_removed, "max_v_difference": v_diff,
            "error": if err.is_nan() { serde_json::Value::Null } else { err.into() },
            "averaging_error": if avg_err.is_nan() { serde_json::Value::Null } else { avg_err.into() },
        });
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)?;
        writeln!(f, "{line}")?;
        println!("{line}");
    }
    Ok(())
}
