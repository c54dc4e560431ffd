//! Error types of the crate (one `thiserror` enum per concern, wrapped by [`LpError`]).

use thiserror::Error;

/// Invalid problem data, naming the offending variable or row.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ProblemError {
    /// A vector has the wrong length.
    #[error("shape mismatch: {what} has length {got}, expected {expected}")]
    Shape {
        /// Which vector.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The expected length.
        expected: usize,
    },
    /// The CSC structure is malformed (pointers, indices out of range or unsorted).
    #[error("malformed CSC matrix: {0}")]
    BadCsc(String),
    /// A NaN or an infinite value where a finite number is required.
    #[error("non-finite value {value} in {what} of `{name}`")]
    NonFinite {
        /// `objective`, `matrix entry`, …
        what: &'static str,
        /// Name (or index) of the variable or row.
        name: String,
        /// The value.
        value: f64,
    },
    /// A bound is NaN, `+inf` as a lower bound or `-inf` as an upper bound.
    #[error("invalid {what} bound {value} of `{name}`")]
    BadBound {
        /// `variable lower`, `row upper`, …
        what: &'static str,
        /// Name of the variable or row.
        name: String,
        /// The value.
        value: f64,
    },
    /// Lower bound greater than the upper bound.
    #[error("{what} `{name}` has lower bound {lower} > upper bound {upper}")]
    CrossedBounds {
        /// `variable` or `row`.
        what: &'static str,
        /// Name of the variable or row.
        name: String,
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// A coefficient refers to a variable that does not exist.
    #[error("row `{row}` references variable index {col}, but there are only {ncols} variables")]
    UnknownVariable {
        /// Row name.
        row: String,
        /// The bad index.
        col: usize,
        /// Number of variables.
        ncols: usize,
    },
    /// Two coefficients for the same (row, variable) pair.
    #[error("duplicate coefficient for row `{row}`, variable `{col}`")]
    DuplicateEntry {
        /// Row name.
        row: String,
        /// Variable name.
        col: String,
    },
}

/// An MPS parse error. Every variant carries the 1-based line number.
#[derive(Debug, Error)]
pub enum MpsError {
    /// I/O failure while reading.
    #[error("I/O error reading MPS input: {0}")]
    Io(#[from] std::io::Error),
    /// A row name in COLUMNS/RHS/RANGES that was not declared in ROWS.
    #[error("line {line}: unknown row `{name}` in {section}")]
    UnknownRow {
        /// Line number.
        line: usize,
        /// Row name.
        name: String,
        /// Section.
        section: &'static str,
    },
    /// A column name in BOUNDS that was not declared in COLUMNS.
    #[error("line {line}: unknown column `{name}` in BOUNDS")]
    UnknownColumn {
        /// Line number.
        line: usize,
        /// Column name.
        name: String,
    },
    /// A token that should be a number is not.
    #[error("line {line}: expected a number, found `{token}`")]
    BadNumber {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A required section is missing (reported at the line where it was expected).
    #[error("line {line}: missing section {section}")]
    MissingSection {
        /// Line number.
        line: usize,
        /// Section name.
        section: &'static str,
    },
    /// A row declared twice.
    #[error("line {line}: duplicate row name `{name}`")]
    DuplicateRow {
        /// Line number.
        line: usize,
        /// Row name.
        name: String,
    },
    /// A column whose entries are not contiguous (declared twice).
    #[error("line {line}: duplicate column name `{name}` (columns must be contiguous)")]
    DuplicateColumn {
        /// Line number.
        line: usize,
        /// Column name.
        name: String,
    },
    /// The same (column, row) coefficient given twice.
    #[error("line {line}: duplicate coefficient for column `{col}` in row `{row}`")]
    DuplicateEntry {
        /// Line number.
        line: usize,
        /// Column name.
        col: String,
        /// Row name.
        row: String,
    },
    /// Unknown row type in ROWS (expected N, E, L or G).
    #[error("line {line}: unknown row type `{token}` (expected N, E, L or G)")]
    UnknownRowType {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// Unknown or unsupported bound type in BOUNDS.
    #[error(
        "line {line}: unknown bound type `{token}` (expected UP, LO, FX, FR, MI, PL, BV, LI, UI)"
    )]
    UnknownBoundType {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A line with the wrong number of fields or an unknown section header.
    #[error("line {line}: {message}")]
    Syntax {
        /// Line number.
        line: usize,
        /// What was expected.
        message: String,
    },
    /// The parsed data does not form a valid problem.
    #[error("invalid problem: {0}")]
    Problem(#[from] ProblemError),
}

impl MpsError {
    /// The 1-based line number the error refers to, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Io(_) | Self::Problem(_) => None,
            Self::UnknownRow { line, .. }
            | Self::UnknownColumn { line, .. }
            | Self::BadNumber { line, .. }
            | Self::MissingSection { line, .. }
            | Self::DuplicateRow { line, .. }
            | Self::DuplicateColumn { line, .. }
            | Self::DuplicateEntry { line, .. }
            | Self::UnknownRowType { line, .. }
            | Self::UnknownBoundType { line, .. }
            | Self::Syntax { line, .. } => Some(*line),
        }
    }
}

/// Failure of a KKT backend.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum KktError {
    /// `factor`/`solve` called before `analyze`/`factor`.
    #[error("KKT backend `{backend}` used before {missing}")]
    NotReady {
        /// Backend name.
        backend: &'static str,
        /// The missing step.
        missing: &'static str,
    },
    /// A dimension does not match the analysed problem.
    #[error("KKT backend dimension mismatch: {what} has length {got}, expected {expected}")]
    Dimension {
        /// Which vector.
        what: &'static str,
        /// Length given.
        got: usize,
        /// Length expected.
        expected: usize,
    },
    /// The backend cannot handle this problem (structure not supported).
    #[error("KKT backend `{backend}` does not support this problem: {reason}")]
    Unsupported {
        /// Backend name.
        backend: &'static str,
        /// Why.
        reason: String,
    },
    /// Symbolic analysis failed.
    #[error("symbolic analysis failed: {0}")]
    Symbolic(String),
    /// A zero or wrong-signed pivot that regularisation could not repair.
    #[error("numerical factorisation failed at pivot {index}")]
    BadPivot {
        /// Pivot index (in the backend's ordering).
        index: usize,
    },
    /// Non-finite values in the scalings or the solution.
    #[error("non-finite value in {0}")]
    NonFinite(&'static str),
}

/// Invalid settings, naming the field.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SettingsError {
    /// A field has an invalid value.
    #[error("invalid value {value} for setting `{field}`: {reason}")]
    BadFieldValue {
        /// Field name.
        field: &'static str,
        /// The rejected value, formatted.
        value: String,
        /// The rule.
        reason: &'static str,
    },
}

/// Errors that prevent a solve from starting (a solve that starts always returns a
/// [`crate::Solution`] with a [`crate::Status`]).
#[derive(Debug, Error)]
pub enum LpError {
    /// Bad problem data.
    #[error(transparent)]
    Problem(#[from] ProblemError),
    /// Bad settings.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// KKT backend failure during setup.
    #[error(transparent)]
    Kkt(#[from] KktError),
    /// MPS input error.
    #[error(transparent)]
    Mps(#[from] MpsError),
    /// The backend requires the original layout but the problem needs presolve.
    #[error("backend `{backend}` requires the original layout, but {reason}")]
    LayoutConflict {
        /// Backend name.
        backend: &'static str,
        /// What conflicts (e.g. a fixed variable).
        reason: String,
    },
}

/// Crate-local result type.
pub type Result<T, E = LpError> = std::result::Result<T, E>;
