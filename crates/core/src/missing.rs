//! Missing values, and the one convention every Bulwark crate applies to them.
//!
//! # A missing cell is a deleted feature
//!
//! DSX's adversary deletes a feature by setting it to 0 in the model's input space (DSX §2:
//! `x ↦ x ⊙ (1 − z)`); a feature that is missing from a record is treated exactly the same way.
//! Concretely:
//!
//! - **Storage.** A [`Dataset`](crate::Dataset) carries an optional [`MissingMask`]; the feature
//!   matrix holds `0` at every masked cell ([`Dataset::with_missing`](crate::Dataset::with_missing)
//!   checks it), so every model, learner and attack that reads the features sees the deletion.
//! - **Scaling.** A fitted scaling (`bulwark_data::Scaler`) ignores masked cells when it fits, and
//!   maps them to `0` — the deleted value in the model's input space — when it transforms. The
//!   score of a record with missing cells therefore equals the score of the same record with those
//!   cells replaced by the value the scaling maps to `0`: the training mean for standard scaling,
//!   the midpoint of the training range for min-max scaling, `0` without scaling.
//! - **Budget.** What is missing counts against the deletion adversary's budget: a record whose
//!   missing features have total value `v_miss = Σ_{j missing} v_j` faces an adversary that deletes
//!   up to `max(0, N − v_miss)` more ([`MissingMask::remaining_budget`]). The attacks and the
//!   certificates of `bulwark-adversary` apply it per record; `random-delete`, whose budget counts
//!   features, deletes `max(0, N − #missing)` more.
//! - **Training.** A learner fitted on records with masked cells fits them with those features
//!   deleted (the constraint the DSX LP and O2B place on every feature they see), on the full
//!   budget `N` — the guarantee then holds for `N` further deletions.
//!
//! ```
//! use bulwark_core::{DecisionFunction, Dataset, DenseMatrix, LinearModel, MissingMask, Sign};
//!
//! // two records; the second misses feature 1 (its cell holds 0, the deleted value)
//! let x = DenseMatrix::from_rows(&[vec![1.0, 2.0, 0.5], vec![1.0, 0.0, 0.5]])?;
//! let data = Dataset::binary("toy", x, vec![Sign::Pos, Sign::Pos])?
//!     .with_missing(MissingMask::from_rows(3, &[vec![], vec![1]])?)?;
//! let model = LinearModel::try_new(vec![1.0, 1.0, -1.0], 0.0)?;
//! // the score of a record with a missing feature is its score with that feature deleted
//! assert_eq!(model.decision_all(data.features())?, vec![2.5, 0.5]);
//! // and the feature's value is spent from the adversary's budget
//! let mask = data.missing().unwrap();
//! assert_eq!(mask.remaining_budget(1, &[1.0, 1.5, 1.0], 2.0), 0.5);
//! # Ok::<(), bulwark_core::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The missing cells of an `m × n` data set, row by row (a CSR sparsity pattern: `indptr` has
/// `m + 1` entries, the columns of each row are strictly increasing and `< n`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "MaskRepr", into = "MaskRepr")]
pub struct MissingMask {
    n_cols: usize,
    indptr: Vec<usize>,
    cols: Vec<usize>,
}

#[derive(Serialize, Deserialize)]
struct MaskRepr {
    n_cols: usize,
    indptr: Vec<usize>,
    cols: Vec<usize>,
}

impl TryFrom<MaskRepr> for MissingMask {
    type Error = Error;
    fn try_from(r: MaskRepr) -> Result<Self> {
        Self::try_new(r.n_cols, r.indptr, r.cols)
    }
}

impl From<MissingMask> for MaskRepr {
    fn from(m: MissingMask) -> Self {
        Self {
            n_cols: m.n_cols,
            indptr: m.indptr,
            cols: m.cols,
        }
    }
}

impl MissingMask {
    /// Validates the pattern: `indptr` starts at 0, is non-decreasing and ends at `cols.len()`;
    /// each row's columns are strictly increasing and `< n_cols`.
    pub fn try_new(n_cols: usize, indptr: Vec<usize>, cols: Vec<usize>) -> Result<Self> {
        if indptr.first() != Some(&0) || indptr.last() != Some(&cols.len()) {
            return Err(Error::param(
                "missing mask",
                format!("indptr of {} entries", indptr.len()),
                "indptr from 0 to the number of missing cells",
            ));
        }
        for (i, w) in indptr.windows(2).enumerate() {
            if w[0] > w[1] || w[1] > cols.len() {
                return Err(Error::param(
                    "missing mask",
                    format!("row {}", i + 1),
                    "a non-decreasing indptr",
                ));
            }
            let row = &cols[w[0]..w[1]];
            if row.iter().any(|&j| j >= n_cols) || row.windows(2).any(|p| p[0] >= p[1]) {
                return Err(Error::param(
                    "missing mask",
                    format!("row {}", i + 1),
                    format!("strictly increasing columns below {n_cols}"),
                ));
            }
        }
        Ok(Self {
            n_cols,
            indptr,
            cols,
        })
    }

