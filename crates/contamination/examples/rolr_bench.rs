//! The runner of `cargo xtask bench rolr`: RoLR's own solver against clarabel 0.11.1 on the same
//! corrected SOCP (Feng et al. (3) with `ν` free), in the same process, one thread each.
//! Appends one flat JSON object per case to `OUT.jsonl`.
//!
//! `rolr_bench CASE OUT.jsonl` (release build); `rolr_bench list` prints the cases:
//! - `synthetic-100000x100`: the size, m = 100 000, p = 100: 90 000 inliers
//!   (`x ~ N(0, I)`, `y = sign(⟨β*, x⟩ + 0.5 v)`) and 10 000 outliers (`U[−1, 1]^p`, labels
//!   `sign(−⟨β*, x⟩)`, inside the inliers' norms), `n₁ = 10 000`, no threshold;
//! - `mnist-0-vs-rest`: the real MNIST test set (10 000 × 784, min-max scaled), digit 0 against
//!   the rest, with 5 % of the labels flipped against the class mean direction and `n₁ = 500`.
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::time::Instant;

use bulwark_contamination::{NormThreshold, RolrParams, trimmed_correlation};
use bulwark_core::{Dataset, DenseMatrix, Fit, Sign, rng_from_seed};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use rand::Rng as _;

const CASES: [&str; 2] = ["synthetic-100000x100", "mnist-0-vs-rest"];

fn normal(rng: &mut bulwark_core::Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.random_range(1e-12..1.0), rng.random());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn synthetic(m_in: usize, m_out: usize, p: usize) -> Result<(Dataset, usize), bulwark_core::Error> {
    let mut rng = rng_from_seed(2014);
    let mut beta: Vec<f64> = (0..p).map(|_| normal(&mut rng)).collect();
    let nb = beta.iter().map(|v| v * v).sum::<f64>().sqrt();
    beta.iter_mut().for_each(|v| *v /= nb);
    let mut data = Vec::with_capacity((m_in + m_out) * p);
    let mut y = Vec::with_capacity(m_in + m_out);
    for i in 0..m_in + m_out {
        let x: Vec<f64> = if i < m_in {
            (0..p).map(|_| normal(&mut rng)).collect()
        } else {
            (0..p).map(|_| rng.random_range(-1.0..1.0)).collect()
        };
        let s: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
        y.push(if i < m_in {
            Sign::of_score(s + 0.5 * normal(&mut rng))
        } else {
            Sign::of_score(-s)
        });
        data.extend(x);
    }
    let d = Dataset::binary("synthetic", DenseMatrix::try_new(m_in + m_out, p, data)?, y)?;
    Ok((d, m_out))
}

fn mnist() -> Result<(Dataset, usize), Box<dyn std::error::Error>> {
    let (raw, _) = bulwark_data::load("mnist10k", None)?;
    let task = bulwark_data::binary_task(&raw, &bulwark_data::BinaryTask::Positive("0".into()))?;
    let s = bulwark_data::Scaler::fit(&task, bulwark_data::ScalingKind::MinMax)?;
    let d = s.transform(&task)?;
    // flip 5 % of the labels: the examples most aligned with their own class mean direction
    let (m, p) = (d.len(), d.n_features());
    let y = d.binary_labels()?.to_vec();
    let mut mean = vec![0.0; p];
    let mut x = vec![0.0; p];
    for i in 0..m {
        d.row(i).to_dense_into(&mut x);
        for j in 0..p {
            mean[j] += y[i].as_f64() * x[j];
        }
    }
    let mut score: Vec<(f64, usize)> = (0..m)
        .map(|i| (y[i].as_f64() * d.row(i).dot(&mean), i))
        .collect();
    score.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut flipped = y.clone();
    let n1 = m / 20;
    for &(_, i) in score.iter().take(n1) {
        flipped[i] = flipped[i].flip();
    }
    let d = d.with_targets(
        bulwark_core::Targets::Binary(flipped),
        d.class_names().to_vec(),
    )?;
    Ok((d, n1))
}

