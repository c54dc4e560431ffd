//! Robustness sweep of the DSX IPM on small, sparse, high-dimensional subsets of MNIST pairs
//! (development tool; reads mnist10k from the data directory). `STRESS_FALLBACKS=1` also prints each fit a
//! fallback answered, with the reason the structured IPM stopped; `STRESS_CASE=NAME` runs one
//! fit with its iteration log; `STRESS_REFINE=0` switches the final-phase refinement off, `STRESS_CERTIFY=0` the certificate;
//! `STRESS_STATIC=x` sets the static regularisation of the normal equations.
#![allow(clippy::print_stdout)]
use bulwark_core::ParamGuard;
use bulwark_data::{BinaryTask, binary_task, load};
use bulwark_deletion::{DsxLpParams, FeatureValues};

#[path = "../tests/common/log.rs"]
mod log;

/// The structured IPM's settings: the defaults, with `STRESS_REFINE=0` for the run without
/// the final-phase refinement and `STRESS_CERTIFY=0` without the certificate.
fn settings() -> bulwark_deletion::DsxIpmSettings {
    let mut s = bulwark_deletion::DsxIpmSettings::default();
    if std::env::var("STRESS_REFINE").is_ok_and(|v| v == "0") {
        s.dual_refinement = false;
    }
    if std::env::var("STRESS_CERTIFY").is_ok_and(|v| v == "0") {
        s.certify_within = 0.0;
    }
    if let Some(v) = std::env::var("STRESS_STATIC")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        s.static_regularization = v;
    }
    s
}

fn main() {
    let dir = bulwark_data::data_dir(None);
    let (data, _) = load("mnist10k", dir.as_deref()).expect("mnist10k");
    let (mut fails, mut total) = (0, 0);
    let (mut iters, mut fallbacks) = (0u64, 0usize);
    let only: Option<String> = std::env::var("STRESS_CASE").ok();
    for (a, b) in [(4usize, 7usize), (3, 5), (1, 7), (0, 6), (2, 8)] {
        let task =
            binary_task(&data, &BinaryTask::Pair(a.to_string(), b.to_string())).expect("pair");
        for m in [30usize, 50, 120] {
            for off in [0usize, 500] {
                let idx: Vec<usize> = (off..off + m).collect();
                let sub = task.select(&idx);
                let sub = bulwark_data::Scaler::fit(&sub, bulwark_data::ScalingKind::MinMax)
                    .map(|s| s.transform(&sub))
                    .ok()
                    .and_then(|r| r.ok())
                    .unwrap_or(sub);
                if sub.require_two_classes().is_err() {
                    continue;
                }
                for n_budget in [0.0, 5.0, 20.0, 50.0] {
                    for c in [0.01, 0.1, 1.0, 10.0, 100.0] {
                        for tol in [1e-6, 1e-8] {
                            let name =
                                format!("{a}v{b} m={m} off={off} N={n_budget} C={c} tol={tol}");
                            if only.as_ref().is_some_and(|o| *o != name) {
                                continue;
                            }
                            total += 1;
                            let p = DsxLpParams::new()
                                .budget(n_budget)
                                .c(c)
                                .values(FeatureValues::Uniform)
                                .tolerance(tol)
                                .ipm_settings(settings())
                                .check()
                                .unwrap();
                            let mut log = |it: &bulwark_lp::IterationInfo| {
                                if only.is_some() {
                                    println!("{}", log::log_line(it));
                                }
                                std::ops::ControlFlow::Continue(())
                            };
                            match p.fit_with_progress(&sub, Some(&mut log)) {
                                Ok((_, d))
                                    if (d.objective - d.closed_form_objective).abs()
                                        > 1e-5 * (1.0 + d.objective) =>
                                {
                                    fails += 1;
                                    println!(
                                        "{a}v{b} m={m} off={off} N={n_budget} C={c} tol={tol}: objective {} vs closed {}",
                                        d.objective, d.closed_form_objective
                                    );
                                }
                                Ok((_, d)) => {
                                    iters += u64::from(d.iterations);
                                    if d.fell_back() {
                                        fallbacks += 1;
                                        if std::env::var_os("STRESS_FALLBACKS").is_some() {
                                            println!(
                                                "{name}: {} after {}",
                                                d.solver,
                                                d.fallbacks.join("; ")
                                            );
                                        }
                                    }
                                }
                                Err(e) => {
                                    fails += 1;
                                    println!("{name}: {e}");
                                    for b in [
                                        bulwark_deletion::LpBackend::EngineStructured,
                                        bulwark_deletion::LpBackend::GenericSparse,
                                    ] {
                                        let t = std::time::Instant::now();
                                        let r = DsxLpParams::new()
                                            .budget(n_budget)
                                            .c(c)
                                            .values(FeatureValues::Uniform)
                                            .tolerance(tol)
                                            .backend(b)
                                            .check()
                                            .unwrap()
                                            .fit_with_diagnostics(&sub);
                                        println!(
                                            "    {b:?}: {:?} in {:.2}s",
                                            r.map(|(_, d)| (
                                                d.objective,
                                                d.closed_form_objective,
                                                d.iterations
                                            ))
                                            .map_err(|e| e.to_string()),
                                            t.elapsed().as_secs_f64()
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    println!(
        "{fails} failures out of {total}; {iters} iterations in all, {fallbacks} fits fell back"
    );
}
