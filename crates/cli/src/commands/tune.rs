//! `bulwark tune`: load → binary task → stratified, seeded K-fold cross-validation of the
//! learner's grid under the threat named (`bulwark_eval::select`) → refit of the chosen point
//! on all the data → model file with the CV table.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;

use anyhow::Context;
use bulwark_core::{Classifier, Error};
use bulwark_data::{Loaded, MissingPolicy, binary_task, load_with};
use bulwark_eval::select::{Grid, Patterns, Threat, TuneSpec, fit_chosen, tune};
use bulwark_models::{
    CvRow, Encoding, ModelFile, Selection, Training, check_output_dir, fingerprint, registry,
};
use serde_json::json;

use crate::args::TuneArgs;
use crate::commands::train::{scaling_kind, task_of};
use crate::ui::Ui;

/// `--grid NAME=v1,v2,…` → `(name, values)`; a flag's spelling (`max-iter`) names the parameter
/// (`max_iter`).
fn parse_grid(raw: &str) -> Result<(String, Vec<String>), Error> {
    let (name, values) = raw.split_once('=').ok_or_else(|| {
        Error::param(
            "grid",
            raw,
            "PARAM=v1,v2,... (a tunable parameter and its values)",
        )
    })?;
    Ok((
        name.trim().replace('-', "_"),
        values.split(',').map(|v| v.trim().to_string()).collect(),
    ))
}

/// A CV row as JSON: the grid values flattened beside the figures.
fn row_json(r: &CvRow) -> serde_json::Value {
    let mut o = serde_json::to_value(&r.params).unwrap_or_default();
    let figures = json!({
        "mean_error": r.mean_error, "std_error": r.std_error, "folds": r.folds,
        "fold_errors": r.fold_errors, "not_converged": r.not_converged,
        "failed": r.failures.len(), "failures": r.failures,
    });
    if let (Some(o), Some(f)) = (o.as_object_mut(), figures.as_object()) {
        o.extend(f.clone());
    }
    o
}

