//! The Markdown report (Table 2.2, the SGD check, the noise curves, Fig. 3.1), the plots and
//! `guru_binary.json`.

use serde_json::Value;

use super::{SETS, pct};
use crate::experiment::ExperimentResult;
use crate::plot::{Curve, LinePlot};

/// The Markdown report.
pub fn to_markdown(res: &ExperimentResult) -> String {
    use std::fmt::Write as _;
    let mut s = crate::report::header(res);
    let table = &res.summary["table"];
    let sets = &res.summary["sets"];
    let _ = writeln!(
        s,
        "\n## Table 2.2: test accuracy (%), mean ± s.e. over the repetitions\n"
    );
    let _ = writeln!(
        s,
        "| data set | train/val/test | GURU | SVM | GURU − SVM (paired) | thesis GURU | thesis SVM | median σ | median C | GURU SGD |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for spec in &SETS {
        let t = &table[spec.name];
        let d = &sets[spec.name];
        let _ = writeln!(
            s,
            "| {} | {}/{}/{} | {} | {} | {} | {} | {} | {} | {} | {} |",
            spec.title,
            spec.sizes[0],
            spec.sizes[1],
            spec.sizes[2],
            pct(&t["guru"]),
            pct(&t["svm"]),
            pct(&t["guru_minus_svm"]),
            spec.paper[0],
            spec.paper[1],
            d["chosen_sigma_median"],
            d["chosen_c_median"],
            pct(&t["guru_sgd"]),
        );
    }
    let _ = writeln!(
        s,
        "\n## GURU's SGD against the batch optimum at the chosen σ\n\nPer repetition, at the σ chosen on the clean validation part: the objective of the SGD's output against the batch optimum, (G_sgd − G*)/G*, and the SGD's own certified gap (an upper bound on it).\n\n| data set | (G_sgd − G*)/G* ≤ 1e-3 | certified gap ≤ 1e-3 | median (G_sgd − G*)/G* | max (G_sgd − G*)/G* | max certified gap | median η₀ | median epochs |\n|---|---|---|---|---|---|---|---|"
    );
    for spec in &SETS {
        let g = &sets[spec.name]["sgd"];
        let _ = writeln!(
            s,
            "| {} | {} of {} | {} | {:.1e} | {:.1e} | {:.1e} | {} | {} |",
            spec.title,
            g["within_1e-3"],
            table[spec.name]["splits"],
            g["certified"],
            g["excess_median"].as_f64().unwrap_or(f64::NAN),
            g["excess_max"].as_f64().unwrap_or(f64::NAN),
            g["gap_max"].as_f64().unwrap_or(f64::NAN),
            g["eta0_median"],
            g["epochs_median"],
        );
    }
    let _ = writeln!(
        s,
        "\n## Figs. 2.5 and 2.7: test accuracy (%) under U(−x, x) noise on validation and test\n"
    );
    let noise = &res.budgets;
    let _ = writeln!(
        s,
        "| data set | learner | {} |",
        noise
            .iter()
            .map(|x| format!("x = {x}"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|---|---|{}", "---|".repeat(noise.len()));
    for spec in &SETS {
        for (key, l) in [("noise_guru", "GURU"), ("noise_svm", "SVM")] {
            let cells: Vec<String> = sets[spec.name][key]
                .as_array()
                .map(|a| a.iter().map(pct).collect())
                .unwrap_or_default();
            let _ = writeln!(s, "| {} | {l} | {} |", spec.title, cells.join(" | "));
        }
    }
    let _ = writeln!(
        s,
        "\n## Fig. 3.1: ‖w*‖ against σ\n\nMean over the repetitions whose batch fit at that σ is certified (their number in brackets; on separable data a small σ makes (2.22) underflow, and those fits certify nothing).\n\n| σ | {} |\n|---|{}",
        SETS.iter().map(|p| p.title).collect::<Vec<_>>().join(" | "),
        "---|".repeat(SETS.len())
    );
    for (k, sigma) in res.grid.iter().enumerate() {
        let cells: Vec<String> = SETS
            .iter()
            .map(|p| {
                let v = &sets[p.name]["norm_w_mean"][k];
                let n = &sets[p.name]["norm_w_certified"][k];
                match v.as_f64() {
                    Some(x) => format!("{x:.4} ({n})"),
                    None => "— (0)".into(),
                }
            })
            .collect();
        let _ = writeln!(s, "| 2^{} | {} |", sigma.log2().round(), cells.join(" | "));
    }
    crate::report::solver_outcomes(&mut s, res, "GURU batch and SVM over the grids");
    s
}

/// The noise curves (one plot per data set) and Fig. 3.1.
pub fn plots(res: &ExperimentResult) -> Vec<(String, LinePlot)> {
    let sets = &res.summary["sets"];
    let mut out = Vec::new();
    let arr = |v: &Value, f: &str| -> Vec<f64> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|m| m[f].as_f64().unwrap_or(f64::NAN))
                    .collect()
            })
            .unwrap_or_default()
    };
    for spec in &SETS {
        let d = &sets[spec.name];
        let mut p = LinePlot::new(
            format!("{}: {}", res.name, spec.title),
            "noise half-width x (U(-x, x) per feature)",
            "test accuracy (%)",
        );
        for (key, l) in [("noise_guru", "GURU"), ("noise_svm", "SVM")] {
            p = p.curve(
                Curve::new(l, res.budgets.clone(), arr(&d[key], "mean"))
                    .with_err(arr(&d[key], "stderr")),
            );
        }
        out.push((format!("{}_noise_{}.svg", res.name, spec.name), p));
    }
    let mut p = LinePlot::new(
        format!("{}: Fig. 3.1, ||w*|| against sigma", res.name),
        "sigma",
        "||w*|| (mean over repetitions)",
    )
    .log_x(true);
    for spec in SETS.iter().filter(|s| s.toy) {
        let (x, y): (Vec<f64>, Vec<f64>) = res
            .grid
            .iter()
            .zip(
                sets[spec.name]["norm_w_mean"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
            .filter_map(|(s, v)| v.as_f64().map(|v| (*s, v)))
            .unzip();
        p = p.curve(Curve::new(spec.title, x, y));
    }
    out.push((format!("{}_norm_vs_sigma.svg", res.name), p));
    out
}

/// `guru_binary.json`: per data set `{"guru": {mean, stderr}, "svm": {…}, "paper": {guru, svm},
/// …}` (accuracies in %), the layout issue 21 fixes; everything else is in
/// `guru_binary-details.json`.
pub fn table_json(res: &ExperimentResult) -> Value {
    res.summary["table"].clone()
}
