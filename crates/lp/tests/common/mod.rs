//! Shared test helpers: a Clarabel reference solve of an `LpProblem`.
#![allow(dead_code)]

use bulwark_lp::{LpProblem, Sense};
use clarabel::algebra::CscMatrix as CCsc;
use clarabel::solver::{
    DefaultSettings, DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT,
    SolverStatus, SupportedConeT, ZeroConeT,
};

/// Reference outcome from Clarabel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RefOutcome {
    Optimal(f64),
    PrimalInfeasible,
    DualInfeasible,
    /// Stopped by its `time_limit` (Clarabel's `MaxTime`).
    TimeLimit,
    Other,
}

/// Solves `lp` with Clarabel (equality rows as a zero cone, everything else as
/// nonnegative slacks) at tolerances 1e-10.
pub fn clarabel_solve(lp: &LpProblem) -> RefOutcome {
    clarabel_solve_with(lp, reference_settings()).0
}

/// The reference settings of [`clarabel_solve`]: tolerances 1e-10, at most 500 iterations.
pub fn reference_settings() -> DefaultSettings<f64> {
    DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(500)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .build()
        .unwrap()
}

/// [`clarabel_solve`] with the given settings; also returns Clarabel's iteration count.
pub fn clarabel_solve_with(lp: &LpProblem, settings: DefaultSettings<f64>) -> (RefOutcome, u32) {
    let n = lp.num_vars();
    let a = lp.matrix();
    let sgn = if lp.sense() == Sense::Maximize {
        -1.0
    } else {
        1.0
    };
    let mut rows_i = Vec::new();
    let mut rows_j = Vec::new();
    let mut vals = Vec::new();
    let mut b = Vec::new();
    // CSR of A
    let m = lp.num_rows();
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); m];
    for j in 0..n {
        for p in a.col_ptr[j]..a.col_ptr[j + 1] {
            rows[a.row_idx[p]].push((j, a.values[p]));
        }
    }
    let mut push_row = |coeffs: &[(usize, f64)], scale: f64, rhs: f64, b: &mut Vec<f64>| {
        let r = b.len();
        for &(j, v) in coeffs {
            rows_i.push(r);
            rows_j.push(j);
            vals.push(scale * v);
        }
        b.push(rhs);
    };
    let (rl, ru, l, u) = (
        lp.row_lower(),
        lp.row_upper(),
        lp.col_lower(),
        lp.col_upper(),
    );
    let mut nzero = 0;
    for i in 0..m {
        if rl[i] == ru[i] {
            push_row(&rows[i], 1.0, ru[i], &mut b);
            nzero += 1;
        }
    }
    for j in 0..n {
        if l[j] == u[j] {
            push_row(&[(j, 1.0)], 1.0, u[j], &mut b);
            nzero += 1;
        }
    }
    for i in 0..m {
        if rl[i] != ru[i] {
            if ru[i].is_finite() {
                push_row(&rows[i], 1.0, ru[i], &mut b);
            }
            if rl[i].is_finite() {
                push_row(&rows[i], -1.0, -rl[i], &mut b);
            }
        }
    }
    for j in 0..n {
        if l[j] != u[j] {
            if u[j].is_finite() {
                push_row(&[(j, 1.0)], 1.0, u[j], &mut b);
            }
            if l[j].is_finite() {
                push_row(&[(j, -1.0)], 1.0, -l[j], &mut b);
            }
        }
    }
    let mtot = b.len();
    let amat = CCsc::new_from_triplets(mtot, n, rows_i, rows_j, vals);
    let p = CCsc::<f64>::zeros((n, n));
    let q: Vec<f64> = lp.objective().iter().map(|c| sgn * c).collect();
    let cones: Vec<SupportedConeT<f64>> = vec![ZeroConeT(nzero), NonnegativeConeT(mtot - nzero)];
    let mut solver = DefaultSolver::new(&p, &q, &amat, &b, &cones, settings).unwrap();
    solver.solve();
    let sol = &solver.solution;
    let outcome = match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            RefOutcome::Optimal(sgn * sol.obj_val + lp.offset())
        }
        SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
            RefOutcome::PrimalInfeasible
        }
        SolverStatus::DualInfeasible | SolverStatus::AlmostDualInfeasible => {
            RefOutcome::DualInfeasible
        }
        SolverStatus::MaxTime => RefOutcome::TimeLimit,
        _ => RefOutcome::Other,
    };
    (outcome, sol.iterations)
}

