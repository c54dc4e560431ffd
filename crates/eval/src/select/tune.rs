//! Stratified, seeded K-fold cross-validation of a learner's grid under a threat, and the refit
//! of the chosen point.

use std::ops::ControlFlow;

use bulwark_adversary::CorruptionStats;
use bulwark_core::{
    AnyModel, Dataset, Error, FitReport, HyperParams, Learner, ParamKind, ParamValue, Result,
    rng_for_stream,
};
use bulwark_data::{Scaler, ScalingKind, k_fold};
use bulwark_models::{CvRow, Selection, registry};

use super::{Grid, Patterns, Threat, Ties, best};
use crate::stats::MeanSe;

/// One model selection: the learner, its fixed parameters and grid, the threat, the folds.
#[derive(Debug, Clone)]
pub struct TuneSpec {
    /// The learner.
    pub learner: &'static dyn Learner,
    /// Parameters set by the user (not searched; the registry's defaults fill the rest).
    pub fixed: HyperParams,
    /// The searched parameters.
    pub grid: Grid,
    /// What every fold is scored under.
    pub threat: Threat,
    /// Number of stratified folds, at least 2 and at most the examples of the smallest class.
    pub folds: usize,
    /// Seed of the folds and of every random choice of the threat.
    pub seed: u64,
    /// Scaling, fitted on each training fold (and on all the data for the refit).
    pub scaling: Option<ScalingKind>,
    /// Where the threat `missing` draws its patterns and the values `missingness` take their
    /// rates, when not from the training data (`--missing-from`): which cells go missing, not
    /// their values or labels.
    pub patterns: Option<Patterns>,
}

/// Where a selection is, reported before every fit: a safe point to stop at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The fold (0-based), or `folds` for the refit on all the data.
    pub fold: usize,
    /// Folds in all.
    pub folds: usize,
    /// The grid point (0-based, the most regular first).
    pub point: usize,
    /// Grid points in all.
    pub points: usize,
}

/// The refit of the chosen point on all the data.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// The model.
    pub model: AnyModel,
    /// Every parameter it was fitted with (defaults and feature values resolved).
    pub params: HyperParams,
    /// The scaling fitted on all the data, if asked.
    pub scaler: Option<Scaler>,
    /// The data as the model saw it (scaled).
    pub data: Dataset,
    /// What the fit reported.
    pub report: FitReport,
}

/// Is `e` the user's fault (a value refused, data that cannot be scored), as opposed to a
/// solver failing on one fold?
fn is_bad_input(e: &Error) -> bool {
    !matches!(e, Error::Numerical { .. })
}

fn scaled(
    kind: Option<ScalingKind>,
    train: &Dataset,
    other: &Dataset,
) -> Result<(Dataset, Dataset, Option<Scaler>)> {
    match kind {
        None => Ok((train.clone(), other.clone(), None)),
        Some(k) => {
            let s = Scaler::fit(train, k)?;
            Ok((s.transform(train)?, s.transform(other)?, Some(s)))
        }
    }
}

/// The parameters of `point` on `train`: the fixed ones, the point's, the registry's defaults,
/// and the feature values resolved (from `patterns` for `missingness` when given).
fn params_for(spec: &TuneSpec, point: &HyperParams, train: &Dataset) -> Result<HyperParams> {
    let mut given = spec.fixed.clone();
    for (k, v) in point.iter() {
        given.set(k, v.clone());
    }
    let takes_values = spec
        .learner
        .params()
        .iter()
        .find(|p| p.kind == ParamKind::FeatureValues);
    if let (Some(pool), Some(values)) = (&spec.patterns, takes_values) {
        let named = match given.get(values.name) {
            Some(ParamValue::Text(t)) => Some(t.as_str()),
            Some(_) => None,
            None => values.default,
        };
        if named == Some("missingness") && given.get("feature_values").is_none() {
            if pool.n_features() != train.n_features() {
                return Err(Error::shape(
                    "missing-cell patterns vs data features",
                    train.n_features(),
                    pool.n_features(),
                ));
            }
            given.set(
                "feature_values",
                ParamValue::Floats(pool.missingness_values()?),
            );
        }
    }
    registry::resolve(spec.learner, &given, train)
}

