//! LP (4) of Dekel, Shamir & Xiao in natural inequality form, with the sparse reduction of
//! `dsx-normal-equations.md`.
//!
//! Variables, in this order (the order `bulwark_linalg::DsxSystem` expects):
//! `w_1..w_n` (box `[−C, C]`), `b` (free), then for each example `i`:
//! `α_ij` for `j ∈ S_i` (≥ 0, increasing `j`), `λ_i` (≥ 0), `ξ_i` (≥ 0).
//!
//! Rows, example by example: `a_i` then `b_ij` for `j ∈ S_i`:
//!
//! ```text
//! a_i :  P_i λ_i − Σ_{j∈S_i} α_ij + y_i b + ξ_i ≥ V0_i / P        (DSX eq. (4), first row)
//! b_ij:  y_i x_ij w_j − v_j λ_i + α_ij ≥ v_j / P                   (DSX eq. (4), second row)
//! ```
//!
//! with `S_i` the support of `x_i`, `V0_i = Σ_{j∉S_i} v_j` and `P_i = P − V0_i`. For `j ∉ S_i`
//! the variable `α_ij` sits at its bound `v_j(1/P + λ_i)` at any optimum and is eliminated
//! exactly (the optimum is unchanged). Dense data keep every feature in `S_i` (LP (4) as
//! printed); CSR data use the stored entries. Objective: `(1/m) Σ ξ_i`.

use std::borrow::Cow;

use bulwark_core::{Dataset, Error, FeatureBudget, Features};
use bulwark_lp::{LpBuilder, LpProblem, Sense};

/// The layout of LP (4) for one training set: supports and offsets. It borrows the training
/// set's values (and, for CSR data, its row pointers and column indices): no copy of the data.
#[derive(Debug, Clone)]
pub struct Lp4<'a> {
    m: usize,
    n: usize,
    /// Row pointers of the supports (CSR-style over examples).
    pub(crate) indptr: Cow<'a, [usize]>,
    /// Column indices of the supports (empty for dense data, whose example `i`'s entry `t` is
    /// column `t`: [`Lp4::cols`]).
    pub(crate) indices: Cow<'a, [usize]>,
    /// The data values `x_ij` over the supports (the training set's storage).
    pub(crate) x: Cow<'a, [f64]>,
    /// Labels ±1.
    pub(crate) y: Vec<f64>,
    /// `P_i = P − V0_i`.
    pub(crate) p_i: Vec<f64>,
    /// `V0_i`.
    pub(crate) v0: Vec<f64>,
    /// Box radius.
    pub(crate) c: f64,
    /// Every example's support is all of `0..n` (dense data): `x` is row-major `m × n`.
    pub(crate) dense: bool,
    /// The training set and the budget LP (4) was laid out for: the feature values and `P`
    /// ([`Lp4::v`], [`Lp4::p`]), and the closed-form objective at a point (core's fractional
    /// knapsack, DSX eq. (7)) that the IPM's certificate reads.
    pub(crate) data: &'a Dataset,
    pub(crate) budget: FeatureBudget,
}

impl<'a> Lp4<'a> {
    /// Lays out LP (4) for `data` (binary, both classes present), values and budget, box `C`.
    pub fn new(data: &'a Dataset, budget: &FeatureBudget, c: f64) -> Result<Self, Error> {
        bulwark_core::error::check_positive("C", c)?;
        let labels = data.require_two_classes()?;
        if budget.n_features() != data.n_features() {
            return Err(Error::shape(
                "feature values vs data features",
                data.n_features(),
                budget.n_features(),
            ));
        }
        data.check_finite()?;
        let (m, n) = (data.len(), data.n_features());
        let (v, p) = (budget.values(), budget.p());
        let dense = matches!(data.features(), Features::Dense(_));
        // views of the training set's storage: row-major values (dense), or its CSR arrays
        let (indptr, indices, x) = match data.features() {
            Features::Dense(d) => (
                Cow::Owned((0..=m).map(|i| i * n).collect()),
                Cow::Borrowed(&[][..]),
                Cow::Borrowed(d.as_slice()),
            ),
            Features::Sparse(s) => (
                Cow::Borrowed(s.indptr()),
                Cow::Borrowed(s.indices()),
                Cow::Borrowed(s.values()),
            ),
        };
        if indptr.len() != m + 1 || indptr[0] != 0 || indptr[m] != x.len() {
            return Err(Error::shape("CSR row pointers", m + 1, indptr.len()));
        }
        let y: Vec<f64> = labels.iter().map(|s| s.as_f64()).collect();
        let total = budget.total();
        let mut v0 = Vec::with_capacity(m);
        let mut p_i = Vec::with_capacity(m);
        for i in 0..m {
            let supp: f64 = if dense {
                v.iter().sum()
            } else {
                indices[indptr[i]..indptr[i + 1]]
                    .iter()
                    .map(|&j| v[j])
                    .sum()
            };
            let z = (total - supp).max(0.0);
            v0.push(z);
            p_i.push(p - z);
        }
        Ok(Self {
            m,
            n,
            indptr,
            indices,
            x,
            y,
            p_i,
            v0,
            c,
            dense,
            data,
            budget: budget.clone(),
        })
    }