fn params_text(r: &CvRow) -> String {
    r.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn run(
    args: &TuneArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let learner = registry::find(&args.algo)?;
    let policy: MissingPolicy = args.missing.parse()?;
    let mut fixed = args.params.0.for_learner(learner)?;
    // one seed for everything: the learner's own random choices too
    if learner.params().iter().any(|p| p.name == "seed") {
        fixed.set("seed", bulwark_core::ParamValue::Count(args.seed));
    }
    let given: Vec<(String, Vec<String>)> = args
        .grid
        .iter()
        .map(|g| parse_grid(g))
        .collect::<Result<_, _>>()?;
    let grid = Grid::for_learner(learner, &given, &fixed)?;
    let threat: Threat = args.threat.parse()?;
    Encoding::for_output(&args.out)?;
    check_output_dir(&args.out)?;
    let options = super::read_options(&args.read, policy)?;
    let Loaded { data: raw, .. } = load_with(&args.data, dir, &options)?;
    let task = binary_task(
        &raw,
        &task_of(args.pair.as_deref(), args.positive.as_deref())?,
    )?;
    let patterns = match &args.missing_from {
        None => None,
        Some(path) => {
            let from = super::read_options(&args.read, MissingPolicy::Delete)?;
            let d = load_with(path, dir, &from)
                .with_context(|| format!("reading the missing-cell patterns of {path}"))?
                .data;
            if d.n_features() != task.n_features() {
                return Err(Error::shape(
                    format!(
                        "--missing-from {path} vs --data {}: feature count",
                        args.data
                    ),
                    task.n_features(),
                    d.n_features(),
                )
                .into());
            }
            Some(Patterns::of(&d))
        }
    };
    let spec = TuneSpec {
        learner,
        fixed,
        grid,
        threat,
        folds: args.folds,
        seed: args.seed,
        scaling: args.scale.map(scaling_kind),
        patterns,
    };
    let points = spec.grid.points().len();
    let bar = ui.bar(
        args.json,
        (points * args.folds + 1) as u64,
        format!(
            "tuning {} ({points} points x {} folds)",
            learner.name(),
            args.folds
        ),
    );
    // every fit is a safe point: a stop request (Ctrl-C) ends the selection there, nothing written
    let mut progress = |_: &bulwark_eval::select::Step| {
        bar.inc(1);
        if crate::interrupt::cancel().is_requested() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let selection = tune(&task, &spec, &mut progress)?;
    let chosen = fit_chosen(&task, &spec, &selection)?;
    bar.finish_and_clear();
    crate::interrupt::check(|| format!("nothing ({} not written)", args.out.display()))?;
    let training_error = chosen.model.error_rate(&chosen.data)?;
    let training = Training {
        data: args.data.clone(),
        task: task.name().to_string(),
        pair: args.pair.clone(),
        positive: args.positive.clone(),
        rows: task.len(),
        feature_names: task.feature_names().to_vec(),
        classes: task.class_names().to_vec(),
        scale: spec.scaling,
        training_error,
        fingerprint: fingerprint(&task),
    };
    let mut file = ModelFile::new(
        learner.name(),
        &chosen.model,
        chosen.scaler.clone(),
        chosen.params.clone(),
        training,
        chosen.report.clone(),
    );
    file.corruption_stats = Some(bulwark_adversary::CorruptionStats::fit(&chosen.data)?);
    file.selection = Some(selection.clone());
    file.write(&args.out)?;
    report(args, &selection, &chosen.report, training_error, out)?;
    let unconverged: usize = selection.cv.iter().map(|r| r.not_converged).sum();
    let failed: usize = selection.cv.iter().map(|r| r.failures.len()).sum();
    if unconverged + failed > 0 {
        ui.warn(&format!(
            "{}: {unconverged} fits stopped short of their tolerance and {failed} failed (per grid point in the table)",
            learner.name()
        ));
    }
    if !chosen.report.converged || chosen.report.fell_back() {
        ui.warn(&format!(
            "{}: refit: {}",
            learner.name(),
            chosen.report.summary()
        ));
    }
    Ok(())
}

fn report(
    args: &TuneArgs,
    s: &Selection,
    refit: &bulwark_core::FitReport,
    training_error: f64,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if args.json {
        let o = json!({
            "algorithm": s.learner, "data": args.data, "threat": s.threat, "folds": s.folds,
            "seed": s.seed, "tuned": s.tuned, "rule": s.rule,
            "best": s.chosen().params,
            "best_mean_error": s.chosen().mean_error, "best_std_error": s.chosen().std_error,
            "cv": s.cv.iter().map(row_json).collect::<Vec<_>>(),
            "model": args.out.display().to_string(),
            "refit": {"solver": refit.solver, "converged": refit.converged,
                      "training_error": training_error},
        });
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "tuned {} on {} by {}-fold cross-validation (seed {}) under {}",
        s.learner, args.data, s.folds, s.seed, s.threat
    )?;
    writeln!(
        out,
        "{:<40} {:>10} {:>9} {:>6} {:>6}",
        "point", "mean err", "std err", "folds", "notes"
    )?;
    for (k, r) in s.cv.iter().enumerate() {
        let mark = if k == s.best { " <- chosen" } else { "" };
        let notes = match (r.not_converged, r.failures.len()) {
            (0, 0) => String::new(),
            (u, 0) => format!("{u} unconv."),
            (u, f) => format!("{u} unconv., {f} failed"),
        };
        writeln!(
            out,
            "{:<40} {:>10} {:>9} {:>6} {:>6}{mark}",
            params_text(r),
            r.mean_error.map_or("-".into(), |e| format!("{e:.4}")),
            r.std_error.map_or("-".into(), |e| format!("{e:.4}")),
            r.folds,
            notes
        )?;
    }
    writeln!(out, "rule            {}", s.rule)?;
    writeln!(out, "chosen          {}", params_text(s.chosen()))?;
    writeln!(
        out,
        "refit           {} (all {} records)",
        refit.summary(),
        args.data
    )?;
    writeln!(out, "training error  {training_error:.4}")?;
    writeln!(
        out,
        "model written to {} (with the CV table)",
        args.out.display()
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_grid;

    #[test]
    fn grids_parse_by_name_and_values() {
        let (n, v) = parse_grid("max-iter=10, 20").unwrap();
        assert_eq!(
            (n.as_str(), v),
            ("max_iter", vec!["10".to_string(), "20".to_string()])
        );
        let e = parse_grid("C").unwrap_err().to_string();
        assert!(e.contains("PARAM=v1,v2"), "{e}");
    }
}
