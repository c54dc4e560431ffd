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
use crate::commands::model::{
    Encoding, HyperParameters, ModelFile, Training, check_output_dir, fingerprint,
};
use crate::ui::Ui;

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

/// Training data prepared for a learner.
struct Prepared {
    /// The binary task, scaled when asked.
    data: Dataset,
    scaler: Option<Scaler>,
    /// [`fingerprint`] of the task before scaling.
    fingerprint: String,
}

/// Loads data, applies the task and the optional scaling (fitted here).
fn prepare(
    data: &str,
    pair: Option<&str>,
    positive: Option<&str>,
    scale: Option<ScaleArg>,
    dir: Option<&Path>,
) -> anyhow::Result<Prepared> {
    let (raw, _) = load(data, dir)?;
    let task = binary_task(&raw, &task_of(pair, positive)?)?;
    let fingerprint = fingerprint(&task);
    Ok(match scale {
        None => Prepared {
            data: task,
            scaler: None,
            fingerprint,
        },
        Some(s) => {
            let kind = scaling_kind(s);
            let scaler = Scaler::fit(&task, kind)?;
            Prepared {
                data: scaler.transform(&task)?,
                scaler: Some(scaler),
                fingerprint,
            }
        }
    })
}

fn scaling_kind(s: ScaleArg) -> ScalingKind {
    match s {
        ScaleArg::Minmax => ScalingKind::MinMax,
        ScaleArg::Standard => ScalingKind::Standard,
    }
}

pub(crate) fn run(
    args: &TrainArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    // refuse an unwritable output before any long computation
    Encoding::for_output(&args.out)?;
    check_output_dir(&args.out)?;
    let Prepared {
        data: train,
        scaler,
        fingerprint,
    } = prepare(
        &args.data,
        args.pair.as_deref(),
        args.positive.as_deref(),
        args.scale,
        dir,
    )?;
    let values = values_of(&args.values, &train)?;
    let tol = args.tolerance;
    let algo = format!("{:?}", args.algo).to_lowercase();
    let spinner = ui.spinner(
        args.json,
        format!(
            "training {algo} on {} ({} x {})",
            train.name(),
            train.len(),
            train.n_features()
        ),
    );
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
            let hyper = HyperParameters::Lp {
                budget: args.budget,
                c: args.c,
                values: args.values.clone(),
                feature_values: values,
                backend: format!("{:?}", args.backend).to_lowercase(),
                chunks: args.chunks,
                seed: args.seed,
                tolerance: tol.unwrap_or(1e-8),
            };
            let fitted = if spinner.is_hidden() {
                params.fit(&train)?
            } else {
                let pb = spinner.clone();
                let mut progress = move |info: &bulwark_lp::IterationInfo| {
                    pb.set_message(format!(
                        "LP (4) interior point: iteration {}, gap {:.1e}, primal res {:.1e}",
                        info.iter, info.gap, info.pres
                    ));
                    std::ops::ControlFlow::Continue(())
                };
                params.fit_with_progress(&train, Some(&mut progress))?
            };
            (fitted, hyper)
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
            let hyper = HyperParameters::O2b {
                budget: args.budget,
                c: args.c,
                values: args.values.clone(),
                feature_values: values,
                epochs: args.epochs,
                seed: args.seed,
            };
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
                    HyperParameters::Svm {
                        c: args.c,
                        seed: args.seed,
                        tolerance: tol,
                    },
                )
            } else {
                let mut p = FdropParams::new().k(k).c(args.c).seed(args.seed);
                if let Some(t) = tol {
                    p = p.tolerance(t);
                }
                (
                    p.fit(&train)?,
                    HyperParameters::Fdrop {
                        c: args.c,
                        k,
                        seed: args.seed,
                        tolerance: tol,
                    },
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
                HyperParameters::Logreg {
                    l2: args.l2,
                    intercept: !args.no_intercept,
                    tolerance: tol,
                },
            )
        }
    };
    spinner.finish_and_clear();
    let training_error = fitted.model.error_rate(&train)?;
    let training = Training {
        data: args.data.clone(),
        task: train.name().to_string(),
        pair: args.pair.clone(),
        positive: args.positive.clone(),
        rows: train.len(),
        feature_names: train.feature_names().to_vec(),
        classes: train.class_names().to_vec(),
        scale: args.scale.map(scaling_kind),
        training_error,
        fingerprint,
    };
    let mut file = ModelFile::new(
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
            "fingerprint": file.training.fingerprint,
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
