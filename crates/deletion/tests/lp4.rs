//! DSX LP (4): cross-checks between the structured backend, the generic sparse backend and
//! clarabel; the objective equals the closed-form mean worst-case loss on every solve; Theorem 1
//! against the enumerated LP (3); bad input. Every solve asserts which solver answered: the
//! tests of the structured IPM that it answered itself, without a fallback; the fallback tests
//! that the failed attempt is reported.

use bulwark_core::{
    Classifier, CsrMatrix, Dataset, DenseMatrix, FeatureBudget, Features, Fit, ParamGuard, Sign,
};
use bulwark_deletion::oracle::solve_lp3;
use bulwark_deletion::{
    DeletionError, DsxIpmSettings, DsxLpParams, FeatureValues, Lp4, LpBackend, SolveDiagnostics,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

#[path = "common/clarabel.rs"]
mod clarabel_ref;
#[path = "common/instance.rs"]
mod instance;
use clarabel_ref::clarabel_objective;

fn random_data(m: usize, n: usize, density: f64, seed: u64, sparse: bool) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let w: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut x = vec![0.0; m * n];
    let mut y = Vec::with_capacity(m);
    for i in 0..m {
        for j in 0..n {
            if rng.random_bool(density) {
                x[i * n + j] = rng.random_range(-1.0..1.0);
            }
        }
        let s: f64 =
            (0..n).map(|j| x[i * n + j] * w[j]).sum::<f64>() + 0.4 * rng.random_range(-1.0..1.0);
        y.push(if s > 0.0 { Sign::Pos } else { Sign::Neg });
    }
    y[0] = Sign::Pos;
    y[1] = Sign::Neg;
    let d = DenseMatrix::try_new(m, n, x).unwrap();
    let f = if sparse {
        Features::Sparse(CsrMatrix::from_dense(&d))
    } else {
        Features::Dense(d)
    };
    Dataset::binary("random", f, y).unwrap()
}

/// Fits with `backend`; the solver asked for must answer, without a fallback.
fn fit(
    data: &Dataset,
    budget: f64,
    c: f64,
    values: &FeatureValues,
    backend: LpBackend,
) -> (f64, f64, Vec<f64>, f64) {
    fit_checked(data, budget, c, values, backend, true)
}

/// Fits with `backend` and checks the answer against the closed form. `strict`: the solver
/// asked for answered, without a fallback; otherwise any solver of the chain may answer, and a
/// fallback must be reported as one (the first solver's failure first).
fn fit_checked(
    data: &Dataset,
    budget: f64,
    c: f64,
    values: &FeatureValues,
    backend: LpBackend,
    strict: bool,
) -> (f64, f64, Vec<f64>, f64) {
    let f = DsxLpParams::new()
        .budget(budget)
        .c(c)
        .values(values.clone())
        .backend(backend)
        .fit(data)
        .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
    let r = &f.report;
    // whichever solver answered met the tolerance asked
    assert!(r.converged && r.reached.unwrap() <= 1e-8, "{}", r.summary());
    if strict || r.solver == backend.solver_name() {
        assert_eq!(r.solver, backend.solver_name(), "{}", r.summary());
        assert!(r.fallbacks.is_empty(), "{}", r.summary());
    } else {
        let first = format!("{}: ", backend.solver_name());
        assert!(r.fallbacks[0].starts_with(&first), "{}", r.summary());
    }
    let obj = r.objective.unwrap();
    let closed = r.details["closed_form_objective"];
    // the LP objective is the mean closed-form worst-case deletion loss at (w, b), on every solve
    assert!(
        (obj - closed).abs() <= 1e-6 * (1.0 + obj.abs()),
        "{backend:?}: LP {obj} vs closed form {closed}"
    );
    assert!(f.model.max_abs_weight() <= c * (1.0 + 1e-12));
    (obj, closed, f.model.weights().to_vec(), f.model.bias())
}

