//! [`DsxSystem::factor`]: forms `S`, then its Cholesky factor (Jacobi scaling, faer's `LDLᵀ`
//! with dynamic regularisation, conversion to `L`), and reports what it did ([`FactorInfo`]).

use faer::MatMut;
use faer::linalg::cholesky::ldlt::factor::{
    LdltError, LdltParams, LdltRegularization, cholesky_in_place,
};

use super::{DsxScalings, DsxSystem, NormalEquations, SchurKernel};
use crate::error::{Block, LinalgError, Result};

/// What [`DsxSystem::factor`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactorInfo {
    /// Pivots of `S` replaced by dynamic regularisation.
    pub regularized_pivots: usize,
    /// Diagonal entries `S_jj` that cancellation pushed below their exact lower bound
    /// `ω_j + δ` and that were reset to it.
    pub clamped_diagonals: usize,
    /// The kernel used for the Schur complement (feature space).
    pub kernel: SchurKernel,
    /// The normal-equations method that factored.
    pub method: NormalEquations,
    /// Flops of the Schur-complement accumulation (the dominant term).
    pub schur_flops: f64,
    /// Smallest and largest diagonal entry of `L` (Cholesky factor of `S`): their squared
    /// ratio estimates the condition of `S` from below. (Example space: `√|D_r|` of its `LDLᵀ`
    /// in the system's units; sparse method: NaN, not reported by faer.)
    pub min_pivot: f64,
    /// See `min_pivot`.
    pub max_pivot: f64,
}

