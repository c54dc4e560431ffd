//! The experiments of the two papers, each in a quick and a full configuration.
//!
//! | name | reproduces |
//! |---|---|
//! | `synth1` | DSX §4.1 first experiment (= ICML 2008 sanity check): label copies, SVM vs LP (N = 20) |
//! | `synth2` | DSX §4.1 second experiment, Fig. 1: feature redundancy, deletion and corruption |
//! | `breast` | DSX §4.2, Fig. 2: UCI breast cancer (the 10 "mean" features) |
//! | `spam` | DSX §4.2, Fig. 3: UCI spambase |
//! | `usps` | DSX §4.2, Figs. 4–5: all 45 digit pairs of the 1100-per-digit USPS |
//! | `mnist` | DSX §4.2, Figs. 6–7: all 45 digit pairs of the MNIST test set (10k) |
//! | `icml_random` | ICML 2008 §5 Fig. 1: 50 training points, random deletion, spam and MNIST 4 vs 7 |
//! | `icml_adversarial` | ICML 2008 §5 Fig. 2: greedy deletion, chunked-bagging LP, O2B and SVM, 10-fold CV on spam (v = 1, MI) and MNIST 4 vs 7 (MI) ([`crate::icml_adversarial`]) |
//! | `guru_binary` | Ginodi 2010 ch. 2 §5: Table 2.2, Figs. 2.5, 2.7 and 3.1 ([`crate::guru`]) |
//! | `guru_kernel` | Ginodi 2010 ch. 4 §3: Table 4.1 ([`crate::guru_kernel`]) |
//! | `guru_multiclass` | Ginodi 2010 ch. 5 §4: Table 5.2 ([`crate::guru_multiclass`]) |
//! | `rolr` | Feng et al. 2014 §6, Fig. 2, and a norm-matched adversary ([`crate::rolr`]) |
//! | `kls` | Klivans, Long & Servedio 2009: error against the malicious-noise rate ([`crate::kls`]) |
//! | `poisoning` | none: every training-time defence against every contamination model, adaptive adversaries included ([`crate::poisoning`]) |
//! | `text` | DSX §4.2's protocol on real text: the SpamAssassin e-mails as words, uniform and MI values |
//! | `missing_real` | none: records with missing cells, every learner tuned by `bulwark tune`'s code, beside scikit-learn's imputation ([`crate::missing_real`]) |

use std::collections::BTreeMap;
use std::time::Instant;

use bulwark_core::{Classifier, Dataset, Error, LinearModel, rng_for_stream};
use bulwark_data::{BinaryTask, all_pairs, binary_task, load, train_val_test};
use serde_json::json;

use crate::curve::{self, AttackMode, CurveSpec, Scaling, Values, run_jobs};
use crate::experiment::{ExperimentResult, Mode, Observer, Row, RunConfig};
use crate::learner::{Learner, SolverTally};
use crate::stats::MeanSe;

/// Every experiment, in the order `reproduce` runs them.
pub const ALL: [&str; 16] = [
    "synth1",
    "synth2",
    "breast",
    "spam",
    "icml_random",
    "icml_adversarial",
    "usps",
    "mnist",
    "guru_binary",
    "guru_kernel",
    "guru_multiclass",
    "rolr",
    "kls",
    "poisoning",
    "text",
    "missing_real",
];

/// How an experiment ended.
#[derive(Debug)]
pub enum Outcome {
    /// It ran; here are its numbers.
    Done(Box<ExperimentResult>),
    /// A data set it needs is not in the data directory (not a failure of the harness).
    MissingData {
        /// The data set name.
        dataset: String,
        /// What is missing and how to get it.
        message: String,
    },
    /// Anything else went wrong.
    Failed(Error),
    /// The run's deadline ([`RunConfig::deadline`]) came before every unit had run; the finished
    /// units are in the cache, and the same command resumes.
    Incomplete {
        /// Units finished (now or in an earlier run).
        done: usize,
        /// Units in all.
        total: usize,
    },
}

/// A log-spaced grid `10^lo, …, 10^hi` with `per_decade` points per decade.
pub fn log_grid(lo: i32, hi: i32, per_decade: usize) -> Vec<f64> {
    let steps = (hi - lo) as usize * per_decade;
    (0..=steps)
        .map(|k| {
            let e = lo as f64 + k as f64 / per_decade as f64;
            // round to 4 significant digits so the grid prints cleanly
            let v = 10f64.powf(e);
            let mag = 10f64.powi(v.log10().floor() as i32 - 3);
            (v / mag).round() * mag
        })
        .collect()
}