#[test]
fn backends_and_clarabel_agree_on_random_instances() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for case in 0..12 {
        let m = rng.random_range(8..40);
        let n = rng.random_range(1..9);
        let sparse = case % 2 == 1;
        let density = if sparse { 0.5 } else { 1.0 };
        let data = random_data(m, n, density, case, sparse);
        let general = case % 3 != 0;
        let v: Vec<f64> = if general {
            (0..n).map(|_| rng.random_range(0.0..2.0)).collect()
        } else {
            vec![1.0; n]
        };
        let total: f64 = v.iter().sum();
        // N near 0, in the middle, and near V([n])
        let frac = [0.0, 0.5, 0.97][case as usize % 3];
        let budget = frac * total;
        let c = [0.5, 1.0, 3.0][case as usize % 3];
        let values = FeatureValues::Given(v.clone());
        let (s, _, _, _) = fit(&data, budget, c, &values, LpBackend::Structured);
        let (e, _, _, _) = fit(&data, budget, c, &values, LpBackend::EngineStructured);
        let (g, _, _, _) = fit(&data, budget, c, &values, LpBackend::GenericSparse);
        let fb = FeatureBudget::try_new(v, budget).unwrap();
        let problem = Lp4::new(&data, &fb, c).unwrap().build().unwrap();
        let cl = clarabel_objective(&problem);
        let tol = 1e-6 * (1.0 + cl.abs());
        assert!(
            (s - cl).abs() <= tol,
            "case {case}: structured {s} vs clarabel {cl}"
        );
        assert!(
            (g - cl).abs() <= tol,
            "case {case}: generic {g} vs clarabel {cl}"
        );
        assert!(
            (e - cl).abs() <= tol,
            "case {case}: HSD engine + structured backend {e} vs clarabel {cl}"
        );
    }
}

/// The structured IPM answered, to the tolerance asked, without a fallback.
fn assert_structured_ipm_answered(d: &SolveDiagnostics) {
    assert_eq!(d.solver, "dsx-ipm", "fallbacks: {:?}", d.fallbacks);
    assert!(d.fallbacks.is_empty(), "{:?}", d.fallbacks);
    assert!(d.converged && d.reached() <= d.tolerance, "{d:?}");
}

#[test]
fn dsx_ipm_matches_the_generic_engine_on_larger_instances() {
    // the custom IPM (default) against bulwark-lp's HSD engine on the same structured linear
    // algebra, on instances large enough for the path to matter; a few dozen iterations at most
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    for (case, (m, n, density, sparse)) in [
        (400, 40, 1.0, false),
        (500, 60, 0.2, true),
        (300, 25, 0.6, true),
    ]
    .into_iter()
    .enumerate()
    {
        let data = random_data(m, n, density, 100 + case as u64, sparse);
        let v: Vec<f64> = (0..n).map(|_| rng.random_range(0.2..2.0)).collect();
        let budget = 0.1 * v.iter().sum::<f64>();
        let values = FeatureValues::Given(v);
        let p = DsxLpParams::new()
            .budget(budget)
            .c(2.0)
            .values(values.clone())
            .check()
            .unwrap();
        let (model, d) = p.fit_with_diagnostics(&data).unwrap();
        let (e, ..) = fit(&data, budget, 2.0, &values, LpBackend::EngineStructured);
        eprintln!("case {case}: {} iterations", d.iterations);
        assert_structured_ipm_answered(&d);
        assert!(
            (d.objective - e).abs() <= 1e-6 * (1.0 + e.abs()),
            "case {case}: dsx ipm {} vs engine {e}",
            d.objective
        );
        assert!(
            (d.objective - d.closed_form_objective).abs() <= 1e-6 * (1.0 + e.abs()),
            "case {case}: LP {} vs closed form {}",
            d.objective,
            d.closed_form_objective
        );
        assert!(model.max_abs_weight() <= 2.0 * (1.0 + 1e-12));
        assert!(
            d.iterations <= 40,
            "case {case}: {} iterations (a Mehrotra method needs a few dozen)",
            d.iterations
        );
    }
}

#[test]
fn sparse_reduction_leaves_the_optimum_unchanged() {
    // the same data stored dense (every feature in S_i) and CSR (only non-zeros) give one optimum
    let dense = random_data(30, 6, 0.4, 5, false);
    let sparse = random_data(30, 6, 0.4, 5, true);
    let v = FeatureValues::Given(vec![0.5, 1.0, 1.5, 0.0, 1.0, 2.0]);
    let (a, ..) = fit(&dense, 2.3, 1.0, &v, LpBackend::Structured);
    let (b, ..) = fit(&sparse, 2.3, 1.0, &v, LpBackend::Structured);
    assert!((a - b).abs() < 1e-6 * (1.0 + a), "{a} vs {b}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// DSX Theorem 1: value(4) ≥ value(3); equal for v ∈ {0,1} and integer N; otherwise
    /// value(4) − value(3) ≤ C (with ‖x_i‖∞ ≤ 1).
    #[test]
    fn theorem_1_against_the_enumerated_lp3(
        seed in 0u64..10_000,
        m in 4usize..10,
        n in 1usize..6,
        integral in any::<bool>(),
        frac in 0.0f64..0.95,
        c in 0.2f64..3.0,
    ) {
        let data = random_data(m, n, 0.8, seed, false);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 77);
        let v: Vec<f64> = if integral {
            (0..n).map(|_| if rng.random_bool(0.8) { 1.0 } else { 0.0 }).collect()
        } else {
            (0..n).map(|_| rng.random_range(0.1..2.0)).collect()
        };
        let total: f64 = v.iter().sum();
        prop_assume!(total >= 1.0);
        let budget = if integral { (frac * total).floor().min(total - 1.0) } else { frac * total };
        let fb = FeatureBudget::try_new(v.clone(), budget).unwrap();
        let lp3 = solve_lp3(&data, &fb, c).unwrap();
        // a statement about LP (4)'s value, whichever solver answers it (on a few of these tiny
        // instances the structured IPM stops on a numerical error and the fallback answers)
        let values = FeatureValues::Given(v);
        let (lp4, ..) = fit_checked(&data, budget, c, &values, LpBackend::Structured, false);
        let tol = 1e-6 * (1.0 + lp3.value.abs());
        prop_assert!(lp4 >= lp3.value - tol, "value(4) {} < value(3) {}", lp4, lp3.value);
        if integral {
            prop_assert!((lp4 - lp3.value).abs() <= tol, "integral case: value(4) {} != value(3) {}", lp4, lp3.value);
        } else {
            prop_assert!(lp4 - lp3.value <= c + tol, "gap {} > C = {}", lp4 - lp3.value, c);
        }
    }
}

