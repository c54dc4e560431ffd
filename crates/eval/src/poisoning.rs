//! `poisoning`: every training-time defence of the workspace against every contamination model,
//! adaptive adversaries included, on real data — the comparison none of the papers makes.
//!
//! With a unit cache (`reproduce --full`) every finished cell and repetition is kept, and a run
//! stopped by its deadline resumes from them.
//!
//! **Protocol** (ours):
//!
//! - data: train / validation / test parts of a seeded shuffle of each set (sizes in
//!   `Protocol::for_mode`), features scaled onto `[−1, 1]` by the clean training part's range
//!   and centred on its mean (the preprocessing is part of the data's definition, as if the
//!   feature ranges were known; everything else the defender learns from contaminated data; the
//!   KLS learners assume centred, isotropic data, and averaging without centring predicts
//!   little more than the majority class), then one constant feature appended for every
//!   defence (no other bias);
//! - the adversary knows the clean training part: its reference model is logistic regression
//!   (`λ = 1e-4`, intercept) fitted on it, `β̂` its weights without the intercept;
//! - contamination at rate `ε` of the training part, and the same model at the same rate on the
//!   validation part (a defender has no clean data): label flips of each example with
//!   probability `ε`; flips of the `round(εm)` positive examples nearest the reference boundary;
//!   KLS malicious noise (each example replaced with probability `ε`) by the coordinated pull
//!   (points `r z`, `z ⟂ β̂`, `r` the median clean norm, label +1) and by the evasive pull along
//!   `z` just below A_mu's cut at the paper's `c = 10`; appended outliers
//!   (`round(εm/(1−ε))` of them, so that they are a fraction `ε`): RoLR's (`U[−10, 10]` features,
//!   labels `−sign⟨β̂, x⟩`), outliers at the inliers' norms aimed along `β̂` (jitter 0.5), and the
//!   four **adaptive** adversaries, each [`bulwark_adversary::AimedOutliers`] (copies of the clean
//!   examples most aligned with `β̂`, labelled against the reference model, jitter 0.1) at the
//!   norm where its defence gives a point the most weight: far out (`10×` the largest clean
//!   norm) against the losses whose gradient grows with `‖x‖` (LR, SVM, the LP, GURU,
//!   averaging); just inside the median + 3 MAD norm threshold of RoLR and LR+P; and just below
//!   the smallest removal cut of the validated grids of A_mu and A_mlc (`‖x‖² < τ` keeps
//!   `(w·x)² < τ` along every direction, so no variance test removes them). Copies span the
//!   directions the data uses: points along `±β̂` alone are absorbed on real data, where a
//!   learner turns to the many other directions that separate the classes;
//! - defences, each with its hyper-parameters chosen on the contaminated validation part (ties:
//!   the first, most conservative, grid value): RoLR (`n₁` a fraction of the training part,
//!   MAD threshold, certified gap 1e-4), LR+P (the same threshold, then LR), averaging, A_mu
//!   (on the data divided by `2√d`, which puts every clean point in the unit ball), A_mlc
//!   (SmoothBoost, `κ = γ = 0.1`, over A_mlcw with constant `c₀`), GURU (batch, certified gap
//!   1e-6), L2 logistic regression, the linear SVM (dual CD, gap 1e-3) and the DSX LP at
//!   `N = 0`;
//! - clean test error, mean ± standard error over the repetitions; `ε = 0` is one clean cell
//!   shared by every contamination model.

mod contaminate;
mod defences;
mod protocol;
mod report;

pub use report::{plots, table_json, to_markdown};

use std::time::Instant;

use bulwark_core::{Dataset, Error};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::experiment::{ExperimentResult, Observer, Row, RunConfig};
use crate::guru::loaded;
use crate::learner::SolverTally;
use crate::stats::MeanSe;
use defences::unit;
use protocol::task_data;

/// The experiment's name.
pub const NAME: &str = "poisoning";

/// The defences, in table order (keys of `poisoning.json`).
pub const DEFENCES: [(&str, &str); 9] = [
    ("rolr", "RoLR"),
    ("lr_p", "LR+P"),
    ("average", "averaging"),
    ("amu", "A_mu"),
    ("amlc", "A_mlc"),
    ("guru", "GURU"),
    ("lr", "LR"),
    ("svm", "SVM"),
    ("lp", "DSX LP (N = 0)"),
];