/// A per-experiment seed derived from the master seed and the name (stable across runs and
/// independent of which other experiments run).
pub(crate) fn experiment_seed(master: u64, name: &str) -> u64 {
    // FNV-1a of the name, mixed with the master seed
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ master.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A built-in data set that is not there. The registry's message names the file looked for and
/// the data directory looked in (or that there was none, and how to get the data).
fn missing(name: &str, e: &Error) -> Outcome {
    Outcome::MissingData {
        dataset: name.into(),
        message: e.to_string(),
    }
}

/// Loads a built-in data set, mapping "not there" to [`Outcome::MissingData`].
fn load_builtin(name: &str, cfg: &RunConfig) -> Result<Dataset, Outcome> {
    match load(name, cfg.data_dir.as_deref()) {
        Ok((d, _)) => Ok(d),
        Err(e @ Error::NotFound { .. }) => Err(missing(name, &e)),
        Err(e) => Err(Outcome::Failed(e)),
    }
}

/// Runs experiment `name`.
pub fn run(name: &str, cfg: &RunConfig, obs: &dyn Observer) -> Outcome {
    let start = Instant::now();
    let out = match name {
        "synth1" => synth1(cfg, obs).map_err(Outcome::Failed),
        "synth2" => synth2(cfg, obs),
        "breast" => breast(cfg, obs),
        "spam" => spam(cfg, obs),
        "text" => text(cfg, obs),
        "icml_random" => icml_random(cfg, obs),
        "icml_adversarial" => crate::icml_adversarial::run(cfg, obs),
        "usps" => pairs("usps", cfg, obs),
        "mnist" => pairs("mnist", cfg, obs),
        "guru_binary" => crate::guru::run(cfg, obs),
        "guru_kernel" => crate::guru_kernel::run(cfg, obs),
        "guru_multiclass" => crate::guru_multiclass::run(cfg, obs),
        "rolr" => crate::rolr::run(cfg, obs),
        "kls" => crate::kls::run(cfg, obs),
        "poisoning" => crate::poisoning::run(cfg, obs),
        "missing_real" => crate::missing_real::run(cfg, obs),
        other => Err(Outcome::Failed(Error::param(
            "--only",
            other,
            format!("one of {}", ALL.join(", ")),
        ))),
    };
    match out {
        Ok(mut r) => {
            r.runtime_seconds = start.elapsed().as_secs_f64();
            r.unit_seconds = cfg
                .cache
                .as_ref()
                .map(|c| c.seconds(Some(name)))
                .filter(|s| *s > 0.0);
            Outcome::Done(Box::new(r))
        }
        Err(o) => o,
    }
}

pub(crate) fn base(name: &str, reproduces: &str, cfg: &RunConfig) -> ExperimentResult {
    ExperimentResult {
        name: name.into(),
        reproduces: reproduces.into(),
        mode: cfg.mode,
        seed: cfg.seed,
        grid: Vec::new(),
        budgets: Vec::new(),
        repetitions: 0,
        protocol: Vec::new(),
        rows: Vec::new(),
        per_task: Vec::new(),
        runtime_seconds: 0.0,
        unit_seconds: None,
        failures: Vec::new(),
        solver: SolverTally::default(),
        solver_notes: Vec::new(),
        summary: json!({}),
    }
}

// ---------------------------------------------------------------------------------------------
// synth1

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

fn synth1(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Error> {
    synth1_with(&Synth1Config::for_mode(cfg.mode), cfg, obs)
}

// ---------------------------------------------------------------------------------------------
// budget curves

/// Runs an error-versus-budget study of `spec` over `tasks` (name, binary data set) as
/// experiment `name`: the rows average over tasks and splits; with more than one task the
/// per-task rows are filled too. Deterministic in `cfg.seed`, whatever `cfg.jobs`.
pub fn curve_study(
    name: &str,
    tasks: &[(String, Dataset)],
    spec: &CurveSpec,
    cfg: &RunConfig,
    obs: &dyn Observer,
) -> Result<ExperimentResult, Error> {
    let mut res = base(name, "custom error-versus-budget study", cfg);
    res.protocol = spec_notes(spec, cfg.mode);
    match run_curves(name, tasks, spec, cfg, obs, &mut res) {
        Ok(()) => Ok(res),
        Err(Outcome::Failed(e)) => Err(e),
        Err(other) => Err(Error::Numerical {
            algorithm: name.into(),
            message: format!("not finished: {other:?}"),
        }),
    }
}

/// `--refit` ([`RunConfig::refit`], and any refit a unit of the experiment records):
/// recomputes the learners `refit` in every unit of `outs` that has not recorded them, the rest
/// of the unit kept ([`curve::SplitOutcome::refit`]), and stores the updated unit with its
/// compute seconds plus the refit's; with a deadline no refit starts after it
/// ([`Outcome::Incomplete`]).
#[allow(clippy::too_many_arguments)]
fn refit_units(
    name: &str,
    tasks: &[(String, Dataset)],
    spec: &CurveSpec,
    cfg: &RunConfig,
    obs: &dyn Observer,
    (jobs, outs): (&[(usize, usize)], &mut [curve::SplitOutcome]),
    refit: &[Learner],
    key: impl Fn(usize, usize) -> (crate::cache::UnitKey, u64) + Sync,
) -> Result<(), Outcome> {
    let Some(cache) = cfg.cache.as_ref() else {
        return Ok(());
    };
    let missing = |o: &curve::SplitOutcome| -> Vec<Learner> {
        refit
            .iter()
            .copied()
            .filter(|l| !o.refits.iter().any(|r| r == l.registry_name()))
            .collect()
    };
    let todo: Vec<usize> = (0..jobs.len())
        .filter(|&k| !missing(&outs[k]).is_empty())
        .collect();
    if todo.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = refit.iter().map(|l| l.registry_name()).collect();
    let what = format!("{name} (refit {})", names.join(", "));
    obs.on_start(&what, todo.len() as u64);
    let ran = curve::run_jobs(&todo, cfg.jobs, |&k| {
        if cfg.stopping() {
            return None;
        }
        let (t, s) = jobs[k];
        let (unit_key, seed) = key(t, s);
        let started = std::time::Instant::now();
        let mut out = outs[k].clone();
        for learner in missing(&outs[k]) {
            let alone = CurveSpec {
                learners: vec![learner],
                ..spec.clone()
            };
            match curve::run_split(&tasks[t].1, &alone, seed) {
                Ok(new) => out.refit(learner, new),
                Err(e) => return Some(Err(e)),
            }
        }
        let before = cache
            .get::<curve::SplitOutcome>(&unit_key)
            .map_or(0.0, |c| c.0);
        let seconds = before + started.elapsed().as_secs_f64();
        if let Err(e) = cache.put(&unit_key, (name, &tasks[t].0, s), seconds, &out) {
            obs.on_note(name, &format!("cannot store a refit unit: {e}"));
        }
        obs.on_unit(&what, &format!("{} split {s}", tasks[t].0));
        Some(Ok(out))
    });
    let total = todo.len();
    let mut done = 0;
    for (&k, r) in todo.iter().zip(ran) {
        if let Some(r) = r {
            outs[k] = r.map_err(Outcome::Failed)?;
            done += 1;
        }
    }
    if done < total {
        return Err(Outcome::Incomplete { done, total });
    }
    Ok(())
}

/// Runs a curve study over `tasks` (name, data) and fills rows (averaged over tasks and splits)
/// and, with more than one task, per-task rows. With a cache ([`RunConfig::cache`]) the units
/// (one split of one task) found there are not run again and every finished unit is stored; with
/// a deadline no unit starts after it ([`Outcome::Incomplete`]).
fn run_curves(
    name: &str,
    tasks: &[(String, Dataset)],
    spec: &CurveSpec,
    cfg: &RunConfig,
    obs: &dyn Observer,
    res: &mut ExperimentResult,
) -> Result<(), Outcome> {
    let seed = experiment_seed(cfg.seed, name);
    let split_seed = |t: usize, s: usize| seed.wrapping_add((t * 1000 + s) as u64);
    let fingerprints: Vec<String> = match cfg.cache {
        Some(_) => tasks
            .iter()
            .map(|(_, d)| crate::cache::data_fingerprint(d))
            .collect(),
        None => Vec::new(),
    };
    let key = |t: usize, s: usize| {
        crate::cache::UnitKey::new(
            (name, &tasks[t].0, s),
            (cfg.mode, cfg.seed, split_seed(t, s)),
            spec,
            &fingerprints[t],
        )
    };
    let jobs: Vec<(usize, usize)> = (0..tasks.len())
        .flat_map(|t| (0..spec.splits).map(move |s| (t, s)))
        .collect();
    // The learners to bring up to date in cached units: those `--refit` names and any refit a
    // cached unit of this experiment records, so a table is never rendered from a mix of refit
    // and stale cells (a refit stopped by `--stop-after` is completed by the next run, with or
    // without `--refit`). A unit computed now is computed with them, so it records them too.
    let cached_refits: Vec<String> = match cfg.cache.as_ref() {
        Some(cache) => jobs
            .iter()
            .filter_map(|&(t, s)| cache.get::<curve::SplitOutcome>(&key(t, s)))
            .flat_map(|(_, o)| o.refits)
            .collect(),
        None => Vec::new(),
    };
    let refit: Vec<Learner> = spec
        .learners
        .iter()
        .copied()
        .filter(|l| {
            let name = l.registry_name();
            cfg.refit.iter().chain(&cached_refits).any(|r| r == name)
        })
        .collect();
    let mut outs = crate::cache::run_units(
        name,
        cfg,
        obs,
        &jobs,
        |&(t, s)| (key(t, s), tasks[t].0.clone(), s),
        |&(t, s)| {
            let mut r = curve::run_split(&tasks[t].1, spec, split_seed(t, s));
            if let Ok(o) = r.as_mut() {
                o.refits = refit
                    .iter()
                    .map(|l| l.registry_name().to_string())
                    .collect();
            }
            obs.on_unit(name, &format!("{} split {s}", tasks[t].0));
            r
        },
    )?;
    if !refit.is_empty() {
        refit_units(
            name,
            tasks,
            spec,
            cfg,
            obs,
            (&jobs, &mut outs),
            &refit,
            |t, s| (key(t, s), split_seed(t, s)),
        )?;
    }
    let features: Vec<usize> = outs.iter().filter_map(|o| o.features).collect();
    if let (Some(lo), Some(hi)) = (features.iter().min(), features.iter().max()) {
        // the features the learners saw, over the units that recorded them
        res.summary["features"] = json!({ "min": lo, "max": hi, "units": features.len() });
    }
    let mut all_cells = Vec::new();
    let mut per_task: Vec<Vec<curve::Cell>> = vec![Vec::new(); tasks.len()];
    for (&(t, _), out) in jobs.iter().zip(outs) {
        for f in &out.failures {
            obs.on_note(name, f);
        }
        res.failures.extend(out.failures);
        res.solver.add(&out.solver);
        res.solver_notes.extend(out.solver_notes);
        per_task[t].extend(out.cells.iter().cloned());
        all_cells.extend(out.cells);
    }
    res.rows = curve::rows_of(&curve::aggregate(&all_cells), None);
    if tasks.len() > 1 {
        for (t, cells) in per_task.iter().enumerate() {
            res.per_task
                .extend(curve::rows_of(&curve::aggregate(cells), Some(&tasks[t].0)));
        }
    }
    res.grid = spec.grid.clone();
    res.budgets = spec.budgets.clone();
    res.repetitions = spec.splits;
    Ok(())
}

fn spec_notes(spec: &CurveSpec, mode: Mode) -> Vec<String> {
    let caps = |k: usize| spec.caps[k].map_or("all".to_string(), |c| c.to_string());
    vec![
        format!(
            "{} seeded stratified splits: test {:.0} %, validation {:.0} % of the data; caps train/validation/test = {}/{}/{}",
            spec.splits,
            spec.test * 100.0,
            spec.validation * 100.0,
            caps(0),
            caps(1),
            caps(2)
        ),
        format!(
            "learners {}; C grid {:?} (logarithmic), chosen per learner, budget and attack on the validation split attacked like the test set (SVM: clean validation split)",
            spec.learners
                .iter()
                .map(|l| l.name())
                .collect::<Vec<_>>()
                .join(", "),
            spec.grid
        ),
        format!(
            "scaling {:?} fitted on the training part; feature values {:?}; LP/O2B trained with the budget N they are attacked with; FDROP deletes k = round(N) features",
            spec.scaling, spec.values
        ),
        format!("mode {}", mode.as_str()),
    ]
}

fn finish_curve(
    name: &str,
    reproduces: &str,
    tasks: &[(String, Dataset)],
    spec: &CurveSpec,
    extra_notes: &[&str],
    claims: &[&str],
    cfg: &RunConfig,
    obs: &dyn Observer,
) -> Result<ExperimentResult, Outcome> {
    let mut res = base(name, reproduces, cfg);
    res.protocol = spec_notes(spec, cfg.mode);
    res.protocol
        .extend(extra_notes.iter().map(|s| s.to_string()));
    run_curves(name, tasks, spec, cfg, obs, &mut res)?;
    res.summary = json!({ "paper_claims": claims });
    Ok(res)
}

fn quick_full<T>(mode: Mode, quick: T, full: T) -> T {
    match mode {
        Mode::Quick => quick,
        Mode::Full => full,
    }
}

/// The four learners of DSX §4, by their registry names.
const ROBUST: [&str; 4] = ["lp", "o2b", "svm", "fdrop"];

fn synth2(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let mut rng = rng_for_stream(experiment_seed(cfg.seed, "synth2"), 999);
    let data = crate::synth::synth2(200, &mut rng).map_err(Outcome::Failed)?;
    let spec = CurveSpec {
        learners: Learner::lineup(&ROBUST).map_err(Outcome::Failed)?,
        attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
        budgets: quick_full(
            cfg.mode,
            vec![0.0, 5.0, 10.0, 20.0, 30.0],
            vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0],
        ),
        grid: quick_full(cfg.mode, log_grid(-2, 2, 1), log_grid(-3, 3, 1)),
        splits: 10,
        validation: 0.2,
        test: 0.4,
        caps: [None; 3],
        min_df: None,
        scaling: Scaling::None,
        values: Values::Uniform,
        sparse: false,
    };
    finish_curve(
        "synth2",
        "DSX 2010 §4.1 second synthetic experiment (feature redundancy), Fig. 1",
        &[("synth2".into(), data)],
        &spec,
        &[
            "data: 200 points u in R^3 from N(0, I), labelled by a random hyperplane through the origin, points closer than 1 rejected; x = A u with A a 40x3 standard Gaussian matrix, plus N(0, 0.15 j) noise (read as a variance) on feature j",
            "one data sample, re-split per repetition (the paper: 10 random train-test splits)",
            "TGRS of the paper is FDROP here (Globerson-Roweis trained by dual coordinate descent instead of SGD)",
        ],
        &[
            "LP is considerably more robust than SVM (deletion and corruption)",
            "LP is similar to TGRS under deletion and better under corruption",
        ],
        cfg,
        obs,
    )
}

fn breast(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let raw = load_builtin("wdbc", cfg)?;
    let task = binary_task(&raw, &BinaryTask::Natural).map_err(Outcome::Failed)?;
    // DSX §4.2: "10 features" — the ten "mean" features of WDBC (columns 1-10)
    let keep: Vec<usize> = (0..10).collect();
    let dense = task.features().to_dense().select_cols(&keep);
    let labels = task.binary_labels().map_err(Outcome::Failed)?.to_vec();
    let task = Dataset::binary("breast", dense, labels).map_err(Outcome::Failed)?;
    let spec = CurveSpec {
        learners: Learner::lineup(&ROBUST).map_err(Outcome::Failed)?,
        attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
        budgets: vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        grid: quick_full(cfg.mode, log_grid(-2, 2, 1), log_grid(-3, 3, 2)),
        splits: 10,
        validation: 0.15,
        test: 0.3,
        caps: [None; 3],
        min_df: None,
        scaling: Scaling::Standard,
        values: Values::Uniform,
        sparse: false,
    };
    finish_curve(
        "breast",
        "DSX 2010 §4.2, Fig. 2 (UCI breast cancer, deletion and corruption)",
        &[("breast".into(), task)],
        &spec,
        &[
            "data: WDBC (569 x 30), the 10 'mean' features (the paper says 10 features; which 10 is not stated); malignant = +1",
        ],
        &[
            "deletion: all noise-robust algorithms perform about the same and better than SVM",
            "corruption: noisy results, no significant difference between the algorithms",
        ],
        cfg,
        obs,
    )
}

fn spam(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let raw = load_builtin("spambase", cfg)?;
    let task = binary_task(&raw, &BinaryTask::Natural).map_err(Outcome::Failed)?;
    let spec = CurveSpec {
        learners: Learner::lineup(&ROBUST).map_err(Outcome::Failed)?,
        attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
        budgets: quick_full(
            cfg.mode,
            vec![0.0, 2.0, 4.0, 6.0, 10.0],
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0],
        ),
        grid: quick_full(cfg.mode, log_grid(-1, 2, 1), log_grid(-2, 3, 1)),
        splits: quick_full(cfg.mode, 5, 10),
        validation: 0.1,
        test: 0.3,
        caps: quick_full(
            cfg.mode,
            [Some(800), Some(300), Some(1000)],
            [Some(2000), None, None],
        ),
        min_df: None,
        scaling: Scaling::MaxAbs,
        values: Values::Uniform,
        sparse: true,
    };
    finish_curve(
        "spam",
        "DSX 2010 §4.2, Fig. 3 (UCI spambase, deletion and corruption)",
        &[("spam".into(), task)],
        &spec,
        &[
            "data: spambase 4601 x 57, spam = +1; features scaled by their training max |x| (keeps zeros), stored sparse",
        ],
        &[
            "the robust algorithms beat SVM under deletion and corruption",
            "roughly equal to TGRS",
            "better results than on breast",
        ],
        cfg,
        obs,
    )
}

