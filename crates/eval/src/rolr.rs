//! `rolr`: Feng, Xu, Mannor & Yan (2014) §6, Fig. 2 — RoLR against logistic regression (LR)
//! and LR after RoLR's preprocessing (LR+P) as the outlier-to-inlier ratio `λ` grows, on the
//! paper's generator and against an adversary the paper did not try.
//!
//! **Protocol** (the paper's §6 where it states it, the notes' reading where it does not):
//!
//! - `p = 20`, `n = 1000` inliers, `β*` a uniform unit vector, `x ~ N(0, I_p)` (no `1/n` scaling),
//!   `v ~ N(0, σ_e²)` with `σ_e = 0.5` read as a standard deviation; `λ = n₁/n` from 0 to 1.2 in
//!   steps of 0.1; a fresh `β*` and sample for every repetition;
//! - Fig. 2a (parameter error `‖β̂ − β*‖`): labels `P(y = 1) = τ(⟨β*, x⟩ + v)`; LR's `β̂` is used
//!   as it is (not normalised: the paper's "≈ 1.3" only matches that), RoLR's is a unit vector
//!   (or 0 on breakdown);
//! - Fig. 2b (classification error): labels `y = sign(⟨β*, x⟩ + v)` and 1000 more authentic test
//!   samples; the error counts `sign(β̂ᵀx) ≠ y` (a zero model predicts the negative class);
//! - the paper's outliers: `U[−10, 10]^p` features, labels `sign(−⟨β*, x⟩)`
//!   (`bulwark_adversary::RolrOutliers`);
//! - beyond the paper, **norm-matched** outliers (`bulwark_adversary::NormMatchedOutliers`): a
//!   clean example's norm, along the estimate RoLR returns on the clean inliers (jitter 0.5), labelled
//!   against it — the threshold cannot see them;
//! - RoLR with `n₁ = round(λn)` and the paper's threshold `T = 4σ_x√(log p + log n)` with the
//!   generator's `σ_x = 1` (12.59 here: Lemma 2 on the unscaled design); LR: the unregularised
//!   maximum-likelihood fit without intercept (Newton–CG); LR+P: the same threshold, then LR.

use std::time::Instant;

use bulwark_adversary::{NormMatchedOutliers, RolrOutliers, random_unit_vector, standard_normal};
use bulwark_contamination::{NormThreshold, RolrParams};
use bulwark_core::{
    Contamination, Dataset, DenseMatrix, Error, Fit, RowFilter, Sign, rng_for_stream,
};
use bulwark_online::LogregParams;
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::experiment::{ExperimentResult, Mode, Observer, Row, RunConfig};
use crate::learner::SolverTally;
use crate::plot::{Curve, LinePlot};
use crate::stats::MeanSe;

/// The experiment's name.
pub const NAME: &str = "rolr";

/// The learners, in table order (keys of `rolr.json`).
const LEARNERS: [(&str, &str); 3] = [("rolr", "RoLR"), ("lr", "LR"), ("lr_p", "LR+P")];

/// The two contamination models.
const ADVERSARIES: [(&str, &str); 2] = [
    (
        "paper",
        "the paper's outliers (U[-10, 10]^p, labels sign(-<beta*, x>))",
    ),
    (
        "norm_matched",
        "norm-matched outliers (an inlier's norm, along RoLR's clean estimate, labelled against it)",
    ),
];

/// What §6 states in numbers, beside which the tables are read.
const PAPER_STATEMENTS: [&str; 5] = [
    "LR parameter error about 1.3 for lambda >= 0.3",
    "RoLR parameter error about 0.5 at lambda = 0.8",
    "LR+P parameter error above 1 from lambda = 0.5",
    "LR classification error about 0.8 from lambda = 0.2; RoLR about 0.4 as lambda -> 1, breaking down for lambda > 1",
    "no outliers: LR 0.06, RoLR 0.13 parameter error",
];

