//! `bulwark predict`: scores and predicted labels of a trained model on (new) data.

use std::io::Write;
use std::path::Path;

use bulwark_core::{DecisionFunction, Sign};
use serde::Serialize;

use crate::args::PredictArgs;
use crate::commands::eval::prepare;
use crate::ui::Ui;
use bulwark_models::{check_output_dir, write_atomic};

#[derive(Debug, Serialize)]
struct Prediction<'a> {
    index: usize,
    score: f64,
    prediction: &'a str,
    label: &'a str,
}

#[derive(Debug, Serialize)]
struct Predictions<'a> {
    model: String,
    data: &'a str,
    n_examples: usize,
    /// Fraction of predictions that differ from the data's labels.
    error: f64,
    predictions: Vec<Prediction<'a>>,
}

pub(crate) fn run(
    args: &PredictArgs,
    dir: Option<&Path>,
    ui: Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if let Some(p) = &args.out {
        check_output_dir(p)?;
    }
    let (file, model, data) = prepare(
        &args.model,
        &args.data,
        args.pair.as_deref(),
        args.positive.as_deref(),
        dir,
        ui,
    )?;
    let scores = model.decision_all(data.features())?;
    let labels = data.binary_labels()?;
    let names = data.class_names();
    let predictions: Vec<Prediction<'_>> = scores
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(index, (&score, &y))| Prediction {
            index,
            score,
            prediction: file.class_name(Sign::of_score(score) == Sign::Pos),
            label: &names[usize::from(y == Sign::Pos)],
        })
        .collect();
    let wrong = scores
        .iter()
        .zip(labels)
        .filter(|(s, y)| y.is_mistake(**s))
        .count();
    let result = Predictions {
        model: args.model.display().to_string(),
        data: &args.data,
        n_examples: predictions.len(),
        error: wrong as f64 / predictions.len().max(1) as f64,
        predictions,
    };
    let mut body = Vec::new();
    if args.json {
        serde_json::to_writer_pretty(&mut body, &result)?;
        body.push(b'\n');
    } else {
        let mut w = csv::Writer::from_writer(&mut body);
        for p in &result.predictions {
            w.serialize(p)?;
        }
        w.flush()?;
    }
    match &args.out {
        Some(p) => {
            write_atomic(p, &body)?;
            if !args.json {
                writeln!(
                    out,
                    "wrote {} predictions to {} (error {:.4} against the data's labels)",
                    result.n_examples,
                    p.display(),
                    result.error
                )?;
            }
        }
        None => out.write_all(&body)?,
    }
    Ok(())
}