    /// A mask from the missing columns of each row (any order; duplicates are an error).
    pub fn from_rows<R: AsRef<[usize]>>(n_cols: usize, rows: &[R]) -> Result<Self> {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        indptr.push(0);
        let mut cols = Vec::new();
        for r in rows {
            let start = cols.len();
            cols.extend_from_slice(r.as_ref());
            cols[start..].sort_unstable();
            indptr.push(cols.len());
        }
        Self::try_new(n_cols, indptr, cols)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.n_cols
    }
    /// The missing columns of row `i`, increasing.
    #[inline]
    pub fn row(&self, i: usize) -> &[usize] {
        &self.cols[self.indptr[i]..self.indptr[i + 1]]
    }
    /// Whether cell `(i, j)` is missing.
    pub fn is_missing(&self, i: usize, j: usize) -> bool {
        self.row(i).binary_search(&j).is_ok()
    }
    /// Total number of missing cells.
    pub fn count(&self) -> usize {
        self.cols.len()
    }
    /// Number of rows with at least one missing cell.
    pub fn incomplete_rows(&self) -> usize {
        self.indptr.windows(2).filter(|w| w[1] > w[0]).count()
    }
    /// Number of missing cells per column.
    pub fn column_counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.n_cols];
        for &j in &self.cols {
            c[j] += 1;
        }
        c
    }
    /// The rows `idx`, in that order.
    pub fn select(&self, idx: &[usize]) -> Self {
        let mut indptr = Vec::with_capacity(idx.len() + 1);
        indptr.push(0);
        let mut cols = Vec::new();
        for &i in idx {
            cols.extend_from_slice(self.row(i));
            indptr.push(cols.len());
        }
        Self {
            n_cols: self.n_cols,
            indptr,
            cols,
        }
    }
    /// `Σ_{j missing in row i} v_j`: the deletion budget row `i` has already spent.
    pub fn value(&self, i: usize, values: &[f64]) -> f64 {
        self.row(i).iter().map(|&j| values[j]).sum()
    }
    /// What an adversary with budget `N` may still delete in row `i`: `max(0, N − value(i))`
    /// (module docs).
    pub fn remaining_budget(&self, i: usize, values: &[f64], budget: f64) -> f64 {
        (budget - self.value(i, values)).max(0.0)
    }
}

/// The budget left to the adversary on row `i` of data with an optional mask (the full `budget`
/// without one).
#[inline]
pub fn remaining_budget(mask: Option<&MissingMask>, i: usize, values: &[f64], budget: f64) -> f64 {
    mask.map_or(budget, |m| m.remaining_budget(i, values, budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_budgets_and_selection() {
        let m = MissingMask::from_rows(4, &[vec![2, 0], vec![], vec![3]]).unwrap();
        assert_eq!((m.rows(), m.cols(), m.count()), (3, 4, 3));
        assert_eq!(m.row(0), &[0, 2]);
        assert_eq!(m.incomplete_rows(), 2);
        assert!(m.is_missing(0, 2) && !m.is_missing(0, 1) && m.is_missing(2, 3));
        assert_eq!(m.column_counts(), vec![1, 0, 1, 1]);
        let v = [1.0, 2.0, 0.5, 4.0];
        assert_eq!(m.value(0, &v), 1.5);
        assert_eq!(m.remaining_budget(0, &v, 2.0), 0.5);
        assert_eq!(m.remaining_budget(2, &v, 2.0), 0.0);
        assert_eq!(remaining_budget(None, 0, &v, 2.0), 2.0);
        let s = m.select(&[2, 2, 1]);
        assert_eq!(
            (s.row(0), s.row(1), s.row(2)),
            (&[3][..], &[3][..], &[][..])
        );
    }

    #[test]
    fn invalid_patterns_are_refused() {
        assert!(MissingMask::from_rows(2, &[vec![1, 1]]).is_err());
        assert!(MissingMask::from_rows(2, &[vec![2]]).is_err());
        assert!(MissingMask::try_new(2, vec![0, 2, 1], vec![0]).is_err());
        let m = MissingMask::from_rows(3, &[vec![1], vec![0, 2]]).unwrap();
        let back: MissingMask = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert!(
            serde_json::from_str::<MissingMask>(r#"{"n_cols":2,"indptr":[0,1],"cols":[5]}"#)
                .is_err()
        );
    }
}
