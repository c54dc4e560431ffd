//! Robustness evaluation: the error under an attack, error-versus-budget curves, and the
//! certified robust error of a linear model under worst-case deletion.
//!
//! Each function asks only for what it uses: the noise curves and [`evaluate_attack`] work on
//! any [`Classifier`] (binary or multiclass, linear or not); the deletion and corruption attacks
//! ([`Attack`]) and the certificates need explicit weights ([`Linear`]).
//!
//! # Certification
//!
//! For each example with margin `m = y(b + w·x)` the certificate decides whether some deletion
//! with `Σ v_j ≤ N` makes the margin `≤ 0`, i.e. whether the maximal damage `D*` is `≥ m`
//! ([`crate::exact_deletion`]):
//!
//! 1. `m ≤ 0`: broken already (clean mistake);
//! 2. the DSX greedy reaches `m`: **broken** (the greedy lower bound);
//! 3. the fractional relaxation stays below `m`: **robust** (the relaxation upper bound);
//! 4. otherwise the exact search (DP, or branch and bound stopping at the first deletion that
//!    reaches `m`) decides; if its node limit is hit first the example stays **undecided**.
//!
//! The certificate reports `greedy_lower ≤ lower ≤ upper ≤ relaxation_upper` (fractions of
//! examples) and `exact = Some(lower)` when nothing is undecided. Decisions use the arithmetic
//! `m − D` (the attacked score recomputed by a dot product may differ by rounding).
//!
//! # Missing features
//!
//! A record of data with missing cells (`bulwark_core::missing`) has its missing features
//! deleted already, and they count against the budget: the attacks and the certificate give it
//! `max(0, N − Σ_{j missing} v_j)`. `clean_error` is then the error on the records as they are.

use serde::{Deserialize, Serialize};

use bulwark_core::missing::remaining_budget;
use bulwark_core::{
    AnyModel, Classifier, Dataset, Error, Linear, Result, TestTimeAttack, rng_for_stream,
    rng_from_seed,
};

use crate::attack::{Attack, AttackOutcome, check_model_data};
use crate::budget::{AttackBudget, check_budget};
use crate::exact_deletion::{self as knapsack, DEFAULT_NODE_LIMIT};
use crate::noise::{CloudDirection, GaussianCloud, UniformNoise};

/// The error of a model under one attack at one budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// Attack name (`none`, `greedy-delete`, …).
    pub attack: String,
    /// The budget `N` (`null` for attacks without one).
    pub budget: Option<f64>,
    /// The seed of the attack's random stream.
    pub seed: u64,
    /// Number of test examples.
    pub n_examples: usize,
    /// Mistakes on the attacked data (a score of 0 is a mistake).
    pub n_errors: usize,
    /// `n_errors / n_examples`.
    pub error: f64,
    /// Error on the clean data.
    pub clean_error: f64,
    /// Features deleted or corrupted, summed over examples (`null` for noise attacks).
    pub touched: Option<usize>,
    /// Examples whose exact search hit the node limit (`exact-delete` only).
    pub incomplete: usize,
    /// Examples with missing features (already deleted; they count against the budget).
    #[serde(default)]
    pub missing_records: usize,
}

/// One point of an error-versus-noise curve (mean over repetitions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoisePoint {
    /// Noise magnitude (`a` of `U(−a, a)`, or `σ`).
    pub magnitude: f64,
    /// Mean error over the repetitions.
    pub error: f64,
    /// Standard deviation of the error over the repetitions (divisor `r − 1`; 0 for one).
    pub std: f64,
}

/// Which noise cloud [`error_vs_noise`] adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseKind {
    /// [`UniformNoise`] with `a` = the magnitude.
    Uniform,
    /// [`GaussianCloud`] with `σ` = the magnitude, in the given direction.
    Gaussian(CloudDirection),
}

/// GURU's noise-robustness curve (Figs. 2.5, 2.7) for any classifier: for each magnitude, the
/// error averaged over `repeats ≥ 1` noise draws; repetition `r` draws from
/// `rng_for_stream(seed, r)` at every magnitude. The cloud along the weights needs a linear
/// model: use [`error_vs_noise_linear`] for it (here it is a typed error).
pub fn error_vs_noise<M: Classifier + ?Sized>(
    model: &M,
    data: &Dataset,
    kind: NoiseKind,
    magnitudes: &[f64],
    repeats: usize,
    seed: u64,
) -> Result<Vec<NoisePoint>> {
    noise_curve(model, None, data, kind, magnitudes, repeats, seed)
}

/// [`error_vs_noise`] for a linear model, which also allows the cloud along its weights
/// (GURU Fig. 2.6).
pub fn error_vs_noise_linear<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    kind: NoiseKind,
    magnitudes: &[f64],
    repeats: usize,
    seed: u64,
) -> Result<Vec<NoisePoint>> {
    check_model_data(model, data)?;
    noise_curve(
        model,
        Some(model.weights()),
        data,
        kind,
        magnitudes,
        repeats,
        seed,
    )
}

