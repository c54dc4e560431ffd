//! `bulwark plot`: error-versus-budget curves from `bulwark eval --json` output, or the
//! cross-validation error against a tuned parameter from `bulwark tune --json` output, as SVG
//! (the plotting module of `bulwark-eval`).
//!
//! Each `eval` input is either a curve (`eval --budgets …`: a `points` array) or a single
//! evaluation (`eval --budget N`: one point). Inputs with the same model and attack join one
//! curve, so single-budget files can be plotted together; points are sorted by budget.
//!
//! A `tune` input (a `cv` table) plots the mean validation error (± its standard error) against
//! one tuned parameter (`--param`, default the first numeric one), one curve per combination of
//! the other tuned parameters; the chosen point's curve says so.

use std::io::Write;
use std::path::Path;

use bulwark_core::{Error, Location};
use bulwark_eval::plot::{Curve, LinePlot};
use serde::Deserialize;

use crate::args::PlotArgs;
use bulwark_models::check_output_dir;

/// The fields of `eval --json` output that a plot needs.
#[derive(Debug, Deserialize)]
struct EvalFile {
    model: Option<String>,
    attack: Option<String>,
    budget: Option<f64>,
    error: Option<f64>,
    points: Option<Vec<Point>>,
}

#[derive(Debug, Deserialize)]
struct Point {
    budget: Option<f64>,
    error: f64,
}

/// Reads one file into a curve label and its `(budget, error)` points.
fn read(path: &Path) -> Result<(String, Vec<(f64, f64)>), Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let source = path.display().to_string();
    let file: EvalFile = serde_json::from_slice(&bytes).map_err(|e| {
        Error::input(
            Location::source(source.clone())
                .line(e.line())
                .column(e.column()),
            format!("not `bulwark eval --json` output: {e}"),
        )
    })?;
    let points: Vec<(f64, f64)> = match (file.points, file.error) {
        (Some(p), _) => p
            .into_iter()
            .map(|p| (p.budget.unwrap_or(0.0), p.error))
            .collect(),
        (None, Some(e)) => vec![(file.budget.unwrap_or(0.0), e)],
        (None, None) => {
            return Err(Error::input(
                Location::source(source),
                "not `bulwark eval --json` output (no `points` and no `error` field)",
            ));
        }
    };
    if points.is_empty() {
        return Err(Error::input(
            Location::source(source),
            "the curve has no points",
        ));
    }
    let model = file.model.as_deref().map_or_else(
        || source.clone(),
        |m| {
            Path::new(m)
                .file_stem()
                .map_or(m.to_string(), |s| s.to_string_lossy().into_owned())
        },
    );
    let label = match file.attack {
        Some(a) => format!("{model}: {a}"),
        None => model,
    };
    Ok((label, points))
}

/// The fields of `tune --json` output that a plot needs.
#[derive(Debug, Deserialize)]
struct TuneFile {
    algorithm: String,
    threat: String,
    tuned: Vec<String>,
    best: serde_json::Map<String, serde_json::Value>,
    cv: Vec<serde_json::Map<String, serde_json::Value>>,
}

fn tune_file(path: &Path) -> Result<Option<TuneFile>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::input(
            Location::source(path.display().to_string())
                .line(e.line())
                .column(e.column()),
            format!("not `bulwark eval --json` or `bulwark tune --json` output: {e}"),
        )
    })?;
    if v.get("cv").is_none() {
        return Ok(None);
    }
    serde_json::from_value(v).map(Some).map_err(|e| {
        Error::input(
            Location::source(path.display().to_string()),
            format!("not `bulwark tune --json` output: {e}"),
        )
    })
}

fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One grid point of a CV table: the parameter's value, the mean error and its standard error.
type CvPoint = (f64, f64, f64);

