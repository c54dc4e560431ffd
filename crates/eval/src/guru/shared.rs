//! What the GURU experiments share with each other and with `poisoning`: the Table 2.1 sets,
//! their loading, splits, scaling and constant feature, the unit runner, and the table helpers.

use bulwark_core::{Dataset, DenseMatrix, Error, rng_for_stream};
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
use rand::seq::SliceRandom;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::experiment::{Observer, RunConfig};
use crate::synth::{toy_a, toy_b};

/// Where a data set comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    ToyA,
    ToyB,
    /// A built-in data set, as it is (two classes) or as a pair of its classes.
    Builtin(&'static str, Option<(&'static str, &'static str)>),
}

/// One row of Table 2.1 with the thesis's Table 2.2 accuracies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SetSpec {
    /// Key in `guru_binary.json`.
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) source: Source,
    /// Train, validation and test sizes (Table 2.1).
    pub(crate) sizes: [usize; 3],
    /// Table 2.2: GURU and SVM test accuracy (%).
    pub(crate) paper: [f64; 2],
    pub(crate) toy: bool,
}

pub(crate) const SETS: [SetSpec; 8] = [
    SetSpec {
        name: "toy_a",
        title: "Toy (a), Gaussian",
        source: Source::ToyA,
        sizes: [200, 200, 200],
        paper: [92.5, 92.5],
        toy: true,
    },
    SetSpec {
        name: "toy_b",
        title: "Toy (b), narrow Gaussian with outliers",
        source: Source::ToyB,
        sizes: [200, 200, 200],
        paper: [92.0, 92.0],
        toy: true,
    },
    SetSpec {
        name: "ionosphere",
        title: "Ionosphere",
        source: Source::Builtin("ionosphere", None),
        sizes: [100, 100, 151],
        paper: [82.24, 79.61],
        toy: false,
    },
    SetSpec {
        name: "pima",
        title: "Pima diabetes",
        source: Source::Builtin("pima", None),
        sizes: [200, 100, 468],
        paper: [67.52, 67.31],
        toy: false,
    },
    SetSpec {
        name: "splice",
        title: "splice EI vs IE",
        source: Source::Builtin("splice", Some(("ei", "ie"))),
        sizes: [500, 400, 632],
        paper: [93.39, 92.44],
        toy: false,
    },
    SetSpec {
        name: "usps_3v5",
        title: "USPS 3 vs 5",
        source: Source::Builtin("usps", Some(("3", "5"))),
        sizes: [800, 700, 700],
        paper: [95.57, 95.86],
        toy: false,
    },
    SetSpec {
        name: "usps_5v8",
        title: "USPS 5 vs 8",
        source: Source::Builtin("usps", Some(("5", "8"))),
        sizes: [800, 700, 700],
        paper: [97.71, 98.0],
        toy: false,
    },
    SetSpec {
        name: "usps_7v9",
        title: "USPS 7 vs 9",
        source: Source::Builtin("usps", Some(("7", "9"))),
        sizes: [800, 700, 700],
        paper: [97.57, 97.43],
        toy: false,
    },
];

/// A split as the learners see it: features scaled, the constant feature appended.
pub(crate) struct Parts {
    pub(crate) train: Dataset,
    pub(crate) val: Dataset,
    pub(crate) test: Dataset,
}

/// Appends the constant feature (binary or multiclass targets kept).
pub(crate) fn with_constant(d: &Dataset) -> Result<Dataset, Error> {
    let (m, n) = (d.len(), d.n_features());
    let mut data = vec![0.0; m * (n + 1)];
    for (i, row) in data.chunks_exact_mut(n + 1).enumerate() {
        d.row(i).to_dense_into(&mut row[..n]);
        row[n] = 1.0;
    }
    Dataset::try_new(
        d.name(),
        DenseMatrix::try_new(m, n + 1, data)?.into(),
        d.targets().clone(),
        bulwark_core::FeatureNames::Default(n + 1),
        d.class_names().to_vec(),
    )
}

/// The binary task of a set (before splitting); toys are drawn per repetition instead.
fn task_data(spec: &SetSpec, cfg: &RunConfig) -> Result<Option<Dataset>, Error> {
    match spec.source {
        Source::ToyA | Source::ToyB => Ok(None),
        Source::Builtin(name, pair) => builtin_task(name, pair, cfg).map(Some),
    }
}

/// The binary task of built-in data set `name`: the pair of classes `pair`, or its natural task.
pub(crate) fn builtin_task(
    name: &str,
    pair: Option<(&str, &str)>,
    cfg: &RunConfig,
) -> Result<Dataset, Error> {
    let (raw, _) = load(name, cfg.data_dir.as_deref())?;
    let task = match pair {
        Some((a, b)) => BinaryTask::Pair(a.into(), b.into()),
        None => BinaryTask::Natural,
    };
    binary_task(&raw, &task)
}

