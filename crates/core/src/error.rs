//! The one error type shared by every Bulwark crate.
//!
//! Every variant names *what* was wrong and *where*: a file with line and column, a parameter
//! with the rejected value, or a shape with both sizes. Higher-level crates wrap it with
//! `#[error(transparent)]` and add their own variants.

use std::fmt;
use std::path::PathBuf;

/// Where in an input a problem was found: a source (file path or data-set name) and, when known,
/// a 1-based line, a 1-based column and the field (column header) name.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// File path or data-set name.
    pub source: String,
    /// 1-based line number.
    pub line: Option<usize>,
    /// 1-based column (field index for CSV, byte column otherwise).
    pub column: Option<usize>,
    /// Field name (CSV header) when there is one.
    pub field: Option<String>,
}

impl Location {
    /// A location naming only the source.
    pub fn source(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            ..Self::default()
        }
    }
    /// Adds a 1-based line number.
    pub fn line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }
    /// Adds a 1-based column number.
    pub fn column(mut self, column: usize) -> Self {
        self.column = Some(column);
        self
    }
    /// Adds a field name.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        } else if let Some(col) = self.column {
            write!(f, ": column {col}")?;
        }
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        Ok(())
    }
}

/// The shared error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Malformed or invalid input data (files, matrices, label vectors).
    #[error("{location}: {message}")]
    Input {
        /// Where the problem is.
        location: Location,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A hyper-parameter or argument out of its domain.
    #[error("invalid parameter `{name}` = {value}: {expected}")]
    InvalidParameter {
        /// Parameter name as the user writes it (e.g. `budget`, `C`).
        name: String,
        /// The rejected value, printed.
        value: String,
        /// What is allowed.
        expected: String,
    },
    /// Two sizes that must agree do not.
    #[error("shape mismatch in {context}: expected {expected}, found {found}")]
    ShapeMismatch {
        /// What was being combined (e.g. `model weights vs data features`).
        context: String,
        /// The size required.
        expected: usize,
        /// The size found.
        found: usize,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("{location}: non-finite value {value} (NaN and ±Inf are not allowed)")]
    NonFinite {
        /// Where the value is.
        location: Location,
        /// The value, printed.
        value: String,
    },
    /// A binary task needs both classes present.
    #[error("{context}: a binary task needs both classes, found only `{class}` ({count} examples)")]
    SingleClass {
        /// Which data set / task.
        context: String,
        /// The only class present.
        class: String,
        /// How many examples it has.
        count: usize,
    },
    /// A data set name that is not built in and not a file.
    #[error("unknown data set `{name}`: {hint}")]
    UnknownDataset {
        /// The name given.
        name: String,
        /// What names exist / how to get the data.
        hint: String,
    },
    /// A file or data set that should exist does not.
    #[error("{path}: not found ({hint})")]
    NotFound {
        /// The path looked up.
        path: PathBuf,
        /// How to obtain it.
        hint: String,
    },
    /// An I/O failure on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An allocation sized by a number the input declares or implies would exceed the memory
    /// limit ([`crate::memory`]).
    #[error("{location}: {what} would need {} for {purpose}, more than {limit}", crate::memory::Bytes(*.bytes))]
    TooLarge {
        /// Where the number comes from (boxed: the variant stays small).
        location: Box<Location>,
        /// The number and what it is (`2000000000 features (the largest feature index)`).
        what: String,
        /// What the allocation would take.
        bytes: u64,
        /// What it is for.
        purpose: String,
        /// The limit and where it comes from, in words.
        limit: String,
    },
    /// Stopping was asked for (Ctrl-C) and the work stopped at a safe point ([`crate::cancel`]).
    #[error("interrupted: {kept}")]
    Interrupted {
        /// What was kept (or that nothing was written), in words.
        kept: String,
    },
    /// An iterative method failed numerically or did not converge.
    #[error("{algorithm}: {message}")]
    Numerical {
        /// Which algorithm.
        algorithm: String,
        /// What happened.
        message: String,
    },
    /// A run over several processes ([`crate::comm`]) cannot go on: the ranks disagree (on the
    /// data, a check) or the work asked for is not distributed.
    #[error("distributed run ({ranks} ranks): {message}")]
    Distributed {
        /// How many ranks take part.
        ranks: usize,
        /// What went wrong, in words.
        message: String,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn param(
        name: impl Into<String>,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Error::InvalidParameter {
            name: name.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
    /// Shorthand for [`Error::Input`].
    pub fn input(location: Location, message: impl Into<String>) -> Self {
        Error::Input {
            location,
            message: message.into(),
        }
    }
    /// Shorthand for [`Error::ShapeMismatch`].
    pub fn shape(context: impl Into<String>, expected: usize, found: usize) -> Self {
        Error::ShapeMismatch {
            context: context.into(),
            expected,
            found,
        }
    }
    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// `Result` with the shared [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks that `value` is finite and strictly positive, naming the parameter otherwise.
pub fn check_positive(name: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::param(name, value, "a finite number > 0"))
    }
}

/// Checks that `value` is finite and ≥ 0, naming the parameter otherwise.
pub fn check_nonnegative(name: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::param(name, value, "a finite number >= 0"))
    }
}
