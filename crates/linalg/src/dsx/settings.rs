//! The options of [`DsxSystem`](super::DsxSystem) ([`DsxSettings`]: regularisation, parallelism,
//! Schur kernel, normal-equations method, memory limit) and their validation.

use faer::Par;

use crate::error::{LinalgError, Result};

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

/// How the reduced system onto `(w, b)` of each Newton step is solved: which variables are
/// eliminated first (`plan`, `dsx-normal-equations.md`). Every method solves the same system,
/// so the directions agree up to rounding; [`NormalEquations::Auto`] picks the cheapest that fits
/// the memory limit by a cost model ([`super::NormalEquationsPlan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum NormalEquations {
    /// The cost model decides ([`super::NormalEquationsPlan`]).
    #[default]
    Auto,
    /// Feature space: eliminate every example's `(λ_i, μ_i)` corner, form the dense Schur
    /// complement `S` of order `n + 1` and factor it (DSX eqs. (16)–(21)). Memory `8 (n+1)²`
    /// bytes, `(n+1)³/3` flops per factorisation plus the forming ([`SchurKernel`]).
    FeatureSpace,
    /// Example space: eliminate the diagonal `Ω′` of `w` first (Woodbury), form the dense
    /// quasi-definite matrix of order `2m + 1` on `(λ_i, μ′_i)` and `b` and factor it by `LDLᵀ`
    /// with known pivot signs. Memory `8 (2m+1)²` bytes, `(2m+1)³/3` flops per factorisation plus
    /// `4 Σ_j c_j²` to form it (`c_j`: examples containing feature `j`). The choice when
    /// `m ≪ n` (text).
    ExampleSpace,
    /// The same quasi-definite system with `w` kept, `w`, `(λ_i, μ′_i)` and `b` of order
    /// `n + 2m + 1`, factored by faer's supernodal sparse `LDLᵀ` in an approximate minimum
    /// degree order (`b` last): rare features cost nothing, frequent ones form the dense part.
    SparseLdl,
}

impl NormalEquations {
    /// The three methods, in the order reports list them.
    pub const METHODS: [NormalEquations; 3] = [
        NormalEquations::FeatureSpace,
        NormalEquations::ExampleSpace,
        NormalEquations::SparseLdl,
    ];

    /// The name used in reports and on the command line (`auto`, `feature-space`,
    /// `example-space`, `sparse-ldl`).
    pub fn name(self) -> &'static str {
        match self {
            NormalEquations::Auto => "auto",
            NormalEquations::FeatureSpace => "feature-space",
            NormalEquations::ExampleSpace => "example-space",
            NormalEquations::SparseLdl => "sparse-ldl",
        }
    }

    /// The method named `name` ([`NormalEquations::name`]), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        [NormalEquations::Auto]
            .into_iter()
            .chain(Self::METHODS)
            .find(|m| m.name() == name)
    }
}

impl core::fmt::Display for NormalEquations {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
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

/// Settings of [`DsxSystem`](super::DsxSystem). All fields have documented defaults
/// ([`Default`]).
#[derive(Debug, Clone, Copy)]
pub struct DsxSettings {
    /// Static regularisation `δ ≥ 0` added to every variable-diagonal entry when factoring
    /// (default 0). [`DsxSystem::apply`](super::DsxSystem::apply) and
    /// [`DsxSystem::solve_refined`](super::DsxSystem::solve_refined) use the exact
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
    /// How the reduced system onto `(w, b)` is solved (default [`NormalEquations::Auto`]).
    pub normal_equations: NormalEquations,
    /// Most bytes the normal equations may hold (default `None`: no limit). The constructors
    /// predict each method's memory before allocating anything large ([`super::NormalEquationsPlan`]);
    /// `Auto` picks among the methods that fit, and when none does (or the forced method does
    /// not) construction fails with [`LinalgError::TooLarge`](crate::LinalgError::TooLarge).
    pub memory_limit: Option<u64>,
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
            normal_equations: NormalEquations::Auto,
            memory_limit: None,
        }
    }
}

pub(super) fn validate_settings(s: &DsxSettings) -> Result<()> {
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
