//! Arrow matrices (diagonal plus a few dense border rows/columns), their Cholesky factorisation
//! without fill-in, and the arrow-plus-rank-one solve by Sherman–Morrison–Woodbury
//! (DSX eqs. (19)–(21)).
//!
//! An arrow matrix of order `nd + k` is
//!
//! ```text
//!     A = [ diag(d)   B ]      d ∈ R^nd,  B ∈ R^{nd×k},  C ∈ R^{k×k} symmetric
//!         [   Bᵀ      C ]
//! ```
//!
//! Its Cholesky factor has the same pattern (no fill-in):
//!
//! ```text
//!     L = [ diag(√d)      0  ]     L21ᵀ = diag(d)^{-1/2} B,
//!         [   L21       L22 ]     L22 L22ᵀ = C − L21 L21ᵀ   (dense k×k, faer Cholesky)
//! ```
//!
//! Flops: factor `nd` square roots + `nd·k` divisions + `nd·k(k+1)` for the corner update +
//! `k³/3` (for `k = 1`: `≈ 3 nd`, as in DSX Appendix B); solve `4·nd·k + 2·nd + 2k²`
//! (`≈ 6 nd` for `k = 1`).

// `!(x > 0.0)` is used on purpose: it is also true for NaN, which must be rejected.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use faer::linalg::cholesky::llt::factor::{LltParams, LltRegularization, cholesky_in_place};
use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::error::{Block, LinalgError, Result, check_len};

/// A symmetric arrow matrix `[diag(d) B; Bᵀ C]`: a diagonal of order `nd` plus `k` dense border
/// rows/columns (`B`, `nd × k`) and a dense symmetric corner `C` (`k × k`, lower triangle read).
///
/// The first `nd` coordinates are the diagonal part, the last `k` the border.
#[derive(Debug, Clone)]
pub struct ArrowMatrix {
    diag: Vec<f64>,
    border: Mat<f64>,
    corner: Mat<f64>,
}

impl ArrowMatrix {
    /// An all-zero arrow matrix with `nd` diagonal and `k` border coordinates.
    pub fn zeros(nd: usize, k: usize) -> Self {
        Self {
            diag: vec![0.0; nd],
            border: Mat::zeros(nd, k),
            corner: Mat::zeros(k, k),
        }
    }

    /// Builds an arrow matrix from its parts; checks shapes and finiteness.
    pub fn try_new(diag: Vec<f64>, border: Mat<f64>, corner: Mat<f64>) -> Result<Self> {
        let nd = diag.len();
        let k = corner.nrows();
        check_len("border.nrows", nd, border.nrows())?;
        check_len("border.ncols", k, border.ncols())?;
        check_len("corner.ncols", k, corner.ncols())?;
        crate::error::check_finite("diag", &diag)?;
        for j in 0..k {
            for i in 0..nd {
                if !border[(i, j)].is_finite() {
                    return Err(LinalgError::InvalidValue {
                        name: "border",
                        index: i + nd * j,
                        value: border[(i, j)],
                        reason: "must be finite",
                    });
                }
            }
            for i in 0..k {
                if !corner[(i, j)].is_finite() {
                    return Err(LinalgError::InvalidValue {
                        name: "corner",
                        index: i + k * j,
                        value: corner[(i, j)],
                        reason: "must be finite",
                    });
                }
            }
        }
        Ok(Self {
            diag,
            border,
            corner,
        })
    }

    /// Order of the matrix, `nd + k`.
    pub fn dim(&self) -> usize {
        self.diag.len() + self.corner.nrows()
    }

    /// Number of diagonal coordinates `nd`.
    pub fn n_diag(&self) -> usize {
        self.diag.len()
    }

    /// Number of border coordinates `k`.
    pub fn n_border(&self) -> usize {
        self.corner.nrows()
    }

    /// The diagonal `d`.
    pub fn diag(&self) -> &[f64] {
        &self.diag
    }

    /// The diagonal `d`, mutable.
    pub fn diag_mut(&mut self) -> &mut [f64] {
        &mut self.diag
    }

