//! The block-arrow normal-equations solver for DSX LP (4) in natural inequality form
//! (DSX eqs. (14)–(21), closed form of `dsx-normal-equations.md`).
//!
//! See the crate README for the algebra, the flop counts and the variable ordering. The
//! Schur complement `S` is accumulated by dense GEMM blocks or, for sparse rows, by a
//! cache-blocked sparse scatter (chunks of examples × column bands of `S`, optionally on two
//! threads, bit-identical across `Par`): see [`SchurKernel`] and `DsxSystem::schur_scatter`.

// `!(x > 0.0)` is used on purpose: it is also true for NaN, which must be rejected.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use core::ops::Range;

use faer::linalg::cholesky::ldlt::factor::{
    LdltError, LdltParams, LdltRegularization, cholesky_in_place, cholesky_in_place_scratch,
};
use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::prelude::ReborrowMut;
use faer::{Accum, MatMut, MatRef, Par};

use crate::error::{Block, LinalgError, Result, check_finite, check_len, check_nonneg};

/// The examples `x_i` (rows of `X`), borrowed.
#[derive(Debug, Clone, Copy)]
pub enum RowsRef<'a> {
    /// Dense row-major `m × n` matrix. **Every** feature is in the support of every row
    /// (`S_i = {0..n}`, no sparse reduction: this is LP (4) as printed). Pass CSR to get the
    /// reduction to the non-zeros.
    Dense {
        /// Row-major values, length `m·n`.
        data: &'a [f64],
        /// Number of examples.
        m: usize,
        /// Number of features.
        n: usize,
    },
    /// Compressed sparse rows. `S_i` is the set of **stored** columns of row `i` (explicit zeros
    /// count as in the support). Column indices must be strictly increasing within a row.
    Csr {
        /// Row pointers, length `m + 1`, `indptr[0] = 0`, non-decreasing.
        indptr: &'a [usize],
        /// Column indices, length `indptr[m]`.
        indices: &'a [usize],
        /// Values, length `indptr[m]`.
        values: &'a [f64],
        /// Number of features.
        n: usize,
    },
}

/// The positive scalings of one IPM iteration. `H = Gᵀ diag(θ, φ) G + diag(ω, ω_b, σ, ρ, κ)`.
///
/// Per-non-zero slices (`phi`, `sigma`) follow the storage order of the rows: example by example,
/// increasing column inside an example (for dense rows: `i·n + j`).
#[derive(Debug, Clone, Copy)]
pub struct DsxScalings<'a> {
    /// `θ_i`, row `a_i` (length `m`, `≥ 0`).
    pub theta: &'a [f64],
    /// `φ_ij`, row `b_ij` (length `nnz`, `≥ 0`).
    pub phi: &'a [f64],
    /// `ω_j`, variable `w_j` (length `n`, `≥ 0`).
    pub w_diag: &'a [f64],
    /// `ω_b`, variable `b` (`≥ 0`, may be exactly 0: `b` is free).
    pub b_diag: f64,
    /// `σ_ij`, variable `α_ij` (length `nnz`, `> 0`, or `≥ 0` with static regularisation).
    pub sigma: &'a [f64],
    /// `ρ_i`, variable `λ_i` (length `m`).
    pub rho: &'a [f64],
    /// `κ_i`, variable `ξ_i` (length `m`).
    pub kappa: &'a [f64],
}

/// How the Schur complement `Σ_i (τ_i r2_i r2_iᵀ − r1_i r1_iᵀ / s_i)` is accumulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchurKernel {
    /// Dense GEMM for dense rows; for CSR rows, the sparse kernel when
    /// `16 Σ_i |S_i|² < m (n+1)²` (the scatter kernel runs about 16× below GEMM's flop rate,
    /// measured; break-even near 25 % density).
    #[default]
    Auto,
    /// Stack `chunk_rows` examples into dense `(n+1) × chunk` blocks `G1, G2` and update the
    /// lower triangle of `S` with faer's triangular matmul (BLAS-3): `2 m (n+1)²` flops.
    DenseGemm,
    /// Scatter each example's two rank-one terms into `S` over its support only:
    /// `2 Σ_i |S_i|(|S_i|+1)` flops. Cache-blocked: the terms of a chunk of examples (about
    /// 64 K stored entries, 1 MiB) are stored, then `S` is updated band by band (column blocks
    /// of about 16 K lower-triangle entries), so `S` is streamed from L3 once per chunk rather
    /// than once per example; with `threads ≥ 2` two threads update disjoint bands. The
    /// summation order per entry is the example order in every mode: the factor is
    /// bit-identical for any `threads` and to the unblocked kernel.
    SparseScatter,
}

/// Dynamic regularisation of the pivots of `S`, relative to each column's own diagonal: `S` is
/// factored as `J⁻¹ L̂ D L̂ᵀ J⁻¹` with `J = diag(1/√S_jj)` (unit diagonal), and a pivot `D_j`
/// of the scaled matrix below `epsilon` — cancellation has removed all but that fraction of
/// `S_jj` — is replaced by `delta` (faer's `LdltRegularization`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DynamicRegularization {
    /// Pivots of the unit-diagonal `S` below `epsilon` are replaced... (`0 < epsilon < delta`)
    pub epsilon: f64,
    /// ...by `delta` (the factor's pivot becomes `√(delta · S_jj)`).
    pub delta: f64,
}

/// Settings of [`DsxSystem`]. All fields have documented defaults ([`Default`]).
#[derive(Debug, Clone, Copy)]
pub struct DsxSettings {
    /// Static regularisation `δ ≥ 0` added to every variable-diagonal entry when factoring
    /// (default 0). [`DsxSystem::apply`] and [`DsxSystem::solve_refined`] use the exact
    /// (unregularised) operator, so refinement removes the bias.
    pub static_regularization: f64,
    /// Dynamic regularisation of `S` (default `None`: a non-positive pivot is a
    /// [`LinalgError::NotPositiveDefinite`]).
    pub dynamic_regularization: Option<DynamicRegularization>,
    /// faer's parallelism in the BLAS-3 products of [`SchurKernel::DenseGemm`], the dense
    /// Cholesky of `S` and its triangular solves (default `Par::Seq`; `Par::rayon(2)` measured
    /// in the README). faer's parallel kernels may change the last bits with the thread count.
    pub par: Par,
    /// Threads of our own passes (default 1; 2 uses two): the per-example pass of
    /// [`SchurKernel::DenseGemm`], disjoint column bands of `S` for
    /// [`SchurKernel::SparseScatter`], and the two halves of each solve. The work is split the
    /// same way for any value, so the result is bit-identical whatever `threads` is.
    pub threads: usize,
    /// Kernel for the Schur complement (default [`SchurKernel::Auto`]).
    pub kernel: SchurKernel,
    /// Examples per dense GEMM block (default 256; memory `2 (n+1) · chunk_rows` doubles).
    pub chunk_rows: usize,
}

impl Default for DsxSettings {
    fn default() -> Self {
        Self {
            static_regularization: 0.0,
            dynamic_regularization: None,
            par: Par::Seq,
            threads: 1,
            kernel: SchurKernel::Auto,
            chunk_rows: 256,
        }
    }
}

/// What [`DsxSystem::factor`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactorInfo {
    /// Pivots of `S` replaced by dynamic regularisation.
    pub regularized_pivots: usize,
    /// Diagonal entries `S_jj` that cancellation pushed below their exact lower bound
    /// `ω_j + δ` and that were reset to it.
    pub clamped_diagonals: usize,
    /// The kernel used for the Schur complement.
    pub kernel: SchurKernel,
    /// Flops of the Schur-complement accumulation (the dominant term).
    pub schur_flops: f64,
    /// Smallest and largest diagonal entry of `L` (Cholesky factor of `S`): their squared
    /// ratio estimates the condition of `S` from below.
    pub min_pivot: f64,
    /// See `min_pivot`.
    pub max_pivot: f64,
}

/// A PCG iteration of [`DsxSystem::solve_refined`] whose true residual is above this fraction
/// of the one before it ends the refinement (stagnation).
const STALL_RATIO: f64 = 0.5;

/// Outcome of [`DsxSystem::solve_refined`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefineInfo {
    /// PCG iterations performed (0: the direct solve was already accurate enough).
    pub iterations: usize,
    /// Achieved `‖r − H z‖₂ / ‖r‖₂` with the exact `H` (recomputed, not recurrence-based).
    pub relative_residual: f64,
}

#[derive(Debug, Clone, Copy)]
struct Ident;

trait Cols: Copy {
    /// The support is `0..k` (dense rows): kernels may use contiguous, vectorised loops.
    const CONTIGUOUS: bool = false;
    fn at(self, a: usize) -> usize;
    fn range_iter(self, a: usize, k: usize) -> impl Iterator<Item = usize>;
    /// `v[S]` as a contiguous slice (borrowed for dense rows, gathered into `buf` for CSR).
    fn gather<'v>(self, k: usize, src: &'v [f64], buf: &'v mut [f64]) -> &'v [f64];
    /// `dst[S[a]] += vals[a]`.
    fn scatter_add(self, dst: &mut [f64], vals: &[f64]);
    /// `dst[S[a]] = vals[a]`.
    fn scatter_set(self, dst: &mut [f64], vals: &[f64]);
}

impl Cols for Ident {
    const CONTIGUOUS: bool = true;

    #[inline(always)]
    fn at(self, a: usize) -> usize {
        a
    }

    #[inline(always)]
    fn range_iter(self, a: usize, k: usize) -> impl Iterator<Item = usize> {
        a..k
    }

    #[inline(always)]
    fn gather<'v>(self, k: usize, src: &'v [f64], _buf: &'v mut [f64]) -> &'v [f64] {
        &src[..k]
    }

    #[inline(always)]
    fn scatter_add(self, dst: &mut [f64], vals: &[f64]) {
        for (d, &v) in dst[..vals.len()].iter_mut().zip(vals) {
            *d += v;
        }
    }

    #[inline(always)]
    fn scatter_set(self, dst: &mut [f64], vals: &[f64]) {
        dst[..vals.len()].copy_from_slice(vals);
    }
}

impl Cols for &[usize] {
    #[inline(always)]
    fn at(self, a: usize) -> usize {
        self[a]
    }

    #[inline(always)]
    fn range_iter(self, a: usize, k: usize) -> impl Iterator<Item = usize> {
        self[a..k].iter().copied()
    }

    #[inline(always)]
    fn gather<'v>(self, k: usize, src: &'v [f64], buf: &'v mut [f64]) -> &'v [f64] {
        let buf = &mut buf[..k];
        for (b, &j) in buf.iter_mut().zip(self) {
            *b = src[j];
        }
        buf
    }

    #[inline(always)]
    fn scatter_add(self, dst: &mut [f64], vals: &[f64]) {
        for (&j, &v) in self.iter().zip(vals) {
            dst[j] += v;
        }
    }

    #[inline(always)]
    fn scatter_set(self, dst: &mut [f64], vals: &[f64]) {
        for (&j, &v) in self.iter().zip(vals) {
            dst[j] = v;
        }
    }
}

/// Per-example scalars kept by the factorisation: the inverse of the 2×2 corner
/// `C2 = [[s, −t], [−t, −(1/θ + w)]]` as `[[p11, −p12], [−p12, −p22]]`, and `1/(κ_i + δ)`.
#[derive(Debug, Clone, Copy)]
struct ExampleFactor {
    p11: f64,
    p12: f64,
    p22: f64,
    inv_kappa: f64,
    inv_theta: f64,
    /// Local index of the variable recovered from row `a_i` in the solve (`NO_REC`: none).
    rec: u32,
}

const NO_REC: u32 = u32::MAX;

/// The structured normal matrix `H` of DSX LP (4) with its factorisation (see the crate docs).
///
/// Variable-space vector `z` (length [`DsxSystem::len`]): `w_0..w_{n-1}`, `b`, then for each
/// example `i`: `α_ij` for `j ∈ S_i` (increasing `j`), `λ_i`, `ξ_i`.
#[derive(Debug)]
pub struct DsxSystem {
    m: usize,
    n: usize,
    dense: bool,
    /// Row pointers into the per-non-zero arrays (`i·n` for dense rows).
    indptr: Vec<usize>,
    /// Column indices (empty for dense rows).
    indices: Vec<usize>,
    x: Vec<f64>,
    y: Vec<f64>,
    v: Vec<f64>,
    p: f64,
    p_eff: Vec<f64>,
    v0: Vec<f64>,
    sum_k2: f64,
    settings: DsxSettings,
    kernel: SchurKernel,
    // --- factorisation ---
    inv_delta: Vec<f64>,
    phi: Vec<f64>,
    ex: Vec<ExampleFactor>,
    /// Column-major `(n+1)²`: `S`, then its Cholesky factor (lower triangle).
    s: Vec<f64>,
    /// `1/√S_jj`, the Jacobi scaling of `S` before its factorisation (length `n + 1`).
    jacobi: Vec<f64>,
    /// Expected pivot signs of the `LDLᵀ` of the scaled `S` (all `+1`: it is positive
    /// definite), for faer's dynamic regularisation.
    signs: Vec<i8>,
    g1: Vec<f64>,
    g2: Vec<f64>,
    /// Chunks, bands and buffers of the blocked sparse-scatter kernel (empty for the GEMM kernel).
    scatter: ScatterPlan,
    /// Per-thread scratch (`[0]` and `[1]` also serve the two halves of a solve).
    work: [Work; 2],
    /// First example of the second half of the solve passes (halves of equal non-zeros).
    solve_mid: usize,
    /// The second half's accumulator of `r_B` in a solve (length `n + 1`).
    rb_part: Vec<f64>,
    mem: crate::error::Scratch,
    factored: bool,
    // --- refinement scratch ---
    refine: [Vec<f64>; 5],
}

