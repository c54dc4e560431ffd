//! `icml_adversarial`: Dekel & Shamir (ICML 2008) §5, Fig. 2 — the LP trained by chunked
//! "bagging", online-to-batch and the SVM under the greedy deletion adversary, on spambase with
//! feature values `v = 1` and with mutual-information values, and on MNIST 4 vs 7 with MI values.
//!
//! **Protocol** (the paper states the folds, the 1/9 held out for tuning, the attack, the data
//! and the learners; not the chunk count, `C`, the grids or `N`):
//!
//! - stratified 10-fold cross-validation, seeded per data set (the two spam panels share their
//!   folds, validation parts and chunks); of each fold's training part a seeded stratified 1/9
//!   is held out for tuning, the models are fitted on the other 8/9 (no refit);
//! - the scaling, dropped features and feature values of the curve studies ([`crate::curve`]):
//!   `x / max|x|` fitted on the training part, features zero on it dropped, `v_j = 1` or the
//!   DSX §4.2 MI values computed on the training part;
//! - the LP (4) solved on 10 seeded, class-stratified chunks of the training part and the
//!   weights and biases averaged (`bulwark-deletion`'s `chunks`), O2B and the SVM on the whole
//!   training part; LP and O2B are trained with the budget `N` they are attacked with;
//! - `C` from a logarithmic grid by the validation error, under the same greedy attack at the
//!   same `N` for LP and O2B, on the clean validation part for the SVM (ties: the smaller `C`),
//!   as in the curve studies;
//! - the test fold attacked by the DSX greedy deletion (the journal's rule: features sorted by
//!   `y w_j x_j / v_j`, deleted while useful and within the budget).

use bulwark_core::{Dataset, Error, HyperParams, LinearModel, ParamValue};
use bulwark_data::{BinaryTask, Split, binary_task, k_fold, train_val_test};
use bulwark_models::registry;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Outcome;
use crate::curve::{self, AttackMode, CurveSpec, Scaling, SplitOutcome, Values};
use crate::experiment::{ExperimentResult, Mode, Observer, RunConfig};
use crate::experiments::{base, experiment_seed, log_grid};
use crate::learner::{FitOutcome, LP_RELAXED_TOLERANCE, LP_TOLERANCE, Learner, SolverTally};
use crate::stats::MeanSe;

/// The experiment's name.
pub const NAME: &str = "icml_adversarial";

/// The LP's name in the tables.
const LP_BAGGED: &str = "LP-bagged";

/// The three panels of Fig. 2: name, data set (0 spam, 1 MNIST 4 vs 7), feature values.
const PANELS: [(&str, usize, Values); 3] = [
    ("spam-v1", 0, Values::Uniform),
    ("spam-mi", 0, Values::MutualInformation),
    ("mnist-4v7-mi", 1, Values::MutualInformation),
];

/// Folds, grids and chunks of one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Protocol {
    /// `k` of the k-fold cross-validation.
    folds: usize,
    /// How many of the `k` folds are run (the first ones).
    run_folds: usize,
    /// LP bagging: chunks of the training part, one LP each, weights averaged.
    chunks: usize,
    /// The `C` grid.
    grid: Vec<f64>,
    /// Budgets per panel.
    budgets: [Vec<f64>; 3],
    /// Caps (stratified subsamples) on the train / validation / test parts, per data set.
    caps: [[Option<usize>; 3]; 2],
}

impl Protocol {
    fn for_mode(mode: Mode) -> Self {
        let steps =
            |hi: usize, by: usize| -> Vec<f64> { (0..=hi).step_by(by).map(|n| n as f64).collect() };
        match mode {
            Mode::Quick => Self {
                folds: 10,
                run_folds: 3,
                chunks: 10,
                grid: log_grid(-1, 2, 1),
                budgets: [
                    vec![0.0, 2.0, 4.0, 6.0],
                    vec![0.0, 2.0, 6.0, 10.0, 14.0],
                    vec![0.0, 10.0, 25.0, 50.0],
                ],
                caps: [[None; 3], [Some(600), Some(100), None]],
            },
            Mode::Full => Self {
                folds: 10,
                run_folds: 10,
                chunks: 10,
                grid: log_grid(-2, 3, 1),
                budgets: [steps(6, 1), steps(14, 2), steps(50, 5)],
                caps: [[None; 3]; 2],
            },
        }
    }

