//! GURU's batch solver over K ranks (threads of this process, `ThreadRanks`; the same code runs
//! under `mpirun` with the `mpi` feature): each rank holds a contiguous share of the examples,
//! the passes' sums are combined in rank order, and K = 1, 2, 3 give the single process's
//! objective (1e-9 relative), iteration count, certificate and model; the SGD solver refuses
//! several ranks.

#[allow(dead_code)]
mod common;

use bulwark_core::Communicator;
use bulwark_core::comm::ThreadRanks;
use bulwark_gaussian::{GuruParams, Solver};

use common::binary;

/// What one rank's fit returned.
#[derive(Debug, PartialEq)]
struct Run {
    objective: f64,
    iterations: u64,
    gap: f64,
    /// The weights, then the bias.
    w: Vec<f64>,
    /// The report's `ranks`.
    ranks: Option<f64>,
}

/// Fits `params` over `k` ranks; every rank's result, in rank order.
fn over_ranks(params: &GuruParams, data: &bulwark_core::Dataset, k: usize) -> Vec<Run> {
    ThreadRanks::run(k, |comm| {
        let rows: Vec<usize> = comm.share(data.len()).collect();
        let (fit, report) = params
            .fit_certified_over(&data.select(&rows), None, comm)
            .unwrap();
        let mut w = fit.model.weights().to_vec();
        w.push(fit.model.bias());
        Run {
            objective: fit.certificate.primal,
            iterations: fit.iterations,
            gap: fit.certificate.relative_gap,
            w,
            ranks: report.details.get("ranks").copied(),
        }
    })
}

#[test]
fn batch_over_one_two_three_ranks_matches_one_process() {
    let plain = binary(301, 6, 0.1, 11);
    let weighted = binary(240, 4, 0.2, 12)
        .with_weights((0..240).map(|i| 0.5 + (i % 3) as f64).collect())
        .unwrap();
    for (data, sigma, bias) in [
        (&plain, 0.5, true),
        (&plain, 2.0, false),
        (&weighted, 1.0, true),
    ] {
        let params = GuruParams::new()
            .sigma(sigma)
            .solver(Solver::Batch)
            .bias(bias);
        let (single, _) = params.fit_certified(data).unwrap();
        assert!(single.converged, "sigma {sigma}");
        for k in 1..=3 {
            let runs = over_ranks(&params, data, k);
            // every rank returns the same bits
            assert!(runs.windows(2).all(|p| p[0] == p[1]), "K={k}: ranks differ");
            let r = &runs[0];
            let primal = single.certificate.primal;
            let rel = (r.objective - primal).abs() / primal;
            assert!(
                rel <= 1e-9,
                "K={k} sigma {sigma}: objective {} vs {primal} ({rel:.1e})",
                r.objective
            );
            // Newton iterations: the same up to the last steps that push the certified gap
            // below 1e-10, where the regrouped sums' rounding decides (measured: K = 3 at
            // sigma = 2 stops after 7 iterations, one process after 5)
            assert!(
                r.iterations.abs_diff(single.iterations) <= 2,
                "K={k} sigma {sigma}: iterations {} vs {}",
                r.iterations,
                single.iterations
            );
            assert!(r.gap <= 1e-10, "K={k} sigma {sigma}: gap {}", r.gap);
            let mut w1 = single.model.weights().to_vec();
            w1.push(single.model.bias());
            let scale = w1.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            for (a, c) in r.w.iter().zip(&w1) {
                assert!(
                    (a - c).abs() <= 1e-6 * scale,
                    "K={k} sigma {sigma}: weight {a} vs {c}"
                );
            }
            if k == 1 {
                // one rank is the single process to the bit
                assert_eq!(r.objective, primal);
                assert_eq!(r.ranks, None);
            } else {
                assert_eq!(r.ranks, Some(k as f64));
            }
        }
    }
}

#[test]
fn sgd_refuses_several_ranks() {
    let data = binary(60, 3, 0.1, 3);
    let params = GuruParams::new().solver(Solver::Sgd);
    let errors = ThreadRanks::run(2, |comm| {
        let rows: Vec<usize> = comm.share(data.len()).collect();
        params
            .fit_certified_over(&data.select(&rows), None, comm)
            .unwrap_err()
            .to_string()
    });
    for e in errors {
        assert!(
            e.contains("sgd solver does not train over several ranks"),
            "{e}"
        );
    }
}