/// `f()`, a panic inside it turned into an [`Error::Numerical`] of `algorithm`: one bad fit costs a
/// grid point, not the run.
pub(crate) fn no_panic<T>(algorithm: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Err(Error::Numerical {
            algorithm: algorithm.into(),
            message: format!("panicked: {msg}"),
        })
    })
}

/// `learner.fit` under [`no_panic`].
fn fit(
    learner: &dyn Learner,
    data: &Dataset,
    params: &HyperParams,
) -> Result<bulwark_core::Fitted<AnyModel>> {
    no_panic(learner.name(), || learner.fit(data, params, None))
}

fn describe(point: &HyperParams) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks what can be checked before the first fit: binary labels, the fold count against the
/// smallest class, and a pattern to draw from for `missing`.
fn check(data: &Dataset, spec: &TuneSpec) -> Result<()> {
    let y = data.binary_labels()?;
    if spec.folds < 2 {
        return Err(Error::param("folds", spec.folds, "at least 2"));
    }
    let pos = y.iter().filter(|s| s.as_f64() > 0.0).count();
    let (count, class) = if pos <= y.len() - pos {
        (pos, 1)
    } else {
        (y.len() - pos, 0)
    };
    if spec.folds > count {
        let name = data
            .class_names()
            .get(class)
            .cloned()
            .unwrap_or_else(|| if class == 1 { "+1".into() } else { "-1".into() });
        return Err(Error::param(
            "folds",
            spec.folds,
            format!(
                "at most {count}, the examples of the smallest class `{name}` (every stratified fold needs one of each class)"
            ),
        ));
    }
    if spec.threat.missing {
        let pool = spec.patterns.clone().unwrap_or_else(|| Patterns::of(data));
        if pool.incomplete().is_empty() {
            return Err(Error::param(
                "threat",
                spec.threat,
                format!(
                    "records with missing cells to draw the pattern from (none of the {} records misses a cell: read them with --missing delete, or give --missing-from FILE)",
                    pool.len()
                ),
            ));
        }
        if pool.n_features() != data.n_features() {
            return Err(Error::shape(
                "missing-cell patterns vs data features",
                data.n_features(),
                pool.n_features(),
            ));
        }
    }
    Ok(())
}

