//! `bulwark predict`: scores and predicted labels of a trained model on (new) data.

use std::io::Write;
use std::path::Path;

use bulwark_adversary::{AttackBudget, CertifyOptions, Verdict, certify_with};
use bulwark_core::{AnyModel, Classifier, DecisionFunction, Scores, Sign};
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
    /// Missing features of the record (deleted: 0 in the model's input space).
    #[serde(skip_serializing_if = "Option::is_none")]
    missing: Option<usize>,
    /// Their total value `Σ v_j`, spent from the adversary's budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    missing_value: Option<f64>,
    /// Certified robust against a deletion of value up to `max(0, N − missing_value)` (`null`
    /// when the model was trained without a budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    certified: Option<Option<bool>>,
    /// The certificate's verdict: robust, broken or undecided (node limit hit).
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<Verdict>,
}

#[derive(Debug, Serialize)]
struct Predictions<'a> {
    model: String,
    data: &'a str,
    n_examples: usize,
    /// Fraction of predictions that differ from the data's labels.
    error: f64,
    /// Records with missing features.
    missing_records: usize,
    /// The budget `N` the model was trained for (`null`: none, nothing is certified).
    budget: Option<f64>,
    /// Examples certified robust at their remaining budget, and undecided ones.
    n_certified: Option<usize>,
    n_undecided: Option<usize>,
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
        &args.read,
        dir,
        ui,
    )?;
    // per example: the score (the winning class's score for a multiclass model) and the class
    let (scores, predicted): (Vec<f64>, Vec<usize>) = match &model {
        AnyModel::Linear(m) => {
            let s = m.decision_all(data.features())?;
            let c = s
                .iter()
                .map(|&v| usize::from(Sign::of_score(v) == Sign::Pos))
                .collect();
            (s, c)
        }
        other => {
            // one score buffer for every example (multiclass models)
            let mut out = vec![0.0; other.n_classes()];
            (0..data.len())
                .map(|i| {
                    let x = data.row(i);
                    match other.decision(x) {
                        Some(v) => (v, usize::from(Sign::of_score(v) == Sign::Pos)),
                        None => {
                            let k = other.predict_class(x);
                            other.scores_into(x, &mut out);
                            (out[k], k)
                        }
                    }
                })
                .unzip()
        }
    };
    let truth: Vec<usize> = (0..data.len())
        .map(|i| data.targets().class_index(i))
        .collect();
    let names = data.class_names();
    // JSON only: missing features, their value, and the certificate at the remaining budget
    let values = file.budget_values();
    let certificate = match (file.budget(), model.as_linear()) {
        (Some(n), Some(model)) if args.json => {
            let opts = CertifyOptions {
                per_example: true,
                ..CertifyOptions::default()
            };
            Some(certify_with(
                model,
                &data,
                &AttackBudget::try_new(values.clone(), n)?,
                &opts,
            )?)
        }
        _ => None,
    };
    let mask = data.missing();
    let predictions: Vec<Prediction<'_>> = scores
        .iter()
        .enumerate()
        .map(|(index, &score)| {
            let verdict = certificate.as_ref().map(|c| c.per_example[index].verdict);
            Prediction {
                index,
                score,
                prediction: &file.training.classes[predicted[index]],
                label: &names[truth[index]],
                missing: args.json.then(|| mask.map_or(0, |m| m.row(index).len())),
                missing_value: args
                    .json
                    .then(|| mask.map_or(0.0, |m| m.value(index, &values))),
                certified: args.json.then(|| verdict.map(|v| v == Verdict::Robust)),
                verdict,
            }
        })
        .collect();
    // a score of 0 is a mistake for binary models (DSX eq. (1)), as everywhere
    let wrong = (0..data.len())
        .filter(|&i| model.is_mistake(data.row(i), truth[i]))
        .count();
    let result = Predictions {
        model: args.model.display().to_string(),
        data: &args.data,
        n_examples: predictions.len(),
        error: wrong as f64 / predictions.len().max(1) as f64,
        missing_records: data.incomplete_records(),
        budget: file.budget(),
        n_certified: certificate.as_ref().map(|c| c.n_robust),
        n_undecided: certificate.as_ref().map(|c| c.n_undecided),
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
