//! The error-versus-budget machinery the DSX studies share: running a curve study through the
//! unit cache (with `--refit`), its protocol notes, and folding studies into one result.

use bulwark_core::{Dataset, Error};
use serde_json::json;

use super::{Outcome, base, experiment_seed};
use crate::curve::{self, CurveSpec};
use crate::experiment::{ExperimentResult, Mode, Observer, RunConfig};
use crate::learner::Learner;

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
pub(super) fn run_curves(
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

pub(super) fn spec_notes(spec: &CurveSpec, mode: Mode) -> Vec<String> {
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
            "scaling {:?} fitted on the training part; feature values {:?}; LP/O2B trained with the budget N they are attacked with; FDROP with the same values and budget N (features of total value at most N deleted; with unit values k = round(N) features)",
            spec.scaling, spec.values
        ),
        format!("mode {}", mode.as_str()),
    ]
}

pub(super) fn finish_curve(
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

pub(super) fn quick_full<T>(mode: Mode, quick: T, full: T) -> T {
    match mode {
        Mode::Quick => quick,
        Mode::Full => full,
    }
}

/// The four learners of DSX §4, by their registry names.
pub(super) const ROBUST: [&str; 4] = ["lp", "o2b", "svm", "fdrop"];

/// Moves the rows of a study run on its own into `res` under the task name `task`, with its
/// failed fits and solver record.
pub(super) fn absorb(res: &mut ExperimentResult, task: &str, study: ExperimentResult) {
    for mut row in study.rows {
        row.task = Some(task.into());
        res.rows.push(row);
    }
    res.failures.extend(study.failures);
    res.solver.add(&study.solver);
    res.solver_notes.extend(study.solver_notes);
}
