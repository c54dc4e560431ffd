//! `bulwark demo`: the main job on embedded data (no data directory needed).
//!
//! On the UCI breast-cancer data (wdbc, embedded): a stratified train/test split, min-max scaling
//! and DSX mutual-information feature values fitted on the training part; the DSX robust LP (4),
//! the cube-projected Perceptron (O2B) and the linear SVM baseline trained on it; each attacked
//! at test time by the DSX §4 greedy deletion adversary at several budgets, and the LP's
//! certified robust error at the training budget: the exact worst case when every test example
//! is decided, else its lower and upper bounds and the number of undecided examples.

use std::io::Write;

use bulwark_adversary::{
    Attack, AttackBudget, AttackKind, Certificate, CertifyOptions, certify_with, evaluate,
};
use bulwark_core::{FeatureValues, Fit, LinearModel};
use bulwark_data::{
    BinaryTask, Scaler, ScalingKind, binary_task, load, mutual_information_values, train_test,
};
use bulwark_deletion::DsxLpParams;
use bulwark_online::{O2bParams, SvmParams};
use serde::Serialize;

use crate::args::DemoArgs;
use crate::ui::Ui;

#[derive(Debug, Serialize)]
struct Learner {
    algorithm: &'static str,
    train_seconds: f64,
    /// Test error under greedy deletion, one entry per budget (the first budget is 0: clean).
    error: Vec<f64>,
}

#[derive(Debug, Serialize)]
struct Demo {
    data: String,
    train: usize,
    test: usize,
    budget: f64,
    attack_budgets: Vec<f64>,
    learners: Vec<Learner>,
    lp_certified_robust_error: CertifiedError,
}

/// The LP's certified robust error under worst-case deletion at the training budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct CertifiedError {
    budget: f64,
    examples: usize,
    /// The exact worst-case error; `null` when some example is undecided.
    exact: Option<f64>,
    /// Broken by the strongest attack found: a lower bound on the worst-case error.
    lower: f64,
    /// Not proven robust (broken or undecided): an upper bound on the worst-case error.
    upper: f64,
    /// Examples the exact search left undecided (its node limit was hit).
    undecided: usize,
}

impl From<&Certificate> for CertifiedError {
    fn from(c: &Certificate) -> Self {
        Self {
            budget: c.budget,
            examples: c.n_examples,
            exact: c.exact,
            lower: c.lower,
            upper: c.upper,
            undecided: c.n_undecided,
        }
    }
}

impl CertifiedError {
    /// The text line: "exact" only when every example was decided.
    fn line(&self) -> String {
        match self.exact {
            Some(e) if self.undecided == 0 => format!(
                "LP certified robust error at N = {} (exact worst case over all deletions): {e:.4}",
                self.budget
            ),
            _ => format!(
                "LP certified robust error at N = {}: not decided, between {:.4} (lower bound: \
                 broken by the strongest attack found) and {:.4} (upper bound: not proven \
                 robust); {} of {} test examples undecided (node limit hit)",
                self.budget, self.lower, self.upper, self.undecided, self.examples
            ),
        }
    }
}

