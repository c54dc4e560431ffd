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

mod curves;
mod dsx;
mod synth1;
mod text;

pub use curves::curve_study;
pub use synth1::{Synth1Config, synth1_with};
pub use text::{TextConfig, text_with, top_mi_words};

use std::time::Instant;

use bulwark_core::{Dataset, Error};
use bulwark_data::load;
use serde_json::json;

use crate::experiment::{ExperimentResult, Observer, RunConfig};
use crate::learner::SolverTally;
use dsx::{breast, icml_random, pairs, spam, synth2};
use synth1::synth1;
use text::text;

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
