//! Sparse LDLᵀ of the quasi-definite augmented system with faer.
//!
//! The augmented matrix `[−(D_x+δ) Aᵀ; A E+δ]` is assembled once in `analyze` (AMD
//! ordering computed by faer on its pattern, then the matrix is stored pre-permuted in
//! the triangle faer's simplicial or supernodal kernel wants, with index maps from the
//! diagonal and from each entry of `A` into the value array). `factor` only rewrites the
//! diagonal and calls faer's numeric LDLᵀ with dynamic regularisation signs (−1 on
//! variables, +1 on rows), so pivots of the wrong sign or of magnitude below `eps` are
//! replaced by `±delta` and counted. Working on the augmented system rather than on
//! `A D⁻¹ Aᵀ` means a dense column of `A` does not produce a dense factor: AMD orders
//! it last.

use super::{KktBackend, KktInfo, KktProblem, Regularization, check_len};
use crate::error::KktError;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, SymbolicCholesky, SymbolicCholeskyRaw, SymmetricOrdering,
    factorize_symbolic_cholesky, simplicial, supernodal,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

/// Sparse LDLᵀ backend (faer), symbolic analysis once, numeric factorisation per iteration.
#[derive(Default)]
pub struct FaerLdlBackend {
    reg: Regularization,
    n: usize,
    m: usize,
    symbolic: Option<SymbolicCholesky<usize>>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    diag_pos: Vec<usize>, // original index k -> position of (k,k)
    perm_fwd: Vec<usize>, // new -> old
    signs: Vec<i8>,       // in permuted order
    l_values: Vec<f64>,
    mem: Option<MemBuffer>,
    work: Vec<f64>,
    factored: bool,
    info: KktInfo,
}

impl std::fmt::Debug for FaerLdlBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaerLdlBackend")
            .field("reg", &self.reg)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl FaerLdlBackend {
    /// A backend with the given regularisation.
    pub fn new(reg: Regularization) -> Self {
        Self {
            reg,
            ..Self::default()
        }
    }
}

enum Tag {
    Diag(usize),
    A(usize),
}