    /// The feature values `v_j`.
    #[inline]
    pub(crate) fn v(&self) -> &[f64] {
        self.budget.values()
    }
    /// `P = V([n]) − N`.
    #[inline]
    pub(crate) fn p(&self) -> f64 {
        self.budget.p()
    }
    /// Number of examples.
    pub fn m(&self) -> usize {
        self.m
    }
    /// Number of features.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of support entries `Σ |S_i|`.
    pub fn nnz(&self) -> usize {
        self.x.len()
    }
    /// Number of LP variables `n + 1 + Σ (|S_i| + 2)`.
    pub fn num_vars(&self) -> usize {
        self.n + 1 + self.nnz() + 2 * self.m
    }
    /// Number of LP rows `Σ (1 + |S_i|)`.
    pub fn num_rows(&self) -> usize {
        self.m + self.nnz()
    }
    /// Index of the first variable of example `i` (its first `α`).
    pub fn var_offset(&self, i: usize) -> usize {
        self.n + 1 + self.indptr[i] + 2 * i
    }
    /// Index of row `a_i` (the `b_ij` rows follow it).
    pub fn row_offset(&self, i: usize) -> usize {
        self.indptr[i] + i
    }
    /// `|S_i|`.
    pub fn support_len(&self, i: usize) -> usize {
        self.indptr[i + 1] - self.indptr[i]
    }
    /// The column of entry `t` of example `i`'s support (`t` itself for dense data).
    #[inline]
    pub(crate) fn col(&self, i: usize, t: usize) -> usize {
        if self.dense {
            t
        } else {
            self.indices[self.indptr[i] + t]
        }
    }
    /// The columns of example `i`'s support; empty for dense data (entry `t` is column `t`).
    pub(crate) fn cols(&self, i: usize) -> &[usize] {
        if self.dense {
            &[]
        } else {
            &self.indices[self.indptr[i]..self.indptr[i + 1]]
        }
    }
    /// The column indices of every support entry, materialised for dense data (for a consumer
    /// that needs CSR: the fallback engine's normal equations).
    pub(crate) fn csr_indices(&self) -> Cow<'_, [usize]> {
        if self.dense {
            (0..self.m)
                .flat_map(|_| 0..self.n)
                .collect::<Vec<_>>()
                .into()
        } else {
            Cow::Borrowed(&self.indices)
        }
    }
    /// Index of `ξ_i`.
    pub fn xi_index(&self, i: usize) -> usize {
        self.var_offset(i) + self.support_len(i) + 1
    }

    /// Builds the LP for `bulwark-lp`.
    pub fn build(&self) -> Result<LpProblem, bulwark_lp::LpError> {
        let mut lp = LpBuilder::new(Sense::Minimize);
        lp.name("dsx-lp4");
        let inv_m = 1.0 / self.m as f64;
        for _ in 0..self.n {
            lp.add_var(0.0, -self.c, self.c);
        }
        let b = lp.add_var(0.0, f64::NEG_INFINITY, f64::INFINITY);
        let mut coeffs: Vec<(usize, f64)> = Vec::new();
        for i in 0..self.m {
            let k = self.support_len(i);
            let first = lp.add_var(0.0, 0.0, f64::INFINITY);
            for _ in 1..k {
                lp.add_var(0.0, 0.0, f64::INFINITY);
            }
            let lambda = if k == 0 {
                first
            } else {
                lp.add_var(0.0, 0.0, f64::INFINITY)
            };
            let xi = lp.add_var(inv_m, 0.0, f64::INFINITY);
            debug_assert_eq!(xi, self.xi_index(i));
            let alpha0 = self.var_offset(i);
            // a_i: P_i λ_i − Σ α_ij + y_i b + ξ_i ≥ V0_i / P
            coeffs.clear();
            coeffs.push((b, self.y[i]));
            coeffs.extend((0..k).map(|t| (alpha0 + t, -1.0)));
            coeffs.push((lambda, self.p_i[i]));
            coeffs.push((xi, 1.0));
            lp.add_row(self.v0[i] / self.p(), f64::INFINITY, &coeffs);
            // b_ij: y_i x_ij w_j − v_j λ_i + α_ij ≥ v_j / P
            for (t, nz) in (self.indptr[i]..self.indptr[i + 1]).enumerate() {
                let j = self.col(i, t);
                coeffs.clear();
                coeffs.push((j, self.y[i] * self.x[nz]));
                coeffs.push((alpha0 + t, 1.0));
                coeffs.push((lambda, -self.v()[j]));
                lp.add_row(self.v()[j] / self.p(), f64::INFINITY, &coeffs);
            }
        }
        lp.build().map_err(Into::into)
    }
}