/// Validated internal copy of the rows.
struct Rows {
    m: usize,
    n: usize,
    dense: bool,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    x: Vec<f64>,
}

fn validate_rows(rows: RowsRef<'_>) -> Result<Rows> {
    match rows {
        RowsRef::Dense { data, m, n } => {
            if m == 0 {
                return Err(LinalgError::EmptyDimension { name: "m" });
            }
            if n == 0 {
                return Err(LinalgError::EmptyDimension { name: "n" });
            }
            check_len("rows.data", m * n, data.len())?;
            check_finite("rows.data", data)?;
            Ok(Rows {
                m,
                n,
                dense: true,
                indptr: (0..=m).map(|i| i * n).collect(),
                indices: Vec::new(),
                x: data.to_vec(),
            })
        }
        RowsRef::Csr {
            indptr,
            indices,
            values,
            n,
        } => {
            if indptr.len() < 2 {
                return Err(LinalgError::EmptyDimension { name: "m" });
            }
            if n == 0 {
                return Err(LinalgError::EmptyDimension { name: "n" });
            }
            let m = indptr.len() - 1;
            if indptr[0] != 0 {
                return Err(LinalgError::InvalidCsr {
                    row: 0,
                    reason: "indptr[0] must be 0",
                });
            }
            let nnz = indptr[m];
            check_len("rows.indices", nnz, indices.len())?;
            check_len("rows.values", nnz, values.len())?;
            check_finite("rows.values", values)?;
            for i in 0..m {
                if indptr[i + 1] < indptr[i] {
                    return Err(LinalgError::InvalidCsr {
                        row: i,
                        reason: "indptr must be non-decreasing",
                    });
                }
            }
            for i in 0..m {
                let cols = &indices[indptr[i]..indptr[i + 1]];
                for (a, &j) in cols.iter().enumerate() {
                    if j >= n {
                        return Err(LinalgError::InvalidCsr {
                            row: i,
                            reason: "column index >= n",
                        });
                    }
                    if a > 0 && cols[a - 1] >= j {
                        return Err(LinalgError::InvalidCsr {
                            row: i,
                            reason: "column indices must be strictly increasing",
                        });
                    }
                }
            }
            Ok(Rows {
                m,
                n,
                dense: false,
                indptr: indptr.to_vec(),
                indices: indices.to_vec(),
                x: values.to_vec(),
            })
        }
    }
}

impl DsxSystem {
    /// Validates and copies the data; sizes every buffer. `O(nnz + n²)` memory.
    ///
    /// `y_i ∈ {−1, +1}`, `v_j ≥ 0` finite, `p > 0` finite.
    pub fn try_new(rows: RowsRef<'_>, y: &[f64], v: &[f64], p: f64) -> Result<Self> {
        Self::try_new_with(rows, y, v, p, DsxSettings::default())
    }

    /// As [`DsxSystem::try_new`] with explicit settings.
    pub fn try_new_with(
        rows: RowsRef<'_>,
        y: &[f64],
        v: &[f64],
        p: f64,
        settings: DsxSettings,
    ) -> Result<Self> {
        let Rows {
            m,
            n,
            dense,
            indptr,
            indices,
            x,
        } = validate_rows(rows)?;
        check_len("y", m, y.len())?;
        for (index, &value) in y.iter().enumerate() {
            if value != 1.0 && value != -1.0 {
                return Err(LinalgError::InvalidValue {
                    name: "y",
                    index,
                    value,
                    reason: "labels must be -1 or +1",
                });
            }
        }
        check_len("v", n, v.len())?;
        check_nonneg("v", v)?;
        if !(p.is_finite() && p > 0.0) {
            return Err(LinalgError::InvalidValue {
                name: "p",
                index: 0,
                value: p,
                reason: "must be finite and > 0",
            });
        }
        validate_settings(&settings)?;
        let nnz = x.len();
        let mut p_eff = vec![0.0; m];
        let mut v0 = vec![0.0; m];
        let mut max_k = 0;
        let mut sum_k2 = 0.0;
        for i in 0..m {
            let k = indptr[i + 1] - indptr[i];
            max_k = max_k.max(k);
            sum_k2 += (k * k) as f64;
            // V0_i = Σ_{j∉S_i} v_j, computed directly (not vsum − vin) to avoid cancellation.
            let v0i = if dense || k == n {
                0.0
            } else {
                let mut acc = 0.0;
                let cols = &indices[indptr[i]..indptr[i + 1]];
                let mut a = 0;
                for (j, &vj) in v.iter().enumerate() {
                    if a < cols.len() && cols[a] == j {
                        a += 1;
                    } else {
                        acc += vj;
                    }
                }
                acc
            };
            v0[i] = v0i;
            p_eff[i] = p - v0i;
        }
        let n1 = n + 1;
        let kernel = match settings.kernel {
            SchurKernel::Auto => {
                if !dense && sum_k2 * 16.0 < (m as f64) * (n1 * n1) as f64 {
                    SchurKernel::SparseScatter
                } else {
                    SchurKernel::DenseGemm
                }
            }
            k => k,
        };
        let chunk = settings.chunk_rows.min(m);
        let (g1, g2) = if kernel == SchurKernel::DenseGemm {
            (vec![0.0; n * chunk], vec![0.0; n * chunk])
        } else {
            (Vec::new(), Vec::new())
        };
        let scatter = if kernel == SchurKernel::SparseScatter {
            ScatterPlan::new(
                n,
                dense,
                &indptr,
                &indices,
                settings.threads >= 2,
                SCATTER_CHUNK_NNZ,
                SCATTER_BAND_DOUBLES,
                SCATTER_PASS_COST,
            )
        } else {
            ScatterPlan::default()
        };
        let req = cholesky_in_place_scratch::<f64>(n1, settings.par, Default::default());
        let len = n1 + nnz + 2 * m;
        // the solve passes' halves: the first example at or past half the non-zeros
        let solve_mid = indptr[..m].partition_point(|&q| 2 * q < nnz);
        Ok(Self {
            m,
            n,
            dense,
            indptr,
            indices,
            x,
            y: y.to_vec(),
            v: v.to_vec(),
            p,
            p_eff,
            v0,

            sum_k2,
            settings,
            kernel,
            inv_delta: vec![0.0; nnz],
            phi: vec![0.0; nnz],
            ex: vec![
                ExampleFactor {
                    p11: 0.0,
                    p12: 0.0,
                    p22: 0.0,
                    inv_kappa: 0.0,
                    inv_theta: 0.0,
                    rec: NO_REC,
                };
                m
            ],
            s: vec![0.0; n1 * n1],
            jacobi: vec![0.0; n1],
            signs: vec![1; n1],
            g1,
            g2,
            scatter,
            work: [Work::new(n, max_k), Work::new(n, max_k)],
            solve_mid,
            rb_part: vec![0.0; n + 1],
            mem: crate::error::Scratch::new(req),
            factored: false,
            refine: [
                vec![0.0; len],
                vec![0.0; len],
                vec![0.0; len],
                vec![0.0; len],
                vec![0.0; len],
            ],
        })
    }

    /// Number of examples `m`.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Number of features `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of stored non-zeros `Σ_i |S_i|` (`m·n` for dense rows).
    pub fn nnz(&self) -> usize {
        self.x.len()
    }

