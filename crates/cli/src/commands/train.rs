//! `bulwark train`: load → binary task → optional scaling → feature values → fit → model file.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use bulwark_core::{Classifier, Dataset, Error, FeatureValues, Fit, Location};
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load, mutual_information_values};
use bulwark_deletion::{DsxLpParams, LpBackend};
use bulwark_online::{FdropParams, LogregParams, O2bParams, SvmParams};
use serde_json::json;

use crate::args::{Algo, BackendArg, ScaleArg, TrainArgs};
use crate::commands::model::ModelFile;

/// The binary task chosen by `--pair` / `--positive`.
pub(crate) fn task_of(pair: Option<&str>, positive: Option<&str>) -> anyhow::Result<BinaryTask> {
    Ok(match (pair, positive) {
        (Some(p), _) => {
            let (a, b) = p.split_once(',').with_context(|| {
                format!("invalid value `{p}` for --pair: expected two classes as A,B")
            })?;
            BinaryTask::Pair(a.trim().to_string(), b.trim().to_string())
        }
        (None, Some(c)) => BinaryTask::Positive(c.to_string()),
        (None, None) => BinaryTask::Natural,
    })
}

/// Parses `--values`: `uniform`, `mi` (computed on `train`) or a file with one value per line.
pub(crate) fn values_of(spec: &str, train: &Dataset) -> anyhow::Result<Vec<f64>> {
    let n = train.n_features();
    match spec {
        "uniform" => Ok(vec![1.0; n]),
        "mi" => Ok(mutual_information_values(train)?),
        path => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let mut v = Vec::new();
            for (k, line) in text.lines().enumerate() {
                let t = line.trim();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let loc = || Location::source(path).line(k + 1);
                let x: f64 = t.parse().map_err(|_| {
                    Error::input(loc(), format!("expected a feature value, found `{t}`"))
                })?;
                if !(x.is_finite() && x >= 0.0) {
                    return Err(Error::input(
                        loc(),
                        format!("feature value {x} must be finite and >= 0"),
                    )
                    .into());
                }
                v.push(x);
            }
            if v.len() != n {
                return Err(Error::input(
                    Location::source(path),
                    format!(
                        "{} feature values, but the data have {n} features (one value per line)",
                        v.len()
                    ),
                )
                .into());
            }
            Ok(v)
        }
    }
}

/// Loads data, applies the task and the optional scaling (fitted here).
pub(crate) fn prepare(
    data: &str,
    pair: Option<&str>,
    positive: Option<&str>,
    scale: Option<ScaleArg>,
    dir: Option<&Path>,
) -> anyhow::Result<(Dataset, Option<Scaler>)> {
    let (raw, _) = load(data, dir)?;
    let task = binary_task(&raw, &task_of(pair, positive)?)?;
    match scale {
        None => Ok((task, None)),
        Some(s) => {
            let kind = match s {
                ScaleArg::Minmax => ScalingKind::MinMax,
                ScaleArg::Standard => ScalingKind::Standard,
            };
            let scaler = Scaler::fit(&task, kind)?;
            Ok((scaler.transform(&task)?, Some(scaler)))
        }
    }
}