impl KktBackend for FaerLdlBackend {
    fn name(&self) -> &'static str {
        "faer-sparse-ldlt"
    }

    fn analyze(&mut self, p: KktProblem<'_>) -> Result<(), KktError> {
        let (m, n) = (p.a.nrows, p.a.ncols);
        check_len("row_kind", p.row_kind.len(), m)?;
        let dim = n + m;
        self.n = n;
        self.m = m;
        let a = p.a;
        // CSR of A: for each row the (col, csc position) pairs, columns ascending
        let mut rcount = vec![0usize; m + 1];
        for &i in a.row_idx {
            rcount[i + 1] += 1;
        }
        for i in 0..m {
            rcount[i + 1] += rcount[i];
        }
        let nnz = a.row_idx.len();
        let mut rcols = vec![(0usize, 0usize); nnz];
        let mut next = rcount.clone();
        for j in 0..n {
            for q in a.col_ptr[j]..a.col_ptr[j + 1] {
                let i = a.row_idx[q];
                rcols[next[i]] = (j, q);
                next[i] += 1;
            }
        }
        // upper pattern in the original ordering
        let mut cp = Vec::with_capacity(dim + 1);
        let mut ri = Vec::with_capacity(dim + nnz);
        cp.push(0);
        for j in 0..n {
            ri.push(j);
            cp.push(ri.len());
        }
        for i in 0..m {
            for &(j, _) in &rcols[rcount[i]..rcount[i + 1]] {
                ri.push(j);
            }
            ri.push(n + i);
            cp.push(ri.len());
        }
        let sym = SymbolicSparseColMatRef::new_checked(dim, dim, &cp, None, &ri);
        let first = factorize_symbolic_cholesky(
            sym,
            Side::Upper,
            SymmetricOrdering::Amd,
            CholeskySymbolicParams::default(),
        )
        .map_err(|e| KktError::Symbolic(format!("{e:?}")))?;
        let (fwd, inv): (Vec<usize>, Vec<usize>) = match first.perm() {
            Some(perm) => {
                let (f, i) = perm.arrays();
                (f.to_vec(), i.to_vec())
            }
            None => ((0..dim).collect(), (0..dim).collect()),
        };
        drop(first);
        // entries (row, col) of the permuted upper triangle with their tags
        let mut entries: Vec<(usize, usize, Tag)> = Vec::with_capacity(dim + nnz);
        for k in 0..dim {
            entries.push((inv[k], inv[k], Tag::Diag(k)));
        }
        for i in 0..m {
            for &(j, q) in &rcols[rcount[i]..rcount[i + 1]] {
                let (r, c) = (inv[j], inv[n + i]);
                entries.push((r.min(c), r.max(c), Tag::A(q)));
            }
        }
        let build =
            |entries: &mut Vec<(usize, usize, Tag)>, lower: bool| -> (Vec<usize>, Vec<usize>) {
                if lower {
                    for e in entries.iter_mut() {
                        let (r, c) = (e.0, e.1);
                        e.0 = c;
                        e.1 = r;
                    }
                }
                entries.sort_by_key(|e| (e.1, e.0));
                let mut cp = vec![0usize; dim + 1];
                for e in entries.iter() {
                    cp[e.1 + 1] += 1;
                }
                for c in 0..dim {
                    cp[c + 1] += cp[c];
                }
                let ri = entries.iter().map(|e| e.0).collect();
                (cp, ri)
            };
        let (pcp, pri) = build(&mut entries, false);
        let sym = SymbolicSparseColMatRef::new_checked(dim, dim, &pcp, None, &pri);
        let symbolic = factorize_symbolic_cholesky(
            sym,
            Side::Upper,
            SymmetricOrdering::Identity,
            CholeskySymbolicParams::default(),
        )
        .map_err(|e| KktError::Symbolic(format!("{e:?}")))?;
        let lower = matches!(symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_));
        let (pcp, pri) = if lower {
            build(&mut entries, true)
        } else {
            (pcp, pri)
        };
        let mut values = vec![0.0; pri.len()];
        let mut diag_pos = vec![0usize; dim];
        for (pos, e) in entries.iter().enumerate() {
            match e.2 {
                Tag::Diag(k) => diag_pos[k] = pos,
                Tag::A(q) => values[pos] = a.values[q],
            }
        }
        let par = Par::Seq;
        let (freq, sreq) = match symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(s) => (
                simplicial::factorize_simplicial_numeric_ldlt_scratch::<usize, f64>(dim),
                s.solve_in_place_scratch::<f64>(1),
            ),
            SymbolicCholeskyRaw::Supernodal(s) => (
                supernodal::factorize_supernodal_numeric_ldlt_scratch::<usize, f64>(
                    s,
                    par,
                    Default::default(),
                ),
                s.solve_in_place_scratch::<f64>(1, par),
            ),
        };
        let req = StackReq::any_of(&[freq, sreq]);
        self.mem =
            Some(MemBuffer::try_new(req).map_err(|_| KktError::Symbolic("out of memory".into()))?);
        self.l_values = vec![0.0; symbolic.len_val()];
        self.signs = fwd
            .iter()
            .map(|&old| if old < n { -1 } else { 1 })
            .collect();
        self.work = vec![0.0; dim];
        self.info = KktInfo {
            name: "faer-sparse-ldlt",
            dim,
            matrix_nnz: pri.len(),
            factor_nnz: symbolic.len_val(),
            ..KktInfo::default()
        };
        self.col_ptr = pcp;
        self.row_idx = pri;
        self.values = values;
        self.diag_pos = diag_pos;
        self.perm_fwd = fwd;
        self.symbolic = Some(symbolic);
        self.factored = false;
        Ok(())
    }

    fn factor(&mut self, var_diag: &[f64], row_diag: &[f64]) -> Result<(), KktError> {
        if self.symbolic.is_none() {
            return Err(KktError::NotReady {
                backend: "faer-sparse-ldlt",
                missing: "analyze",
            });
        }
        check_len("var_diag", var_diag.len(), self.n)?;
        check_len("row_diag", row_diag.len(), self.m)?;
        self.info.regularized_pivots = 0;
        let (mut delta, mut delta_x) = (self.reg.static_reg, self.reg.static_reg_var);
        let mut attempt = 0;
        loop {
            match self.factor_with(var_diag, row_diag, delta, delta_x) {
                Err(KktError::BadPivot { .. }) if attempt < 4 => {
                    // escalate the static regularisation and retry
                    delta = (delta * 100.0).max(1e-10);
                    delta_x = (delta_x * 100.0).max(1e-12);
                    attempt += 1;
                    self.info.regularized_pivots += 1;
                }
                r => return r,
            }
        }
    }
    fn solve(&mut self, rhs_x: &mut [f64], rhs_y: &mut [f64]) -> Result<(), KktError> {
        if !self.factored {
            return Err(KktError::NotReady {
                backend: "faer-sparse-ldlt",
                missing: "factor",
            });
        }
        check_len("rhs_x", rhs_x.len(), self.n)?;
        check_len("rhs_y", rhs_y.len(), self.m)?;
        let (Some(symbolic), Some(mem)) = (self.symbolic.as_ref(), self.mem.as_mut()) else {
            return Err(KktError::NotReady {
                backend: "faer-sparse-ldlt",
                missing: "analyze",
            });
        };
        let n = self.n;
        for (new, &old) in self.perm_fwd.iter().enumerate() {
            self.work[new] = if old < n { rhs_x[old] } else { rhs_y[old - n] };
        }
        let dim = self.work.len();
        let stack = MemStack::new(mem);
        let rhs = MatMut::from_column_major_slice_mut(&mut self.work, dim, 1);
        match symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(s) => simplicial::SimplicialLdltRef::new(
                s,
                &self.l_values,
            )
            .solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack),
            SymbolicCholeskyRaw::Supernodal(s) => supernodal::SupernodalLdltRef::new(
                s,
                &self.l_values,
            )
            .solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack),
        }
        for (new, &old) in self.perm_fwd.iter().enumerate() {
            let v = self.work[new];
            if old < n {
                rhs_x[old] = v;
            } else {
                rhs_y[old - n] = v;
            }
        }
        self.info.solves += 1;
        Ok(())
    }

    fn info(&self) -> KktInfo {
        self.info.clone()
    }
}

