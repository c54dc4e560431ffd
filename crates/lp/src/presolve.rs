//! Light presolve and Ruiz equilibration: maps an [`LpProblem`] to the internal model
//! the IPM iterates on, and maps results back.

use crate::error::LpError;
use crate::kkt::RowKind;
use crate::problem::{CscMatrix, LpProblem, Sense};

/// Outcome decided during presolve (no IPM iterations needed).
#[derive(Debug, Clone)]
pub(crate) enum Decided {
    /// An empty row with `0 ∉ [rl, ru]`: a Farkas ray is `±e_row`.
    PrimalInfeasible { row: usize, sign: f64 },
    /// An empty column whose cost pushes it to an infinite bound: ray `±e_col`.
    DualInfeasible { col: usize, sign: f64 },
}

/// The internal model: `min ĉᵀξ s.t. Ãξ = b̂, l̂ ≤ ξ ≤ û` with `ξ = (x̂, ŝ)`,
/// `Ã = [Â, −I_ineq]`, `Â = R A C`, `x = C x̂`, `s = R⁻¹ŝ`, `c = σ C⁻¹ ĉ`.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub n: usize,
    pub m: usize,
    pub nn: usize,
    pub a: CscMatrix,
    pub row_kind: Vec<RowKind>,
    /// slack index k (0-based among slacks) -> row
    pub slack_row: Vec<usize>,
    /// row -> slack index or usize::MAX
    pub row_slack: Vec<usize>,
    pub c: Vec<f64>,
    pub b: Vec<f64>,
    pub lo: Vec<f64>,
    pub up: Vec<f64>,
    pub has_lo: Vec<bool>,
    pub has_up: Vec<bool>,
    pub col_orig: Vec<usize>,
    pub row_orig: Vec<usize>,
    pub colscale: Vec<f64>,
    pub rowscale: Vec<f64>,
    pub cscale: f64,
    /// objective constant (minimisation sign) including eliminated variables
    pub offset: f64,
    /// values of eliminated variables (NaN for kept ones), original indexing
    pub fixed_x: Vec<f64>,
    pub decided: Option<Decided>,
    /// largest finite |bound| (rows and variables, after fixing), original units
    pub bnorm: f64,
    /// largest |c_j|, original units
    pub cnorm: f64,
}

