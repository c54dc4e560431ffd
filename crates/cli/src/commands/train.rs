//! `bulwark train`: load → binary task → optional scaling → feature values → fit → model file.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use bulwark_core::comm::{agree, check_same};
use bulwark_core::{AnyModel, Classifier, Communicator, Dataset, Fitted, HyperParams, Learner};
use bulwark_data::{
    BinaryTask, Loaded, MissingPolicy, Scaler, ScalingKind, binary_task, load_with,
};
use bulwark_models::{Encoding, ModelFile, Training, check_output_dir, fingerprint, registry};
use serde_json::json;

use crate::args::{ScaleArg, TrainArgs};
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

/// Training data prepared for a learner.
struct Prepared {
    /// The binary task, scaled when asked.
    data: Dataset,
    scaler: Option<Scaler>,
    /// [`fingerprint`] of the task before scaling.
    fingerprint: String,
    /// Records the missing-value policy `drop` left out.
    dropped: usize,
}

/// Numbers per feature `train` keeps besides the learner's own state: the scaler's shift and
/// factor, the training moments of the corruption attack, the model's weights and the model
/// file's copy of them, and their encoded text (about three numbers' worth).
const TRAIN_STATE_PER_FEATURE: u64 = 9;

/// Loads data, checks the memory the feature count asks for, applies the task and the optional
/// scaling (fitted here).
fn prepare(
    args: &TrainArgs,
    policy: MissingPolicy,
    dir: Option<&Path>,
    learner: &dyn Learner,
) -> anyhow::Result<Prepared> {
    let multiclass = learner.multiclass();
    let options = super::read_options(&args.read, policy)?;
    let Loaded {
        data: raw, dropped, ..
    } = load_with(&args.data, dir, &options)?;
    registry::check_memory(learner, &raw, TRAIN_STATE_PER_FEATURE)?;
    // a multiclass learner keeps every class unless a binary task is asked for
    let task =
        if multiclass && raw.n_classes() > 2 && args.pair.is_none() && args.positive.is_none() {
            raw
        } else {
            binary_task(
                &raw,
                &task_of(args.pair.as_deref(), args.positive.as_deref())?,
            )?
        };
    let fingerprint = fingerprint(&task);
    Ok(match args.scale {
        None => Prepared {
            data: task,
            scaler: None,
            fingerprint,
            dropped,
        },
        Some(s) => {
            let kind = scaling_kind(s);
            // missing cells take no part in the fit and are 0 after it (bulwark_core::missing)
            let scaler = Scaler::fit(&task, kind)?;
            Prepared {
                data: scaler.transform(&task)?,
                scaler: Some(scaler),
                fingerprint,
                dropped,
            }
        }
    })
}

pub(crate) fn scaling_kind(s: ScaleArg) -> ScalingKind {
    match s {
        ScaleArg::Minmax => ScalingKind::MinMax,
        ScaleArg::Standard => ScalingKind::Standard,
    }
}

/// What `train` reports of the data it trained on, kept when a rank keeps only its share.
struct TrainedOn {
    name: String,
    rows: usize,
    features: usize,
    incomplete_records: usize,
}

