//! `bulwark eval`, `bulwark certify`, `bulwark attack`: a trained model against test-time
//! attacks (`bulwark-adversary`); the deletion attacks and certificates need a binary linear
//! model, noise and random deletion take a model of any kind.

use std::io::Write;
use std::path::Path;

use bulwark_adversary::{
    Attack, AttackBudget, AttackKind, CertifyOptions, EvalReport, attacked_dataset_model,
    certify_with, evaluate_model,
};
use bulwark_core::{AnyModel, Classifier, Dataset, Error};
use serde::Serialize;

use bulwark_data::MissingPolicy;

use crate::args::{AttackArg, AttackArgs, CertifyArgs, EvalArgs, EvalData, ReadArgs};
use crate::commands::read_options;
use crate::commands::train::task_of;
use crate::ui::Ui;
use bulwark_models::{ModelFile, check_output_dir, feature_values};

/// The model, and data prepared the way the model expects: the task (the model's training
/// task unless `pair`/`positive` is given), the same feature count, the model's scaling, and
/// missing cells read as deleted features ([`ModelFile::input`], `bulwark_core::missing`).
pub(crate) fn prepare(
    model_path: &Path,
    data: &str,
    pair: Option<&str>,
    positive: Option<&str>,
    read: &ReadArgs,
    dir: Option<&Path>,
    ui: Ui,
) -> anyhow::Result<(ModelFile, AnyModel, Dataset)> {
    let (file, model) = ModelFile::read(model_path)?;
    let options = read_options(read, MissingPolicy::Delete)?;
    let raw = bulwark_data::load_with(data, dir, &options)?.data;
    let (pair, positive) = match (pair, positive) {
        (None, None) => (
            file.training.pair.as_deref(),
            file.training.positive.as_deref(),
        ),
        given => given,
    };
    // a multiclass model is evaluated on every class of the data unless a binary task is given
    let task = if model.n_classes() > 2 && pair.is_none() && positive.is_none() {
        raw
    } else {
        bulwark_data::binary_task(&raw, &task_of(pair, positive)?)?
    };
    if task.n_features() != model.n_features() {
        return Err(Error::shape(
            format!(
                "model {} vs data {}: feature count",
                model_path.display(),
                data
            ),
            model.n_features(),
            task.n_features(),
        )
        .into());
    }
    let trained = file.feature_names();
    if let Some(k) = task.feature_names().first_difference(&trained) {
        ui.warn(&format!(
            "{data}: feature {} is named `{}`, but the model was trained on `{}` (same count, different columns?)",
            k + 1,
            task.feature_names().get(k),
            trained.get(k)
        ));
    }
    if task.class_names() != file.training.classes.as_slice() {
        ui.warn(&format!(
            "{data}: classes (-1, +1) are ({}), but the model was trained on ({})",
            task.class_names().join(", "),
            file.training.classes.join(", ")
        ));
    }
    let data = file.input(&task)?;
    Ok((file, model, data))
}

fn prepare_common(
    common: &EvalData,
    dir: Option<&Path>,
    ui: Ui,
) -> anyhow::Result<(ModelFile, AnyModel, Dataset)> {
    prepare(
        &common.model,
        &common.data,
        common.pair.as_deref(),
        common.positive.as_deref(),
        &common.read,
        dir,
        ui,
    )
}

/// Resolves `--values`; `model` takes the values stored in the model file (else uniform).
fn values(common: &EvalData, file: &ModelFile, data: &Dataset) -> anyhow::Result<Vec<f64>> {
    if common.values == "model" {
        return Ok(file.budget_values());
    }
    Ok(feature_values(&common.values, data)?)
}

/// `eval --json` for one budget: the report plus what was evaluated.
#[derive(Debug, Serialize)]
struct EvalOutput<'a> {
    model: String,
    algorithm: &'a str,
    data: &'a str,
    #[serde(flatten)]
    report: &'a EvalReport,
}

