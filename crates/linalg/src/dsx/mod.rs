//! The block-arrow normal-equations solver for DSX LP (4) in natural inequality form
//! (DSX eqs. (14)–(21), closed form of `dsx-normal-equations.md`).
//!
//! See `docs/design/linalg.md` for the algebra, the flop counts and the measurements; the
//! variable ordering is on [`DsxSystem`]. The Schur complement `S` is accumulated by dense GEMM
//! blocks or, for sparse rows, by a cache-blocked sparse scatter (chunks of examples × column
//! bands of `S`, optionally on two threads, bit-identical across `Par`): see [`SchurKernel`] and
//! `DsxSystem::schur_scatter`.
//!
//! One job per submodule: `settings` (options and their validation), `setup` (validated
//! construction, buffer sizing), `example` (the per-example closed form, DSX eqs. (19)–(21)),
//! `schur` (forming `S`, dense GEMM kernel), `scatter` (the blocked sparse-scatter kernel),
//! `factor` (the Cholesky of `S`), `solve` (DSX eqs. (15)–(18)), `operator` (`H z`, `G z`,
//! `Gᵀ y`), `refine` (PCG on the exact `H`), `cols` (dense vs CSR supports), `augmented` (the
//! quasi-definite system of the example-space method), `sparse` (the same system by faer's sparse
//! `LDLᵀ`), `ldlt` (the blocked dense `LDLᵀ`), `plan` (the cost model choosing the method).

// `!(x > 0.0)` is used on purpose: it is also true for NaN, which must be rejected.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod augmented;
mod cols;
mod example;
mod factor;
mod ldlt;
mod operator;
mod plan;
mod refine;
mod scatter;
mod schur;
mod settings;
mod setup;
mod solve;
mod sparse;
#[cfg(test)]
mod tests;

use core::ops::Range;
use std::borrow::Cow;

use faer::MatRef;

pub use factor::FactorInfo;
pub use plan::{MethodEstimate, NormalEquationsPlan, human_bytes};
pub use refine::RefineInfo;
pub use settings::{DsxSettings, DynamicRegularization, NormalEquations, SchurKernel};

use augmented::{Couplings, ExampleSpace};
use example::{ExampleFactor, Work};
use scatter::ScatterPlan;
use sparse::SparseLdl;

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
/// The per-non-zero scalings (`phi`, `sigma`) follow the storage order of the rows: example by
/// example, increasing column inside an example (for dense rows: `i·n + j`); each is stored
/// ([`PairScaling::Values`]) or computed where read from the caller's arrays
/// ([`PairScaling::Ratio`]).
#[derive(Debug, Clone, Copy)]
pub struct DsxScalings<'a> {
    /// `θ_i`, row `a_i` (length `m`, `≥ 0`).
    pub theta: &'a [f64],
    /// `φ_ij`, row `b_ij` (`nnz` values, `≥ 0`).
    pub phi: PairScaling<'a>,
    /// `ω_j`, variable `w_j` (length `n`, `≥ 0`).
    pub w_diag: &'a [f64],
    /// `ω_b`, variable `b` (`≥ 0`, may be exactly 0: `b` is free).
    pub b_diag: f64,
    /// `σ_ij`, variable `α_ij` (`nnz` values, `> 0`, or `≥ 0` with static regularisation).
    pub sigma: PairScaling<'a>,
    /// `ρ_i`, variable `λ_i` (length `m`).
    pub rho: &'a [f64],
    /// `κ_i`, variable `ξ_i` (length `m`).
    pub kappa: &'a [f64],
}

