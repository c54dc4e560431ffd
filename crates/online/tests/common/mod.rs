//! Shared test helpers: random data and a clarabel QP for the SVM / FDROP primal.
#![allow(dead_code)]

pub mod smo_cases;

use bulwark_core::{Dataset, DenseMatrix, Sign, rng_from_seed};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use rand::Rng as _;
use rand_distr::{Distribution, StandardNormal};

/// Two overlapping Gaussian classes, `m × n`, class means ±`shift` on every feature.
pub fn gaussian_data(m: usize, n: usize, shift: f64, seed: u64) -> Dataset {
    let mut rng = rng_from_seed(seed);
    let mut rows = Vec::with_capacity(m);
    let mut y = Vec::with_capacity(m);
    for i in 0..m {
        let s = if i % 2 == 0 { Sign::Pos } else { Sign::Neg };
        let row: Vec<f64> = (0..n)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                z + shift * s.as_f64() * rng.random_range(0.5..1.5)
            })
            .collect();
        rows.push(row);
        y.push(s);
    }
    Dataset::binary("gauss", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap()
}

/// Dense constraint rows `a·x ≤ rhs` into clarabel's CSC.
fn csc_from_rows(rows: &[Vec<(usize, f64)>], ncols: usize) -> CscMatrix<f64> {
    let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ncols];
    for (r, row) in rows.iter().enumerate() {
        for &(c, v) in row {
            cols[c].push((r, v));
        }
    }
    let mut colptr = vec![0];
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    for col in cols {
        for (r, v) in col {
            rowval.push(r);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(rows.len(), ncols, colptr, rowval, nzval)
}

/// The FDROP primal (k = 0: the SVM) solved as a QP by clarabel; returns (objective, w, b).
/// Variables: w (n), b, ξ (m), t (m), u (m·n); top-k sum as min_t k t + Σ [z_j − t]_+.
pub fn clarabel_fdrop(data: &Dataset, c: f64, k: usize) -> (f64, Vec<f64>, f64) {
    clarabel_fdrop_with(data, c, k, true)
}

/// [`clarabel_fdrop`] with the bias fixed at 0 when `bias` is false (`b ≤ 0` and `−b ≤ 0`).
#[allow(dead_code)]
pub fn clarabel_fdrop_with(data: &Dataset, c: f64, k: usize, bias: bool) -> (f64, Vec<f64>, f64) {
    let values = vec![1.0; data.n_features()];
    clarabel_fdrop_valued(data, c, &values, k as f64, bias)
}

/// The value-weighted FDROP primal solved as a QP by clarabel; returns (objective, w, b). The
/// adversary's inner maximum `max Σ_j σ_j y w_j x_j` over `σ ∈ [0, 1]^n`, `Σ_j σ_j v_j ≤ N`
/// written by LP duality as `min_{t ≥ 0} N t + Σ_j [y w_j x_j − v_j t]_+` (unit values and
/// `N = k`: the top-k sum). Budget 0: no `t`, the features of value 0 deleted for free (none:
/// the SVM).
pub fn clarabel_fdrop_valued(
    data: &Dataset,
    c: f64,
    values: &[f64],
    budget: f64,
    bias: bool,
) -> (f64, Vec<f64>, f64) {
    let (m, n) = (data.len(), data.n_features());
    let y = data.binary_labels().unwrap();
    let nv = n + 1 + m + m + m * n;
    let (ib, ixi, it, iu) = (n, n + 1, n + 1 + m, n + 1 + 2 * m);
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut rhs = Vec::new();
    for i in 0..m {
        let yi = y[i].as_f64();
        let x: Vec<f64> = {
            let mut v = vec![0.0; n];
            data.row(i).to_dense_into(&mut v);
            v
        };
        // 1 − y(w·x + b) + k t_i + Σ u_ij − ξ_i ≤ 0
        let mut r: Vec<(usize, f64)> = (0..n).map(|j| (j, -yi * x[j])).collect();
        r.push((ib, -yi));
        r.push((ixi + i, -1.0));
        if budget > 0.0 {
            r.push((it + i, budget));
            for j in 0..n {
                r.push((iu + i * n + j, 1.0));
            }
        } else {
            // no budget: only the features of value 0 are deleted (free), `u_j ≥ y w_j x_j`
            for j in (0..n).filter(|&j| values[j] == 0.0) {
                r.push((iu + i * n + j, 1.0));
            }
        }
        rows.push(r);
        rhs.push(-1.0);
        // −ξ ≤ 0, −t ≤ 0
        rows.push(vec![(ixi + i, -1.0)]);
        rhs.push(0.0);
        rows.push(vec![(it + i, -1.0)]);
        rhs.push(0.0);
        for j in 0..n {
            // y x_j w_j − v_j t − u ≤ 0 ; −u ≤ 0
            rows.push(vec![
                (j, yi * x[j]),
                (it + i, -values[j]),
                (iu + i * n + j, -1.0),
            ]);
            rhs.push(0.0);
            rows.push(vec![(iu + i * n + j, -1.0)]);
            rhs.push(0.0);
        }
    }
    if !bias {
        rows.push(vec![(ib, 1.0)]);
        rhs.push(0.0);
        rows.push(vec![(ib, -1.0)]);
        rhs.push(0.0);
    }
    let a = csc_from_rows(&rows, nv);
    let mut q = vec![0.0; nv];
    for qi in &mut q[ixi..ixi + m] {
        *qi = c;
    }
    let p = {
        let colptr: Vec<usize> = (0..=nv).map(|j| j.min(n)).collect();
        CscMatrix::new(nv, nv, colptr, (0..n).collect(), vec![1.0; n])
    };
    let cones = [SupportedConeT::NonnegativeConeT(rows.len())];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .max_iter(400)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings).unwrap();
    solver.solve();
    assert_eq!(solver.solution.status, SolverStatus::Solved);
    let x = &solver.solution.x;
    (solver.solution.obj_val, x[..n].to_vec(), x[n])
}