#[test]
fn bagging_averages_chunk_models() {
    let data = random_data(60, 5, 1.0, 3, false);
    let f = DsxLpParams::new()
        .budget(1.0)
        .c(1.0)
        .chunks(Some(3))
        .seed(4)
        .fit(&data)
        .unwrap();
    assert_eq!(f.report.details["lps"], 3.0);
    // every chunk answered by the structured IPM
    assert_eq!(f.report.solver, "dsx-ipm", "{}", f.report.summary());
    assert!(!f.report.fell_back() && f.report.converged);
    assert!(f.model.error_rate(&data).unwrap() < 0.3);
    let again = DsxLpParams::new()
        .budget(1.0)
        .c(1.0)
        .chunks(Some(3))
        .seed(4)
        .fit(&data)
        .unwrap();
    assert_eq!(f.model, again.model);
    assert!(DsxLpParams::new().chunks(Some(0)).fit(&data).is_err());
    assert!(DsxLpParams::new().chunks(Some(1000)).fit(&data).is_err());
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = random_data(10, 3, 1.0, 1, false);
    let check = |p: DsxLpParams, needle: &str| {
        let e = p.fit(&data).unwrap_err();
        assert!(matches!(e, DeletionError::Core(_)), "{e}");
        assert!(
            e.to_string().contains(needle),
            "expected `{needle}` in `{e}`"
        );
    };
    check(DsxLpParams::new().budget(-1.0), "budget");
    check(DsxLpParams::new().budget(3.0), "budget"); // N = V([n])
    check(DsxLpParams::new().budget(f64::NAN), "budget");
    check(DsxLpParams::new().c(0.0), "C");
    check(DsxLpParams::new().c(f64::INFINITY), "C");
    check(
        DsxLpParams::new().values(FeatureValues::Given(vec![1.0, -1.0, 1.0])),
        "values[2]",
    );
    check(
        DsxLpParams::new().values(FeatureValues::Given(vec![1.0, f64::NAN, 1.0])),
        "values[2]",
    );
    check(
        DsxLpParams::new().values(FeatureValues::Given(vec![1.0, 1.0])),
        "feature values",
    );
    let one_class = Dataset::binary(
        "one",
        DenseMatrix::try_new(2, 1, vec![1.0, 2.0]).unwrap(),
        vec![Sign::Pos; 2],
    )
    .unwrap();
    let e = DsxLpParams::new().budget(0.0).fit(&one_class).unwrap_err();
    assert!(e.to_string().contains("both classes"), "{e}");
}