impl DsxSystem<'_> {
    /// Numeric factorisation of `H + δI` for new scalings. No allocation.
    ///
    /// Work: `O(nnz)` for the per-example closed form, then the Schur update
    /// (`2 m (n+1)²` flops with [`SchurKernel::DenseGemm`], in two column bands of `S` on two
    /// threads when `threads ≥ 2`; `2 Σ|S_i|(|S_i|+1)` with
    /// [`SchurKernel::SparseScatter`], cache-blocked: chunks of examples × column bands of
    /// `S`, two threads on disjoint bands when `par` allows), then `(n+1)³/3` for the
    /// Cholesky of `S`. The sparse-scatter result does not depend on `par` (bit-identical).
    pub fn factor(&mut self, sc: &DsxScalings<'_>) -> Result<FactorInfo> {
        self.factored = false;
        self.check_scalings(sc)?;
        if self.method != NormalEquations::FeatureSpace {
            self.pair_pass(sc)?;
            let info = if self.method == NormalEquations::ExampleSpace {
                self.factor_example_space(sc)?
            } else {
                self.factor_sparse(sc)?
            };
            self.factored = true;
            return Ok(FactorInfo {
                regularized_pivots: info.regularized,
                clamped_diagonals: info.clamped,
                kernel: self.kernel,
                method: self.method,
                schur_flops: self.plan.estimate(self.method).flops.unwrap_or(f64::NAN),
                min_pivot: info.min_pivot,
                max_pivot: info.max_pivot,
            });
        }
        let clamped = self.form_schur(sc)?;
        let n = self.n;
        let n1 = n + 1;
        let kernel = self.kernel;
        // Dense factorisation of S (order n + 1): Jacobi-scaled to a unit diagonal, then faer's
        // LDLᵀ with dynamic regularisation, converted to the Cholesky factor of S.
        // The scaling makes the regularisation threshold relative to each column's own diagonal:
        // a pivot is replaced only when cancellation has removed all but a fraction ε of it.
        // (Relative to the largest diagonal, as before, near the optimum of tiny sparse fits it
        // replaced hundreds of legitimately small pivots — features that never occur, whose
        // `S_jj` is their box scaling alone, 1e-9 against 1e7.) LDLᵀ and not faer's LLT: faer
        // 0.24's regularised LLT leaves the unregularised pivot divided by the regularised root
        // on the diagonal and goes on with it (NaN pivots downstream); its LDLᵀ keeps `D` apart.
        // A diagonal entry ≤ 0 (a feature that never occurs, with no box term) has no scale of
        // its own: it takes the largest diagonal's, so with regularisation it becomes
        // `delta · max_j S_jj`; without, it is an error.
        let mut maxdiag = 0.0f64;
        for j in 0..n1 {
            let d = self.s[j * n1 + j];
            if !d.is_finite() || (d <= 0.0 && self.settings.dynamic_regularization.is_none()) {
                return Err(LinalgError::NotPositiveDefinite {
                    block: Block::Schur,
                    pivot: j,
                    value: d,
                });
            }
            maxdiag = maxdiag.max(d);
        }
        let fallback = if maxdiag > 0.0 { maxdiag } else { 1.0 };
        for j in 0..n1 {
            let d = self.s[j * n1 + j];
            self.jacobi[j] = 1.0 / if d > 0.0 { d } else { fallback }.sqrt();
        }
        for j in 0..n1 {
            let rj = self.jacobi[j];
            let col = &mut self.s[j * n1..(j + 1) * n1];
            for (e, &ri) in col[j + 1..].iter_mut().zip(&self.jacobi[j + 1..]) {
                *e *= ri * rj;
            }
            col[j] *= rj * rj;
        }
        let reg = match self.settings.dynamic_regularization {
            Some(d) => LdltRegularization {
                dynamic_regularization_signs: Some(&self.signs),
                dynamic_regularization_delta: d.delta,
                dynamic_regularization_epsilon: d.epsilon,
            },
            None => LdltRegularization {
                dynamic_regularization_signs: None,
                dynamic_regularization_delta: 0.0,
                dynamic_regularization_epsilon: 0.0,
            },
        };
        let smat = MatMut::from_column_major_slice_mut(&mut self.s, n1, n1);
        let stack = self.mem.stack();
        let info = cholesky_in_place(
            smat,
            reg,
            self.settings.par,
            stack,
            <faer::Spec<LdltParams, f64>>::default(),
        )
        .map_err(
            |LdltError::ZeroPivot { index }| LinalgError::NotPositiveDefinite {
                block: Block::Schur,
                pivot: index,
                value: 0.0,
            },
        )?;
        // S = J⁻¹ L̂ D L̂ᵀ J⁻¹ (J = diag(jacobi)): the Cholesky factor is L = J⁻¹ L̂ D^{1/2}.
        // Without regularisation a pivot D_j ≤ 0 (S not positive definite) is an error, reported
        // in S's units (`D_j S_jj`). `L_jj = √(D_j S_jj)` is then positive and finite.
        let mut min_pivot = f64::INFINITY;
        let mut max_pivot = 0.0f64;
        for j in 0..n1 {
            let dj = self.s[j * n1 + j];
            if !(dj > 0.0 && dj.is_finite()) {
                return Err(LinalgError::NotPositiveDefinite {
                    block: Block::Schur,
                    pivot: j,
                    value: dj / (self.jacobi[j] * self.jacobi[j]),
                });
            }
            let sq = dj.sqrt();
            let col = &mut self.s[j * n1..(j + 1) * n1];
            col[j] = sq / self.jacobi[j];
            min_pivot = min_pivot.min(col[j]);
            max_pivot = max_pivot.max(col[j]);
            for (e, &ri) in col[j + 1..].iter_mut().zip(&self.jacobi[j + 1..]) {
                *e *= sq / ri;
            }
        }
        self.factored = true;
        let schur_flops = match kernel {
            SchurKernel::SparseScatter => 2.0 * (self.sum_k2 + self.nnz() as f64),
            _ => 2.0 * (self.m as f64) * (n * n1) as f64,
        };
        Ok(FactorInfo {
            regularized_pivots: info.dynamic_regularization_count,
            clamped_diagonals: clamped,
            kernel,
            method: NormalEquations::FeatureSpace,
            schur_flops,
            min_pivot,
            max_pivot,
        })
    }
}
