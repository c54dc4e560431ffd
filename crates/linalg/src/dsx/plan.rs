//! The cost model that chooses how the reduced system onto `(w, b)` is solved
//! ([`NormalEquations`]): each method's memory and flops per factorisation predicted from the
//! shape and the sparsity pattern alone, before anything large is allocated.
//!
//! - **Feature space** ([`NormalEquations::FeatureSpace`]): `S` of order `n + 1`, dense. Forming
//!   costs `2 m (n+1)²` flops (GEMM kernel) or `2 Σ_i |S_i|²` scattered updates, the Cholesky
//!   `(n+1)³/3`. Memory `8 (n+1)²` bytes plus the kernel's buffers.
//! - **Example space** ([`NormalEquations::ExampleSpace`]): the quasi-definite matrix of order
//!   `2m + 1`, dense. Forming costs about `2 c_j²` scattered updates per feature present in `c_j`
//!   examples, or `(2m+1)²/2` multiply-adds (one SYRK column) for a frequent feature, whichever
//!   is cheaper; the `LDLᵀ` `(2m+1)³/3`. Memory `8 (2m+1)²` bytes plus two values per stored
//!   entry and the column map of the pattern.
//! - **Sparse `LDLᵀ`** ([`NormalEquations::SparseLdl`]): the flops and the factor's size come from
//!   an approximate minimum degree ordering and the symbolic factorisation of the augmented
//!   pattern (`O(nnz)` time, about 0.1 s per million stored entries), which is computed only when
//!   the dense methods would cost more than analysing it, or do not fit.
//!
//! Seconds are flops over rates measured for each kind of kernel on one core (faer 0.24, a
//! 2-core AMD EPYC VM with AVX-512; `docs/design/linalg.md`); only their ratios matter for the
//! choice, and the ratio of two methods' predictions was within a factor of two of the measured
//! one on the shapes of the bench.

use super::NormalEquations;

/// Multiply-adds per second of faer's dense `LDLᵀ` / Cholesky on one core (order ≥ 1000).
pub(super) const DENSE_FACTOR_RATE: f64 = 2.0e10;
/// Multiply-adds per second of faer's triangular GEMM (the forming of `S` and of the example
/// space's frequent features) on one core.
pub(super) const GEMM_RATE: f64 = 2.5e10;
/// Scattered updates per second (the sparse kernels' forming: one multiply-add into a large
/// dense matrix at an irregular position).
pub(super) const SCATTER_RATE: f64 = 1.5e9;
/// Multiply-adds per second of faer's supernodal sparse `LDLᵀ` on one core.
pub(super) const SPARSE_FACTOR_RATE: f64 = 8.0e9;
/// Seconds per entry of the augmented pattern to order and analyse it symbolically.
pub(super) const SPARSE_ANALYSIS_SECONDS_PER_ENTRY: f64 = 1.5e-7;

/// One method's predicted cost per factorisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodEstimate {
    /// The method.
    pub method: NormalEquations,
    /// Bytes the method holds beyond what every method holds (`None`: not analysed —
    /// [`NormalEquations::SparseLdl`] when the dense methods are cheaper than its analysis).
    pub bytes: Option<u64>,
    /// Multiply-adds per factorisation, forming included (`None`: not analysed).
    pub flops: Option<f64>,
    /// Predicted seconds per factorisation on one core (`None`: not analysed).
    pub seconds: Option<f64>,
}

impl MethodEstimate {
    fn new(method: NormalEquations, bytes: u64, flops: f64, seconds: f64) -> Self {
        Self {
            method,
            bytes: Some(bytes),
            flops: Some(flops),
            seconds: Some(seconds),
        }
    }

    pub(super) fn not_analysed(method: NormalEquations) -> Self {
        Self {
            method,
            bytes: None,
            flops: None,
            seconds: None,
        }
    }

    /// `true` when the method was analysed and fits in `limit` bytes (`None`: no limit).
    pub fn fits(&self, limit: Option<u64>) -> bool {
        match (self.bytes, limit) {
            (Some(b), Some(l)) => b <= l,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

impl core::fmt::Display for MethodEstimate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match (self.bytes, self.seconds) {
            (Some(b), Some(s)) => write!(
                f,
                "{} {} ({:.2e} flops, about {} per factorisation)",
                self.method,
                human_bytes(b),
                self.flops.unwrap_or(0.0),
                human_seconds(s)
            ),
            _ => write!(f, "{} not analysed", self.method),
        }
    }
}

/// `bytes` in KiB, MiB or GiB, for messages.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    let (unit, name) = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        .into_iter()
        .find(|&(u, _)| bytes >= u)
        .unwrap_or((1, "bytes"));
    if unit == 1 {
        format!("{bytes} bytes")
    } else {
        format!("{:.1} {name}", b / unit as f64)
    }
}

