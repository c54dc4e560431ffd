//! The crate's error type.

use core::fmt;

/// Which block of a structured factorisation a pivot belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// The diagonal part of an [`ArrowMatrix`](crate::ArrowMatrix) (pivot = diagonal index).
    ArrowDiagonal,
    /// The dense corner (Schur complement of the diagonal) of an arrow matrix.
    ArrowCorner,
    /// The Sherman–Morrison denominator `1 + θ uᵀA⁻¹u` of an arrow-plus-rank-one matrix.
    RankOneDenominator,
    /// The per-example block `H_ii` of example `i` (pivot = local index inside the block:
    /// `0..|S_i|` for `α_i`, `|S_i|` for `λ_i`, `|S_i| + 1` for `ξ_i`).
    Example(usize),
    /// The dense Schur complement `S` onto `(w, b)` (pivot = `j` for `w_j`, `n` for `b`).
    Schur,
    /// The example-space system on `(λ_i, μ′_i)` and `b` (pivot = `2i` for `λ_i`, `2i + 1` for
    /// `μ′_i`, `2m` for `b`).
    ExampleSpace,
    /// The sparse quasi-definite system on `(w, λ, μ′, b)` (pivot = `j` for `w_j`, `n + 2i` for
    /// `λ_i`, `n + 2i + 1` for `μ′_i`, `n + 2m` for `b`).
    SparseLdl,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Block::ArrowDiagonal => write!(f, "arrow diagonal"),
            Block::ArrowCorner => write!(f, "arrow corner"),
            Block::RankOneDenominator => write!(f, "rank-one denominator"),
            Block::Example(i) => write!(f, "example block {i}"),
            Block::Schur => write!(f, "Schur complement onto (w, b)"),
            Block::ExampleSpace => write!(f, "example-space system on (λ, μ′, b)"),
            Block::SparseLdl => write!(f, "sparse system on (w, λ, μ′, b)"),
        }
    }
}

/// Errors of `bulwark-linalg`.
///
/// Input validation happens at construction (shape errors name the parameter); loss of positive
/// definiteness is reported here (or, if dynamic regularisation is enabled, counted in
/// [`FactorInfo`](crate::FactorInfo)) and never turns into a silent NaN.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LinalgError {
    /// A slice or matrix has the wrong length / shape.
    #[error("parameter `{name}`: expected length {expected}, got {got}")]
    DimensionMismatch {
        /// The offending parameter.
        name: &'static str,
        /// The required length.
        expected: usize,
        /// The length received.
        got: usize,
    },
    /// A dimension that must be positive is zero.
    #[error("parameter `{name}` must be positive")]
    EmptyDimension {
        /// The offending parameter.
        name: &'static str,
    },
    /// A value is NaN, infinite or out of its allowed range.
    #[error("parameter `{name}`[{index}] = {value} is invalid: {reason}")]
    InvalidValue {
        /// The offending parameter.
        name: &'static str,
        /// Index of the entry inside the parameter (0 for scalars).
        index: usize,
        /// The rejected value.
        value: f64,
        /// What was expected.
        reason: &'static str,
    },
    /// A CSR structure is malformed (indptr not monotone, column out of range, indices not
    /// strictly increasing within a row).
    #[error("CSR structure invalid at row {row}: {reason}")]
    InvalidCsr {
        /// The row where the problem was found.
        row: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A pivot was not positive (or not finite): the matrix is not (numerically) positive
    /// definite.
    #[error("matrix not positive definite: pivot {pivot} of {block} is {value}")]
    NotPositiveDefinite {
        /// The block in which the factorisation broke down.
        block: Block,
        /// Index of the pivot inside that block.
        pivot: usize,
        /// The offending pivot value (may be NaN).
        value: f64,
    },
    /// `solve` was called before a successful `factor`.
    #[error("solve called without a valid factorisation")]
    NotFactored,
    /// No method for the normal equations fits in the memory limit (or the forced one does not):
    /// nothing large was allocated. The plan holds every method's predicted memory and time.
    #[error("{}", too_large_message(.plan))]
    TooLarge {
        /// The prediction for every method, with the limit.
        plan: Box<crate::dsx::NormalEquationsPlan>,
    },
}

