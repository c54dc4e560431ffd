//! Randomised comparison against Clarabel on generated LPs with mixed row and bound kinds.

mod common;

use bulwark_lp::{BackendChoice, IpmSettings, Status, solve};
use common::{
    RefOutcome, clarabel_solve, random_feasible_lp, random_infeasible_lp, random_unbounded_lp,
    rel_err,
};

fn settings(backend: BackendChoice, presolve: bool, equilibrate: bool) -> IpmSettings {
    IpmSettings::builder()
        .backend(backend)
        .presolve(presolve)
        .equilibrate(equilibrate)
        .build()
        .unwrap()
}

#[test]
fn feasible_lps_match_clarabel() {
    let mut checked = 0;
    for seed in 0..240u64 {
        let lp = random_feasible_lp(seed);
        let reference = clarabel_solve(&lp);
        let RefOutcome::Optimal(obj_ref) = reference else {
            panic!("seed {seed}: clarabel did not solve a feasible bounded LP: {reference:?}");
        };
        // rotate through backends and the presolve / equilibration switches
        let backend = [
            BackendChoice::SparseLdl,
            BackendChoice::Dense,
            BackendChoice::Auto,
        ][(seed % 3) as usize];
        let s = settings(backend, seed % 4 != 1, seed % 5 != 2);
        let sol = solve(&lp, &s).unwrap();
        assert_eq!(sol.status, Status::Optimal, "seed {seed}: {sol:?}");
        assert!(
            rel_err(sol.objective, obj_ref) <= 1e-6,
            "seed {seed}: objective {} vs clarabel {}",
            sol.objective,
            obj_ref
        );
        // the returned point is feasible and has the reported objective
        let viol = lp.max_violation(&sol.x);
        assert!(
            viol <= 1e-6 * (1.0 + sol.x.iter().fold(0.0f64, |a, v| a.max(v.abs()))),
            "seed {seed}: violation {viol}"
        );
        assert!(
            rel_err(lp.objective_value(&sol.x), sol.objective) <= 1e-7,
            "seed {seed}"
        );
        checked += 1;
    }
    assert!(checked >= 200);
}

#[test]
fn infeasible_lps_are_detected() {
    for seed in 0..60u64 {
        let lp = random_infeasible_lp(seed);
        assert_eq!(
            clarabel_solve(&lp),
            RefOutcome::PrimalInfeasible,
            "seed {seed}: reference disagrees"
        );
        let s = settings(BackendChoice::SparseLdl, seed % 2 == 0, true);
        let sol = solve(&lp, &s).unwrap();
        assert_eq!(
            sol.status,
            Status::PrimalInfeasible,
            "seed {seed}: got {} after {} its",
            sol.status,
            sol.iterations
        );
    }
}

#[test]
fn unbounded_lps_are_detected() {
    for seed in 0..60u64 {
        let lp = random_unbounded_lp(seed);
        assert_eq!(
            clarabel_solve(&lp),
            RefOutcome::DualInfeasible,
            "seed {seed}: reference disagrees"
        );
        let s = settings(BackendChoice::SparseLdl, seed % 2 == 0, true);
        let sol = solve(&lp, &s).unwrap();
        assert_eq!(
            sol.status,
            Status::DualInfeasible,
            "seed {seed}: got {} after {} its",
            sol.status,
            sol.iterations
        );
        // the ray improves the objective and keeps the rows satisfiable
        let cx: f64 = lp.objective().iter().zip(&sol.x).map(|(c, x)| c * x).sum();
        let better = if lp.sense() == bulwark_lp::Sense::Maximize {
            cx > 0.0
        } else {
            cx < 0.0
        };
        assert!(better, "seed {seed}: ray does not improve the objective");
    }
}