/// The kernel SVM's dual `max Σα − ½ αᵀQα`, `Q_ij = y_i y_j K_ij`, `0 ≤ α ≤ cap`, `yᵀα = 0`,
/// solved by clarabel as `min ½αᵀQα − Σα`; returns the dual optimum (maximised value).
pub fn clarabel_svm_dual(k: &[Vec<f64>], y: &[f64], cap: &[f64]) -> f64 {
    let l = y.len();
    // P: the upper triangle of Q, column by column
    let mut colptr = vec![0];
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    for j in 0..l {
        for i in 0..=j {
            rowval.push(i);
            nzval.push(y[i] * y[j] * k[i][j]);
        }
        colptr.push(rowval.len());
    }
    let p = CscMatrix::new(l, l, colptr, rowval, nzval);
    let q = vec![-1.0; l];
    // yᵀα = 0 (zero cone), then −α ≤ 0 and α ≤ cap
    let mut rows: Vec<Vec<(usize, f64)>> = vec![(0..l).map(|i| (i, y[i])).collect()];
    let mut rhs = vec![0.0];
    for i in 0..l {
        rows.push(vec![(i, -1.0)]);
        rhs.push(0.0);
    }
    for (i, &c) in cap.iter().enumerate() {
        rows.push(vec![(i, 1.0)]);
        rhs.push(c);
    }
    let a = csc_from_rows(&rows, l);
    let cones = [
        SupportedConeT::ZeroConeT(1),
        SupportedConeT::NonnegativeConeT(2 * l),
    ];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-11)
        .tol_gap_rel(1e-11)
        .tol_feas(1e-11)
        .max_iter(400)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings).unwrap();
    solver.solve();
    assert_eq!(solver.solution.status, SolverStatus::Solved);
    -solver.solution.obj_val
}

/// The Crammer–Singer primal `min ½‖W‖² + C Σ ξ_i`, `ξ_i ≥ 1 + (w_k − w_{y_i})ᵀx_i` (k ≠ y_i),
/// `ξ_i ≥ 0`, solved by clarabel; returns the optimum.
pub fn clarabel_crammer_singer(data: &Dataset, c: f64) -> f64 {
    let (m, n, nc) = (data.len(), data.n_features(), data.n_classes());
    let nv = nc * n + m;
    let t = data.targets();
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut rhs = Vec::new();
    let mut x = vec![0.0; n];
    for i in 0..m {
        data.row(i).to_dense_into(&mut x);
        let y = t.class_index(i);
        for k in (0..nc).filter(|&k| k != y) {
            let mut r: Vec<(usize, f64)> = Vec::new();
            for j in 0..n {
                r.push((k * n + j, x[j]));
                r.push((y * n + j, -x[j]));
            }
            r.push((nc * n + i, -1.0));
            rows.push(r);
            rhs.push(-1.0);
        }
        rows.push(vec![(nc * n + i, -1.0)]);
        rhs.push(0.0);
    }
    let a = csc_from_rows(&rows, nv);
    let mut q = vec![0.0; nv];
    for qi in &mut q[nc * n..] {
        *qi = c;
    }
    let p = {
        let colptr: Vec<usize> = (0..=nv).map(|j| j.min(nc * n)).collect();
        CscMatrix::new(nv, nv, colptr, (0..nc * n).collect(), vec![1.0; nc * n])
    };
    let cones = [SupportedConeT::NonnegativeConeT(rows.len())];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-11)
        .tol_gap_rel(1e-11)
        .tol_feas(1e-11)
        .max_iter(400)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings).unwrap();
    solver.solve();
    assert_eq!(solver.solution.status, SolverStatus::Solved);
    solver.solution.obj_val
}