#[test]
fn degenerate_few_examples_in_many_sparse_dimensions() {
    // few examples, many mostly-empty non-negative features, box radii far from 1: the regime of
    // small digit-pair subsets, where slacks and multipliers spread over many orders of
    // magnitude. The structured IPM used to break down here and leave the answer to the
    // fallback; it now answers every fit itself, in agreement with the closed form (the
    // fallback path has its own tests below).
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
    let (m, n) = (50, 300);
    let mut x = vec![0.0; m * n];
    let mut y = Vec::with_capacity(m);
    for i in 0..m {
        let class = i % 2 == 0;
        for j in 0..n {
            // two overlapping "digits": class-specific regions plus shared noise
            let region = if class { j < 40 } else { (30..70).contains(&j) };
            let p = if region { 0.4 } else { 0.01 };
            if rng.random_bool(p) {
                x[i * n + j] = rng.random_range(0.1..1.0);
            }
        }
        y.push(if class { Sign::Pos } else { Sign::Neg });
    }
    let d = DenseMatrix::try_new(m, n, x).unwrap();
    let data = Dataset::binary(
        "sparse-digits",
        Features::Sparse(CsrMatrix::from_dense(&d)),
        y,
    )
    .unwrap();
    for budget in [0.0, 5.0, 20.0] {
        for c in [0.01, 1.0, 100.0] {
            let p = DsxLpParams::new()
                .budget(budget)
                .c(c)
                .values(FeatureValues::Uniform)
                .check()
                .unwrap();
            let (model, d) = p
                .fit_with_diagnostics(&data)
                .unwrap_or_else(|e| panic!("N = {budget}, C = {c}: {e}"));
            eprintln!(
                "N = {budget}, C = {c}: {} iterations, {} {:?}",
                d.iterations, d.solver, d.fallbacks
            );
            assert_structured_ipm_answered(&d);
            assert!(
                (d.objective - d.closed_form_objective).abs() <= 1e-6 * (1.0 + d.objective),
                "N = {budget}, C = {c}: LP {} vs closed form {}",
                d.objective,
                d.closed_form_objective
            );
            assert!(model.max_abs_weight() <= c * (1.0 + 1e-12));
        }
    }
}

#[test]
fn same_bits_for_any_thread_count() {
    // the per-example passes run in blocks fixed by the data and every sum is combined in block
    // order, so the thread count cannot change the result (instances above the size at which
    // the passes go parallel: 40 000 LP variables)
    for (m, n, density, sparse) in [(450, 90, 1.0, false), (900, 200, 0.25, true)] {
        let data = random_data(m, n, density, 77, sparse);
        let fits: Vec<_> = [1, 2, 3]
            .into_iter()
            .map(|t| {
                DsxLpParams::new()
                    .budget(5.0)
                    .c(1.0)
                    .threads(Some(t))
                    .check()
                    .unwrap()
                    .fit_with_diagnostics(&data)
                    .unwrap()
            })
            .collect();
        assert!(
            fits[0].1.lp_vars >= 40_000,
            "{} variables",
            fits[0].1.lp_vars
        );
        assert_structured_ipm_answered(&fits[0].1);
        for (model, d) in &fits[1..] {
            assert_structured_ipm_answered(d);
            assert_eq!(d.iterations, fits[0].1.iterations);
            assert_eq!(d.objective.to_bits(), fits[0].1.objective.to_bits());
            assert_eq!(model.bias().to_bits(), fits[0].0.bias().to_bits());
            for (a, b) in model.weights().iter().zip(fits[0].0.weights()) {
                assert_eq!(a.to_bits(), b.to_bits());
            }
        }
    }
    // zero threads is a typed parameter error
    let data = random_data(20, 4, 1.0, 1, false);
    let e = DsxLpParams::new().threads(Some(0)).fit(&data).unwrap_err();
    assert!(e.to_string().contains("threads"), "{e}");
}

#[test]
fn near_square_dense_data_converges_in_the_structured_ipm() {
    // near-square dense data (the `lp_bench` generator, `dense-400x300`): the dual residual of
    // λ's column, whose terms are of the order of the number of features, used to stall on its
    // rounding error near 1e-8, the IPM stopped ("dual residual diverging") and the fallback
    // engine answered after 92 iterations in all. Measured relative to λ's column it converges
    // in the structured IPM itself.
    let data = instance::instance(400, 300, 1.0, false, 2026);
    let (model, d) = DsxLpParams::new()
        .budget(10.0)
        .c(1.0)
        .check()
        .unwrap()
        .fit_with_diagnostics(&data)
        .unwrap();
    eprintln!("{} iterations, solver {}", d.iterations, d.solver);
    assert_structured_ipm_answered(&d);
    assert!(
        (d.objective - d.closed_form_objective).abs() <= 1e-6 * (1.0 + d.objective.abs()),
        "LP {} vs closed form {}",
        d.objective,
        d.closed_form_objective
    );
    assert!(model.max_abs_weight() <= 1.0 + 1e-12);
    assert!(d.iterations <= 60, "{} iterations", d.iterations);
}

/// Parameters whose structured IPM stops at its own limit of 3 iterations (far from the
/// optimum), while the fallback solvers keep the fit's limit.
fn three_ipm_iterations() -> DsxLpParams {
    DsxLpParams::new()
        .budget(2.0)
        .c(1.0)
        .ipm_settings(DsxIpmSettings::builder().max_iter(Some(3)).build().unwrap())
}