/// The contamination models, in table order; the last four are the adaptive adversaries.
pub const MODELS: [(&str, &str); 10] = [
    ("random_flips", "random label flips"),
    ("boundary_flips", "flips nearest the reference boundary"),
    ("coordinated", "KLS coordinated pull"),
    ("evasive", "KLS evasive pull (A_mu, c = 10)"),
    ("rolr_outliers", "RoLR outliers"),
    ("norm_matched", "outliers at the inliers' norm"),
    ("adaptive_far", "adaptive: far out, against the clean model"),
    ("adaptive_norm", "adaptive: just inside the norm threshold"),
    ("adaptive_amu", "adaptive: just below A_mu's cut"),
    ("adaptive_amlc", "adaptive: just below A_mlc's cut"),
];

/// Index of the first adaptive model in [`MODELS`].
const FIRST_ADAPTIVE: usize = 6;

/// The adaptive model built against defence `k`.
fn own_adaptive(k: usize) -> usize {
    match DEFENCES[k].0 {
        "rolr" | "lr_p" => 7,
        "amu" => 8,
        "amlc" => 9,
        _ => 6,
    }
}

/// A_mlc's `κ = ε` and `γ`.
const KAPPA: f64 = 0.1;
const GAMMA: f64 = 0.1;
/// The paper's A_mu constant (the non-adaptive evasive pull aims at it).
const AMU_PAPER_C: f64 = 10.0;
/// RoLR's certified relative gap (at 1e-6 its active-set step takes up to 6 s a fit on USPS).
const ROLR_TOLERANCE: f64 = 1e-4;
/// An error above the clean error by this much is a breakdown.
const BREAKDOWN: f64 = 0.1;
/// The rate at which the adaptive adversaries are judged.
const JUDGE_RATE: f64 = 0.2;

/// Where a set's examples come from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
enum Source {
    /// A built-in data set, its natural binary task or a pair of classes.
    Builtin(&'static str, Option<(&'static str, &'static str)>),
    /// A built-in image set's pair of classes with every `pool × pool` block of its
    /// `width × height` images replaced by its mean ([`bulwark_data::mean_pool`]).
    Pooled {
        set: &'static str,
        pair: (&'static str, &'static str),
        image: [usize; 2],
        pool: usize,
    },
    /// RoLR's model (Feng et al. §6): `x ~ N(0, I_20)`, `y = sign(⟨β, x⟩ + v)`, `v ~ N(0, 0.5²)`.
    RolrModel,
    /// KLS's: uniform on the unit ball of `R^50`, `y = sign(u·x)`.
    KlsBall,
}

#[derive(Debug, Clone, Serialize)]
struct SetSpec {
    name: &'static str,
    source: Source,
    /// Train, validation and test sizes.
    sizes: [usize; 3],
}

const fn set(name: &'static str, source: Source, sizes: [usize; 3]) -> SetSpec {
    SetSpec {
        name,
        source,
        sizes,
    }
}

#[derive(Debug, Clone, Serialize)]
struct Protocol {
    sets: Vec<SetSpec>,
    /// Rates, `0` first.
    rates: Vec<f64>,
    seeds: usize,
    lr_l2: Vec<f64>,
    svm_c: Vec<f64>,
    svm_passes: usize,
    guru_sigma: Vec<f64>,
    lp_c: Vec<f64>,
    rolr_frac: Vec<f64>,
    amu_c: Vec<f64>,
    amlc_c0: Vec<f64>,
    amlc_rounds: usize,
    /// Whether scikit-learn's references run (where it is installed).
    sklearn: bool,
}

/// One defence in one unit.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct DefenceOut {
    /// Clean test error of the chosen fit (`None`: every grid point failed).
    error: Option<f64>,
    /// The chosen hyper-parameter (`None`: the defence has none, or no fit).
    chosen: Option<f64>,
    tally: SolverTally,
    seconds: f64,
}