    /// Dimension of the variable space: `n + 1 + Σ_i (|S_i| + 2)`.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.n + 1 + self.nnz() + 2 * self.m
    }

    /// Number of constraint rows of `G`: `m + nnz` (rows `a_i`, `b_ij`).
    pub fn n_rows(&self) -> usize {
        self.m + self.nnz()
    }

    /// Range of example `i`'s entries in the per-non-zero arrays (`phi`, `sigma`, values).
    pub fn nz_range(&self, i: usize) -> Range<usize> {
        self.indptr[i]..self.indptr[i + 1]
    }

    /// Offset of example `i`'s block `(α_i, λ_i, ξ_i)` in the variable space
    /// (`n + 1 + nz_range(i).start + 2i`); `λ_i` is at `offset + |S_i|`, `ξ_i` at `+ 1`.
    pub fn example_offset(&self, i: usize) -> usize {
        self.n + 1 + self.indptr[i] + 2 * i
    }

    /// Offset of example `i`'s rows `(a_i, b_ij..)` in the row space (`nz_range(i).start + i`);
    /// `a_i` first, then `b_ij` in increasing `j`.
    pub fn row_offset(&self, i: usize) -> usize {
        self.indptr[i] + i
    }

    /// The support `S_i` of example `i` (increasing columns).
    pub fn support(&self, i: usize) -> impl ExactSizeIterator<Item = usize> + '_ {
        let r = self.nz_range(i);
        let dense = self.dense;
        let idx: &[usize] = if dense { &[] } else { &self.indices[r.clone()] };
        (0..r.len()).map(move |a| if dense { a } else { idx[a] })
    }

    /// `V0_i = Σ_{j ∉ S_i} v_j`.
    pub fn v0(&self, i: usize) -> f64 {
        self.v0[i]
    }

    /// `P_i = P − V0_i` (may be `≤ 0`).
    pub fn p_eff(&self, i: usize) -> f64 {
        self.p_eff[i]
    }

    /// The budget `P`.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The settings.
    pub fn settings(&self) -> &DsxSettings {
        &self.settings
    }

    /// Changes the settings (no reallocation unless `kernel`/`chunk_rows` change the buffers;
    /// invalidates the factorisation).
    pub fn set_settings(&mut self, settings: DsxSettings) -> Result<()> {
        validate_settings(&settings)?;
        let n1 = self.n + 1;
        let kernel = match settings.kernel {
            SchurKernel::Auto => {
                if !self.dense && self.sum_k2 * 16.0 < (self.m as f64) * (n1 * n1) as f64 {
                    SchurKernel::SparseScatter
                } else {
                    SchurKernel::DenseGemm
                }
            }
            k => k,
        };
        let chunk = settings.chunk_rows.min(self.m);
        if kernel == SchurKernel::DenseGemm {
            self.g1.resize(self.n * chunk, 0.0);
            self.g2.resize(self.n * chunk, 0.0);
        }
        let two = settings.threads >= 2;
        if kernel == SchurKernel::SparseScatter
            && (self.scatter.chunks.is_empty() || (two && self.scatter.g1[1].is_empty()))
        {
            self.scatter = ScatterPlan::new(
                self.n,
                self.dense,
                &self.indptr,
                &self.indices,
                two,
                SCATTER_CHUNK_NNZ,
                SCATTER_BAND_DOUBLES,
                SCATTER_PASS_COST,
            );
        }
        let req = cholesky_in_place_scratch::<f64>(n1, settings.par, Default::default());
        self.mem = crate::error::Scratch::new(req);
        self.kernel = kernel;
        self.settings = settings;
        self.factored = false;
        Ok(())
    }

    /// The resolved Schur kernel.
    pub fn kernel(&self) -> SchurKernel {
        self.kernel
    }

    /// Lower triangle of the Cholesky factor `L` of `S` (after a successful factor).
    pub fn schur_factor(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.s, self.n + 1, self.n + 1)
    }

    fn check_scalings(&self, s: &DsxScalings<'_>) -> Result<()> {
        let (m, n, nnz) = (self.m, self.n, self.nnz());
        check_len("theta", m, s.theta.len())?;
        check_len("phi", nnz, s.phi.len())?;
        check_len("w_diag", n, s.w_diag.len())?;
        check_len("sigma", nnz, s.sigma.len())?;
        check_len("rho", m, s.rho.len())?;
        check_len("kappa", m, s.kappa.len())?;
        check_nonneg("theta", s.theta)?;
        check_nonneg("phi", s.phi)?;
        check_nonneg("w_diag", s.w_diag)?;
        check_nonneg("b_diag", core::slice::from_ref(&s.b_diag))?;
        check_nonneg("sigma", s.sigma)?;
        check_nonneg("rho", s.rho)?;
        check_nonneg("kappa", s.kappa)?;
        Ok(())
    }

    /// Zeroes `S` and the per-thread accumulators.
    fn reset_schur(&mut self) {
        self.s.iter_mut().for_each(|e| *e = 0.0);
        for wk in &mut self.work {
            wk.acc_diag.iter_mut().for_each(|e| *e = 0.0);
            wk.acc_wb.iter_mut().for_each(|e| *e = 0.0);
        }
    }

    /// Adds the closed-form diagonal and the b row (accumulated contiguously in `work`), then
    /// `ω + δ`, clamps `S_jj` to its exact lower bound `ω_j + δ` (each example's contribution is
    /// PSD) and sets `S_bb = ω_b + δ + Σ τ_i` (`sbb`). Returns the number of clamped entries.
    fn finish_schur(&mut self, sc: &DsxScalings<'_>, sbb: f64) -> usize {
        let n = self.n;
        let n1 = n + 1;
        let delta = self.settings.static_regularization;
        let [w0, w1] = &self.work;
        for j in 0..n {
            self.s[j * n1 + j] += w0.acc_diag[j] + w1.acc_diag[j];
            self.s[j * n1 + n] = w0.acc_wb[j] + w1.acc_wb[j];
        }
        let mut clamped = 0;
        for j in 0..n {
            let lower = sc.w_diag[j] + delta;
            let e = &mut self.s[j * n1 + j];
            *e += lower;
            if *e < lower {
                *e = lower;
                clamped += 1;
            }
        }
        self.s[n * n1 + n] = sbb;
        clamped
    }

    /// Forms the lower triangle of `S` (validated scalings); returns the clamped diagonals.
    fn form_schur(&mut self, sc: &DsxScalings<'_>) -> Result<usize> {
        self.reset_schur();
        let delta = self.settings.static_regularization;
        // Diagonal of S_ww: ω_j + δ + Σ_i φ_ij x_ij² (σ_ij+δ)/Δ_ij (into `acc_diag`); the two
        // rank-one families go into the lower triangle of `s`, S_wb into `acc_wb`.
        let mut sbb = sc.b_diag + delta;
        match self.kernel {
            SchurKernel::SparseScatter => self.schur_scatter(sc, &mut sbb)?,
            _ => self.schur_gemm(sc, &mut sbb)?,
        }
        Ok(self.finish_schur(sc, sbb))
    }

    /// The blocked sparse-scatter kernel; adds `Σ τ_i` to `sbb`.
    ///
    /// For each chunk of consecutive examples (`ScatterPlan::chunks`, at most
    /// `SCATTER_CHUNK_NNZ` stored entries) the per-example closed form stores the two rank-one
    /// vectors `g1, g2` of every example of the chunk (`ScatterPlan::g1/g2`, support order);
    /// then `S_ww` is updated band by band (`ScatterPlan::bands`: column blocks with about
    /// `SCATTER_BAND_DOUBLES` entries of the lower triangle), each band by all the chunk's
    /// examples in order, columns `S_i[a]` of the band, rows `S_i[r]`, `r ≥ a` (a per-example
    /// cursor walks the sorted support band by band). A band and the chunk's store stay in L2
    /// while they are used, so `S` (4.9 MB at `n = 784`, beyond the 2 MiB L2) is streamed from
    /// L3 once per chunk instead of once per example.
    ///
    /// Every entry of `S` receives its updates in example order with the same expression
    /// whatever the chunks, bands and thread count, and `acc_diag`, `acc_wb`, `Σ τ_i` are
    /// summed as before (sequential per-example pass; `τ` in groups of `chunk_rows`): the
    /// factor is bit-identical to the unblocked kernel and across `Par`.
    ///
    /// With `threads ≥ 2`, two threads (exactly two): the bands are split at a column
    /// (`ScatterPlan::split`) into two sets of disjoint columns of `S`, and the work is
    /// pipelined per chunk: while the second thread updates its bands with chunk `c`, the
    /// first runs the per-example pass of chunk `c + 1` into the other store, then updates its
    /// bands with chunk `c` (one `rayon::join` per chunk on rayon's workers, no other
    /// synchronisation). The split
    /// gives the first thread `(updates − SCATTER_PASS_COST · nnz)/2` entry updates.
    ///
    /// Measured (2-core Sapphire Rapids VM, 2 MiB L2/core, noisy host), 10000×784 CSR at 19 %
    /// (`nnz` 1.49 M, 1.12e8 entry updates), random scalings, `--bench scatter`, best of 5
    /// over 8 interleaved rounds with the unblocked build: factor 177 → **128 ms** with
    /// `Par::Seq` (the unblocked kernel: 144–190 ms over the session), **74 ms** with two
    /// threads (unblocked: 172 ms, sequential scatter). Cachegrind with a 2 MiB last level
    /// (the L2), m = 2000: 3.10 M → 0.82 M L2 misses per factor, instructions 312 M → 300 M.
    /// Tuning (chunk 16 K/32 K/64 K/128 K entries × band 8 K…128 K doubles): a 128 K-entry
    /// chunk (2 MiB of `g1, g2`) overflows L2 (1.9 M misses); 64 K entries (1 MiB) with
    /// 16 K-double bands (128 KiB) had the fewest L2 and L1 misses and the best times, 32 K ×
    /// 32 K was within noise (±5 %). With two threads each thread updated at about 1.3 ns per
    /// entry against 0.85 ns alone (both cores slower when both run, on this VM).
    fn schur_scatter(&mut self, sc: &DsxScalings<'_>, sbb: &mut f64) -> Result<()> {
        let n1 = self.n + 1;
        let sh = Shared {
            n: self.n,
            dense: self.dense,
            delta: self.settings.static_regularization,
            gemm: false,
            indptr: &self.indptr,
            indices: &self.indices,
            x: &self.x,
            v: &self.v,
            y: &self.y,
            p_eff: &self.p_eff,
        };
        let ScatterPlan {
            chunks,
            bands,
            split,
            g1,
            g2,
            cursors: [cur0, cur1],
        } = &mut self.scatter;
        let two = self.settings.threads >= 2 && !g1[1].is_empty();
        let mut pass = ExamplePass {
            sh: &sh,
            sc,
            // `Σ τ_i` is summed in groups of `chunk_rows` examples (as the GEMM kernel does), so
            // `S_bb` too is bit-identical to the unblocked scatter kernel.
            group: self.settings.chunk_rows,
            tau: 0.0,
            sbb,
            inv_delta: &mut self.inv_delta,
            phi: &mut self.phi,
            ex: &mut self.ex,
            wk: &mut self.work[0],
        };
        let [g1a, g1b] = g1;
        let [g2a, g2b] = g2;
        if !two {
            for ch in chunks.windows(2) {
                let (i0, i1) = (ch[0], ch[1]);
                pass.run(i0, i1, g1a, g2a)?;
                update_bands(
                    &sh,
                    i0,
                    i1,
                    g1a,
                    g2a,
                    bands,
                    &mut self.s,
                    &mut cur0[..i1 - i0],
                );
            }
            return Ok(());
        }
        // Two threads, pipelined: while the second thread updates its bands with chunk c, the
        // first runs the per-example pass of chunk c + 1 (into the other store), then updates
        // its own bands with chunk c. The split column balances the two loads (see
        // `ScatterPlan::new`).
        let (bands_a, bands_b) = (&bands[..=*split], &bands[*split..]);
        let (s_a, s_b) = self.s.split_at_mut(bands[*split] * n1);
        let nch = chunks.len() - 1;
        pass.run(chunks[0], chunks[1], g1a, g2a)?;
        for c in 0..nch {
            let (i0, i1) = (chunks[c], chunks[c + 1]);
            let (g1c, g1n, g2c, g2n) = if c % 2 == 0 {
                (&*g1a, &mut *g1b, &*g2a, &mut *g2b)
            } else {
                (&*g1b, &mut *g1a, &*g2b, &mut *g2a)
            };
            let (s_a, s_b) = (&mut *s_a, &mut *s_b);
            let (cur_a, cur_b) = (&mut cur0[..i1 - i0], &mut cur1[..i1 - i0]);
            let shr = &sh;
            // rayon's workers, not a new OS thread per chunk (≈ 20 chunks per factorisation)
            let ((), next) = rayon::join(
                move || update_bands(shr, i0, i1, g1c, g2c, bands_b, s_b, cur_b),
                || {
                    let next = if c + 1 < nch {
                        pass.run(i1, chunks[c + 2], g1n, g2n)
                    } else {
                        Ok(())
                    };
                    update_bands(shr, i0, i1, g1c, g2c, bands_a, s_a, cur_a);
                    next
                },
            );
            next?;
        }
        Ok(())
    }

    /// The dense GEMM kernel (BLAS-3 on blocks of `chunk_rows` examples); adds `Σ τ_i` to
    /// `sbb`.
    fn schur_gemm(&mut self, sc: &DsxScalings<'_>, sbb: &mut f64) -> Result<()> {
        let n = self.n;
        let n1 = n + 1;
        // With `Par::Rayon` the per-example pass of each block runs on two threads.
        let split = self.settings.threads >= 2;
        let chunk = self.settings.chunk_rows.min(self.m).max(1);
        let sh = Shared {
            n,
            dense: self.dense,
            delta: self.settings.static_regularization,
            gemm: true,
            indptr: &self.indptr,
            indices: &self.indices,
            x: &self.x,
            v: &self.v,
            y: &self.y,
            p_eff: &self.p_eff,
        };
        let mut i0 = 0;
        while i0 < self.m {
            let i1 = (i0 + chunk).min(self.m);
            let c = i1 - i0;
            if !self.dense {
                self.g1[..n * c].iter_mut().for_each(|e| *e = 0.0);
                self.g2[..n * c].iter_mut().for_each(|e| *e = 0.0);
            }
            let (nz0, nz1) = (self.indptr[i0], self.indptr[i1]);
            let inv = &mut self.inv_delta[nz0..nz1];
            let ph = &mut self.phi[nz0..nz1];
            let ex = &mut self.ex[i0..i1];
            let (g1, g2) = (&mut self.g1[..n * c], &mut self.g2[..n * c]);
            let [w0, w1] = &mut self.work;
            if c >= 2 {
                // the two halves always accumulate separately (diagonal, b column, Σ τ_i), on
                // two threads or one, so the factor does not depend on `par`
                let mid = i0 + c / 2;
                let cut = self.indptr[mid] - nz0;
                let (inv_a, inv_b) = inv.split_at_mut(cut);
                let (ph_a, ph_b) = ph.split_at_mut(cut);
                let (ex_a, ex_b) = ex.split_at_mut(mid - i0);
                let (g1a, g1b) = g1.split_at_mut(n * (mid - i0));
                let (g2a, g2b) = g2.split_at_mut(n * (mid - i0));
                let (ra, rb) = if split {
                    std::thread::scope(|scope| {
                        let h = scope.spawn(|| {
                            factor_range(&sh, sc, mid, i1, 0.0, inv_b, ph_b, ex_b, g1b, g2b, w1)
                        });
                        let ra =
                            factor_range(&sh, sc, i0, mid, 0.0, inv_a, ph_a, ex_a, g1a, g2a, w0);
                        (ra, h.join().expect("per-example worker panicked"))
                    })
                } else {
                    let ra = factor_range(&sh, sc, i0, mid, 0.0, inv_a, ph_a, ex_a, g1a, g2a, w0);
                    let rb = factor_range(&sh, sc, mid, i1, 0.0, inv_b, ph_b, ex_b, g1b, g2b, w1);
                    (ra, rb)
                };
                *sbb += ra?;
                *sbb += rb?;
            } else {
                *sbb += factor_range(&sh, sc, i0, i1, 0.0, inv, ph, ex, g1, g2, w0)?;
            }
            let smat = MatMut::from_column_major_slice_mut(&mut self.s, n1, n1);
            let g2 = MatRef::from_column_major_slice(&self.g2[..n * c], n, c);
            let g1 = MatRef::from_column_major_slice(&self.g1[..n * c], n, c);
            let mut sww = smat.submatrix_mut(0, 0, n, n);
            // S_ww += G2 G2ᵀ − G1 G1ᵀ (lower triangles): BLAS-3.
            tri_matmul(
                sww.rb_mut(),
                BlockStructure::TriangularLower,
                Accum::Add,
                g2,
                BlockStructure::Rectangular,
                g2.transpose(),
                BlockStructure::Rectangular,
                1.0,
                self.settings.par,
            );
            tri_matmul(
                sww,
                BlockStructure::TriangularLower,
                Accum::Add,
                g1,
                BlockStructure::Rectangular,
                g1.transpose(),
                BlockStructure::Rectangular,
                -1.0,
                self.settings.par,
            );
            i0 = i1;
        }
        Ok(())
    }

    /// Numeric factorisation of `H + δI` for new scalings. No allocation.
    ///
    /// Work: `O(nnz)` for the per-example closed form, then the Schur update
    /// (`2 m (n+1)²` flops with [`SchurKernel::DenseGemm`], `2 Σ|S_i|(|S_i|+1)` with
    /// [`SchurKernel::SparseScatter`], cache-blocked: chunks of examples × column bands of
    /// `S`, two threads on disjoint bands when `par` allows), then `(n+1)³/3` for the
    /// Cholesky of `S`. The sparse-scatter result does not depend on `par` (bit-identical).
    pub fn factor(&mut self, sc: &DsxScalings<'_>) -> Result<FactorInfo> {
        self.factored = false;
        self.check_scalings(sc)?;
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
            schur_flops,
            min_pivot,
            max_pivot,
        })
    }

    /// Solves the augmented per-example system `K_i [u; μ] = [r; rμ]` in place on
    /// `u = (α_i, λ_i, ξ_i)` (length `|S_i| + 2`) and returns `μ`. Without the μ row this is
    /// `u ← H_ii⁻¹ u` (DSX eq. (15) with (19)–(21)): the arrow part `(Δ, κ)` is eliminated
    /// without fill-in, then the 2×2 corner on `(λ, μ)` is solved with the stored `C2⁻¹`.
    #[inline]
    fn example_solve<C: Cols>(
        &self,
        i: usize,
        r: Range<usize>,
        cols: C,
        u: &mut [f64],
        r_mu: f64,
    ) -> f64 {
        let k = r.len();
        let e = self.ex[i];
        let inv_delta = &self.inv_delta[r.clone()];
        let phi = &self.phi[r];
        let v = &self.v;
        let (ua, rest) = u.split_at_mut(k);
        // forward: y_d = A_d⁻¹ r_d ; r̂_c = r_c − Bᵀ y_d, B rows: α_j → (−φ v, −1), ξ → (0, 1)
        let mut rl = rest[0];
        let mut rm = r_mu;
        if C::CONTIGUOUS {
            // dense rows: four-lane accumulators so the loop vectorises
            let (c4, vv) = (k / 4 * 4, &v[..k]);
            let (mut l4, mut m4) = ([0.0f64; 4], [0.0f64; 4]);
            for (((u4, i4), p4), v4) in ua[..c4]
                .chunks_exact_mut(4)
                .zip(inv_delta[..c4].chunks_exact(4))
                .zip(phi[..c4].chunks_exact(4))
                .zip(vv[..c4].chunks_exact(4))
            {
                for l in 0..4 {
                    let ya = u4[l] * i4[l];
                    u4[l] = ya;
                    l4[l] += p4[l] * v4[l] * ya;
                    m4[l] += ya;
                }
            }
            rl += (l4[0] + l4[1]) + (l4[2] + l4[3]);
            rm += (m4[0] + m4[1]) + (m4[2] + m4[3]);
            for a in c4..k {
                let ya = ua[a] * inv_delta[a];
                ua[a] = ya;
                rl += phi[a] * vv[a] * ya;
                rm += ya;
            }
        } else {
            // four independent accumulators: the sums are latency-bound chains otherwise
            let c4 = k / 4 * 4;
            let (mut l4, mut m4) = ([0.0f64; 4], [0.0f64; 4]);
            let mut a = 0;
            while a < c4 {
                for l in 0..4 {
                    let ya = ua[a + l] * inv_delta[a + l];
                    ua[a + l] = ya;
                    l4[l] += phi[a + l] * v[cols.at(a + l)] * ya;
                    m4[l] += ya;
                }
                a += 4;
            }
            rl += (l4[0] + l4[1]) + (l4[2] + l4[3]);
            rm += (m4[0] + m4[1]) + (m4[2] + m4[3]);
            for a in c4..k {
                let ya = ua[a] * inv_delta[a];
                ua[a] = ya;
                rl += phi[a] * v[cols.at(a)] * ya;
                rm += ya;
            }
        }
        let yx = rest[1] * e.inv_kappa;
        rm -= yx;
        // corner: x_c = C2⁻¹ r̂_c
        let xl = e.p11 * rl - e.p12 * rm;
        let xm = -e.p12 * rl - e.p22 * rm;
        // backward: x_d = y_d − A_d⁻¹ B x_c
        let mut sum_a: f64;
        if C::CONTIGUOUS {
            let (c4, vv) = (k / 4 * 4, &v[..k]);
            let mut s4 = [0.0f64; 4];
            for (((u4, i4), p4), v4) in ua[..c4]
                .chunks_exact_mut(4)
                .zip(inv_delta[..c4].chunks_exact(4))
                .zip(phi[..c4].chunks_exact(4))
                .zip(vv[..c4].chunks_exact(4))
            {
                for l in 0..4 {
                    u4[l] += (p4[l] * v4[l] * xl + xm) * i4[l];
                    s4[l] += u4[l];
                }
            }
            sum_a = (s4[0] + s4[1]) + (s4[2] + s4[3]);
            for a in c4..k {
                ua[a] += (phi[a] * vv[a] * xl + xm) * inv_delta[a];
                sum_a += ua[a];
            }
        } else {
            let c4 = k / 4 * 4;
            let mut s4 = [0.0f64; 4];
            let mut a = 0;
            while a < c4 {
                for l in 0..4 {
                    let t = a + l;
                    ua[t] += (phi[t] * v[cols.at(t)] * xl + xm) * inv_delta[t];
                    s4[l] += ua[t];
                }
                a += 4;
            }
            sum_a = (s4[0] + s4[1]) + (s4[2] + s4[3]);
            for a in c4..k {
                ua[a] += (phi[a] * v[cols.at(a)] * xl + xm) * inv_delta[a];
                sum_a += ua[a];
            }
        }
        rest[0] = xl;
        rest[1] = yx - xm * e.inv_kappa;
        if e.rec != NO_REC {
            // θ exceeds the smallest diagonal pivot (Δ_ij or κ_i) of the example: recover that
            // variable from row a_i, gᵀu − μ/θ = rμ, instead of (r − B x_c)/pivot, which
            // cancels when the pivot is ≪ θ.
            let gu = -sum_a + self.p_eff[i] * xl + rest[1];
            let target = r_mu + xm * e.inv_theta;
            let rec = e.rec as usize;
            if rec == k + 1 {
                rest[1] += target - gu;
            } else {
                ua[rec] -= target - gu;
            }
        }
        xm
    }

    /// Solves `(H + δI) z = rhs` in place with the current factorisation: `O(nnz + n²)`,
    /// no allocation. DSX eqs. (15)–(18) (with the corrected (18)).
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) -> Result<()> {
        if !self.factored {
            return Err(LinalgError::NotFactored);
        }
        check_len("rhs", self.len(), rhs.len())?;
        let [w0, w1] = &mut self.work;
        let mut bufs = (
            core::mem::take(&mut w0.kbuf1),
            core::mem::take(&mut w1.kbuf1),
            core::mem::take(&mut self.rb_part),
        );
        if self.dense {
            self.solve_impl(rhs, &mut bufs, |_, _| Ident);
        } else {
            self.solve_impl(rhs, &mut bufs, |idx, r| &idx[r]);
        }
        let [w0, w1] = &mut self.work;
        (w0.kbuf1, w1.kbuf1, self.rb_part) = bufs;
        Ok(())
    }

    /// Pass 1 of a solve on examples `i0..i1` (their tail `rl` starts at example `i0`):
    /// `ẑ_i = K_i⁻¹ [r_i; 0]` in place, `acc −= M_iᵀ ẑ_i` (DSX eqs. (15), (17)).
    fn solve_forward<'s, C: Cols + 's>(
        &'s self,
        (i0, i1): (usize, usize),
        rl: &[f64],
        acc: &mut [f64],
        ubuf: &mut [f64],
        cols_of: &(impl Fn(&'s [usize], Range<usize>) -> C + Sync),
    ) {
        let n = self.n;
        let mut off = 0;
        for i in i0..i1 {
            let r = self.nz_range(i);
            let k = r.len();
            let cols = cols_of(&self.indices, r.clone());
            let u = &mut ubuf[..k + 2];
            u.copy_from_slice(&rl[off..off + k + 2]);
            let mu = self.example_solve(i, r.clone(), cols, u, 0.0);
            let yi = self.y[i];
            let zl = u[k];
            let x = &self.x[r.clone()];
            let phi = &self.phi[r];
            for a in 0..k {
                let j = cols.at(a);
                let d = phi[a] * yi * x[a];
                acc[j] -= d * (u[a] - self.v[j] * zl);
            }
            acc[n] -= yi * mu;
            off += k + 2;
        }
    }

    /// Pass 2 of a solve on examples `i0..i1` (corrected eq. (18)):
    /// `[z_i; μ_i] = K_i⁻¹ ([r_i; 0] − M_i z_B)` in place on their tail `rl`.
    fn solve_backward<'s, C: Cols + 's>(
        &'s self,
        (i0, i1): (usize, usize),
        rb: &[f64],
        rl: &mut [f64],
        cols_of: &(impl Fn(&'s [usize], Range<usize>) -> C + Sync),
    ) {
        let n = self.n;
        let zb = rb[n];
        let mut off = 0;
        for i in i0..i1 {
            let r = self.nz_range(i);
            let k = r.len();
            let cols = cols_of(&self.indices, r.clone());
            let u = &mut rl[off..off + k + 2];
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let phi = &self.phi[r.clone()];
            // four accumulators (a single sum is a latency-bound chain)
            let c4 = k / 4 * 4;
            let mut l4 = [0.0f64; 4];
            let mut a = 0;
            while a < c4 {
                for (l, acc) in l4.iter_mut().enumerate() {
                    let j = cols.at(a + l);
                    let dw = phi[a + l] * yi * x[a + l] * rb[j];
                    u[a + l] -= dw;
                    *acc += self.v[j] * dw;
                }
                a += 4;
            }
            let mut lam = (l4[0] + l4[1]) + (l4[2] + l4[3]);
            for a in c4..k {
                let j = cols.at(a);
                let dw = phi[a] * yi * x[a] * rb[j];
                u[a] -= dw;
                lam += self.v[j] * dw;
            }
            u[k] += lam;
            self.example_solve(i, r, cols, u, -yi * zb);
            off += k + 2;
        }
    }

    /// The two example halves of the solve passes (split at [`DsxSystem::solve_mid`], fixed by
    /// the data): on two threads when `par` allows, else one after the other. Pass 1 sums each
    /// half into its own accumulator and adds them in order, so the result is the same bits
    /// either way.
    fn solve_impl<'s, C: Cols + 's>(
        &'s self,
        rhs: &mut [f64],
        (ubuf0, ubuf1, part): &mut (Vec<f64>, Vec<f64>, Vec<f64>),
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C + Sync,
    ) {
        let n = self.n;
        let n1 = n + 1;
        let mid = self.solve_mid;
        let cut = self.indptr[mid] + 2 * mid;
        let par = self.settings.threads >= 2 && self.m >= 2;
        let (rb, rl) = rhs.split_at_mut(n1);
        // Pass 1 (eqs. (15), (17)): ẑ_i = K_i⁻¹ [r_i; 0]; r_B −= M_iᵀ ẑ_i.
        part.fill(0.0);
        {
            let (rl_a, rl_b) = rl.split_at(cut);
            let (h0, h1) = ((0, mid), (mid, self.m));
            let (rb_a, part_b) = (&mut *rb, &mut part[..]);
            let (ub0, ub1) = (&mut ubuf0[..], &mut ubuf1[..]);
            if par {
                rayon::join(
                    || self.solve_forward(h0, rl_a, rb_a, ub0, &cols_of),
                    || self.solve_forward(h1, rl_b, part_b, ub1, &cols_of),
                );
            } else {
                self.solve_forward(h0, rl_a, rb_a, ub0, &cols_of);
                self.solve_forward(h1, rl_b, part_b, ub1, &cols_of);
            }
        }
        for (o, p) in rb.iter_mut().zip(part.iter()) {
            *o += p;
        }
        // Eq. (17): S z_B = r_B − Σ M_iᵀ ẑ_i.
        let l = MatRef::from_column_major_slice(&self.s, n1, n1);
        solve_lower_triangular_in_place(
            l,
            MatMut::from_column_major_slice_mut(rb, n1, 1),
            self.settings.par,
        );
        solve_upper_triangular_in_place(
            l.transpose(),
            MatMut::from_column_major_slice_mut(rb, n1, 1),
            self.settings.par,
        );
        // Pass 2 (corrected eq. (18)): [z_i; μ_i] = K_i⁻¹ ([r_i; 0] − M_i z_B).
        let (rl_a, rl_b) = rl.split_at_mut(cut);
        let rb = &*rb;
        if par {
            rayon::join(
                || self.solve_backward((0, mid), rb, rl_a, &cols_of),
                || self.solve_backward((mid, self.m), rb, rl_b, &cols_of),
            );
        } else {
            self.solve_backward((0, mid), rb, rl_a, &cols_of);
            self.solve_backward((mid, self.m), rb, rl_b, &cols_of);
        }
    }

    /// `out = H z` with the exact operator (no static regularisation), matrix-free in
    /// `O(nnz)`. Panics if the lengths are wrong or the scalings do not match the system.
    pub fn apply(&self, sc: &DsxScalings<'_>, z: &[f64], out: &mut [f64]) {
        assert_eq!(z.len(), self.len(), "z has the wrong length");
        assert_eq!(out.len(), self.len(), "out has the wrong length");
        assert_eq!(sc.theta.len(), self.m, "theta has the wrong length");
        assert_eq!(sc.phi.len(), self.nnz(), "phi has the wrong length");
        assert_eq!(sc.sigma.len(), self.nnz(), "sigma has the wrong length");
        assert_eq!(sc.w_diag.len(), self.n, "w_diag has the wrong length");
        if self.dense {
            self.apply_impl(sc, z, out, |_, _| Ident);
        } else {
            self.apply_impl(sc, z, out, |idx, r| &idx[r]);
        }
    }

    fn apply_impl<'s, C: Cols + 's>(
        &'s self,
        sc: &DsxScalings<'_>,
        z: &[f64],
        out: &mut [f64],
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C,
    ) {
        let n = self.n;
        let n1 = n + 1;
        let (zb, zl) = z.split_at(n1);
        let (ob, ol) = out.split_at_mut(n1);
        for j in 0..n {
            ob[j] = sc.w_diag[j] * zb[j];
        }
        ob[n] = sc.b_diag * zb[n];
        self.apply_range::<C, false>(sc, (0, self.m), zb, zl, &[], ol, ob, &cols_of);
    }

    /// The examples `i0..i1` of `H z` (their tails `zl`, `rl`, `ol` start at example `i0`):
    /// writes their tail rows of `H z` — or, with `RES`, of `r − H z` — into `ol`, adds their
    /// `(w, b)` contributions to `acc`, and returns the sum of squares of what it wrote when
    /// `RES` (else 0).
    #[allow(clippy::too_many_arguments)]
    fn apply_range<'s, C: Cols + 's, const RES: bool>(
        &'s self,
        sc: &DsxScalings<'_>,
        (i0, i1): (usize, usize),
        zb: &[f64],
        zl: &[f64],
        rl: &[f64],
        ol: &mut [f64],
        acc: &mut [f64],
        cols_of: &impl Fn(&'s [usize], Range<usize>) -> C,
    ) -> f64 {
        let n = self.n;
        let mut off = 0;
        let mut sq = 0.0;
        for i in i0..i1 {
            let r = self.nz_range(i);
            let k = r.len();
            let cols = cols_of(&self.indices, r.clone());
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let phi = &sc.phi[r.clone()];
            let sigma = &sc.sigma[r];
            let u = &zl[off..off + k + 2];
            let o = &mut ol[off..off + k + 2];
            let (lam, xi) = (u[k], u[k + 1]);
            // row a_i: P_i λ − Σ α + y b + ξ
            let mut act = self.p_eff[i] * lam + yi * zb[n] + xi;
            for a in 0..k {
                act -= u[a];
            }
            let ta = sc.theta[i] * act;
            let mut ol_lam = sc.rho[i] * lam + self.p_eff[i] * ta;
            for a in 0..k {
                let j = cols.at(a);
                // row b_ij: y x_ij w_j − v_j λ + α_ij
                let fb = phi[a] * (yi * x[a] * zb[j] - self.v[j] * lam + u[a]);
                let h = sigma[a] * u[a] - ta + fb;
                if RES {
                    let e = rl[off + a] - h;
                    o[a] = e;
                    sq += e * e;
                } else {
                    o[a] = h;
                }
                ol_lam -= self.v[j] * fb;
                acc[j] += yi * x[a] * fb;
            }
            let hx = sc.kappa[i] * xi + ta;
            if RES {
                let (el, ex) = (rl[off + k] - ol_lam, rl[off + k + 1] - hx);
                o[k] = el;
                o[k + 1] = ex;
                sq += el * el + ex * ex;
            } else {
                o[k] = ol_lam;
                o[k + 1] = hx;
            }
            acc[n] += yi * ta;
            off += k + 2;
        }
        sq
    }

    /// `H z` (`RES = false`) or `r − H z` (`RES = true`, returning `‖r − H z‖₂`) into `out`,
    /// on the two example halves of the solve passes (two threads when the settings allow;
    /// each half accumulates its own `(w, b)` part and the two are added in order, so the
    /// result is the same bits either way).
    fn apply_halves<const RES: bool>(
        &mut self,
        sc: &DsxScalings<'_>,
        z: &[f64],
        r: &[f64],
        out: &mut [f64],
    ) -> f64 {
        let mut part = core::mem::take(&mut self.rb_part);
        let res = if self.dense {
            self.apply_halves_impl::<_, RES>(sc, z, r, out, &mut part, |_, _| Ident)
        } else {
            self.apply_halves_impl::<_, RES>(sc, z, r, out, &mut part, |idx, r| &idx[r])
        };
        self.rb_part = part;
        res
    }

    fn apply_halves_impl<'s, C: Cols + 's, const RES: bool>(
        &'s self,
        sc: &DsxScalings<'_>,
        z: &[f64],
        r: &[f64],
        out: &mut [f64],
        part: &mut [f64],
        cols_of: impl Fn(&'s [usize], Range<usize>) -> C + Sync,
    ) -> f64 {
        let n = self.n;
        let n1 = n + 1;
        let mid = self.solve_mid;
        let cut = self.indptr[mid] + 2 * mid;
        let par = self.settings.threads >= 2 && self.m >= 2;
        let (zb, zl) = z.split_at(n1);
        let (ob, ol) = out.split_at_mut(n1);
        let (rb, rl) = if RES {
            r.split_at(n1)
        } else {
            (&[][..], &[][..])
        };
        let (rl_a, rl_b) = if RES { rl.split_at(cut) } else { (rl, rl) };
        let (zl_a, zl_b) = zl.split_at(cut);
        let (ol_a, ol_b) = ol.split_at_mut(cut);
        ob.fill(0.0);
        part.fill(0.0);
        let (h0, h1) = ((0, mid), (mid, self.m));
        let (sq_a, sq_b) = {
            let (ob, part) = (&mut *ob, &mut *part);
            let cols = &cols_of;
            if par {
                rayon::join(
                    || self.apply_range::<C, RES>(sc, h0, zb, zl_a, rl_a, ol_a, ob, cols),
                    || self.apply_range::<C, RES>(sc, h1, zb, zl_b, rl_b, ol_b, part, cols),
                )
            } else {
                (
                    self.apply_range::<C, RES>(sc, h0, zb, zl_a, rl_a, ol_a, ob, cols),
                    self.apply_range::<C, RES>(sc, h1, zb, zl_b, rl_b, ol_b, part, cols),
                )
            }
        };
        let mut sq = sq_a + sq_b;
        for j in 0..n1 {
            let d = if j < n { sc.w_diag[j] } else { sc.b_diag };
            let h = d * zb[j] + (ob[j] + part[j]);
            if RES {
                let e = rb[j] - h;
                ob[j] = e;
                sq += e * e;
            } else {
                ob[j] = h;
            }
        }
        if !RES {
            return 0.0;
        }
        // the plain sum of squares unless it over- or underflowed
        if sq.is_finite() && sq > 1e-280 {
            sq.sqrt()
        } else {
            norm2(out)
        }
    }

    /// `out = G z` (row activities, length [`DsxSystem::n_rows`]): per example `i`, at
    /// [`DsxSystem::row_offset`]`(i)`, row `a_i = P_i λ_i − Σ α_ij + y_i b + ξ_i`, then rows
    /// `b_ij = y_i x_ij w_j − v_j λ_i + α_ij` in increasing `j`. `O(nnz)`.
    pub fn rows_apply(&self, z: &[f64], out: &mut [f64]) {
        assert_eq!(z.len(), self.len(), "z has the wrong length");
        assert_eq!(out.len(), self.n_rows(), "out has the wrong length");
        let n = self.n;
        let (zb, zl) = z.split_at(n + 1);
        let mut off = 0;
        for i in 0..self.m {
            let r = self.nz_range(i);
            let k = r.len();
            let ro = self.row_offset(i);
            let u = &zl[off..off + k + 2];
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let mut act = self.p_eff[i] * u[k] + yi * zb[n] + u[k + 1];
            for (a, j) in self.support(i).enumerate() {
                act -= u[a];
                out[ro + 1 + a] = yi * x[a] * zb[j] - self.v[j] * u[k] + u[a];
            }
            out[ro] = act;
            off += k + 2;
        }
    }

    /// `out = Gᵀ yv` (length [`DsxSystem::len`]) for row values `yv` ordered as in
    /// [`DsxSystem::rows_apply`]. `O(nnz)`.
    pub fn rows_apply_transpose(&self, yv: &[f64], out: &mut [f64]) {
        assert_eq!(yv.len(), self.n_rows(), "yv has the wrong length");
        assert_eq!(out.len(), self.len(), "out has the wrong length");
        let n = self.n;
        let (ob, ol) = out.split_at_mut(n + 1);
        ob.iter_mut().for_each(|e| *e = 0.0);
        let mut off = 0;
        for i in 0..self.m {
            let r = self.nz_range(i);
            let k = r.len();
            let ro = self.row_offset(i);
            let yi = self.y[i];
            let x = &self.x[r.clone()];
            let ya = yv[ro];
            let o = &mut ol[off..off + k + 2];
            let mut lam = self.p_eff[i] * ya;
            for (a, j) in self.support(i).enumerate() {
                let yb = yv[ro + 1 + a];
                o[a] = -ya + yb;
                lam -= self.v[j] * yb;
                ob[j] += yi * x[a] * yb;
            }
            o[k] = lam;
            o[k + 1] = ya;
            ob[n] += yi * ya;
            off += k + 2;
        }
    }

    /// Solves `H z = rhs` for the exact `H` (no static regularisation) by preconditioned
    /// conjugate gradients, preconditioned by the current factorisation of `H + δI`, starting
    /// from the direct solve. Stops when `‖rhs − H z‖₂ ≤ tol ‖rhs‖₂`, after `max_iter`
    /// iterations, or when an iteration fails to halve the true residual (stagnation at the
    /// rounding floor), and returns the best iterate (smallest true residual). No allocation.
    ///
    /// `sc` must be the scalings passed to the last [`DsxSystem::factor`].
    pub fn solve_refined(
        &mut self,
        sc: &DsxScalings<'_>,
        rhs: &[f64],
        z: &mut [f64],
        tol: f64,
        max_iter: usize,
    ) -> Result<RefineInfo> {
        if !self.factored {
            return Err(LinalgError::NotFactored);
        }
        let len = self.len();
        check_len("rhs", len, rhs.len())?;
        check_len("z", len, z.len())?;
        let rnorm = norm2_fast(rhs);
        if rnorm == 0.0 {
            z.iter_mut().for_each(|e| *e = 0.0);
            return Ok(RefineInfo {
                iterations: 0,
                relative_residual: 0.0,
            });
        }
        let [mut res, mut pre, mut dir, mut hd, mut best] = core::mem::take(&mut self.refine);
        let out = (|| {
            z.copy_from_slice(rhs);
            self.solve_in_place(z)?;
            // res = rhs − H z
            let mut rel = self.apply_halves::<true>(sc, z, rhs, &mut res) / rnorm;
            let mut it = 0;
            if rel <= tol || max_iter == 0 {
                return Ok(RefineInfo {
                    iterations: 0,
                    relative_residual: rel,
                });
            }
            let mut best_rel = rel;
            best.copy_from_slice(z);
            pre.copy_from_slice(&res);
            self.solve_in_place(&mut pre)?;
            dir.copy_from_slice(&pre);
            let mut rz = dot(&res, &pre);
            while it < max_iter {
                it += 1;
                let prev = rel;
                self.apply_halves::<false>(sc, &dir, &[], &mut hd);
                let dhd = dot(&dir, &hd);
                if !(dhd > 0.0 && rz.is_finite()) {
                    break;
                }
                let alpha = rz / dhd;
                for t in 0..len {
                    z[t] += alpha * dir[t];
                }
                // Recompute the true residual (robust against recurrence drift).
                rel = self.apply_halves::<true>(sc, z, rhs, &mut res) / rnorm;
                if !rel.is_finite() {
                    break;
                }
                // CG does not decrease ‖r‖₂ monotonically: keep the best iterate.
                if rel < best_rel {
                    best_rel = rel;
                    best.copy_from_slice(z);
                }
                // Stagnation: at the rounding floor of computing `H z` itself (an ill-conditioned
                // `H` near an IPM's optimum), PCG cannot lower the residual further; measured at
                // MNIST scale (10000 × 784), the true residual stayed within 0.5–2× of the
                // direct solve's for 4 iterations. Stop once an iteration fails to halve it.
                if rel <= tol || rel > STALL_RATIO * prev {
                    break;
                }
                pre.copy_from_slice(&res);
                self.solve_in_place(&mut pre)?;
                let rz_new = dot(&res, &pre);
                let beta = rz_new / rz;
                rz = rz_new;
                for t in 0..len {
                    dir[t] = pre[t] + beta * dir[t];
                }
            }
            if !(rel <= best_rel) {
                z.copy_from_slice(&best);
            }
            Ok(RefineInfo {
                iterations: it,
                relative_residual: best_rel.min(rel),
            })
        })();
        self.refine = [res, pre, dir, hd, best];
        out
    }

    /// Dense assembly of `H + δ I` (for tests and debugging on small instances: `O(len²)`
    /// memory).
    pub fn assemble_dense(&self, sc: &DsxScalings<'_>, delta: f64) -> faer::Mat<f64> {
        let len = self.len();
        let mut h = faer::Mat::<f64>::zeros(len, len);
        let mut e = vec![0.0; len];
        let mut col = vec![0.0; len];
        for c in 0..len {
            e[c] = 1.0;
            self.apply(sc, &e, &mut col);
            e[c] = 0.0;
            for rr in 0..len {
                h[(rr, c)] = col[rr];
            }
            h[(c, c)] += delta;
        }
        h
    }
}

/// Read-only data shared by the per-example kernels (and threads).
#[derive(Debug, Clone, Copy)]
struct Shared<'a> {
    n: usize,
    dense: bool,
    delta: f64,
    gemm: bool,
    indptr: &'a [usize],
    indices: &'a [usize],
    x: &'a [f64],
    v: &'a [f64],
    y: &'a [f64],
    p_eff: &'a [f64],
}

/// Per-thread scratch of the factorisation (sized in the constructor).
#[derive(Debug, Clone)]
struct Work {
    kbuf1: Vec<f64>,
    kbuf2: Vec<f64>,
    kbuf3: Vec<f64>,
    vbuf: Vec<f64>,
    /// Contiguous accumulators for diag(S_ww) and S_wb (S's diagonal and last row are strided).
    acc_diag: Vec<f64>,
    acc_wb: Vec<f64>,
}

impl Work {
    fn new(n: usize, max_k: usize) -> Self {
        Self {
            kbuf1: vec![0.0; max_k + 2],
            kbuf2: vec![0.0; max_k + 2],
            kbuf3: vec![0.0; max_k + 2],
            vbuf: vec![0.0; max_k + 2],
            acc_diag: vec![0.0; n],
            acc_wb: vec![0.0; n],
        }
    }
}

/// Examples `i0..i1`: `inv_delta`, `phi_store` start at `indptr[i0]`, `ex` at `i0`. `g1`, `g2`
/// receive the two rank-one vectors: for the GEMM kernel (`sh.gemm`) as dense block columns
/// (`n` rows each, column 0 = example `i0`), for the scatter kernel over the supports, at
/// `indptr[i] − indptr[i0]` (the chunk store). Returns `acc + Σ τ_i` (summed in order).
fn factor_range(
    sh: &Shared<'_>,
    sc: &DsxScalings<'_>,
    i0: usize,
    i1: usize,
    acc: f64,
    inv_delta: &mut [f64],
    phi_store: &mut [f64],
    ex: &mut [ExampleFactor],
    g1: &mut [f64],
    g2: &mut [f64],
    wk: &mut Work,
) -> Result<f64> {
    let n = sh.n;
    let base = sh.indptr[i0];
    let mut sbb = acc;
    for i in i0..i1 {
        let r = sh.indptr[i]..sh.indptr[i + 1];
        let lr = r.start - base..r.end - base;
        let c = i - i0;
        let out = if sh.gemm {
            GOut::Gemm(&mut g1[c * n..(c + 1) * n], &mut g2[c * n..(c + 1) * n])
        } else {
            GOut::Store(&mut g1[lr.clone()], &mut g2[lr.clone()])
        };
        let (inv, ph) = (&mut inv_delta[lr.clone()], &mut phi_store[lr]);
        let e = if sh.dense {
            factor_example(sh, sc, i, r, Ident, inv, ph, out, wk)?
        } else {
            let cols = &sh.indices[r.clone()];
            factor_example(sh, sc, i, r, cols, inv, ph, out, wk)?
        };
        sbb += e.p22;
        ex[c] = e;
    }
    Ok(sbb)
}

/// Where [`factor_example`] writes the example's two rank-one vectors `g1`, `g2`.
enum GOut<'a> {
    /// Zero-filled GEMM block columns of length `n` (scattered by support).
    Gemm(&'a mut [f64], &'a mut [f64]),
    /// The chunk store of the scatter kernel (length `k`, support order).
    Store(&'a mut [f64], &'a mut [f64]),
}

/// Per-example closed form; returns `τ_i = s_i/D_i` (example `i`'s contribution to
/// `S_bb`). Writes the two rank-one vectors into `out` (a GEMM block column or the scatter
/// kernel's chunk store), and accumulates the diagonal of `S_ww` and the column `S_wb`.
///
/// Elimination order: the arrow pivots `Δ_ij` (α) and `κ_i` (ξ) first, then the 2×2
/// quasi-definite corner on `(λ_i, μ_i)` with `μ_i = θ_i (a_i·z)` the multiplier of row
/// `a_i` (DSX eqs. (19)–(21) written as an augmented arrow solve instead of SMW):
/// `C2 = [[s, −t], [−t, −(1/θ + w)]]`, `det C2 = −D`, `D = s/θ + s w + t² > 0`
/// (sum of non-negative terms: no cancellation, no division by `s` alone).
#[inline]
fn factor_example<C: Cols>(
    sh: &Shared<'_>,
    sc: &DsxScalings<'_>,
    i: usize,
    r: Range<usize>,
    cols: C,
    inv_delta: &mut [f64],
    phi_store: &mut [f64],
    out: GOut<'_>,
    wk: &mut Work,
) -> Result<ExampleFactor> {
    let k = r.len();
    let delta = sh.delta;
    let phi = &sc.phi[r.clone()];
    let sigma = &sc.sigma[r.clone()];
    let x = &sh.x[r.clone()];
    let vloc = cols.gather(k, sh.v, &mut wk.vbuf);
    let pi = sh.p_eff[i];
    let yi = sh.y[i];
    // Pass 1: arrow pivots Δ_ij = φ_ij + σ_ij + δ; s_i, t_i, w_i (contiguous, no indexing).
    let mut sum_s = 0.0;
    let mut t_part = 0.0;
    let mut sum_inv = 0.0;
    let mut min_piv = f64::INFINITY;
    let dg = &mut wk.kbuf3[..k];
    for (((((&ph, &sg), &xa), &vj), inv), dga) in phi
        .iter()
        .zip(sigma)
        .zip(x)
        .zip(vloc)
        .zip(inv_delta.iter_mut())
        .zip(dg.iter_mut())
    {
        let sd = sg + delta;
        let dl = ph + sd;
        min_piv = min_piv.min(dl);
        let id = 1.0 / dl;
        *inv = id;
        let fv = ph * vj * id;
        sum_s += fv * vj * sd; // φ v² (σ+δ)/Δ
        t_part += fv; // φ v /Δ
        sum_inv += id;
        // diag(S_ww) += φ x² (σ+δ)/Δ = φ x² − d²/Δ  (computed without cancellation)
        *dga = ph * xa * xa * sd * id;
    }
    if !(min_piv > 0.0) {
        // scalings are validated finite and ≥ 0, so the only failure is Δ_ij = 0
        let a = phi
            .iter()
            .zip(sigma)
            .position(|(&ph, &sg)| !(ph + sg + delta > 0.0))
            .unwrap_or(0);
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: a,
            value: phi[a] + sigma[a] + delta,
        });
    }
    phi_store.copy_from_slice(phi);
    cols.scatter_add(&mut wk.acc_diag, dg);
    let kap = sc.kappa[i] + delta;
    if !(kap > 0.0) {
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: k + 1,
            value: kap,
        });
    }
    // s_i = γ_i − Σ c²/Δ = ρ_i + δ + Σ φ v² (σ+δ)/Δ  (arrow pivot of λ, no cancellation)
    let s = sc.rho[i] + delta + sum_s;
    if !(s > 0.0) {
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: k,
            value: s,
        });
    }
    // t_i = Σ φ v/Δ − P_i ;  w_i = Σ 1/Δ + 1/κ ;  ζ_i = 1/(1/θ + w) = θ/(1 + θ w)
    let t = t_part - pi;
    let w = sum_inv + 1.0 / kap;
    let theta = sc.theta[i];
    let zeta = theta / (1.0 + theta * w);
    // C2⁻¹ = [[p11, −p12], [−p12, −p22]],  p11 = 1/(s + t² ζ) = (1/θ + w)/D,
    // p12 = t ζ p11 = t/D,  p22 = s ζ p11 = s/D = τ_i.
    let p11 = 1.0 / (s + t * t * zeta);
    let p12 = t * zeta * p11;
    let p22 = s * zeta * p11;
    if !(p11.is_finite() && p12.is_finite() && p22.is_finite()) {
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: k,
            value: s + t * t * zeta,
        });
    }
    let ex = ExampleFactor {
        p11,
        p12,
        p22,
        inv_kappa: 1.0 / kap,
        inv_theta: 1.0 / theta,
        rec: if kap < min_piv {
            if theta > kap { (k + 1) as u32 } else { NO_REC }
        } else if theta > min_piv {
            inv_delta
                .iter()
                .enumerate()
                .fold(
                    (0, 0.0),
                    |(ia, best), (a, &id)| {
                        if id > best { (a, id) } else { (ia, best) }
                    },
                )
                .0 as u32
        } else {
            NO_REC
        },
    };
    let sq_p11 = p11.sqrt();
    let sq_zeta = zeta.sqrt();
    let tz = t * zeta;
    // Pass 2: with d_j = φ_j y x_j, e_j = d_j/Δ_j, r1_j = d_j v_j (σ_j+δ)/Δ_j, example i
    // contributes to S_ww
    //     − p11 (r1 + tζ e)(r1 + tζ e)ᵀ + ζ e eᵀ        (G1 row, G2 row)
    // each family bounded entrywise by the diagonal scale φ x² (no 1/s blow-up), and
    // S_wb += y (p22 e − p12 r1),  S_bb += p22.
    let (g1, g2, gemm_cols) = match out {
        GOut::Gemm(gc1, gc2) => (&mut wk.kbuf1[..k], &mut wk.kbuf2[..k], Some((gc1, gc2))),
        GOut::Store(g1, g2) => (g1, g2, None),
    };
    let wb = &mut wk.kbuf3[..k];
    for ((((((&ph, &sg), &xa), &vj), &id), (g1a, g2a)), wba) in phi
        .iter()
        .zip(sigma)
        .zip(x)
        .zip(vloc)
        .zip(inv_delta.iter())
        .zip(g1.iter_mut().zip(g2.iter_mut()))
        .zip(wb.iter_mut())
    {
        let e = ph * yi * xa * id;
        let r1 = e * vj * (sg + delta);
        *g1a = sq_p11 * (r1 + tz * e);
        *g2a = sq_zeta * e;
        *wba = yi * (p22 * e - p12 * r1);
    }
    cols.scatter_add(&mut wk.acc_wb, wb);
    if let Some((gc1, gc2)) = gemm_cols {
        cols.scatter_set(gc1, g1);
        cols.scatter_set(gc2, g2);
    }
    Ok(ex)
}

