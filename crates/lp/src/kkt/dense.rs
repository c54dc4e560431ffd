//! Dense backend for tiny problems and tests.

use super::{KktBackend, KktInfo, KktProblem, Regularization, RowKind, check_len};
use crate::error::KktError;

/// Dense backend. When every row is an inequality row it factors the normal matrix
/// `H = D_x + AᵀE⁻¹A` by Cholesky (the elimination the structured DSX backend uses);
/// otherwise it factors the augmented quasi-definite matrix by LDLᵀ without pivoting.
/// Small or wrong-signed pivots are regularised and counted. `O((n+m)²)` memory.
#[derive(Debug, Clone, Default)]
pub struct DenseBackend {
    reg: Regularization,
    n: usize,
    m: usize,
    a: Vec<f64>, // dense A, column-major m × n
    normal: bool,
    mat: Vec<f64>, // factor, column-major dim × dim
    diag: Vec<f64>,
    theta: Vec<f64>,
    work: Vec<f64>,
    analyzed: bool,
    factored: bool,
    info: KktInfo,
}

impl DenseBackend {
    /// A dense backend with the given regularisation.
    pub fn new(reg: Regularization) -> Self {
        Self {
            reg,
            ..Self::default()
        }
    }
}

impl KktBackend for DenseBackend {
    fn name(&self) -> &'static str {
        "dense"
    }

    fn analyze(&mut self, p: KktProblem<'_>) -> Result<(), KktError> {
        let (m, n) = (p.a.nrows, p.a.ncols);
        check_len("row_kind", p.row_kind.len(), m)?;
        self.n = n;
        self.m = m;
        self.a = vec![0.0; m * n];
        for j in 0..n {
            for q in p.a.col_ptr[j]..p.a.col_ptr[j + 1] {
                self.a[j * m + p.a.row_idx[q]] = p.a.values[q];
            }
        }
        self.normal = m > 0 && p.row_kind.iter().all(|k| *k == RowKind::Inequality);
        let dim = if self.normal { n } else { n + m };
        self.mat = vec![0.0; dim * dim];
        self.diag = vec![0.0; dim];
        self.theta = vec![0.0; m];
        self.work = vec![0.0; dim];
        self.info = KktInfo {
            name: "dense",
            dim,
            matrix_nnz: dim * (dim + 1) / 2,
            factor_nnz: dim * (dim + 1) / 2,
            ..KktInfo::default()
        };
        self.analyzed = true;
        Ok(())
    }

    fn factor(&mut self, var_diag: &[f64], row_diag: &[f64]) -> Result<(), KktError> {
        if !self.analyzed {
            return Err(KktError::NotReady {
                backend: "dense",
                missing: "analyze",
            });
        }
        check_len("var_diag", var_diag.len(), self.n)?;
        check_len("row_diag", row_diag.len(), self.m)?;
        let (mut dy, mut dx) = (self.reg.static_reg, self.reg.static_reg_var);
        let mut extra = 0;
        for attempt in 0..5 {
            match self.factor_with(var_diag, row_diag, dy, dx) {
                Ok(()) => {
                    self.info.regularized_pivots += extra;
                    self.info.total_regularized_pivots += extra;
                    return Ok(());
                }
                Err(KktError::BadPivot { .. }) if attempt < 4 => {
                    // escalate the static regularisation and retry
                    dy = (dy * 100.0).max(1e-10);
                    dx = (dx * 100.0).max(1e-12);
                    extra += 1;
                }
                Err(e) => return Err(e),
            }
        }
        Err(KktError::BadPivot { index: 0 })
    }

    fn solve(&mut self, rhs_x: &mut [f64], rhs_y: &mut [f64]) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotReady {
                backend: "dense",
                missing: "factor",
            });
        }
        check_len("rhs_x", rhs_x.len(), self.n)?;
        check_len("rhs_y", rhs_y.len(), self.m)?;
        let (n, m) = (self.n, self.m);
        let d = if self.normal { n } else { n + m };
        let w = &mut self.work;
        if self.normal {
            // (D + AᵀΘA) Δx = AᵀΘ r_y − r_x
            for j in 0..n {
                let mut s = -rhs_x[j];
                for i in 0..m {
                    s += self.a[j * m + i] * self.theta[i] * rhs_y[i];
                }
                w[j] = s;
            }
        } else {
            w[..n].copy_from_slice(rhs_x);
            w[n..].copy_from_slice(rhs_y);
        }
        let mat = &self.mat;
        for k in 0..d {
            let wk = w[k];
            for r in k + 1..d {
                w[r] -= mat[k * d + r] * wk;
            }
        }
        for k in 0..d {
            w[k] /= self.diag[k];
        }
        for k in (0..d).rev() {
            let mut s = w[k];
            for r in k + 1..d {
                s -= mat[k * d + r] * w[r];
            }
            w[k] = s;
        }
        if self.normal {
            rhs_x.copy_from_slice(&w[..n]);
            // Δy = Θ (r_y − A Δx)
            for i in 0..m {
                let mut s = rhs_y[i];
                for j in 0..n {
                    s -= self.a[j * m + i] * w[j];
                }
                rhs_y[i] = self.theta[i] * s;
            }
        } else {
            rhs_x.copy_from_slice(&w[..n]);
            rhs_y.copy_from_slice(&w[n..]);
        }
        self.info.solves += 1;
        Ok(())
    }

    fn info(&self) -> KktInfo {
        self.info.clone()
    }
}