pub(crate) fn run(args: &TrainArgs, dir: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<()> {
    let (train, scaler) = prepare(
        &args.data,
        args.pair.as_deref(),
        args.positive.as_deref(),
        args.scale,
        dir,
    )?;
    let values = values_of(&args.values, &train)?;
    let tol = args.tolerance;
    let (fitted, hyper) = match args.algo {
        Algo::Lp => {
            let backend = match args.backend {
                BackendArg::Structured => LpBackend::Structured,
                BackendArg::GenericSparse => LpBackend::GenericSparse,
                BackendArg::Dense => LpBackend::Dense,
            };
            let params = DsxLpParams::new()
                .budget(args.budget)
                .c(args.c)
                .values(FeatureValues::Given(values.clone()))
                .backend(backend)
                .chunks(args.chunks)
                .seed(args.seed)
                .tolerance(tol.unwrap_or(1e-8));
            let hyper = json!({
                "budget": args.budget, "C": args.c, "values": args.values, "feature_values": values,
                "backend": format!("{:?}", args.backend).to_lowercase(), "chunks": args.chunks,
                "seed": args.seed, "tolerance": tol.unwrap_or(1e-8),
            });
            (params.fit(&train)?, hyper)
        }
        Algo::O2b => {
            if args.epochs == 0 {
                return Err(Error::param("epochs", 0, "at least 1").into());
            }
            let params = O2bParams::new()
                .c(args.c)
                .budget(args.budget)
                .values(FeatureValues::Given(values.clone()))
                .epochs(args.epochs)
                .shuffle_seed(Some(args.seed));
            let hyper = json!({
                "budget": args.budget, "C": args.c, "values": args.values, "feature_values": values,
                "epochs": args.epochs, "seed": args.seed,
            });
            (params.fit(&train)?, hyper)
        }
        Algo::Svm | Algo::Fdrop => {
            let k = match args.k {
                Some(k) => k,
                None if args.budget.is_finite() && args.budget >= 0.0 => {
                    args.budget.floor() as usize
                }
                None => {
                    return Err(Error::param("budget", args.budget, "a finite number >= 0").into());
                }
            };
            let (fitted, hyper) = if args.algo == Algo::Svm {
                let mut p = SvmParams::new().c(args.c).seed(args.seed);
                if let Some(t) = tol {
                    p = p.tolerance(t);
                }
                (
                    p.fit(&train)?,
                    json!({"C": args.c, "seed": args.seed, "tolerance": tol}),
                )
            } else {
                let mut p = FdropParams::new().k(k).c(args.c).seed(args.seed);
                if let Some(t) = tol {
                    p = p.tolerance(t);
                }
                (
                    p.fit(&train)?,
                    json!({"C": args.c, "K": k, "seed": args.seed, "tolerance": tol}),
                )
            };
            (fitted, hyper)
        }
        Algo::Logreg => {
            let mut p = LogregParams::new()
                .l2(args.l2)
                .intercept(!args.no_intercept);
            if let Some(t) = tol {
                p = p.tolerance(t);
            }
            (
                p.fit(&train)?,
                json!({"l2": args.l2, "intercept": !args.no_intercept, "tolerance": tol}),
            )
        }
    };
    let training_error = fitted.model.error_rate(&train)?;
    let training = json!({
        "data": args.data, "task": train.name(), "rows": train.len(), "features": train.n_features(),
        "classes": train.class_names(), "scale": args.scale.map(|s| format!("{s:?}").to_lowercase()),
        "training_error": training_error,
    });
    let algo = format!("{:?}", args.algo).to_lowercase();
    let mut file = ModelFile::new(
        &algo,
        &fitted.model,
        scaler,
        hyper,
        training,
        fitted.report.clone(),
    );
    // training moments (after scaling) for the greedy-corruption attack (DSX §4)
    file.corruption_stats = Some(bulwark_adversary::CorruptionStats::fit(&train)?);
    file.write(&args.out)?;
    let r = &fitted.report;
    if args.json {
        let mut obj = json!({
            "algorithm": algo, "objective": r.objective, "iterations": r.iterations, "seconds": r.seconds,
            "converged": r.converged, "training_error": training_error, "model": args.out.display().to_string(),
            "rows": train.len(), "features": train.n_features(),
        });
        for (k, v) in &r.details {
            obj[k] = json!(v);
        }
        serde_json::to_writer_pretty(&mut *out, &obj)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "trained {algo} on {} ({} x {})",
            train.name(),
            train.len(),
            train.n_features()
        )?;
        if let Some(o) = r.objective {
            writeln!(out, "objective       {o:.10}")?;
        }
        if let Some(k) = r.iterations {
            writeln!(out, "iterations      {k}")?;
        }
        writeln!(out, "seconds         {:.3}", r.seconds)?;
        writeln!(out, "training error  {training_error:.4}")?;
        writeln!(out, "model written to {}", args.out.display())?;
    }
    Ok(())
}
