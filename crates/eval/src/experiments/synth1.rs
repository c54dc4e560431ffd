//! `synth1`: the first synthetic experiment of DSX §4.1 (label copies, SVM against the LP at
//! `N = 20`).

use std::collections::BTreeMap;

use bulwark_core::{Classifier, Dataset, Error, LinearModel, rng_for_stream};
use bulwark_data::train_val_test;
use serde_json::json;

use super::{base, experiment_seed, log_grid};
use crate::curve::run_jobs;
use crate::experiment::{ExperimentResult, Mode, Observer, Row, RunConfig};
use crate::learner::{Learner, SolverTally};
use crate::stats::MeanSe;

/// Per-learner solver tallies of one repetition and its notes.
type Tallies = (BTreeMap<&'static str, SolverTally>, Vec<String>);

/// Zeroes the given columns (deterministic test-time removal of DSX §4.1).
fn remove_features(d: &Dataset, cols: &[usize]) -> Result<Dataset, Error> {
    let mut out = d.clone();
    out.features_mut()
        .map_in_place(|j, x| if cols.contains(&j) { 0.0 } else { x })?;
    Ok(out)
}

/// The synth1 configuration (exposed so tests can run a smaller one).
#[derive(Debug, Clone, PartialEq)]
pub struct Synth1Config {
    /// Repetitions (fresh data each).
    pub repetitions: usize,
    /// The `C` grid (shared by LP and SVM).
    pub grid: Vec<f64>,
    /// Points per data set (the paper: 1000).
    pub points: usize,
    /// Generate with margin 1 (rejecting points closer than 1 to the hyperplane).
    pub margin: bool,
}

impl Synth1Config {
    /// The configuration of a mode.
    pub fn for_mode(mode: Mode) -> Self {
        Self {
            // cheap (≈ 0.2 s per repetition): the paper's 100 repetitions in both modes
            repetitions: match mode {
                Mode::Quick | Mode::Full => 100,
            },
            grid: log_grid(-2, 3, 1),
            points: 1000,
            margin: true,
        }
    }
}

/// Runs synth1 with an explicit configuration.
pub fn synth1_with(
    sc: &Synth1Config,
    cfg: &RunConfig,
    obs: &dyn Observer,
) -> Result<ExperimentResult, Error> {
    const NAME: &str = "synth1";
    let seed = experiment_seed(cfg.seed, NAME);
    obs.on_start(NAME, sc.repetitions as u64);
    // v = 1 on the 20 Gaussian features, 10 on the two label copies; N = 20 (DSX §4.1)
    let mut values = vec![1.0; 20];
    values.extend([10.0, 10.0]);
    let reps: Vec<usize> = (0..sc.repetitions).collect();
    let results = run_jobs(
        &reps,
        cfg.jobs,
        |&r| -> Result<([f64; 6], Tallies), Error> {
            let mut rng = rng_for_stream(seed, r as u64);
            let data = crate::synth::synth1(sc.points, 0.2, sc.margin, &mut rng)?;
            // equal train/test split; 20 % of the training half is the validation split
            let split = train_val_test(&data, 0.1, 0.5, false, seed.wrapping_add(r as u64))?;
            let (train, val, test) = bulwark_data::split::apply(&data, &split);
            let both = [20, 21];
            let (val_both, test_both) = (
                remove_features(&val, &both)?,
                remove_features(&test, &both)?,
            );
            let test_one = remove_features(&test, &[21])?;
            let tally = std::cell::RefCell::new((
                BTreeMap::<&str, SolverTally>::new(),
                Vec::<String>::new(),
            ));
            let fit_all = |name: &'static str| -> Result<Vec<LinearModel>, Error> {
                let l = Learner::named(name)?;
                sc.grid
                    .iter()
                    .map(|&c| {
                        let f = l.fit(&train, c, 20.0, &values, seed)?;
                        let mut t = tally.borrow_mut();
                        t.0.entry(name).or_default().add(&f.tally);
                        t.1.extend(f.note);
                        Ok(f.model)
                    })
                    .collect()
            };
            let pick = |models: &[LinearModel], on: &Dataset| -> Result<usize, Error> {
                let errs: Vec<f64> = models
                    .iter()
                    .map(|m| m.error_rate(on))
                    .collect::<Result<_, _>>()?;
                let scores: Vec<Option<f64>> = errs.into_iter().map(Some).collect();
                Ok(crate::select::best(&scores, crate::select::Ties::First)
                    .expect("non-empty grid"))
            };
            // LP: C tuned on the validation split attacked like the test set (both copies removed)
            let lp = fit_all("lp")?;
            let lp_best = &lp[pick(&lp, &val_both)?];
            // SVM: trained without regard to deletion, C tuned on the clean validation split
            let svm = fit_all("svm")?;
            let svm_best = &svm[pick(&svm, &val)?];
            obs.on_unit(NAME, &format!("repetition {r}"));
            let errors = [
                svm_best.error_rate(&test_both)?,
                lp_best.error_rate(&test_both)?,
                svm_best.error_rate(&test_one)?,
                lp_best.error_rate(&test_one)?,
                svm_best.error_rate(&test)?,
                lp_best.error_rate(&test)?,
            ];
            Ok((errors, tally.into_inner()))
        },
    );
    let results: Vec<([f64; 6], Tallies)> = results.into_iter().collect::<Result<_, _>>()?;
    let mut by_learner = BTreeMap::<&str, SolverTally>::new();
    let mut solver_notes = Vec::new();
    for (_, (t, notes)) in &results {
        for (name, t) in t {
            by_learner.entry(name).or_default().add(t);
        }
        solver_notes.extend(notes.iter().cloned());
    }
    let mut solver = SolverTally::default();
    by_learner.values().for_each(|t| solver.add(t));
    let results: Vec<[f64; 6]> = results.into_iter().map(|(e, _)| e).collect();
    let col = |k: usize| MeanSe::of(&results.iter().map(|r| r[k]).collect::<Vec<_>>());
    let mut res = base(
        NAME,
        "DSX 2010 §4.1 first synthetic experiment (also ICML 2008 §5 sanity check)",
        cfg,
    );
    res.solver = solver;
    res.solver_notes = solver_notes;
    res.grid = sc.grid.clone();
    res.budgets = vec![20.0];
    res.repetitions = sc.repetitions;
    res.protocol = vec![
        format!(
            "{} points in R^20 {}, labels flipped w.p. 0.2, two copies of the (noisy) label as features 21-22; v = 1 (features 1-20), v = 10 (21-22); LP budget N = 20",
            sc.points,
            if sc.margin {
                "drawn from N(0, I) and labelled by a random hyperplane through the origin, points closer than 1 to it rejected (the 'linearly separable instances' of DSX §4.1's second experiment)"
            } else {
                "drawn from N(0, I), labelled by a random hyperplane (no margin)"
            }
        ),
        "random equal train/test split (500/500); 100 of the 500 training points form the validation split, so models train on 400".into(),
        "test time: both label copies set to 0 (deterministic removal, as in the paper); the 'one copy' rows remove feature 22 only".into(),
        "LP: C tuned on the validation split with both copies removed (attacked like the test set); SVM: C tuned on the clean validation split (trained without regard to deletion, DSX §4); ties go to the smaller C".into(),
        format!("{} repetitions, each with fresh data; ± is the standard error", sc.repetitions),
    ];
    let paper = |k: usize| -> (Option<f64>, Option<f64>) {
        match k {
            0 => (Some(0.477), Some(0.004)),
            1 => (Some(0.22), Some(0.002)),
            2 | 3 => (Some(0.0), None),
            _ => (None, None),
        }
    };
    let labels = [
        ("SVM", "both copies removed"),
        ("LP (N = 20)", "both copies removed"),
        ("SVM", "one copy removed"),
        ("LP (N = 20)", "one copy removed"),
        ("SVM", "clean"),
        ("LP (N = 20)", "clean"),
    ];
    for (k, (learner, attack)) in labels.iter().enumerate() {
        let (p, pm) = paper(k);
        res.rows.push(Row {
            task: None,
            learner: (*learner).into(),
            attack: (*attack).into(),
            budget: if k % 2 == 1 { 20.0 } else { 0.0 },
            error: col(k),
            chosen_c: None,
            paper: p,
            paper_pm: pm,
            solver: by_learner
                .get(if learner.starts_with("LP") {
                    "lp"
                } else {
                    "svm"
                })
                .copied()
                .unwrap_or_default(),
        });
    }
    let (svm, lp) = (col(0), col(1));
    res.summary = json!({
        "svm": {"mean": svm.mean, "stderr": svm.stderr},
        "lp_n20": {"mean": lp.mean, "stderr": lp.stderr},
        "paper": {"svm": {"mean": 0.477, "pm": 0.004}, "lp_n20": {"mean": 0.22, "pm": 0.002}},
        "acceptance": {
            "lp_in_0.19_0.27": (0.19..=0.27).contains(&lp.mean),
            "svm_at_least_0.38": svm.mean >= 0.38,
            "gap_at_least_0.12": svm.mean - lp.mean >= 0.12,
        }
    });
    Ok(res)
}

pub(super) fn synth1(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Error> {
    synth1_with(&Synth1Config::for_mode(cfg.mode), cfg, obs)
}