/// Remark 1's constants (noiseless, `σ_x = 1`): `φ₊ = ⅓ sech²(½)`, `φ₋ = ⅓ + ⅙ sech²(½)`; the
/// asymptotic bound is `‖β̂ − β*‖ ≤ 2λ φ₋/φ₊ ≈ 3.5431 λ`.
pub fn remark1_slope() -> f64 {
    let sech2 = 1.0 / 0.5f64.cosh().powi(2);
    let (plus, minus) = (sech2 / 3.0, 1.0 / 3.0 + sech2 / 6.0);
    2.0 * minus / plus
}

#[derive(Debug, Clone, Serialize)]
struct Protocol {
    reps: usize,
    lambdas: Vec<f64>,
    p: usize,
    n: usize,
    n_test: usize,
    sigma_e: f64,
}

impl Protocol {
    fn for_mode(mode: Mode) -> Self {
        Self {
            reps: match mode {
                Mode::Quick => 10,
                Mode::Full => 50,
            },
            lambdas: (0..=12).map(|k| f64::from(k) / 10.0).collect(),
            p: 20,
            n: 1000,
            n_test: 1000,
            sigma_e: 0.5,
        }
    }
    fn notes(&self) -> Vec<String> {
        vec![
            format!(
                "p = {}, n = {} inliers, x ~ N(0, I), noise v ~ N(0, {}^2) (sigma_e read as a standard deviation), lambda = n1/n from 0 to 1.2, {} repetitions (the paper: 10), a fresh beta* and sample each",
                self.p, self.n, self.sigma_e, self.reps
            ),
            "parameter error ||beta_hat - beta*|| on logistic labels P(y=1) = tau(<beta*, x> + v), LR's beta_hat not normalised (the paper's LR error of about 1.3 matches only that); classification error on labels sign(<beta*, x> + v) with 1000 authentic test samples, a zero model predicting the negative class".into(),
            "RoLR: n1 = round(lambda n), threshold T = 4 sigma_x sqrt(log p + log n) with sigma_x = 1 (the generator's), the corrected problem (nu free) solved to a certified relative gap of 1e-10; LR: unregularised maximum likelihood without intercept (Newton-CG, gradient tolerance 1e-6); LR+P: the same threshold, then LR".into(),
            "norm-matched outliers (not in the paper): the norm of a clean example drawn at random, direction RoLR's estimate on the clean inliers plus an isotropic jitter of relative size 0.5, label -sign(<estimate, x>)".into(),
        ]
    }
}

/// What one repetition at one `λ` against one adversary produced, per learner.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct UnitOut {
    param_error: [f64; 3],
    test_error: [f64; 3],
    /// Outliers and inliers removed by the threshold (classification task).
    removed: [usize; 2],
    /// RoLR broke down on the logistic and on the classification sample.
    breakdown: [bool; 2],
    tally: [SolverTally; 3],
    notes: Vec<String>,
}

/// `m` authentic samples: logistic labels, or sign labels when `!logistic`.
pub(crate) fn inliers(
    beta: &[f64],
    m: usize,
    sigma_e: f64,
    logistic: bool,
    rng: &mut bulwark_core::Rng,
) -> Result<Dataset, Error> {
    let p = beta.len();
    let mut data = Vec::with_capacity(m * p);
    let mut y = Vec::with_capacity(m);
    for _ in 0..m {
        let x: Vec<f64> = (0..p).map(|_| standard_normal(rng)).collect();
        let s =
            x.iter().zip(beta).map(|(a, b)| a * b).sum::<f64>() + sigma_e * standard_normal(rng);
        let pos = if logistic {
            rng.random::<f64>() < 1.0 / (1.0 + (-s).exp())
        } else {
            s > 0.0
        };
        y.push(if pos { Sign::Pos } else { Sign::Neg });
        data.extend(x);
    }
    Dataset::binary("rolr", DenseMatrix::try_new(m, p, data)?, y)
}

