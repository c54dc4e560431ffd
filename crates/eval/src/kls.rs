//! `kls`: the experiment Klivans, Long & Servedio (2009) imply but never ran — error against the
//! malicious-noise rate `η` for averaging, A_mu, A_mlc (SmoothBoost over outlier removal and
//! averaging), SmoothBoost over plain averaging, logistic regression, the linear SVM and RoLR,
//! and from it the largest `η` at which each keeps error `≤ ε`, against the dimension `n`.
//!
//! With a unit cache (`reproduce --full`) every finished cell and seed is kept, and a run stopped
//! by its deadline resumes from them.
//!
//! **Protocol** (ours; the paper has no experiments):
//!
//! - target `u` a uniform unit vector, labels `sign(u·x)`; `m` training points from the uniform
//!   distribution on the unit ball (Theorem 1's), the standard Gaussian and the centred
//!   exponential `Exp(1) − 1` (isotropic log-concave, Theorem 2's; the exponential is asymmetric,
//!   so averaging is biased even without noise), `n ∈ {10, 50, 200}`;
//! - malicious noise (`bulwark_adversary::MaliciousNoise`, each example replaced with
//!   probability `η`): the coordinated pull (every dirty point `r·z`, `z ⟂ u`, label +1; `r = 1`
//!   on the ball, `√n`, the typical clean norm, on the isotropic laws), the evasive pull (the
//!   same along `z`, scaled so that `(z·x)²` is just below the removal threshold of the defence
//!   run with practical constants: A_mu's `0.5 ln m / n` on the ball, A_mlcw's `c₀ ln(n/κ)`
//!   elsewhere), flipped labels (a clean point with its label flipped) and random points
//!   (uniform in the ball of the largest clean norm, random labels);
//! - error: `angle(u, v)/π` exactly for linear hypotheses on the rotation-invariant laws (KLS
//!   eq. (4)), Monte Carlo on fresh clean test points otherwise (the boosted ensembles; every
//!   learner on the exponential law);
//! - learners: averaging; A_mu with the paper's `c = 10` and with `c = 0.5` (the ball only: its
//!   unit-ball filter removes every isotropic point); A_mlc (SmoothBoost, `κ = 0.1`, `γ = 0.1`,
//!   `c₀ = 1`, the 0.9-quantile output scale); SmoothBoost over averaging (Theorem 3's
//!   algorithm); L2-regularised logistic regression (`λ = 1e-4`) and the linear SVM (`C = 1`,
//!   certified relative duality gap 1e-3: at 1e-6 dual coordinate descent needs 50 000 passes on
//!   the exponential law), both without bias as the targets have none; RoLR told the number of outliers `round(η m)`,
//!   without its norm threshold (the noise has bounded norms, and the paper's threshold with an
//!   estimated `σ_x` removes every point of the ball at n = 200), certified to a relative gap of
//!   1e-6. No learner sees clean validation data.

use std::time::Instant;

use bulwark_adversary::{
    Distribution, MaliciousAdversary, MaliciousNoise, halfspace_data, random_unit_vector,
    rotation_invariant_error,
};
use bulwark_contamination::{
    AmuParams, AveragingParams, NormThreshold, RolrParams, SmoothBoostParams, WeakLearner,
};
use bulwark_core::{
    Contamination, Dataset, DecisionFunction, Ensemble, Error, Features, Fit, FitReport,
    LinearModel, RowView, Sign, rng_for_stream,
};
use bulwark_online::{LogregParams, SvmParams};
use faer::{Accum, Mat, MatRef, Par};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::experiment::{ExperimentResult, Mode, Observer, Row, RunConfig};
use crate::learner::SolverTally;
use crate::plot::{Curve, LinePlot};
use crate::report::{num, numbers};
use crate::stats::MeanSe;

/// The experiment's name.
pub const NAME: &str = "kls";

/// The learners, in table order (keys of `kls.json`).
const LEARNERS: [(&str, &str); 8] = [
    ("average", "averaging"),
    ("amu_paper", "A_mu (c = 10)"),
    ("amu", "A_mu (c = 0.5)"),
    ("amlc", "A_mlc"),
    ("boost_avg", "SmoothBoost(avg)"),
    ("lr", "LR"),
    ("svm", "SVM"),
    ("rolr", "RoLR"),
];

/// A_mu's practical constant.
const AMU_C: f64 = 0.5;
/// A_mlc's `κ = ε`, `γ` and `c₀`.
const KAPPA: f64 = 0.1;
const C0: f64 = 1.0;

/// The adversaries, in table order.
const ADVERSARIES: [(&str, &str); 4] = [
    ("coordinated", "coordinated pull"),
    ("evasive", "evasive pull"),
    ("flipped", "flipped labels"),
    ("random", "random points"),
];