fn noise_curve<M: Classifier + ?Sized>(
    model: &M,
    weights: Option<&[f64]>,
    data: &Dataset,
    kind: NoiseKind,
    magnitudes: &[f64],
    repeats: usize,
    seed: u64,
) -> Result<Vec<NoisePoint>> {
    model.check_features(data.features())?;
    check_nonempty(data)?;
    if repeats == 0 {
        return Err(Error::param("repeats", repeats, "at least 1"));
    }
    if let (NoiseKind::Gaussian(CloudDirection::AlongWeights), None) = (kind, weights) {
        return Err(Error::param(
            "kind",
            "gaussian along the weights",
            "a linear model (error_vs_noise_linear); any model takes uniform or isotropic noise",
        ));
    }
    let m = data.len() as f64;
    magnitudes
        .iter()
        .map(|&mag| {
            let mut errs = Vec::with_capacity(repeats);
            for r in 0..repeats {
                let mut rng = rng_for_stream(seed, r as u64);
                let noisy = match kind {
                    NoiseKind::Uniform => UniformNoise { a: mag }.apply(data, &mut rng)?,
                    NoiseKind::Gaussian(direction) => GaussianCloud {
                        sigma: mag,
                        direction,
                    }
                    .apply(weights.unwrap_or(&[]), data, &mut rng)?,
                };
                errs.push(count_errors(model, &noisy)? as f64 / m);
            }
            let k = errs.len() as f64;
            let mean = errs.iter().sum::<f64>() / k;
            let std = if errs.len() > 1 {
                (errs.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
            } else {
                0.0
            };
            Ok(NoisePoint {
                magnitude: mag,
                error: mean,
                std,
            })
        })
        .collect()
}

/// One point of an error-versus-budget curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The budget `N`.
    pub budget: f64,
    /// The error under the attack at that budget.
    pub error: f64,
}

/// Mistakes of `model` on `data` ([`Classifier::is_mistake`]: for binary models with a score,
/// a score of 0 is a mistake, DSX eq. (1)).
fn count_errors<M: Classifier + ?Sized>(model: &M, data: &Dataset) -> Result<usize> {
    if data.n_classes() != model.n_classes() {
        return Err(Error::shape(
            "model classes vs data classes",
            model.n_classes(),
            data.n_classes(),
        ));
    }
    let t = data.targets();
    Ok((0..data.len())
        .filter(|&i| model.is_mistake(data.row(i), t.class_index(i)))
        .count())
}

fn check_nonempty(data: &Dataset) -> Result<()> {
    if data.is_empty() {
        Err(Error::param("data", "empty", "at least one example"))
    } else {
        Ok(())
    }
}

/// The error of `model` on `data` attacked by `attack` with budget `N`, the attack's randomness
/// drawn from `rng_from_seed(seed)` (so the same seed gives the same report).
pub fn evaluate<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    attack: &Attack,
    budget: f64,
    seed: u64,
) -> Result<EvalReport> {
    check_model_data(model, data)?;
    check_nonempty(data)?;
    let mut rng = rng_from_seed(seed);
    let out = attack.run(model, data, budget, &mut rng)?;
    report_of(model, data, attack, budget, seed, &out)
}

/// The report of `attack` at `budget` on `data` with its outcome `out`.
fn report_of<M: Classifier + ?Sized>(
    model: &M,
    data: &Dataset,
    attack: &Attack,
    budget: f64,
    seed: u64,
    out: &AttackOutcome,
) -> Result<EvalReport> {
    let m = data.len();
    let n_errors = count_errors(model, &out.data)?;
    Ok(EvalReport {
        attack: attack.name().to_string(),
        budget: Some(budget),
        seed,
        n_examples: m,
        n_errors,
        error: n_errors as f64 / m as f64,
        clean_error: count_errors(model, data)? as f64 / m as f64,
        touched: Some(out.touched),
        incomplete: out.incomplete,
        missing_records: data.incomplete_records(),
    })
}

/// [`evaluate`] for a model of any kind: a binary linear model takes every attack; any other
/// model (kernel, multiclass, ensemble) the attacks that need no weights (`none`,
/// `random-delete`, `uniform-noise`), and the others are typed errors naming the model's kind.
pub fn evaluate_model(
    model: &AnyModel,
    data: &Dataset,
    attack: &Attack,
    budget: f64,
    seed: u64,
) -> Result<EvalReport> {
    if let Some(linear) = model.as_linear() {
        return evaluate(linear, data, attack, budget, seed);
    }
    model.check_features(data.features())?;
    check_nonempty(data)?;
    let mut rng = rng_from_seed(seed);
    let out = attack.run_model_free(model.kind(), data, budget, &mut rng)?;
    report_of(model, data, attack, budget, seed, &out)
}