/// [`task_data`] for every set, in order; a data set missing from the data directory is
/// [`crate::Outcome::MissingData`] naming it.
pub(crate) fn load_tasks<'a>(
    specs: impl Iterator<Item = &'a SetSpec>,
    cfg: &RunConfig,
) -> Result<Vec<Option<Dataset>>, crate::Outcome> {
    specs
        .map(|spec| loaded(spec.name, task_data(spec, cfg)))
        .collect()
}

/// Runs the units `(set, repetition)` of a GURU experiment, seeded from the experiment's seed,
/// the set and the repetition, through the unit cache ([`crate::cache::run_units`]): a unit's
/// key covers the protocol and its data set's fingerprint (a generated set: its name).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_set_units<T: Serialize + DeserializeOwned + Send>(
    name: &str,
    cfg: &RunConfig,
    obs: &dyn Observer,
    proto: &(impl Serialize + Sync),
    names: &[&str],
    tasks: &[Option<Dataset>],
    jobs: &[(usize, usize)],
    run: impl Fn(usize, u64) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, crate::Outcome> {
    let base = crate::experiments::experiment_seed(cfg.seed, name);
    let fingerprints: Vec<String> = tasks
        .iter()
        .zip(names)
        .map(|(t, n)| match (t, &cfg.cache) {
            (Some(d), Some(_)) => crate::cache::data_fingerprint(d),
            _ => (*n).to_string(),
        })
        .collect();
    crate::cache::run_units(
        name,
        cfg,
        obs,
        jobs,
        |&(s, r)| {
            let key = crate::cache::UnitKey::of(
                (name, names[s], r),
                (cfg.mode, cfg.seed),
                &(proto, &fingerprints[s]),
            );
            (key, names[s].to_string(), r)
        },
        |&(s, r)| {
            let out = run(s, base ^ ((s as u64) << 32) ^ r as u64);
            obs.on_unit(name, &format!("{} #{r}", names[s]));
            out
        },
    )
}

/// A data set's load result as the harness reports it: a file missing from the data directory
/// is [`crate::Outcome::MissingData`] naming the set `name`, any other error a failure.
pub(crate) fn loaded<T>(name: &str, r: Result<T, Error>) -> Result<T, crate::Outcome> {
    r.map_err(|e| match e {
        Error::NotFound { .. } => crate::Outcome::MissingData {
            dataset: name.into(),
            message: e.to_string(),
        },
        e => crate::Outcome::Failed(e),
    })
}

/// Draws repetition `rep`'s split (or toy sample), scales and appends the constant feature.
pub(crate) fn parts(
    spec: &SetSpec,
    task: Option<&Dataset>,
    seed: u64,
) -> Result<(Parts, Dataset), Error> {
    let [a, b, c] = spec.sizes;
    let mut rng = rng_for_stream(seed, 1);
    let (train, val, test) = match (spec.source, task) {
        (Source::ToyA, _) => (
            toy_a(a, &mut rng)?,
            toy_a(b, &mut rng)?,
            toy_a(c, &mut rng)?,
        ),
        (Source::ToyB, _) => (
            toy_b(a, &mut rng)?,
            toy_b(b, &mut rng)?,
            toy_b(c, &mut rng)?,
        ),
        (Source::Builtin(..), Some(d)) => shuffled_parts(d, spec.name, spec.sizes, &mut rng)?,
        (Source::Builtin(name, _), None) => {
            return Err(Error::param(
                "data set",
                name,
                "loaded before its splits are drawn",
            ));
        }
    };
    let (train, val, test) = scaled(&train, &val, &test)?;
    // the noise is drawn on the scaled features (without the constant)
    let both = concat(&val, &test)?;
    Ok((
        Parts {
            train: with_constant(&train)?,
            val: with_constant(&val)?,
            test: with_constant(&test)?,
        },
        both,
    ))
}

/// Train, validation and test parts of `d` (named `name` in errors) of the given sizes from a
/// seeded shuffle, each part in data order.
pub(crate) fn shuffled_parts(
    d: &Dataset,
    name: &str,
    [a, b, c]: [usize; 3],
    rng: &mut bulwark_core::Rng,
) -> Result<(Dataset, Dataset, Dataset), Error> {
    if d.len() < a + b + c {
        return Err(Error::param(
            "split sizes",
            a + b + c,
            format!("at most the {} examples of {name}", d.len()),
        ));
    }
    let mut idx: Vec<usize> = (0..d.len()).collect();
    idx.shuffle(rng);
    let pick = |r: std::ops::Range<usize>| {
        let mut v = idx[r].to_vec();
        v.sort_unstable();
        d.select(&v)
    };
    Ok((pick(0..a), pick(a..a + b), pick(a + b..a + b + c)))
}

