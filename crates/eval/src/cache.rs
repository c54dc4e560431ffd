//! The unit cache that makes a long run resumable: every finished unit of work (one split of one
//! task of a budget-curve experiment; one repetition of one cell of the other experiments, all
//! but `synth1`, which takes seconds) is appended to a JSON-lines file as soon as it finishes,
//! and a later run with the same cache skips every unit it finds there. `reproduce --full`
//! keeps its cache in `docs/results/cache-full.jsonl`, which can be committed, so the papers'
//! protocol can be run in sittings (`--stop-after`, `--only`) on any machine.
//!
//! A unit's key names the experiment, the task and the split, and hashes everything its result
//! depends on as data: the mode, the master seed, the split's seed, the protocol
//! ([`CurveSpec`], serialised) and the task's data (its fingerprint). A change to any of them
//! misses the cache. A change to the code (a solver, a learner) does not: delete the cache file
//! to recompute with new code. Each line records the seconds the unit took, so the total compute
//! of the protocol is known however many sittings it took ([`UnitCache::seconds`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bulwark_core::{Dataset, Error};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::curve::CurveSpec;
use crate::experiment::Mode;

/// Format tag hashed into every key (bump it when a cached unit's meaning changes).
const FORMAT: &str = "bulwark-unit-cache-v1";

/// One line of the cache file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Line {
    key: String,
    experiment: String,
    task: String,
    split: usize,
    seconds: f64,
    /// The unit's result: a [`crate::curve::SplitOutcome`] for the budget-curve experiments, the
    /// experiment's own unit type for the others ([`UnitCache::put`]).
    outcome: serde_json::Value,
}

/// A JSON-lines cache of finished units, shared by the workers of a run.
#[derive(Debug)]
pub struct UnitCache {
    path: PathBuf,
    entries: Mutex<HashMap<String, (f64, serde_json::Value)>>,
    file: Mutex<File>,
    /// Lines that could not be read (e.g. the last line of a run killed while writing it).
    skipped: usize,
}

