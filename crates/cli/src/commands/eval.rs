//! `bulwark eval`, `bulwark certify`, `bulwark attack`: a trained linear model against test-time
//! attacks (`bulwark-adversary`).

use std::io::Write;
use std::path::Path;

use bulwark_adversary::{
    Attack, AttackBudget, AttackKind, CertifyOptions, attacked_dataset, certify_with, evaluate,
};
use bulwark_core::{Dataset, Error, LinearModel};

use crate::args::{AttackArg, AttackArgs, CertifyArgs, EvalArgs, EvalData};
use crate::commands::model::{ModelFile, write_atomic};
use crate::commands::train::{task_of, values_of};

/// The model, and the test data prepared the way the model expects (task, scaling).
fn prepare(
    common: &EvalData,
    dir: Option<&Path>,
) -> anyhow::Result<(ModelFile, LinearModel, Dataset)> {
    let (file, model) = ModelFile::read(&common.model)?;
    let (raw, _) = bulwark_data::load(&common.data, dir)?;
    let task = bulwark_data::binary_task(
        &raw,
        &task_of(common.pair.as_deref(), common.positive.as_deref())?,
    )?;
    if task.n_features() != model.weights.len() {
        return Err(Error::shape(
            format!(
                "model {} vs data {}: feature count",
                common.model.display(),
                common.data
            ),
            model.weights.len(),
            task.n_features(),
        )
        .into());
    }
    let data = match &file.scaler {
        Some(s) => s.transform(&task)?,
        None => task,
    };
    Ok((file, model, data))
}

/// Resolves `--values`; `model` takes the values stored in the model file (else uniform).
fn values(common: &EvalData, file: &ModelFile, data: &Dataset) -> anyhow::Result<Vec<f64>> {
    if common.values == "model" {
        let stored: Option<Vec<f64>> = file
            .hyper_parameters
            .get("feature_values")
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        return Ok(stored
            .filter(|v| v.len() == data.n_features())
            .unwrap_or_else(|| vec![1.0; data.n_features()]));
    }
    values_of(&common.values, data)
}

fn attack_of(kind: AttackArg, values: Vec<f64>, file: &ModelFile) -> anyhow::Result<Attack> {
    let kind = match kind {
        AttackArg::None => AttackKind::None,
        AttackArg::GreedyDelete => AttackKind::GreedyDelete,
        AttackArg::GreedyCorrupt => AttackKind::GreedyCorrupt,
        AttackArg::RandomDelete => AttackKind::RandomDelete,
        AttackArg::ExactDelete => AttackKind::ExactDelete,
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

pub(crate) fn eval(args: &EvalArgs, dir: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<()> {
    let (file, model, data) = prepare(&args.common, dir)?;
    let v = values(&args.common, &file, &data)?;
    let attack = attack_of(args.attack, v, &file)?;
    let report = evaluate(&model, &data, &attack, args.budget, args.seed)?;
    if args.common.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
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

pub(crate) fn certify(
    args: &CertifyArgs,
    dir: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let (file, model, data) = prepare(&args.common, dir)?;
    let v = values(&args.common, &file, &data)?;
    let budget = AttackBudget::try_new(v, args.budget)?;
    let opts = CertifyOptions {
        exact: true,
        node_limit: args.node_limit,
        per_example: args.per_example,
    };
    let cert = certify_with(&model, &data, &budget, &opts)?;
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
    }
    Ok(())
}

pub(crate) fn attack(
    args: &AttackArgs,
    dir: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let (file, model, data) = prepare(&args.common, dir)?;
    let v = values(&args.common, &file, &data)?;
    let attack = attack_of(args.attack, v, &file)?;
    let attacked = attacked_dataset(&model, &data, &attack, args.budget, args.seed)?;
    // back to the data's original units, so the file reads like the input
    let dense = attacked.features().to_dense();
    let mut body = Vec::new();
    {
        let mut w = csv::Writer::from_writer(&mut body);
        let mut header = vec!["label".to_string()];
        header.extend(attacked.feature_names().iter().cloned());
        w.write_record(&header)?;
        let y = attacked.binary_labels()?;
        for i in 0..attacked.len() {
            let mut rec =
                vec![attacked.class_names()[usize::from(y[i] == bulwark_core::Sign::Pos)].clone()];
            for (j, &x) in dense.row(i).iter().enumerate() {
                let v = match &file.scaler {
                    Some(s) => x / s.factor[j] + s.shift[j],
                    None => x,
                };
                rec.push(format!("{v}"));
            }
            w.write_record(&rec)?;
        }
        w.flush()?;
    }
    let bytes = if args.out.extension().is_some_and(|e| e == "gz") {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&body)?;
        e.finish()?
    } else {
        body
    };
    write_atomic(&args.out, &bytes)?;
    writeln!(
        out,
        "wrote {} attacked examples to {}",
        attacked.len(),
        args.out.display()
    )?;
    Ok(())
}
