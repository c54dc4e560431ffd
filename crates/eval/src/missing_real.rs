//! `missing_real`: records that come with missing cells (R mlbench's HouseVotes84,
//! BreastCancer and PimaIndiansDiabetes2), every binary linear learner of the registry tuned by
//! `bulwark tune`'s code ([`crate::select`]), beside scikit-learn's mean imputation +
//! `LinearSVC` / `LogisticRegression` and `HistGradientBoosting` with its native missing values
//! ([`crate::sklearn`]).
//!
//! **Protocols** (a missing cell is a deleted feature: 0 after standard scaling, i.e. the
//! training mean, `bulwark_core::missing`):
//!
//! - `random`: seeded stratified 70/30 splits of all records; each learner tuned on the training
//!   part by stratified K-fold cross-validation under the threat `none` (the validation records
//!   as they are, their missing cells deleted), refitted, tested on the test part as it is;
//! - `complete`: trained on the complete records, tested on the incomplete ones; tuned under the
//!   threat `missing`, whose patterns (and the values `missingness`) come from the incomplete
//!   records — which cells they miss, not their values or labels (`tune --missing-from`);
//! - `complete_gdK`: the same split, the test records attacked by a greedy deletion of `K` more
//!   features (uniform values, the DSX §4 adversary, on top of the cells missing); tuned under
//!   `greedy-delete:K`.
//!
//! The grids are the learners' defaults (`Learner::tunable`), the budget `N` searched over
//! `0, 1, 2, 3` and the feature values over `uniform, missingness` where the learner takes them.
//! The `complete` split does not depend on the seed: its repetitions differ in the folds of the
//! cross-validation (and the draws of the `missing` patterns) only.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::Instant;

use bulwark_adversary::CorruptionStats;
use bulwark_core::{AnyModel, Classifier, Dataset, Error, HyperParams, ParamValue};
use bulwark_data::{BinaryTask, MissingPolicy, ReadOptions, ScalingKind, binary_task, train_test};
use bulwark_models::registry;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::experiment::{ExperimentResult, Mode, Observer, Row, RunConfig};
use crate::learner::SolverTally;
use crate::plot::{Curve, LinePlot};
use crate::select::{Grid, Patterns, Threat, TuneSpec, fit_chosen, tune};
use crate::stats::MeanSe;

/// The experiment's name.
pub const NAME: &str = "missing_real";

/// The data sets: built-in name and title.
pub const SETS: [(&str, &str); 3] = [
    ("housevotes84", "HouseVotes84"),
    ("breastcancer", "BreastCancer"),
    ("pima2", "PimaIndiansDiabetes2"),
];

/// The registry's binary linear learners, in table order. Left out: `ken-guru` (a kernel model:
/// the greedy deletion reads weights), `m-guru` (multiclass), `kls-amu` and `kls-boost` (they
/// assume records in the unit ball and refuse or collapse on standardised ones).
pub const LINEUP: [&str; 9] = [
    "lp", "o2b", "svm", "fdrop", "logreg", "guru", "asvc", "rolr", "average",
];

/// scikit-learn's references: key and title.
pub const REFERENCES: [(&str, &str); 3] = [
    ("sk_svc", "imputation + LinearSVC (sklearn)"),
    ("sk_lr", "imputation + LogisticRegression (sklearn)"),
    ("sk_hgb", "HistGradientBoosting, native missing (sklearn)"),
];

/// The protocols' keys and titles (the greedy deletions are added per `K`).
fn protocols(deletions: &[usize]) -> Vec<(String, String)> {
    let mut p = vec![
        ("random".to_string(), "random 70/30 splits".to_string()),
        (
            "complete".to_string(),
            "train complete, test incomplete".to_string(),
        ),
    ];
    for k in deletions {
        p.push((
            format!("complete_gd{k}"),
            format!("... + greedy deletion of {k}"),
        ));
    }
    p
}