/// Blocking plan and buffers of the sparse-scatter kernel, built once from the sparsity
/// pattern (constructor or [`DsxSystem::set_settings`]); `factor` only reads the plan.
#[derive(Debug, Clone, Default)]
struct ScatterPlan {
    /// Example boundaries of the chunks: chunk `c` is `chunks[c]..chunks[c + 1]`.
    chunks: Vec<usize>,
    /// Column boundaries of the bands of `S_ww` (`bands[0] = 0`, last `= n`).
    bands: Vec<usize>,
    /// Bands `..split` go to the first thread, `split..` to the second.
    split: usize,
    /// `g1`, `g2` of one chunk, in storage order (length: the largest chunk's nnz); the second
    /// store (empty with `Par::Seq`) lets the two-thread pipeline fill one while reading the
    /// other.
    g1: [Vec<f64>; 2],
    g2: [Vec<f64>; 2],
    /// Per-thread support cursors, one per example of a chunk.
    cursors: [Vec<usize>; 2],
}

/// Maximum stored entries per chunk of the scatter kernel (unless one example has more): the
/// chunk's `g1`, `g2` take `2 · 8 · SCATTER_CHUNK_NNZ` bytes = 1 MiB, half the L2. Tuned by
/// measurement, see [`DsxSystem::schur_scatter`].
const SCATTER_CHUNK_NNZ: usize = 1 << 16;
/// Target lower-triangle entries (doubles) per band of `S_ww`: 128 KiB (tuned, ibid.).
const SCATTER_BAND_DOUBLES: usize = 1 << 14;
/// Cost of the per-example pass per stored entry, in units of one scatter update of `S`
/// (measured ≈ 10 on the 10000×784, 19 % case): balances the two-thread split.
const SCATTER_PASS_COST: f64 = 10.0;