fn human_seconds(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 60.0 {
        format!("{:.1} min", s / 60.0)
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// The prediction for every method and the resolved choice, made when a system is built
/// ([`DsxSystem::normal_equations_plan`](super::DsxSystem::normal_equations_plan)).
#[derive(Debug, Clone, PartialEq)]
pub struct NormalEquationsPlan {
    /// Number of examples.
    pub m: usize,
    /// Number of features.
    pub n: usize,
    /// Stored entries `Σ_i |S_i|`.
    pub nnz: usize,
    /// Feature space, example space, sparse `LDLᵀ` (in [`NormalEquations::METHODS`] order).
    pub estimates: [MethodEstimate; 3],
    /// The memory limit the choice respected.
    pub limit: Option<u64>,
    /// The method asked for ([`NormalEquations::Auto`] or a forced one).
    pub requested: NormalEquations,
    /// The method chosen (never `Auto`), or `None` when none fits the limit.
    pub chosen: Option<NormalEquations>,
}

impl NormalEquationsPlan {
    /// The estimate of `method`.
    pub fn estimate(&self, method: NormalEquations) -> &MethodEstimate {
        let k = NormalEquations::METHODS
            .iter()
            .position(|&m| m == method)
            .unwrap_or(0);
        &self.estimates[k]
    }
}

/// The shape facts the model reads: `Σ_i |S_i|²` and `c_j`, the examples containing feature
/// `j` (`m` for every feature of dense rows).
pub(super) struct Pattern<'a> {
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) nnz: usize,
    pub(super) dense: bool,
    pub(super) sum_k2: f64,
    pub(super) indptr: &'a [usize],
    pub(super) indices: &'a [usize],
}

impl Pattern<'_> {
    /// Examples containing each feature.
    pub(super) fn column_counts(&self) -> Vec<usize> {
        if self.dense {
            return vec![self.m; self.n];
        }
        let mut c = vec![0usize; self.n];
        for &j in &self.indices[..self.nnz] {
            c[j] += 1;
        }
        c
    }
}

/// Seconds per factorisation of the feature-space method with the kernel `gemm` (else scatter).
pub(super) fn feature_space(p: &Pattern<'_>, gemm: bool, chunk_rows: usize) -> MethodEstimate {
    let n1 = (p.n + 1) as f64;
    let (form_flops, form_seconds) = if gemm {
        let f = 2.0 * p.m as f64 * n1 * n1 / 2.0;
        (f, f / GEMM_RATE)
    } else {
        let f = p.sum_k2 + p.nnz as f64;
        (f, f / SCATTER_RATE)
    };
    let factor = n1 * n1 * n1 / 3.0;
    let chunk = chunk_rows.min(p.m) as u64;
    let buffers = if gemm {
        2 * 8 * p.n as u64 * chunk
    } else {
        // two chunk stores of 64 K entries each (`scatter`), and their cursors
        4 * 8 * (1 << 16) + 16 * p.m as u64
    };
    let bytes = 8 * (p.n as u64 + 1) * (p.n as u64 + 1) + 9 * (p.n as u64 + 1) + buffers;
    MethodEstimate::new(
        NormalEquations::FeatureSpace,
        bytes,
        form_flops + factor,
        form_seconds + factor / DENSE_FACTOR_RATE,
    )
}

/// Whether feature `j`, present in `c` examples, is formed by a SYRK column (a dense panel)
/// rather than scattered: `2 c²` scattered updates against `(2m+1)²/2` multiply-adds.
pub(super) fn dense_feature(c: usize, dim: usize) -> bool {
    let scatter = 2.0 * (c as f64) * (c as f64) / SCATTER_RATE;
    let gemm = (dim as f64) * (dim as f64) / 2.0 / GEMM_RATE;
    gemm < scatter
}

