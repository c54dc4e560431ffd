//! DSX LP (4) on text-shaped data (more features than examples, under 1 % non-zeros): every
//! normal-equations method of the structured IPM reaches clarabel's optimum, the cost model
//! takes the example space, the answer is the same bits for any thread count, and a problem
//! no method can hold is a typed error before anything large is allocated.

use std::time::Instant;

use bulwark_core::{FeatureBudget, Fit, ParamGuard};
use bulwark_deletion::{
    DeletionError, DsxIpmSettings, DsxLpParams, FeatureValues, Lp4, NormalEquations, Screening,
    SolveDiagnostics,
};

#[path = "common/clarabel.rs"]
mod clarabel_ref;
#[path = "common/instance.rs"]
mod instance;
use clarabel_ref::clarabel_objective;
use instance::text_instance;

/// A fit with the normal equations `method`, the structured IPM alone (no fallback, no
/// screening).
fn fit(
    data: &bulwark_core::Dataset,
    budget: f64,
    method: NormalEquations,
    threads: usize,
) -> (bulwark_core::LinearModel, SolveDiagnostics) {
    DsxLpParams::new()
        .budget(budget)
        .c(1.0)
        .values(FeatureValues::Uniform)
        .fallback(false)
        .screening(Screening::off())
        .threads(Some(threads))
        .ipm_settings(
            DsxIpmSettings::builder()
                .normal_equations(method)
                .build()
                .unwrap(),
        )
        .check()
        .unwrap()
        .fit_with_diagnostics(data)
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// Random text-shaped LPs (30–60 documents, 600–1500 words, Zipf frequencies, 0.3–1 %
/// non-zeros): every method — and the cost model's choice — answers by the structured IPM,
/// converged, at clarabel's objective to 1e-6 relative and at each other's to 1e-8; the feature
/// space, the example space and the cost model's choice follow the same path (iteration counts
/// within one of each other). The sparse `LDLᵀ` eliminates every feature before its examples,
/// so near the optimum it can take longer (module docs of `bulwark-linalg`'s `augmented`).
#[test]
fn every_method_reaches_clarabels_optimum_on_text_shaped_lps() {
    for (seed, (m, n, len)) in [
        (30, 600, 6.0),
        (45, 1000, 8.0),
        (60, 1500, 6.0),
        (40, 800, 4.0),
    ]
    .into_iter()
    .enumerate()
    {
        let data = text_instance(m, n, len, 1.0, seed as u64 + 5);
        let density = data.features().nnz() as f64 / (m * n) as f64;
        assert!(density < 0.01 && n > m, "density {density}");
        let budget = 3.0;
        let fb = FeatureBudget::uniform(n, budget).unwrap();
        let reference = clarabel_objective(&Lp4::new(&data, &fb, 1.0).unwrap().build().unwrap());
        let mut answers = Vec::new();
        for method in [
            NormalEquations::Auto,
            NormalEquations::FeatureSpace,
            NormalEquations::ExampleSpace,
            NormalEquations::SparseLdl,
        ] {
            let (_, d) = fit(&data, budget, method, 1);
            assert_eq!(d.solver, "dsx-ipm", "{method}: {:?}", d.fallbacks);
            assert!(d.converged && d.reached() <= d.tolerance, "{method}: {d:?}");
            let used = d.normal_equations.clone().unwrap();
            if method != NormalEquations::Auto {
                assert_eq!(used, method.name());
            } else {
                // 2m + 1 ≪ n + 1: never the dense n × n
                assert_ne!(used, "feature-space", "m {m} n {n}");
            }
            assert!(
                (d.objective - reference).abs() <= 1e-6 * (1.0 + reference.abs()),
                "seed {seed}, {method}: {} vs clarabel {reference}",
                d.objective
            );
            answers.push((method, d.objective, d.iterations));
        }
        let (_, obj0, it0) = answers[1];
        for &(method, obj, it) in &answers {
            assert!(
                (obj - obj0).abs() <= 1e-8 * (1.0 + obj0.abs()),
                "seed {seed}: {method} {obj} vs feature space {obj0}"
            );
            if method != NormalEquations::SparseLdl {
                assert!(
                    it.abs_diff(it0) <= 1,
                    "seed {seed}: {method} {it} iterations vs feature space {it0}"
                );
            }
        }
    }
}

/// The example space with its passes on two threads (LP (4) above the 40 000 variables at which
/// they go parallel) gives the same bits as on one. (This LP ends almost optimal, certified
/// within twice the tolerance, with either method: its final solves are at the rounding floor.)
#[test]
fn the_example_space_is_the_same_bits_for_any_thread_count() {
    let data = text_instance(800, 8000, 60.0, 1.0, 3);
    let fits: Vec<_> = [1, 2]
        .into_iter()
        .map(|t| fit(&data, 5.0, NormalEquations::ExampleSpace, t))
        .collect();
    assert!(
        fits[0].1.lp_vars >= 40_000,
        "{} variables",
        fits[0].1.lp_vars
    );
    for (model, d) in &fits {
        assert_eq!(d.solver, "dsx-ipm", "{d:?}");
        assert!(d.reached() <= 10.0 * d.tolerance, "{d:?}");
        assert_eq!(d.normal_equations.as_deref(), Some("example-space"));
        assert_eq!(d.iterations, fits[0].1.iterations);
        assert_eq!(d.objective.to_bits(), fits[0].1.objective.to_bits());
        assert_eq!(model.bias().to_bits(), fits[0].0.bias().to_bits());
        for (a, b) in model.weights().iter().zip(fits[0].0.weights()) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}

/// A memory limit no method fits: a typed error at once (nothing large allocated), naming the
/// shape and what each method would need; a forced method that does not fit likewise.
#[test]
fn a_problem_no_method_can_hold_is_a_typed_error_at_once() {
    let data = text_instance(3000, 20000, 40.0, 1.0, 9);
    let limited = |method: NormalEquations, mib: u64| {
        let t = Instant::now();
        let e = DsxLpParams::new()
            .budget(5.0)
            .fallback(false)
            .screening(Screening::off())
            .ipm_settings(
                DsxIpmSettings::builder()
                    .normal_equations(method)
                    .memory_limit(Some(mib << 20))
                    .build()
                    .unwrap(),
            )
            .fit(&data)
            .unwrap_err();
        assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
        e
    };
    let e = limited(NormalEquations::Auto, 64);
    assert!(matches!(e, DeletionError::TooLarge { .. }), "{e}");
    let msg = e.to_string();
    for needle in [
        "3000 examples x 20000 features",
        "64.0 MiB (the memory limit given)",
        "no method for the normal equations fits",
        "feature-space 3.0 GiB",
        "example-space",
        "sparse-ldl",
        "--algo o2b",
    ] {
        assert!(msg.contains(needle), "`{needle}` not in: {msg}");
    }
    // the example space needs (2m+1)² doubles (about 275 MiB): forced under 200 MiB it does not fit
    let e = limited(NormalEquations::ExampleSpace, 200);
    assert!(
        e.to_string()
            .contains("the normal-equations method `example-space` does not fit"),
        "{e}"
    );
}
