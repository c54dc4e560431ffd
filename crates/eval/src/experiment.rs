//! What an experiment produces, how a run is configured, and how progress is reported.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::stats::MeanSe;

/// How much of the paper's protocol to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Fewer splits, subsampled pairs and training sets, coarser grids; every reduction is
    /// listed in the experiment's `protocol` notes. Every experiment together: about 25 minutes
    /// on 2 cores (`docs/results/run-quick.json` records the last run).
    Quick,
    /// The papers' protocol (10 splits, all 45 pairs, finer grids); training sets of the pair
    /// studies are still capped (stated in the notes).
    Full,
}

impl Mode {
    /// `quick` / `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }
}

/// One run of the harness.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Quick or full.
    pub mode: Mode,
    /// Master seed: every random choice of every experiment derives from it.
    pub seed: u64,
    /// Data directory (`--data-dir`; when `None`, `BULWARK_DATA`, else the repository's `data/`).
    pub data_dir: Option<PathBuf>,
    /// Worker threads (results do not depend on it).
    pub jobs: usize,
    /// Where finished units of the experiments (all but `synth1`) are kept and looked up
    /// ([`crate::cache`]); `None`: every unit runs.
    pub cache: Option<Arc<crate::cache::UnitCache>>,
    /// No unit starts after this instant; an experiment with units left ends
    /// [`crate::Outcome::Incomplete`] (its finished units are in the cache).
    pub deadline: Option<Instant>,
    /// Once set (Ctrl-C in `bulwark-reproduce`), no unit starts: as at the deadline, an
    /// experiment with units left ends [`crate::Outcome::Incomplete`], its finished units kept.
    pub cancel: bulwark_core::Cancel,
    /// Learners (registry names) to recompute in the units found in the cache, the rest of
    /// each unit kept (`--refit`; the budget-curve experiments): after a change to one
    /// learner's solver, its cells are brought up to date without running the others again.
    pub refit: Vec<String>,
}

impl RunConfig {
    /// Whether a new unit must not start: the deadline has passed or stopping was asked for.
    pub fn stopping(&self) -> bool {
        self.cancel.is_requested() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Quick mode, seed 0, no data directory, one thread.
    pub fn quick(seed: u64) -> Self {
        Self {
            mode: Mode::Quick,
            seed,
            data_dir: None,
            jobs: 1,
            cache: None,
            deadline: None,
            cancel: bulwark_core::Cancel::new(),
            refit: Vec::new(),
        }
    }
}

/// Progress callbacks (the binary draws progress bars; the library never prints). Every method
/// has a default, so an observer implements only what it shows.
pub trait Observer: Sync {
    /// An experiment starts with `total` units of work (splits × tasks).
    fn on_start(&self, _experiment: &str, _total: u64) {}
    /// `cached` of the units were found in the cache and will not run again.
    fn on_resume(&self, _experiment: &str, _cached: u64) {}
    /// One unit finished.
    fn on_unit(&self, _experiment: &str, _what: &str) {}
    /// A note worth showing (e.g. a fit that failed and was skipped).
    fn on_note(&self, _experiment: &str, _note: &str) {}
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {}

/// One cell of a result table: a learner under an attack at a budget, averaged over splits
/// (and tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The task (digit pair `"3v5"`), or `None` for the experiment-wide average.
    pub task: Option<String>,
    /// Learner name.
    pub learner: String,
    /// `deletion`, `corruption`, `random-deletion`, or a fixed protocol name.
    pub attack: String,
    /// The budget `N` (for random deletion: the number of deleted non-zero features).
    pub budget: f64,
    /// Test error: mean and standard error over the repetitions.
    pub error: MeanSe,
    /// Median of the `C` chosen on the validation split over the repetitions.
    pub chosen_c: Option<f64>,
    /// The paper's number for this cell, where the paper states one.
    pub paper: Option<f64>,
    /// The paper's "±" for this cell, where stated.
    pub paper_pm: Option<f64>,
    /// How the fits behind this cell (every `C` of the grid, every split) were solved.
    #[serde(default)]
    pub solver: crate::learner::SolverTally,
}

/// Everything an experiment produced; written as `<name>.json` (plus CSV, Markdown, SVG).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentResult {
    /// Short name (`synth1`, `breast`, …), used for the file names and `--only`.
    pub name: String,
    /// What it reproduces (paper, section, figure).
    pub reproduces: String,
    /// `quick` or `full`.
    pub mode: Mode,
    /// The master seed of the run.
    pub seed: u64,
    /// The `C` grid searched on the validation split.
    pub grid: Vec<f64>,
    /// Budgets on the x-axis.
    pub budgets: Vec<f64>,
    /// Number of repetitions (splits) per task.
    pub repetitions: usize,
    /// Protocol choices and reductions, in words.
    pub protocol: Vec<String>,
    /// The averaged table.
    pub rows: Vec<Row>,
    /// Per-task rows (digit pairs), empty otherwise.
    pub per_task: Vec<Row>,
    /// Wall-clock seconds of this run (a resumed run: of this sitting only).
    pub runtime_seconds: f64,
    /// With a unit cache: seconds of compute of every unit of the experiment over every sitting
    /// (one worker each), which a resumed run's wall time does not show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_seconds: Option<f64>,
    /// Fits that failed and were skipped (learner, C, message).
    pub failures: Vec<String>,
    /// How every fit of the experiment was solved (fallback solvers, relaxed tolerances,
    /// unconverged solvers), counted.
    #[serde(default)]
    pub solver: crate::learner::SolverTally,
    /// One line per fit that was not answered cleanly by its first solver.
    #[serde(default)]
    pub solver_notes: Vec<String>,
    /// Experiment-specific machine-readable summary (synth1: `svm`, `lp_n20`).
    pub summary: serde_json::Value,
}

impl ExperimentResult {
    /// The rows of one learner and attack, sorted by budget.
    pub fn curve(&self, learner: &str, attack: &str) -> Vec<&Row> {
        let mut r: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.learner == learner && r.attack == attack)
            .collect();
        r.sort_by(|a, b| a.budget.total_cmp(&b.budget));
        r
    }
}
