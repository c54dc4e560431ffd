//! Example screening (`bulwark_deletion::screening`) on real images: LP (4) solved on working
//! sets gives the whole LP's optimum, certified, and says what it did.

use bulwark_core::{Dataset, Fit, ParamGuard};
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
use bulwark_deletion::{DsxLpParams, FeatureValues, Screening, SolveDiagnostics};

/// Every `step`-th image of the USPS digits (1 100 per digit), digit 0 against the nine others
/// (one in ten positive: an imbalanced task on which most examples end with a zero loss),
/// min-max scaled.
fn zero_vs_rest(step: usize) -> Dataset {
    let (raw, _) = load("usps", None).expect("usps in the repository's data folder");
    let task = binary_task(&raw, &BinaryTask::Positive("0".into())).unwrap();
    let d = task.select(&(0..task.len()).step_by(step).collect::<Vec<_>>());
    Scaler::fit(&d, ScalingKind::MinMax)
        .and_then(|s| s.transform(&d))
        .unwrap()
}

/// The structured IPM alone (no fallback), `N = 10`, `C = 1`, with `screening`.
fn params(screening: Screening) -> DsxLpParams {
    DsxLpParams::new()
        .budget(10.0)
        .c(1.0)
        .values(FeatureValues::Uniform)
        .fallback(false)
        .screening(screening)
}

/// The fit's diagnostics with `screening`.
fn diagnostics(screening: Screening, data: &Dataset) -> SolveDiagnostics {
    params(screening)
        .check()
        .unwrap()
        .fit_with_diagnostics(data)
        .unwrap()
        .1
}

/// Screening at any size, the first working set every fifth example of each class (with fewer
/// examples than about twice the features, the first answer fits its sample so closely that
/// most other examples join: 1/16 of these sets is 172 or 86 examples for 256 features).
fn always() -> Screening {
    Screening {
        min_examples: 0,
        sample_fraction: 0.2,
        ..Screening::default()
    }
}

#[test]
fn screening_finds_the_whole_lps_optimum_from_a_smaller_lp() {
    let data = zero_vs_rest(4);
    assert_eq!((data.len(), data.n_features()), (2750, 256));
    let (_, whole) = params(Screening::off())
        .check()
        .unwrap()
        .fit_with_diagnostics(&data)
        .unwrap();
    assert!(whole.screening.is_empty(), "{:?}", whole.screening);
    let (model, screened) = params(always())
        .check()
        .unwrap()
        .fit_with_diagnostics(&data)
        .unwrap();
    // the structured IPM answered every LP, certified for the whole LP
    for d in [&whole, &screened] {
        assert_eq!(d.solver, "dsx-ipm", "{d:?}");
        assert!(d.converged && d.fallbacks.is_empty(), "{d:?}");
    }
    let [r] = &screened.screening[..] else {
        panic!("one screened LP: {:?}", screened.screening)
    };
    assert_eq!(r.gave_up, None, "{}", r.describe());
    assert!(r.rounds >= 2, "{}", r.describe());
    assert_eq!(r.working_sets.len(), r.rounds as usize);
    assert_eq!(r.iterations, screened.iterations, "{}", r.describe());
    // the LP that answered is the last working set, well under half the examples
    let last = *r.working_sets.last().unwrap();
    assert!(2 * last < data.len(), "{}", r.describe());
    assert!(screened.lp_vars < whole.lp_vars / 2, "{screened:?}");
    // the same optimum: the objective is the closed form over every example
    let (a, b) = (whole.objective, screened.objective);
    assert!((a - b).abs() <= 1e-7 * (1.0 + a), "{a} vs {b}");
    assert!(
        (screened.closed_form_objective - b).abs() <= 1e-12 * (1.0 + b),
        "{screened:?}"
    );
    assert!(screened.gap <= 1e-8, "{screened:?}");
    assert_eq!(model.weights().len(), 256);
}

#[test]
fn a_round_whose_iterate_leaves_an_outside_example_with_a_loss_ends_early() {
    let data = zero_vs_rest(4);
    let fit = |s: Screening| diagnostics(s, &data);
    let to_the_end = fit(Screening {
        early_stop: 0.0,
        ..always()
    });
    let early = fit(always());
    let ([full], [r]) = (&to_the_end.screening[..], &early.screening[..]) else {
        panic!("one screened LP each: {to_the_end:?} {early:?}")
    };
    assert_eq!(full.ended_early, 0, "{}", full.describe());
    // the rounds before the last ended at a gap of 1e-3, the last one was solved to the
    // tolerance and certified for the whole LP
    assert!(r.ended_early >= 1, "{}", r.describe());
    assert!(r.rounds > r.ended_early, "{}", r.describe());
    assert_eq!(r.gave_up, None, "{}", r.describe());
    assert!(r.describe().contains("ended early"), "{}", r.describe());
    assert_eq!(early.solver, "dsx-ipm");
    assert!(early.converged && early.gap <= 1e-8, "{early:?}");
    // the same optimum: both are the closed form over every example at a certified answer
    let (a, b) = (to_the_end.objective, early.objective);
    assert!((a - b).abs() <= 1e-7 * (1.0 + a), "{a} vs {b}");
    assert_eq!(r.iterations, early.iterations, "{}", r.describe());
}

