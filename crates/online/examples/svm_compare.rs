//! Times the SVM (and optionally FDROP) on a whitespace-separated data file written by
//! `scripts/liblinear_compare.py` (first line `m n`, then one `y x_1 … x_n` line per example),
//! and prints one JSON line per run. Used for the LIBLINEAR comparison in the README.
//!
//! `cargo run --release -p bulwark-online --example svm_compare -- FILE C TOL [REPEATS [RHO|- [K]]]`
//! (`K > 0` runs FDROP with `K` deleted features; `K = 0`, the default, is the SVM).
#![allow(clippy::print_stdout)]

use std::time::Instant;

use bulwark_core::{Dataset, DenseMatrix, Fit, Sign};
use bulwark_online::FdropParams;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err("usage: svm_compare FILE C TOL [REPEATS]".into());
    }
    let text = std::fs::read_to_string(&args[1])?;
    let c: f64 = args[2].parse()?;
    let tol: f64 = args[3].parse()?;
    let repeats: usize = args.get(4).map_or(Ok(3), |s| s.parse())?;
    let rho: Option<f64> = args
        .get(5)
        .filter(|s| *s != "-")
        .map(|s| s.parse())
        .transpose()?;
    let k: usize = args.get(6).map_or(Ok(0), |s| s.parse())?;
    let mut lines = text.lines();
    let head: Vec<usize> = lines
        .next()
        .ok_or("empty file")?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let (m, n) = (head[0], head[1]);
    let mut ys = Vec::with_capacity(m);
    let mut xs = Vec::with_capacity(m * n);
    for line in lines.take(m) {
        let mut it = line.split_whitespace().map(str::parse::<f64>);
        let y = it.next().ok_or("missing label")??;
        ys.push(if y > 0.0 { Sign::Pos } else { Sign::Neg });
        for v in it {
            xs.push(v?);
        }
    }
    let data = Dataset::binary("compare", DenseMatrix::try_new(m, n, xs)?, ys)?;
    for r in 0..repeats {
        let start = Instant::now();
        let fitted = FdropParams::new()
            .k(k)
            .c(c)
            .tolerance(tol)
            .max_passes(100_000)
            .rho(rho)
            .fit(&data)?;
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{{\"run\": {r}, \"seconds\": {secs:.6}, \"objective\": {:.12}, \"relative_gap\": {:.3e}, \"passes\": {}, \"converged\": {}, \"bias\": {:.9}}}",
            fitted.report.objective.unwrap_or(f64::NAN),
            fitted.report.details["relative_gap"],
            fitted.report.iterations.unwrap_or(0),
            fitted.report.converged,
            fitted.model.bias()
        );
    }
    Ok(())
}