impl ScatterPlan {
    fn new(
        n: usize,
        dense: bool,
        indptr: &[usize],
        indices: &[usize],
        two_threads: bool,
        chunk_nnz: usize,
        band_doubles: usize,
        pass_cost: f64,
    ) -> Self {
        let m = indptr.len() - 1;
        // Chunks: consecutive examples with at most `chunk_nnz` stored entries (at least one
        // example each).
        let mut chunks = vec![0];
        let (mut max_nnz, mut max_ex) = (0, 0);
        let mut start = 0;
        for i in 0..m {
            if i > start && indptr[i + 1] - indptr[start] > chunk_nnz {
                chunks.push(i);
                start = i;
            }
            max_nnz = max_nnz.max(indptr[i + 1] - indptr[start]);
            max_ex = max_ex.max(i + 1 - start);
        }
        chunks.push(m);
        // Exact update count of each column of S_ww: example i updates rows S_i[a..] of column
        // S_i[a].
        let mut work = vec![0.0f64; n];
        for i in 0..m {
            let k = indptr[i + 1] - indptr[i];
            for a in 0..k {
                let j = if dense { a } else { indices[indptr[i] + a] };
                work[j] += (k - a) as f64;
            }
        }
        // Two-thread split: the first thread also runs the per-example pass, so it gets
        // `(total − pass)/2` updates (the first column where the cumulative count reaches it).
        let total: f64 = work.iter().sum();
        let target = 0.5 * (total - pass_cost * indptr[m] as f64);
        let mut acc = 0.0;
        let mut split_col = n;
        for (j, &wj) in work.iter().enumerate() {
            if acc >= target {
                split_col = j;
                break;
            }
            acc += wj;
        }
        // Bands: each side of the split cut into equal-area parts of the lower triangle (column
        // j holds n − j entries of S_ww) of at most about `band_doubles` entries.
        let mut bands = vec![0];
        let mut split = 0;
        for (lo, hi) in [(0, split_col), (split_col, n)] {
            if lo < hi {
                let area = |j: usize| (n - j) as f64;
                let total: f64 = (lo..hi).map(area).sum();
                let nb = (total / band_doubles as f64).ceil().max(1.0);
                let mut acc = 0.0;
                let mut b = 1.0;
                for j in lo..hi {
                    acc += area(j);
                    if acc >= total * b / nb && j + 1 < hi {
                        bands.push(j + 1);
                        b += 1.0;
                    }
                }
                bands.push(hi);
            }
            if lo == 0 {
                split = bands.len() - 1;
            }
        }
        let second = if two_threads { max_nnz } else { 0 };
        Self {
            chunks,
            bands,
            split,
            g1: [vec![0.0; max_nnz], vec![0.0; second]],
            g2: [vec![0.0; max_nnz], vec![0.0; second]],
            cursors: [
                vec![0; max_ex],
                vec![0; if two_threads { max_ex } else { 0 }],
            ],
        }
    }
}

