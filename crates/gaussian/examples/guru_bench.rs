//! The runner of `cargo xtask bench guru`: GURU's batch solver and SGD on a one-vs-rest task of
//! real images, or on the synthetic `mnist-like-10000x784` instance of `bench lp` (19 %
//! non-zeros in `[0, 1)`, labels from a random hyperplane plus noise, seed 2026), scaled like
//! `bulwark train --scale minmax`. Writes the scaled task for the peer
//! (`X` as little-endian f64, row-major, then `y` as ±1 f64) and one flat JSON object per
//! solver run, tagged with the data set, appended to `OUT.jsonl`: the batch solver to a relative gap of `1e-6` (median of 3), and
//! GURU's SGD for `η₀ = 4^k`, `k = −4..0`, on a budget of 50 epochs (a `1/√t` step does not
//! reach `1e-6`; its certified gap is what it reports).
//!
//! `guru_bench IMAGES|mnist-like-10000x784 POSITIVE SIGMA OUT.jsonl DATA.bin` (release build;
//! one thread; `POSITIVE` is ignored for the synthetic instance).
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::time::Instant;

use bulwark_core::{Classifier, Sign};
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
use bulwark_gaussian::{GuruParams, Solver};

#[path = "../../deletion/tests/common/instance.rs"]
mod instance;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, images, positive, sigma, out, dump] = args.as_slice() else {
        return Err("usage: guru_bench IMAGES POSITIVE SIGMA OUT.json DATA.bin".into());
    };
    let sigma: f64 = sigma.parse()?;
    let (task, data) = if images == "mnist-like-10000x784" {
        (
            instance::instance(10_000, 784, 0.19, true, 2026),
            images.clone(),
        )
    } else {
        let (raw, _) = load(images, None)?;
        (
            binary_task(&raw, &BinaryTask::Positive(positive.clone()))?,
            format!("mnist-{positive}-vs-rest"),
        )
    };
    let task = Scaler::fit(&task, ScalingKind::MinMax)?.transform(&task)?;
    let (m, n) = (task.len(), task.n_features());
    let mut bytes = Vec::with_capacity((m * n + m) * 8);
    let mut row = vec![0.0; n];
    for i in 0..m {
        task.row(i).to_dense_into(&mut row);
        for v in &row {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    for s in task.binary_labels()? {
        let y = if *s == Sign::Pos { 1.0f64 } else { -1.0 };
        bytes.extend_from_slice(&y.to_le_bytes());
    }
    std::fs::write(dump, bytes)?;

    let mut lines = Vec::new();
    let repeats = 3;
    let batch = GuruParams::new().sigma(sigma).tolerance(1e-6);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeats {
        let t = Instant::now();
        let (fit, _) = batch.fit_certified(&task)?;
        times.push(t.elapsed().as_secs_f64());
        last = Some(fit);
    }
    let b = last.expect("repeats > 0");
    lines.push(serde_json::json!({
        "data": data, "solver": "guru-batch", "m": m, "n": n, "sigma": sigma, "positive": positive,
        "seconds": median(times), "iterations": b.iterations, "passes": b.passes,
        "relative_gap": b.certificate.relative_gap, "objective": b.certificate.primal,
        "converged": b.converged, "training_error": b.model.error_rate(&task)?,
    }));
    for k in -4..=0 {
        let eta0 = 4f64.powi(k);
        let t = Instant::now();
        let (fit, _) = GuruParams::new()
            .sigma(sigma)
            .solver(Solver::Sgd)
            .eta0(eta0)
            .tolerance(1e-6)
            .max_epochs(50)
            .fit_certified(&task)?;
        lines.push(serde_json::json!({
            "data": data, "solver": "guru-sgd", "eta0": eta0, "seconds": t.elapsed().as_secs_f64(),
            "iterations": fit.iterations, "passes": fit.passes,
            "relative_gap": fit.certificate.relative_gap, "objective": fit.certificate.primal,
            "converged": fit.converged, "training_error": fit.model.error_rate(&task)?,
        }));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)?;
    for l in &lines {
        writeln!(f, "{l}")?;
        println!("{l}");
    }
    Ok(())
}