/// The target errors of the breakdown table.
const EPSILONS: [f64; 3] = [0.05, 0.1, 0.2];

#[derive(Debug, Clone, Serialize)]
struct Protocol {
    dists: Vec<(&'static str, Distribution)>,
    dims: Vec<usize>,
    etas: Vec<f64>,
    m: usize,
    seeds: usize,
    n_test: usize,
}

impl Protocol {
    fn for_mode(mode: Mode) -> Self {
        let mut dists = vec![
            ("ball", Distribution::UnitBall),
            ("exponential", Distribution::CenteredExponential),
        ];
        match mode {
            Mode::Quick => Self {
                dists,
                dims: vec![10, 50, 200],
                etas: vec![0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2],
                m: 4000,
                seeds: 5,
                n_test: 10_000,
            },
            Mode::Full => {
                dists.insert(1, ("gaussian", Distribution::Gaussian));
                Self {
                    dists,
                    dims: vec![10, 50, 200],
                    etas: vec![0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2],
                    m: 10_000,
                    seeds: 10,
                    n_test: 20_000,
                }
            }
        }
    }
    fn notes(&self) -> Vec<String> {
        vec![
            format!(
                "target u uniform on the sphere, labels sign(u.x); m = {} training points from {}; n in {:?}; eta in {:?}; {} seeds per cell (fresh u, sample and noise each)",
                self.m,
                self.dists
                    .iter()
                    .map(|d| d.0)
                    .collect::<Vec<_>>()
                    .join(", "),
                self.dims,
                self.etas,
                self.seeds
            ),
            format!(
                "malicious noise, each example replaced with probability eta: coordinated pull (r z, z orthogonal to u, label +1; r = 1 on the ball, sqrt(n) on the isotropic laws), evasive pull (along z just below the practical removal threshold: A_mu's {AMU_C} ln m / n on the ball, A_mlcw's c0 ln(n/kappa) = {C0} ln(n/{KAPPA}) elsewhere), flipped labels, random points in the ball of the largest clean norm with random labels"
            ),
            format!(
                "error: angle(u, v)/pi exactly for linear hypotheses on the ball and the Gaussian (KLS eq. (4)); Monte Carlo on {} fresh clean points for the boosted ensembles and for every learner on the exponential law",
                self.n_test
            ),
            format!(
                "learners: averaging; A_mu with c = 10 (the paper's) and c = {AMU_C} on the ball only (its unit-ball filter drops isotropic points); A_mlc = SmoothBoost (kappa = {KAPPA}, gamma = 0.1, c0 = {C0}, output scale the 0.9-quantile of |v.x|: the paper's 3 n ln m would need about 1e9 rounds); SmoothBoost over plain averaging (Theorem 3); logistic regression (L2 1e-4) and the linear SVM (C = 1, certified relative duality gap 1e-3), both without bias; RoLR with n1 = round(eta m), no norm threshold (the noise has bounded norms; the paper's threshold with an estimated sigma_x removes every ball point at n = 200), relative gap 1e-6"
            ),
        ]
    }
    fn learners(&self, dist: &str) -> Vec<usize> {
        (0..LEARNERS.len())
            .filter(|&k| dist == "ball" || !LEARNERS[k].0.starts_with("amu"))
            .collect()
    }
}

/// One repetition of one cell: the error of each learner (`NaN` where it does not apply) and
/// what the solvers did.
#[derive(Debug, Clone)]
struct UnitOut {
    error: [f64; 8],
    /// Points A_mu (c = 0.5) removed, and A_mlc's rounds.
    amu_removed: f64,
    amlc_rounds: f64,
    tally: [SolverTally; 8],
    notes: Vec<String>,
}

/// A [`UnitOut`] as the unit cache keeps it (JSON has no NaN: a learner that does not apply
/// is `null`).
#[derive(Debug, Serialize, Deserialize)]
struct CachedUnit {
    error: Vec<Option<f64>>,
    amu_removed: Option<f64>,
    amlc_rounds: Option<f64>,
    tally: Vec<SolverTally>,
    notes: Vec<String>,
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl From<&UnitOut> for CachedUnit {
    fn from(o: &UnitOut) -> Self {
        Self {
            error: o.error.iter().map(|&e| finite(e)).collect(),
            amu_removed: finite(o.amu_removed),
            amlc_rounds: finite(o.amlc_rounds),
            tally: o.tally.to_vec(),
            notes: o.notes.clone(),
        }
    }
}

impl CachedUnit {
    /// Back to a unit; `None` when the line has another shape (the unit runs again).
    fn into_unit(self) -> Option<UnitOut> {
        let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let error: Vec<f64> = self.error.into_iter().map(nan).collect();
        Some(UnitOut {
            error: error.try_into().ok()?,
            amu_removed: nan(self.amu_removed),
            amlc_rounds: nan(self.amlc_rounds),
            tally: self.tally.try_into().ok()?,
            notes: self.notes,
        })
    }
}

fn adversary(a: usize, dist: Distribution, m: usize, n: usize) -> MaliciousAdversary {
    let ball = dist == Distribution::UnitBall;
    match a {
        0 => MaliciousAdversary::CoordinatedPull {
            angle: 0.0,
            radius: if ball { 1.0 } else { (n as f64).sqrt() },
        },
        1 => MaliciousAdversary::EvasivePull {
            threshold: if ball {
                AMU_C * (m as f64).ln() / n as f64 // A_mu step 3, practical constant
            } else {
                C0 * (n as f64 / KAPPA).ln() // A_mlcw step 3
            },
            directions: 1,
        },
        2 => MaliciousAdversary::FlippedLabels,
        _ => MaliciousAdversary::RandomPoints,
    }
}

fn tally(t: &mut SolverTally, notes: &mut Vec<String>, r: &FitReport, what: &str) {
    t.fits += 1;
    if !r.converged {
        t.not_converged += 1;
        notes.push(format!("{what}: {}", r.summary()));
    }
}

/// The error of the hypothesis `h` (`linear`: its weights) against `u`.
struct Judge<'a> {
    u: &'a [f64],
    exact: bool,
    test: &'a Dataset,
}

impl Judge<'_> {
    fn linear(&self, w: &[f64]) -> Result<f64, Error> {
        if self.exact {
            rotation_invariant_error(self.u, w)
        } else {
            Ok(self.mc(|x| x.dot(w)))
        }
    }
    /// The error of `sign(Σ_t α_t clip(w_t·x + b_t, −1, 1))` on the test set, the members'
    /// scores of every test point by one matrix product (the test set is dense).
    fn ensemble(&self, e: &Ensemble<LinearModel>) -> f64 {
        let (mt, n, k) = (self.test.len(), self.test.n_features(), e.members().len());
        let Features::Dense(x) = self.test.features() else {
            return self.mc(|x| e.decision(x));
        };
        let x = MatRef::from_row_major_slice(x.as_slice(), mt, n);
        let w = Mat::from_fn(n, k, |j, t| e.members()[t].weights()[j]);
        let mut s = Mat::<f64>::zeros(mt, k);
        faer::linalg::matmul::matmul(s.as_mut(), Accum::Replace, x, w.as_ref(), 1.0, Par::Seq);
        let y = self.test.binary_labels().expect("binary test set");
        let wrong = (0..mt)
            .filter(|&i| {
                let score: f64 = (0..k)
                    .map(|t| {
                        let h = &e.members()[t];
                        e.alphas()[t] * (s[(i, t)] + h.bias()).clamp(-1.0, 1.0)
                    })
                    .sum();
                Sign::of_score(score) != y[i]
            })
            .count();
        wrong as f64 / mt as f64
    }
    fn mc(&self, h: impl Fn(RowView<'_>) -> f64) -> f64 {
        let y = self.test.binary_labels().expect("binary test set");
        let wrong = (0..self.test.len())
            .filter(|&i| Sign::of_score(h(self.test.row(i))) != y[i])
            .count();
        wrong as f64 / self.test.len() as f64
    }
}

fn unit(
    proto: &Protocol,
    d: usize,
    n: usize,
    a: usize,
    eta: f64,
    seed: u64,
) -> Result<UnitOut, Error> {
    let (dname, dist) = proto.dists[d];
    let mut rng = rng_for_stream(seed, 1);
    let u = random_unit_vector(n, &mut rng)?;
    let clean = halfspace_data(dist, &u, proto.m, &mut rng)?;
    let test = halfspace_data(dist, &u, proto.n_test, &mut rng_for_stream(seed, 2))?;
    let noise = MaliciousNoise {
        eta,
        adversary: adversary(a, dist, proto.m, n),
        target: Some(u.clone()),
    };
    let (train, _) = noise.contaminate(&clean, &mut rng)?;
    let judge = Judge {
        u: &u,
        exact: dist != Distribution::CenteredExponential,
        test: &test,
    };
    let mut out = UnitOut {
        error: [f64::NAN; 8],
        amu_removed: f64::NAN,
        amlc_rounds: f64::NAN,
        tally: Default::default(),
        notes: Vec::new(),
    };
    let what = |k: usize| {
        format!(
            "{dname} n={n} {} eta={eta} {}",
            ADVERSARIES[a].0, LEARNERS[k].1
        )
    };
    for k in proto.learners(dname) {
        let w = what(k);
        let (t, notes) = (&mut out.tally[k], &mut out.notes);
        out.error[k] = match LEARNERS[k].0 {
            "average" => {
                let f = AveragingParams::new().fit(&train)?;
                tally(t, notes, &f.report, &w);
                judge.linear(f.model.weights())?
            }
            "amu_paper" | "amu" => {
                let c = if LEARNERS[k].0 == "amu" { AMU_C } else { 10.0 };
                let f = AmuParams::new().constant(c).fit(&train)?;
                tally(t, notes, &f.report, &w);
                if c == AMU_C {
                    out.amu_removed = f.report.details["removed"];
                }
                judge.linear(f.model.weights())?
            }
            "amlc" | "boost_avg" => {
                let weak = if LEARNERS[k].0 == "amlc" {
                    WeakLearner::OutlierRemoval { c0: C0 }
                } else {
                    WeakLearner::Average
                };
                let f = SmoothBoostParams::new()
                    .kappa(KAPPA)
                    .weak(weak)
                    .fit(&train)?;
                // a run the weak learner ended (advantage below gamma) is the algorithm's
                // normal end at these noise rates: counted in the details, not as unconverged
                t.fits += 1;
                if f.report.details["stopped_by_round_limit"] != 0.0 {
                    t.not_converged += 1;
                    notes.push(format!("{w}: stopped at Servedio's round bound"));
                }
                if LEARNERS[k].0 == "amlc" {
                    out.amlc_rounds = f.report.details["rounds"];
                }
                judge.ensemble(&f.model)
            }
            "lr" => {
                let f = LogregParams::new().l2(1e-4).intercept(false).fit(&train)?;
                tally(t, notes, &f.report, &w);
                judge.linear(f.model.weights())?
            }
            "svm" => {
                let f = SvmParams::new()
                    .c(1.0)
                    .bias(false)
                    .tolerance(1e-3)
                    .fit(&train)?;
                tally(t, notes, &f.report, &w);
                judge.linear(f.model.weights())?
            }
            _ => {
                let n1 = (eta * proto.m as f64).round() as usize;
                // no norm threshold: the noise here has bounded norms, and the paper's threshold
                // with an estimated sigma_x removes every point of the ball at n = 200
                let f = RolrParams::new()
                    .outliers(n1.min(proto.m - 1))
                    .threshold(NormThreshold::None)
                    .tolerance(1e-6)
                    .fit(&train)?;
                tally(t, notes, &f.report, &w);
                judge.linear(f.model.weights())?
            }
        };
    }
    Ok(out)
}

/// Runs the experiment.
pub fn run(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, crate::Outcome> {
    run_with(cfg, obs, &Protocol::for_mode(cfg.mode))
}

type Job = (usize, usize, usize, usize, usize);

fn run_with(
    cfg: &RunConfig,
    obs: &dyn Observer,
    proto: &Protocol,
) -> Result<ExperimentResult, crate::Outcome> {
    let start = Instant::now();
    let base = crate::experiments::experiment_seed(cfg.seed, NAME);
    let mut jobs: Vec<Job> = Vec::new();
    // the largest dimension first, so the slowest units do not come last
    for ni in (0..proto.dims.len()).rev() {
        for d in 0..proto.dists.len() {
            for a in 0..ADVERSARIES.len() {
                for e in 0..proto.etas.len() {
                    for r in 0..proto.seeds {
                        jobs.push((d, ni, a, e, r));
                    }
                }
            }
        }
    }
    // with a unit cache (`--full`), finished units are kept and a later run resumes
    let outs = crate::cache::run_units(
        NAME,
        cfg,
        obs,
        &jobs,
        |&(d, ni, a, e, r)| {
            let task = format!(
                "{}/n{}/{}/eta{}",
                proto.dists[d].0, proto.dims[ni], ADVERSARIES[a].0, proto.etas[e]
            );
            let key = crate::cache::UnitKey::of((NAME, &task, r), (cfg.mode, cfg.seed), proto);
            (key, task, r)
        },
        |&(d, ni, a, e, r)| {
            // the same u, clean sample and test set for every adversary and rate of a repetition
            let seed = base ^ ((d as u64) << 48) ^ ((ni as u64) << 40) ^ r as u64;
            let (n, eta) = (proto.dims[ni], proto.etas[e]);
            let out = unit(proto, d, n, a, eta, seed).map(|o| CachedUnit::from(&o));
            obs.on_unit(
                NAME,
                &format!(
                    "{} n={n} {} eta {eta} #{r}",
                    proto.dists[d].0, ADVERSARIES[a].0
                ),
            );
            out
        },
    )?;
    // cells[d][ni][a][e] = the repetitions
    let mut cells: Vec<Vec<Vec<Vec<Vec<UnitOut>>>>> =
        vec![
            vec![vec![vec![Vec::new(); proto.etas.len()]; ADVERSARIES.len()]; proto.dims.len()];
            proto.dists.len()
        ];
    for (&(d, ni, a, e, _), o) in jobs.iter().zip(outs) {
        let o = o.into_unit().ok_or_else(|| {
            crate::Outcome::Failed(Error::param("kls unit", "a malformed result", "8 learners"))
        })?;
        cells[d][ni][a][e].push(o);
    }
    let mut res = crate::experiments::base(
        NAME,
        "Klivans, Long & Servedio 2009 (no experiments in the paper): error against the malicious-noise rate, and the largest tolerated rate against the dimension",
        cfg,
    );
    res.budgets = proto.etas.clone();
    res.repetitions = proto.seeds;
    res.protocol = proto.notes();
    let mut table = serde_json::Map::new();
    let mut tolerated = serde_json::Map::new();
    for (d, (dname, _)) in proto.dists.iter().enumerate() {
        let learners = proto.learners(dname);
        let mut by_adv = serde_json::Map::new();
        let mut tol_adv = serde_json::Map::new();
        for (a, (aname, atitle)) in ADVERSARIES.iter().enumerate() {
            let mut by_n = serde_json::Map::new();
            for (ni, &n) in proto.dims.iter().enumerate() {
                let mut by_l = serde_json::Map::new();
                for &k in &learners {
                    let list: Vec<Value> = proto
                        .etas
                        .iter()
                        .enumerate()
                        .map(|(e, &eta)| {
                            let v: Vec<f64> =
                                cells[d][ni][a][e].iter().map(|o| o.error[k]).collect();
                            let s = MeanSe::of(&v);
                            json!({"eta": eta, "mean": s.mean, "stderr": s.stderr, "n": s.n})
                        })
                        .collect();
                    by_l.insert(LEARNERS[k].0.into(), Value::Array(list));
                }
                let stat = |f: fn(&UnitOut) -> f64| -> Vec<Value> {
                    (0..proto.etas.len())
                        .map(|e| {
                            let v: Vec<f64> = cells[d][ni][a][e].iter().map(f).collect();
                            let s = MeanSe::of(&v);
                            json!({"mean": s.mean, "stderr": s.stderr})
                        })
                        .collect()
                };
                if *dname == "ball" {
                    by_l.insert("amu_removed".into(), Value::Array(stat(|o| o.amu_removed)));
                }
                by_l.insert("amlc_rounds".into(), Value::Array(stat(|o| o.amlc_rounds)));
                by_n.insert(n.to_string(), Value::Object(by_l));
                for &k in &learners {
                    for (e, &eta) in proto.etas.iter().enumerate() {
                        let outs = &cells[d][ni][a][e];
                        let mut tally = SolverTally::default();
                        for o in outs {
                            tally.add(&o.tally[k]);
                        }
                        res.solver.add(&tally);
                        let v: Vec<f64> = outs.iter().map(|o| o.error[k]).collect();
                        res.per_task.push(Row {
                            task: Some(format!("{dname} n={n}")),
                            learner: LEARNERS[k].1.into(),
                            attack: (*atitle).into(),
                            budget: eta,
                            error: MeanSe::of(&v),
                            chosen_c: None,
                            paper: None,
                            paper_pm: None,
                            solver: tally,
                        });
                    }
                }
                for e in 0..proto.etas.len() {
                    for o in &cells[d][ni][a][e] {
                        res.solver_notes.extend(o.notes.iter().cloned());
                    }
                }
            }
            by_adv.insert((*aname).into(), Value::Object(by_n));
            // the largest η whose mean error is ≤ ε, per ε, learner and n
            let mut tol_eps = serde_json::Map::new();
            for eps in EPSILONS {
                let mut tol_l = serde_json::Map::new();
                for &k in &learners {
                    let per_n: Vec<Value> = (0..proto.dims.len())
                        .map(|ni| {
                            json!(largest_tolerated(&proto.etas, eps, |e| {
                                MeanSe::of(
                                    &cells[d][ni][a][e]
                                        .iter()
                                        .map(|o| o.error[k])
                                        .collect::<Vec<_>>(),
                                )
                                .mean
                            }))
                        })
                        .collect();
                    tol_l.insert(LEARNERS[k].0.into(), Value::Array(per_n));
                }
                tol_eps.insert(format!("eps{}", eps_key(eps)), Value::Object(tol_l));
            }
            tol_adv.insert((*aname).into(), Value::Object(tol_eps));
        }
        // against the worst adversary: the smallest over adversaries
        let mut worst = serde_json::Map::new();
        for eps in EPSILONS {
            let key = format!("eps{}", eps_key(eps));
            let mut tol_l = serde_json::Map::new();
            for &k in &learners {
                let per_n: Vec<Value> = (0..proto.dims.len())
                    .map(|ni| {
                        let v = ADVERSARIES
                            .iter()
                            .map(|(aname, _)| tol_adv[*aname][&key][LEARNERS[k].0][ni].clone())
                            .map(|v| v.as_f64())
                            .collect::<Vec<_>>();
                        // null (not even η = 0) wins
                        if v.iter().any(Option::is_none) {
                            Value::Null
                        } else {
                            json!(v.into_iter().flatten().fold(f64::INFINITY, f64::min))
                        }
                    })
                    .collect();
                tol_l.insert(LEARNERS[k].0.into(), Value::Array(per_n));
            }
            worst.insert(key, Value::Object(tol_l));
        }
        tol_adv.insert("worst".into(), Value::Object(worst));
        table.insert((*dname).into(), Value::Object(by_adv));
        tolerated.insert((*dname).into(), Value::Object(tol_adv));
    }
    res.summary = json!({
        "errors": table,
        "tolerated": tolerated,
        "dims": proto.dims,
        "etas": proto.etas,
        "m": proto.m,
        "seeds": proto.seeds,
        "epsilons": EPSILONS,
        "learners": LEARNERS.iter().map(|l| json!({"key": l.0, "title": l.1})).collect::<Vec<_>>(),
    });
    res.runtime_seconds = start.elapsed().as_secs_f64();
    Ok(res)
}

/// `0.05` → `"005"`: a JSON key without a dot (result README paths split on dots).
fn eps_key(eps: f64) -> String {
    format!("{:03}", (eps * 100.0).round() as u32)
}

/// The largest `η` of the grid such that the mean error is `≤ eps` at it and at every smaller
/// `η` of the grid; `None` when even `η = 0` is above.
fn largest_tolerated(etas: &[f64], eps: f64, err: impl Fn(usize) -> f64) -> Option<f64> {
    let mut best = None;
    for (e, &eta) in etas.iter().enumerate() {
        if err(e) <= eps {
            best = Some(eta);
        } else {
            break;
        }
    }
    best
}

/// A Markdown table's head: `first`, then one column per learner title.
fn table_head(first: &str, keys: &[(&str, &str)]) -> String {
    format!(
        "| {first} | {} |\n|---|{}",
        keys.iter().map(|k| k.1).collect::<Vec<_>>().join(" | "),
        "---|".repeat(keys.len())
    )
}

/// The Markdown report.
pub fn to_markdown(res: &ExperimentResult) -> String {
    use std::fmt::Write as _;
    let mut s = crate::report::header(res);
    let sum = &res.summary;
    let etas: Vec<f64> = numbers(&sum["etas"]);
    let dims: Vec<u64> = sum["dims"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let Some(errors) = sum["errors"].as_object() else {
        return s;
    };
    let top = etas.last().copied().unwrap_or(0.0);
    for (dname, by_adv) in errors {
        for (aname, atitle) in ADVERSARIES {
            for &n in &dims {
                let cell = &by_adv[aname][n.to_string()];
                let keys: Vec<(&str, &str)> = LEARNERS
                    .iter()
                    .copied()
                    .filter(|(k, _)| cell.get(*k).is_some())
                    .collect();
                let _ = writeln!(
                    s,
                    "\n## {dname}, n = {n}, {atitle}: test error, mean ± s.e.\n\n{}",
                    table_head("η", &keys)
                );
                for (e, eta) in etas.iter().enumerate() {
                    let row: Vec<String> = keys
                        .iter()
                        .map(|(k, _)| {
                            let c = &cell[*k][e];
                            format!("{:.3} ± {:.3}", num(&c["mean"]), num(&c["stderr"]))
                        })
                        .collect();
                    let _ = writeln!(s, "| {eta} | {} |", row.join(" | "));
                }
            }
        }
    }
    let _ = writeln!(
        s,
        "\n## The largest η with mean error ≤ ε against the worst of the four adversaries\n\n(— : above ε even without noise; ≥ {top}: still within ε at the grid's largest η. No learner can guarantee error ≤ ε against every malicious adversary once η > ε/(1 + ε) (Kearns and Li, cited by KLS), so a value above that only says these four adversaries are not the worst.)\n"
    );
    for (dname, tol) in sum["tolerated"].as_object().into_iter().flatten() {
        for eps in EPSILONS {
            let t = &tol["worst"][format!("eps{}", eps_key(eps))];
            let keys: Vec<(&str, &str)> = LEARNERS
                .iter()
                .copied()
                .filter(|(k, _)| t.get(*k).is_some())
                .collect();
            let _ = writeln!(s, "\n### {dname}, ε = {eps}\n\n{}", table_head("n", &keys));
            for (ni, n) in dims.iter().enumerate() {
                let row: Vec<String> = keys
                    .iter()
                    .map(|(k, _)| match t[*k][ni].as_f64() {
                        Some(v) if v >= top => format!("≥ {v}"),
                        Some(v) => format!("{v}"),
                        None => "—".into(),
                    })
                    .collect();
                let _ = writeln!(s, "| {n} | {} |", row.join(" | "));
            }
        }
    }
    crate::report::solver_outcomes(&mut s, res, "the learners");
    s
}

/// Per distribution and adversary: error against `η` at each `n`; per distribution and `ε`:
/// the largest tolerated `η` against `n` (log–log) beside the claimed scalings.
pub fn plots(res: &ExperimentResult) -> Vec<(String, LinePlot)> {
    let sum = &res.summary;
    let etas: Vec<f64> = numbers(&sum["etas"]);
    let dims: Vec<f64> = numbers(&sum["dims"]);
    let mut out = Vec::new();
    for (dname, by_adv) in sum["errors"].as_object().into_iter().flatten() {
        for (aname, atitle) in ADVERSARIES {
            for n in &dims {
                let cell = &by_adv[aname][format!("{n}")];
                let mut p = LinePlot::new(
                    format!("kls: {dname}, n = {n}, {atitle}"),
                    "malicious noise rate eta",
                    "test error",
                );
                for (k, title) in LEARNERS {
                    let Some(list) = cell.get(k).and_then(Value::as_array) else {
                        continue;
                    };
                    let mean = list.iter().map(|c| num(&c["mean"])).collect();
                    let se = list.iter().map(|c| num(&c["stderr"])).collect();
                    p = p.curve(Curve::new(title, etas.clone(), mean).with_err(se));
                }
                out.push((format!("kls_{dname}_{aname}_n{n}.svg"), p));
            }
        }
    }
    for (dname, tol) in sum["tolerated"].as_object().into_iter().flatten() {
        for eps in EPSILONS {
            let t = &tol["worst"][format!("eps{}", eps_key(eps))];
            let mut p = LinePlot::new(
                format!("kls: {dname}, largest eta with error <= {eps} (worst adversary)"),
                "dimension n",
                "tolerated eta",
            )
            .log_x(true)
            .log_y(true);
            let mut any = false;
            let mut anchors = Vec::new();
            for (k, title) in LEARNERS {
                let Some(list) = t.get(k).and_then(Value::as_array) else {
                    continue;
                };
                let pts: Vec<(f64, f64)> = dims
                    .iter()
                    .zip(list)
                    .filter_map(|(&n, v)| v.as_f64().filter(|v| *v > 0.0).map(|v| (n, v)))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                any = true;
                if k == "average" || k == "amu" {
                    anchors.push((k, pts[0]));
                }
                p = p.curve(Curve::new(
                    title,
                    pts.iter().map(|q| q.0).collect(),
                    pts.iter().map(|q| q.1).collect(),
                ));
            }
            // the claimed scalings, through the first point of the learner they describe
            for (k, (n0, v0)) in anchors {
                let f = |n: f64| {
                    if k == "amu" {
                        eps * eps / (n / eps).ln() // Thm 1: eps^2 / log(n/eps)
                    } else {
                        eps / n.sqrt() // averaging: eps / sqrt(n)
                    }
                };
                let label = if k == "amu" {
                    "scaling eps^2/log(n/eps) (Thm 1)"
                } else {
                    "scaling eps/sqrt(n) (averaging)"
                };
                let y = dims.iter().map(|&n| v0 * f(n) / f(n0)).collect();
                p = p.curve(Curve::new(label, dims.clone(), y));
            }
            if any {
                out.push((format!("kls_{dname}_tolerated_eps{}.svg", eps_key(eps)), p));
            }
        }
    }
    out
}

/// `kls.json`: `errors.DIST.ADVERSARY.N.LEARNER` = one `{eta, mean, stderr, n}` per rate (and
/// `amu_removed`, `amlc_rounds` as `{mean, stderr}` per rate), `tolerated.DIST.ADVERSARY.epsXXX.LEARNER`
/// = the largest tolerated rate per dimension (`null`: not even without noise; the grid's top
/// rate: at least that; `worst` is the minimum over the adversaries), and the grids.
pub fn table_json(res: &ExperimentResult) -> Value {
    res.summary.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Silent;

    #[test]
    fn the_tolerated_rate_is_the_last_of_the_leading_run() {
        let etas = [0.0, 0.01, 0.02, 0.05];
        let errs = [0.03, 0.04, 0.06, 0.02];
        assert_eq!(largest_tolerated(&etas, 0.05, |e| errs[e]), Some(0.01));
        assert_eq!(largest_tolerated(&etas, 0.01, |e| errs[e]), None);
        assert_eq!(largest_tolerated(&etas, 0.1, |e| errs[e]), Some(0.05));
        assert_eq!(eps_key(0.05), "005");
        assert_eq!(eps_key(0.2), "020");
    }

    #[test]
    fn the_ensemble_error_by_one_product_is_the_pointwise_one() {
        let mut rng = rng_for_stream(3, 0);
        let u = random_unit_vector(6, &mut rng).unwrap();
        let test = halfspace_data(Distribution::Gaussian, &u, 500, &mut rng).unwrap();
        let members: Vec<LinearModel> = (0..7)
            .map(|t| {
                let w = random_unit_vector(6, &mut rng).unwrap();
                LinearModel::try_new(w, 0.1 * t as f64 - 0.3).unwrap()
            })
            .collect();
        let e = Ensemble::try_new(members, vec![1.0, 0.5, 2.0, 1.0, 0.0, 1.0, 3.0]).unwrap();
        let judge = Judge {
            u: &u,
            exact: false,
            test: &test,
        };
        let (a, b) = (judge.ensemble(&e), judge.mc(|x| e.decision(x)));
        assert_eq!(a, b);
        assert!(a > 0.0);
    }

    /// A small protocol: the layout, every cell present, A_mu ahead of averaging under the
    /// coordinated pull at n = 50, and the same bits from the same seed on any thread count.
    #[test]
    fn small_run_layout_and_reproducibility() {
        let proto = Protocol {
            dists: vec![
                ("ball", Distribution::UnitBall),
                ("exponential", Distribution::CenteredExponential),
            ],
            dims: vec![10, 50],
            etas: vec![0.0, 0.1],
            m: 1500,
            seeds: 2,
            n_test: 2000,
        };
        let mut cfg = RunConfig::quick(5);
        cfg.jobs = 2;
        let res = run_with(&cfg, &Silent, &proto).unwrap_or_else(|o| panic!("{o:?}"));
        let t = table_json(&res);
        for dist in ["ball", "exponential"] {
            for (adv, _) in ADVERSARIES {
                for n in ["10", "50"] {
                    for (k, _) in LEARNERS {
                        let cell = &t["errors"][dist][adv][n][k];
                        if dist != "ball" && k.starts_with("amu") {
                            assert!(cell.is_null(), "{dist} {k}");
                            continue;
                        }
                        for e in 0..2 {
                            let m = cell[e]["mean"].as_f64();
                            assert!(
                                m.is_some_and(|m| (0.0..=1.0).contains(&m)),
                                "{dist} {adv} {n} {k}"
                            );
                            assert!(cell[e]["stderr"].as_f64().is_some());
                        }
                    }
                }
            }
        }
        let ball = &t["errors"]["ball"]["coordinated"]["50"];
        let (amu, avg) = (
            ball["amu"][1]["mean"].as_f64().unwrap(),
            ball["average"][1]["mean"].as_f64().unwrap(),
        );
        assert!(amu < avg, "{amu} vs {avg}");
        assert!(t["tolerated"]["ball"]["worst"]["eps020"]["average"].is_array());
        cfg.jobs = 1;
        let again = run_with(&cfg, &Silent, &proto).unwrap_or_else(|o| panic!("{o:?}"));
        assert_eq!(table_json(&again), t);
        let md = to_markdown(&res);
        assert!(md.contains("## ball, n = 50, coordinated pull"), "{md}");
        assert!(!plots(&res).is_empty());
    }

    /// With a unit cache a run stores every unit; a run past its deadline with that cache
    /// resumes from it to the same table, and without it ends incomplete.
    #[test]
    fn a_cached_run_resumes_to_the_same_table() {
        let proto = Protocol {
            dists: vec![("ball", Distribution::UnitBall)],
            dims: vec![10],
            etas: vec![0.0, 0.1],
            m: 400,
            seeds: 2,
            n_test: 500,
        };
        // 1 law x 1 dimension x 4 adversaries x 2 rates x 2 seeds
        crate::cache::assert_resumes(
            RunConfig::quick(4),
            |cfg| run_with(cfg, &Silent, &proto),
            table_json,
            16,
        );
    }
}
