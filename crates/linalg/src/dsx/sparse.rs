//! The sparse method ([`NormalEquations::SparseLdl`](super::NormalEquations::SparseLdl)): the
//! whole quasi-definite system of `augmented` (order `n + 2m + 1`) in faer's supernodal `LDLᵀ`,
//! in an approximate minimum degree order of everything but `b`, with `b` last (its row is
//! dense).

use faer::Par;
use faer::sparse::linalg::cholesky::{
    LdltRef, SymbolicCholesky, SymmetricOrdering, factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{MatMut, Side};

use super::augmented::{AugmentedInfo, Couplings, regularization};
use super::{DsxScalings, DsxSystem};
use crate::error::{Block, LinalgError, Result, Scratch};

/// The sparse factorisation of the whole quasi-definite system (order `n + 2m + 1`: `w_j` at
/// `j`, `λ_i` at `n + 2i`, `μ′_i` at `n + 2i + 1`, `b` at `n + 2m`), lower triangle in CSC.
#[derive(Debug)]
pub(super) struct SparseLdl {
    dim: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    jacobi: Vec<f64>,
    signs: Vec<i8>,
    mem: Scratch,
    rhs: Vec<f64>,
}

/// The lower-triangle CSC pattern of the sparse system (see [`SparseLdl`]).
fn sparse_pattern(m: usize, n: usize, c: &Couplings) -> (Vec<usize>, Vec<usize>) {
    let dim = n + 2 * m + 1;
    let nnz = c.csc_pos.len();
    let mut col_ptr = Vec::with_capacity(dim + 1);
    let mut row_idx = Vec::with_capacity(dim + 2 * nnz + 2 * m);
    col_ptr.push(0);
    for j in 0..n {
        row_idx.push(j);
        for (i, _) in c.column(j) {
            row_idx.push(n + 2 * i);
            row_idx.push(n + 2 * i + 1);
        }
        col_ptr.push(row_idx.len());
    }
    for i in 0..m {
        row_idx.extend([n + 2 * i, n + 2 * i + 1]);
        col_ptr.push(row_idx.len());
        row_idx.extend([n + 2 * i + 1, n + 2 * m]);
        col_ptr.push(row_idx.len());
    }
    row_idx.push(n + 2 * m);
    col_ptr.push(row_idx.len());
    (col_ptr, row_idx)
}

/// The sparse method's pattern and symbolic factorisation ([`sparse_analysis`]).
#[derive(Debug)]
pub(super) struct SparseAnalysis {
    /// The lower triangle's CSC pattern.
    pub(super) col_ptr: Vec<usize>,
    pub(super) row_idx: Vec<usize>,
    pub(super) symbolic: SymbolicCholesky<usize>,
    /// Multiply-adds of one numeric factorisation.
    pub(super) flops: f64,
}

/// The symbolic analysis of the sparse method: an approximate minimum degree order of the
/// system without `b`, then `b` last, and faer's symbolic Cholesky in that order.
pub(super) fn sparse_analysis(m: usize, n: usize, c: &Couplings) -> Result<SparseAnalysis> {
    use faer::sparse::linalg::amd;
    let dim = n + 2 * m + 1;
    let (col_ptr, row_idx) = sparse_pattern(m, n, c);
    // the pattern without b (its row is dense: every μ′_i), for the ordering
    let mut cp = Vec::with_capacity(dim);
    let mut ri = Vec::with_capacity(row_idx.len());
    cp.push(0);
    for col in 0..dim - 1 {
        ri.extend(
            row_idx[col_ptr[col]..col_ptr[col + 1]]
                .iter()
                .filter(|&&r| r < dim - 1),
        );
        cp.push(ri.len());
    }
    let nob = SymbolicSparseColMatRef::new_checked(dim - 1, dim - 1, &cp, None, &ri);
    let mut fwd = vec![0usize; dim];
    let mut inv = vec![0usize; dim];
    let req = amd::order_scratch::<usize>(dim - 1, ri.len());
    let mut mem = faer::dyn_stack::MemBuffer::try_new(req).map_err(|_| oom())?;
    let flops = amd::order(
        &mut fwd[..dim - 1],
        &mut inv[..dim - 1],
        nob,
        amd::Control::default(),
        faer::dyn_stack::MemStack::new(&mut mem),
    )
    .map_err(|_| oom())?;
    drop((mem, cp, ri));
    fwd[dim - 1] = dim - 1;
    inv[dim - 1] = dim - 1;
    // b last adds its column's entries below every μ′_i pivot: at most (entries of L's column)
    // per μ′, bounded by the dense row's m entries times the factor's height; counted exactly by
    // the symbolic factorisation below
    let _ = flops;
    let perm = faer::perm::PermRef::new_checked(&fwd, &inv, dim);
    let a = SymbolicSparseColMatRef::new_checked(dim, dim, &col_ptr, None, &row_idx);
    let symbolic = factorize_symbolic_cholesky(
        a,
        Side::Lower,
        SymmetricOrdering::Custom(perm),
        Default::default(),
    )
    .map_err(|_| oom())?;
    let flops = symbolic_flops(&symbolic);
    Ok(SparseAnalysis {
        col_ptr,
        row_idx,
        symbolic,
        flops,
    })
}

/// Multiply-adds of a numeric factorisation with `symbolic`: `Σ_c count_c (count_c + 1)/2`
/// over the factor's column counts (faer reports the counts through the supernodes or the
/// simplicial column pointers).
fn symbolic_flops(symbolic: &SymbolicCholesky<usize>) -> f64 {
    use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
    match symbolic.raw() {
        SymbolicCholeskyRaw::Simplicial(s) => {
            let cp = s.col_ptr();
            cp.windows(2)
                .map(|w| {
                    let c = (w[1] - w[0]) as f64;
                    c * (c + 1.0) / 2.0
                })
                .sum()
        }
        SymbolicCholeskyRaw::Supernodal(s) => (0..s.n_supernodes())
            .map(|k| {
                let width = s.supernode_end()[k] - s.supernode_begin()[k];
                let below = s.supernode(k).pattern().len() as f64;
                // each of the `width` columns has `width − t + below` entries
                (0..width)
                    .map(|t| {
                        let c = (width - t) as f64 + below;
                        c * (c + 1.0) / 2.0
                    })
                    .sum::<f64>()
            })
            .sum(),
    }
}

fn oom() -> LinalgError {
    LinalgError::InvalidValue {
        name: "normal_equations",
        index: 0,
        value: f64::NAN,
        reason: "the sparse analysis could not allocate its workspace",
    }
}

impl SparseLdl {
    pub(super) fn new(m: usize, n: usize, analysis: SparseAnalysis) -> Self {
        let SparseAnalysis {
            col_ptr,
            row_idx,
            symbolic,
            ..
        } = analysis;
        let dim = n + 2 * m + 1;
        let req = faer::dyn_stack::StackReq::any_of(&[
            symbolic.factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        let signs = (0..dim)
            .map(|r| {
                if r >= n && r < dim - 1 && (r - n) % 2 == 1 {
                    -1
                } else {
                    1
                }
            })
            .collect();
        Self {
            dim,
            values: vec![0.0; row_idx.len()],
            col_ptr,
            row_idx,
            l_values: vec![0.0; symbolic.len_val()],
            symbolic,
            jacobi: vec![0.0; dim],
            signs,
            mem: Scratch::new(req),
            rhs: vec![0.0; dim],
        }
    }

    /// faer's workspace for the numeric factorisation and a solve of `symbolic` (bytes).
    pub(super) fn scratch_bytes(symbolic: &SymbolicCholesky<usize>) -> u64 {
        let req = faer::dyn_stack::StackReq::any_of(&[
            symbolic.factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        req.size_bytes() as u64
    }
}

impl DsxSystem<'_> {
    /// Factors the sparse system (after [`DsxSystem::pair_pass`]).
    pub(super) fn factor_sparse(&mut self, sc: &DsxScalings<'_>) -> Result<AugmentedInfo> {
        let (m, n) = (self.m, self.n);
        let delta = self.settings.static_regularization;
        let c = self.couplings.as_ref().expect("quasi-definite method");
        let sp = self.sparse.as_mut().expect("sparse method");
        let dim = sp.dim;
        // the Jacobi scaling: Ω′_j, s_i, 1 for μ′_i, S_bb for b
        for j in 0..n {
            sp.jacobi[j] = 1.0 / c.omega[j].sqrt();
        }
        for i in 0..m {
            sp.jacobi[n + 2 * i] = 1.0 / self.ex[i].s.sqrt();
            sp.jacobi[n + 2 * i + 1] = 1.0;
        }
        sp.jacobi[dim - 1] = 1.0 / c.sbb.sqrt();
        let jac = &sp.jacobi;
        let vals = &mut sp.values;
        for j in 0..n {
            let mut k = sp.col_ptr[j];
            vals[k] = c.omega[j] * jac[j] * jac[j];
            k += 1;
            for (i, q) in c.column(j) {
                vals[k] = c.r1[q] * jac[j] * jac[n + 2 * i];
                vals[k + 1] = -c.g2[q] * jac[j];
                k += 2;
            }
        }
        for i in 0..m {
            let e = &self.ex[i];
            let (l, u) = (n + 2 * i, n + 2 * i + 1);
            let kl = sp.col_ptr[l];
            vals[kl] = 1.0;
            vals[kl + 1] = -e.tz * jac[l];
            let ku = sp.col_ptr[u];
            vals[ku] = -1.0;
            vals[ku + 1] = -self.y[i] * e.sz * jac[dim - 1];
        }
        vals[sp.col_ptr[dim - 1]] = (sc.b_diag + delta) * jac[dim - 1] * jac[dim - 1];
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(dim, dim, &sp.col_ptr, None, &sp.row_idx),
            &sp.values[..],
        );
        let reg = regularization(&self.settings, &sp.signs);
        sp.symbolic
            .factorize_numeric_ldlt(
                &mut sp.l_values,
                a,
                Side::Lower,
                reg,
                Par::Seq,
                sp.mem.stack(),
                Default::default(),
            )
            .map_err(|e| LinalgError::NotPositiveDefinite {
                block: Block::SparseLdl,
                pivot: match e {
                    faer::linalg::cholesky::ldlt::factor::LdltError::ZeroPivot { index } => index,
                },
                value: 0.0,
            })?;
        // faer's sparse wrapper does not return its count: a replaced pivot is ±δ exactly
        let reg_delta = self.settings.dynamic_regularization.map(|d| d.delta);
        let (mut regularized, mut min_pivot, mut max_pivot) = (0, f64::INFINITY, 0.0f64);
        let perm = sp.symbolic.perm().map(|p| p.arrays().0);
        for_each_pivot(&sp.symbolic, &sp.l_values, |k, d| {
            let r = perm.map_or(k, |f| f[k]);
            if reg_delta == Some(d.abs()) {
                regularized += 1;
            }
            let p = d.abs().sqrt() / sp.jacobi[r];
            min_pivot = min_pivot.min(p);
            max_pivot = max_pivot.max(p);
        });
        Ok(AugmentedInfo {
            regularized,
            clamped: 0,
            min_pivot,
            max_pivot,
        })
    }

    /// Solves `S z = r` (`rb`: `(r_w, r_b)` in, `(z_w, z_b)` out) with the sparse factor.
    pub(super) fn solve_sparse(&mut self, rb: &mut [f64]) {
        let n = self.n;
        let sp = self.sparse.as_mut().expect("sparse method");
        let dim = sp.dim;
        let rhs = &mut sp.rhs;
        for j in 0..n {
            rhs[j] = rb[j] * sp.jacobi[j];
        }
        rhs[n..dim - 1].fill(0.0);
        rhs[dim - 1] = rb[n] * sp.jacobi[dim - 1];
        LdltRef::new(&sp.symbolic, &sp.l_values).solve_in_place_with_conj(
            faer::Conj::No,
            MatMut::from_column_major_slice_mut(rhs, dim, 1),
            Par::Seq,
            sp.mem.stack(),
        );
        for j in 0..n {
            rb[j] = rhs[j] * sp.jacobi[j];
        }
        rb[n] = rhs[dim - 1] * sp.jacobi[dim - 1];
    }
}

/// Calls `f(k, D_k)` for every pivot of a numeric sparse `LDLᵀ` (`k` in the factor's order).
fn for_each_pivot(
    symbolic: &SymbolicCholesky<usize>,
    values: &[f64],
    mut f: impl FnMut(usize, f64),
) {
    use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
    use faer::sparse::linalg::cholesky::supernodal::SupernodalLdltRef;
    match symbolic.raw() {
        SymbolicCholeskyRaw::Simplicial(s) => {
            let cp = s.col_ptr();
            for k in 0..cp.len() - 1 {
                f(k, values[cp[k]]);
            }
        }
        SymbolicCholeskyRaw::Supernodal(s) => {
            let ldl = SupernodalLdltRef::new(s, values);
            for k in 0..s.n_supernodes() {
                let (start, end) = (s.supernode_begin()[k], s.supernode_end()[k]);
                let val = ldl.supernode(k).val();
                for t in 0..end - start {
                    f(start + t, val[(t, t)]);
                }
            }
        }
    }
}