/// `eval --budgets … --json`: an error-versus-budget curve (the input of `bulwark plot`).
#[derive(Debug, Serialize)]
struct CurveOutput<'a> {
    model: String,
    algorithm: &'a str,
    data: &'a str,
    attack: &'a str,
    seed: u64,
    n_examples: usize,
    /// The error on the records as they are (missing features deleted).
    clean_error: f64,
    /// Records with missing features (deleted; they count against each budget).
    missing_records: usize,
    points: Vec<EvalReport>,
}

/// The one line `eval` and `certify` print about records with missing features.
fn missing_note(out: &mut dyn Write, records: usize) -> std::io::Result<()> {
    if records > 0 {
        writeln!(
            out,
            "missing      {records} records have missing features: deleted, and counted against \
             the budget (the clean error is on the records as they are)"
        )?;
    }
    Ok(())
}

fn attack_of(kind: AttackArg, values: Vec<f64>, file: &ModelFile) -> anyhow::Result<Attack> {
    let kind = match kind {
        AttackArg::None => AttackKind::None,
        AttackArg::GreedyDelete => AttackKind::GreedyDelete,
        AttackArg::GreedyCorrupt => AttackKind::GreedyCorrupt,
        AttackArg::RandomDelete => AttackKind::RandomDelete,
        AttackArg::ExactDelete => AttackKind::ExactDelete,
        AttackArg::UniformNoise => AttackKind::UniformNoise,
    };
    let mut attack = Attack::new(kind).with_values(values)?;
    if kind == AttackKind::GreedyCorrupt {
        let stats = file.corruption_stats.clone().ok_or_else(|| {
            Error::param(
                "attack",
                "greedy-corrupt",
                "a model file with training statistics (retrain with this bulwark)",
            )
        })?;
        attack = attack.with_corruption(stats);
    }
    Ok(attack)
}

/// What an interrupted `eval` keeps.
fn nothing_printed() -> String {
    "stopped evaluating; nothing printed".into()
}

pub(crate) fn eval(
    args: &EvalArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let (file, model, data) = prepare_common(&args.common, dir, ui)?;
    let v = values(&args.common, &file, &data)?;
    let attack = attack_of(args.attack, v, &file)?;
    crate::interrupt::check(nothing_printed)?;
    if let Some(budgets) = &args.budgets {
        return eval_curve(args, budgets, &file, &model, &data, &attack, ui, out);
    }
    let spinner = ui.spinner(
        args.common.json,
        format!("{} on {} examples", attack.name(), data.len()),
    );
    let report = evaluate_model(&model, &data, &attack, args.budget, args.seed)?;
    spinner.finish_and_clear();
    crate::interrupt::check(nothing_printed)?;
    if args.common.json {
        let o = EvalOutput {
            model: args.common.model.display().to_string(),
            algorithm: &file.algorithm,
            data: &args.common.data,
            report: &report,
        };
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        writeln!(out, "model        {}", args.common.model.display())?;
        writeln!(
            out,
            "data         {} ({} examples)",
            data.name(),
            report.n_examples
        )?;
        writeln!(
            out,
            "attack       {} (budget {}, seed {})",
            report.attack, args.budget, args.seed
        )?;
        writeln!(out, "clean error  {:.4}", report.clean_error)?;
        writeln!(out, "error        {:.4}", report.error)?;
        missing_note(out, report.missing_records)?;
        if report.incomplete > 0 {
            writeln!(
                out,
                "note         {} examples hit the search limit (their attack may be weaker than optimal)",
                report.incomplete
            )?;
        }
    }
    Ok(())
}