    /// The border `B` (`nd × k`).
    pub fn border(&self) -> MatRef<'_, f64> {
        self.border.as_ref()
    }

    /// The border `B`, mutable.
    pub fn border_mut(&mut self) -> MatMut<'_, f64> {
        self.border.as_mut()
    }

    /// The corner `C` (`k × k`; only the lower triangle is read by the factorisation).
    pub fn corner(&self) -> MatRef<'_, f64> {
        self.corner.as_ref()
    }

    /// The corner `C`, mutable.
    pub fn corner_mut(&mut self) -> MatMut<'_, f64> {
        self.corner.as_mut()
    }

    /// `out = A x` in `O(nd·k + k²)` (reads the lower triangle of `C`).
    pub fn apply(&self, x: &[f64], out: &mut [f64]) {
        let nd = self.n_diag();
        let k = self.n_border();
        assert_eq!(x.len(), nd + k, "x has the wrong length");
        assert_eq!(out.len(), nd + k, "out has the wrong length");
        let (xd, xb) = x.split_at(nd);
        let (od, ob) = out.split_at_mut(nd);
        for i in 0..nd {
            od[i] = self.diag[i] * xd[i];
        }
        for c in 0..k {
            let col = self.border.col(c);
            let mut acc = 0.0;
            for i in 0..nd {
                od[i] += col[i] * xb[c];
                acc += col[i] * xd[i];
            }
            ob[c] = acc;
        }
        for r in 0..k {
            for c in 0..k {
                let v = if r >= c {
                    self.corner[(r, c)]
                } else {
                    self.corner[(c, r)]
                };
                ob[r] += v * xb[c];
            }
        }
    }

    /// The dense matrix (for tests and debugging; `O((nd+k)²)` memory).
    pub fn to_dense(&self) -> Mat<f64> {
        let nd = self.n_diag();
        let k = self.n_border();
        let mut a = Mat::zeros(nd + k, nd + k);
        for i in 0..nd {
            a[(i, i)] = self.diag[i];
            for c in 0..k {
                a[(i, nd + c)] = self.border[(i, c)];
                a[(nd + c, i)] = self.border[(i, c)];
            }
        }
        for r in 0..k {
            for c in 0..=r {
                a[(nd + r, nd + c)] = self.corner[(r, c)];
                a[(nd + c, nd + r)] = self.corner[(r, c)];
            }
        }
        a
    }
}

/// Cholesky factor `L` of an [`ArrowMatrix`], with the same sparsity pattern (no fill-in).
///
/// All storage and faer scratch are sized in [`ArrowCholesky::new`]; [`ArrowCholesky::factor`]
/// and [`ArrowCholesky::solve_in_place`] do not allocate.
#[derive(Debug)]
pub struct ArrowCholesky {
    sqrt_d: Vec<f64>,
    /// `L21ᵀ = diag(d)^{-1/2} B`, `nd × k`.
    l21t: Mat<f64>,
    /// Lower triangle: `L22`.
    l22: Mat<f64>,
    mem: crate::error::Scratch,
    factored: bool,
    reg_count: usize,
}

impl ArrowCholesky {
    /// Allocates a factor for arrow matrices with `nd` diagonal and `k` border coordinates.
    pub fn new(nd: usize, k: usize) -> Self {
        let req = faer::linalg::cholesky::llt::factor::cholesky_in_place_scratch::<f64>(
            k,
            Par::Seq,
            Default::default(),
        );
        Self {
            sqrt_d: vec![0.0; nd],
            l21t: Mat::zeros(nd, k),
            l22: Mat::zeros(k, k),
            mem: crate::error::Scratch::new(req),
            factored: false,
            reg_count: 0,
        }
    }

    /// Allocates and factors `a`.
    pub fn try_factor(a: &ArrowMatrix) -> Result<Self> {
        let mut f = Self::new(a.n_diag(), a.n_border());
        f.factor(a)?;
        Ok(f)
    }

    /// Order of the factored matrix.
    pub fn dim(&self) -> usize {
        self.sqrt_d.len() + self.l22.nrows()
    }

    /// Number of corner pivots that faer's dynamic regularisation replaced (always 0 unless
    /// [`ArrowCholesky::factor_regularized`] was used).
    pub fn regularized_pivots(&self) -> usize {
        self.reg_count
    }

    /// Factors `a` in place of the previous factor (no allocation).
    ///
    /// Errors with [`LinalgError::NotPositiveDefinite`] if a diagonal entry or a corner pivot
    /// is not positive.
    pub fn factor(&mut self, a: &ArrowMatrix) -> Result<()> {
        self.factor_regularized(a, LltRegularization::default())
    }

    /// As [`ArrowCholesky::factor`], with faer's dynamic regularisation of the dense corner
    /// (pivots below `epsilon` are replaced by `delta`; counted in
    /// [`ArrowCholesky::regularized_pivots`]).
    pub fn factor_regularized(
        &mut self,
        a: &ArrowMatrix,
        reg: LltRegularization<f64>,
    ) -> Result<()> {
        let nd = self.sqrt_d.len();
        let k = self.l22.nrows();
        assert_eq!(a.n_diag(), nd, "arrow matrix has the wrong diagonal size");
        assert_eq!(a.n_border(), k, "arrow matrix has the wrong border size");
        self.factored = false;
        for i in 0..nd {
            let di = a.diag[i];
            // `!(di > 0)` also catches NaN.
            if !(di > 0.0 && di.is_finite()) {
                return Err(LinalgError::NotPositiveDefinite {
                    block: Block::ArrowDiagonal,
                    pivot: i,
                    value: di,
                });
            }
            self.sqrt_d[i] = di.sqrt();
        }
        for c in 0..k {
            let src = a.border.col(c);
            let mut dst = self.l21t.col_mut(c);
            for i in 0..nd {
                dst[i] = src[i] / self.sqrt_d[i];
            }
        }
        self.l22.copy_from(&a.corner);
        // L22 L22ᵀ = C − L21 L21ᵀ: BLAS-3 update of the lower triangle.
        tri_matmul(
            self.l22.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            self.l21t.transpose(),
            BlockStructure::Rectangular,
            self.l21t.as_ref(),
            BlockStructure::Rectangular,
            -1.0,
            Par::Seq,
        );
        let stack = self.mem.stack();
        match cholesky_in_place(
            self.l22.as_mut(),
            reg,
            Par::Seq,
            stack,
            <faer::Spec<LltParams, f64>>::default(),
        ) {
            Ok(info) => self.reg_count = info.dynamic_regularization_count,
            Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => {
                return Err(LinalgError::NotPositiveDefinite {
                    block: Block::ArrowCorner,
                    pivot: index,
                    value: self.l22[(index, index)],
                });
            }
        }
        for i in 0..k {
            let p = self.l22[(i, i)];
            if !(p > 0.0 && p.is_finite()) {
                return Err(LinalgError::NotPositiveDefinite {
                    block: Block::ArrowCorner,
                    pivot: i,
                    value: p,
                });
            }
        }
        self.factored = true;
        Ok(())
    }