use bulwark_lp::LpBuilder;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Generates a random LP that is primal and dual feasible (so it has an optimum):
/// a point `x0` inside random bounds of every kind, rows of every kind around `A x0`,
/// and `c = Aᵀy0 + z0` with signs that make `(y0, z0)` dual feasible.
pub fn random_feasible_lp(seed: u64) -> LpProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.random_range(1..=18usize);
    let m = rng.random_range(1..=14usize);
    let density = rng.random_range(0.15..0.7);
    let sense = if rng.random_bool(0.3) {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    let mut b = LpBuilder::new(sense);
    // variable bounds: 0 lower, 1 upper, 2 boxed, 3 free, 4 fixed
    let mut kinds = Vec::with_capacity(n);
    let mut x0 = Vec::with_capacity(n);
    let mut bounds = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = rng.random_range(0..5u32);
        let v: f64 = rng.random_range(-5.0..5.0);
        let (lo, up) = match kind {
            0 => (v - rng.random_range(0.0..3.0), f64::INFINITY),
            1 => (f64::NEG_INFINITY, v + rng.random_range(0.0..3.0)),
            2 => (
                v - rng.random_range(0.0..2.0),
                v + rng.random_range(0.0..2.0),
            ),
            3 => (f64::NEG_INFINITY, f64::INFINITY),
            _ => (v, v),
        };
        kinds.push(kind);
        x0.push(v);
        bounds.push((lo, up));
    }
    let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    let mut rows = Vec::with_capacity(m);
    for i in 0..m {
        let mut coeffs = Vec::new();
        for j in 0..n {
            if rng.random_bool(density) {
                let a: f64 = rng.random_range(-4.0..4.0);
                coeffs.push((j, (a * 100.0).round() / 100.0));
            }
        }
        if coeffs.is_empty() {
            coeffs.push((rng.random_range(0..n), 1.0));
        }
        let act: f64 = coeffs.iter().map(|&(j, a)| a * x0[j]).sum();
        // 0 equality, 1 ≥, 2 ≤, 3 range
        let rk = rng.random_range(0..4u32);
        let (lo, up) = match rk {
            0 => (act, act),
            1 => (act - rng.random_range(0.0..2.0), f64::INFINITY),
            2 => (f64::NEG_INFINITY, act + rng.random_range(0.0..2.0)),
            _ => (
                act - rng.random_range(0.0..2.0),
                act + rng.random_range(0.0..2.0),
            ),
        };
        for &(j, a) in &coeffs {
            cols[j].push((i, a));
        }
        rows.push((lo, up, rk, coeffs));
    }
    // dual feasible y0 (sign by row kind, minimisation form)
    let y0: Vec<f64> = rows
        .iter()
        .map(|r| {
            let v: f64 = rng.random_range(0.0..3.0);
            match r.2 {
                1 => v,
                2 => -v,
                _ => rng.random_range(-3.0..3.0),
            }
        })
        .collect();
    let sgn = if sense == Sense::Maximize { -1.0 } else { 1.0 };
    for j in 0..n {
        let aty: f64 = cols[j].iter().map(|&(i, a)| a * y0[i]).sum();
        let v: f64 = rng.random_range(0.0..2.0);
        let z = match kinds[j] {
            0 => v,
            1 => -v,
            3 => 0.0,
            _ => rng.random_range(-2.0..2.0),
        };
        let c_min = aty + z;
        b.add_var(sgn * c_min, bounds[j].0, bounds[j].1);
    }
    for (lo, up, _, coeffs) in &rows {
        b.add_row(*lo, *up, coeffs);
    }
    b.offset(rng.random_range(-10.0..10.0));
    b.build().expect("generated LP is valid")
}