/// One unit: one set, one repetition, one (model, rate) cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct UnitOut {
    defences: Vec<DefenceOut>,
    /// Training rows the MAD norm filter removed: appended outliers, and the other rows (for the
    /// flip and malicious-noise models, which replace rather than append, every removed row is
    /// counted in the second entry; `mad_filter_removed` in the details calls them `dirty` and
    /// `clean`).
    filter_removed: [usize; 2],
    /// scikit-learn's references on the same parts (`--full`, where it is installed).
    sklearn: Option<crate::sklearn::References>,
    notes: Vec<String>,
}

/// Runs the experiment.
pub fn run(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, crate::Outcome> {
    run_with(cfg, obs, &Protocol::for_mode(cfg.mode))
}

/// The cache key of repetition `rep` of cell `task` of set `s`: the mode, the master seed, the
/// set's place and spec, its data's fingerprint and the rest of the protocol (`rest`: `proto`
/// without its sets), so that changing one set's spec leaves the other sets' units cached.
fn unit_key(
    proto: &Protocol,
    rest: &Protocol,
    s: usize,
    task: &str,
    rep: usize,
    cfg: &RunConfig,
    fingerprint: &str,
) -> crate::cache::UnitKey {
    crate::cache::UnitKey::of(
        (NAME, task, rep),
        (cfg.mode, cfg.seed),
        &(s, &proto.sets[s], rest, fingerprint),
    )
}

/// `(set, repetition, model, rate)`; the clean cell is `(s, r, 0, 0)`.
type Job = (usize, usize, usize, usize);

fn run_with(
    cfg: &RunConfig,
    obs: &dyn Observer,
    proto: &Protocol,
) -> Result<ExperimentResult, crate::Outcome> {
    let start = Instant::now();
    assert_eq!(proto.rates.first(), Some(&0.0), "rates start at 0");
    let tasks: Vec<Option<Dataset>> = proto
        .sets
        .iter()
        .map(|spec| loaded(spec.name, task_data(spec, cfg)))
        .collect::<Result<_, _>>()?;
    let fingerprints: Vec<String> = tasks
        .iter()
        .zip(&proto.sets)
        .map(|(t, s)| match (t, &cfg.cache) {
            (Some(d), Some(_)) => crate::cache::data_fingerprint(d),
            _ => s.name.to_string(),
        })
        .collect();
    let rest = Protocol {
        sets: Vec::new(),
        ..proto.clone()
    };
    let base = crate::experiments::experiment_seed(cfg.seed, NAME);
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
    let mut jobs: Vec<Job> = Vec::new();
    for s in 0..proto.sets.len() {
        for r in 0..proto.seeds {
            jobs.push((s, r, 0, 0));
            for model in 0..MODELS.len() {
                for e in 1..proto.rates.len() {
                    jobs.push((s, r, model, e));
                }
            }
        }
    }
    let cell_name = |&(s, _, model, e): &Job| {
        if e == 0 {
            format!("{}/clean", proto.sets[s].name)
        } else {
            format!(
                "{}/{}/eps{}",
                proto.sets[s].name, MODELS[model].0, proto.rates[e]
            )
        }
    };
    let outs: Vec<UnitOut> = crate::cache::run_units(
        NAME,
        cfg,
        obs,
        &jobs,
        |job| {
            let task = cell_name(job);
            let key = unit_key(proto, &rest, job.0, &task, job.1, cfg, &fingerprints[job.0]);
            (key, task, job.1)
        },
        |job @ &(s, r, model, e)| {
            let seed = base ^ ((s as u64) << 40) ^ r as u64;
            let out = unit(
                proto,
                &proto.sets[s],
                tasks[s].as_ref(),
                (model, e),
                seed,
                sklearn.as_ref(),
            );
            obs.on_unit(NAME, &format!("{} #{r}", cell_name(job)));
            out
        },
    )?;
    // cells[s][model][e] = the repetitions (the clean cell under every model)
    let (ns, nr) = (proto.sets.len(), proto.rates.len());
    let mut cells: Vec<Vec<Vec<Vec<&UnitOut>>>> =
        vec![vec![vec![Vec::new(); nr]; MODELS.len()]; ns];
    for (&(s, _, model, e), o) in jobs.iter().zip(&outs) {
        if o.defences.len() != DEFENCES.len() {
            return Err(crate::Outcome::Failed(Error::param(
                "poisoning unit",
                "a malformed result",
                "one result per defence",
            )));
        }
        if e == 0 {
            for cell in cells[s].iter_mut() {
                cell[0].push(o);
            }
        } else {
            cells[s][model][e].push(o);
        }
    }
    let mut res = crate::experiments::base(
        NAME,
        "none of the papers: every training-time defence against every contamination model, adaptive adversaries included, on real data",
        cfg,
    );
    res.budgets = proto.rates.clone();
    res.repetitions = proto.seeds;
    res.protocol = proto.notes();
    // the references' absence is noted only where a unit lacks them: a run that finds every
    // unit in the cache gives the same report with or without Python
    let lacking = outs.iter().filter(|o| o.sklearn.is_none()).count();
    if proto.sklearn && lacking > 0 {
        let why = skipped
            .unwrap_or_else(|| "scikit-learn references failed (the units' notes say why)".into());
        res.protocol.push(format!(
            "{why}; {lacking} of {} units have none, and a set's table shows a reference only where all its units have it",
            outs.len()
        ));
    }
    let stat = |v: &[&UnitOut], k: usize| -> MeanSe {
        MeanSe::of(
            &v.iter()
                .filter_map(|o| o.defences[k].error)
                .collect::<Vec<_>>(),
        )
    };
    let mut errors = serde_json::Map::new();
    let mut best = serde_json::Map::new();
    let mut breakdown = serde_json::Map::new();
    let mut adaptive = serde_json::Map::new();
    let mut removed = serde_json::Map::new();
    for (s, spec) in proto.sets.iter().enumerate() {
        let mut by_model = serde_json::Map::new();
        let mut best_m = serde_json::Map::new();
        let mut brk_m = serde_json::Map::new();
        let mut rem_m = serde_json::Map::new();
        // means[model][k][e]
        let mut means = vec![vec![vec![f64::NAN; nr]; DEFENCES.len()]; MODELS.len()];
        for (model, (mkey, mtitle)) in MODELS.iter().enumerate() {
            let mut by_def = serde_json::Map::new();
            let mut brk_d = serde_json::Map::new();
            for (k, (dkey, dtitle)) in DEFENCES.iter().enumerate() {
                let list: Vec<Value> = (0..nr)
                    .map(|e| {
                        let st = stat(&cells[s][model][e], k);
                        means[model][k][e] = st.mean;
                        json!({"eps": proto.rates[e], "mean": st.mean, "stderr": st.stderr, "n": st.n})
                    })
                    .collect();
                by_def.insert((*dkey).into(), Value::Array(list));
                let clean = means[model][k][0];
                let b = (1..nr)
                    .find(|&e| means[model][k][e] > clean + BREAKDOWN)
                    .map(|e| proto.rates[e]);
                brk_d.insert((*dkey).into(), json!(b));
                for e in 0..nr {
                    let mut tally = SolverTally::default();
                    let outs = &cells[s][model][e];
                    if e == 0 && model > 0 {
                        // the clean cell is counted once
                    } else {
                        for o in outs {
                            tally.add(&o.defences[k].tally);
                        }
                        res.solver.add(&tally);
                    }
                    res.per_task.push(Row {
                        task: Some(spec.name.to_string()),
                        learner: (*dtitle).into(),
                        attack: (*mtitle).into(),
                        budget: proto.rates[e],
                        error: stat(outs, k),
                        chosen_c: None,
                        paper: None,
                        paper_pm: None,
                        solver: tally,
                    });
                }
            }
            // scikit-learn's references, where every unit of the set has them
            for (j, (rkey, _)) in crate::sklearn::REFERENCES.iter().enumerate() {
                let present = cells[s][model]
                    .iter()
                    .flatten()
                    .all(|o| o.sklearn.is_some());
                if !present {
                    continue;
                }
                let list: Vec<Value> = (0..nr)
                    .map(|e| {
                        let v: Vec<f64> = cells[s][model][e]
                            .iter()
                            .filter_map(|o| o.sklearn.map(|r| r.errors()[j]))
                            .collect();
                        let st = MeanSe::of(&v);
                        json!({"eps": proto.rates[e], "mean": st.mean, "stderr": st.stderr, "n": st.n})
                    })
                    .collect();
                by_def.insert((*rkey).into(), Value::Array(list));
            }
            // the best defence: the smallest mean error over the non-zero rates
            let avg = |k: usize| (1..nr).map(|e| means[model][k][e]).sum::<f64>() / (nr - 1) as f64;
            let kb = (0..DEFENCES.len())
                .min_by(|&a, &b| avg(a).total_cmp(&avg(b)))
                .unwrap_or(0);
            best_m.insert(
                (*mkey).into(),
                json!({"defence": DEFENCES[kb].0, "mean_error": avg(kb)}),
            );
            by_model.insert((*mkey).into(), Value::Object(by_def));
            brk_m.insert((*mkey).into(), Value::Object(brk_d));
            let rem: Vec<Value> = (1..nr)
                .map(|e| {
                    let v = &cells[s][model][e];
                    let f = |j: usize| {
                        v.iter().map(|o| o.filter_removed[j] as f64).sum::<f64>()
                            / v.len().max(1) as f64
                    };
                    json!({"eps": proto.rates[e], "dirty": f(0), "clean": f(1)})
                })
                .collect();
            rem_m.insert((*mkey).into(), Value::Array(rem));
        }
        // the adaptive check at JUDGE_RATE
        let mut adapt_d = serde_json::Map::new();
        if let Some(e) = proto.rates.iter().position(|&r| r == JUDGE_RATE) {
            for (k, (dkey, _)) in DEFENCES.iter().enumerate() {
                let own = own_adaptive(k);
                let (wm, worst) = (0..FIRST_ADAPTIVE)
                    .map(|model| (model, means[model][k][e]))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .unwrap_or((0, f64::NAN));
                adapt_d.insert(
                    (*dkey).into(),
                    json!({
                        "own": MODELS[own].0,
                        "own_error": means[own][k][e],
                        "worst_fixed": MODELS[wm].0,
                        "worst_fixed_error": worst,
                        "raised": means[own][k][e] > worst,
                    }),
                );
            }
        }
        for e in 0..nr {
            for model in 0..MODELS.len() {
                if e == 0 && model > 0 {
                    continue;
                }
                for o in &cells[s][model][e] {
                    res.solver_notes.extend(o.notes.iter().cloned());
                }
            }
        }
        errors.insert(spec.name.into(), Value::Object(by_model));
        best.insert(spec.name.into(), Value::Object(best_m));
        breakdown.insert(spec.name.into(), Value::Object(brk_m));
        adaptive.insert(spec.name.into(), Value::Object(adapt_d));
        removed.insert(spec.name.into(), Value::Object(rem_m));
    }
    // how often each defence is the best, and how often the adaptive adversary is the worst
    let mut best_counts: serde_json::Map<String, Value> = DEFENCES
        .iter()
        .map(|d| (d.0.to_string(), json!(0)))
        .collect();
    for by_model in best.values() {
        for b in by_model.as_object().into_iter().flat_map(|m| m.values()) {
            if let Some(c) = b["defence"].as_str().and_then(|k| best_counts.get_mut(k)) {
                *c = json!(c.as_u64().unwrap_or(0) + 1);
            }
        }
    }
    let checks: Vec<bool> = adaptive
        .values()
        .flat_map(|by_def| by_def.as_object().into_iter().flat_map(|m| m.values()))
        .map(|a| a["raised"].as_bool() == Some(true))
        .collect();
    // the seconds each defence took, over every unit
    let seconds: serde_json::Map<String, Value> = DEFENCES
        .iter()
        .enumerate()
        .map(|(k, (key, _))| {
            (
                (*key).to_string(),
                json!(outs.iter().map(|o| o.defences[k].seconds).sum::<f64>()),
            )
        })
        .collect();
    res.summary = json!({
        "errors": errors,
        "best": best,
        "breakdown": breakdown,
        "adaptive": adaptive,
        "best_counts": best_counts,
        "adaptive_raised": {"raised": checks.iter().filter(|&&r| r).count(), "of": checks.len()},
        "mad_filter_removed": removed,
        "defence_seconds": seconds,
        "rates": proto.rates,
        "seeds": proto.seeds,
        "sets": proto.sets.iter().map(|s| s.name).collect::<Vec<_>>(),
        "defences": DEFENCES.iter().map(|d| json!({"key": d.0, "title": d.1})).collect::<Vec<_>>(),
        "models": MODELS.iter().map(|d| json!({"key": d.0, "title": d.1})).collect::<Vec<_>>(),
        "breakdown_margin": BREAKDOWN,
        "judge_rate": JUDGE_RATE,
    });
    res.runtime_seconds = start.elapsed().as_secs_f64();
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Mode, Silent};

    pub(super) fn tiny() -> Protocol {
        let mut p = Protocol::for_mode(Mode::Quick);
        p.sets = vec![
            set(
                "ionosphere",
                Source::Builtin("ionosphere", None),
                [80, 60, 100],
            ),
            set("kls_ball", Source::KlsBall, [150, 80, 300]),
        ];
        p.rates = vec![0.0, 0.2];
        p.seeds = 2;
        p.lr_l2 = vec![1e-2, 1e-4];
        p.svm_c = vec![0.25, 4.0];
        p.guru_sigma = vec![2.0, 0.5];
        p.lp_c = vec![1.0];
        p.rolr_frac = vec![0.1, 0.3];
        p.amu_c = vec![50.0, 0.5];
        p.amlc_c0 = vec![10.0, 1.0];
        p.amlc_rounds = 30;
        p
    }

    /// Every cell of a tiny protocol is present with `n` repetitions, the same seed gives the
    /// same table on any thread count, and the far adaptive adversary breaks LR where random
    /// flips do not.
    #[test]
    fn tiny_run_layout_and_reproducibility() {
        let proto = tiny();
        let mut cfg = RunConfig::quick(11);
        cfg.jobs = 2;
        let res = run_with(&cfg, &Silent, &proto).unwrap_or_else(|o| panic!("{o:?}"));
        let t = table_json(&res);
        for set in ["ionosphere", "kls_ball"] {
            for (model, _) in MODELS {
                for (k, _) in DEFENCES {
                    let cell = &t[set][model][k];
                    for e in 0..2 {
                        let m = cell[e]["mean"].as_f64();
                        assert!(
                            m.is_some_and(|m| (0.0..=1.0).contains(&m)),
                            "{set} {model} {k}"
                        );
                        assert_eq!(cell[e]["n"].as_u64(), Some(2), "{set} {model} {k}");
                    }
                }
            }
        }
        let ball = &t["kls_ball"];
        let lr_far = ball["adaptive_far"]["lr"][1]["mean"].as_f64().unwrap();
        let lr_flip = ball["random_flips"]["lr"][1]["mean"].as_f64().unwrap();
        assert!(lr_far > lr_flip + 0.1, "{lr_far} vs {lr_flip}");
        cfg.jobs = 1;
        let again = run_with(&cfg, &Silent, &proto).unwrap_or_else(|o| panic!("{o:?}"));
        assert_eq!(table_json(&again), t);
        assert_eq!(again.summary["adaptive"], res.summary["adaptive"]);
        let md = to_markdown(&res);
        assert!(
            md.contains("## The best defence per contamination model"),
            "{md}"
        );
        assert_eq!(plots(&res).len(), 2 * (MODELS.len() + 1));
    }

    /// A unit's cache key covers its own set's spec and the shared protocol, not the other
    /// sets' specs: changing one set keeps the others' finished units.
    #[test]
    fn a_unit_key_ignores_the_other_sets() {
        let cfg = RunConfig::quick(0);
        let key = |p: &Protocol, s: usize| {
            let rest = Protocol {
                sets: Vec::new(),
                ..p.clone()
            };
            unit_key(p, &rest, s, "t", 0, &cfg, "fp")
        };
        let p = tiny();
        let mut other = p.clone();
        other.sets[1].sizes[0] += 1;
        assert_eq!(key(&p, 0), key(&other, 0));
        assert_ne!(key(&p, 1), key(&other, 1));
        let mut shared = p.clone();
        shared.lp_c.push(10.0);
        assert_ne!(key(&p, 0), key(&shared, 0));
    }

    /// With a unit cache a run stores every unit and resumes past a deadline to the same table.
    #[test]
    fn a_cached_run_resumes_to_the_same_table() {
        let mut proto = tiny();
        proto.sets.truncate(1);
        proto.seeds = 1;
        // 1 set x 1 repetition x (1 clean + 10 models x 1 rate)
        crate::cache::assert_resumes(
            RunConfig::quick(4),
            |cfg| run_with(cfg, &Silent, &proto),
            table_json,
            11,
        );
    }
}
