//! The registry: every learner trains through it with its defaults, parameters it does not take
//! are refused by name, and the report says which solver answered.

use bulwark_core::{Classifier, HyperParams, ParamKind, ParamValue};
use bulwark_data::{BinaryTask, binary_task, load};
use bulwark_models::registry;

fn wdbc() -> bulwark_core::Dataset {
    let (raw, _) = load("wdbc", None).unwrap();
    let task = binary_task(&raw, &BinaryTask::Natural).unwrap();
    // a small, scaled copy keeps the test fast
    let idx: Vec<usize> = (0..task.len()).step_by(4).collect();
    let small = task.select(&idx);
    let s = bulwark_data::Scaler::fit(&small, bulwark_data::ScalingKind::Standard).unwrap();
    s.transform(&small).unwrap()
}

/// Trains `learner` through the registry, recording its progress messages.
fn train_recording(
    learner: &dyn bulwark_core::Learner,
    data: &bulwark_core::Dataset,
    given: &HyperParams,
) -> (bulwark_core::Fitted<bulwark_core::AnyModel>, Vec<String>) {
    let mut messages = Vec::new();
    let mut progress = |m: &str| {
        messages.push(m.to_string());
        std::ops::ControlFlow::Continue(())
    };
    let f = registry::train(learner, data, given, Some(&mut progress)).unwrap();
    (f, messages)
}

#[test]
fn every_registered_learner_trains_with_its_defaults() {
    let data = wdbc();
    let names: Vec<&str> = registry::learners().iter().map(|l| l.name()).collect();
    assert_eq!(
        names,
        [
            "lp",
            "o2b",
            "svm",
            "fdrop",
            "logreg",
            "guru",
            "ken-guru",
            "m-guru",
            "asvc",
            "rolr",
            "average",
            "kls-amu",
            "kls-boost"
        ]
    );
    for l in registry::learners() {
        let mut given = HyperParams::new();
        if l.name() == "fdrop" {
            given.set("max_passes", ParamValue::Count(2000));
            given.set("tolerance", ParamValue::Float(1e-3));
        }
        if l.name() == "kls-amu" {
            // standardised data lies outside the unit ball A_mu's filter keeps, and is far from
            // isotropic: its top principal direction (44 % of the variance) is the class
            // direction, which the variance test would strip at c = 10
            given.set("no_ball_filter", ParamValue::Bool(true));
            given.set("amu_constant", ParamValue::Float(100.0));
        }
        let (fitted, params) = registry::train_with_params(*l, &data, &given, None).unwrap();
        assert!(!fitted.report.solver.is_empty(), "{}", l.name());
        assert!(
            fitted.model.error_rate(&data).unwrap() < 0.2,
            "{}",
            l.name()
        );
        for spec in l.params() {
            if spec.default.is_some() {
                assert!(
                    params.get(spec.name).is_some(),
                    "{}: {}",
                    l.name(),
                    spec.name
                );
            }
            if spec.kind == ParamKind::FeatureValues {
                assert_eq!(
                    params.floats("feature_values").unwrap().len(),
                    data.n_features()
                );
            }
        }
    }
}