/// The three parts scaled onto `[−1, 1]` by the training part's range.
pub(crate) fn scaled(
    train: &Dataset,
    val: &Dataset,
    test: &Dataset,
) -> Result<(Dataset, Dataset, Dataset), Error> {
    let scaler = Scaler::fit(train, ScalingKind::MinMax)?;
    Ok((
        scaler.transform(train)?,
        scaler.transform(val)?,
        scaler.transform(test)?,
    ))
}

/// Validation rows followed by test rows (one noise draw covers both).
fn concat(a: &Dataset, b: &Dataset) -> Result<Dataset, Error> {
    let n = a.n_features();
    let mut data = vec![0.0; (a.len() + b.len()) * n];
    let mut y = Vec::with_capacity(a.len() + b.len());
    for (d, off) in [(a, 0), (b, a.len())] {
        for i in 0..d.len() {
            d.row(i)
                .to_dense_into(&mut data[(off + i) * n..(off + i + 1) * n]);
        }
        y.extend_from_slice(d.binary_labels()?);
    }
    Dataset::binary(a.name(), DenseMatrix::try_new(y.len(), n, data)?, y)
}

/// An exponent grid `k = a..b` as the protocol notes print it.
pub(crate) fn range(v: &[i32]) -> String {
    format!(
        "{}..{}",
        v.first().copied().unwrap_or(0),
        v.last().copied().unwrap_or(0)
    )
}

/// The index of the best validation accuracy; ties go to the last index when `prefer_last`
/// (the shared rule of `crate::select::best`, on the negated accuracies).
pub(crate) fn best(vals: &[f64], prefer_last: bool) -> usize {
    let scores: Vec<Option<f64>> = vals.iter().map(|v| Some(-v)).collect();
    let ties = if prefer_last {
        crate::select::Ties::Last
    } else {
        crate::select::Ties::First
    };
    crate::select::best(&scores, ties).unwrap_or(0)
}

pub(crate) fn pct(m: &Value) -> String {
    let (mean, se) = (
        m["mean"].as_f64().unwrap_or(f64::NAN),
        m["stderr"].as_f64().unwrap_or(f64::NAN),
    );
    format!("{mean:.2} ± {se:.2}")
}

/// Test accuracy (%) of `model` on `d`.
pub(crate) fn pct_acc(model: &dyn bulwark_core::Classifier, d: &Dataset) -> Result<f64, Error> {
    Ok(100.0 * (1.0 - model.error_rate(d)?))
}

/// One of the thesis's SGD runs at the chosen parameters (`guru_kernel`'s Algorithm 2,
/// `guru_multiclass`'s Algorithms 3 and 4), measured against the certified batch optimum there.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SgdPath {
    /// `(G(sgd) − G(batch)) / G(batch)` (0 when the optimum is 0).
    pub(crate) gap_to_batch: f64,
    pub(crate) eta0: f64,
    pub(crate) epochs: usize,
    /// Certified to the protocol's SGD gap.
    pub(crate) converged: bool,
}

impl SgdPath {
    /// The run that ended at objective `objective`, against the batch optimum `optimum`.
    pub(crate) fn new(
        objective: f64,
        optimum: f64,
        eta0: f64,
        epochs: usize,
        converged: bool,
    ) -> Self {
        let gap_to_batch = if optimum > 0.0 {
            (objective - optimum) / optimum
        } else {
            0.0
        };
        Self {
            gap_to_batch,
            eta0,
            epochs,
            converged,
        }
    }

    /// The runs of one data set, as the details JSON has them: the distance to the optimum
    /// (median, max), median epochs and `η₀`, and how many runs were certified.
    pub(crate) fn summary<'a>(paths: impl Iterator<Item = &'a SgdPath>) -> Value {
        let paths: Vec<&SgdPath> = paths.collect();
        let median = |v: Vec<f64>| crate::curve::median(&v).unwrap_or(f64::NAN);
        let gaps: Vec<f64> = paths.iter().map(|p| p.gap_to_batch).collect();
        json!({
            "gap_to_batch_median": median(gaps.clone()),
            "gap_to_batch_max": gaps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            "epochs_median": median(paths.iter().map(|p| p.epochs as f64).collect()),
            "eta0_median": median(paths.iter().map(|p| p.eta0).collect()),
            "certified": paths.iter().filter(|p| p.converged).count(),
        })
    }

    /// A [`SgdPath::summary`] as Markdown cells: `median, max | k of splits | median epochs`.
    pub(crate) fn cells(summary: &Value, splits: &Value) -> String {
        format!(
            "{}, {} | {} of {} | {}",
            crate::report::sci(&summary["gap_to_batch_median"]),
            crate::report::sci(&summary["gap_to_batch_max"]),
            summary["certified"],
            splits,
            crate::report::num(&summary["epochs_median"]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_preferred_end() {
        assert_eq!(best(&[1.0, 3.0, 3.0, 2.0], false), 1);
        assert_eq!(best(&[1.0, 3.0, 3.0, 2.0], true), 2);
        assert_eq!(best(&[5.0], true), 0);
    }
}