#[derive(Debug, Clone, Serialize)]
struct Protocol {
    sets: Vec<String>,
    lineup: Vec<String>,
    seeds: usize,
    folds: usize,
    test: f64,
    deletions: Vec<usize>,
    budgets: Vec<String>,
    values: Vec<String>,
    sklearn: bool,
}

impl Protocol {
    fn for_mode(mode: Mode) -> Self {
        Self {
            sets: SETS.iter().map(|s| s.0.to_string()).collect(),
            lineup: LINEUP.iter().map(|s| s.to_string()).collect(),
            seeds: match mode {
                Mode::Quick => 2,
                Mode::Full => 10,
            },
            folds: 5,
            test: 0.3,
            deletions: vec![1, 2, 3],
            budgets: ["0", "1", "2", "3"].map(String::from).to_vec(),
            values: ["uniform", "missingness"].map(String::from).to_vec(),
            sklearn: true,
        }
    }

    fn notes(&self) -> Vec<String> {
        vec![
            format!(
                "data: {} (R mlbench 2.1-3, missing cells as shipped), read with --missing delete, standard scaling fitted on each training part (a missing cell is 0 after it: the training mean)",
                self.sets.join(", ")
            ),
            format!(
                "learners: {} (the registry's binary linear learners; ken-guru, m-guru, kls-amu and kls-boost left out: kernel, multiclass, and unit-ball models; RoLR with the median + 3 MAD norm threshold, the paper's being 0 on these discrete features), each tuned by bulwark tune's code: stratified {}-fold cross-validation, the learner's default grid with the budget N in {{{}}} and the values in {{{}}} where it takes them, ties to the more regular model; refitted on the whole training part",
                self.lineup.join(", "),
                self.folds,
                self.budgets.join(", "),
                self.values.join(", ")
            ),
            format!(
                "random: {} seeded stratified {:.0}/{:.0} splits of all records, tuned under the threat none; complete: trained on every complete record, tested on every incomplete one, tuned under the threat missing with the patterns (and missingness values) of the incomplete records (which cells they miss, not their values or labels); the split is fixed, its {} repetitions differ in the folds only",
                self.seeds,
                100.0 * (1.0 - self.test),
                100.0 * self.test,
                self.seeds
            ),
            format!(
                "complete_gdK, K in {:?}: the complete split, every test record also loses K features to the DSX greedy deletion (uniform values, on top of its missing cells); tuned under greedy-delete:K",
                self.deletions
            ),
            if self.sklearn {
                format!(
                    "scikit-learn references (the installed version; python/requirements-ci.txt pins the one CI uses): SimpleImputer(mean) + StandardScaler + LinearSVC / LogisticRegression, C in {:?} chosen by GridSearchCV (the same fold count, shuffled with the repetition's seed; clean folds), and HistGradientBoostingClassifier with its defaults (native missing values); the linear ones are attacked in the imputed, scaled space by the same greedy deletion, the boosted trees are not (no weights)",
                    crate::sklearn::MISSING_C
                )
            } else {
                "scikit-learn references not run".into()
            },
        ]
    }
}

/// One test error of one learner (or reference) under one protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Cell {
    learner: String,
    protocol: String,
    error: f64,
    /// The chosen point's mean validation error.
    cv_error: Option<f64>,
    /// The chosen point (`C=1 budget=2 values=uniform`).
    chosen: Option<String>,
    not_converged: usize,
    failed: usize,
}

/// What one repetition of one data set under one split produced.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct UnitOut {
    cells: Vec<Cell>,
    notes: Vec<String>,
}

fn load_set(name: &str, cfg: &RunConfig) -> Result<Dataset, crate::Outcome> {
    let options = ReadOptions {
        missing: MissingPolicy::Delete,
        ..ReadOptions::default()
    };
    match bulwark_data::load_with(name, cfg.data_dir.as_deref(), &options) {
        Ok(l) => binary_task(&l.data, &BinaryTask::Natural).map_err(crate::Outcome::Failed),
        Err(e @ Error::NotFound { .. }) => Err(crate::Outcome::MissingData {
            dataset: name.into(),
            message: e.to_string(),
        }),
        Err(e) => Err(crate::Outcome::Failed(e)),
    }
}