/// A primal-infeasible LP: a feasible one plus two contradicting copies of a row.
pub fn random_infeasible_lp(seed: u64) -> LpProblem {
    let base = random_feasible_lp(seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xdead_beef);
    let mut b = rebuild(&base);
    let n = base.num_vars();
    let mut coeffs: Vec<(usize, f64)> = Vec::new();
    for j in 0..n {
        if rng.random_bool(0.6) {
            coeffs.push((j, rng.random_range(0.5..2.0)));
        }
    }
    let coeffs = if coeffs.is_empty() {
        vec![(0, 1.0)]
    } else {
        coeffs
    };
    let t: f64 = rng.random_range(-3.0..3.0);
    match rng.random_range(0..3u32) {
        0 => {
            b.add_row(t, f64::INFINITY, &coeffs);
            b.add_row(f64::NEG_INFINITY, t - 1.0, &coeffs);
        }
        1 => {
            b.add_row(t, t, &coeffs);
            b.add_row(t + 0.5, t + 2.0, &coeffs);
        }
        _ => {
            // x_0 bounded in [t, t+1] by rows but fixed elsewhere
            b.add_row(t, t + 1.0, &[(0, 1.0)]);
            b.add_row(t + 2.0, f64::INFINITY, &[(0, 1.0)]);
        }
    }
    b.build().expect("valid")
}

/// A dual-infeasible (unbounded) LP: a feasible one plus a variable that improves the
/// objective without limit and only relaxes the rows it appears in.
pub fn random_unbounded_lp(seed: u64) -> LpProblem {
    let base = random_feasible_lp(seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut b = rebuild(&base);
    let sgn = if base.sense() == Sense::Maximize {
        -1.0
    } else {
        1.0
    };
    let j = b.add_var(-sgn * rng.random_range(0.5..2.0), 0.0, f64::INFINITY);
    // put it in ≥ rows with a positive coefficient (increasing it keeps them satisfied)
    let (rl, ru) = (base.row_lower(), base.row_upper());
    let mut placed = false;
    for i in 0..base.num_rows() {
        if rl[i].is_finite() && ru[i] == f64::INFINITY && rng.random_bool(0.7) {
            b.add_row(rl[i], f64::INFINITY, &[(j, 1.0)]);
            placed = true;
        }
    }
    if !placed {
        b.add_row(-1.0, f64::INFINITY, &[(j, 1.0)]);
    }
    b.build().expect("valid")
}

/// Copies a problem into a builder.
pub fn rebuild(p: &LpProblem) -> LpBuilder {
    rebuild_row_scaled(p, 1.0)
}

/// `p` with every row (coefficients and both bounds) multiplied by `s` (`s < 0` swaps the
/// bounds): the same feasible set and optimum.
pub fn row_scaled(p: &LpProblem, s: f64) -> LpProblem {
    rebuild_row_scaled(p, s)
        .build()
        .expect("a row-scaled valid problem is valid")
}

/// [`rebuild`] with every row multiplied by `s` (exact copy at `s = 1`).
fn rebuild_row_scaled(p: &LpProblem, s: f64) -> LpBuilder {
    let mut b = LpBuilder::new(p.sense());
    b.offset(p.offset());
    for j in 0..p.num_vars() {
        b.add_var(p.objective()[j], p.col_lower()[j], p.col_upper()[j]);
    }
    let a = p.matrix();
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); p.num_rows()];
    for j in 0..p.num_vars() {
        for q in a.col_ptr[j]..a.col_ptr[j + 1] {
            rows[a.row_idx[q]].push((j, s * a.values[q]));
        }
    }
    for (i, r) in rows.iter().enumerate() {
        let (lo, up) = (s * p.row_lower()[i], s * p.row_upper()[i]);
        b.add_row(lo.min(up), lo.max(up), r);
    }
    b
}

/// Relative error `|a − b| / max(1, |b|)`.
pub fn rel_err(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1.0)
}