/// The per-example pass of the scatter kernel over consecutive chunks (sequential, in example
/// order: `acc_diag`, `acc_wb` and `Σ τ_i` are summed exactly as by the unblocked kernel).
struct ExamplePass<'a, 'b> {
    sh: &'a Shared<'a>,
    sc: &'a DsxScalings<'b>,
    group: usize,
    tau: f64,
    sbb: &'a mut f64,
    inv_delta: &'a mut [f64],
    phi: &'a mut [f64],
    ex: &'a mut [ExampleFactor],
    wk: &'a mut Work,
}

impl ExamplePass<'_, '_> {
    /// Examples `i0..i1` (one chunk): `g1`, `g2` receive the chunk's rank-one vectors.
    fn run(&mut self, i0: usize, i1: usize, g1: &mut [f64], g2: &mut [f64]) -> Result<()> {
        let indptr = self.sh.indptr;
        let nz0 = indptr[i0];
        let m = indptr.len() - 1;
        let mut a = i0;
        while a < i1 {
            let b = ((a / self.group + 1) * self.group).min(i1);
            let (za, zb) = (indptr[a], indptr[b]);
            self.tau = factor_range(
                self.sh,
                self.sc,
                a,
                b,
                self.tau,
                &mut self.inv_delta[za..zb],
                &mut self.phi[za..zb],
                &mut self.ex[a..b],
                &mut g1[za - nz0..zb - nz0],
                &mut g2[za - nz0..zb - nz0],
                self.wk,
            )?;
            if b.is_multiple_of(self.group) || b == m {
                *self.sbb += self.tau;
                self.tau = 0.0;
            }
            a = b;
        }
        Ok(())
    }
}