fn point_text(p: &HyperParams) -> String {
    if p.iter().next().is_none() {
        return "defaults (nothing tunable)".into();
    }
    p.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tunes `learner` on `train` under `threat` and tests the refit on `test` (raw), attacked by
/// `attack` when given; the cell, or a note when the learner cannot be tuned on these data.
fn tuned_cell(
    proto: &Protocol,
    learner: &str,
    (train, test): (&Dataset, &Dataset),
    (threat, attack): (Threat, Option<Threat>),
    patterns: Option<&Patterns>,
    protocol: &str,
    seed: u64,
) -> Result<Cell, Error> {
    let l = registry::find(learner)?;
    let mut given: Vec<(String, Vec<String>)> = Vec::new();
    for t in l.tunable() {
        if t.name == "budget" {
            given.push(("budget".into(), proto.budgets.clone()));
        }
        if t.name == "values" {
            given.push(("values".into(), proto.values.clone()));
        }
    }
    let mut fixed = HyperParams::new();
    if l.params().iter().any(|p| p.name == "seed") {
        fixed.set("seed", ParamValue::Count(seed));
    }
    if learner == "rolr" {
        // the paper's threshold scales with the covariates' MAD, 0 for votes and 1-10 scores
        // (it would remove every sample): the median + 3 MAD norm threshold instead
        fixed.set("threshold", ParamValue::Text("mad".into()));
    }
    let spec = TuneSpec {
        learner: l,
        grid: Grid::for_learner(l, &given, &fixed)?,
        fixed,
        threat,
        folds: proto.folds,
        seed,
        scaling: Some(ScalingKind::Standard),
        patterns: patterns.cloned(),
    };
    let sel = tune(train, &spec, &mut |_| ControlFlow::Continue(()))?;
    let chosen = fit_chosen(train, &spec, &sel)?;
    let test_in = match &chosen.scaler {
        Some(s) => s.transform(test)?,
        None => test.clone(),
    };
    let error = match attack {
        None => chosen.model.error_rate(&test_in)?,
        Some(a) => {
            let stats = CorruptionStats::fit(&chosen.data)?;
            a.score(&chosen.model, &test_in, &stats, seed)?
        }
    };
    let row = sel.chosen();
    Ok(Cell {
        learner: learner.into(),
        protocol: protocol.into(),
        error,
        cv_error: row.mean_error,
        chosen: Some(point_text(&row.params)),
        not_converged: sel.cv.iter().map(|r| r.not_converged).sum::<usize>()
            + usize::from(!chosen.report.converged),
        failed: sel.cv.iter().map(|r| r.failures.len()).sum(),
    })
}

/// One repetition: `group` 0 is the random split, 1 the complete/incomplete split with its
/// greedy deletions.
fn unit(
    proto: &Protocol,
    data: &Dataset,
    group: usize,
    seed: u64,
    sklearn: Option<&crate::sklearn::Sklearn>,
) -> Result<UnitOut, Error> {
    let mut out = UnitOut::default();
    let push = |out: &mut UnitOut, r: Result<Cell, Error>, what: &str| match r {
        Ok(c) => out.cells.push(c),
        Err(e) => out.notes.push(format!("{what}: {e}")),
    };
    if group == 0 {
        let split = train_test(data, proto.test, true, seed)?;
        let (train, test) = (data.select(&split.train), data.select(&split.test));
        for l in &proto.lineup {
            let r = tuned_cell(
                proto,
                l,
                (&train, &test),
                (Threat::default(), None),
                None,
                "random",
                seed,
            );
            push(&mut out, r, &format!("{l} random"));
        }
        if let Some(sk) = sklearn {
            match sk.missing_references(&train, &test, proto.folds, seed) {
                Ok(r) => {
                    for (key, e, c) in [
                        ("sk_svc", r.svc.error, Some(&r.svc)),
                        ("sk_lr", r.lr.error, Some(&r.lr)),
                        ("sk_hgb", r.hgb_error, None),
                    ] {
                        out.cells.push(reference_cell(key, "random", e, c));
                    }
                }
                Err(e) => out.notes.push(format!("scikit-learn random: {e}")),
            }
        }
        return Ok(out);
    }
    let mask = data.missing();
    let incomplete: Vec<usize> = (0..data.len())
        .filter(|&i| mask.is_some_and(|m| !m.row(i).is_empty()))
        .collect();
    let complete: Vec<usize> = (0..data.len())
        .filter(|&i| mask.is_none_or(|m| m.row(i).is_empty()))
        .collect();
    let (train, test) = (data.select(&complete), data.select(&incomplete));
    let pool = Patterns::of(&test);
    let missing: Threat = "missing".parse()?;
    for l in &proto.lineup {
        let r = tuned_cell(
            proto,
            l,
            (&train, &test),
            (missing, None),
            Some(&pool),
            "complete",
            seed,
        );
        push(&mut out, r, &format!("{l} complete"));
        for &k in &proto.deletions {
            let t: Threat = format!("greedy-delete:{k}").parse()?;
            let key = format!("complete_gd{k}");
            let r = tuned_cell(
                proto,
                l,
                (&train, &test),
                (t, Some(t)),
                Some(&pool),
                &key,
                seed,
            );
            push(&mut out, r, &format!("{l} {key}"));
        }
    }
    if let Some(sk) = sklearn {
        match sk.missing_references(&train, &test, proto.folds, seed) {
            Ok(r) => {
                out.cells.push(reference_cell(
                    "sk_svc",
                    "complete",
                    r.svc.error,
                    Some(&r.svc),
                ));
                out.cells
                    .push(reference_cell("sk_lr", "complete", r.lr.error, Some(&r.lr)));
                out.cells
                    .push(reference_cell("sk_hgb", "complete", r.hgb_error, None));
                for &k in &proto.deletions {
                    let t: Threat = format!("greedy-delete:{k}").parse()?;
                    for (key, lin) in [("sk_svc", &r.svc), ("sk_lr", &r.lr)] {
                        let z = lin.input(&test)?;
                        let stats = CorruptionStats::fit(&z)?;
                        let model = AnyModel::Linear(lin.model()?);
                        let e = t.score(&model, &z, &stats, seed)?;
                        out.cells.push(reference_cell(
                            key,
                            &format!("complete_gd{k}"),
                            e,
                            Some(lin),
                        ));
                    }
                }
            }
            Err(e) => out.notes.push(format!("scikit-learn complete: {e}")),
        }
    }
    Ok(out)
}

fn reference_cell(
    key: &str,
    protocol: &str,
    error: f64,
    lin: Option<&crate::sklearn::LinearReference>,
) -> Cell {
    Cell {
        learner: key.into(),
        protocol: protocol.into(),
        error,
        cv_error: lin.map(|l| l.cv_error),
        chosen: lin.map(|l| format!("C={}", l.chosen)),
        not_converged: 0,
        failed: 0,
    }
}

/// Runs the experiment.
pub fn run(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, crate::Outcome> {
    run_with(cfg, obs, &Protocol::for_mode(cfg.mode))
}

fn title_of(key: &str) -> String {
    if let Some((_, t)) = REFERENCES.iter().find(|r| r.0 == key) {
        return (*t).to_string();
    }
    registry::find(key).map_or_else(|_| key.to_string(), |l| l.title().to_string())
}

fn run_with(
    cfg: &RunConfig,
    obs: &dyn Observer,
    proto: &Protocol,
) -> Result<ExperimentResult, crate::Outcome> {
    let start = Instant::now();
    let mut data = Vec::new();
    for s in &proto.sets {
        data.push(load_set(s, cfg)?);
    }
    let mut skipped = None;
    let sklearn = if proto.sklearn {
        match crate::sklearn::find_python() {
            Ok(p) => Some(crate::sklearn::Sklearn::new(p)),
            Err(why) => {
                let note = format!("scikit-learn references skipped: {why}");
                obs.on_note(NAME, &note);
                skipped = Some(note);
                None
            }
        }
    } else {
        None
    };
    let base = crate::experiments::experiment_seed(cfg.seed, NAME);
    let jobs: Vec<(usize, usize, usize)> = (0..proto.sets.len())
        .flat_map(|s| (0..2).flat_map(move |g| (0..proto.seeds).map(move |r| (s, g, r))))
        .collect();
    let group = ["random", "complete"];
    let outs = crate::cache::run_units(
        NAME,
        cfg,
        obs,
        &jobs,
        |&(s, g, r)| {
            let task = format!("{}/{}", proto.sets[s], group[g]);
            let key = crate::cache::UnitKey::of(
                (NAME, &task, r),
                (cfg.mode, cfg.seed),
                &(proto, sklearn.is_some()),
            );
            (key, task, r)
        },
        |&(s, g, r)| {
            let seed = base ^ ((s as u64) << 40) ^ r as u64;
            let out = unit(proto, &data[s], g, seed, sklearn.as_ref());
            obs.on_unit(NAME, &format!("{} {} #{r}", proto.sets[s], group[g]));
            out
        },
    )?;
    // (set, protocol, learner) → cells over the repetitions
    let mut cells: BTreeMap<(usize, String, String), Vec<Cell>> = BTreeMap::new();
    let mut res = crate::experiments::base(
        NAME,
        "none of the papers: robust training on records that come with missing cells (R mlbench HouseVotes84, BreastCancer, PimaIndiansDiabetes2), every learner tuned by bulwark tune, beside scikit-learn's imputation and native-missing references",
        cfg,
    );
    for ((s, _, _), o) in jobs.iter().zip(outs) {
        for c in o.cells {
            cells
                .entry((*s, c.protocol.clone(), c.learner.clone()))
                .or_default()
                .push(c);
        }
        res.failures.extend(o.notes);
    }
    res.repetitions = proto.seeds;
    res.budgets = proto.deletions.iter().map(|&k| k as f64).collect();
    res.protocol = proto.notes();
    // a run without scikit-learn says so where its tables would show the references
    if let Some(note) = skipped {
        res.protocol.pop();
        res.protocol.push(note);
    }
    let keys: Vec<String> = proto
        .lineup
        .iter()
        .cloned()
        .chain(REFERENCES.iter().map(|r| r.0.to_string()))
        .collect();
    let protos = protocols(&proto.deletions);
    let mut sets = serde_json::Map::new();
    for (s, set) in proto.sets.iter().enumerate() {
        let d = &data[s];
        let mut by_protocol = serde_json::Map::new();
        for (p, _) in &protos {
            let mut by_learner = serde_json::Map::new();
            for key in &keys {
                let Some(cs) = cells.get(&(s, p.clone(), key.clone())) else {
                    continue;
                };
                let errs: Vec<f64> = cs.iter().map(|c| c.error).collect();
                let m = MeanSe::of(&errs);
                let cv: Vec<f64> = cs.iter().filter_map(|c| c.cv_error).collect();
                // the point chosen most often (ties: the first seen)
                let mut counts: Vec<(String, usize)> = Vec::new();
                for c in cs.iter().filter_map(|c| c.chosen.clone()) {
                    match counts.iter_mut().find(|(k, _)| *k == c) {
                        Some((_, n)) => *n += 1,
                        None => counts.push((c, 1)),
                    }
                }
                let top = counts
                    .iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
                by_learner.insert(
                    key.clone(),
                    json!({
                        "mean": m.mean, "stderr": m.stderr, "n": m.n,
                        "cv_error": (!cv.is_empty()).then(|| MeanSe::of(&cv).mean),
                        "chosen": top.map(|t| t.0.clone()),
                        "chosen_times": top.map(|t| t.1),
                        "not_converged": cs.iter().map(|c| c.not_converged).sum::<usize>(),
                        "failed": cs.iter().map(|c| c.failed).sum::<usize>(),
                    }),
                );
                let tally = SolverTally {
                    not_converged: cs.iter().map(|c| c.not_converged).sum(),
                    ..SolverTally::default()
                };
                res.per_task.push(Row {
                    task: Some(set.clone()),
                    learner: title_of(key),
                    attack: p.clone(),
                    budget: p
                        .strip_prefix("complete_gd")
                        .and_then(|k| k.parse().ok())
                        .unwrap_or(0.0),
                    error: m,
                    chosen_c: None,
                    paper: None,
                    paper_pm: None,
                    solver: tally,
                });
            }
            by_protocol.insert(p.clone(), Value::Object(by_learner));
        }
        let mask = d.missing();
        let incomplete = d.incomplete_records();
        let mut rates = serde_json::Map::new();
        for j in 0..d.n_features() {
            let k = (0..d.len())
                .filter(|&i| mask.is_some_and(|m| m.is_missing(i, j)))
                .count();
            if k > 0 {
                rates.insert(
                    d.feature_names().get(j).into_owned(),
                    json!(k as f64 / d.len() as f64),
                );
            }
        }
        by_protocol.insert(
            "data".into(),
            json!({
                "records": d.len(), "features": d.n_features(),
                "missing_cells": d.n_missing(), "incomplete_records": incomplete,
                "complete_records": d.len() - incomplete,
                "positive_rate_incomplete": positive_rate(d, true),
                "positive_rate_complete": positive_rate(d, false),
                "missing_rate": rates,
            }),
        );
        sets.insert(set.clone(), Value::Object(by_protocol));
    }
    res.summary = json!({
        "sets": sets,
        "acceptance": acceptance(&sets, &proto.sets),
        "lineup": proto.lineup,
        "references": REFERENCES.iter().map(|r| json!({"key": r.0, "title": r.1})).collect::<Vec<_>>(),
        "protocols": protos.iter().map(|(k, t)| json!({"key": k, "title": t})).collect::<Vec<_>>(),
    });
    res.runtime_seconds = start.elapsed().as_secs_f64();
    Ok(res)
}

/// The share of `+1` among the incomplete (or complete) records of `d`.
fn positive_rate(d: &Dataset, incomplete: bool) -> Option<f64> {
    let y = d.binary_labels().ok()?;
    let mask = d.missing();
    let sel: Vec<usize> = (0..d.len())
        .filter(|&i| mask.is_some_and(|m| !m.row(i).is_empty()) == incomplete)
        .collect();
    (!sel.is_empty())
        .then(|| sel.iter().filter(|&&i| y[i].as_f64() > 0.0).count() as f64 / sel.len() as f64)
}

/// The acceptance points, per data set: the tuned LP against imputation + LinearSVC on
/// `complete` (within a point), and against the tuned SVM on `complete_gd2` (no worse).
fn acceptance(sets: &serde_json::Map<String, Value>, names: &[String]) -> Value {
    let mut out = serde_json::Map::new();
    for set in names {
        let v = &sets[set];
        let get = |p: &str, l: &str| v[p][l]["mean"].as_f64();
        let mut a = serde_json::Map::new();
        if let (Some(lp), Some(sk)) = (get("complete", "lp"), get("complete", "sk_svc")) {
            a.insert("complete_lp_minus_sk_svc".into(), json!(lp - sk));
            a.insert(
                "complete_lp_within_one_point".into(),
                json!(lp - sk <= 0.01),
            );
        }
        if let (Some(lp), Some(svm)) = (get("complete_gd2", "lp"), get("complete_gd2", "svm")) {
            a.insert("gd2_lp_minus_svm".into(), json!(lp - svm));
            a.insert("gd2_lp_no_worse".into(), json!(lp <= svm));
        }
        out.insert(set.clone(), Value::Object(a));
    }
    Value::Object(out)
}

fn cell(v: &Value) -> String {
    match (v["mean"].as_f64(), v["stderr"].as_f64()) {
        (Some(m), Some(s)) => format!("{m:.3} ± {s:.3}"),
        _ => "–".into(),
    }
}

/// The Markdown report.
pub fn to_markdown(res: &ExperimentResult) -> String {
    let sum = &res.summary;
    let protos: Vec<(String, String)> = sum["protocols"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        p["key"].as_str().unwrap_or_default().to_string(),
                        p["title"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let keys: Vec<String> = sum["lineup"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str().map(String::from))
        .chain(REFERENCES.iter().map(|r| r.0.to_string()))
        .collect();
    let mut md = format!(
        "# {NAME}\n\n{}\n\nMode {}, seed {}, {} repetitions, {:.0} s.\n\n## Protocol\n\n",
        res.reproduces,
        res.mode.as_str(),
        res.seed,
        res.repetitions,
        res.runtime_seconds
    );
    for n in &res.protocol {
        md.push_str(&format!("- {n}\n"));
    }
    let sets = sum["sets"].as_object().cloned().unwrap_or_default();
    for (set, v) in &sets {
        let d = &v["data"];
        let title = SETS
            .iter()
            .find(|s| s.0 == set)
            .map_or(set.as_str(), |s| s.1);
        md.push_str(&format!(
            "\n## {title} ({} records, {} features; {} cells missing in {} records)\n\nTest error, mean ± standard error over the repetitions.\n\n| learner | {} |\n|---|{}\n",
            d["records"], d["features"], d["missing_cells"], d["incomplete_records"],
            protos.iter().map(|p| p.1.as_str()).collect::<Vec<_>>().join(" | "),
            "---|".repeat(protos.len())
        ));
        for k in &keys {
            let row: Vec<String> = protos.iter().map(|(p, _)| cell(&v[p][k])).collect();
            if row.iter().all(|c| c == "–") {
                continue;
            }
            md.push_str(&format!("| {} | {} |\n", title_of(k), row.join(" | ")));
        }
        md.push_str("\nThe point each tuned learner chose most often:\n\n| learner | ");
        md.push_str(
            &protos
                .iter()
                .map(|p| p.0.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
        );
        md.push_str(&format!(" |\n|---|{}\n", "---|".repeat(protos.len())));
        for k in &keys {
            let row: Vec<String> = protos
                .iter()
                .map(|(p, _)| v[p][k]["chosen"].as_str().unwrap_or("–").to_string())
                .collect();
            if row.iter().all(|c| c == "–") {
                continue;
            }
            md.push_str(&format!("| {} | {} |\n", title_of(k), row.join(" | ")));
        }
    }
    md.push_str("\n## Acceptance (issue 63)\n\n| data set | LP − imputation+LinearSVC, complete | within a point | LP − SVM, greedy deletion of 2 | LP no worse |\n|---|---|---|---|---|\n");
    for (set, a) in sum["acceptance"].as_object().into_iter().flatten() {
        let f = |k: &str| a[k].as_f64().map_or("–".into(), |x| format!("{x:+.3}"));
        let b = |k: &str| a[k].as_bool().map_or("–", |x| if x { "yes" } else { "no" });
        md.push_str(&format!(
            "| {set} | {} | {} | {} | {} |\n",
            f("complete_lp_minus_sk_svc"),
            b("complete_lp_within_one_point"),
            f("gd2_lp_minus_svm"),
            b("gd2_lp_no_worse")
        ));
    }
    if !res.failures.is_empty() {
        md.push_str("\n## Fits that could not be tuned\n\n");
        for f in &res.failures {
            md.push_str(&format!("- {f}\n"));
        }
    }
    md
}

/// Per data set: the test error against the deletions added to the missing cells (0: the
/// complete/incomplete split as it is), one curve per learner and linear reference.
pub fn plots(res: &ExperimentResult) -> Vec<(String, LinePlot)> {
    let sum = &res.summary;
    let mut out = Vec::new();
    let ks: Vec<f64> = res.budgets.clone();
    for (set, v) in sum["sets"].as_object().into_iter().flatten() {
        let title = SETS
            .iter()
            .find(|s| s.0 == set)
            .map_or(set.as_str(), |s| s.1);
        let mut plot = LinePlot::new(
            format!("{title}: trained complete, tested incomplete"),
            "features deleted on top of the missing cells",
            "test error",
        );
        let keys = sum["lineup"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(String::from))
            .chain(["sk_svc".to_string(), "sk_lr".to_string()]);
        for k in keys {
            let mut x = Vec::new();
            let mut y = Vec::new();
            let mut e = Vec::new();
            for (i, p) in std::iter::once("complete".to_string())
                .chain(ks.iter().map(|k| format!("complete_gd{k}")))
                .enumerate()
            {
                if let (Some(m), Some(s)) =
                    (v[&p][&k]["mean"].as_f64(), v[&p][&k]["stderr"].as_f64())
                {
                    x.push(if i == 0 { 0.0 } else { ks[i - 1] });
                    y.push(m);
                    e.push(s);
                }
            }
            if !x.is_empty() {
                plot = plot.curve(Curve {
                    label: title_of(&k),
                    x,
                    y,
                    err: Some(e),
                });
            }
        }
        out.push((format!("{NAME}_{set}.svg"), plot));
    }
    out
}

/// The table JSON (`missing_real.json`): per data set, per protocol, per learner the test error
/// (`mean`, `stderr`, `n`), the chosen point and its CV error; the data's missing rates; the
/// acceptance points.
pub fn table_json(res: &ExperimentResult) -> Value {
    json!({
        "name": res.name, "mode": res.mode, "seed": res.seed, "repetitions": res.repetitions,
        "runtime_seconds": res.runtime_seconds, "protocol": res.protocol,
        "sets": res.summary["sets"], "acceptance": res.summary["acceptance"],
        "failures": res.failures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Silent;

    fn tiny() -> Protocol {
        Protocol {
            sets: vec!["breastcancer".into()],
            lineup: vec!["lp".into(), "svm".into()],
            seeds: 1,
            folds: 2,
            test: 0.3,
            deletions: vec![1],
            budgets: vec!["0".into(), "1".into()],
            values: vec!["uniform".into(), "missingness".into()],
            sklearn: false,
        }
    }

    #[test]
    fn tiny_run_layout_and_reproducibility() {
        let cfg = RunConfig::quick(3);
        let a = run_with(&cfg, &Silent, &tiny()).unwrap();
        let b = run_with(&cfg, &Silent, &tiny()).unwrap();
        let t = table_json(&a);
        assert_eq!(t["sets"], table_json(&b)["sets"]);
        let bc = &t["sets"]["breastcancer"];
        assert_eq!(bc["data"]["incomplete_records"], 16);
        assert_eq!(bc["data"]["missing_rate"].as_object().unwrap().len(), 1);
        for p in ["random", "complete", "complete_gd1"] {
            for l in ["lp", "svm"] {
                let e = bc[p][l]["mean"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&e), "{p} {l}: {e}");
                assert!(bc[p][l]["chosen"].is_string());
            }
        }
        // the LP's point carries its values; the deletion never helps on the same split
        assert!(
            bc["complete"]["lp"]["chosen"]
                .as_str()
                .unwrap()
                .contains("values=")
        );
        assert!(
            bc["complete_gd1"]["svm"]["mean"].as_f64().unwrap() + 1e-12
                >= bc["complete"]["svm"]["mean"].as_f64().unwrap()
                || bc["complete_gd1"]["svm"]["chosen"] != bc["complete"]["svm"]["chosen"]
        );
        let md = to_markdown(&a);
        assert!(
            md.contains(
                "## BreastCancer (699 records, 9 features; 16 cells missing in 16 records)"
            )
        );
        assert!(md.contains("| LP |") && md.contains("## Acceptance"));
        assert_eq!(plots(&a).len(), 1);
        assert!(t["acceptance"]["breastcancer"]["gd2_lp_no_worse"].is_null());
    }
}