    /// The curve protocol of panel `p` (its `splits` is the folds run; the validation and test
    /// fractions are those of the cross-validation).
    fn spec(&self, p: usize) -> Result<CurveSpec, Error> {
        Ok(CurveSpec {
            learners: Learner::lineup(&["lp", "o2b", "svm"])?,
            attacks: vec![AttackMode::Deletion],
            budgets: self.budgets[p].clone(),
            grid: self.grid.clone(),
            splits: self.run_folds,
            validation: 1.0 / self.folds as f64,
            test: 1.0 / self.folds as f64,
            caps: self.caps[PANELS[p].1],
            min_df: None,
            scaling: Scaling::MaxAbs,
            values: PANELS[p].2,
            sparse: true,
        })
    }

    fn notes(&self, panels: &[usize]) -> Vec<String> {
        let caps = |c: &[Option<usize>; 3]| {
            c.map(|k| k.map_or("all".to_string(), |k| k.to_string()))
                .join("/")
        };
        let mut v = vec![
            format!(
                "stratified {}-fold cross-validation, folds seeded per data set (spam-v1 and spam-mi share folds, validation parts and chunks); {} of the {} folds run; of each training part a seeded stratified 1/9 is the validation part, the models are fitted on the other 8/9",
                self.folds, self.run_folds, self.folds
            ),
            format!(
                "learners: {LP_BAGGED} = LP (4) on {} seeded class-stratified chunks of the training part, weights and bias averaged (the paper's chunk count is not given); O2B and SVM on the whole training part; LP and O2B trained with the budget N they are attacked with",
                self.chunks
            ),
            format!(
                "C grid {:?}, chosen per learner and budget by the validation error under the same greedy deletion (SVM: clean validation part); ties to the smaller C",
                self.grid
            ),
            "test fold attacked by the DSX greedy deletion (features by y w_j x_j / v_j, deleted while useful and within N); features scaled by their training max |x|, features zero on the training part dropped; MI values (DSX §4.2) on the training part".into(),
            format!(
                "caps train/validation/test: spam {}, MNIST 4 vs 7 {} (stratified subsamples)",
                caps(&self.caps[0]),
                caps(&self.caps[1])
            ),
        ];
        for &p in panels {
            v.push(format!("{}: budgets {:?}", PANELS[p].0, self.budgets[p]));
        }
        v
    }
}

/// What one fold of one panel produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct UnitOut {
    /// The curve cells.
    split: SplitOutcome,
    /// Per learner (table name): the fewest features holding half of the tested model's
    /// `‖w‖₁` at the panel's largest budget, and the feature count.
    half_weight: Vec<(String, usize, usize)>,
}

/// The LP (4) trained by chunked bagging (ICML 2008 §5), retried at the relaxed tolerance like
/// the other LP fits ([`Learner::fit`]).
fn bagged_lp(
    train: &Dataset,
    (c, n, values): (f64, f64, &[f64]),
    seed: u64,
    chunks: usize,
) -> Result<FitOutcome, Error> {
    crate::select::no_panic(LP_BAGGED, || {
        let lp = registry::find("lp")?;
        let mut p = HyperParams::new()
            .with("C", ParamValue::Float(c))
            .with("budget", ParamValue::Float(n))
            .with("values", ParamValue::Text("given".into()))
            .with("feature_values", ParamValue::Floats(values.to_vec()))
            .with("chunks", ParamValue::Count(chunks as u64))
            .with("seed", ParamValue::Count(seed))
            .with("tolerance", ParamValue::Float(LP_TOLERANCE));
        let (fitted, relaxed) = match registry::train(lp, train, &p, None) {
            Ok(f) => (f, None),
            Err(e) => {
                p.set("tolerance", ParamValue::Float(LP_RELAXED_TOLERANCE));
                (registry::train(lp, train, &p, None)?, Some(e))
            }
        };
        let r = &fitted.report;
        let tally = SolverTally {
            fits: 1,
            fallbacks: usize::from(r.fell_back()),
            relaxed: usize::from(relaxed.is_some()),
            not_converged: usize::from(!r.converged),
        };
        let note = (!tally.is_clean()).then(|| {
            let after = relaxed.map_or(String::new(), |e| {
                format!("; accepted at {LP_RELAXED_TOLERANCE:.0e} after: {e}")
            });
            format!("{LP_BAGGED} C={c} N={n}: {}{after}", r.summary())
        });
        Ok(FitOutcome {
            model: fitted.model.into_linear(NAME)?,
            tally,
            note,
        })
    })
}

/// The fewest coordinates of `w` whose `|w_j|` sum to half of `‖w‖₁` (0 for `w = 0`).
fn half_weight(model: &LinearModel) -> usize {
    let mut a: Vec<f64> = model.weights().iter().map(|w| w.abs()).collect();
    a.sort_by(|x, y| y.total_cmp(x));
    let total: f64 = a.iter().sum();
    let mut acc = 0.0;
    a.iter()
        .take_while(|&&x| {
            let before = acc;
            acc += x;
            before < 0.5 * total
        })
        .count()
}