impl PartialEq for UnitCache {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl UnitCache {
    /// Opens (or creates) the cache at `path`. Unreadable lines are skipped and counted
    /// ([`UnitCache::skipped_lines`]); their units run again.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut entries = HashMap::new();
        let mut skipped = 0;
        match File::open(path) {
            Ok(f) => {
                for line in BufReader::new(f).lines() {
                    let line = line.map_err(|e| Error::io(path, e))?;
                    if line.trim().is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Line>(&line) {
                        Ok(l) => {
                            entries.insert(l.key, (l.seconds, l.outcome));
                        }
                        Err(_) => skipped += 1,
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            entries: Mutex::new(entries),
            file: Mutex::new(file),
            skipped,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Units stored.
    pub fn len(&self) -> usize {
        self.entries.lock().expect("cache lock").len()
    }

    /// Whether no unit is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines of the file that could not be read when it was opened.
    pub fn skipped_lines(&self) -> usize {
        self.skipped
    }

    /// The stored result of `key` read as a `T`, and the seconds it took; a line that does not
    /// read as a `T` is a miss (the unit runs again).
    pub fn get<T: DeserializeOwned>(&self, key: &UnitKey) -> Option<(f64, T)> {
        let (seconds, v) = self
            .entries
            .lock()
            .expect("cache lock")
            .get(&key.0)
            .cloned()?;
        serde_json::from_value(v).ok().map(|t| (seconds, t))
    }

    /// Stores a finished unit: appended to the file and flushed at once, so a run stopped at any
    /// point keeps every unit finished before. A non-finite number is written as `null`, which
    /// reads back as a miss for a field that is not optional (JSON has no NaN).
    pub fn put<T: Serialize>(
        &self,
        key: &UnitKey,
        (experiment, task, split): (&str, &str, usize),
        seconds: f64,
        outcome: &T,
    ) -> Result<(), Error> {
        let invalid = |e: serde_json::Error| {
            Error::io(
                &self.path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        };
        let value = serde_json::to_value(outcome).map_err(invalid)?;
        let line = Line {
            key: key.0.clone(),
            experiment: experiment.into(),
            task: task.into(),
            split,
            seconds,
            outcome: value.clone(),
        };
        let mut text = serde_json::to_string(&line).map_err(invalid)?;
        text.push('\n');
        {
            let mut f = self.file.lock().expect("cache lock");
            f.write_all(text.as_bytes())
                .and_then(|()| f.flush())
                .map_err(|e| Error::io(&self.path, e))?;
        }
        self.entries
            .lock()
            .expect("cache lock")
            .insert(key.0.clone(), (seconds, value));
        Ok(())
    }

    /// Seconds of compute stored for the units whose key starts with `experiment` + `/`
    /// (`None`: every unit).
    pub fn seconds(&self, experiment: Option<&str>) -> f64 {
        let prefix = experiment.map(|e| format!("{e}/"));
        let entries = self.entries.lock().expect("cache lock");
        // summed in key order, so the same cache gives the same total to the last bit
        let mut parts: Vec<(&String, f64)> = entries
            .iter()
            .filter(|(k, _)| prefix.as_ref().is_none_or(|p| k.starts_with(p.as_str())))
            .map(|(k, (s, _))| (k, *s))
            .collect();
        parts.sort_by(|a, b| a.0.cmp(b.0));
        // (+ 0.0: an empty sum of f64 is -0.0)
        parts.iter().map(|(_, s)| s).sum::<f64>() + 0.0
    }
}

/// The key of one unit: `experiment/task/split/<hash>` (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitKey(String);

impl UnitKey {
    /// The key of split `split` (seed `split_seed`) of task `task` (fingerprint
    /// `data_fingerprint`) of `experiment` run with `spec` in `mode` from master seed `seed`.
    pub fn new(
        unit: (&str, &str, usize),
        (mode, seed, split_seed): (Mode, u64, u64),
        spec: &CurveSpec,
        data_fingerprint: &str,
    ) -> Self {
        Self::hashed(
            unit,
            &[
                FORMAT,
                mode.as_str(),
                &seed.to_string(),
                &split_seed.to_string(),
                &serde_json::to_string(spec).expect("a CurveSpec serialises"),
                data_fingerprint,
            ],
        )
    }

    /// The key of unit `split` of `task` of an experiment that draws its own data: everything
    /// the result depends on is the mode, the master seed and `protocol` (serialised).
    pub fn of(
        unit: (&str, &str, usize),
        (mode, seed): (Mode, u64),
        protocol: &impl Serialize,
    ) -> Self {
        let protocol = serde_json::to_string(protocol).expect("a protocol serialises");
        Self::hashed(unit, &[FORMAT, mode.as_str(), &seed.to_string(), &protocol])
    }

    /// `experiment/task/split/` and 12 bytes of the SHA-256 of the length-prefixed `parts`.
    fn hashed((experiment, task, split): (&str, &str, usize), parts: &[&str]) -> Self {
        let mut h = Sha256::new();
        for part in parts {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        let hex: String = h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Self(format!("{experiment}/{task}/{split}/{hex}"))
    }
}

/// The fingerprint of a task's data as the cache keys it ([`bulwark_models::fingerprint()`]).
pub fn data_fingerprint(data: &Dataset) -> String {
    bulwark_models::fingerprint(data)
}

/// Runs `jobs` on `cfg.jobs` workers for an experiment that keeps its own unit type `T`: each
/// unit is looked up in the unit cache first ([`RunConfig::cache`], under the key, task name
/// and split `key` gives) and stored as soon as it finishes; with a deadline no unit starts after
/// it, and the run ends [`crate::Outcome::Incomplete`]. A unit's error ends it
/// [`crate::Outcome::Failed`]. `run` reports its unit to the observer.
pub(crate) fn run_units<J: Sync, T: Serialize + DeserializeOwned + Send>(
    name: &str,
    cfg: &crate::experiment::RunConfig,
    obs: &dyn crate::experiment::Observer,
    jobs: &[J],
    key: impl Fn(&J) -> (UnitKey, String, usize) + Sync,
    run: impl Fn(&J) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, crate::Outcome> {
    let cached: Vec<Option<T>> = jobs
        .iter()
        .map(|j| {
            let c = cfg.cache.as_ref()?;
            c.get::<T>(&key(j).0).map(|(_, t)| t)
        })
        .collect();
    let n_cached = cached.iter().filter(|c| c.is_some()).count();
    obs.on_start(name, jobs.len() as u64);
    if n_cached > 0 {
        obs.on_resume(name, n_cached as u64);
    }
    let todo: Vec<usize> = (0..jobs.len()).filter(|&k| cached[k].is_none()).collect();
    let ran = crate::curve::run_jobs(&todo, cfg.jobs, |&k| {
        if cfg.stopping() {
            return None;
        }
        let started = std::time::Instant::now();
        let out = run(&jobs[k]);
        if let (Some(cache), Ok(o)) = (&cfg.cache, &out) {
            let (key, task, split) = key(&jobs[k]);
            if let Err(e) = cache.put(
                &key,
                (name, &task, split),
                started.elapsed().as_secs_f64(),
                o,
            ) {
                obs.on_note(name, &format!("cannot store a finished unit: {e}"));
            }
        }
        Some(out)
    });
    let mut outs: Vec<Option<Result<T, Error>>> = cached.into_iter().map(|c| c.map(Ok)).collect();
    for (&k, r) in todo.iter().zip(ran) {
        outs[k] = r;
    }
    let done = outs.iter().filter(|o| o.is_some()).count();
    if done < jobs.len() {
        return Err(crate::Outcome::Incomplete {
            done,
            total: jobs.len(),
        });
    }
    outs.into_iter()
        .map(|o| o.expect("every unit ran").map_err(crate::Outcome::Failed))
        .collect()
}

/// For the experiments' tests: `run` from `cfg` with a fresh unit cache stores `units` units,
/// a second run past its deadline resumes from them to the same result (`table` of each), and
/// without the cache it ends incomplete.
#[cfg(test)]
pub(crate) fn assert_resumes(
    mut cfg: crate::experiment::RunConfig,
    run: impl Fn(
        &crate::experiment::RunConfig,
    ) -> Result<crate::experiment::ExperimentResult, crate::Outcome>,
    table: fn(&crate::experiment::ExperimentResult) -> serde_json::Value,
    units: usize,
) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("cache.jsonl");
    cfg.cache = Some(std::sync::Arc::new(UnitCache::open(&path).expect("cache")));
    let first = run(&cfg).unwrap_or_else(|o| panic!("{o:?}"));
    let reopened = UnitCache::open(&path).expect("cache");
    assert_eq!(reopened.len(), units);
    cfg.cache = Some(std::sync::Arc::new(reopened));
    cfg.deadline = Some(std::time::Instant::now());
    let again = run(&cfg).unwrap_or_else(|o| panic!("{o:?}"));
    assert_eq!(table(&again), table(&first));
    cfg.cache = None;
    match run(&cfg) {
        Err(crate::Outcome::Incomplete { done: 0, total }) => assert_eq!(total, units),
        other => panic!("{other:?}"),
    }
}
