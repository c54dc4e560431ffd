//! The certified batch solvers of M-GURU and KEN-GURU against the thesis's SGD on real data
//! (docs/design/gaussian.md, 2026-12-04): per case one JSON line with the SGD's objective,
//! `converged`, certified gap, stop reason and `gap_to_batch`, and the batch solver's objective,
//! certified gap, iterations and seconds. Min-max scaled data from the data directory; USPS
//! 0–9 subsampled (seeded) to `USPS_ROWS` rows.
//!
//! `certified_bench [OUT.jsonl]` (release build).
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::time::Instant;

use bulwark_core::{Dataset, Kernel};
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
use bulwark_gaussian::{KenGuruParams, MGuruParams, Solver};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

const USPS_ROWS: usize = 2000;

fn scaled(d: &Dataset) -> Result<Dataset, Box<dyn std::error::Error>> {
    Ok(Scaler::fit(d, ScalingKind::MinMax)?.transform(d)?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1);
    let mut lines = Vec::new();
    let mut emit = |v: serde_json::Value| {
        println!("{v}");
        lines.push(v.to_string());
    };
    // M-GURU (Table 5.2's sets): wine, splice, USPS 0–9 (subsampled)
    let (usps, _) = load("usps", None)?;
    let mut idx: Vec<usize> = (0..usps.len()).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(1));
    idx.truncate(USPS_ROWS);
    let sets = [
        ("wine", scaled(&load("wine", None)?.0)?),
        ("splice", scaled(&load("splice", None)?.0)?),
        ("usps-0-9", scaled(&usps.select(&idx))?),
    ];
    for (name, data) in &sets {
        for sigma in [0.25, 1.0] {
            let t = Instant::now();
            let b = MGuruParams::new()
                .sigma(sigma)
                .solver(Solver::Batch)
                .fit_report(data)?;
            let batch_s = t.elapsed().as_secs_f64();
            let opt = b.report.objective.unwrap_or(f64::NAN);
            for s2 in [false, true] {
                let f = MGuruParams::new()
                    .sigma(sigma)
                    .eta0(0.25)
                    .s2(s2)
                    .fit_report(data)?;
                let r = &f.report;
                let primal = r.objective.unwrap_or(f64::NAN);
                emit(serde_json::json!({
                    "learner": if s2 { "m-guru-s2" } else { "m-guru" }, "data": name,
                    "m": data.len(), "n": data.n_features(), "classes": data.n_classes(),
                    "sigma": sigma,
                    "sgd_objective": primal, "sgd_converged": r.converged,
                    "sgd_certified_gap": r.reached, "sgd_epochs": r.details["epochs"],
                    "sgd_stopped": r.stopped, "sgd_seconds": r.seconds,
                    "gap_to_batch": (primal - opt) / opt,
                    "batch_objective": b.report.objective, "batch_converged": b.report.converged,
                    "batch_certified_gap": b.report.reached,
                    "batch_newton_iterations": b.report.iterations,
                    "batch_cg_iterations": b.report.details["cg_iterations"],
                    "batch_seconds": batch_s, "batch_stopped": b.report.stopped,
                }));
            }
        }
    }
    // KEN-GURU (Table 4.1's kernels): Ionosphere RBF γ = 1, USPS 3 vs 5 poly 2 (subsampled)
    let ion = scaled(&binary_task(
        &load("ionosphere", None)?.0,
        &BinaryTask::Natural,
    )?)?;
    let pair = binary_task(&usps, &BinaryTask::Pair("3".into(), "5".into()))?;
    let mut idx: Vec<usize> = (0..pair.len()).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(2));
    idx.truncate(800);
    let pair = scaled(&pair.select(&idx))?;
    let cases = [
        ("ionosphere", ion, Kernel::Rbf { gamma: 1.0 }),
        (
            "usps-3v5",
            pair,
            Kernel::Polynomial {
                degree: 2,
                gamma: 1.0,
                coef0: 1.0,
            },
        ),
    ];
    for (name, data, kernel) in &cases {
        for sigma in [0.25, 1.0] {
            let t = Instant::now();
            let (b, br) = KenGuruParams::new()
                .kernel(*kernel)
                .sigma(sigma)
                .solver(Solver::Batch)
                .fit_certified(data)?;
            let batch_s = t.elapsed().as_secs_f64();
            let (f, r) = KenGuruParams::new()
                .kernel(*kernel)
                .sigma(sigma)
                .eta0(0.25)
                .max_epochs(300)
                .fit_certified(data)?;
            let opt = b.certificate.primal;
            emit(serde_json::json!({
                "learner": "ken-guru", "data": name, "m": data.len(), "kernel": format!("{kernel:?}"),
                "sigma": sigma,
                "sgd_objective": f.certificate.primal, "sgd_converged": f.converged,
                "sgd_certified_gap": f.certificate.relative_gap, "sgd_epochs": f.epochs,
                "sgd_seconds": r.seconds,
                "gap_to_batch": (f.certificate.primal - opt) / opt,
                "batch_objective": opt, "batch_converged": b.converged,
                "batch_certified_gap": b.certificate.relative_gap,
                "batch_factor_gap": br.details["factor_duality_gap"],
                "batch_rank": br.details["factor_rank"],
                "batch_newton_iterations": b.steps, "batch_seconds": batch_s,
                "batch_stopped": br.stopped,
            }));
        }
    }
    if let Some(path) = out {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        for l in lines {
            writeln!(file, "{l}")?;
        }
    }
    Ok(())
}