/// A per-non-zero scaling of [`DsxScalings`] (`φ` or `σ`), one value per stored entry `(i, j)`.
///
/// [`PairScaling::Ratio`] lets an interior-point method pass its scalings as what they are —
/// a dual over its primal partner, `y_ij / s_ij` or `z_ij / α_ij` — without storing them: the
/// system computes `num · (1/den)` where it reads a value (per example, into a scratch of
/// length `|S_i|`), so the caller's iterate is the only per-non-zero storage. The value is
/// the same bits as a stored `num · (1/den)`. As with stored values, the solves and products
/// after a [`DsxSystem::factor`] must be given the same values: the vectors must not change
/// in between.
#[derive(Debug, Clone, Copy)]
pub enum PairScaling<'a> {
    /// Stored values, length `nnz`.
    Values(&'a [f64]),
    /// `num[q] · (1/den[q])` for the entry `a` (in `0..nnz`) of example `i`, at
    /// `q = a + lead + per_example · i`: the layout of a caller's vector over the rows or the
    /// variables of LP (4), where example `i`'s entries follow `lead` leading entries and
    /// `per_example` entries of every example before it (the row space:
    /// `lead = 1, per_example = 1`, [`DsxSystem::row_offset`]; the variable space:
    /// `lead = n + 1, per_example = 2`, [`DsxSystem::example_offset`]).
    Ratio {
        /// The numerators (e.g. the duals).
        num: &'a [f64],
        /// The denominators (e.g. the primal slacks), positive.
        den: &'a [f64],
        /// Entries before the first example's.
        lead: usize,
        /// Entries between consecutive examples' blocks.
        per_example: usize,
    },
}

impl<'a> From<&'a [f64]> for PairScaling<'a> {
    fn from(values: &'a [f64]) -> Self {
        Self::Values(values)
    }
}

impl<'a> From<&'a Vec<f64>> for PairScaling<'a> {
    fn from(values: &'a Vec<f64>) -> Self {
        Self::Values(values)
    }
}

impl<'a> PairScaling<'a> {
    /// Checks that every entry `0..nnz` of examples `0..m` (row pointers `indptr`) has a value.
    pub(crate) fn check_len(&self, name: &'static str, indptr: &[usize]) -> crate::Result<()> {
        let (m, nnz) = (indptr.len() - 1, indptr[indptr.len() - 1]);
        match *self {
            Self::Values(v) => crate::error::check_len(name, nnz, v.len()),
            Self::Ratio {
                num,
                den,
                lead,
                per_example,
            } => {
                // the last entry's index (the examples' blocks increase with i)
                let need = if m == 0 {
                    0
                } else {
                    nnz + lead + per_example * (m - 1)
                };
                crate::error::check_len(name, need, num.len().min(need))?;
                crate::error::check_len(name, need, den.len().min(need))
            }
        }
    }

    /// Example `i`'s values over its entries `r` (a range of `0..nnz`).
    #[inline(always)]
    pub(crate) fn example(&self, i: usize, r: Range<usize>) -> ExampleScaling<'a> {
        match *self {
            Self::Values(v) => ExampleScaling::Values(&v[r]),
            Self::Ratio {
                num,
                den,
                lead,
                per_example,
            } => {
                let q = r.start + lead + per_example * i..r.end + lead + per_example * i;
                ExampleScaling::Ratio(&num[q.clone()], &den[q])
            }
        }
    }
}

/// One example's [`PairScaling`] values.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ExampleScaling<'a> {
    Values(&'a [f64]),
    Ratio(&'a [f64], &'a [f64]),
}

impl<'a> ExampleScaling<'a> {
    /// The values as a slice: the stored ones, or `num · (1/den)` written into `buf` (at least
    /// as long as the example).
    #[inline(always)]
    pub(crate) fn slice<'b>(self, buf: &'b mut [f64]) -> &'b [f64]
    where
        'a: 'b,
    {
        self.slice_checked(buf).0
    }

    /// [`ExampleScaling::slice`], and whether every value computed into `buf` is finite and
    /// `≥ 0` (always `true` for stored values, which [`DsxSystem::factor`] checks beforehand).
    #[inline(always)]
    pub(crate) fn slice_checked<'b>(self, buf: &'b mut [f64]) -> (&'b [f64], bool)
    where
        'a: 'b,
    {
        match self {
            Self::Values(v) => (v, true),
            Self::Ratio(num, den) => {
                let out = &mut buf[..num.len()];
                // branch-free: the smallest value, and a sum of `v · 0` that is NaN exactly
                // when some value is not finite
                let (mut mn, mut nf) = (f64::INFINITY, 0.0f64);
                for ((o, &y), &s) in out.iter_mut().zip(num).zip(den) {
                    let v = y * (1.0 / s);
                    *o = v;
                    mn = if v < mn { v } else { mn };
                    nf += v * 0.0;
                }
                (out, mn >= 0.0 && nf == 0.0)
            }
        }
    }

    /// The value of entry `a`.
    #[inline(always)]
    pub(crate) fn at(&self, a: usize) -> f64 {
        match *self {
            Self::Values(v) => v[a],
            Self::Ratio(num, den) => num[a] * (1.0 / den[a]),
        }
    }
}