impl DenseBackend {
    fn factor_with(
        &mut self,
        var_diag: &[f64],
        row_diag: &[f64],
        delta_y: f64,
        delta_x: f64,
    ) -> Result<(), KktError> {
        let (n, m) = (self.n, self.m);
        self.factored = false;
        let d = if self.normal { n } else { n + m };
        let mat = &mut self.mat;
        mat.fill(0.0);
        let mut neg_to = 0usize; // pivots before this index should be negative (augmented)
        if self.normal {
            for i in 0..m {
                if row_diag[i].is_nan() || row_diag[i] <= 0.0 {
                    return Err(KktError::NonFinite(
                        "row_diag (must be > 0 for inequality rows)",
                    ));
                }
                self.theta[i] = 1.0 / row_diag[i];
            }
            // H = D_x + δ + Aᵀ Θ A
            for j in 0..n {
                for k in 0..=j {
                    let mut s = 0.0;
                    for i in 0..m {
                        s += self.a[j * m + i] * self.theta[i] * self.a[k * m + i];
                    }
                    mat[k * d + j] = s;
                }
                mat[j * d + j] += var_diag[j] + delta_x;
            }
        } else {
            neg_to = n;
            for j in 0..n {
                mat[j * d + j] = -(var_diag[j] + delta_x);
                for i in 0..m {
                    mat[j * d + n + i] = self.a[j * m + i]; // lower triangle (row n+i, col j)
                }
            }
            for i in 0..m {
                mat[(n + i) * d + n + i] = row_diag[i] + delta_y;
            }
        }
        // in-place LDLᵀ on the lower triangle (column-major: entry (r, c) at c*d + r)
        let mut count = 0usize;
        for k in 0..d {
            let mut dk = mat[k * d + k];
            for p in 0..k {
                let l = mat[p * d + k];
                dk -= l * l * self.diag[p];
            }
            let want_neg = k < neg_to;
            if !dk.is_finite() {
                return Err(KktError::BadPivot { index: k });
            }
            if (want_neg && dk > -self.reg.dynamic_eps) || (!want_neg && dk < self.reg.dynamic_eps)
            {
                dk = if want_neg {
                    -self.reg.dynamic_delta
                } else {
                    self.reg.dynamic_delta
                };
                count += 1;
            }
            self.diag[k] = dk;
            for r in k + 1..d {
                let mut s = mat[k * d + r];
                for p in 0..k {
                    s -= mat[p * d + r] * mat[p * d + k] * self.diag[p];
                }
                mat[k * d + r] = s / dk;
                if !mat[k * d + r].is_finite() {
                    return Err(KktError::BadPivot { index: k });
                }
            }
        }
        self.info.regularized_pivots = count;
        self.info.total_regularized_pivots += count;
        self.info.factorizations += 1;
        self.factored = true;
        Ok(())
    }
}