#[test]
fn a_fallback_is_reported_with_the_failed_attempt() {
    let data = random_data(60, 8, 1.0, 9, false);
    let f = three_ipm_iterations().fit(&data).unwrap();
    let r = &f.report;
    assert_eq!(r.solver, "hsd-engine/structured", "{}", r.summary());
    assert_eq!(r.fallbacks.len(), 1, "{:?}", r.fallbacks);
    assert!(
        r.fallbacks[0].starts_with("dsx-ipm: iteration_limit: ")
            && r.fallbacks[0].ends_with("(3 iterations)"),
        "{:?}",
        r.fallbacks
    );
    assert!(r.fell_back() && r.summary().contains("after dsx-ipm: iteration_limit"));
    // the engine answered to the tolerance asked; the iterations of both attempts count
    assert!(r.converged, "{}", r.summary());
    assert_eq!(r.tolerance, Some(1e-8));
    assert!(r.reached.unwrap() <= 1e-8, "{}", r.summary());
    assert!(r.iterations.unwrap() > 3, "{:?}", r.iterations);
    // and its answer is the optimum the structured IPM finds without the limit
    let closed = r.details["closed_form_objective"];
    let obj = r.objective.unwrap();
    assert!(
        (obj - closed).abs() <= 1e-6 * (1.0 + obj),
        "{obj} vs {closed}"
    );
    let (a, ..) = fit(
        &data,
        2.0,
        1.0,
        &FeatureValues::Uniform,
        LpBackend::Structured,
    );
    assert!((obj - a).abs() <= 1e-6 * (1.0 + a), "{obj} vs {a}");
}

#[test]
fn without_fallbacks_the_failure_is_a_typed_error_naming_the_solver() {
    let data = random_data(60, 8, 1.0, 9, false);
    let e = three_ipm_iterations()
        .fallback(false)
        .fit(&data)
        .unwrap_err();
    let (solver, fallbacks) = not_solved(&e, "iteration_limit");
    assert_eq!(solver, "dsx-ipm");
    assert!(fallbacks.is_empty(), "{fallbacks:?}");
    assert!(
        matches!(e, DeletionError::NotSolved { iterations: 3, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("not solved by dsx-ipm"), "{e}");
    // the same fit with the fit-wide limit of 3: every solver of the chain stops at it, and
    // the error names the last one tried (the equilibrated generic engine, which hands over
    // only on a numerical error) and lists the earlier ones
    let e = DsxLpParams::new()
        .budget(2.0)
        .max_iter(3)
        .fit(&data)
        .unwrap_err();
    let (solver, fallbacks) = not_solved(&e, "iteration_limit");
    assert_eq!(solver, "hsd-engine/generic-ldl", "{e}");
    assert_eq!(fallbacks.len(), 2, "{e}");
    assert!(fallbacks[0].starts_with("dsx-ipm: iteration_limit"), "{e}");
    assert!(
        fallbacks[1].starts_with("hsd-engine/structured: iteration_limit"),
        "{e}"
    );
}

/// A fallback engine that would need more memory than allowed is not started: the fit fails
/// with the structured IPM's own status and says which solver was not started and why, instead
/// of the process running out of memory (the T-shirt-vs-rest benchmark was killed that way).
#[test]
fn a_fallback_that_would_not_fit_in_memory_is_not_started() {
    let data = random_data(60, 8, 1.0, 9, false);
    // 60 × 8 stored pairs: about 480 KiB for the engine
    let e = three_ipm_iterations()
        .fallback_memory(Some(100 * 1024))
        .fit(&data)
        .unwrap_err();
    let (solver, fallbacks) = not_solved(&e, "iteration_limit");
    assert_eq!(solver, "dsx-ipm", "{e}");
    assert!(fallbacks.is_empty(), "{e}");
    let DeletionError::NotSolved { not_started, .. } = &e else {
        unreachable!()
    };
    let why = not_started.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("hsd-engine/structured not started: it would need about 480.0 KiB"),
        "{e}"
    );
    assert!(
        why.contains("100.0 KiB allowed by the fallback memory limit"),
        "{e}"
    );
    assert!(e.to_string().contains(why), "{e}");
    // with room for it the same fit falls back and is answered
    let f = three_ipm_iterations()
        .fallback_memory(Some(1 << 30))
        .fit(&data)
        .unwrap();
    assert_eq!(
        f.report.solver,
        "hsd-engine/structured",
        "{}",
        f.report.summary()
    );
}

/// The solver and the earlier attempts of a `NotSolved` error with `status`.
fn not_solved<'a>(e: &'a DeletionError, status: &str) -> (&'a str, &'a [String]) {
    match e {
        DeletionError::NotSolved {
            solver,
            fallbacks,
            status: s,
            ..
        } if s.as_str() == status => (solver, fallbacks),
        other => panic!("expected NotSolved with status {status}: {other}"),
    }
}