/// The `text` experiment's protocol in one mode (exposed so tests can run a smaller one).
#[derive(Debug, Clone, PartialEq)]
pub struct TextConfig {
    /// The curve protocol; its `values` is set per study (uniform, then MI).
    pub spec: CurveSpec,
}

impl TextConfig {
    /// The configuration of a mode. Quick: three splits of 600 training, 300 validation and 1000
    /// test e-mails, the words in at least 15 of the 600 training e-mails (about 1000), four C
    /// values: each LP fit is a 600-example, ~1000-word LP (about a second with either the
    /// feature-space or the example-space interior-point method). Full: the DSX §4.2 protocol,
    /// ten splits, every word of the shipped vocabulary present in the training part, training
    /// capped at 2000 e-mails (as `spam`), six C values, eight budgets.
    pub fn for_mode(mode: Mode) -> Result<Self, Error> {
        Ok(Self {
            spec: CurveSpec {
                learners: Learner::lineup(&ROBUST)?,
                attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
                budgets: quick_full(
                    mode,
                    vec![0.0, 5.0, 10.0, 20.0, 40.0],
                    vec![0.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0],
                ),
                grid: quick_full(mode, log_grid(-2, 1, 1), log_grid(-3, 2, 1)),
                splits: quick_full(mode, 3, 10),
                validation: 0.1,
                test: 0.3,
                caps: quick_full(
                    mode,
                    [Some(600), Some(300), Some(1000)],
                    [Some(2000), None, None],
                ),
                min_df: quick_full(mode, Some(15), None),
                scaling: Scaling::None,
                values: Values::Uniform,
                sparse: true,
            },
        })
    }
}