#[test]
fn screening_that_gives_up_solves_the_whole_lp_and_counts_its_rounds() {
    let data = zero_vs_rest(8);
    // the first working set (every fifth example of each class, 276) is under the limit, a later
    // one over it
    let s = Screening {
        max_fraction: 0.25,
        ..always()
    };
    let (_, d) = params(s.clone())
        .check()
        .unwrap()
        .fit_with_diagnostics(&data)
        .unwrap();
    let [r] = &d.screening[..] else {
        panic!("one screened LP: {:?}", d.screening)
    };
    let why = r.gave_up.as_deref().expect("gave up");
    assert!(why.contains("of 1375 examples"), "{why}");
    assert_eq!(r.working_sets[0], 276);
    assert!(r.rounds >= 1 && r.iterations > 0, "{}", r.describe());
    // the answer is the whole LP's, and the iterations count the rounds too
    assert_eq!(d.solver, "dsx-ipm");
    assert!(d.converged, "{d:?}");
    assert!(d.iterations > r.iterations, "{d:?}");
    // a give-up is not a fallback (the same solver answered the whole LP; with screening on by
    // default it is the usual outcome on tasks where most examples keep a loss): the screening
    // report and the learner's details say so
    assert!(d.fallbacks.is_empty(), "{:?}", d.fallbacks);
    let f = params(s).fit(&data).unwrap();
    assert_eq!(f.report.details["screening_gave_up"], 1.0);
    assert!(!f.report.fell_back(), "{:?}", f.report);
    assert!(f.report.details["screening_rounds"] >= 1.0);
}

#[test]
fn bad_screening_settings_are_parameter_errors() {
    let bad = Screening {
        margin: -1.0,
        ..Screening::default()
    };
    let e = params(bad).check().unwrap_err().to_string();
    assert!(e.contains("screening.margin"), "{e}");
    let bad = Screening {
        leave_margin: 0.0,
        ..Screening::default()
    };
    let e = params(bad).check().unwrap_err().to_string();
    assert!(e.contains("screening.leave_margin"), "{e}");
    for v in [-1e-3, 1.0, f64::NAN] {
        let bad = Screening {
            early_stop: v,
            ..Screening::default()
        };
        let e = params(bad).check().unwrap_err().to_string();
        assert!(e.contains("screening.early_stop"), "{e}");
    }
}

#[test]
fn examples_far_from_a_loss_leave_after_the_second_round() {
    // all 11 000 images: screened by default
    let data = zero_vs_rest(1);
    assert!(Screening::default().min_examples <= data.len());
    let fit = |s: Screening| diagnostics(s, &data);
    let only_add = fit(Screening {
        leave_margin: f64::INFINITY,
        ..Screening::default()
    });
    assert_eq!(Screening::default().leave_margin, 0.02);
    let leaving = fit(Screening::default());
    let ([a], [l]) = (&only_add.screening[..], &leaving.screening[..]) else {
        panic!("one screened LP each: {only_add:?} {leaving:?}")
    };
    for (d, r) in [(&only_add, a), (&leaving, l)] {
        assert_eq!(r.gave_up, None, "{}", r.describe());
        assert_eq!(d.solver, "dsx-ipm");
        assert!(d.converged && d.gap <= 1e-8, "{d:?}");
    }
    // the first two rounds are the same; without leaving the sets then only grow, with it the
    // third set is smaller, later ones only grow, and the LP that answered is smaller
    let (sa, sl) = (&a.working_sets, &l.working_sets);
    let both = format!("{} / {}", a.describe(), l.describe());
    assert!(sa.len() >= 3 && sl.len() >= 3, "{both}");
    assert_eq!(sa[..2], sl[..2], "{both}");
    assert!(sa[1..].is_sorted() && sl[2..].is_sorted(), "{both}");
    assert!(sl[2] < sa[2], "{both}");
    assert!(sl.last() < sa.last(), "{both}");
    // the same optimum, certified for the whole LP
    let (x, y) = (only_add.objective, leaving.objective);
    assert!((x - y).abs() <= 1e-7 * (1.0 + x), "{x} vs {y}");
}