#[test]
fn the_lp_reports_the_structured_ipm_and_its_tolerance() {
    let data = wdbc();
    let lp = registry::find("lp").unwrap();
    let given = HyperParams::new()
        .with("budget", ParamValue::Float(2.0))
        .with("values", ParamValue::Text("mi".into()));
    let f = registry::train(lp, &data, &given, None).unwrap();
    assert_eq!(f.report.solver, "dsx-ipm");
    assert!(f.report.fallbacks.is_empty());
    assert!(f.report.converged);
    assert_eq!(f.report.tolerance, Some(1e-8));
    assert!(f.report.reached.unwrap() <= 1e-8);
    // an IPM held to 3 iterations cannot converge: the fallback answers and says so
    let given = given.with("ipm_max_iter", ParamValue::Count(3));
    // the progress messages say when the fallback took over
    let (f, messages) = train_recording(lp, &data, &given);
    assert!(
        messages[0].starts_with("LP (4), structured interior point: iteration 0"),
        "{messages:?}"
    );
    let first_fallback = messages
        .iter()
        .position(|m| m.starts_with("LP (4), fallback solver 1 (the structured IPM stopped"))
        .expect("a fallback message");
    assert_eq!(first_fallback, 4, "{messages:?}"); // iterations 0..=3 of the IPM first
    assert_ne!(f.report.solver, "dsx-ipm");
    assert!(f.report.fell_back(), "{:?}", f.report);
    assert!(
        f.report.fallbacks[0].starts_with("dsx-ipm"),
        "{:?}",
        f.report.fallbacks
    );
    // a bad factor of the reduced tolerance is refused by name
    let bad = HyperParams::new()
        .with("budget", ParamValue::Float(2.0))
        .with("accept_within", ParamValue::Float(-1.0));
    let e = registry::train(lp, &data, &bad, None).unwrap_err();
    assert!(e.to_string().contains("accept_within"), "{e}");
    // with screening, the LPs after the first are not called fallbacks (a working set's LP also
    // starts from iteration 0)
    let screened = HyperParams::new()
        .with("budget", ParamValue::Float(2.0))
        .with("screen_from", ParamValue::Count(100));
    let (f, messages) = train_recording(lp, &data, &screened);
    assert!(
        f.report.details["screening_rounds"] >= 1.0,
        "{:?}",
        f.report
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("LP (4), LP 2: a screening round, the whole LP or a fallback")),
        "{messages:?}"
    );
    assert!(
        !messages.iter().any(|m| m.contains("fallback solver 1")),
        "{messages:?}"
    );
}

