//! How files are read: the format override, the missing-value tokens of CSV files and what to
//! do with a record that has a missing cell.

use std::fmt;
use std::str::FromStr;

use bulwark_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::registry::Format;

/// The cells of a CSV file read as missing, besides the tokens the user adds
/// ([`ReadOptions::missing_tokens`]): the empty cell, `NA`, `NaN` (any case) and `?`.
pub const MISSING_TOKENS: &[&str] = &["", "NA", "NaN", "?"];

/// What to do with records that have a missing cell (see `bulwark_core::missing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingPolicy {
    /// A missing cell is an error naming file, line and column (the default).
    #[default]
    Error,
    /// Records with a missing cell are left out (an error when none is left).
    Drop,
    /// Missing cells are kept as a mask: the features are deleted (0 in the model's input space).
    Delete,
}

impl MissingPolicy {
    /// Every policy, in CLI order.
    pub const ALL: [MissingPolicy; 3] = [
        MissingPolicy::Error,
        MissingPolicy::Drop,
        MissingPolicy::Delete,
    ];
    /// The CLI spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            MissingPolicy::Error => "error",
            MissingPolicy::Drop => "drop",
            MissingPolicy::Delete => "delete",
        }
    }
}

impl fmt::Display for MissingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MissingPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| Error::param("missing", s, "one of error, drop, delete"))
    }
}

/// Options of [`crate::load_with`] and [`crate::load_path_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// The file format; `None` guesses it from the name, then from the content.
    pub format: Option<Format>,
    /// Extra CSV cells read as missing (compared after trimming, case-sensitively), besides
    /// [`MISSING_TOKENS`].
    pub missing_tokens: Vec<String>,
    /// What to do with records that have a missing cell.
    pub missing: MissingPolicy,
    /// The longest line (after decompression) a CSV or LIBSVM file may have: a longer one is
    /// an [`bulwark_core::Error::TooLarge`] naming the line, not a buffer that grows with it.
    /// Default [`crate::read::MAX_LINE_BYTES`] (64 MiB).
    pub max_line_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            format: None,
            missing_tokens: Vec::new(),
            missing: MissingPolicy::default(),
            max_line_bytes: crate::read::MAX_LINE_BYTES,
        }
    }
}

impl ReadOptions {
    /// The defaults with another missing-value policy.
    pub fn missing(policy: MissingPolicy) -> Self {
        Self {
            missing: policy,
            ..Self::default()
        }
    }
    /// Whether a (trimmed) CSV cell is a missing-value token.
    pub fn is_missing_token(&self, cell: &str) -> bool {
        MISSING_TOKENS.iter().any(|t| cell.eq_ignore_ascii_case(t))
            || self.missing_tokens.iter().any(|t| t == cell)
    }
    /// The missing-value tokens in words, for messages: `empty, NA, NaN, ?` and the user's.
    pub fn describe_tokens(&self) -> String {
        let builtin = MISSING_TOKENS.iter().map(|t| {
            if t.is_empty() {
                "empty".into()
            } else {
                t.to_string()
            }
        });
        let user = self.missing_tokens.iter().map(|s| format!("`{s}`"));
        builtin.chain(user).collect::<Vec<_>>().join(", ")
    }
}