/// Updates the columns `bands[0]..bands[last]` of `S_ww` (in `s`, which starts at column
/// `bands[0]`) with the rank-one terms of examples `i0..i1` (`g1`, `g2`: the chunk store),
/// band by band, each band by every example in order.
fn update_bands(
    sh: &Shared<'_>,
    i0: usize,
    i1: usize,
    g1: &[f64],
    g2: &[f64],
    bands: &[usize],
    s: &mut [f64],
    cur: &mut [usize],
) {
    if bands.len() < 2 {
        return;
    }
    // compiled for the best instruction set of the CPU (FMA where available; `mul_add` is
    // exactly rounded on every path, so the bits do not depend on it)
    pulp::Arch::new().dispatch(UpdateBands {
        sh,
        i0,
        i1,
        g1,
        g2,
        bands,
        s,
        cur,
    });
}

/// [`update_bands`] as a [`pulp::WithSimd`] operation: its body is inlined into each
/// instruction-set variant (a plain closure would not be, and its `mul_add`s would become
/// calls to the software `fma`).
struct UpdateBands<'a, 'b> {
    sh: &'a Shared<'b>,
    i0: usize,
    i1: usize,
    g1: &'a [f64],
    g2: &'a [f64],
    bands: &'a [usize],
    s: &'a mut [f64],
    cur: &'a mut [usize],
}

impl pulp::WithSimd for UpdateBands<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let (sh, i0, i1) = (self.sh, self.i0, self.i1);
        let (g1, g2, bands, s, cur) = (self.g1, self.g2, self.bands, self.s, self.cur);
        if sh.dense {
            update_bands_cols(sh, i0, i1, g1, g2, bands, s, cur, |_| Ident);
        } else {
            let (indptr, indices) = (sh.indptr, sh.indices);
            update_bands_cols(sh, i0, i1, g1, g2, bands, s, cur, |i| {
                &indices[indptr[i]..indptr[i + 1]]
            });
        }
    }
}

/// One entry of an example's rank-two update of `S_ww`, `s + c2·h2 − c1·h1` (DSX eqs.
/// (19)–(21), pass 2 of [`factor_example`]), as two fused multiply-adds: `(s − c1·h1) + c2·h2`.
#[inline(always)]
fn rank2(s: f64, c1: f64, c2: f64, h1: f64, h2: f64) -> f64 {
    c2.mul_add(h2, (-c1).mul_add(h1, s))
}