pub(crate) fn run(
    args: &TrainArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
    comm: &dyn Communicator,
) -> anyhow::Result<()> {
    let learner = registry::find(&args.algo)?;
    let policy: MissingPolicy = args.missing.parse()?;
    let given = args.params.for_learner(learner)?;
    if comm.size() > 1 && !learner.distributed() {
        let over: Vec<&str> = registry::learners()
            .iter()
            .filter(|l| l.distributed())
            .map(|l| l.name())
            .collect();
        return Err(bulwark_core::Error::Distributed {
            ranks: comm.size(),
            message: format!(
                "{} does not train over several ranks (those that do: {})",
                learner.name(),
                over.join(", ")
            ),
        }
        .into());
    }
    // refuse an unwritable output before any long computation
    Encoding::for_output(&args.out)?;
    check_output_dir(&args.out)?;
    let Prepared {
        data: train,
        scaler,
        fingerprint,
        dropped,
    } = agree(comm, prepare(args, policy, dir, learner))?;
    let on = TrainedOn {
        name: train.name().to_string(),
        rows: train.len(),
        features: train.n_features(),
        incomplete_records: train.incomplete_records(),
    };
    let deleted = train.n_missing();
    let algo = learner.name();
    let not_written = || {
        format!(
            "stopped training {algo}; no model written ({} untouched)",
            args.out.display()
        )
    };
    crate::interrupt::check(not_written)?;
    let spinner = ui.spinner(
        args.json,
        format!(
            "training {algo} on {} ({} x {})",
            train.name(),
            train.len(),
            train.n_features()
        ),
    );
    // every iteration that reports progress is a safe point: Ctrl-C stops the solver there
    let pb = spinner.clone();
    let mut progress = move |msg: &str| {
        if !pb.is_hidden() {
            pb.set_message(msg.to_string());
        }
        if crate::interrupt::cancel().is_requested() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let feature_names = train.feature_names().stored();
    let classes = train.class_names().to_vec();
    let (fit, training_error, corruption_stats) = if comm.size() == 1 {
        let fit = registry::train_with_params(learner, &train, &given, Some(&mut progress));
        spinner.finish_and_clear();
        crate::interrupt::check(not_written)?;
        let fit = fit?;
        let training_error = fit.0.model.error_rate(&train)?;
        // training moments (after scaling) for the greedy-corruption attack (DSX §4)
        let stats = bulwark_adversary::CorruptionStats::fit(&train)?;
        (fit, training_error, Some(stats))
    } else {
        let r = fit_over_ranks(args, learner, &given, train, &fingerprint, comm);
        spinner.finish_and_clear();
        r?
    };
    let (mut fitted, hyper) = fit;
    // what the missing-value policy did, recorded with the fit (and in the model file)
    if policy != MissingPolicy::Error {
        let d = &mut fitted.report.details;
        d.insert("missing_dropped_records".into(), dropped as f64);
        d.insert("missing_deleted_cells".into(), deleted as f64);
    }
    if !comm.is_root() {
        // rank 0 writes the model and the output
        return Ok(());
    }
    let training = Training {
        data: args.data.clone(),
        task: on.name.clone(),
        pair: args.pair.clone(),
        positive: args.positive.clone(),
        rows: on.rows,
        feature_names,
        classes,
        scale: args.scale.map(scaling_kind),
        training_error,
        fingerprint,
    };
    let mut file = ModelFile::new(
        algo,
        &fitted.model,
        scaler,
        hyper,
        training,
        fitted.report.clone(),
    );
    file.corruption_stats = corruption_stats;
    crate::interrupt::check(not_written)?;
    file.write(&args.out)?;
    let r = &fitted.report;
    if args.json {
        let mut obj = json!({
            "algorithm": algo, "missing": policy.as_str(), "solver": r.solver, "converged": r.converged,
            "tolerance": r.tolerance, "reached": r.reached, "fallbacks": r.fallbacks,
            "stopped": r.stopped, "normal_equations": r.normal_equations,
            "objective": r.objective, "iterations": r.iterations, "seconds": r.seconds,
            "training_error": training_error, "model": args.out.display().to_string(),
            "model_kind": fitted.model.kind(),
            "rows": on.rows, "features": on.features,
            "fingerprint": file.training.fingerprint,
        });
        for (k, v) in &r.details {
            obj[k] = json!(v);
        }
        // a count (the learner's report carries it as a number among its details)
        obj["ranks"] = json!(comm.size());
        // a learner's breakdown (RoLR: the optimum is beta = 0) is a flag, not a number
        if let Some(b) = r.details.get("breakdown") {
            obj["breakdown"] = json!(*b != 0.0);
        }
        serde_json::to_writer_pretty(&mut *out, &obj)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "trained {algo} on {} ({} x {})",
            on.name, on.rows, on.features
        )?;
        if comm.size() > 1 {
            writeln!(out, "ranks           {} (MPI)", comm.size())?;
        }
        writeln!(out, "solver          {}", r.summary())?;
        if let Some(m) = &r.normal_equations {
            writeln!(out, "normal eqs.     {m}")?;
        }
        if let Some(o) = r.objective {
            writeln!(out, "objective       {o:.10}")?;
        }
        if let Some(k) = r.iterations {
            writeln!(out, "iterations      {k}")?;
        }
        writeln!(out, "seconds         {:.3}", r.seconds)?;
        match policy {
            MissingPolicy::Error => {}
            MissingPolicy::Drop => writeln!(
                out,
                "missing         {dropped} records with a missing cell left out"
            )?,
            MissingPolicy::Delete => writeln!(
                out,
                "missing         {deleted} cells in {} records deleted",
                on.incomplete_records
            )?,
        }
        if r.details.get("breakdown").is_some_and(|b| *b != 0.0) {
            writeln!(
                out,
                "breakdown       yes: the optimum is the zero model (every direction loses)"
            )?;
        }
        if let Some(k) = r.details.get("removed") {
            writeln!(out, "removed         {k} samples by preprocessing")?;
        }
        if let Some(k) = r.details.get("rounds") {
            writeln!(out, "rounds          {k}")?;
        }
        // example screening (LP): how many working-set LPs, and whether their answer stands
        let rounds = r.details.get("screening_rounds").copied().unwrap_or(0.0);
        let gave_up = r.details.get("screening_gave_up").is_some_and(|g| *g > 0.0);
        if rounds > 0.0 || gave_up {
            let outcome = if gave_up {
                "gave up, the whole LP solved"
            } else {
                "certified for the whole LP"
            };
            // rounds ended at an inexact iterate that already chose the next working set
            let early = match r.details.get("screening_ended_early").copied() {
                Some(k) if k > 0.0 => format!(" ({k} ended early)"),
                _ => String::new(),
            };
            writeln!(
                out,
                "screening       {rounds} LP(s) on working sets of examples{early}, {outcome}"
            )?;
        }
        // LP: the optimality certificate's dual point was repaired from the last iterate
        if let Some(d) = r.details.get("dual_repaired_from") {
            writeln!(
                out,
                "certificate     the closed-form objective against a dual point repaired from the last iterate (whose dual residual was {d:.1e})"
            )?;
        }
        if r.details
            .get("stopped_by_weak_learner")
            .is_some_and(|b| *b != 0.0)
        {
            writeln!(
                out,
                "stopped         a weak hypothesis fell below the advantage gamma (the rounds before it are the model)"
            )?;
        }
        writeln!(out, "training error  {training_error:.4}")?;
        writeln!(out, "model written to {}", args.out.display())?;
    }
    if !r.converged || r.fell_back() {
        ui.warn(&format!("{algo}: {}", r.summary()));
    }
    if r.details
        .get("stopped_by_weak_learner")
        .is_some_and(|b| *b != 0.0)
    {
        ui.warn(&format!(
            "{algo}: stopped when a weak hypothesis fell below gamma, before the weight mass fell below kappa; a smaller gamma or a larger kappa may help"
        ));
    }
    if r.details.get("breakdown").is_some_and(|b| *b != 0.0) {
        ui.warn(&format!(
            "{algo}: breakdown: the model is zero (it predicts no class); fewer outliers or a stricter threshold may help"
        ));
    }
    Ok(())
}