/// [`attacked_dataset`] for a model of any kind (see [`evaluate_model`]).
pub fn attacked_dataset_model(
    model: &AnyModel,
    data: &Dataset,
    attack: &Attack,
    budget: f64,
    seed: u64,
) -> Result<Dataset> {
    if let Some(linear) = model.as_linear() {
        return attacked_dataset(linear, data, attack, budget, seed);
    }
    model.check_features(data.features())?;
    let mut rng = rng_from_seed(seed);
    attack
        .run_model_free(model.kind(), data, budget, &mut rng)
        .map(|o| o.data)
}

/// The attacked copy of `data` (for `bulwark attack`): `attack` with budget `N`, randomness from
/// `rng_from_seed(seed)` — the same data [`evaluate`] scores.
pub fn attacked_dataset<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    attack: &Attack,
    budget: f64,
    seed: u64,
) -> Result<Dataset> {
    let mut rng = rng_from_seed(seed);
    attack.run(model, data, budget, &mut rng).map(|o| o.data)
}

/// The error of any classifier under any [`TestTimeAttack`] it admits (noise clouds, …), with
/// `rng_from_seed(seed)`.
pub fn evaluate_attack<M: Classifier + ?Sized, A: TestTimeAttack<M> + ?Sized>(
    model: &M,
    data: &Dataset,
    attack: &A,
    seed: u64,
) -> Result<EvalReport> {
    model.check_features(data.features())?;
    check_nonempty(data)?;
    let mut rng = rng_from_seed(seed);
    let attacked = attack.attack(model, data, &mut rng)?;
    let m = data.len();
    let n_errors = count_errors(model, &attacked)?;
    Ok(EvalReport {
        attack: attack.name().to_string(),
        budget: None,
        seed,
        n_examples: m,
        n_errors,
        error: n_errors as f64 / m as f64,
        clean_error: count_errors(model, data)? as f64 / m as f64,
        touched: None,
        incomplete: 0,
        missing_records: data.incomplete_records(),
    })
}

/// Error versus budget: one [`evaluate`] per budget, each with the same `seed` (so a point
/// equals the single evaluation at that budget).
pub fn error_vs_budget<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    attack: &Attack,
    budgets: &[f64],
    seed: u64,
) -> Result<Vec<CurvePoint>> {
    budgets
        .iter()
        .map(|&b| {
            evaluate(model, data, attack, b, seed).map(|r| CurvePoint {
                budget: b,
                error: r.error,
            })
        })
        .collect()
}

/// The verdict on one example.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A deletion within budget makes the margin `≤ 0` (or the clean margin is `≤ 0`).
    Broken,
    /// No deletion within budget does.
    Robust,
    /// The exact search hit its node limit before deciding.
    Undecided,
}

/// Which step decided an example.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecidedBy {
    /// The clean margin is already `≤ 0`.
    Clean,
    /// The greedy found a breaking deletion.
    Greedy,
    /// The relaxation proved robustness.
    Relaxation,
    /// The exact search (DP or branch and bound) decided.
    Exact,
    /// Undecided: the node limit was hit.
    NodeLimit,
    /// Undecided: the exact search was switched off ([`CertifyOptions::exact`]).
    NotSearched,
}

/// The certificate of one example.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ExampleCertificate {
    /// Clean margin `m = y(b + w·x)`.
    pub margin: f64,
    /// The budget the adversary had on this example: `N` less the value of its missing features.
    pub budget: f64,
    /// Damage of the DSX greedy deletion.
    pub greedy_damage: f64,
    /// Largest damage of any deletion found (greedy or exact search).
    pub best_damage: f64,
    /// Fractional-relaxation bound on the damage.
    pub relaxation_damage: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Which step decided it.
    pub decided_by: DecidedBy,
}

/// Options of [`certify_with`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CertifyOptions {
    /// Run the exact search on examples that neither the greedy nor the relaxation decide.
    pub exact: bool,
    /// Per-example branch-and-bound node limit.
    pub node_limit: u64,
    /// Keep the per-example records.
    pub per_example: bool,
}

impl Default for CertifyOptions {
    fn default() -> Self {
        Self {
            exact: true,
            node_limit: DEFAULT_NODE_LIMIT,
            per_example: true,
        }
    }
}