pub(crate) fn build_model(
    p: &LpProblem,
    presolve: bool,
    equilibrate: bool,
    ruiz_iters: u32,
    keep_layout: bool,
    backend: &'static str,
) -> Result<Model, LpError> {
    let n0 = p.num_vars();
    let m0 = p.num_rows();
    let sgn = if p.sense == Sense::Maximize {
        -1.0
    } else {
        1.0
    };
    let c_min: Vec<f64> = p.c.iter().map(|v| sgn * v).collect();
    let mut offset = sgn * p.offset;
    let mut fixed_x = vec![f64::NAN; n0];
    let mut rl = p.row_lower.clone();
    let mut ru = p.row_upper.clone();
    let mut decided = None;
    // fixed variables
    for j in 0..n0 {
        if p.col_lower[j] == p.col_upper[j] {
            if keep_layout {
                return Err(LpError::LayoutConflict {
                    backend,
                    reason: format!("variable `{}` is fixed", p.col_name(j)),
                });
            }
            fixed_x[j] = p.col_lower[j];
        }
    }
    // row counts over non-fixed columns
    let mut row_count = vec![0usize; m0];
    let mut col_count = vec![0usize; n0];
    for j in 0..n0 {
        for q in p.a.col_ptr[j]..p.a.col_ptr[j + 1] {
            if fixed_x[j].is_nan() {
                row_count[p.a.row_idx[q]] += 1;
            }
        }
    }
    let mut keep_row = vec![true; m0];
    for i in 0..m0 {
        if rl[i] == f64::NEG_INFINITY && ru[i] == f64::INFINITY {
            if keep_layout {
                return Err(LpError::LayoutConflict {
                    backend,
                    reason: format!("row `{}` is free", p.row_name(i)),
                });
            }
            keep_row[i] = false;
        }
    }
    // empty columns (presolve): fix at the bound the cost prefers
    if presolve && !keep_layout {
        for j in 0..n0 {
            if !fixed_x[j].is_nan() {
                continue;
            }
            for q in p.a.col_ptr[j]..p.a.col_ptr[j + 1] {
                if keep_row[p.a.row_idx[q]] {
                    col_count[j] += 1;
                }
            }
            if col_count[j] == 0 {
                let (l, u, cj) = (p.col_lower[j], p.col_upper[j], c_min[j]);
                let v = if cj > 0.0 {
                    l
                } else if cj < 0.0 {
                    u
                } else {
                    0f64.clamp(l, u)
                };
                if v.is_infinite() {
                    if decided.is_none() {
                        decided = Some(Decided::DualInfeasible {
                            col: j,
                            sign: if cj > 0.0 { -1.0 } else { 1.0 },
                        });
                    }
                    fixed_x[j] = 0f64.clamp(l, u);
                } else {
                    fixed_x[j] = v;
                }
            }
        }
    }
    // substitute eliminated variables
    for j in 0..n0 {
        let v = fixed_x[j];
        if v.is_nan() {
            continue;
        }
        offset += c_min[j] * v;
        for q in p.a.col_ptr[j]..p.a.col_ptr[j + 1] {
            let i = p.a.row_idx[q];
            rl[i] -= p.a.values[q] * v;
            ru[i] -= p.a.values[q] * v;
        }
    }
    // empty rows
    if presolve && !keep_layout {
        for i in 0..m0 {
            if keep_row[i] && row_count[i] == 0 {
                let tol = 1e-9 * (1.0 + rl[i].abs().min(ru[i].abs()));
                if (rl[i] > tol || ru[i] < -tol) && decided.is_none() {
                    decided = Some(Decided::PrimalInfeasible {
                        row: i,
                        sign: if rl[i] > tol { 1.0 } else { -1.0 },
                    });
                }
                keep_row[i] = false;
            }
        }
    }
    let col_orig: Vec<usize> = (0..n0).filter(|&j| fixed_x[j].is_nan()).collect();
    let row_orig: Vec<usize> = (0..m0).filter(|&i| keep_row[i]).collect();
    let n = col_orig.len();
    let m = row_orig.len();
    let mut row_new = vec![usize::MAX; m0];
    for (k, &i) in row_orig.iter().enumerate() {
        row_new[i] = k;
    }
    let mut a = CscMatrix {
        nrows: m,
        ncols: n,
        col_ptr: Vec::with_capacity(n + 1),
        row_idx: Vec::new(),
        values: Vec::new(),
    };
    a.col_ptr.push(0);
    for &j in &col_orig {
        for q in p.a.col_ptr[j]..p.a.col_ptr[j + 1] {
            let i = row_new[p.a.row_idx[q]];
            if i != usize::MAX {
                a.row_idx.push(i);
                a.values.push(p.a.values[q]);
            }
        }
        a.col_ptr.push(a.row_idx.len());
    }
    // Ruiz equilibration
    let mut colscale = vec![1.0; n];
    let mut rowscale = vec![1.0; m];
    if equilibrate && !keep_layout {
        let mut rmax = vec![0.0f64; m];
        for _ in 0..ruiz_iters {
            rmax.fill(0.0);
            let mut worst: f64 = 0.0;
            for j in 0..n {
                let mut cmax: f64 = 0.0;
                for q in a.col_ptr[j]..a.col_ptr[j + 1] {
                    let v = a.values[q].abs();
                    cmax = cmax.max(v);
                    rmax[a.row_idx[q]] = rmax[a.row_idx[q]].max(v);
                }
                worst = worst.max((1.0 - cmax).abs());
                let s = if cmax > 0.0 {
                    (1.0 / cmax.sqrt()).clamp(1e-4, 1e4)
                } else {
                    1.0
                };
                colscale[j] *= s;
                for q in a.col_ptr[j]..a.col_ptr[j + 1] {
                    a.values[q] *= s;
                }
            }
            for i in 0..m {
                worst = worst.max((1.0 - rmax[i]).abs());
            }
            let rs: Vec<f64> = rmax
                .iter()
                .map(|&r| {
                    if r > 0.0 {
                        (1.0 / r.sqrt()).clamp(1e-4, 1e4)
                    } else {
                        1.0
                    }
                })
                .collect();
            for i in 0..m {
                rowscale[i] *= rs[i];
            }
            for q in 0..a.values.len() {
                a.values[q] *= rs[a.row_idx[q]];
            }
            if worst < 1e-3 {
                break;
            }
        }
    }
    // Bound scaling. Ruiz fixes `R A C` only up to `(R / t, t C)`, and how it splits a
    // uniform factor depends on the units of the input: rows multiplied by `s` give the
    // same `R A C` but `R b`, `l / C` about `√s` times larger, so the engine, whose
    // start, regularisation and step safeguards are in absolute units, would iterate on
    // a differently scaled problem (seed 81808 with rows ×623.5: a breakdown of the
    // factorisation near the optimum). Choosing `t` so that the largest finite |bound|
    // of the model (`b̂`, `l̂`, `û`, slack bounds) is 1 removes that freedom: `R A C` is
    // unchanged, the model no longer depends on the units of rows or of the primal data,
    // and the primal side gets the unit scale the cost scaling below gives the dual side.
    if equilibrate && !keep_layout {
        let mut bmax: f64 = 0.0;
        for (k, &i) in row_orig.iter().enumerate() {
            for v in [rl[i], ru[i]] {
                if v.is_finite() {
                    bmax = bmax.max((v * rowscale[k]).abs());
                }
            }
        }
        for (k, &j) in col_orig.iter().enumerate() {
            for v in [p.col_lower[j], p.col_upper[j]] {
                if v.is_finite() {
                    bmax = bmax.max((v / colscale[k]).abs());
                }
            }
        }
        if bmax > 0.0 {
            let t = bmax.clamp(1e-6, 1e6);
            for v in &mut colscale {
                *v *= t;
            }
            for v in &mut rowscale {
                *v /= t;
            }
        }
    }
    // rows
    let mut row_kind = Vec::with_capacity(m);
    let mut slack_row = Vec::new();
    let mut row_slack = vec![usize::MAX; m];
    let mut b = vec![0.0; m];
    for (k, &i) in row_orig.iter().enumerate() {
        if rl[i] == ru[i] {
            row_kind.push(RowKind::Equality);
            b[k] = rl[i] * rowscale[k];
        } else {
            row_kind.push(RowKind::Inequality);
            row_slack[k] = slack_row.len();
            slack_row.push(k);
        }
    }
    let nn = n + slack_row.len();
    let mut c = vec![0.0; nn];
    for (k, &j) in col_orig.iter().enumerate() {
        c[k] = c_min[j] * colscale[k];
    }
    let mut cscale = 1.0;
    if equilibrate && !keep_layout {
        let cmax = c.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if cmax > 0.0 {
            cscale = cmax.clamp(1e-6, 1e6);
        }
        for v in &mut c {
            *v /= cscale;
        }
    }
    let mut lo = vec![0.0; nn];
    let mut up = vec![0.0; nn];
    let mut has_lo = vec![false; nn];
    let mut has_up = vec![false; nn];
    for (k, &j) in col_orig.iter().enumerate() {
        if p.col_lower[j] > f64::NEG_INFINITY {
            has_lo[k] = true;
            lo[k] = p.col_lower[j] / colscale[k];
        }
        if p.col_upper[j] < f64::INFINITY {
            has_up[k] = true;
            up[k] = p.col_upper[j] / colscale[k];
        }
    }
    for (s, &k) in slack_row.iter().enumerate() {
        let i = row_orig[k];
        let t = n + s;
        if rl[i] > f64::NEG_INFINITY {
            has_lo[t] = true;
            lo[t] = rl[i] * rowscale[k];
        }
        if ru[i] < f64::INFINITY {
            has_up[t] = true;
            up[t] = ru[i] * rowscale[k];
        }
    }
    let mut bnorm: f64 = 0.0;
    for &i in &row_orig {
        for v in [rl[i], ru[i]] {
            if v.is_finite() {
                bnorm = bnorm.max(v.abs());
            }
        }
    }
    for &j in &col_orig {
        for v in [p.col_lower[j], p.col_upper[j]] {
            if v.is_finite() {
                bnorm = bnorm.max(v.abs());
            }
        }
    }
    let cnorm = col_orig.iter().fold(0.0f64, |a, &j| a.max(c_min[j].abs()));
    Ok(Model {
        bnorm,
        cnorm,
        n,
        m,
        nn,
        a,
        row_kind,
        slack_row,
        row_slack,
        c,
        b,
        lo,
        up,
        has_lo,
        has_up,
        col_orig,
        row_orig,
        colscale,
        rowscale,
        cscale,
        offset,
        fixed_x,
        decided,
    })
}
