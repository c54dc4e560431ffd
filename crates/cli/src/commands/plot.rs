//! `bulwark plot`: error-versus-budget curves from `bulwark eval --json` output, as SVG (the
//! plotting module of `bulwark-eval`).
//!
//! Each input is either a curve (`eval --budgets …`: a `points` array) or a single evaluation
//! (`eval --budget N`: one point). Inputs with the same model and attack join one curve, so
//! single-budget files can be plotted together; points are sorted by budget.

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

pub(crate) fn run(args: &PlotArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    check_output_dir(&args.out)?;
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
