//! The Markdown report, the plots and `poisoning.json`.

use serde_json::Value;

use super::{BREAKDOWN, DEFENCES, FIRST_ADAPTIVE, JUDGE_RATE, MODELS, own_adaptive};
use crate::experiment::ExperimentResult;
use crate::plot::{Curve, LinePlot};
use crate::report::{num, numbers};

fn title_of<'a>(list: &'a [(&'a str, &'a str)], key: &'a str) -> &'a str {
    list.iter().find(|d| d.0 == key).map_or(key, |d| d.1)
}

/// The Markdown report: the summary tables first, then error against `ε` per set and model.
pub fn to_markdown(res: &ExperimentResult) -> String {
    use std::fmt::Write as _;
    let mut s = crate::report::header(res);
    let sum = &res.summary;
    let sets: Vec<&str> = sum["sets"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rates: Vec<f64> = numbers(&sum["rates"]);
    let head = |first: &str| {
        format!(
            "| {first} | {} |\n|---|{}",
            sets.join(" | "),
            "---|".repeat(sets.len())
        )
    };
    let _ = writeln!(
        s,
        "\n## The best defence per contamination model (smallest mean error over ε > 0)\n\n{}",
        head("model")
    );
    for (mkey, mtitle) in MODELS {
        let row: Vec<String> = sets
            .iter()
            .map(|set| {
                let b = &sum["best"][set][mkey];
                format!(
                    "{} ({:.3})",
                    title_of(&DEFENCES, b["defence"].as_str().unwrap_or("")),
                    num(&b["mean_error"])
                )
            })
            .collect();
        let _ = writeln!(s, "| {mtitle} | {} |", row.join(" | "));
    }
    let counts: Vec<String> = DEFENCES
        .iter()
        .filter_map(|(k, t)| {
            let n = sum["best_counts"][k].as_u64().unwrap_or(0);
            (n > 0).then(|| format!("{t} {n}"))
        })
        .collect();
    let _ = writeln!(s, "\nBest in: {}.", counts.join(", "));
    let _ = writeln!(
        s,
        "\n## The adaptive adversary against the worst non-adaptive one, ε = {JUDGE_RATE}\n\nEach cell: the defence's error under the adversary built against it / under the worst of the six non-adaptive models (✓: the adaptive one is worse for the defence).\n\n{}",
        head("defence")
    );
    for (dkey, dtitle) in DEFENCES {
        let row: Vec<String> = sets
            .iter()
            .map(|set| {
                let a = &sum["adaptive"][set][dkey];
                format!(
                    "{:.3} / {:.3} {}",
                    num(&a["own_error"]),
                    num(&a["worst_fixed_error"]),
                    if a["raised"].as_bool() == Some(true) {
                        "✓"
                    } else {
                        "✗"
                    }
                )
            })
            .collect();
        let _ = writeln!(s, "| {dtitle} | {} |", row.join(" | "));
    }
    let _ = writeln!(
        s,
        "\nThe adaptive adversary is the worst for the defence in {} of {} cases.",
        sum["adaptive_raised"]["raised"], sum["adaptive_raised"]["of"]
    );
    let _ = writeln!(
        s,
        "\n## Breakdown rates\n\nThe smallest ε whose mean error exceeds the clean error by {BREAKDOWN} (—: none up to {}). The adaptive row is each defence's own adaptive adversary.",
        rates.last().copied().unwrap_or(0.0)
    );
    let mut rows: Vec<(&str, &str)> = MODELS[..FIRST_ADAPTIVE].to_vec();
    rows.push(("adaptive", "adaptive (its own)"));
    for (mkey, mtitle) in rows {
        let _ = writeln!(s, "\n### {mtitle}\n\n{}", head("defence"));
        for (k, (dkey, dtitle)) in DEFENCES.iter().enumerate() {
            let model = if mkey == "adaptive" {
                MODELS[own_adaptive(k)].0
            } else {
                mkey
            };
            let row: Vec<String> = sets
                .iter()
                .map(|set| match sum["breakdown"][set][model][dkey].as_f64() {
                    Some(v) => format!("{v}"),
                    None => "—".into(),
                })
                .collect();
            let _ = writeln!(s, "| {dtitle} | {} |", row.join(" | "));
        }
    }
    for set in &sets {
        for (mkey, mtitle) in MODELS {
            let cell = &sum["errors"][set][mkey];
            let cols: Vec<(&str, &str)> = DEFENCES
                .iter()
                .chain(&crate::sklearn::REFERENCES)
                .copied()
                .filter(|(k, _)| cell.get(*k).is_some())
                .collect();
            let _ = writeln!(
                s,
                "\n## {set}, {mtitle}: clean test error, mean ± s.e.\n\n| ε | {} |\n|---|{}",
                cols.iter().map(|d| d.1).collect::<Vec<_>>().join(" | "),
                "---|".repeat(cols.len())
            );
            for (e, eps) in rates.iter().enumerate() {
                let row: Vec<String> = cols
                    .iter()
                    .map(|(k, _)| {
                        let c = &cell[*k][e];
                        format!("{:.3} ± {:.3}", num(&c["mean"]), num(&c["stderr"]))
                    })
                    .collect();
                let _ = writeln!(s, "| {eps} | {} |", row.join(" | "));
            }
        }
    }
    crate::report::solver_outcomes(&mut s, res, "every defence's grid");
    s
}

/// Per set: error against `ε` for each model, and one plot of each defence against its own
/// adaptive adversary.
pub fn plots(res: &ExperimentResult) -> Vec<(String, LinePlot)> {
    let sum = &res.summary;
    let rates: Vec<f64> = numbers(&sum["rates"]);
    let curve = |set: &str, model: &str, k: usize, title: &str| {
        let list = sum["errors"][set][model][DEFENCES[k].0]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Curve::new(
            title,
            rates.clone(),
            list.iter().map(|c| num(&c["mean"])).collect(),
        )
        .with_err(list.iter().map(|c| num(&c["stderr"])).collect())
    };
    let mut out = Vec::new();
    for set in sum["sets"].as_array().into_iter().flatten() {
        let Some(set) = set.as_str() else { continue };
        for (mkey, mtitle) in &MODELS {
            let mut p = LinePlot::new(
                format!("poisoning: {set}, {mtitle}"),
                "contamination rate eps",
                "clean test error",
            );
            for (k, (_, dtitle)) in DEFENCES.iter().enumerate() {
                p = p.curve(curve(set, mkey, k, dtitle));
            }
            out.push((format!("poisoning_{set}_{mkey}.svg"), p));
        }
        let mut p = LinePlot::new(
            format!("poisoning: {set}, each defence against its own adaptive adversary"),
            "contamination rate eps",
            "clean test error",
        );
        for (k, (_, dtitle)) in DEFENCES.iter().enumerate() {
            p = p.curve(curve(set, MODELS[own_adaptive(k)].0, k, dtitle));
        }
        out.push((format!("poisoning_{set}_adaptive.svg"), p));
    }
    out
}

/// `poisoning.json`: `SET.MODEL.DEFENCE` = one `{eps, mean, stderr, n}` per rate (`eps = 0`: the
/// shared clean cell). The summaries (best defence, breakdown rates, the adaptive check, what
/// the MAD filter removed, seconds per defence) are in `poisoning-details.json`'s `summary`.
pub fn table_json(res: &ExperimentResult) -> Value {
    res.summary["errors"].clone()
}