pub(crate) fn run(args: &DemoArgs, ui: Ui, out: &mut dyn Write) -> anyhow::Result<()> {
    let (raw, _) = load("wdbc", None)?;
    let data = binary_task(&raw, &BinaryTask::Natural)?;
    let split = train_test(&data, 0.3, true, args.seed)?;
    let (train, test) = (data.select(&split.train), data.select(&split.test));
    let scaler = Scaler::fit(&train, ScalingKind::MinMax)?;
    let (train, test) = (scaler.transform(&train)?, scaler.transform(&test)?);
    let values = mutual_information_values(&train)?;
    let n = args.budget;
    let budgets: Vec<f64> = [0.0, 0.5 * n, n, 1.5 * n]
        .into_iter()
        .filter(|b| *b < train.n_features() as f64)
        .collect();
    let attack = Attack::new(AttackKind::GreedyDelete).with_values(values.clone())?;
    let given = FeatureValues::Given(values.clone());

    let spinner = ui.spinner(args.json, "training LP, O2B and SVM on wdbc");
    let lp = DsxLpParams::new()
        .budget(n)
        .c(args.c)
        .values(given.clone())
        .fit(&train)?;
    let o2b = O2bParams::new()
        .budget(n)
        .c(args.c)
        .values(given)
        .epochs(5)
        .shuffle_seed(Some(args.seed))
        .fit(&train)?;
    let svm = SvmParams::new().c(args.c).fit(&train)?;
    spinner.finish_and_clear();
    let mut learners = Vec::new();
    for (name, model, secs) in [
        ("lp", &lp.model, lp.report.seconds),
        ("o2b", &o2b.model, o2b.report.seconds),
        ("svm", &svm.model, svm.report.seconds),
    ] {
        let error = budgets
            .iter()
            .map(|&b| {
                evaluate(model as &LinearModel, &test, &attack, b, args.seed).map(|r| r.error)
            })
            .collect::<Result<Vec<_>, _>>()?;
        learners.push(Learner {
            algorithm: name,
            train_seconds: secs,
            error,
        });
    }
    let cert = certify_with(
        &lp.model,
        &test,
        &AttackBudget::try_new(values, n)?,
        &CertifyOptions {
            per_example: false,
            ..CertifyOptions::default()
        },
    )?;
    let demo = Demo {
        data: "wdbc (embedded), malignant = +1".into(),
        train: train.len(),
        test: test.len(),
        budget: n,
        attack_budgets: budgets,
        learners,
        lp_certified_robust_error: CertifiedError::from(&cert),
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &demo)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "Bulwark demo — {}", demo.data)?;
    writeln!(
        out,
        "{} train / {} test (stratified, seed {}); scaling and mutual-information feature values fitted on the training part",
        demo.train, demo.test, args.seed
    )?;
    writeln!(
        out,
        "LP (DSX LP (4)) and O2B trained for a deletion budget N = {n}, box C = {}; SVM with C = {}",
        args.c, args.c
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "test error under the DSX §4 greedy deletion adversary (feature values = MI):"
    )?;
    write!(out, "  {:<6} {:>8}", "", "train s")?;
    for b in &demo.attack_budgets {
        write!(out, " {:>9}", format!("N = {b}"))?;
    }
    writeln!(out)?;
    for l in &demo.learners {
        write!(out, "  {:<6} {:>8.3}", l.algorithm, l.train_seconds)?;
        for e in &l.error {
            write!(out, " {e:>9.4}")?;
        }
        writeln!(out)?;
    }
    writeln!(out)?;
    writeln!(out, "{}", demo.lp_certified_robust_error.line())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::CertifiedError;

    fn cert(lower: f64, upper: f64, undecided: usize) -> CertifiedError {
        CertifiedError {
            budget: 5.0,
            examples: 171,
            exact: (undecided == 0).then_some(lower),
            lower,
            upper,
            undecided,
        }
    }

    #[test]
    fn exact_only_when_every_example_is_decided() {
        let line = cert(0.1228, 0.1228, 0).line();
        assert!(line.contains("exact worst case"), "{line}");
        assert!(line.ends_with("0.1228"), "{line}");
    }

    #[test]
    fn undecided_examples_give_both_bounds_and_no_exact() {
        let line = cert(0.1228, 0.1404, 3).line();
        assert!(!line.contains("exact"), "{line}");
        assert!(line.contains("0.1228 (lower bound"), "{line}");
        assert!(line.contains("0.1404 (upper bound"), "{line}");
        assert!(line.contains("3 of 171 test examples undecided"), "{line}");
    }

    #[test]
    fn json_carries_null_exact_and_the_bounds_when_undecided() {
        let v = serde_json::to_value(cert(0.1, 0.2, 2)).unwrap();
        assert!(v["exact"].is_null());
        assert_eq!(
            (v["lower"].as_f64(), v["upper"].as_f64()),
            (Some(0.1), Some(0.2))
        );
        assert_eq!(v["undecided"], 2);
    }
}