/// The words of `data` (binary features named by words) with the largest mutual information
/// with the label over the whole data set, with it (nats), largest first: the DSX §4.2 value
/// before normalisation (for a 0/1 feature the best threshold is the only one).
pub fn top_mi_words(data: &Dataset, k: usize) -> Result<Vec<(String, f64)>, Error> {
    let y = data.binary_labels()?;
    let m = data.len() as f64;
    let n = data.n_features();
    let (mut with_pos, mut with) = (vec![0usize; n], vec![0usize; n]);
    for i in 0..data.len() {
        for (j, v) in data.row(i).nonzeros() {
            if v != 0.0 {
                with[j] += 1;
                if y[i] == bulwark_core::Sign::Pos {
                    with_pos[j] += 1;
                }
            }
        }
    }
    let pos = y.iter().filter(|s| **s == bulwark_core::Sign::Pos).count();
    let term = |joint: usize, a: usize, b: usize| {
        if joint == 0 {
            0.0
        } else {
            let p = joint as f64 / m;
            p * (p * m * m / (a as f64 * b as f64)).ln()
        }
    };
    let mut scored: Vec<(String, f64)> = (0..n)
        .map(|j| {
            let (w, wp) = (with[j], with_pos[j]);
            let (without, neg) = (data.len() - w, data.len() - pos);
            let mi = term(wp, w, pos)
                + term(w - wp, w, neg)
                + term(pos - wp, without, pos)
                + term(neg - (w - wp), without, neg);
            (data.feature_names().get(j).into_owned(), mi.max(0.0))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.truncate(k);
    Ok(scored)
}

/// DSX §4.2's protocol on real text: the SpamAssassin public mail corpus as a binary bag of
/// words, spam = +1, LP, O2B, SVM and FDROP under greedy word deletion and corruption, once
/// with uniform feature values and once with MI values.
pub fn text_with(
    tc: &TextConfig,
    cfg: &RunConfig,
    obs: &dyn Observer,
) -> Result<ExperimentResult, Outcome> {
    let raw = load_builtin("spamassassin", cfg)?;
    let task = binary_task(&raw, &BinaryTask::Natural).map_err(Outcome::Failed)?;
    let top = top_mi_words(&task, 12).map_err(Outcome::Failed)?;
    let mut res = base(
        "text",
        "DSX 2010 §4.2's protocol (Fig. 3) on real text: SpamAssassin e-mails as words, deletion and corruption, uniform and MI values",
        cfg,
    );
    let uniform = tc.spec.clone();
    let mi = CurveSpec {
        values: Values::MutualInformation,
        ..tc.spec.clone()
    };
    res.protocol = spec_notes(&uniform, cfg.mode);
    res.protocol[2] = format!(
        "scaling {:?} (the features are 0/1 word indicators); feature values Uniform (task `uniform`) and MutualInformation on the training part (task `mi`, DSX §4.2); LP/O2B trained with the budget N they are attacked with; FDROP deletes k = round(N) features",
        uniform.scaling
    );
    let mut vocabulary = Vec::new();
    let mut studies = Vec::new();
    for (study, spec) in [("uniform", &uniform), ("mi", &mi)] {
        let mut r = base(study, "", cfg);
        run_curves(
            &format!("text/{study}"),
            &[(study.to_string(), task.clone())],
            spec,
            cfg,
            obs,
            &mut r,
        )?;
        if let Some(f) = r.summary.get("features") {
            vocabulary.push((f["min"].as_u64(), f["max"].as_u64()));
        }
        studies.push((study, r));
    }
    let (lo, hi) = (
        vocabulary.iter().filter_map(|v| v.0).min(),
        vocabulary.iter().filter_map(|v| v.1).max(),
    );
    let words_seen = match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo} words in every split"),
        (Some(lo), Some(hi)) => format!("{lo} to {hi} words per split"),
        _ => "(not recorded by the cached units)".into(),
    };
    res.protocol.push(format!(
        "data: `spamassassin`, {} e-mails x {} words (words in at least 20 e-mails of the corpus; data/DATA.md), binary bag of words of subject and body, spam = +1 ({} spam, {} ham); the learners see {}: {words_seen}",
        task.len(),
        task.n_features(),
        task.class_counts().get("spam").copied().unwrap_or(0),
        task.class_counts().get("ham").copied().unwrap_or(0),
        match uniform.min_df {
            Some(k) => format!("the words in at least {k} e-mails of the training part"),
            None => "every word present in the training part".into(),
        }
    ));
    let describe = |mode: Mode| -> Result<String, Error> {
        let s = TextConfig::for_mode(mode)?.spec;
        let caps: Vec<String> = s
            .caps
            .iter()
            .map(|c| c.map_or("all".into(), |c| c.to_string()))
            .collect();
        Ok(format!(
            "{}: {} splits, caps train/validation/test {}, {}, C grid {:?}, budgets {:?}",
            mode.as_str(),
            s.splits,
            caps.join("/"),
            s.min_df
                .map_or("every word of the training part".into(), |k| format!(
                    "the words in at least {k} training e-mails"
                )),
            s.grid,
            s.budgets
        ))
    };
    res.protocol.push(format!(
        "the two modes — {}; {} (an LP fit costs about n^3/3 flops per interior-point iteration in the vocabulary n, or (2m)^3/3 in the training e-mails m when solved in example space: quick keeps both near 1000)",
        describe(Mode::Quick).map_err(Outcome::Failed)?,
        describe(Mode::Full).map_err(Outcome::Failed)?
    ));
    res.protocol.push(
        "N counts deleted words with uniform values; with MI values it is a sum of values (which sum to the number of words), so informative words cost more of it; the attack uses the same values for every learner, and attacks ham and spam alike (DSX §4)".into(),
    );
    res.protocol.push(format!(
        "the words with the largest MI with the label over the whole corpus: {}",
        top.iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for (study, r) in studies {
        absorb(&mut res, study, r);
    }
    res.grid = uniform.grid.clone();
    res.budgets = uniform.budgets.clone();
    res.repetitions = uniform.splits;
    res.summary = json!({
        "top_mi_words": top.iter().map(|(w, v)| json!({"word": w, "mi": v})).collect::<Vec<_>>(),
        "vocabulary": {"min": lo, "max": hi},
        "paper_claims": [
            "DSX §4.2 (spam, Fig. 3): the robust algorithms beat SVM under deletion and corruption and are roughly equal to TGRS; here on words of real e-mails instead of Spambase's 57 features",
        ],
    });
    Ok(res)
}

fn text(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let tc = TextConfig::for_mode(cfg.mode).map_err(Outcome::Failed)?;
    text_with(&tc, cfg, obs)
}

/// Moves the rows of a study run on its own into `res` under the task name `task`, with its
/// failed fits and solver record.
fn absorb(res: &mut ExperimentResult, task: &str, study: ExperimentResult) {
    for mut row in study.rows {
        row.task = Some(task.into());
        res.rows.push(row);
    }
    res.failures.extend(study.failures);
    res.solver.add(&study.solver);
    res.solver_notes.extend(study.solver_notes);
}

fn icml_random(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let spam_raw = load_builtin("spambase", cfg)?;
    let spam = binary_task(&spam_raw, &BinaryTask::Natural).map_err(Outcome::Failed)?;
    let mut res = base(
        "icml_random",
        "Dekel & Shamir ICML 2008 §5 Fig. 1: Globerson-Roweis protocol, 50 training points, N random non-zero features deleted",
        cfg,
    );
    let lineup = Learner::lineup(&["lp", "svm", "fdrop"]).map_err(Outcome::Failed)?;
    let spec = |budgets: Vec<f64>| CurveSpec {
        learners: lineup.clone(),
        attacks: vec![AttackMode::RandomDeletion],
        budgets,
        grid: quick_full(cfg.mode, log_grid(-1, 2, 1), log_grid(-2, 3, 1)),
        splits: quick_full(cfg.mode, 10, 20),
        validation: 0.1,
        test: 0.5,
        caps: quick_full(
            cfg.mode,
            [Some(50), Some(50), Some(500)],
            [Some(50), Some(50), None],
        ),
        min_df: None,
        scaling: Scaling::MaxAbs,
        values: Values::Uniform,
        sparse: true,
    };
    let spam_spec = spec(quick_full(
        cfg.mode,
        vec![0.0, 10.0, 20.0, 30.0, 50.0],
        vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0],
    ));
    res.protocol = spec_notes(&spam_spec, cfg.mode);
    res.protocol.push("LP (GLPK in the paper) is trained with budget N = the number of features deleted at test time, uniform values; GR of the paper is FDROP (its own method) here".into());
    let mut r1 = base("spam", "", cfg);
    run_curves(
        "icml_random/spam",
        &[("spam".into(), spam)],
        &spam_spec,
        cfg,
        obs,
        &mut r1,
    )?;
    absorb(&mut res, "spam", r1);
    res.budgets = spam_spec.budgets.clone();
    res.grid = spam_spec.grid.clone();
    res.repetitions = spam_spec.splits;
    match load_builtin("mnist10k", cfg) {
        Ok(mnist) => {
            let t = binary_task(&mnist, &BinaryTask::Pair("4".into(), "7".into()))
                .map_err(Outcome::Failed)?;
            let mspec = spec(quick_full(
                cfg.mode,
                vec![0.0, 25.0, 50.0, 100.0, 150.0],
                vec![0.0, 25.0, 50.0, 75.0, 100.0, 125.0, 150.0],
            ));
            let mut r2 = base("mnist", "", cfg);
            run_curves(
                "icml_random/mnist-4v7",
                &[("mnist-4v7".into(), t)],
                &mspec,
                cfg,
                obs,
                &mut r2,
            )?;
            absorb(&mut res, "mnist-4v7", r2);
            res.protocol.push(format!(
                "MNIST 4 vs 7 from the 10k MNIST test set, budgets {:?}",
                mspec.budgets
            ));
        }
        Err(Outcome::MissingData { message, .. }) => {
            obs.on_note("icml_random", &message);
            res.protocol
                .push(format!("MNIST 4 vs 7 panel skipped: {message}"));
        }
        Err(o) => return Err(o),
    }
    res.summary = json!({ "paper_claims": [
        "the LP-based method has a clear and substantial advantage over SVM and GR under random deletion (no numbers given)"
    ]});
    Ok(res)
}

fn pairs(which: &str, cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, Outcome> {
    let (dataset, fig) = match which {
        "usps" => ("usps", "DSX 2010 §4.2, Figs. 4-5 (USPS, 45 digit pairs)"),
        _ => (
            "mnist10k",
            "DSX 2010 §4.2, Figs. 6-7 (MNIST, 45 digit pairs)",
        ),
    };
    let raw = load_builtin(dataset, cfg)?;
    let mut tasks: Vec<(String, Dataset)> = all_pairs(&raw)
        .map_err(Outcome::Failed)?
        .into_iter()
        .map(|((a, b), d)| (format!("{a}v{b}"), d))
        .collect();
    let n_pairs = quick_full(cfg.mode, if which == "usps" { 10 } else { 8 }, 45);
    if tasks.len() > n_pairs {
        // a seeded subset of the pairs, kept in their natural order
        use rand::seq::index::sample;
        let mut rng = rng_for_stream(experiment_seed(cfg.seed, which), 7);
        let mut pick = sample(&mut rng, tasks.len(), n_pairs).into_vec();
        pick.sort_unstable();
        tasks = pick.into_iter().map(|k| tasks[k].clone()).collect();
    }
    let spec = CurveSpec {
        learners: quick_full(
            cfg.mode,
            Learner::lineup(&["lp", "o2b", "svm"]).map_err(Outcome::Failed)?,
            Learner::lineup(&ROBUST).map_err(Outcome::Failed)?,
        ),
        attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
        budgets: quick_full(
            cfg.mode,
            vec![0.0, 10.0, 25.0, 50.0],
            vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0],
        ),
        grid: quick_full(cfg.mode, log_grid(-1, 1, 1), log_grid(-2, 2, 1)),
        splits: quick_full(cfg.mode, 1, 3),
        validation: 0.1,
        test: 0.3,
        caps: quick_full(
            cfg.mode,
            [
                Some(if which == "usps" { 300 } else { 250 }),
                Some(100),
                Some(400),
            ],
            [Some(1000), Some(300), None],
        ),
        min_df: None,
        scaling: Scaling::MaxAbs,
        values: Values::MutualInformation,
        sparse: true,
    };
    let names: Vec<&str> = tasks.iter().map(|t| t.0.as_str()).collect();
    let pair_note = format!("pairs run: {} of 45 ({})", tasks.len(), names.join(", "));
    let mut res = finish_curve(
        which,
        fig,
        &tasks,
        &spec,
        &[
            &pair_note,
            "pixels scaled by their training max (blank stays 0); features zero on the whole training part dropped; MI feature values (DSX §4.2) on the training part; the attack uses the same values for every learner",
            if which == "usps" {
                "data: the 1100-per-digit USPS (the paper: the 9298-image USPS of Hastie et al.)"
            } else {
                "data: the 10k MNIST test set (the paper: all 70k MNIST images)"
            },
        ],
        &[
            "the robust algorithms significantly outperform SVM and TGRS under deletion and corruption, averaged over pairs and per pair",
        ],
        cfg,
        obs,
    )?;
    res.summary["pairs"] = json!(names);
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{CsrMatrix, Features, Sign};

    /// A word that is the label has the label's entropy as MI (ln 2 for balanced classes); a
    /// word independent of it has none; the list is sorted and named by the feature names.
    #[test]
    fn top_mi_words_ranks_the_label_word_first() {
        // 8 documents: `spammy` in exactly the spam, `common` in all, `half` in half of each
        let (mut indptr, mut indices) = (vec![0], Vec::new());
        for i in 0..8 {
            let spam = i < 4;
            for (j, present) in [spam, true, i % 2 == 0].into_iter().enumerate() {
                if present {
                    indices.push(j);
                }
            }
            indptr.push(indices.len());
        }
        let values = vec![1.0; indices.len()];
        let x = CsrMatrix::try_new(8, 3, indptr, indices, values).unwrap();
        let y = (0..8)
            .map(|i| if i < 4 { Sign::Pos } else { Sign::Neg })
            .collect();
        let d = Dataset::binary("w", Features::Sparse(x), y)
            .unwrap()
            .with_feature_names(vec!["spammy".into(), "common".into(), "half".into()])
            .unwrap();
        let top = top_mi_words(&d, 2).unwrap();
        assert_eq!(top.len(), 2);
        assert_eq!(top[0].0, "spammy");
        assert!(
            (top[0].1 - std::f64::consts::LN_2).abs() < 1e-12,
            "{}",
            top[0].1
        );
        // the other two carry no information; ties go alphabetically
        assert_eq!(top[1], ("common".to_string(), 0.0));
    }
}