fn eval_curve(
    args: &EvalArgs,
    budgets: &[f64],
    file: &ModelFile,
    model: &AnyModel,
    data: &Dataset,
    attack: &Attack,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    // validate every budget before the first (possibly long) attack
    for &b in budgets {
        bulwark_core::error::check_nonnegative("budgets", b)?;
    }
    let bar = ui.bar(
        args.common.json,
        budgets.len() as u64,
        format!("{} at {} budgets", attack.name(), budgets.len()),
    );
    let mut points = Vec::with_capacity(budgets.len());
    for &b in budgets {
        // each budget is a safe point: the curve is printed whole or not at all
        crate::interrupt::check(nothing_printed)?;
        points.push(evaluate_model(model, data, attack, b, args.seed)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    crate::interrupt::check(nothing_printed)?;
    let curve = CurveOutput {
        model: args.common.model.display().to_string(),
        algorithm: &file.algorithm,
        data: &args.common.data,
        attack: attack.name(),
        seed: args.seed,
        n_examples: data.len(),
        clean_error: points.first().map_or(0.0, |p| p.clean_error),
        missing_records: data.incomplete_records(),
        points,
    };
    if args.common.json {
        serde_json::to_writer_pretty(&mut *out, &curve)?;
        writeln!(out)?;
    } else {
        writeln!(out, "model        {}", curve.model)?;
        writeln!(
            out,
            "data         {} ({} examples)",
            data.name(),
            curve.n_examples
        )?;
        writeln!(out, "attack       {} (seed {})", curve.attack, curve.seed)?;
        writeln!(out, "clean error  {:.4}", curve.clean_error)?;
        missing_note(out, curve.missing_records)?;
        writeln!(out, "budget      error")?;
        for p in &curve.points {
            writeln!(out, "{:>6}     {:.4}", p.budget.unwrap_or(0.0), p.error)?;
        }
    }
    Ok(())
}

pub(crate) fn certify(
    args: &CertifyArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let (file, model, data) = prepare_common(&args.common, dir, ui)?;
    let v = values(&args.common, &file, &data)?;
    let budget = AttackBudget::try_new(v, args.budget)?;
    let opts = CertifyOptions {
        exact: true,
        node_limit: args.node_limit,
        per_example: args.per_example,
    };
    let spinner = ui.spinner(
        args.common.json,
        format!("certifying {} examples", data.len()),
    );
    let model = model.require_linear("bulwark certify")?;
    let cert = certify_with(model, &data, &budget, &opts)?;
    spinner.finish_and_clear();
    if args.common.json {
        serde_json::to_writer_pretty(&mut *out, &cert)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "certified robust error at budget {} on {} examples",
            cert.budget, cert.n_examples
        )?;
        writeln!(out, "  clean error        {:.4}", cert.clean_error)?;
        writeln!(
            out,
            "  lower bound        {:.4}   (greedy attack alone: {:.4})",
            cert.lower, cert.greedy_lower
        )?;
        writeln!(
            out,
            "  upper bound        {:.4}   (fractional relaxation alone: {:.4})",
            cert.upper, cert.relaxation_upper
        )?;
        match cert.exact {
            Some(e) => writeln!(out, "  exact              {e:.4}")?,
            None => writeln!(
                out,
                "  exact              not decided ({} examples hit the node limit)",
                cert.n_undecided
            )?,
        }
        missing_note(out, cert.missing_records)?;
    }
    Ok(())
}

pub(crate) fn attack(
    args: &AttackArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    check_output_dir(&args.out)?;
    let (file, model, data) = prepare_common(&args.common, dir, ui)?;
    let v = values(&args.common, &file, &data)?;
    let attack = attack_of(args.attack, v, &file)?;
    let spinner = ui.spinner(
        args.common.json,
        format!("{} on {} examples", attack.name(), data.len()),
    );
    let attacked = attacked_dataset_model(&model, &data, &attack, args.budget, args.seed)?;
    spinner.finish_and_clear();
    crate::interrupt::check(|| {
        format!(
            "stopped attacking; nothing written ({} untouched)",
            args.out.display()
        )
    })?;
    // back to the data's original units, so the file reads like the input; a missing cell
    // stays missing (empty)
    let mask = attacked.missing();
    super::write_csv(&args.out, &attacked, |i, j, x| {
        if mask.is_some_and(|m| m.is_missing(i, j)) {
            return None;
        }
        Some(match &file.scaler {
            Some(s) => x / s.factor[j] + s.shift[j],
            None => x,
        })
    })?;
    if args.common.json {
        let o = serde_json::json!({
            "attack": attack.name(), "budget": args.budget, "seed": args.seed,
            "n_examples": attacked.len(), "out": args.out.display().to_string(),
        });
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "wrote {} attacked examples to {}",
            attacked.len(),
            args.out.display()
        )?;
    }
    Ok(())
}