/// The example-space method: the dense quasi-definite matrix of order `2m + 1`, with room for
/// the features it keeps (`augmented::keep_capacity`); the flops at order `2m + 1`.
pub(super) fn example_space(p: &Pattern<'_>, counts: &[usize]) -> MethodEstimate {
    let dim = 2 * p.m + 1;
    let most = (dim + super::augmented::keep_capacity(p.m, p.n)) as u64;
    let d = dim as f64;
    let (mut form_flops, mut form_seconds) = (0.0, 0.0);
    for &c in counts {
        if dense_feature(c, dim) {
            let f = d * d / 2.0;
            form_flops += f;
            form_seconds += f / GEMM_RATE;
        } else {
            let f = 2.0 * (c as f64) * (c as f64 + 1.0);
            form_flops += f;
            form_seconds += f / SCATTER_RATE;
        }
    }
    let factor = d * d * d / 3.0;
    let nnz = p.nnz as u64;
    // the matrix, the two values per stored entry (r1, g2), the column map (example index and
    // position), the dense panel of frequent features (64 columns), and vectors of the order
    let bytes = 8 * most * most + 24 * nnz + 16 * nnz + 8 * 64 * most + 8 * 6 * (p.n as u64 + most);
    MethodEstimate::new(
        NormalEquations::ExampleSpace,
        bytes,
        form_flops + factor,
        form_seconds + factor / DENSE_FACTOR_RATE,
    )
}

/// Predicted seconds to order and analyse the augmented pattern of the sparse method.
pub(super) fn sparse_analysis_seconds(p: &Pattern<'_>) -> f64 {
    // both triangles of the augmented pattern: two entries per stored entry and direction, the
    // (λ, μ′) and (μ′, b) couplings, the diagonal
    let entries = 4.0 * p.nnz as f64 + 4.0 * p.m as f64 + (p.n + 2 * p.m + 1) as f64;
    entries * SPARSE_ANALYSIS_SECONDS_PER_ENTRY
}

/// The estimate of the sparse method from its symbolic factorisation: `len_val` stored values of
/// the factor, `a_nnz` entries of the lower triangle, `flops` multiply-adds of the numeric
/// factorisation, `scratch` bytes of faer's workspace.
pub(super) fn sparse_ldl(
    p: &Pattern<'_>,
    len_val: usize,
    a_nnz: usize,
    flops: f64,
    scratch: u64,
) -> MethodEstimate {
    let nnz = p.nnz as u64;
    let dim = (p.n + 2 * p.m + 1) as u64;
    // the factor, the matrix (values and row indices), the two values per stored entry and
    // the column map, the symbolic structure (about one index per factor column and row
    // pattern, bounded by the factor), vectors of the order
    let bytes = 8 * len_val as u64 + 16 * a_nnz as u64 + 32 * nnz + 8 * 6 * dim + scratch;
    let form = 2.0 * p.nnz as f64;
    MethodEstimate::new(
        NormalEquations::SparseLdl,
        bytes,
        flops + form,
        flops / SPARSE_FACTOR_RATE + form / SCATTER_RATE,
    )
}

/// How much faster the sparse method must be predicted than a dense one to be chosen over it:
/// without the example space's kept features it can take several times the iterations near an
/// optimum (65 against 23 on a text instance of the tests), so only a clear saving per
/// factorisation pays.
pub(super) const SPARSE_PENALTY: f64 = 3.0;

/// A method's predicted seconds as the choice weighs them ([`SPARSE_PENALTY`]).
fn weighted(e: &MethodEstimate) -> f64 {
    let s = e.seconds.unwrap_or(f64::INFINITY);
    if e.method == NormalEquations::SparseLdl {
        s * SPARSE_PENALTY
    } else {
        s
    }
}

/// Chooses among `estimates` (feature, example, sparse): the forced method when it fits, else
/// the fitting method with the fewest predicted seconds, the sparse method's weighted by
/// [`SPARSE_PENALTY`].
pub(super) fn choose(
    requested: NormalEquations,
    estimates: &[MethodEstimate; 3],
    limit: Option<u64>,
) -> Option<NormalEquations> {
    match requested {
        NormalEquations::Auto => estimates
            .iter()
            .filter(|e| e.fits(limit))
            .min_by(|a, b| weighted(a).total_cmp(&weighted(b)))
            .map(|e| e.method),
        forced => estimates
            .iter()
            .find(|e| e.method == forced)
            .filter(|e| e.fits(limit))
            .map(|e| e.method),
    }
}