/// The fit with its resolved hyper-parameters, the training error over every rank and (on rank
/// 0) the corruption moments.
type OverRanks = (
    (Fitted<AnyModel>, HyperParams),
    f64,
    Option<bulwark_adversary::CorruptionStats>,
);

/// The fit, its training error and (on rank 0) the corruption moments, with the examples split
/// over the ranks of `comm`: every rank has loaded and prepared the whole data set (the data
/// layer has no row-range reader yet), checks that the others did the same with the same
/// command line, keeps its contiguous share of the rows ([`Communicator::share`]), drops the
/// rest and trains through the learner's [`Learner::fit_distributed`].
fn fit_over_ranks(
    args: &TrainArgs,
    learner: &dyn Learner,
    given: &HyperParams,
    train: Dataset,
    fingerprint: &str,
    comm: &dyn Communicator,
) -> anyhow::Result<OverRanks> {
    check_same(comm, "the training data", hash64(fingerprint.as_bytes()))?;
    check_same(
        comm,
        "the command line",
        hash64(format!("{args:?}").as_bytes()),
    )?;
    let params = agree(comm, registry::resolve(learner, given, &train))?;
    // the corruption moments need every row: rank 0 computes them before dropping its copy
    let stats = if comm.is_root() {
        Some(bulwark_adversary::CorruptionStats::fit(&train))
    } else {
        None
    };
    let stats = agree(comm, stats.transpose())?;
    let rows = train.len();
    let share: Vec<usize> = comm.share(rows).collect();
    let local = train.select(&share);
    drop(train);
    let fitted = agree(comm, learner.fit_distributed(&local, &params, comm))?;
    let local_error = agree(comm, fitted.model.error_rate(&local))?;
    let mut mistakes = [(local_error * local.len() as f64).round()];
    comm.allreduce_sum(&mut mistakes);
    let training_error = mistakes[0] / rows.max(1) as f64;
    Ok(((fitted, params), training_error, stats))
}

/// FNV-1a, 64 bits: a short digest for comparing inputs between ranks.
fn hash64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