/// Cross-validates every point of `spec.grid` on `data` (a binary task, not scaled: the scaling
/// is fitted on each training fold) and chooses by [`best`] on the mean validation error, ties
/// to the more regular point (the first listed). A point is chosen only if every fold scored
/// it; its row still reports the folds that did. `progress` is called before every fit (a
/// safe point: `Break` stops the selection with an error saying where).
///
/// A value the learner refuses, data that cannot be scored under the threat (a deletion attack
/// on a kernel model, `missing` without records with missing cells), a fold count above the
/// smallest class: typed errors before or at the first fit concerned. A solver failing on one
/// fold is recorded in the row (`failures`), not an error.
pub fn tune(
    data: &Dataset,
    spec: &TuneSpec,
    progress: &mut dyn FnMut(&Step) -> ControlFlow<()>,
) -> Result<Selection> {
    check(data, spec)?;
    let points = spec.grid.points();
    let k = spec.folds;
    let splits = k_fold(data, k, true, spec.seed)?;
    let mut rows: Vec<CvRow> = points
        .iter()
        .map(|p| CvRow {
            params: p.clone(),
            mean_error: None,
            std_error: None,
            folds: 0,
            fold_errors: Vec::new(),
            not_converged: 0,
            failures: Vec::new(),
        })
        .collect();
    for (f, split) in splits.iter().enumerate() {
        let (train_raw, val_raw) = (data.select(&split.train), data.select(&split.test));
        let (train, val, _) = scaled(spec.scaling, &train_raw, &val_raw)?;
        let pool = spec
            .patterns
            .clone()
            .unwrap_or_else(|| Patterns::of(&train_raw));
        let f64_ = f as u64;
        let val =
            spec.threat
                .validation(&val, &pool, &mut rng_for_stream(spec.seed, 2 * f64_ + 1))?;
        let used = spec
            .threat
            .training(&train, &mut rng_for_stream(spec.seed, 2 * f64_ + 2))?;
        let stats = CorruptionStats::fit(&used)?;
        let attack_seed = spec.seed ^ ((f64_ + 1) << 32);
        for (p, point) in points.iter().enumerate() {
            let step = Step {
                fold: f,
                folds: k,
                point: p,
                points: points.len(),
            };
            if progress(&step).is_break() {
                return Err(Error::Interrupted {
                    kept: format!(
                        "nothing (the selection stopped before fold {} of {k}, grid point {} of {})",
                        f + 1,
                        p + 1,
                        points.len()
                    ),
                });
            }
            let params = params_for(spec, point, &train)?;
            let row = &mut rows[p];
            let fitted = match fit(spec.learner, &used, &params) {
                Ok(x) => x,
                Err(e) if is_bad_input(&e) => return Err(e),
                Err(e) => {
                    row.failures
                        .push(format!("fold {}: {} {}", f + 1, describe(point), e));
                    continue;
                }
            };
            if spec.threat.needs_weights() && fitted.model.as_linear().is_none() {
                return Err(Error::param(
                    "threat",
                    spec.threat,
                    format!(
                        "a threat this {} model can be scored under (none, missing, random-delete:N, uniform-noise:X or a contamination): the greedy attacks read a binary linear model's weights",
                        fitted.model.kind()
                    ),
                ));
            }
            row.not_converged += usize::from(!fitted.report.converged);
            let e = spec
                .threat
                .score(&fitted.model, &val, &stats, attack_seed)?;
            row.fold_errors.push(e);
            row.folds += 1;
        }
    }
    for row in &mut rows {
        if row.folds > 0 {
            let s = MeanSe::of(&row.fold_errors);
            row.mean_error = Some(s.mean);
            row.std_error = (row.folds > 1).then_some(s.stderr);
        }
    }
    let scores: Vec<Option<f64>> = rows
        .iter()
        .map(|r| r.mean_error.filter(|_| r.folds == k))
        .collect();
    let chosen = best(&scores, Ties::First).ok_or_else(|| Error::Numerical {
        algorithm: spec.learner.name().into(),
        message: format!(
            "no grid point was fitted on every fold ({})",
            rows.iter()
                .flat_map(|r| r.failures.first())
                .next()
                .cloned()
                .unwrap_or_default()
        ),
    })?;
    Ok(Selection {
        learner: spec.learner.name().into(),
        threat: spec.threat.to_string(),
        folds: k,
        seed: spec.seed,
        tuned: spec.grid.axes.iter().map(|a| a.name.clone()).collect(),
        rule: spec.grid.tie_rule(),
        best: chosen,
        cv: rows,
    })
}