#[test]
fn bagging_reports_each_chunks_fallback() {
    let data = random_data(60, 5, 1.0, 3, false);
    let f = three_ipm_iterations()
        .chunks(Some(3))
        .seed(4)
        .fit(&data)
        .unwrap();
    let r = &f.report;
    assert_eq!(r.solver, "hsd-engine/structured", "{}", r.summary());
    assert_eq!(r.fallbacks.len(), 3, "{:?}", r.fallbacks);
    for (k, fb) in r.fallbacks.iter().enumerate() {
        assert!(
            fb.starts_with(&format!("chunk {k}: dsx-ipm: iteration_limit")),
            "{fb}"
        );
    }
    assert!(r.converged);
    // without fallbacks the first chunk's failure is the error, naming its chunk
    let e = three_ipm_iterations()
        .chunks(Some(3))
        .seed(4)
        .fallback(false)
        .fit(&data)
        .unwrap_err();
    assert_eq!(
        not_solved(&e, "iteration_limit").0,
        "chunk 0: dsx-ipm",
        "{e}"
    );
}

#[test]
fn bad_ipm_settings_are_a_typed_error_naming_the_field() {
    let data = random_data(10, 3, 1.0, 1, false);
    for (settings, field) in [
        (
            DsxIpmSettings {
                step_fraction: 1.5,
                ..DsxIpmSettings::default()
            },
            "ipm_settings.step_fraction",
        ),
        (
            DsxIpmSettings {
                corrector_beta_min: f64::NAN,
                ..DsxIpmSettings::default()
            },
            "ipm_settings.corrector_beta_min",
        ),
        (
            DsxIpmSettings {
                solve_tol_min: 1e-6,
                solve_tol_max: 1e-9,
                ..DsxIpmSettings::default()
            },
            "ipm_settings.solve_tol_max",
        ),
    ] {
        let e = DsxLpParams::new()
            .ipm_settings(settings)
            .fit(&data)
            .unwrap_err();
        assert!(matches!(e, DeletionError::Core(_)), "{e}");
        assert!(e.to_string().contains(field), "expected `{field}` in `{e}`");
    }
}

#[test]
fn ipm_settings_reach_the_solver() {
    // without correctors and with Mehrotra's cube throughout, the structured IPM still answers
    // the same optimum, by another path
    let data = random_data(400, 40, 1.0, 100, false);
    let base = DsxLpParams::new().budget(4.0).c(2.0).check().unwrap();
    let (_, d0) = base.fit_with_diagnostics(&data).unwrap();
    let plain = DsxIpmSettings::builder()
        .max_correctors(0)
        .sigma_power(3)
        .build()
        .unwrap();
    let (_, d1) = DsxLpParams::new()
        .budget(4.0)
        .c(2.0)
        .ipm_settings(plain)
        .check()
        .unwrap()
        .fit_with_diagnostics(&data)
        .unwrap();
    assert_structured_ipm_answered(&d0);
    assert_structured_ipm_answered(&d1);
    assert_ne!(d0.iterations, d1.iterations, "the settings changed nothing");
    assert!((d0.objective - d1.objective).abs() <= 1e-6 * (1.0 + d0.objective));
}

/// Zero budget (`ipm` module docs, *Zero budget*): with `N = 0`, `λ_i` cancels from the hinge
/// constraint that rows `a_i` and `b_ij` add up to, so LP (4)'s optimal face is unbounded and no
/// dual point is strictly feasible. The structured IPM drifted along that ray until its solves
/// broke down (every `N = 0, C = 0.01` fit of the `stress` sweep fell back, e.g. this one, MNIST
/// 4 vs 7, 30 images, 784 features). With a cap on each such `λ_i` it answers itself, at
/// Clarabel's optimum of the uncapped LP.
#[test]
fn zero_budget_is_answered_by_the_structured_ipm() {
    let data = mnist_4v7_first_30();
    for c in [0.01, 1.0] {
        check_zero_budget(&data, c, vec![1.0; 784]);
    }
}

/// With a zero budget λ is taken out of the rows (module docs of `ipm`, *Zero budget*). It used
/// to be fixed at `t_i = max_j C |x_ij| / v_j`, so small feature values (mutual information gives
/// some features almost none) made the rows' right-hand sides `v_j t_i` huge — 1e4 here — and the
/// path stalled ("5 step lengths below 1e-8"; one `N = 0` fit in five of the full USPS
/// reproduction fell back, at `C = 100`). The rows are now shifted by `|C x_ij|` each. Checked
/// against Clarabel and the closed-form hinge loss.
#[test]
fn zero_budget_with_small_feature_values_is_answered_by_the_structured_ipm() {
    // every third feature worth almost nothing: t_i = C / 1e-6
    let v: Vec<f64> = (0..784)
        .map(|j| if j % 3 == 0 { 1e-6 } else { 1.0 })
        .collect();
    let reference = check_zero_budget(&mnist_4v7_first_30(), 0.01, v);
    assert!(reference > 0.1, "not separable at this C: {reference}");
}

