//! `bulwark demo`: the main job on embedded data (no data directory needed).
//!
//! On the UCI breast-cancer data (wdbc, embedded): a stratified train/test split, min-max scaling
//! and DSX mutual-information feature values fitted on the training part; the DSX robust LP (4),
//! the cube-projected Perceptron (O2B) and the linear SVM baseline trained on it; each attacked
//! at test time by the DSX §4 greedy deletion adversary at several budgets, and the LP's
//! certified robust error (exact worst case) at the training budget.

use std::io::Write;

use bulwark_adversary::{Attack, AttackBudget, AttackKind, CertifyOptions, certify_with, evaluate};
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
    lp_certified_robust_error: f64,
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
        lp_certified_robust_error: cert.exact.unwrap_or(cert.upper),
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
    writeln!(
        out,
        "LP certified robust error at N = {n} (exact worst case over all deletions): {:.4}",
        demo.lp_certified_robust_error
    )?;
    Ok(())
}