    /// Solves `A x = rhs` in place (`rhs` becomes `x`), `O(nd·k + k²)`, no allocation.
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        if !self.factored {
            return Err(LinalgError::NotFactored);
        }
        let nd = self.sqrt_d.len();
        let k = self.l22.nrows();
        check_len("rhs", nd + k, rhs.len())?;
        let (r1, r2) = rhs.split_at_mut(nd);
        // Forward: y1 = D^{-1/2} r1; y2 = L22⁻¹ (r2 − L21 y1).
        for i in 0..nd {
            r1[i] /= self.sqrt_d[i];
        }
        for c in 0..k {
            let col = self.l21t.col(c);
            let mut acc = 0.0;
            for i in 0..nd {
                acc += col[i] * r1[i];
            }
            r2[c] -= acc;
        }
        if k > 0 {
            let l22 = self.l22.as_ref();
            let r2m = MatMut::from_column_major_slice_mut(r2, k, 1);
            solve_lower_triangular_in_place(l22, r2m, Par::Seq);
            let r2m = MatMut::from_column_major_slice_mut(r2, k, 1);
            solve_upper_triangular_in_place(l22.transpose(), r2m, Par::Seq);
        }
        // Backward: x1 = D^{-1/2} (y1 − L21ᵀ x2).
        for c in 0..k {
            let col = self.l21t.col(c);
            let xc = r2[c];
            for i in 0..nd {
                r1[i] -= col[i] * xc;
            }
        }
        for i in 0..nd {
            r1[i] /= self.sqrt_d[i];
        }
        Ok(())
    }
}

/// `M = A + θ u uᵀ` with `A` an [`ArrowMatrix`] and `θ` a scalar, solved by
/// Sherman–Morrison–Woodbury on the arrow factor (DSX eqs. (19)–(21)).
///
/// Factor: `A = L Lᵀ` (no fill-in), `ū = A⁻¹u` (DSX eq. (20), right), `den = 1 + θ uᵀū`.
/// Solve: `z̄ = A⁻¹r` (eq. (20), left), `z = z̄ − θ (uᵀz̄)/den · ū` (eq. (21)).
/// `M` is positive definite iff `A` is and `den > 0`; otherwise a typed error is returned.
#[derive(Debug)]
pub struct ArrowPlusRankOne {
    chol: ArrowCholesky,
    u: Vec<f64>,
    ubar: Vec<f64>,
    theta: f64,
    den: f64,
}

impl ArrowPlusRankOne {
    /// Factors `A + θ u uᵀ`.
    pub fn try_factor(a: &ArrowMatrix, u: &[f64], theta: f64) -> Result<Self> {
        check_len("u", a.dim(), u.len())?;
        crate::error::check_finite("u", u)?;
        if !theta.is_finite() {
            return Err(LinalgError::InvalidValue {
                name: "theta",
                index: 0,
                value: theta,
                reason: "must be finite",
            });
        }
        let chol = ArrowCholesky::try_factor(a)?;
        let mut ubar = u.to_vec();
        chol.solve_in_place(&mut ubar)?; // DSX eq. (20), right
        let utu: f64 = u.iter().zip(&ubar).map(|(a, b)| a * b).sum();
        let den = 1.0 + theta * utu;
        if !(den > 0.0 && den.is_finite()) {
            return Err(LinalgError::NotPositiveDefinite {
                block: Block::RankOneDenominator,
                pivot: 0,
                value: den,
            });
        }
        Ok(Self {
            chol,
            u: u.to_vec(),
            ubar,
            theta,
            den,
        })
    }

    /// The Sherman–Morrison denominator `1 + θ uᵀA⁻¹u`.
    pub fn denominator(&self) -> f64 {
        self.den
    }

    /// Solves `(A + θ u uᵀ) z = rhs` in place, `O(nd·k + k²)`, no allocation.
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        self.chol.solve_in_place(rhs)?; // DSX eq. (20), left: z̄ = A⁻¹ r
        let uz: f64 = self.u.iter().zip(rhs.iter()).map(|(a, b)| a * b).sum();
        let coef = self.theta * uz / self.den; // DSX eq. (21)
        for (z, ub) in rhs.iter_mut().zip(&self.ubar) {
            *z -= coef * ub;
        }
        Ok(())
    }
}