/// Fits LP (4) with a zero budget, box `c` and feature values `v` (tolerance 1e-6, no
/// fallback), asserts that the structured IPM answered at Clarabel's optimum and that the
/// model's mean hinge loss is that optimum (`N = 0` is the hinge loss); returns the optimum.
fn check_zero_budget(data: &Dataset, c: f64, v: Vec<f64>) -> f64 {
    let p = DsxLpParams::new()
        .budget(0.0)
        .c(c)
        .values(FeatureValues::Given(v.clone()))
        .tolerance(1e-6)
        .fallback(false)
        .check()
        .unwrap();
    let (model, d) = p
        .fit_with_diagnostics(data)
        .unwrap_or_else(|e| panic!("C = {c}: {e}"));
    assert_structured_ipm_answered(&d);
    let lp = Lp4::new(data, &FeatureBudget::try_new(v, 0.0).unwrap(), c)
        .unwrap()
        .build()
        .unwrap();
    let reference = clarabel_objective(&lp);
    let hinge = mean_hinge(&model, data);
    for (what, value) in [("objective", d.objective), ("hinge", hinge)] {
        assert!(
            (value - reference).abs() <= 1e-5 * (1.0 + reference.abs()),
            "C = {c}: {what} {value}, clarabel {reference}"
        );
    }
    reference
}

/// The first 30 images of MNIST 4 vs 7 (test set), min-max scaled.
fn mnist_4v7_first_30() -> Dataset {
    use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
    let (raw, _) = load("mnist10k", None).expect("mnist10k in the repository's data folder");
    let task = binary_task(&raw, &BinaryTask::Pair("4".into(), "7".into())).unwrap();
    let sub = task.select(&(0..30).collect::<Vec<_>>());
    Scaler::fit(&sub, ScalingKind::MinMax)
        .and_then(|s| s.transform(&sub))
        .unwrap()
}

/// The mean hinge loss of `model` on `data` (LP (4)'s objective at `N = 0`).
fn mean_hinge(model: &impl bulwark_core::DecisionFunction, data: &Dataset) -> f64 {
    let y = data.binary_labels().unwrap();
    (0..data.len())
        .map(|i| (1.0 - y[i].as_f64() * model.decision(data.row(i))).max(0.0))
        .sum::<f64>()
        / data.len() as f64
}

/// A run that stops short of the tolerance after an iterate was certified within
/// `accept_within` times it returns that iterate, `almost_optimal` and not converged, instead of
/// falling back (module docs of `ipm`, *Almost optimal*); with `accept_within = 0` the same run
/// is a failure as before. The run is stopped by its iteration limit at an iterate of the run
/// to optimality whose gap misses the tolerance by less than the factor (the iterates do not
/// depend on the limit).
#[test]
fn an_iterate_certified_near_the_optimum_answers_a_run_that_stopped_short() {
    use std::ops::ControlFlow;
    let data = random_data(60, 8, 1.0, 9, false);
    let base = || DsxLpParams::new().budget(2.0).c(1.0).fallback(false);
    let accept = |k: f64, limit: u32| {
        let s = DsxIpmSettings::builder()
            .accept_within(k)
            .max_iter(Some(limit))
            .build()
            .unwrap();
        base().ipm_settings(s)
    };
    let mut trace = Vec::new();
    let optimal = base()
        .fit_with_progress(
            &data,
            Some(&mut |i: &bulwark_lp::IterationInfo| {
                trace.push((i.iter, i.pres, i.gap));
                ControlFlow::Continue(())
            }),
        )
        .unwrap();
    assert!(optimal.report.converged, "{}", optimal.report.summary());
    let opt = optimal.report.objective.unwrap();
    // the last iterate whose primal residual meets the tolerance and whose gap misses it by
    // less than 100 times
    let &(k, _, gap_k) = trace
        .iter()
        .rev()
        .find(|&&(_, p, g)| p <= 1e-8 && g > 1e-8 && g <= 1e-6)
        .unwrap_or_else(|| panic!("no iterate within 100 times the tolerance: {trace:?}"));
    let f = accept(100.0, k).fit(&data).unwrap();
    let r = &f.report;
    assert_eq!(r.solver, "dsx-ipm", "{}", r.summary());
    assert!(r.fallbacks.is_empty(), "{}", r.summary());
    assert!(!r.converged, "{}", r.summary());
    let stopped = r.stopped.as_deref().unwrap_or_default();
    assert!(
        stopped.starts_with(&format!(
            "dsx-ipm: almost_optimal: stopped short (iteration_limit); the iterate of iteration {k} certified at a relative gap of"
        )) && stopped.ends_with(&format!("({k} iterations)")),
        "{stopped}"
    );
    assert!(r.summary().contains(stopped), "{}", r.summary());
    // the certified gap is the one reached, within the factor, and it bounds the objective's
    // distance to the optimum
    let reached = r.reached.unwrap();
    assert!(
        reached > 1e-8 && reached <= 1e-6,
        "{reached:e} (iterate gap {gap_k:e})"
    );
    let obj = r.objective.unwrap();
    assert!(
        obj >= opt - 1e-8 * (1.0 + opt),
        "{obj} below the optimum {opt}"
    );
    assert!(
        obj - opt <= 2.0 * reached * (1.0 + opt * data.len() as f64) / data.len() as f64,
        "{obj} vs the optimum {opt}: gap {reached:e}"
    );
    // the objective is the closed form at the model returned
    let closed = r.details["closed_form_objective"];
    assert!(
        (obj - closed).abs() <= 1e-12 * (1.0 + obj),
        "{obj} vs {closed}"
    );
    assert!(
        r.details.contains_key("dual_repaired_from"),
        "{:?}",
        r.details
    );
    // with the factor at 0 the same run fails at its limit
    let e = accept(0.0, k).fit(&data).unwrap_err();
    let (solver, _) = not_solved(&e, "iteration_limit");
    assert_eq!(solver, "dsx-ipm", "{e}");
}