#[inline(always)]
fn update_bands_cols<'c, C: Cols + 'c>(
    sh: &Shared<'_>,
    i0: usize,
    i1: usize,
    g1: &[f64],
    g2: &[f64],
    bands: &[usize],
    s: &mut [f64],
    cur: &mut [usize],
    support: impl Fn(usize) -> C,
) {
    let n1 = sh.n + 1;
    let base = sh.indptr[i0];
    let c_base = bands[0];
    for (i, cu) in (i0..i1).zip(cur.iter_mut()) {
        let k = sh.indptr[i + 1] - sh.indptr[i];
        let cols = support(i);
        // first support position in this thread's columns (once per chunk and thread)
        *cu = if c_base == 0 {
            0
        } else {
            let (mut lo, mut hi) = (0, k);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if cols.at(mid) < c_base {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
    }
    for band in bands.windows(2) {
        let c1 = band[1];
        for (i, cu) in (i0..i1).zip(cur.iter_mut()) {
            let r = sh.indptr[i] - base..sh.indptr[i + 1] - base;
            let k = r.len();
            let cols = support(i);
            let a0 = *cu;
            let mut a1 = a0;
            while a1 < k && cols.at(a1) < c1 {
                a1 += 1;
            }
            *cu = a1;
            if a1 > a0 {
                scatter_columns(cols, a0, a1, &g1[r.clone()], &g2[r], s, c_base, n1);
            }
        }
    }
}

/// `S[S_i[r], S_i[a]] += g2[a] g2[r] − g1[a] g1[r]` for `a ∈ a0..a1`, `r ≥ a` (`s` starts at
/// column `c_base`, columns of length `n1`). Four columns per sweep (then two, then one): each
/// loaded (index, g1, g2) triple feeds eight fused multiply-adds ([`rank2`]).
#[inline(always)]
fn scatter_columns<C: Cols>(
    cols: C,
    a0: usize,
    a1: usize,
    g1: &[f64],
    g2: &[f64],
    s: &mut [f64],
    c_base: usize,
    n1: usize,
) {
    let k = g1.len();
    let n = n1 - 1;
    let mut a = a0;
    while a + 3 < a1 {
        let j = [cols.at(a), cols.at(a + 1), cols.at(a + 2), cols.at(a + 3)];
        let c1 = [g1[a], g1[a + 1], g1[a + 2], g1[a + 3]];
        let c2 = [g2[a], g2[a + 1], g2[a + 2], g2[a + 3]];
        let (rest, right) = s.split_at_mut((j[3] - c_base) * n1);
        let col_d = &mut right[..n];
        let (rest, right) = rest.split_at_mut((j[2] - c_base) * n1);
        let col_c = &mut right[..n];
        let (rest, right) = rest.split_at_mut((j[1] - c_base) * n1);
        let col_b = &mut right[..n];
        let col_a = &mut rest[(j[0] - c_base) * n1..][..n];
        // the 4×4 triangle on the four columns' own rows
        for q in 0..4 {
            let (h1, h2) = (c1[q], c2[q]);
            let jr = j[q];
            col_a[jr] = rank2(col_a[jr], c1[0], c2[0], h1, h2);
            if q >= 1 {
                col_b[jr] = rank2(col_b[jr], c1[1], c2[1], h1, h2);
            }
            if q >= 2 {
                col_c[jr] = rank2(col_c[jr], c1[2], c2[2], h1, h2);
            }
            if q == 3 {
                col_d[jr] = rank2(col_d[jr], c1[3], c2[3], h1, h2);
            }
        }
        for (jr, (&h1, &h2)) in cols
            .range_iter(a + 4, k)
            .zip(g1[a + 4..].iter().zip(&g2[a + 4..]))
        {
            col_a[jr] = rank2(col_a[jr], c1[0], c2[0], h1, h2);
            col_b[jr] = rank2(col_b[jr], c1[1], c2[1], h1, h2);
            col_c[jr] = rank2(col_c[jr], c1[2], c2[2], h1, h2);
            col_d[jr] = rank2(col_d[jr], c1[3], c2[3], h1, h2);
        }
        a += 4;
    }
    while a + 1 < a1 {
        let (ja, jb) = (cols.at(a) - c_base, cols.at(a + 1) - c_base);
        let (c1a, c2a, c1b, c2b) = (g1[a], g2[a], g1[a + 1], g2[a + 1]);
        let (left, right) = s.split_at_mut(jb * n1);
        let col_a = &mut left[ja * n1..ja * n1 + n];
        let col_b = &mut right[..n];
        col_a[cols.at(a)] = rank2(col_a[cols.at(a)], c1a, c2a, g1[a], g2[a]);
        for (jr, (&h1, &h2)) in cols
            .range_iter(a + 1, k)
            .zip(g1[a + 1..].iter().zip(&g2[a + 1..]))
        {
            col_a[jr] = rank2(col_a[jr], c1a, c2a, h1, h2);
            col_b[jr] = rank2(col_b[jr], c1b, c2b, h1, h2);
        }
        a += 2;
    }
    if a < a1 {
        let ja = cols.at(a) - c_base;
        let (c1a, c2a) = (g1[a], g2[a]);
        let col_a = &mut s[ja * n1..ja * n1 + n];
        for (jr, (&h1, &h2)) in cols.range_iter(a, k).zip(g1[a..].iter().zip(&g2[a..])) {
            col_a[jr] = rank2(col_a[jr], c1a, c2a, h1, h2);
        }
    }
}

fn validate_settings(s: &DsxSettings) -> Result<()> {
    let d = s.static_regularization;
    if !(d.is_finite() && d >= 0.0) {
        return Err(LinalgError::InvalidValue {
            name: "settings.static_regularization",
            index: 0,
            value: d,
            reason: "must be finite and >= 0",
        });
    }
    if let Some(r) = s.dynamic_regularization {
        for (name, value) in [
            ("settings.dynamic_regularization.epsilon", r.epsilon),
            ("settings.dynamic_regularization.delta", r.delta),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(LinalgError::InvalidValue {
                    name,
                    index: 0,
                    value,
                    reason: "must be finite and > 0",
                });
            }
        }
    }
    if let Some(r) = s.dynamic_regularization
        && r.epsilon >= r.delta
    {
        return Err(LinalgError::InvalidValue {
            name: "settings.dynamic_regularization.epsilon",
            index: 0,
            value: r.epsilon,
            reason: "must be < delta",
        });
    }
    if s.chunk_rows == 0 {
        return Err(LinalgError::EmptyDimension {
            name: "settings.chunk_rows",
        });
    }
    Ok(())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `‖a‖₂` as a plain sum of squares (four lanes), or [`norm2`] when that over- or underflows.
fn norm2_fast(a: &[f64]) -> f64 {
    let k = a.len() / 4 * 4;
    let mut acc = [0.0f64; 4];
    for c in a[..k].chunks_exact(4) {
        for l in 0..4 {
            acc[l] += c[l] * c[l];
        }
    }
    let sq = (acc[0] + acc[1]) + (acc[2] + acc[3]) + a[k..].iter().map(|x| x * x).sum::<f64>();
    if sq.is_finite() && sq > 1e-280 {
        sq.sqrt()
    } else {
        norm2(a)
    }
}

fn norm2(a: &[f64]) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    let s: f64 = a.iter().map(|x| (x / scale) * (x / scale)).sum();
    scale * s.sqrt()
}

/// Seeded scalings for the unit tests, shared with the benches.
#[cfg(test)]
#[path = "../benches/support/scalings.rs"]
mod test_scalings;

#[cfg(test)]
mod tests {
    //! The blocked scatter kernel against a verbatim copy of the unblocked one (bit-exact).
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The scatter loop of `factor_example` before blocking (immediate per-example scatter).
    fn legacy_scatter<C: Cols>(cols: C, g1: &[f64], g2: &[f64], s_mat: &mut [f64], n1: usize) {
        let n = n1 - 1;
        let k = g1.len();
        let mut a = 0;
        while a + 1 < k {
            let (ja, jb) = (cols.at(a), cols.at(a + 1));
            let (c1a, c2a, c1b, c2b) = (g1[a], g2[a], g1[a + 1], g2[a + 1]);
            let (left, right) = s_mat.split_at_mut(jb * n1);
            let col_a = &mut left[ja * n1..ja * n1 + n];
            let col_b = &mut right[..n];
            col_a[ja] = rank2(col_a[ja], c1a, c2a, g1[a], g2[a]);
            for (jr, (&h1, &h2)) in cols
                .range_iter(a + 1, k)
                .zip(g1[a + 1..].iter().zip(&g2[a + 1..]))
            {
                col_a[jr] = rank2(col_a[jr], c1a, c2a, h1, h2);
                col_b[jr] = rank2(col_b[jr], c1b, c2b, h1, h2);
            }
            a += 2;
        }
        if a < k {
            let ja = cols.at(a);
            let d = &mut s_mat[ja * n1 + ja];
            *d = rank2(*d, g1[a], g2[a], g1[a], g2[a]);
        }
    }

    impl DsxSystem {
        /// `form_schur` with the unblocked kernel: one example at a time, scattered at once.
        fn form_schur_legacy(&mut self, sc: &DsxScalings<'_>) -> usize {
            self.reset_schur();
            let n1 = self.n + 1;
            let sh = Shared {
                n: self.n,
                dense: self.dense,
                delta: self.settings.static_regularization,
                gemm: false,
                indptr: &self.indptr,
                indices: &self.indices,
                x: &self.x,
                v: &self.v,
                y: &self.y,
                p_eff: &self.p_eff,
            };
            let mut sbb = sc.b_diag + self.settings.static_regularization;
            // the unblocked code summed `τ_i` per block of `chunk_rows` examples
            let group = self.settings.chunk_rows.min(self.m).max(1);
            let mut tau = 0.0;
            for i in 0..self.m {
                let r = self.indptr[i]..self.indptr[i + 1];
                let (g1, g2) = (
                    &mut self.scatter.g1[0][..r.len()],
                    &mut self.scatter.g2[0][..r.len()],
                );
                tau = factor_range(
                    &sh,
                    sc,
                    i,
                    i + 1,
                    tau,
                    &mut self.inv_delta[r.clone()],
                    &mut self.phi[r.clone()],
                    &mut self.ex[i..=i],
                    g1,
                    g2,
                    &mut self.work[0],
                )
                .unwrap();
                if (i + 1) % group == 0 || i + 1 == self.m {
                    sbb += tau;
                    tau = 0.0;
                }
                if self.dense {
                    legacy_scatter(Ident, g1, g2, &mut self.s, n1);
                } else {
                    legacy_scatter(&self.indices[r], g1, g2, &mut self.s, n1);
                }
            }
            self.finish_schur(sc, sbb)
        }
    }

    struct Owned {
        indptr: Vec<usize>,
        indices: Vec<usize>,
        values: Vec<f64>,
        m: usize,
        n: usize,
        dense: bool,
    }

    impl Owned {
        /// CSR rows with non-uniform column densities (some columns empty), or dense rows.
        fn random(m: usize, n: usize, density: f64, dense: bool, seed: u64) -> Self {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let col_p: Vec<f64> = (0..n)
                .map(|j| {
                    if j % 7 == 3 {
                        0.0
                    } else {
                        (density * rng.random_range(0.2..1.8)).min(1.0)
                    }
                })
                .collect();
            let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
            for _ in 0..m {
                for (j, &pj) in col_p.iter().enumerate() {
                    if dense || rng.random_bool(pj) {
                        indices.push(j);
                        values.push(rng.random_range(-1.0..1.0));
                    }
                }
                indptr.push(indices.len());
            }
            Self {
                indptr,
                indices,
                values,
                m,
                n,
                dense,
            }
        }

        fn rows(&self) -> RowsRef<'_> {
            if self.dense {
                RowsRef::Dense {
                    data: &self.values,
                    m: self.m,
                    n: self.n,
                }
            } else {
                RowsRef::Csr {
                    indptr: &self.indptr,
                    indices: &self.indices,
                    values: &self.values,
                    n: self.n,
                }
            }
        }
    }

    use super::test_scalings::RandomScalings;

    fn check(m: usize, n: usize, density: f64, dense: bool, plan: Option<(usize, usize, f64)>) {
        let inst = Owned::random(m, n, density, dense, (m * 31 + n) as u64);
        let scalings = RandomScalings::new(m, n, inst.values.len(), 5);
        let sc = scalings.view(0.5);
        let y: Vec<f64> = (0..m)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let v: Vec<f64> = (0..n).map(|j| 0.5 + (j % 5) as f64 * 0.3).collect();
        let mut results = Vec::new();
        for (par, chunk_rows) in [
            (Par::Seq, 256),
            (Par::rayon(2), 256),
            (Par::Seq, 3),
            (Par::rayon(2), 3),
        ] {
            let settings = DsxSettings {
                kernel: SchurKernel::SparseScatter,
                par,
                threads: if par == Par::Seq { 1 } else { 2 },
                chunk_rows,
                static_regularization: 1e-9,
                ..DsxSettings::default()
            };
            let mut sys = DsxSystem::try_new_with(inst.rows(), &y, &v, 2.0, settings).unwrap();
            if let Some((chunk, band, cost)) = plan {
                let (two, ip, ix) = (par != Par::Seq, &sys.indptr, &sys.indices);
                sys.scatter = ScatterPlan::new(n, dense, ip, ix, two, chunk, band, cost);
            }
            let p = &sys.scatter;
            assert_eq!(p.bands[0], 0);
            assert_eq!(*p.bands.last().unwrap(), n);
            assert!(p.bands.windows(2).all(|w| w[0] < w[1]), "{:?}", p.bands);
            assert_eq!(*p.chunks.last().unwrap(), m);
            assert_eq!(p.g1[1].is_empty(), par == Par::Seq);
            sys.form_schur(&sc).unwrap();
            let blocked = sys.s.clone();
            sys.form_schur_legacy(&sc);
            let legacy = sys.s.clone();
            assert!(
                blocked
                    .iter()
                    .zip(&legacy)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "m {m} n {n} dense {dense} plan {plan:?} par {par:?} chunk_rows {chunk_rows}: \
                 blocked != unblocked"
            );
            results.push(blocked);
        }
        // Par::Seq and two threads: bit-identical
        assert_eq!(results[0], results[1]);
        assert_eq!(results[2], results[3]);
    }

    /// The two-half product and residual of the refinement (`apply_halves`) against the
    /// public sequential `apply`: the same values to rounding, the residual's norm equal to
    /// the norm of `r − H z`, and the same bits on one thread and two.
    #[test]
    fn split_apply_and_residual_match_apply() {
        for (m, n, density, dense) in [
            (40, 30, 0.3, false),
            (25, 17, 1.0, true),
            (3, 5, 0.6, false),
        ] {
            let inst = Owned::random(m, n, density, dense, 7 + m as u64);
            let scalings = RandomScalings::new(m, n, inst.values.len(), 11);
            let sc = scalings.view(0.5);
            let y: Vec<f64> = (0..m)
                .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            let v: Vec<f64> = (0..n).map(|j| 0.5 + (j % 3) as f64 * 0.25).collect();
            let mut outs = Vec::new();
            for threads in [1, 2] {
                let settings = DsxSettings {
                    threads,
                    ..DsxSettings::default()
                };
                let mut sys = DsxSystem::try_new_with(inst.rows(), &y, &v, 2.0, settings).unwrap();
                let len = sys.len();
                let z: Vec<f64> = (0..len)
                    .map(|t| ((t * 37 % 11) as f64 - 5.0) / 3.0)
                    .collect();
                let r: Vec<f64> = (0..len)
                    .map(|t| ((t * 13 % 7) as f64 - 3.0) / 2.0)
                    .collect();
                let mut reference = vec![0.0; len];
                sys.apply(&sc, &z, &mut reference);
                let mut hz = vec![0.0; len];
                assert_eq!(sys.apply_halves::<false>(&sc, &z, &[], &mut hz), 0.0);
                let scale = norm2(&reference);
                for (a, b) in hz.iter().zip(&reference) {
                    assert!((a - b).abs() <= 1e-13 * scale, "{a} vs {b}");
                }
                let mut res = vec![0.0; len];
                let norm = sys.apply_halves::<true>(&sc, &z, &r, &mut res);
                let direct: Vec<f64> = r.iter().zip(&reference).map(|(a, b)| a - b).collect();
                for (a, b) in res.iter().zip(&direct) {
                    assert!((a - b).abs() <= 1e-13 * scale, "{a} vs {b}");
                }
                assert!((norm - norm2(&direct)).abs() <= 1e-12 * norm2(&direct));
                outs.push((hz, res, norm));
            }
            assert_eq!(outs[0], outs[1], "one thread and two differ");
        }
        assert_eq!(norm2_fast(&[3.0, 4.0]), 5.0);
        assert_eq!(norm2_fast(&[3e200, 4e200]), norm2(&[3e200, 4e200]));
        assert_eq!(norm2_fast(&[0.0; 5]), 0.0);
    }

    #[test]
    fn blocked_scatter_is_bit_identical_to_unblocked() {
        // tiny chunks and bands: many chunks, many bands on both sides of the split (pass cost
        // 0), or every band on the second thread (pass cost 10: the first thread only runs the
        // per-example pass)
        for cost in [0.0, SCATTER_PASS_COST] {
            check(40, 30, 0.3, false, Some((13, 12, cost)));
            check(40, 30, 0.3, false, Some((1, 1, cost)));
            check(25, 17, 1.0, true, Some((20, 9, cost)));
            check(9, 1, 0.5, false, Some((2, 1, cost)));
            check(9, 3, 0.9, false, Some((4, 2, cost)));
        }
        check(9, 2, 0.9, false, None);
        // the default plan (n = 784: several bands per side)
        check(120, 784, 0.19, false, None);
        check(60, 300, 0.5, false, None);
        check(6, 200, 1.0, true, None);
    }

    #[test]
    fn scatter_plan_splits_work_and_area() {
        let inst = Owned::random(200, 784, 0.19, false, 1);
        let (chunk, band) = (1 << 15, 1 << 16);
        let (ip, ix) = (&inst.indptr, &inst.indices);
        let p = ScatterPlan::new(784, false, ip, ix, true, chunk, band, SCATTER_PASS_COST);
        // 307 720 lower-triangle entries in bands of at most `band` entries (+ one column)
        assert!(p.bands.len() > 307_720 / band, "{:?}", p.bands);
        assert!(p.split >= 1 && p.split < p.bands.len() - 1);
        for w in p.bands.windows(2) {
            let area: usize = (w[0]..w[1]).map(|j| 784 - j).sum();
            assert!(area <= band + 784, "band {w:?}: {area}");
        }
        // the two threads' update counts: (total − pass)/2 for the first, which also runs the
        // per-example pass
        let mut work = [0.0f64; 2];
        for i in 0..inst.m {
            let cols = &inst.indices[inst.indptr[i]..inst.indptr[i + 1]];
            for (a, &j) in cols.iter().enumerate() {
                work[usize::from(j >= p.bands[p.split])] += (cols.len() - a) as f64;
            }
        }
        let pass = SCATTER_PASS_COST * inst.values.len() as f64;
        let rel = (work[0] + pass - work[1]).abs() / (work[0] + work[1]);
        assert!(rel < 0.02, "{work:?} + {pass}: imbalance {rel}");
        for c in p.chunks.windows(2) {
            let nnz = inst.indptr[c[1]] - inst.indptr[c[0]];
            assert!(nnz <= 1 << 15 || c[1] == c[0] + 1);
        }
        let max_nnz = p
            .chunks
            .windows(2)
            .map(|c| inst.indptr[c[1]] - inst.indptr[c[0]]);
        assert_eq!(p.g1[0].len(), max_nnz.max().unwrap());
        assert_eq!(p.g1[1].len(), p.g1[0].len());
    }
}
