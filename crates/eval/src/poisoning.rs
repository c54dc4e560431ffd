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

use std::time::Instant;

use bulwark_adversary::{
    AimedOutliers, Distribution, LabelNoise, LabelNoiseMode, MaliciousAdversary, MaliciousNoise,
    NormMatchedOutliers, RolrOutliers, halfspace_data, random_unit_vector,
};
use bulwark_contamination::{
    AmuParams, AveragingParams, NormFilter, NormThreshold, RolrParams, SmoothBoostParams,
    WeakLearner,
};
use bulwark_core::{
    Contamination, Dataset, DecisionFunction, Ensemble, Error, Features, Fit, LinearModel,
    RowFilter, Sign, rng_for_stream,
};
use bulwark_gaussian::{GuruParams, Solver};
use bulwark_online::{LogregParams, SvmParams};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::experiment::{ExperimentResult, Mode, Observer, Row, RunConfig};
use crate::guru::{builtin_task, loaded, scaled, shuffled_parts, with_constant};
use crate::learner::{Learner, SolverTally};
use crate::plot::{Curve, LinePlot};
use crate::report::{num, numbers};
use crate::stats::MeanSe;

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

impl Protocol {
    fn for_mode(mode: Mode) -> Self {
        let all = vec![
            set(
                "spambase",
                Source::Builtin("spambase", None),
                [1000, 500, 2000],
            ),
            set(
                "ionosphere",
                Source::Builtin("ionosphere", None),
                [150, 100, 101],
            ),
            set("wdbc", Source::Builtin("wdbc", None), [250, 150, 169]),
            set(
                "usps_3v5",
                Source::Builtin("usps", Some(("3", "5"))),
                [1000, 500, 700],
            ),
            set(
                "usps_7v9",
                Source::Builtin("usps", Some(("7", "9"))),
                [1000, 500, 700],
            ),
            set(
                "mnist_4v7",
                // 14 x 14 and 500 training images: at 28 x 28 a unit took 40-307 s (1000
                // training images: 70-130 s without the worst models), the LP at N = 0, RoLR's
                // active set and A_mlc's spectra growing with d^2 to d^3; see the design diary
                Source::Pooled {
                    set: "mnist10k",
                    pair: ("4", "7"),
                    image: [28, 28],
                    pool: 2,
                },
                [500, 500, 1010],
            ),
            set("rolr_model", Source::RolrModel, [1000, 500, 2000]),
            set("kls_ball", Source::KlsBall, [1000, 500, 2000]),
        ];
        let base = Self {
            sets: all,
            rates: vec![0.0, 0.05, 0.1, 0.2, 0.3],
            seeds: 10,
            lr_l2: vec![1e-1, 1e-2, 1e-3, 1e-4],
            svm_c: vec![1.0 / 64.0, 1.0 / 16.0, 0.25, 1.0, 4.0, 16.0],
            svm_passes: 2000,
            guru_sigma: vec![4.0, 2.0, 1.0, 0.5, 0.25],
            lp_c: vec![0.1, 1.0, 10.0],
            rolr_frac: vec![0.05, 0.1, 0.2, 0.3],
            amu_c: vec![250.0, 50.0, 10.0, 2.0, 0.5],
            amlc_c0: vec![100.0, 10.0, 1.0],
            amlc_rounds: 300,
            sklearn: true,
        };
        match mode {
            Mode::Full => base,
            Mode::Quick => Self {
                sets: base
                    .sets
                    .into_iter()
                    .filter(|s| QUICK_SETS.contains(&s.name))
                    .collect(),
                seeds: 3,
                lp_c: vec![1.0],
                rolr_frac: vec![0.1, 0.3],
                amlc_c0: vec![100.0, 1.0],
                amlc_rounds: 150,
                sklearn: false,
                ..base
            },
        }
    }