/// DSX §4.1's first synthetic experiment (as `bulwark-eval`'s `synth1` draws it, with its own
/// seeded draws): `m` points of `N(0, I_20)` at distance at least 1 from a random hyperplane
/// through the origin, labelled by it, each label flipped with probability 0.2, then two copies
/// of the label as features 21 and 22.
fn synth1_like(m: usize, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // Box–Muller
    let normal = |rng: &mut rand_chacha::ChaCha8Rng| {
        let (u1, u2): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let mut u: Vec<f64> = (0..20).map(|_| normal(&mut rng)).collect();
    let norm = u.iter().map(|v| v * v).sum::<f64>().sqrt();
    u.iter_mut().for_each(|v| *v /= norm);
    let (mut x, mut y) = (Vec::with_capacity(m * 22), Vec::with_capacity(m));
    while y.len() < m {
        let p: Vec<f64> = (0..20).map(|_| normal(&mut rng)).collect();
        let s: f64 = p.iter().zip(&u).map(|(a, b)| a * b).sum();
        if s.abs() < 1.0 {
            continue;
        }
        let flip = rng.random_bool(0.2);
        let label = if (s > 0.0) != flip { 1.0 } else { -1.0 };
        x.extend(p);
        x.extend([label, label]);
        y.push(if label > 0.0 { Sign::Pos } else { Sign::Neg });
    }
    Dataset::binary("synth1", DenseMatrix::try_new(m, 22, x).unwrap(), y).unwrap()
}

/// A box larger than the data (`C > 1`) is solved at the data's own scale (module docs of
/// `ipm`, *Working scale*). In the unit box the data were multiplied by `C`, the normal
/// equations' `w` block by `C²`, and at `C = 1000` the dual residual of `w` diverged near the
/// optimum: 12 of `synth1`'s 100 LP fits stopped short (almost optimal, certified 1.0e-6 to
/// 8.4e-6 against 1e-6), and 7 of these 60 draws (seeds 4, 24, 27, 29, 54, 58, 59; certified
/// 1.1e-6 to 9.9e-6). Every draw must now be solved by the structured IPM to its tolerance,
/// the first two of those at Clarabel's optimum.
#[test]
fn a_large_box_is_solved_at_the_data_scale() {
    let values = FeatureValues::Given([vec![1.0; 20], vec![10.0; 2]].concat());
    for seed in 0..60 {
        let data = synth1_like(400, seed);
        let p = DsxLpParams::new()
            .budget(20.0)
            .c(1000.0)
            .values(values.clone())
            .tolerance(1e-6)
            .fallback(false)
            .check()
            .unwrap();
        let (model, d) = p
            .fit_with_diagnostics(&data)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_structured_ipm_answered(&d);
        assert!(d.stopped_short.is_empty(), "seed {seed}: {d:?}");
        assert!(model.max_abs_weight() <= 1000.0 * (1.0 + 1e-12));
        if seed == 4 || seed == 24 {
            let fb = FeatureBudget::try_new([vec![1.0; 20], vec![10.0; 2]].concat(), 20.0).unwrap();
            let lp = Lp4::new(&data, &fb, 1000.0).unwrap().build().unwrap();
            let reference = clarabel_objective(&lp);
            assert!(
                (d.objective - reference).abs() <= 1e-5 * (1.0 + reference),
                "seed {seed}: {} vs clarabel {reference}",
                d.objective
            );
        }
    }
}