#[test]
fn parameters_a_learner_does_not_take_are_refused_by_name() {
    let data = wdbc();
    let svm = registry::find("svm").unwrap();
    let e = registry::train(
        svm,
        &data,
        &HyperParams::new().with("budget", ParamValue::Float(3.0)),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("budget") && e.contains("a parameter of `svm`"),
        "{e}"
    );
    let e = registry::find("nope").unwrap_err().to_string();
    assert!(e.contains("lp, o2b, svm, fdrop, logreg"), "{e}");
    let lp = registry::find("lp").unwrap();
    let e = registry::train(
        lp,
        &data,
        &HyperParams::new().with("C", ParamValue::Text("x".into())),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`C`"), "{e}");
}

/// The learners that honour example weights (the others refuse them by name).
const HONOURS_WEIGHTS: &[&str] = &["guru", "ken-guru", "m-guru", "average"];

/// Of those, the ones whose default solver is exact, so that weight 2 on a row gives the
/// objective of the row twice (the SGD learners sample differently from duplicated data).
const EXACT: &[&str] = &["guru"];

#[test]
fn example_weights_are_honoured_or_refused() {
    let data = wdbc();
    let w = vec![1.0; data.len()];
    let weighted = data.clone().with_weights(w).unwrap();
    for l in registry::learners() {
        if HONOURS_WEIGHTS.contains(&l.name()) {
            // unit weights are no weights; weight 2 on a row is that row twice
            let plain = registry::train(*l, &data, &HyperParams::new(), None).unwrap();
            let unit = registry::train(*l, &weighted, &HyperParams::new(), None).unwrap();
            assert_eq!(plain.model, unit.model, "{}", l.name());
            if !EXACT.contains(&l.name()) {
                continue;
            }
            let mut c = vec![1.0; data.len()];
            c[0] = 2.0;
            let twice = data.clone().with_weights(c).unwrap();
            let idx: Vec<usize> = std::iter::once(0).chain(0..data.len()).collect();
            let a = registry::train(*l, &twice, &HyperParams::new(), None).unwrap();
            let b = registry::train(*l, &data.select(&idx), &HyperParams::new(), None).unwrap();
            let (oa, ob) = (a.report.objective.unwrap(), b.report.objective.unwrap());
            assert!((oa - ob).abs() <= 1e-9 * ob, "{}: {oa} vs {ob}", l.name());
            continue;
        }
        let e = registry::train(*l, &weighted, &HyperParams::new(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("example weights"), "{}: {e}", l.name());
    }
}

/// Every tunable a learner declares is one of its parameters, of a kind model selection can
/// grid (a number, a count or text), and every value of its default grid parses and is
/// distinct; the DSX LP declares its box `C` and budget `N` (and the feature values).
#[test]
fn every_tunable_is_a_parameter_with_a_default_grid_that_parses() {
    for l in registry::learners() {
        for t in l.tunable() {
            let spec = l
                .params()
                .iter()
                .find(|s| s.name == t.name)
                .unwrap_or_else(|| panic!("{}: tunable `{}` is not a parameter", l.name(), t.name));
            assert!(
                !matches!(spec.kind, ParamKind::Switch { .. }),
                "{}: {} is a switch",
                l.name(),
                t.name
            );
            assert!(
                !t.grid.is_empty(),
                "{}: {} has an empty grid",
                l.name(),
                t.name
            );
            let mut seen: Vec<&str> = Vec::new();
            for v in t.grid {
                HyperParams::parse(spec, v)
                    .unwrap_or_else(|e| panic!("{}: {} = {v}: {e}", l.name(), t.name));
                assert!(!seen.contains(v), "{}: {} repeats {v}", l.name(), t.name);
                seen.push(v);
            }
        }
    }
    let lp = registry::find("lp").unwrap();
    let names: Vec<&str> = lp.tunable().iter().map(|t| t.name).collect();
    assert_eq!(names, ["C", "budget", "values"]);
    assert!(
        registry::find("svm")
            .unwrap()
            .tunable()
            .iter()
            .any(|t| t.name == "C")
    );
}

/// `values missingness` resolves to the surprise of each feature's missing rate on the
/// training data: a feature that is often missing is cheap to delete.
#[test]
fn missingness_values_follow_the_training_datas_missing_cells() {
    use bulwark_core::{Dataset, DenseMatrix, MissingMask, Sign};
    let x = DenseMatrix::from_rows(&[
        vec![1.0, 0.0],
        vec![2.0, 0.0],
        vec![3.0, 1.0],
        vec![4.0, 2.0],
    ])
    .unwrap();
    let y = vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg];
    let mask = MissingMask::from_rows(2, &[vec![1], vec![1], vec![], vec![]]).unwrap();
    let d = Dataset::binary("t", x, y)
        .unwrap()
        .with_missing(mask)
        .unwrap();
    let lp = registry::find("lp").unwrap();
    let given = HyperParams::new().with("values", ParamValue::Text("missingness".into()));
    let p = registry::resolve(lp, &given, &d).unwrap();
    let v = p.floats("feature_values").unwrap();
    assert_eq!(v, [-(1.0f64 / 6.0).ln(), -(3.0f64 / 6.0).ln()]);
}

/// FDROP takes the feature values and the budget as the LP does: `values mi` with a budget in
/// value units trains the value-weighted FDROP (the interior-point method, certified), `k` is
/// the unit-valued shorthand (the same model as `budget` with uniform values), and `k` with
/// other values is refused by name.
#[test]
fn fdrop_takes_values_and_a_budget_like_the_lp() {
    let data = wdbc();
    let fdrop = registry::find("fdrop").unwrap();
    let mi = HyperParams::new()
        .with("budget", ParamValue::Float(2.0))
        .with("values", ParamValue::Text("mi".into()));
    let (f, params) = registry::train_with_params(fdrop, &data, &mi, None).unwrap();
    assert_eq!(f.report.solver, "dsx-ipm");
    assert!(f.report.converged, "{:?}", f.report);
    assert_eq!(f.report.details["budget"], 2.0);
    let v = params.floats("feature_values").unwrap();
    assert_eq!(v.len(), data.n_features());
    assert!(v.iter().any(|&x| x != 1.0));
    // uniform values: the k form, to the bit
    let by_budget = registry::train(
        fdrop,
        &data,
        &HyperParams::new().with("budget", ParamValue::Float(3.0)),
        None,
    )
    .unwrap();
    let by_k = registry::train(
        fdrop,
        &data,
        &HyperParams::new().with("k", ParamValue::Count(3)),
        None,
    )
    .unwrap();
    assert_eq!(by_budget.model, by_k.model);
    assert_ne!(by_budget.model, f.model);
    let e = registry::train(fdrop, &data, &mi.with("k", ParamValue::Count(2)), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`k`"), "{e}");
}