fn too_large_message(plan: &crate::dsx::NormalEquationsPlan) -> String {
    use crate::dsx::human_bytes;
    let limit = plan
        .limit
        .map_or_else(|| "no limit".to_string(), human_bytes);
    let what = match plan.requested {
        crate::dsx::NormalEquations::Auto => "no method for the normal equations fits".to_string(),
        forced => format!("the normal-equations method `{forced}` does not fit"),
    };
    let each: Vec<String> = plan.estimates.iter().map(|e| e.to_string()).collect();
    format!(
        "{what} in {limit} (m = {} examples, n = {} features, {} stored entries): {}",
        plan.m,
        plan.n,
        plan.nnz,
        each.join("; ")
    )
}

/// Crate-local result type.
pub type Result<T> = core::result::Result<T, LinalgError>;

/// Checks that `got == expected` for parameter `name`.
pub(crate) fn check_len(name: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(LinalgError::DimensionMismatch {
            name,
            expected,
            got,
        })
    }
}

/// Checks that every entry of `xs` is finite and `>= 0`.
pub(crate) fn check_nonneg(name: &'static str, xs: &[f64]) -> Result<()> {
    // branch-free pass (vectorises); the indexed scan below runs only when something is wrong
    let (mn, nz) = min_and_finite(xs);
    if mn >= 0.0 && nz == 0.0 {
        return Ok(());
    }
    for (index, &value) in xs.iter().enumerate() {
        if !(value.is_finite() && value >= 0.0) {
            return Err(LinalgError::InvalidValue {
                name,
                index,
                value,
                reason: "must be finite and >= 0",
            });
        }
    }
    Ok(())
}

/// Checks that every entry of `xs` is finite.
pub(crate) fn check_finite(name: &'static str, xs: &[f64]) -> Result<()> {
    if min_and_finite(xs).1 == 0.0 {
        return Ok(());
    }
    for (index, &value) in xs.iter().enumerate() {
        if !value.is_finite() {
            return Err(LinalgError::InvalidValue {
                name,
                index,
                value,
                reason: "must be finite",
            });
        }
    }
    Ok(())
}

/// `(min, Σ x·0)` over eight lanes without early exit, so the compiler vectorises it (the
/// checks run on every factorisation, over `O(nnz)` scalings). `x·0` is NaN exactly for
/// non-finite `x`, so the second value is 0 iff every entry is finite.
#[inline]
fn min_and_finite(xs: &[f64]) -> (f64, f64) {
    let mut mn = [f64::INFINITY; 8];
    let mut nz = [0.0f64; 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            mn[l] = if c[l] < mn[l] { c[l] } else { mn[l] };
            nz[l] += c[l] * 0.0;
        }
    }
    let mut m = mn
        .iter()
        .fold(f64::INFINITY, |a, &b| if b < a { b } else { a });
    let mut z: f64 = nz.iter().sum();
    for &v in rest {
        m = if v < m { v } else { m };
        z += v * 0.0;
    }
    (m, z)
}

/// faer scratch memory with a `Debug` impl (faer's `MemBuffer` has none).
pub(crate) struct Scratch(pub(crate) faer::dyn_stack::MemBuffer);

impl Scratch {
    pub(crate) fn new(req: faer::dyn_stack::StackReq) -> Self {
        Self(faer::dyn_stack::MemBuffer::new(req))
    }

    pub(crate) fn stack(&mut self) -> &mut faer::dyn_stack::MemStack {
        faer::dyn_stack::MemStack::new(&mut self.0)
    }
}

impl fmt::Debug for Scratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scratch").finish_non_exhaustive()
    }
}