/// Refits the chosen point of `selection` on all of `data` (scaled as the spec says; no
/// contamination: the data as they are).
pub fn fit_chosen(data: &Dataset, spec: &TuneSpec, selection: &Selection) -> Result<Chosen> {
    let point = &selection.chosen().params;
    let (scaler, scaled) = match spec.scaling {
        None => (None, data.clone()),
        Some(k) => {
            let s = Scaler::fit(data, k)?;
            let d = s.transform(data)?;
            (Some(s), d)
        }
    };
    let params = params_for(spec, point, &scaled)?;
    let fitted = fit(spec.learner, &scaled, &params)?;
    Ok(Chosen {
        model: fitted.model,
        params,
        scaler,
        data: scaled,
        report: fitted.report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::MissingMask;
    use bulwark_data::{BinaryTask, binary_task, load};

    /// Every fourth record of wdbc (143 x 30), unscaled.
    fn wdbc() -> Dataset {
        let (raw, _) = load("wdbc", None).unwrap();
        let task = binary_task(&raw, &BinaryTask::Natural).unwrap();
        let idx: Vec<usize> = (0..task.len()).step_by(4).collect();
        task.select(&idx)
    }

    fn spec(algo: &str, grid: &[(&str, &[&str])], threat: &str, folds: usize) -> TuneSpec {
        let learner = registry::find(algo).unwrap();
        let given: Vec<(String, Vec<String>)> = grid
            .iter()
            .map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect();
        TuneSpec {
            learner,
            fixed: HyperParams::new(),
            grid: Grid::for_learner(learner, &given, &HyperParams::new()).unwrap(),
            threat: threat.parse().unwrap(),
            folds,
            seed: 7,
            scaling: Some(ScalingKind::Standard),
            patterns: None,
        }
    }

    fn go(data: &Dataset, spec: &TuneSpec) -> Result<Selection> {
        tune(data, spec, &mut |_| ControlFlow::Continue(()))
    }

    #[test]
    fn the_choice_is_the_smallest_mean_error_of_a_full_row_ties_to_the_first() {
        let d = wdbc();
        let s = spec("svm", &[("C", &["100", "0.01", "1"])], "greedy-delete:3", 4);
        let sel = go(&d, &s).unwrap();
        let cs: Vec<f64> = sel
            .cv
            .iter()
            .map(|r| r.params.float("C").unwrap())
            .collect();
        assert_eq!(
            cs,
            [0.01, 1.0, 100.0],
            "the most regular (smallest C) first"
        );
        for r in &sel.cv {
            assert_eq!((r.folds, r.fold_errors.len(), r.failures.len()), (4, 4, 0));
            let mean = r.fold_errors.iter().sum::<f64>() / 4.0;
            assert!((r.mean_error.unwrap() - mean).abs() < 1e-15);
            assert!(r.std_error.unwrap() >= 0.0);
        }
        let min = sel
            .cv
            .iter()
            .map(|r| r.mean_error.unwrap())
            .fold(f64::INFINITY, f64::min);
        let first = sel
            .cv
            .iter()
            .position(|r| r.mean_error.unwrap() == min)
            .unwrap();
        assert_eq!(sel.best, first);
        assert_eq!(sel.threat, "greedy-delete:3");
        assert!(sel.rule.contains("the smaller C"), "{}", sel.rule);
        // the attack costs the classifier something on some point
        let clean = go(&d, &spec("svm", &[("C", &["100", "0.01", "1"])], "none", 4)).unwrap();
        assert!(
            sel.cv
                .iter()
                .zip(&clean.cv)
                .all(|(a, c)| a.mean_error >= c.mean_error)
        );
        assert!(
            sel.cv
                .iter()
                .zip(&clean.cv)
                .any(|(a, c)| a.mean_error > c.mean_error)
        );
        // the refit on all the data uses the chosen C
        let chosen = fit_chosen(&d, &s, &sel).unwrap();
        assert_eq!(chosen.params.float("C").unwrap(), cs[sel.best]);
        assert!(chosen.scaler.is_some());
    }

    #[test]
    fn the_same_seed_gives_the_same_bits_and_another_seed_other_folds() {
        let d = wdbc();
        let s = spec(
            "lp",
            &[("C", &["0.1", "1"]), ("budget", &["0", "2"])],
            "random-delete:2",
            3,
        );
        let a = go(&d, &s).unwrap();
        let b = go(&d, &s).unwrap();
        assert_eq!(a, b);
        let bits = |x: &Selection| -> Vec<u64> {
            x.cv.iter()
                .flat_map(|r| r.fold_errors.iter().map(|e| e.to_bits()))
                .collect()
        };
        assert_eq!(bits(&a), bits(&b));
        let other = TuneSpec {
            seed: 8,
            ..s.clone()
        };
        assert_ne!(bits(&a), bits(&go(&d, &other).unwrap()));
        // the LP's table: its budget searched from the larger (more regular) down
        let n: Vec<f64> =
            a.cv.iter()
                .map(|r| r.params.float("budget").unwrap())
                .collect();
        assert_eq!(n, [2.0, 0.0, 2.0, 0.0]);
        // a stop at a safe point is an error saying where
        let mut calls = 0;
        let e = tune(&d, &s, &mut |step| {
            calls += 1;
            if step.fold == 1 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap_err();
        assert!(matches!(e, Error::Interrupted { .. }), "{e}");
        assert!(e.to_string().contains("stopped before fold 2 of 3"), "{e}");
        assert_eq!(calls, 4 + 1);
    }

    #[test]
    fn bad_selections_are_typed_errors() {
        let d = wdbc();
        // more folds than the smallest class has examples
        let few = d.select(&(0..d.len()).filter(|&i| i < 60).collect::<Vec<_>>());
        let small = few
            .binary_labels()
            .unwrap()
            .iter()
            .filter(|s| s.as_f64() > 0.0)
            .count();
        let e = go(&few, &spec("svm", &[], "none", small + 1))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("invalid parameter `folds`") && e.contains("smallest class"),
            "{e}"
        );
        assert!(
            go(&d, &spec("svm", &[], "none", 1))
                .unwrap_err()
                .to_string()
                .contains("at least 2")
        );
        // a grid value the learner refuses
        let e = go(&d, &spec("svm", &[("C", &["1", "-1"])], "none", 3))
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid parameter `C` = -1"), "{e}");
        // a threat a kernel model cannot be scored under
        let e = go(
            &d,
            &spec("ken-guru", &[("sigma", &["1"])], "greedy-delete:1", 3),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("kernel model") && e.contains("invalid parameter `threat`"),
            "{e}"
        );
        // `missing` on data without a missing cell
        let e = go(&d, &spec("svm", &[], "missing", 3))
            .unwrap_err()
            .to_string();
        assert!(e.contains("none of the 143 records misses a cell"), "{e}");
    }

    #[test]
    fn missing_scores_under_the_pattern_of_the_pool_and_missingness_values_follow_it() {
        let d = wdbc();
        // a pool of three records: two miss features 0-9 (the "mean" block of wdbc), one none
        let rows: Vec<Vec<usize>> = vec![(0..10).collect(), vec![], (0..10).collect()];
        let x = bulwark_core::DenseMatrix::zeros(3, 30);
        let y = d.binary_labels().unwrap()[..3].to_vec();
        let pool_data = Dataset::binary("pool", x, y)
            .unwrap()
            .with_missing(MissingMask::from_rows(30, &rows).unwrap())
            .unwrap();
        let mut s = spec(
            "lp",
            &[
                ("C", &["1"]),
                ("budget", &["0", "10"]),
                ("values", &["uniform", "missingness"]),
            ],
            "missing",
            3,
        );
        s.patterns = Some(Patterns::of(&pool_data));
        let sel = go(&d, &s).unwrap();
        assert_eq!(sel.cv.len(), 4);
        let clean = go(
            &d,
            &TuneSpec {
                threat: Threat::default(),
                ..s.clone()
            },
        )
        .unwrap();
        // losing ten features never helps the LP that ignores them (N = 0)
        let at = |sel: &Selection, n: f64, v: &str| {
            sel.cv
                .iter()
                .find(|r| {
                    r.params.float("budget").unwrap() == n && r.params.text("values").unwrap() == v
                })
                .unwrap()
                .mean_error
                .unwrap()
        };
        assert!(at(&sel, 0.0, "uniform") >= at(&clean, 0.0, "uniform"));
        // `missingness` values come from the pool: features 0-9 cost -ln(3/5), the rest -ln(1/5)
        let fixed = HyperParams::new()
            .with("C", ParamValue::Float(1.0))
            .with("budget", ParamValue::Float(1.0));
        let given = [("values".to_string(), vec!["missingness".to_string()])];
        let one = TuneSpec {
            grid: Grid::for_learner(s.learner, &given, &fixed).unwrap(),
            fixed,
            ..s.clone()
        };
        let sel = go(&d, &one).unwrap();
        let chosen = fit_chosen(&d, &one, &sel).unwrap();
        let v = chosen.params.floats("feature_values").unwrap();
        assert!((v[0] + (3.0f64 / 5.0).ln()).abs() < 1e-12, "{v:?}");
        assert!((v[29] + (1.0f64 / 5.0).ln()).abs() < 1e-12, "{v:?}");
    }

    #[test]
    fn contamination_of_the_training_folds_costs_validation_accuracy() {
        let d = wdbc();
        let clean = go(&d, &spec("svm", &[("C", &["1"])], "none", 3)).unwrap();
        let dirty = go(&d, &spec("svm", &[("C", &["1"])], "label-far:0.3", 3)).unwrap();
        assert!(dirty.cv[0].mean_error.unwrap() > clean.cv[0].mean_error.unwrap() + 0.05);
    }
}