impl FaerLdlBackend {
    fn factor_with(
        &mut self,
        var_diag: &[f64],
        row_diag: &[f64],
        delta: f64,
        delta_x: f64,
    ) -> Result<(), KktError> {
        let Some(symbolic) = self.symbolic.as_ref() else {
            return Err(KktError::NotReady {
                backend: "faer-sparse-ldlt",
                missing: "analyze",
            });
        };
        for j in 0..self.n {
            if !var_diag[j].is_finite() {
                return Err(KktError::NonFinite("var_diag"));
            }
            self.values[self.diag_pos[j]] = -(var_diag[j] + delta_x);
        }
        for i in 0..self.m {
            if !row_diag[i].is_finite() {
                return Err(KktError::NonFinite("row_diag"));
            }
            self.values[self.diag_pos[self.n + i]] = row_diag[i] + delta;
        }
        let dim = self.n + self.m;
        let mat = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(dim, dim, &self.col_ptr, None, &self.row_idx),
            &self.values,
        );
        let reg = LdltRegularization {
            dynamic_regularization_signs: Some(&self.signs),
            dynamic_regularization_delta: self.reg.dynamic_delta,
            dynamic_regularization_epsilon: self.reg.dynamic_eps,
        };
        let Some(mem) = self.mem.as_mut() else {
            return Err(KktError::NotReady {
                backend: "faer-sparse-ldlt",
                missing: "analyze",
            });
        };
        let stack = MemStack::new(mem);
        let res = match symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(s) => simplicial::factorize_simplicial_numeric_ldlt(
                &mut self.l_values,
                mat,
                reg,
                s,
                stack,
            ),
            SymbolicCholeskyRaw::Supernodal(s) => supernodal::factorize_supernodal_numeric_ldlt(
                &mut self.l_values,
                mat,
                reg,
                s,
                Par::Seq,
                stack,
                Default::default(),
            ),
        };
        self.factored = false;
        let info = res.map_err(|e| match e {
            faer::linalg::cholesky::ldlt::factor::LdltError::ZeroPivot { index } => {
                KktError::BadPivot { index }
            }
        })?;
        // element growth can overflow without a bad pivot: treat as a failed pivot
        if let Some(index) = self.l_values.iter().position(|v| !v.is_finite()) {
            return Err(KktError::BadPivot { index });
        }
        self.info.regularized_pivots += info.dynamic_regularization_count;
        self.info.total_regularized_pivots += self.info.regularized_pivots;
        self.info.factorizations += 1;
        self.factored = true;
        Ok(())
    }
}
