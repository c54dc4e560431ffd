//! The runner of `cargo xtask bench smo`: the kernel SVM by SMO on one benchmark case, min-max
//! scaled as `bulwark train --scale minmax` does. Writes the scaled task for the peer (`X` as
//! little-endian f64, row-major, then `y` as ±1 f64) and appends one flat JSON object to
//! `OUT.jsonl` (time: the median of `REPEATS` fits; the figures of the last fit).
//!
//! `smo_bench CASE REPEATS OUT.jsonl DATA.bin` (release build, one thread). The cases, with
//! their kernels and parameters, are [`CASES`]; `smo_bench list` prints their names.
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::time::Instant;

use bulwark_core::{Classifier, Fit, Kernel};
use bulwark_online::KernelSvmParams;

#[path = "../tests/common/smo_cases.rs"]
mod smo_cases;
use smo_cases::{CASES, load_case};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("list") {
        for c in CASES {
            println!("{}", c.0);
        }
        return Ok(());
    }
    let [_, case, repeats, out, dump] = args.as_slice() else {
        return Err("usage: smo_bench CASE REPEATS OUT.jsonl DATA.bin | smo_bench list".into());
    };
    let repeats: usize = repeats.parse()?;
    let &(name, source, task, kernel, c) = CASES
        .iter()
        .find(|c| c.0 == case)
        .ok_or_else(|| format!("unknown case {case}"))?;
    let data = load_case(source, task)?;
    let (m, n) = (data.len(), data.n_features());
    let mut bytes = Vec::with_capacity((m * n + m) * 8);
    let mut row = vec![0.0; n];
    for i in 0..m {
        data.row(i).to_dense_into(&mut row);
        for v in &row {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    for s in data.binary_labels()? {
        bytes.extend_from_slice(&s.as_f64().to_le_bytes());
    }
    std::fs::write(dump, bytes)?;

    let params = KernelSvmParams::new()
        .kernel(kernel)
        .c(c)
        .tolerance(1e-3)
        .cache_bytes(200 << 20)
        .shrinking(std::env::var("SMO_NO_SHRINK").is_err());
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        let f = params.fit(&data)?;
        times.push(t.elapsed().as_secs_f64());
        last = Some(f);
    }
    let f = last.expect("at least one fit");
    let d = &f.report.details;
    let (kind, gamma, degree, coef0) = match kernel {
        Kernel::Linear => ("linear", 0.0, 0, 0.0),
        Kernel::Rbf { gamma } => ("rbf", gamma, 0, 0.0),
        Kernel::Polynomial {
            degree,
            gamma,
            coef0,
        } => ("poly", gamma, degree, coef0),
    };
    let line = serde_json::json!({
        "case": name, "solver": "bulwark-smo", "m": m, "n": n, "kernel": kind, "gamma": gamma,
        "degree": degree, "coef0": coef0, "C": c, "tol": 1e-3, "cache_mb": 200,
        "seconds": median(times), "repeats": repeats.max(1),
        "iterations": f.report.iterations, "converged": f.report.converged,
        "dual_objective": d["dual_objective"], "primal_objective": f.report.objective,
        "support_vectors": d["support_vectors"], "bounded_support_vectors": d["bounded_support_vectors"],
        "kernel_evaluations": d["kernel_evaluations"], "cache_rows": d["cache_rows"],
        "training_error": f.model.error_rate(&data)?,
    });
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)?;
    writeln!(file, "{line}")?;
    println!("{line}");
    Ok(())
}