/// The structured normal matrix `H` of DSX LP (4) with its factorisation (see the crate docs).
///
/// Variable-space vector `z` (length [`DsxSystem::len`]): `w_0..w_{n-1}`, `b`, then for each
/// example `i`: `α_ij` for `j ∈ S_i` (increasing `j`), `λ_i`, `ξ_i`.
#[derive(Debug)]
pub struct DsxSystem<'a> {
    m: usize,
    n: usize,
    dense: bool,
    /// Row pointers into the per-non-zero arrays (`i·n` for dense rows).
    indptr: Cow<'a, [usize]>,
    /// Column indices (empty for dense rows).
    indices: Cow<'a, [usize]>,
    /// The rows' values as given: the system's rows are `scale ·` them (the product is taken
    /// where a value is read, the same bits as a scaled copy).
    x: Cow<'a, [f64]>,
    scale: f64,
    y: Vec<f64>,
    v: Vec<f64>,
    p: f64,
    p_eff: Vec<f64>,
    v0: Vec<f64>,
    sum_k2: f64,
    settings: DsxSettings,
    kernel: SchurKernel,
    /// The method the plan chose (never `Auto`).
    method: NormalEquations,
    /// Every method's predicted cost and the choice.
    plan: NormalEquationsPlan,
    /// The couplings of the quasi-definite methods (example space, sparse), else `None`.
    couplings: Option<Couplings>,
    example_space: Option<Box<ExampleSpace>>,
    sparse: Option<Box<SparseLdl>>,
    // --- factorisation ---
    inv_delta: Vec<f64>,
    ex: Vec<ExampleFactor>,
    /// Column-major `(n+1)²`: `S`, then its Cholesky factor (lower triangle); empty unless the
    /// method is the feature space.
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
    /// Work vectors of [`DsxSystem::solve_refined`] (residual; preconditioned residual, `H d`
    /// and the candidate iterate; direction), empty until its first call.
    refine: [Vec<f64>; 3],
}

impl DsxSystem<'_> {
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

    /// The row values over the supports, example by example ([`Self::nz_range`] indexes them),
    /// as given to the constructor: the system's rows are [`Self::scale`] times them. (Copied by
    /// [`DsxSystem::try_new_with`], borrowed by [`DsxSystem::try_borrow_with`].)
    pub fn values(&self) -> &[f64] {
        &self.x
    }

    /// The factor the system multiplies [`Self::values`] by (1 unless given to
    /// [`DsxSystem::try_borrow_with`]).
    pub fn scale(&self) -> f64 {
        self.scale
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

    /// The resolved Schur kernel.
    pub fn kernel(&self) -> SchurKernel {
        self.kernel
    }

    /// The normal-equations method in use (never [`NormalEquations::Auto`]).
    pub fn normal_equations(&self) -> NormalEquations {
        self.method
    }

    /// Every method's predicted cost on this system and the choice
    /// (made before anything large is allocated).
    pub fn normal_equations_plan(&self) -> &NormalEquationsPlan {
        &self.plan
    }

    /// Lower triangle of the Cholesky factor `L` of `S` (after a successful factor), when the
    /// method is [`NormalEquations::FeatureSpace`] (`None` otherwise: `S` is never formed).
    pub fn schur_factor(&self) -> Option<MatRef<'_, f64>> {
        (self.method == NormalEquations::FeatureSpace)
            .then(|| MatRef::from_column_major_slice(&self.s, self.n + 1, self.n + 1))
    }
}

/// Seeded scalings for the unit tests, shared with the benches.
#[cfg(test)]
#[path = "../../benches/support/scalings.rs"]
mod test_scalings;
