//! The real-data sweep of the structured IPM (driven by `cargo xtask bench sweep`): LP (4) on
//! pairs of real image data sets over a grid of budgets and boxes, each fit by the structured
//! IPM alone (no fallback), one JSON line per fit (with `dual_repaired_from` when the answer's
//! certificate repaired the last iterate's dual point).
//!
//! `real_sweep <out.jsonl> [<fashion-mnist dir>]`: MNIST test-set pairs 4/9, 3/5 and 1/7 and
//! USPS pairs 3/5 and 4/9 (the repository's data folder), and, when the directory is given,
//! Fashion-MNIST training pairs T-shirt/shirt (0, 6), pullover/coat (2, 4) and sandal/sneaker
//! (5, 7); the first `per_class` images of each class, min-max scaling, uniform values;
//! `N ∈ {10, 50}` (USPS, 256 features: `{5, 20}`) and `C ∈ {0.1, 1, 10}`. `SWEEP_REFINE=0`
//! switches the final-phase refinement off; `SWEEP_WITHIN=k` starts it within `k` times the
//! tolerance.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::time::Instant;

use bulwark_core::Dataset;
use bulwark_data::{BinaryTask, load};
use bulwark_deletion::{DsxIpmSettings, DsxLpParams, FeatureValues};

#[path = "../tests/common/pairs.rs"]
mod pairs;

/// A data set and its pairs, images per class and budgets.
struct Set {
    name: &'static str,
    raw: Dataset,
    pairs: Vec<(&'static str, &'static str)>,
    per_class: usize,
    budgets: [f64; 2],
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: real_sweep <out.jsonl> [<fashion-mnist dir>]");
        std::process::exit(2);
    };
    let mut sets = vec![
        Set {
            name: "MNIST",
            raw: load("mnist10k", None)
                .expect("mnist10k in the data folder")
                .0,
            pairs: vec![("4", "9"), ("3", "5"), ("1", "7")],
            per_class: 300,
            budgets: [10.0, 50.0],
        },
        Set {
            name: "USPS",
            raw: load("usps", None).expect("usps in the data folder").0,
            pairs: vec![("3", "5"), ("4", "9")],
            per_class: 300,
            budgets: [5.0, 20.0],
        },
    ];
    if let Some(dir) = args.get(1) {
        let path = std::path::Path::new(dir).join("train-images-idx3-ubyte.gz");
        sets.push(Set {
            name: "Fashion-MNIST",
            raw: bulwark_data::load_path(&path, None).expect("Fashion-MNIST"),
            pairs: vec![("0", "6"), ("2", "4"), ("5", "7")],
            per_class: 200,
            budgets: [10.0, 50.0],
        });
    }
    // `SWEEP_REFINE=0`: without the final-phase refinement (for comparison)
    let mut builder = DsxIpmSettings::builder()
        .dual_refinement(std::env::var("SWEEP_REFINE").map_or(true, |v| v != "0"));
    // `SWEEP_WITHIN=k`: refinement from within k times the tolerance
    if let Some(k) = std::env::var("SWEEP_WITHIN")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        builder = builder.refine_within(k);
    }
    let settings = builder.build().expect("settings");
    let mut file = std::fs::File::create(out).expect("output file");
    for set in &sets {
        for (a, b) in &set.pairs {
            let data = pairs::first_per_class(
                &set.raw,
                &BinaryTask::Pair((*a).into(), (*b).into()),
                Some(set.per_class),
            );
            for n_budget in &set.budgets {
                for c in [0.1, 1.0, 10.0] {
                    let params = DsxLpParams::new()
                        .budget(*n_budget)
                        .c(c)
                        .values(FeatureValues::Uniform)
                        .fallback(false)
                        .ipm_settings(settings.clone());
                    let t = Instant::now();
                    let fit = bulwark_core::Fit::fit(&params, &data);
                    let seconds = t.elapsed().as_secs_f64();
                    let (solver, iterations, refinements, reason) = match &fit {
                        Ok(f) => (
                            f.report.solver.clone(),
                            f.report.iterations.unwrap_or(0),
                            f.report.details.get("refinements").copied().unwrap_or(0.0),
                            String::new(),
                        ),
                        Err(e) => ("none".into(), 0, 0.0, e.to_string()),
                    };
                    // the certificate's repaired dual point: the last iterate's dual residual
                    let repaired = fit
                        .as_ref()
                        .ok()
                        .and_then(|f| f.report.details.get("dual_repaired_from").copied());
                    let line = serde_json::json!({
                        "data": set.name, "pair": format!("{a}/{b}"), "m": data.len(),
                        "n": data.n_features(), "budget": n_budget, "c": c,
                        "solver": solver, "iterations": iterations,
                        "refinements": refinements, "seconds": seconds,
                        "dual_repaired_from": repaired,
                        "failure": reason,
                    });
                    eprintln!("{line}");
                    writeln!(file, "{line}").expect("write");
                }
            }
        }
    }
}