/// Fold `fold` of the seeded stratified k-fold partition, its training part split 8/9 : 1/9
/// into train and validation.
fn fold_split(task: &Dataset, proto: &Protocol, fold: usize, seed: u64) -> Result<Split, Error> {
    let outer = k_fold(task, proto.folds, true, seed)?.swap_remove(fold);
    let inner = train_val_test(
        &task.select(&outer.train),
        1.0 / 9.0,
        0.0,
        true,
        seed ^ ((fold as u64 + 1) << 40),
    )?;
    let back =
        |idx: Vec<usize>| -> Vec<usize> { idx.into_iter().map(|i| outer.train[i]).collect() };
    Ok(Split {
        train: back(inner.train),
        validation: back(inner.validation),
        test: outer.test,
    })
}

/// One fold of panel `p`.
fn unit(
    task: &Dataset,
    proto: &Protocol,
    p: usize,
    fold: usize,
    seed: u64,
) -> Result<UnitOut, Error> {
    let spec = proto.spec(p)?;
    let split = fold_split(task, proto, fold, seed)?;
    let fit = |l: Learner, d: &Dataset, c: f64, n: f64, v: &[f64], s: u64| {
        if l.registry_name() == "lp" {
            bagged_lp(d, (c, n, v), s, proto.chunks)
        } else {
            l.fit(d, c, n, v, s)
        }
    };
    let prepared = curve::prepare_split(task, split, &spec, seed)?;
    let (train, values) = (prepared.0.clone(), prepared.3.clone());
    let split = curve::run_prepared(prepared, &spec, seed, &fit)?;
    // the tested models at the largest budget, fitted again to measure their weights
    let top = spec.budgets.iter().copied().fold(0.0, f64::max);
    let n_train = top.min(0.95 * values.iter().sum::<f64>());
    let mut half = Vec::new();
    for cell in split.cells.iter().filter(|c| c.budget == top) {
        let m = fit(cell.learner, &train, cell.c, n_train, &values, seed)?.model;
        half.push((
            table_name(cell.learner),
            half_weight(&m),
            train.n_features(),
        ));
    }
    Ok(UnitOut {
        split,
        half_weight: half,
    })
}

fn table_name(l: Learner) -> String {
    if l.registry_name() == "lp" {
        LP_BAGGED.into()
    } else {
        l.name().into()
    }
}

/// Spambase and MNIST 4 vs 7 (`None` when the MNIST file is not in the data directory).
fn load_data(cfg: &RunConfig, obs: &dyn Observer) -> Result<[Option<Dataset>; 2], Outcome> {
    let mut out = [None, None];
    for (k, (file, task)) in [
        ("spambase", BinaryTask::Natural),
        ("mnist10k", BinaryTask::Pair("4".into(), "7".into())),
    ]
    .into_iter()
    .enumerate()
    {
        match bulwark_data::load(file, cfg.data_dir.as_deref()) {
            Ok((d, _)) => out[k] = Some(binary_task(&d, &task).map_err(Outcome::Failed)?),
            Err(e @ Error::NotFound { .. }) if k == 1 => obs.on_note(NAME, &e.to_string()),
            Err(e @ Error::NotFound { .. }) => {
                return Err(Outcome::MissingData {
                    dataset: file.into(),
                    message: e.to_string(),
                });
            }
            Err(e) => return Err(Outcome::Failed(e)),
        }
    }
    Ok(out)
}

/// Runs the experiment.
pub fn run(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    run_with(cfg, obs, &Protocol::for_mode(cfg.mode))
}