    fn notes(&self) -> Vec<String> {
        vec![
            format!(
                "data: {}; a seeded shuffle per repetition ({} repetitions), features scaled onto [-1, 1] by the clean training part's range and centred on its mean, one constant feature appended for every defence",
                self.sets
                    .iter()
                    .map(|s| {
                        let pooled = match s.source {
                            Source::Pooled {
                                image: [w, h],
                                pool,
                                ..
                            } => format!(
                                " ({w} x {h} images as {} x {}: means of {pool} x {pool} blocks)",
                                w / pool,
                                h / pool
                            ),
                            _ => String::new(),
                        };
                        format!(
                            "{} {}/{}/{}{pooled}",
                            s.name, s.sizes[0], s.sizes[1], s.sizes[2]
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                self.seeds
            ),
            format!(
                "rates eps in {:?} of the training part, the validation part contaminated alike; eps = 0 is one clean cell shared by every model; the adversary's reference is LR (l2 1e-4, intercept) on the clean training part",
                self.rates
            ),
            "models: random flips (each label with probability eps); flips of the round(eps m) positive examples nearest the reference boundary; KLS malicious noise (each example replaced with probability eps): coordinated pull (r z, z orthogonal to the reference, r the median clean norm, label +1) and evasive pull (along z, just below A_mu's cut at c = 10); appended outliers, round(eps m/(1 - eps)) of them: RoLR's (U[-10, 10], labels against the reference), at the inliers' norms along the reference (jitter 0.5), and the adaptive AimedOutliers (copies of the clean examples most aligned with the reference, labelled against it, jitter 0.1) far out (10x the largest clean norm: against LR, SVM, LP, GURU, averaging), just inside the MAD norm threshold (RoLR, LR+P), just below the smallest cut of A_mu's and A_mlc's validated grids".into(),
            format!(
                "defences (grids, chosen on the contaminated validation part, ties to the first): RoLR n1/m in {:?}, MAD threshold (median + 3 MAD), gap 1e-4, at most 5000 iterations; LR+P: the same threshold then LR; averaging; A_mu c in {:?} on x/(2 sqrt(d)); A_mlc c0 in {:?} (kappa = gamma = 0.1, at most {} rounds); GURU batch sigma in {:?}, gap 1e-6; LR l2 in {:?} (mean loss, the constant feature penalised); SVM C in {:?} (no separate bias, gap 1e-3, at most {} passes); DSX LP at N = 0, C in {:?} (its own bias beside the constant feature)",
                self.rolr_frac,
                self.amu_c,
                self.amlc_c0,
                self.amlc_rounds,
                self.guru_sigma,
                self.lr_l2,
                self.svm_c,
                self.svm_passes,
                self.lp_c
            ),
            format!(
                "breakdown rate: the smallest eps whose mean error exceeds the clean error by {BREAKDOWN}; best defence: the smallest mean error over the non-zero rates; adaptive check at eps = {JUDGE_RATE}"
            ),
        ]
    }
}

/// The sets `--quick` runs (every model, defence and rate, 3 repetitions).
const QUICK_SETS: [&str; 5] = ["ionosphere", "wdbc", "usps_3v5", "rolr_model", "kls_ball"];
// (quick also narrows three grids: the LP at C = 1 only, RoLR at n1/m in {0.1, 0.3}, A_mlc at
// c0 in {100, 1} with at most 150 rounds; the notes print them)

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

/// What the adversary knows: the reference model on the clean training part, and the norms
/// its aimed points are placed at.
struct Reference {
    /// `β̂` (without the intercept) and the intercept.
    w: Vec<f64>,
    b: f64,
    median_norm: f64,
    max_norm: f64,
    /// The MAD norm threshold on the clean training part with the constant feature.
    mad_threshold: f64,
}

fn norms(d: &Dataset) -> Vec<f64> {
    (0..d.len())
        .map(|i| d.row(i).nonzeros().map(|(_, v)| v * v).sum::<f64>().sqrt())
        .collect()
}

impl Reference {
    fn of(train: &Dataset) -> Result<Self, Error> {
        let f = LogregParams::new().l2(1e-4).fit(train)?;
        let mut n = norms(train);
        n.sort_by(f64::total_cmp);
        let aug = with_constant(train)?;
        let t = NormThreshold::mad()
            .value(&aug.view(), 0)?
            .unwrap_or(f64::INFINITY);
        Ok(Self {
            w: f.model.weights().to_vec(),
            b: f.model.bias(),
            median_norm: n[n.len() / 2],
            max_norm: *n.last().unwrap_or(&1.0),
            mad_threshold: t,
        })
    }
}

/// A_mu runs on `x/S`, `S = BALL·√d` (centred coordinates lie in `[−2, 2]`, so every clean
/// point is in the unit ball).
const BALL: f64 = 2.0;

/// A_mu's removal cut `(w·x)² ≥ c ln m / d` on `x/S` (KLS A_mu step 3), on the data as the
/// adversary sees it: `(w·x)² ≥ c ln m · BALL²`.
fn amu_cut(c: f64, m: f64) -> f64 {
    c * m.ln() * BALL * BALL
}

/// The radius of an aimed point whose norm with the constant feature (which adds 1 to `‖x‖²`)
/// is just below `bound`.
fn inside(bound: f64) -> f64 {
    (bound * bound * (1.0 - 1e-6) - 1.0).max(0.0).sqrt()
}

/// `model` at rate `eps` applied to the clean part `clean` (scaled, no constant); the result with
/// the constant feature. `smallest` are the smallest A_mu and A_mlc constants of the grids.
fn contaminate(
    model: usize,
    eps: f64,
    clean: &Dataset,
    r: &Reference,
    smallest: (f64, f64),
    rng: &mut bulwark_core::Rng,
) -> Result<Dataset, Error> {
    let m = clean.len();
    let n = clean.n_features();
    let d = (n + 1) as f64;
    let appended = ((eps * m as f64) / (1.0 - eps)).round() as usize;
    let total = (m + appended) as f64;
    let aimed = |radius: f64| AimedOutliers {
        n_outliers: appended,
        estimate: r.w.clone(),
        bias: r.b,
        radius,
        jitter: 0.1,
    };
    let mut flips = |mode: LabelNoiseMode| -> Result<Dataset, Error> {
        let mut target = r.w.clone();
        target.push(r.b);
        Ok(LabelNoise {
            eta: eps,
            mode,
            target: Some(target),
        }
        .contaminate(&with_constant(clean)?, rng)?
        .0)
    };
    let out = match MODELS[model].0 {
        "random_flips" => return flips(LabelNoiseMode::Random),
        "boundary_flips" => return flips(LabelNoiseMode::NearBoundary),
        "coordinated" | "evasive" => {
            let adversary = if MODELS[model].0 == "coordinated" {
                MaliciousAdversary::CoordinatedPull {
                    angle: 0.0,
                    radius: r.median_norm,
                }
            } else {
                // the constant feature adds 1 to ‖x‖²
                MaliciousAdversary::EvasivePull {
                    threshold: (amu_cut(AMU_PAPER_C, m as f64) - 1.0).max(1e-12),
                    directions: 1,
                }
            };
            MaliciousNoise {
                eta: eps,
                adversary,
                target: Some(r.w.clone()),
            }
            .contaminate(clean, rng)?
            .0
        }
        "rolr_outliers" => {
            RolrOutliers {
                n_outliers: appended,
                beta: r.w.clone(),
                scale: 10.0,
            }
            .contaminate(clean, rng)?
            .0
        }
        "norm_matched" => {
            NormMatchedOutliers {
                n_outliers: appended,
                estimate: r.w.clone(),
                jitter: 0.5,
            }
            .contaminate(clean, rng)?
            .0
        }
        "adaptive_far" => aimed(10.0 * r.max_norm).contaminate(clean, rng)?.0,
        "adaptive_norm" => {
            aimed(inside(0.98 * r.mad_threshold))
                .contaminate(clean, rng)?
                .0
        }
        // A_mu's cut at the grid's smallest c
        "adaptive_amu" => {
            aimed(inside(amu_cut(smallest.0, total).sqrt()))
                .contaminate(clean, rng)?
                .0
        }
        // A_mlcw's cut c₀ ln(n/κ) on the data as given (n = d with the constant)
        _ => {
            aimed(inside((smallest.1 * (d / KAPPA).ln()).sqrt()))
                .contaminate(clean, rng)?
                .0
        }
    };
    with_constant(&out)
}

/// The error of `h` on `d` (0 → the negative class).
fn error_of(h: &impl DecisionFunction, d: &Dataset) -> Result<f64, Error> {
    let y = d.binary_labels()?;
    let wrong = (0..d.len())
        .filter(|&i| Sign::of_score(h.decision(d.row(i))) != y[i])
        .count();
    Ok(wrong as f64 / d.len().max(1) as f64)
}

/// A fitted hypothesis and whether its solver met its tolerance (with why not).
type Fitted<H> = (H, Option<String>);

/// Fits every grid value, picks the smallest validation error (ties: the first), and returns
/// its test error. A grid point whose fit fails is skipped and noted.
fn select<H: DecisionFunction>(
    grid: &[f64],
    (val, test): (&Dataset, &Dataset),
    what: &str,
    notes: &mut Vec<String>,
    mut fit: impl FnMut(f64) -> Result<Fitted<H>, Error>,
) -> DefenceOut {
    let clock = Instant::now();
    let mut out = DefenceOut::default();
    let mut fitted: Vec<(f64, H)> = Vec::new();
    let mut scores: Vec<Option<f64>> = Vec::new();
    for &g in grid {
        out.tally.fits += 1;
        let (h, unconverged) = match fit(g) {
            Ok(f) => f,
            Err(e) => {
                out.tally.not_converged += 1;
                notes.push(format!("{what} ({g}): failed: {e}"));
                continue;
            }
        };
        if let Some(why) = unconverged {
            out.tally.not_converged += 1;
            notes.push(format!("{what} ({g}): {why}"));
        }
        scores.push(error_of(&h, val).ok());
        fitted.push((g, h));
    }
    // the shared rule: the smallest validation error, ties to the first (most regularised)
    if let Some(k) = crate::select::best(&scores, crate::select::Ties::First) {
        let (g, h) = &fitted[k];
        out.error = error_of(h, test).ok();
        out.chosen = g.is_finite().then_some(*g);
    }
    out.seconds = clock.elapsed().as_secs_f64();
    out
}

fn report_note(r: &bulwark_core::FitReport) -> Option<String> {
    (!r.converged).then(|| r.summary())
}

/// The data divided by `s` (A_mu's unit ball).
fn shrunk(d: &Dataset, s: f64) -> Result<Dataset, Error> {
    let mut x = d.features().to_dense();
    x.as_mut_slice().iter_mut().for_each(|v| *v /= s);
    d.with_features(Features::Dense(x))
}

/// Every defence on one contaminated training / validation pair, judged on the clean test part.
fn defences(
    proto: &Protocol,
    train: &Dataset,
    filtered: &Dataset,
    val: &Dataset,
    test: &Dataset,
    seed: u64,
    what: &str,
    out: &mut UnitOut,
) -> Result<(), Error> {
    let parts = (val, test);
    let m = train.len();
    let d = train.n_features();
    let notes = &mut out.notes;
    let mut res = Vec::with_capacity(DEFENCES.len());
    for (key, title) in DEFENCES {
        let what = format!("{what} {title}");
        let o = match key {
            "rolr" => select(&proto.rolr_frac, parts, &what, notes, |f| {
                let n1 = ((f * m as f64).round() as usize).clamp(1, m - 1);
                let r = RolrParams::new()
                    .outliers(n1)
                    .threshold(NormThreshold::mad())
                    .tolerance(ROLR_TOLERANCE)
                    .max_iter(5000)
                    .fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "lr_p" => select(&proto.lr_l2, parts, &what, notes, |l2| {
                let r = LogregParams::new().l2(l2).intercept(false).fit(filtered)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "average" => select(&[f64::NAN], parts, &what, notes, |_| {
                let r = AveragingParams::new().fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "amu" => {
                let ball = shrunk(train, BALL * (d as f64).sqrt())?;
                select(&proto.amu_c, parts, &what, notes, |c| {
                    let r = AmuParams::new().constant(c).fit(&ball)?;
                    Ok((r.model, report_note(&r.report)))
                })
            }
            "amlc" => select(&proto.amlc_c0, parts, &what, notes, |c0| {
                let r = match SmoothBoostParams::new()
                    .kappa(KAPPA)
                    .gamma(GAMMA)
                    .weak(WeakLearner::OutlierRemoval { c0 })
                    .max_rounds(proto.amlc_rounds)
                    .fit(train)
                {
                    Ok(r) => r,
                    // no weak hypothesis reached γ: A_mlc has no hypothesis, scored as the
                    // zero one (every point negative), like RoLR's certified breakdown
                    Err(Error::InvalidParameter { name, expected, .. }) if name == "gamma" => {
                        let zero = LinearModel::try_new(vec![0.0; d], 0.0)?;
                        let h = Ensemble::try_new(vec![zero], vec![1.0])?;
                        return Ok((
                            h,
                            Some(format!("broke down, the zero hypothesis: {expected}")),
                        ));
                    }
                    Err(e) => return Err(e),
                };
                // a run the weak learner ended is the algorithm's normal end under noise
                let limit = r.report.details.get("stopped_by_round_limit").copied() == Some(1.0);
                Ok((
                    r.model,
                    limit.then(|| format!("stopped at the {}-round limit", proto.amlc_rounds)),
                ))
            }),
            "guru" => {
                // the σ path from the largest σ down, warm-started
                let mut start: Option<Vec<f64>> = None;
                select(&proto.guru_sigma, parts, &what, notes, |s| {
                    let (f, _) = GuruParams::new()
                        .sigma(s)
                        .solver(Solver::Batch)
                        .tolerance(1e-6)
                        .max_iter(1000)
                        .fit_certified_from(train, start.as_deref())?;
                    start = Some(f.model.weights().to_vec());
                    let why = (!f.converged).then(|| {
                        format!(
                            "stopped at relative gap {:.1e} ({})",
                            f.certificate.relative_gap,
                            f.stopped.as_deref().unwrap_or("")
                        )
                    });
                    Ok((f.model, why))
                })
            }
            "lr" => select(&proto.lr_l2, parts, &what, notes, |l2| {
                let r = LogregParams::new().l2(l2).intercept(false).fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "svm" => select(&proto.svm_c, parts, &what, notes, |c| {
                let r = SvmParams::new()
                    .c(c)
                    .bias(false)
                    .tolerance(1e-3)
                    .max_passes(proto.svm_passes)
                    .seed(seed)
                    .fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            _ => {
                let lp = Learner::named("lp")?;
                // the feature values do not enter the LP at N = 0
                let ones = vec![1.0; d];
                select(&proto.lp_c, parts, &what, notes, |c| {
                    let f = lp.fit(train, c, 0.0, &ones, seed)?;
                    Ok((f.model, f.note))
                })
            }
        };
        res.push(o);
    }
    out.defences = res;
    Ok(())
}

/// A built-in set's binary task, pooled where its source says so (`None`: a synthetic set).
fn task_data(spec: &SetSpec, cfg: &RunConfig) -> Result<Option<Dataset>, Error> {
    match spec.source {
        Source::Builtin(name, pair) => builtin_task(name, pair, cfg).map(Some),
        Source::Pooled {
            set,
            pair,
            image: [w, h],
            pool,
        } => bulwark_data::mean_pool(&builtin_task(set, Some(pair), cfg)?, w, h, pool).map(Some),
        Source::RolrModel | Source::KlsBall => Ok(None),
    }
}

/// A set's examples for repetition `seed`: train, validation and test, scaled, no constant.
fn draw(
    spec: &SetSpec,
    task: Option<&Dataset>,
    seed: u64,
) -> Result<(Dataset, Dataset, Dataset), Error> {
    let mut rng = rng_for_stream(seed, 1);
    let [a, b, c] = spec.sizes;
    let (train, val, test) = match (spec.source, task) {
        (Source::Builtin(..) | Source::Pooled { .. }, Some(d)) => {
            shuffled_parts(d, spec.name, spec.sizes, &mut rng)?
        }
        (Source::Builtin(name, _) | Source::Pooled { set: name, .. }, None) => {
            return Err(Error::param(
                "data set",
                name,
                "loaded before its splits are drawn",
            ));
        }
        (Source::RolrModel, _) => {
            let beta = random_unit_vector(20, &mut rng)?;
            let all = crate::rolr::inliers(&beta, a + b + c, 0.5, false, &mut rng)?;
            split3(&all, spec.sizes)
        }
        (Source::KlsBall, _) => {
            let u = random_unit_vector(50, &mut rng)?;
            let all = halfspace_data(Distribution::UnitBall, &u, a + b + c, &mut rng)?;
            split3(&all, spec.sizes)
        }
    };
    let (train, val, test) = scaled(&train, &val, &test)?;
    centred(&train, &val, &test)
}

/// The three parts minus the training part's feature means.
fn centred(
    train: &Dataset,
    val: &Dataset,
    test: &Dataset,
) -> Result<(Dataset, Dataset, Dataset), Error> {
    let n = train.n_features();
    let mut mean = vec![0.0; n];
    for i in 0..train.len() {
        train.row(i).axpy_into(1.0 / train.len() as f64, &mut mean);
    }
    let shift = |d: &Dataset| {
        let mut x = d.features().to_dense();
        for row in x.as_mut_slice().chunks_exact_mut(n) {
            row.iter_mut().zip(&mean).for_each(|(v, m)| *v -= m);
        }
        d.with_features(Features::Dense(x))
    };
    Ok((shift(train)?, shift(val)?, shift(test)?))
}

fn split3(d: &Dataset, [a, b, c]: [usize; 3]) -> (Dataset, Dataset, Dataset) {
    let idx: Vec<usize> = (0..a + b + c).collect();
    (
        d.select(&idx[..a]),
        d.select(&idx[a..a + b]),
        d.select(&idx[a + b..]),
    )
}

/// One unit: set `spec`, repetition seed `seed`, model `model` at rate `rates[e]` (`e = 0`: clean).
fn unit(
    proto: &Protocol,
    spec: &SetSpec,
    task: Option<&Dataset>,
    (model, e): (usize, usize),
    seed: u64,
    sklearn: Option<&crate::sklearn::Sklearn>,
) -> Result<UnitOut, Error> {
    let (train, val, test) = draw(spec, task, seed)?;
    let eps = proto.rates[e];
    let test = with_constant(&test)?;
    let mut out = UnitOut::default();
    let (train, val) = if e == 0 {
        (with_constant(&train)?, with_constant(&val)?)
    } else {
        let r = Reference::of(&train)?;
        let smallest = (
            proto.amu_c.iter().copied().fold(f64::INFINITY, f64::min),
            proto.amlc_c0.iter().copied().fold(f64::INFINITY, f64::min),
        );
        let stream = ((model as u64) << 8) | e as u64;
        let mut rng = rng_for_stream(seed ^ (stream << 32), 2);
        let t = contaminate(model, eps, &train, &r, smallest, &mut rng)?;
        let mut rng = rng_for_stream(seed ^ (stream << 32), 3);
        let v = contaminate(model, eps, &val, &r, smallest, &mut rng)?;
        (t, v)
    };
    // the MAD filter, once: LR+P trains on what it keeps, and what it removes is reported (rows
    // past the clean part are appended outliers)
    let kept = NormFilter::new(NormThreshold::mad(), 0).filter(&train.view())?;
    let m_clean = spec.sizes[0];
    let dirty = kept.removed.iter().filter(|&&i| i >= m_clean).count();
    out.filter_removed = [dirty, kept.removed.len() - dirty];
    let filtered = kept.kept.to_dataset();
    let what = if e == 0 {
        format!("{} clean", spec.name)
    } else {
        format!("{} {} eps={eps}", spec.name, MODELS[model].0)
    };
    defences(proto, &train, &filtered, &val, &test, seed, &what, &mut out)?;
    if let Some(sk) = sklearn {
        match sk.run(&train, &val, &test, seed) {
            Ok(r) => out.sklearn = Some(r),
            Err(e) => out.notes.push(format!("{what} scikit-learn: {e}")),
        }
    }
    Ok(out)
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

fn title_of<'a>(list: &'a [(&'a str, &'a str)], key: &'a str) -> &'a str {
    list.iter().find(|d| d.0 == key).map_or(key, |d| d.1)
}

/// The Markdown report: the summary tables first, then error against `ε` per set and model.
pub fn to_markdown(res: &ExperimentResult) -> String {
    use std::fmt::Write as _;
    let mut s = crate::report::header(res);
    let sum = &res.summary;
    let sets: Vec<&str> = sum["sets"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rates: Vec<f64> = numbers(&sum["rates"]);
    let head = |first: &str| {
        format!(
            "| {first} | {} |\n|---|{}",
            sets.join(" | "),
            "---|".repeat(sets.len())
        )
    };
    let _ = writeln!(
        s,
        "\n## The best defence per contamination model (smallest mean error over ε > 0)\n\n{}",
        head("model")
    );
    for (mkey, mtitle) in MODELS {
        let row: Vec<String> = sets
            .iter()
            .map(|set| {
                let b = &sum["best"][set][mkey];
                format!(
                    "{} ({:.3})",
                    title_of(&DEFENCES, b["defence"].as_str().unwrap_or("")),
                    num(&b["mean_error"])
                )
            })
            .collect();
        let _ = writeln!(s, "| {mtitle} | {} |", row.join(" | "));
    }
    let counts: Vec<String> = DEFENCES
        .iter()
        .filter_map(|(k, t)| {
            let n = sum["best_counts"][k].as_u64().unwrap_or(0);
            (n > 0).then(|| format!("{t} {n}"))
        })
        .collect();
    let _ = writeln!(s, "\nBest in: {}.", counts.join(", "));
    let _ = writeln!(
        s,
        "\n## The adaptive adversary against the worst non-adaptive one, ε = {JUDGE_RATE}\n\nEach cell: the defence's error under the adversary built against it / under the worst of the six non-adaptive models (✓: the adaptive one is worse for the defence).\n\n{}",
        head("defence")
    );
    for (dkey, dtitle) in DEFENCES {
        let row: Vec<String> = sets
            .iter()
            .map(|set| {
                let a = &sum["adaptive"][set][dkey];
                format!(
                    "{:.3} / {:.3} {}",
                    num(&a["own_error"]),
                    num(&a["worst_fixed_error"]),
                    if a["raised"].as_bool() == Some(true) {
                        "✓"
                    } else {
                        "✗"
                    }
                )
            })
            .collect();
        let _ = writeln!(s, "| {dtitle} | {} |", row.join(" | "));
    }
    let _ = writeln!(
        s,
        "\nThe adaptive adversary is the worst for the defence in {} of {} cases.",
        sum["adaptive_raised"]["raised"], sum["adaptive_raised"]["of"]
    );
    let _ = writeln!(
        s,
        "\n## Breakdown rates\n\nThe smallest ε whose mean error exceeds the clean error by {BREAKDOWN} (—: none up to {}). The adaptive row is each defence's own adaptive adversary.",
        rates.last().copied().unwrap_or(0.0)
    );
    let mut rows: Vec<(&str, &str)> = MODELS[..FIRST_ADAPTIVE].to_vec();
    rows.push(("adaptive", "adaptive (its own)"));
    for (mkey, mtitle) in rows {
        let _ = writeln!(s, "\n### {mtitle}\n\n{}", head("defence"));
        for (k, (dkey, dtitle)) in DEFENCES.iter().enumerate() {
            let model = if mkey == "adaptive" {
                MODELS[own_adaptive(k)].0
            } else {
                mkey
            };
            let row: Vec<String> = sets
                .iter()
                .map(|set| match sum["breakdown"][set][model][dkey].as_f64() {
                    Some(v) => format!("{v}"),
                    None => "—".into(),
                })
                .collect();
            let _ = writeln!(s, "| {dtitle} | {} |", row.join(" | "));
        }
    }
    for set in &sets {
        for (mkey, mtitle) in MODELS {
            let cell = &sum["errors"][set][mkey];
            let cols: Vec<(&str, &str)> = DEFENCES
                .iter()
                .chain(&crate::sklearn::REFERENCES)
                .copied()
                .filter(|(k, _)| cell.get(*k).is_some())
                .collect();
            let _ = writeln!(
                s,
                "\n## {set}, {mtitle}: clean test error, mean ± s.e.\n\n| ε | {} |\n|---|{}",
                cols.iter().map(|d| d.1).collect::<Vec<_>>().join(" | "),
                "---|".repeat(cols.len())
            );
            for (e, eps) in rates.iter().enumerate() {
                let row: Vec<String> = cols
                    .iter()
                    .map(|(k, _)| {
                        let c = &cell[*k][e];
                        format!("{:.3} ± {:.3}", num(&c["mean"]), num(&c["stderr"]))
                    })
                    .collect();
                let _ = writeln!(s, "| {eps} | {} |", row.join(" | "));
            }
        }
    }
    crate::report::solver_outcomes(&mut s, res, "every defence's grid");
    s
}

/// Per set: error against `ε` for each model, and one plot of each defence against its own
/// adaptive adversary.
pub fn plots(res: &ExperimentResult) -> Vec<(String, LinePlot)> {
    let sum = &res.summary;
    let rates: Vec<f64> = numbers(&sum["rates"]);
    let curve = |set: &str, model: &str, k: usize, title: &str| {
        let list = sum["errors"][set][model][DEFENCES[k].0]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Curve::new(
            title,
            rates.clone(),
            list.iter().map(|c| num(&c["mean"])).collect(),
        )
        .with_err(list.iter().map(|c| num(&c["stderr"])).collect())
    };
    let mut out = Vec::new();
    for set in sum["sets"].as_array().into_iter().flatten() {
        let Some(set) = set.as_str() else { continue };
        for (mkey, mtitle) in &MODELS {
            let mut p = LinePlot::new(
                format!("poisoning: {set}, {mtitle}"),
                "contamination rate eps",
                "clean test error",
            );
            for (k, (_, dtitle)) in DEFENCES.iter().enumerate() {
                p = p.curve(curve(set, mkey, k, dtitle));
            }
            out.push((format!("poisoning_{set}_{mkey}.svg"), p));
        }
        let mut p = LinePlot::new(
            format!("poisoning: {set}, each defence against its own adaptive adversary"),
            "contamination rate eps",
            "clean test error",
        );
        for (k, (_, dtitle)) in DEFENCES.iter().enumerate() {
            p = p.curve(curve(set, MODELS[own_adaptive(k)].0, k, dtitle));
        }
        out.push((format!("poisoning_{set}_adaptive.svg"), p));
    }
    out
}

/// `poisoning.json`: `SET.MODEL.DEFENCE` = one `{eps, mean, stderr, n}` per rate (`eps = 0`: the
/// shared clean cell). The summaries (best defence, breakdown rates, the adaptive check, what
/// the MAD filter removed, seconds per defence) are in `poisoning-details.json`'s `summary`.
pub fn table_json(res: &ExperimentResult) -> Value {
    res.summary["errors"].clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Silent;

    fn tiny() -> Protocol {
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

    /// The adaptive points sit where their defences cannot see them: inside the MAD threshold
    /// (the filter keeps them) and below A_mu's smallest cut (A_mu removes none of them).
    #[test]
    fn adaptive_points_evade_their_filters() {
        let proto = tiny();
        let spec = &proto.sets[1];
        let (train, ..) = draw(spec, None, 5).unwrap();
        let r = Reference::of(&train).unwrap();
        let m = train.len();
        let smallest = (0.5, 1.0);
        let mut rng = rng_for_stream(1, 2);
        let t = contaminate(7, 0.2, &train, &r, smallest, &mut rng).unwrap();
        let kept = NormFilter::new(NormThreshold::mad(), 0)
            .filter(&t.view())
            .unwrap();
        assert!(kept.removed.iter().all(|&i| i < m), "{:?}", kept.removed);
        let t = contaminate(8, 0.2, &train, &r, smallest, &mut rng).unwrap();
        assert!(t.len() > m);
        let d = t.n_features() as f64;
        let fit = AmuParams::new()
            .constant(0.5)
            .run(&shrunk(&t, BALL * d.sqrt()).unwrap().view())
            .unwrap();
        assert!(fit.removed.iter().all(|&i| i < m), "{:?}", fit.removed);
        // the far points are far
        let t = contaminate(6, 0.2, &train, &r, smallest, &mut rng).unwrap();
        let n = norms(&t);
        assert!(n[m..].iter().all(|&v| v > 9.0 * r.max_norm));
    }

    /// Every set of the full protocol loads from the shipped data and has room for its parts.
    #[test]
    fn every_full_set_loads() {
        let proto = Protocol::for_mode(Mode::Full);
        assert_eq!(proto.sets.len(), 8);
        for spec in &proto.sets {
            if let Some(d) = task_data(spec, &RunConfig::quick(0))
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name))
            {
                assert!(d.len() >= spec.sizes.iter().sum::<usize>(), "{}", spec.name);
                if spec.name == "mnist_4v7" {
                    assert_eq!(d.n_features(), 14 * 14);
                }
            }
        }
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
