//! The independent reference of the LP tests: clarabel (a general conic interior-point solver)
//! on the LP as `bulwark-lp` builds it.

use bulwark_lp::LpProblem;
use clarabel::algebra::CscMatrix as ClCsc;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};

/// Solves any `bulwark_lp::LpProblem` (rows `l ≤ Ax ≤ u`, bounds `l ≤ x ≤ u`) with clarabel.
pub fn clarabel_objective(p: &LpProblem) -> f64 {
    let (m, n) = (p.num_rows(), p.num_vars());
    let a = p.matrix();
    // build rows of the clarabel form  G x + s = h, s ≥ 0
    let mut trip: Vec<(usize, usize, f64)> = Vec::new();
    let mut h = Vec::new();
    let mut r = 0;
    let cols: Vec<Vec<(usize, f64)>> = {
        let mut rows_of = vec![Vec::new(); m];
        for j in 0..n {
            for k in a.col_ptr[j]..a.col_ptr[j + 1] {
                rows_of[a.row_idx[k]].push((j, a.values[k]));
            }
        }
        rows_of
    };
    for i in 0..m {
        let (lo, up) = (p.row_lower()[i], p.row_upper()[i]);
        if lo.is_finite() {
            cols[i].iter().for_each(|&(j, v)| trip.push((r, j, -v)));
            h.push(-lo);
            r += 1;
        }
        if up.is_finite() {
            cols[i].iter().for_each(|&(j, v)| trip.push((r, j, v)));
            h.push(up);
            r += 1;
        }
    }
    for j in 0..n {
        let (lo, up) = (p.col_lower()[j], p.col_upper()[j]);
        if lo.is_finite() {
            trip.push((r, j, -1.0));
            h.push(-lo);
            r += 1;
        }
        if up.is_finite() {
            trip.push((r, j, 1.0));
            h.push(up);
            r += 1;
        }
    }
    trip.sort_by_key(|&(i, j, _)| (j, i));
    let mut colptr = vec![0usize; n + 1];
    trip.iter().for_each(|&(_, j, _)| colptr[j + 1] += 1);
    for j in 0..n {
        colptr[j + 1] += colptr[j];
    }
    let g = ClCsc::new(
        r,
        n,
        colptr,
        trip.iter().map(|t| t.0).collect(),
        trip.iter().map(|t| t.2).collect(),
    );
    let q = p.objective().to_vec();
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .max_iter(500)
        .build()
        .unwrap();
    let mut s = DefaultSolver::new(
        &ClCsc::zeros((n, n)),
        &q,
        &g,
        &h,
        &[SupportedConeT::NonnegativeConeT(r)],
        settings,
    )
    .unwrap();
    s.solve();
    assert!(
        matches!(
            s.solution.status,
            SolverStatus::Solved | SolverStatus::AlmostSolved
        ),
        "{:?}",
        s.solution.status
    );
    s.solution.obj_val + p.offset()
}