fn run_with(
    cfg: &RunConfig,
    obs: &dyn Observer,
    proto: &Protocol,
) -> Result<ExperimentResult, Outcome> {
    let data = load_data(cfg, obs)?;
    let panels: Vec<usize> = (0..PANELS.len())
        .filter(|&p| data[PANELS[p].1].is_some())
        .collect();
    let specs: Vec<CurveSpec> = (0..PANELS.len())
        .map(|p| proto.spec(p))
        .collect::<Result<_, _>>()
        .map_err(Outcome::Failed)?;
    let fingerprints: Vec<String> = data
        .iter()
        .map(|d| match (d, &cfg.cache) {
            (Some(d), Some(_)) => crate::cache::data_fingerprint(d),
            _ => String::new(),
        })
        .collect();
    let base_seed = experiment_seed(cfg.seed, NAME);
    let data_seed = |p: usize| base_seed.wrapping_add(PANELS[p].1 as u64);
    let jobs: Vec<(usize, usize)> = panels
        .iter()
        .flat_map(|&p| (0..proto.run_folds).map(move |f| (p, f)))
        .collect();
    let outs = crate::cache::run_units(
        NAME,
        cfg,
        obs,
        &jobs,
        |&(p, f)| {
            let key = crate::cache::UnitKey::of(
                (NAME, PANELS[p].0, f),
                (cfg.mode, cfg.seed),
                &(&specs[p], proto, &fingerprints[PANELS[p].1]),
            );
            (key, PANELS[p].0.to_string(), f)
        },
        |&(p, f)| {
            let task = data[PANELS[p].1].as_ref().expect("a panel with its data");
            let out = unit(task, proto, p, f, data_seed(p));
            obs.on_unit(NAME, &format!("{} fold {f}", PANELS[p].0));
            out
        },
    )?;
    let mut res = base(
        NAME,
        "Dekel & Shamir ICML 2008 §5 Fig. 2: greedy deletion adversary, chunked-bagging LP vs online-to-batch vs SVM on spam (v = 1, MI) and MNIST 4 vs 7 (MI)",
        cfg,
    );
    res.protocol = proto.notes(&panels);
    if data[1].is_none() {
        res.protocol
            .push("mnist-4v7-mi skipped: the MNIST file is not in the data directory".into());
    }
    let mut panel_summary = serde_json::Map::new();
    let lp_title = Learner::named("lp").map_err(Outcome::Failed)?.name();
    for &p in &panels {
        let mine: Vec<&UnitOut> = jobs
            .iter()
            .zip(&outs)
            .filter(|((q, _), _)| *q == p)
            .map(|(_, o)| o)
            .collect();
        let mut cells = Vec::new();
        for o in &mine {
            res.failures.extend(o.split.failures.iter().cloned());
            res.solver.add(&o.split.solver);
            res.solver_notes
                .extend(o.split.solver_notes.iter().cloned());
            cells.extend(o.split.cells.iter().cloned());
        }
        for mut row in curve::rows_of(&curve::aggregate(&cells), Some(PANELS[p].0)) {
            if row.learner == lp_title {
                row.learner = LP_BAGGED.into();
            }
            res.rows.push(row);
        }
        panel_summary.insert(PANELS[p].0.into(), summarise(&mine, &specs[p]));
    }
    let mut budgets: Vec<f64> = panels
        .iter()
        .flat_map(|&p| proto.budgets[p].clone())
        .collect();
    budgets.sort_by(f64::total_cmp);
    budgets.dedup();
    res.budgets = budgets;
    res.grid = proto.grid.clone();
    res.repetitions = proto.run_folds;
    res.summary = json!({
        "chunks": proto.chunks,
        "folds": proto.folds,
        "run_folds": proto.run_folds,
        "panels": Value::Object(panel_summary),
        "paper_claims": [
            "our algorithms (the chunked LP and online-to-batch) have the advantage over the SVM under the greedy adversary",
            "SVM repeatedly puts all of its eggs in a small number of baskets",
            "the chunked LP is comparable and sometimes superior to online-to-batch",
        ],
    });
    Ok(res)
}