/// The fraction of `test` where `sign(wᵀx)` (0 → −1: a zero model predicts the negative class)
/// differs from the label.
fn test_error(w: &[f64], test: &Dataset) -> Result<f64, Error> {
    let y = test.binary_labels()?;
    let wrong = (0..test.len())
        .filter(|&i| Sign::of_score(test.row(i).dot(w)) != y[i])
        .count();
    Ok(wrong as f64 / test.len() as f64)
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// The three fits of one training set: RoLR, LR and LR+P weights, RoLR's breakdown, and the
/// rows the threshold removed.
struct Three {
    weights: [Vec<f64>; 3],
    breakdown: bool,
    removed: Vec<usize>,
}

/// RoLR, LR and LR+P on `train` (`n1` outliers).
fn fit_three(
    train: &Dataset,
    n1: usize,
    tally: &mut [SolverTally; 3],
    notes: &mut Vec<String>,
    what: &str,
) -> Result<Three, Error> {
    let rolr = RolrParams::new()
        .outliers(n1)
        .threshold(NormThreshold::Paper { sigma_x: Some(1.0) });
    let f = rolr.fit(train)?;
    let breakdown = f.report.details.get("breakdown").is_some_and(|b| *b != 0.0);
    let lr = LogregParams::new().l2(0.0).intercept(false).tolerance(1e-6);
    let g = lr.fit(train)?;
    let rows = rolr.filter().filter(&train.view())?;
    let h = lr.fit(&rows.kept.to_dataset())?;
    for (k, r) in [&f.report, &g.report, &h.report].into_iter().enumerate() {
        tally[k].fits += 1;
        if !r.converged {
            tally[k].not_converged += 1;
            notes.push(format!("{what} {}: {}", LEARNERS[k].1, r.summary()));
        }
    }
    Ok(Three {
        weights: [
            f.model.weights().to_vec(),
            g.model.weights().to_vec(),
            h.model.weights().to_vec(),
        ],
        breakdown,
        removed: rows.removed,
    })
}

fn unit(proto: &Protocol, lambda: f64, adversary: usize, seed: u64) -> Result<UnitOut, Error> {
    let mut rng = rng_for_stream(seed, 1);
    let beta = random_unit_vector(proto.p, &mut rng)?;
    let n1 = (lambda * proto.n as f64).round() as usize;
    let mut out = UnitOut::default();
    let contaminate = |clean: &Dataset, rng: &mut bulwark_core::Rng| -> Result<Dataset, Error> {
        let (d, _) = match adversary {
            0 => {
                RolrOutliers::from_ratio(lambda, proto.n, beta.clone())?.contaminate(clean, rng)?
            }
            _ => {
                let estimate = RolrParams::new()
                    .threshold(NormThreshold::Paper { sigma_x: Some(1.0) })
                    .fit(clean)?
                    .model
                    .weights()
                    .to_vec();
                NormMatchedOutliers {
                    n_outliers: n1,
                    estimate,
                    jitter: 0.5,
                }
                .contaminate(clean, rng)?
            }
        };
        Ok(d)
    };
    let what = format!("{} lambda={lambda}", ADVERSARIES[adversary].0);
    // Fig. 2a: logistic labels, parameter error
    let clean = inliers(&beta, proto.n, proto.sigma_e, true, &mut rng)?;
    let train = contaminate(&clean, &mut rng)?;
    let fits = fit_three(&train, n1, &mut out.tally, &mut out.notes, &what)?;
    out.breakdown[0] = fits.breakdown;
    for k in 0..3 {
        out.param_error[k] = dist(&fits.weights[k], &beta);
    }
    // Fig. 2b: sign labels, classification error on authentic test samples
    let clean = inliers(&beta, proto.n, proto.sigma_e, false, &mut rng)?;
    let train = contaminate(&clean, &mut rng)?;
    let test = inliers(&beta, proto.n_test, proto.sigma_e, false, &mut rng)?;
    let fits = fit_three(&train, n1, &mut out.tally, &mut out.notes, &what)?;
    for k in 0..3 {
        out.test_error[k] = test_error(&fits.weights[k], &test)?;
    }
    out.breakdown[1] = fits.breakdown;
    let outliers = fits.removed.iter().filter(|&&i| i >= proto.n).count();
    out.removed = [outliers, fits.removed.len() - outliers];
    Ok(out)
}

/// Runs the experiment.
pub fn run(cfg: &RunConfig, obs: &dyn Observer) -> Result<ExperimentResult, crate::Outcome> {
    run_with(cfg, obs, &Protocol::for_mode(cfg.mode))
}

fn run_with(
    cfg: &RunConfig,
    obs: &dyn Observer,
    proto: &Protocol,
) -> Result<ExperimentResult, crate::Outcome> {
    let start = Instant::now();
    let base = crate::experiments::experiment_seed(cfg.seed, NAME);
    let jobs: Vec<(usize, usize, usize)> = (0..ADVERSARIES.len())
        .flat_map(|a| {
            (0..proto.lambdas.len()).flat_map(move |l| (0..proto.reps).map(move |r| (a, l, r)))
        })
        .collect();
    // with a unit cache (`--full`), finished units are kept and a later run resumes
    let outs = crate::cache::run_units(
        NAME,
        cfg,
        obs,
        &jobs,
        |&(a, l, r)| {
            let task = format!("{}/lambda{}", ADVERSARIES[a].0, proto.lambdas[l]);
            let key = crate::cache::UnitKey::of((NAME, &task, r), (cfg.mode, cfg.seed), proto);
            (key, task, r)
        },
        |&(a, l, r)| {
            // the same β* and inliers for both adversaries
            let seed = base ^ ((l as u64) << 32) ^ r as u64;
            let out = unit(proto, proto.lambdas[l], a, seed);
            obs.on_unit(
                NAME,
                &format!("{} lambda {} #{r}", ADVERSARIES[a].0, proto.lambdas[l]),
            );
            out
        },
    )?;
    let mut cells: Vec<Vec<Vec<UnitOut>>> =
        vec![vec![Vec::new(); proto.lambdas.len()]; ADVERSARIES.len()];
    for ((a, l, _), o) in jobs.iter().zip(outs) {
        cells[*a][*l].push(o);
    }
    let mut res = crate::experiments::base(
        NAME,
        "Feng, Xu, Mannor & Yan 2014 §6, Fig. 2 (RoLR, LR, LR+P against the outlier ratio)",
        cfg,
    );
    res.budgets = proto.lambdas.clone();
    res.repetitions = proto.reps;
    res.protocol = proto.notes();
    let ms = |v: &[f64]| {
        let m = MeanSe::of(v);
        json!({"mean": m.mean, "stderr": m.stderr})
    };
    let slope = remark1_slope();
    let mut table = Vec::new();
    for (l, &lambda) in proto.lambdas.iter().enumerate() {
        let mut entry = serde_json::Map::new();
        for (a, (adv, _)) in ADVERSARIES.iter().enumerate() {
            let outs = &cells[a][l];
            let mut learners = serde_json::Map::new();
            for (k, (key, _)) in LEARNERS.iter().enumerate() {
                let pe: Vec<f64> = outs.iter().map(|o| o.param_error[k]).collect();
                let te: Vec<f64> = outs.iter().map(|o| o.test_error[k]).collect();
                learners.insert(
                    (*key).into(),
                    json!({"param_error": ms(&pe), "test_error": ms(&te)}),
                );
            }
            let removed = |j: usize| outs.iter().map(|o| o.removed[j] as f64).collect::<Vec<_>>();
            learners.insert(
                "removed".into(),
                json!({"outliers": ms(&removed(0)), "inliers": ms(&removed(1))}),
            );
            let broke = |j: usize| outs.iter().filter(|o| o.breakdown[j]).count();
            learners.insert(
                "rolr_breakdowns".into(),
                json!({"logistic": broke(0), "classification": broke(1)}),
            );
            if a == 0 {
                // the paper's model at top level: {"rolr", "lr", "lr_p"} per λ
                for (k, v) in learners {
                    entry.insert(k, v);
                }
            } else {
                entry.insert((*adv).into(), Value::Object(learners));
            }
        }
        entry.insert("remark1_bound".into(), json!(slope * lambda));
        entry.insert("lambda".into(), json!(lambda));
        table.push(Value::Object(entry));
        for (a, (adv, _)) in ADVERSARIES.iter().enumerate() {
            let outs = &cells[a][l];
            for (k, (_, learner)) in LEARNERS.iter().enumerate() {
                let te: Vec<f64> = outs.iter().map(|o| o.test_error[k]).collect();
                let mut tally = SolverTally::default();
                for o in outs {
                    tally.add(&o.tally[k]);
                }
                res.solver.add(&tally);
                res.per_task.push(Row {
                    task: Some(format!("{adv} lambda {lambda:.1}")),
                    learner: (*learner).into(),
                    attack: (*adv).into(),
                    budget: lambda,
                    error: MeanSe::of(&te),
                    chosen_c: None,
                    paper: None,
                    paper_pm: None,
                    solver: tally,
                });
            }
            for o in outs {
                res.solver_notes.extend(o.notes.iter().cloned());
            }
        }
    }
    res.summary = json!({
        "table": table,
        "remark1_slope": slope,
        "threshold": 4.0 * ((proto.p as f64).ln() + (proto.n as f64).ln()).sqrt(),
        "paper_statements": PAPER_STATEMENTS,
    });
    res.runtime_seconds = start.elapsed().as_secs_f64();
    Ok(res)
}

fn cell(t: &Value, path: &[&str]) -> f64 {
    path.iter()
        .fold(t, |v, k| &v[*k])
        .as_f64()
        .unwrap_or(f64::NAN)
}

/// The Markdown report.
pub fn to_markdown(res: &ExperimentResult) -> String {
    use std::fmt::Write as _;
    let mut s = crate::report::header(res);
    let table = &res.summary["table"];
    for (a, (adv, title)) in ADVERSARIES.iter().enumerate() {
        let _ = writeln!(
            s,
            "\n## {title}: mean ± s.e. over the repetitions\n\n| λ | RoLR ‖β̂ − β*‖ | LR | LR+P | Remark 1 bound | RoLR test error | LR | LR+P | removed outliers | removed inliers | RoLR breakdowns (2a, 2b) |\n|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for (l, lambda) in res.budgets.iter().enumerate() {
            let t = &table[l];
            let e = if a == 0 { t } else { &t[*adv] };
            let f = |k: &str, m: &str| {
                format!(
                    "{:.3} ± {:.3}",
                    cell(e, &[k, m, "mean"]),
                    cell(e, &[k, m, "stderr"])
                )
            };
            let _ = writeln!(
                s,
                "| {lambda:.1} | {} | {} | {} | {:.3} | {} | {} | {} | {:.1} | {:.1} | {}, {} |",
                f("rolr", "param_error"),
                f("lr", "param_error"),
                f("lr_p", "param_error"),
                cell(t, &["remark1_bound"]),
                f("rolr", "test_error"),
                f("lr", "test_error"),
                f("lr_p", "test_error"),
                cell(e, &["removed", "outliers", "mean"]),
                cell(e, &["removed", "inliers", "mean"]),
                e["rolr_breakdowns"]["logistic"],
                e["rolr_breakdowns"]["classification"],
            );
        }
    }
    let _ = writeln!(
        s,
        "\nThe paper's statements (§6), beside which the tables are read:\n"
    );
    for c in PAPER_STATEMENTS {
        let _ = writeln!(s, "- {c}");
    }
    crate::report::solver_outcomes(&mut s, res, "RoLR, LR and LR+P");
    s
}

/// Figs. 2a and 2b for both contamination models.
pub fn plots(res: &ExperimentResult) -> Vec<(String, LinePlot)> {
    let table = &res.summary["table"];
    let lambdas = res.budgets.clone();
    let mut out = Vec::new();
    for (a, (adv, title)) in ADVERSARIES.iter().enumerate() {
        for (metric, y_label, fig) in [
            ("param_error", "||beta_hat - beta*||", "2a"),
            ("test_error", "classification error", "2b"),
        ] {
            let mut p = LinePlot::new(
                format!("{}: Fig. {fig}, {}", res.name, title),
                "outlier-to-inlier ratio lambda",
                y_label,
            );
            for (key, label) in LEARNERS {
                let get = |f: &str| -> Vec<f64> {
                    (0..lambdas.len())
                        .map(|l| {
                            let t = &table[l];
                            let e = if a == 0 { t } else { &t[adv] };
                            cell(e, &[key, metric, f])
                        })
                        .collect()
                };
                p = p
                    .curve(Curve::new(label, lambdas.clone(), get("mean")).with_err(get("stderr")));
            }
            if metric == "param_error" {
                let slope = remark1_slope();
                let x: Vec<f64> = lambdas
                    .iter()
                    .copied()
                    .filter(|l| slope * l <= 2.0)
                    .collect();
                let y = x.iter().map(|l| slope * l).collect();
                p = p.curve(Curve::new("Remark 1 bound 2 lambda phi-/phi+", x, y));
                if a == 0 {
                    p = p.curve(Curve::new(
                        "paper: LR about 1.3",
                        vec![0.3, 1.2],
                        vec![1.3, 1.3],
                    ));
                    p = p.curve(Curve::new("paper: RoLR about 0.5", vec![0.8], vec![0.5]));
                }
            }
            out.push((format!("{}_{adv}_{metric}.svg", res.name), p));
        }
    }
    out
}

/// `rolr.json`: one entry per `λ` (0, 0.1, …, 1.2, field `lambda`), `{"rolr", "lr", "lr_p"}` each with
/// `param_error` and `test_error` as `{mean, stderr}` on the paper's outliers, the same under
/// `norm_matched`, the removed counts, RoLR's breakdowns and Remark 1's bound.
pub fn table_json(res: &ExperimentResult) -> Value {
    res.summary["table"].clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Silent;

    #[test]
    fn remark1_constants() {
        // the notes: 0.26215, 0.46441, ratio 1.77154, slope 3.5431, non-trivial below 0.5645
        let s = remark1_slope();
        assert!((s - 3.5431).abs() < 1e-4, "{s}");
        assert!((2.0 / s - 0.5645).abs() < 1e-4);
    }

    /// A small protocol: the layout, the paper's threshold removing its outliers, LR's
    /// breakdown on them, and the same bits from the same seed for any thread count.
    #[test]
    fn small_run_layout_and_reproducibility() {
        let proto = Protocol {
            reps: 2,
            lambdas: vec![0.0, 0.5],
            p: 20,
            n: 300,
            n_test: 300,
            sigma_e: 0.5,
        };
        let mut cfg = RunConfig::quick(3);
        cfg.jobs = 2;
        let res = run_with(&cfg, &Silent, &proto).unwrap_or_else(|o| panic!("{o:?}"));
        let t = table_json(&res);
        assert_eq!(t[1]["lambda"].as_f64(), Some(0.5));
        for l in [0, 1] {
            for k in ["rolr", "lr", "lr_p"] {
                for m in ["param_error", "test_error"] {
                    assert!(t[l][k][m]["mean"].as_f64().is_some(), "{l} {k} {m}");
                    assert!(t[l]["norm_matched"][k][m]["mean"].as_f64().is_some());
                }
            }
        }
        // the threshold removes all 150 of the paper's outliers at λ = 0.5, and LR fails there
        assert_eq!(t[1]["removed"]["outliers"]["mean"].as_f64(), Some(150.0));
        assert!(t[1]["lr"]["param_error"]["mean"].as_f64().unwrap() > 1.0);
        assert!(t[1]["rolr"]["param_error"]["mean"].as_f64().unwrap() < 0.7);
        assert_eq!(res.per_task.len(), 2 * 2 * 3);
        cfg.jobs = 1;
        let again = run_with(&cfg, &Silent, &proto).unwrap_or_else(|o| panic!("{o:?}"));
        assert_eq!(table_json(&again), t);
        let md = to_markdown(&res);
        assert!(md.contains("| 0.5 |") && md.contains("about 1.3"), "{md}");
        assert_eq!(plots(&res).len(), 4);
    }

    /// With a unit cache a run stores every unit, and a run past its deadline resumes from it
    /// to the same table.
    #[test]
    fn a_cached_run_resumes_to_the_same_table() {
        let proto = Protocol {
            reps: 1,
            lambdas: vec![0.0, 0.5],
            p: 5,
            n: 200,
            n_test: 200,
            sigma_e: 0.5,
        };
        crate::cache::assert_resumes(
            RunConfig::quick(4),
            |cfg| run_with(cfg, &Silent, &proto),
            table_json,
            4,
        );
    }
}