/// The corrected SOCP by clarabel: its value, time and status.
fn clarabel(d: &Dataset, k: usize) -> (f64, f64, String, u32) {
    let (m, p) = (d.len(), d.n_features());
    let y = d.binary_labels().expect("binary");
    let nv = p + 1 + m;
    let (inu, ixi) = (p, p + 1);
    // columns: β_j (m + 1 entries each: the m cone rows and its SOC row), ν, ξ_i
    let mut colptr = vec![0usize];
    let (mut rowval, mut nzval) = (Vec::new(), Vec::new());
    let mut x = vec![0.0; p];
    let mut dense = vec![0.0; m * p];
    for i in 0..m {
        d.row(i).to_dense_into(&mut x);
        let s = y[i].as_f64();
        for j in 0..p {
            dense[i * p + j] = -s * x[j];
        }
    }
    for j in 0..p {
        for i in 0..m {
            let v = dense[i * p + j];
            if v != 0.0 {
                rowval.push(i);
                nzval.push(v);
            }
        }
        rowval.push(2 * m + 1 + j);
        nzval.push(-1.0);
        colptr.push(rowval.len());
    }
    drop(dense);
    for i in 0..m {
        rowval.push(i);
        nzval.push(-1.0);
    }
    colptr.push(rowval.len()); // ν
    for i in 0..m {
        rowval.push(i);
        nzval.push(-1.0);
        rowval.push(m + i);
        nzval.push(-1.0);
        colptr.push(rowval.len());
    }
    let rows = 2 * m + 1 + p;
    let a = CscMatrix::new(rows, nv, colptr, rowval, nzval);
    let mut b = vec![0.0; rows];
    b[2 * m] = 1.0;
    let mut q = vec![0.0; nv];
    q[inu] = k as f64;
    q[ixi..].iter_mut().for_each(|v| *v = 1.0);
    let pm = CscMatrix::new(nv, nv, vec![0; nv + 1], Vec::new(), Vec::new());
    let cones = [
        SupportedConeT::NonnegativeConeT(2 * m),
        SupportedConeT::SecondOrderConeT(p + 1),
    ];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .max_iter(500)
        .build()
        .expect("settings");
    let t = Instant::now();
    let mut solver = DefaultSolver::new(&pm, &q, &a, &b, &cones, settings).expect("clarabel");
    solver.solve();
    let secs = t.elapsed().as_secs_f64();
    let status = solver.solution.status;
    let ok = matches!(status, SolverStatus::Solved | SolverStatus::AlmostSolved);
    (
        if ok {
            -solver.solution.obj_val
        } else {
            f64::NAN
        },
        secs,
        format!("{status:?}"),
        solver.solution.iterations,
    )
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
        return Err("usage: rolr_bench CASE OUT.jsonl | rolr_bench list".into());
    };
    let (data, n1) = match case.as_str() {
        "synthetic-100000x100" => synthetic(90_000, 10_000, 100)?,
        "mnist-0-vs-rest" => mnist()?,
        other => return Err(format!("unknown case {other}").into()),
    };
    let (m, p) = (data.len(), data.n_features());
    let k = m - n1;
    let t = Instant::now();
    let fit = RolrParams::new()
        .outliers(n1)
        .threshold(NormThreshold::None)
        .fit(&data)?;
    let ours_s = t.elapsed().as_secs_f64();
    let ours = fit.report.objective.unwrap_or(f64::NAN);
    assert_eq!(
        ours,
        trimmed_correlation(&data.view(), fit.model.weights(), k)?
    );
    let (theirs, theirs_s, status, iters) = clarabel(&data, k);
    let line = serde_json::json!({
        "case": case, "m": m, "p": p, "n1": n1,
        "ours_seconds": ours_s, "ours_objective": ours, "ours_iterations": fit.report.iterations,
        "ours_converged": fit.report.converged, "ours_gap": fit.report.reached,
        "ours_active_set_steps": fit.report.details.get("active_set_steps"),
        "breakdown": fit.report.details.get("breakdown"),
        "clarabel_seconds": theirs_s, "clarabel_objective": theirs, "clarabel_status": status,
        "clarabel_iterations": iters,
        "relative_difference": (ours - theirs).abs() / theirs.abs().max(f64::MIN_POSITIVE),
    });
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)?;
    writeln!(file, "{line}")?;
    println!("{line}");
    Ok(())
}