/// Per panel: the paired (per fold) differences LP-bagged − SVM and LP-bagged − O2B at every
/// budget, how many budgets above 0 each side is ahead by more than two standard errors of the
/// paired difference, and the mean [`half_weight`] count per learner.
fn summarise(outs: &[&UnitOut], spec: &CurveSpec) -> Value {
    let err = |o: &UnitOut, name: &str, n: f64| {
        o.split
            .cells
            .iter()
            .find(|c| table_name(c.learner) == name && c.budget == n)
            .map(|c| c.error)
    };
    let mut pairs = serde_json::Map::new();
    for other in ["SVM", "O2B"] {
        let (mut diffs, mut tally) = (Vec::new(), [0usize; 3]);
        for &n in &spec.budgets {
            let d: Vec<f64> = outs
                .iter()
                .filter_map(|o| Some(err(o, LP_BAGGED, n)? - err(o, other, n)?))
                .collect();
            let m = MeanSe::of(&d);
            if n > 0.0 {
                let k = if m.mean + 2.0 * m.stderr < 0.0 {
                    0
                } else if m.mean - 2.0 * m.stderr > 0.0 {
                    2
                } else {
                    1
                };
                tally[k] += 1;
            }
            diffs.push(json!({"budget": n, "mean": m.mean, "stderr": m.stderr}));
        }
        pairs.insert(
            format!("lp_minus_{}", other.to_lowercase()),
            json!({"by_budget": diffs, "lp_ahead": tally[0], "within": tally[1], "lp_behind": tally[2]}),
        );
    }
    let mut half = serde_json::Map::new();
    for name in [LP_BAGGED, "O2B", "SVM"] {
        let (counts, features): (Vec<f64>, Vec<f64>) = outs
            .iter()
            .flat_map(|o| o.half_weight.iter())
            .filter(|h| h.0 == name)
            .map(|h| (h.1 as f64, h.2 as f64))
            .unzip();
        half.insert(
            name.into(),
            json!({"mean": MeanSe::of(&counts).mean, "of_features": MeanSe::of(&features).mean}),
        );
    }
    pairs.insert("half_weight_features".into(), Value::Object(half));
    Value::Object(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Silent;

    fn tiny() -> Protocol {
        Protocol {
            folds: 10,
            run_folds: 2,
            chunks: 3,
            grid: vec![0.1, 10.0],
            budgets: [vec![0.0, 3.0], vec![0.0, 6.0], vec![0.0, 20.0]],
            caps: [
                [Some(150), Some(60), Some(100)],
                [Some(120), Some(40), Some(60)],
            ],
        }
    }

    #[test]
    fn half_weight_counts_the_largest_weights() {
        let m = |w: Vec<f64>| LinearModel::try_new(w, 0.0).unwrap();
        assert_eq!(half_weight(&m(vec![0.0, 0.0])), 0);
        assert_eq!(half_weight(&m(vec![-3.0, 1.0, 1.0, 1.0])), 1);
        assert_eq!(half_weight(&m(vec![1.0; 4])), 2);
        assert_eq!(half_weight(&m(vec![1.0; 5])), 3);
    }

    /// The folds partition the data; each training part loses 1/9 to validation.
    #[test]
    fn folds_partition_the_data() {
        let (spam, _) = bulwark_data::load("spambase", None).unwrap();
        let proto = Protocol::for_mode(Mode::Full);
        let mut tested = Vec::new();
        for f in 0..proto.folds {
            let s = fold_split(&spam, &proto, f, 7).unwrap();
            let n_in = s.train.len() + s.validation.len();
            assert_eq!(n_in + s.test.len(), spam.len());
            assert!((s.validation.len() as f64 - n_in as f64 / 9.0).abs() <= 2.0);
            tested.extend(s.test);
        }
        tested.sort_unstable();
        assert_eq!(tested, (0..spam.len()).collect::<Vec<_>>());
    }

    /// A tiny protocol on every panel: the layout of the rows and the summary, and the same
    /// bits from the same seed with one and two workers (and from the unit cache).
    #[test]
    fn tiny_run_has_the_fixed_layout_and_is_reproducible() {
        let mut cfg = RunConfig::quick(5);
        cfg.data_dir = bulwark_data::data_dir(None);
        cfg.jobs = 2;
        let res = run_with(&cfg, &Silent, &tiny()).unwrap_or_else(|o| panic!("{o:?}"));
        let panels = if res
            .rows
            .iter()
            .any(|r| r.task.as_deref() == Some("mnist-4v7-mi"))
        {
            3
        } else {
            2
        };
        // per panel: 3 learners x 2 budgets, every row a deletion row with 2 folds
        assert_eq!(res.rows.len(), panels * 3 * 2);
        for r in &res.rows {
            assert_eq!(r.attack, "deletion");
            assert_eq!(r.error.n, 2);
            assert!(["LP-bagged", "O2B", "SVM"].contains(&r.learner.as_str()));
            assert!((0.0..=1.0).contains(&r.error.mean));
        }
        let s = &res.summary["panels"]["spam-v1"];
        assert_eq!(s["lp_minus_svm"]["by_budget"].as_array().unwrap().len(), 2);
        let h = &s["half_weight_features"]["LP-bagged"];
        assert!(h["mean"].as_f64().unwrap() <= h["of_features"].as_f64().unwrap());
        let files = crate::report::plots(&res);
        assert_eq!(files.len(), panels);
        cfg.jobs = 1;
        let again = run_with(&cfg, &Silent, &tiny()).unwrap_or_else(|o| panic!("{o:?}"));
        assert_eq!(again.rows, res.rows);
        assert_eq!(again.summary, res.summary);
        crate::cache::assert_resumes(
            cfg,
            |c| run_with(c, &Silent, &tiny()),
            |r| json!([r.rows, r.summary]),
            panels * 2,
        );
    }
}