/// The curves of one `tune` file against `param`.
fn tune_curves(
    path: &Path,
    t: &TuneFile,
    param: Option<&str>,
    prefix: bool,
) -> Result<(String, Vec<Curve>), Error> {
    let source = path.display().to_string();
    let numeric = |name: &str| {
        t.cv.iter()
            .all(|r| r.get(name).is_some_and(|v| v.is_number()))
    };
    let name = match param {
        Some(p) => {
            if !t.tuned.iter().any(|n| n == p) {
                return Err(Error::param(
                    "param",
                    p,
                    format!("a tuned parameter of {source} ({})", t.tuned.join(", ")),
                ));
            }
            if !numeric(p) {
                return Err(Error::param("param", p, "a numeric tuned parameter"));
            }
            p.to_string()
        }
        None => t
            .tuned
            .iter()
            .find(|n| numeric(n))
            .cloned()
            .ok_or_else(|| {
                Error::input(
                    Location::source(source.clone()),
                    "no numeric tuned parameter to plot against",
                )
            })?,
    };
    let others: Vec<&String> = t.tuned.iter().filter(|n| **n != name).collect();
    let key = |r: &serde_json::Map<String, serde_json::Value>| -> String {
        others
            .iter()
            .map(|n| format!("{n}={}", r.get(*n).map(text_of).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let chosen = key(&t.best);
    let mut groups: Vec<(String, Vec<CvPoint>)> = Vec::new();
    for r in &t.cv {
        let (Some(x), Some(y)) = (
            r.get(&name).and_then(serde_json::Value::as_f64),
            r.get("mean_error").and_then(serde_json::Value::as_f64),
        ) else {
            continue;
        };
        let e = r
            .get("std_error")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0);
        let k = key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, p)) => p.push((x, y, e)),
            None => groups.push((k, vec![(x, y, e)])),
        }
    }
    let stem = Path::new(&source)
        .file_stem()
        .map_or(source.clone(), |s| s.to_string_lossy().into_owned());
    let mut curves = Vec::new();
    for (k, mut p) in groups {
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut label = if k.is_empty() {
            t.algorithm.clone()
        } else {
            k.clone()
        };
        if k == chosen {
            label.push_str(" (chosen)");
        }
        if prefix {
            label = format!("{stem}: {label}");
        }
        curves.push(Curve {
            label,
            x: p.iter().map(|q| q.0).collect(),
            y: p.iter().map(|q| q.1).collect(),
            err: Some(p.iter().map(|q| q.2).collect()),
        });
    }
    if curves.is_empty() {
        return Err(Error::input(
            Location::source(source),
            "the CV table has no scored point",
        ));
    }
    Ok((
        format!("{name} ({}, threat {})", t.algorithm, t.threat),
        curves,
    ))
}

pub(crate) fn run(args: &PlotArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    check_output_dir(&args.out)?;
    let mut tunes = Vec::new();
    for path in &args.inputs {
        if let Some(t) = tune_file(path)? {
            tunes.push((path, t));
        }
    }
    if !tunes.is_empty() {
        if tunes.len() != args.inputs.len() {
            return Err(Error::param(
                "inputs",
                "eval and tune output",
                "files of one kind: `eval --json` curves or `tune --json` tables",
            )
            .into());
        }
        return plot_tunes(args, &tunes, out);
    }
    if let Some(p) = &args.param {
        return Err(Error::param("param", p, "only with `tune --json` input").into());
    }
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for path in &args.inputs {
        let (label, points) = read(path)?;
        match curves.iter_mut().find(|(l, _)| *l == label) {
            Some((_, p)) => p.extend(points),
            None => curves.push((label, points)),
        }
    }
    let mut plot = LinePlot::new(&args.title, "budget N", "error").log_x(args.log_x);
    for (label, points) in &mut curves {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (x, y) = points.iter().copied().unzip();
        plot = plot.curve(Curve::new(label.clone(), x, y));
    }
    plot.write_svg(&args.out)?;
    let n_points: usize = curves.iter().map(|(_, p)| p.len()).sum();
    if args.json {
        let o = serde_json::json!({
            "out": args.out.display().to_string(),
            "curves": curves.iter().map(|(l, p)| serde_json::json!({"label": l, "points": p.len()})).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "wrote {} ({} curves, {n_points} points)",
            args.out.display(),
            curves.len()
        )?;
    }
    Ok(())
}

fn plot_tunes(
    args: &PlotArgs,
    tunes: &[(&std::path::PathBuf, TuneFile)],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut x_label = String::new();
    let mut curves = Vec::new();
    for (path, t) in tunes {
        let (x, c) = tune_curves(path, t, args.param.as_deref(), tunes.len() > 1)?;
        x_label = x;
        curves.extend(c);
    }
    let title = if args.title == "Error under attack" {
        "Cross-validation error".to_string()
    } else {
        args.title.clone()
    };
    let mut plot = LinePlot::new(&title, &x_label, "mean validation error").log_x(args.log_x);
    for c in &curves {
        plot = plot.curve(c.clone());
    }
    plot.write_svg(&args.out)?;
    if args.json {
        let o = serde_json::json!({
            "out": args.out.display().to_string(),
            "curves": curves.iter().map(|c| serde_json::json!({"label": c.label, "points": c.x.len()})).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "wrote {} ({} curves of the mean validation error against {x_label})",
            args.out.display(),
            curves.len()
        )?;
    }
    Ok(())
}
