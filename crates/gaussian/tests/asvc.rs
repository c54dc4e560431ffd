//! ASVC against clarabel on the second-order-cone form of the ball-loss SVM (A.5).

use bulwark_core::{Dataset, DenseMatrix, Fit, Sign};
use bulwark_gaussian::AsvcParams;
use bulwark_gaussian::asvc::ball_objective;
use bulwark_online::SvmParams;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

fn data(m: usize, d: usize, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for i in 0..m {
        let pos = i % 2 == 0;
        let mut r: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        r[0] += if pos { 1.2 } else { -1.2 };
        r[1] += 0.5;
        rows.push(r);
        let flip = rng.random::<f64>() < 0.1;
        y.push(if pos != flip { Sign::Pos } else { Sign::Neg });
    }
    Dataset::binary("ball", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap()
}

/// `min ½‖w‖² + C Σ ξ`, `ξ_m ≥ 1 − y(wᵀx + b) + δt`, `ξ ≥ 0`, `‖w‖ ≤ t` by clarabel.
/// Variables `[w (n), b, t, ξ (m)]`.
fn clarabel_ball(data: &Dataset, delta: f64, c: f64) -> f64 {
    let (m, n) = (data.len(), data.n_features());
    let y = data.binary_labels().unwrap();
    let nv = n + 2 + m;
    let (ib, it, ixi) = (n, n + 1, n + 2);
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut rhs = Vec::new();
    for i in 0..m {
        let yi = y[i].as_f64();
        let mut x = vec![0.0; n];
        data.row(i).to_dense_into(&mut x);
        let mut r: Vec<(usize, f64)> = (0..n).map(|j| (j, -yi * x[j])).collect();
        r.extend([(ib, -yi), (it, delta), (ixi + i, -1.0)]);
        rows.push(r);
        rhs.push(-1.0);
    }
    for i in 0..m {
        rows.push(vec![(ixi + i, -1.0)]);
        rhs.push(0.0);
    }
    // second-order cone (t, w): s = (t, w) = −A x
    rows.push(vec![(it, -1.0)]);
    rhs.push(0.0);
    for j in 0..n {
        rows.push(vec![(j, -1.0)]);
        rhs.push(0.0);
    }
    let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nv];
    for (r, row) in rows.iter().enumerate() {
        for &(c, v) in row {
            cols[c].push((r, v));
        }
    }
    let (mut colptr, mut rowval, mut nzval) = (vec![0], Vec::new(), Vec::new());
    for col in cols {
        for (r, v) in col {
            rowval.push(r);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(rows.len(), nv, colptr, rowval, nzval);
    let mut q = vec![0.0; nv];
    for v in &mut q[ixi..] {
        *v = c;
    }
    let p = {
        let colptr: Vec<usize> = (0..=nv).map(|j| j.min(n)).collect();
        CscMatrix::new(nv, nv, colptr, (0..n).collect(), vec![1.0; n])
    };
    let cones = [
        SupportedConeT::NonnegativeConeT(2 * m),
        SupportedConeT::SecondOrderConeT(n + 1),
    ];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-9)
        .tol_gap_rel(1e-9)
        .tol_feas(1e-9)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings).unwrap();
    solver.solve();
    assert_eq!(solver.solution.status, SolverStatus::Solved);
    solver.solution.obj_val
}

#[test]
fn asvc_reaches_the_ball_svm_optimum() {
    for (seed, delta, c) in [(1u64, 0.3, 1.0), (2, 1.0, 0.5), (3, 0.05, 10.0)] {
        let d = data(80, 4, seed);
        let fit = AsvcParams::new()
            .delta(delta)
            .c(c)
            .tolerance(1e-6)
            .fit(&d)
            .unwrap();
        assert_eq!(fit.report.solver, "damped-alternating dual-cd");
        assert!(fit.report.converged, "{}", fit.report.summary());
        let ours = fit.report.objective.unwrap();
        assert_eq!(ours, ball_objective(&fit.model, &d, delta, c).unwrap());
        let theirs = clarabel_ball(&d, delta, c);
        assert!(
            (ours - theirs).abs() <= 1e-5 * theirs,
            "delta {delta}: ASVC {ours} vs clarabel {theirs} ({} rounds)",
            fit.report.iterations.unwrap()
        );
        // the certified lower bound holds
        assert!(fit.report.details["lower_bound"] <= theirs * (1.0 + 1e-9));
    }
}

#[test]
fn zero_radius_is_the_svm() {
    let d = data(60, 3, 4);
    let a = AsvcParams::new().delta(0.0).c(2.0).fit(&d).unwrap();
    let s = SvmParams::new().c(2.0).tolerance(1e-5).fit(&d).unwrap();
    assert_eq!(a.model, s.model);
    assert_eq!(a.report.iterations, Some(1));
}

#[test]
fn bad_radius_is_a_typed_error() {
    let d = data(10, 2, 5);
    for delta in [-0.1, f64::NAN] {
        let e = AsvcParams::new().delta(delta).fit(&d).unwrap_err();
        assert!(e.to_string().contains("delta"), "{e}");
    }
}