/// The certified robust error at one budget (fractions of the examples).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// The budget `N`.
    pub budget: f64,
    /// Number of examples.
    pub n_examples: usize,
    /// Error without attack.
    pub clean_error: f64,
    /// Error under the DSX greedy deletion (a lower bound).
    pub greedy_lower: f64,
    /// Broken by the strongest attack found (greedy, then exact search): the lower bound.
    pub lower: f64,
    /// Not proven robust (broken or undecided): the upper bound.
    pub upper: f64,
    /// Breakable according to the fractional relaxation alone (a weaker upper bound).
    pub relaxation_upper: f64,
    /// The exact worst-case error, when every example was decided.
    pub exact: Option<f64>,
    /// Examples broken.
    pub n_broken: usize,
    /// Examples proven robust.
    pub n_robust: usize,
    /// Examples undecided (node limit hit).
    pub n_undecided: usize,
    /// The node limit used.
    pub node_limit: u64,
    /// Examples with missing features (already deleted; their budget is `N` minus their value).
    #[serde(default)]
    pub missing_records: usize,
    /// Per-example records (empty unless requested).
    pub per_example: Vec<ExampleCertificate>,
}

/// [`certify_with`] with default options (exact search, default node limit, per-example records).
pub fn certify<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    budget: &AttackBudget,
) -> Result<Certificate> {
    certify_with(model, data, budget, &CertifyOptions::default())
}

/// The certified robust error of `model` on `data` under deletion with `budget` (module docs).
pub fn certify_with<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    budget: &AttackBudget,
    options: &CertifyOptions,
) -> Result<Certificate> {
    let y = check_model_data(model, data)?;
    check_nonempty(data)?;
    budget.check_features(data.n_features())?;
    check_budget(budget.budget())?;
    let (w, b, v, n) = (
        model.weights(),
        model.bias(),
        budget.values(),
        budget.budget(),
    );
    let m = data.len();
    let mut items = Vec::new();
    let (mut clean, mut greedy_broken, mut relax_breakable) = (0, 0, 0);
    let (mut broken, mut robust, mut undecided) = (0, 0, 0);
    let mut per_example = Vec::with_capacity(if options.per_example { m } else { 0 });
    for i in 0..m {
        let x = data.row(i);
        let margin = y[i].as_f64() * (x.dot(w) + b);
        knapsack::items(w, x, y[i], v, &mut items);
        // what is missing counts against the budget (bulwark_core::missing)
        let n = remaining_budget(data.missing(), i, v, n);
        let g = knapsack::greedy(&items, n).damage;
        let r = knapsack::relaxation(&items, n);
        let mut best = g;
        let (verdict, by) = if margin <= 0.0 {
            clean += 1;
            (Verdict::Broken, DecidedBy::Clean)
        } else if g >= margin {
            (Verdict::Broken, DecidedBy::Greedy)
        } else if r < margin {
            (Verdict::Robust, DecidedBy::Relaxation)
        } else if !options.exact {
            (Verdict::Undecided, DecidedBy::NotSearched)
        } else {
            let (s, reached) = knapsack::decide(&items, n, options.node_limit, margin);
            best = best.max(s.deletion.damage);
            if reached || best >= margin {
                (Verdict::Broken, DecidedBy::Exact)
            } else if s.complete {
                (Verdict::Robust, DecidedBy::Exact)
            } else {
                (Verdict::Undecided, DecidedBy::NodeLimit)
            }
        };
        // damages are ≥ 0, so a clean mistake (margin ≤ 0) counts in both
        greedy_broken += usize::from(g >= margin);
        relax_breakable += usize::from(r >= margin);
        match verdict {
            Verdict::Broken => broken += 1,
            Verdict::Robust => robust += 1,
            Verdict::Undecided => undecided += 1,
        }
        if options.per_example {
            per_example.push(ExampleCertificate {
                margin,
                budget: n,
                greedy_damage: g,
                best_damage: best,
                relaxation_damage: r,
                verdict,
                decided_by: by,
            });
        }
    }
    let frac = |k: usize| k as f64 / m as f64;
    Ok(Certificate {
        budget: n,
        n_examples: m,
        clean_error: frac(clean),
        greedy_lower: frac(greedy_broken),
        lower: frac(broken),
        upper: frac(broken + undecided),
        relaxation_upper: frac(relax_breakable),
        exact: (undecided == 0).then(|| frac(broken)),
        n_broken: broken,
        n_robust: robust,
        n_undecided: undecided,
        node_limit: options.node_limit,
        missing_records: data.incomplete_records(),
        per_example,
    })
}

/// One certificate per budget, with the same values (per-example records dropped unless
/// `options.per_example`).
pub fn certify_curve<M: Linear + ?Sized>(
    model: &M,
    data: &Dataset,
    values: &[f64],
    budgets: &[f64],
    options: &CertifyOptions,
) -> Result<Vec<Certificate>> {
    budgets
        .iter()
        .map(|&n| {
            let b = AttackBudget::try_new(values.to_vec(), n)?;
            certify_with(model, data, &b, options)
        })
        .collect()
}
