//! Conversions between [`CsrMatrix`] and the sparse matrices of other crates, behind cargo
//! features: `sprs` (both ways, [`sprs::CsMat`]) and `faer` (from faer's sparse row and column
//! matrices). Enabled in the facade crate `bulwark`.
//!
//! Every conversion into a [`CsrMatrix`] is validated by [`CsrMatrix::try_new`], so a matrix
//! with a NaN or infinite value, or with column indices that are unsorted or repeated within a
//! row, is a typed [`Error`] naming the row (and, for a value, the column), 1-based. Owned inputs
//! are moved, not copied, when they are already row-major and compact; a column-major input is
//! converted to rows once, a borrowed one is copied once. The other way, [`CsrMatrix::as_sprs`]
//! borrows and `sprs::CsMat::from(&csr)` copies once.
//!
//! ```
//! # #[cfg(feature = "sprs")] {
//! use bulwark_core::CsrMatrix;
//!
//! // 2 × 3, row-major: [[1, 0, 2], [0, 3, 0]]
//! let m = sprs::CsMat::new((2, 3), vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]);
//! let csr = CsrMatrix::try_from(m.clone())?;
//! assert_eq!(csr.row(0), (&[0, 2][..], &[1.0, 2.0][..]));
//! assert_eq!(sprs::CsMat::from(&csr), m);
//! assert_eq!(csr.as_sprs(), m.view());
//!
//! // column-major input: converted to rows
//! let csr = CsrMatrix::try_from(m.to_csc())?;
//! assert_eq!(csr.to_dense().row(1), &[0.0, 3.0, 0.0]);
//! # }
//! # Ok::<(), bulwark_core::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;

/// Validates CSR arrays whose `indptr` may start at an offset (a slice of a larger matrix: the
/// entries are either exactly the referenced ones, or the whole parent's): shifts `indptr` to
/// start at 0 and keeps only the referenced entries (in place, no new buffer).
fn from_offset_csr(
    rows: usize,
    cols: usize,
    mut indptr: Vec<usize>,
    mut indices: Vec<usize>,
    mut values: Vec<f64>,
) -> Result<CsrMatrix> {
    if let (Some(&start), Some(&end)) = (indptr.first(), indptr.last())
        && start > 0
        && start <= end
        && indices.len() == values.len()
    {
        if indices.len() != end - start && end <= indices.len() {
            indices.truncate(end);
            values.truncate(end);
            indices.drain(..start);
            values.drain(..start);
        }
        if indices.len() == end - start {
            indptr.iter_mut().for_each(|p| *p = p.saturating_sub(start));
        }
    }
    CsrMatrix::try_new(rows, cols, indptr, indices, values)
}

#[cfg(feature = "sprs")]
mod with_sprs {
    use super::*;

    /// Moves the arrays of a row-major (CSR) matrix into a [`CsrMatrix`] without copying; a
    /// column-major (CSC) matrix is converted to rows first (one copy). Fails on a non-finite
    /// value.
    impl TryFrom<sprs::CsMat<f64>> for CsrMatrix {
        type Error = Error;
        fn try_from(m: sprs::CsMat<f64>) -> Result<Self> {
            let (rows, cols) = (m.rows(), m.cols());
            let (indptr, indices, values) = m.into_csr().into_raw_storage();
            from_offset_csr(rows, cols, indptr, indices, values)
        }
    }

    /// Copies a borrowed matrix once (converting a column-major one to rows).
    impl TryFrom<sprs::CsMatView<'_, f64>> for CsrMatrix {
        type Error = Error;
        fn try_from(m: sprs::CsMatView<'_, f64>) -> Result<Self> {
            CsrMatrix::try_from(m.to_csr())
        }
    }

    /// Copies the matrix once into a row-major [`sprs::CsMat`] (use [`CsrMatrix::as_sprs`] to
    /// borrow it instead).
    impl From<&CsrMatrix> for sprs::CsMat<f64> {
        fn from(m: &CsrMatrix) -> Self {
            m.as_sprs().to_owned()
        }
    }

    impl CsrMatrix {
        /// A borrowed row-major [`sprs::CsMatView`] of this matrix (no copy).
        pub fn as_sprs(&self) -> sprs::CsMatView<'_, f64> {
            // A CsrMatrix has sprs's invariants (indptr from 0 to nnz, sorted unique in-range
            // indices), so sprs's check cannot fail.
            sprs::CsMatView::new(
                (self.rows(), self.cols()),
                self.indptr(),
                self.indices(),
                self.values(),
            )
        }
    }
}

#[cfg(feature = "faer")]
mod with_faer {
    use super::*;
    use faer::sparse::{SparseColMatRef, SparseRowMat, SparseRowMatRef};

    /// Moves the arrays of a compact faer row matrix into a [`CsrMatrix`] without copying (a
    /// matrix with per-row non-zero counts is compacted: one copy). Fails on a non-finite value
    /// and on unsorted or repeated column indices within a row (faer allows both).
    impl TryFrom<SparseRowMat<usize, f64>> for CsrMatrix {
        type Error = Error;
        fn try_from(m: SparseRowMat<usize, f64>) -> Result<Self> {
            let (symbolic, values) = m.into_parts();
            let (rows, cols, row_ptr, row_nnz, col_idx) = symbolic.into_parts();
            match row_nnz {
                None => from_offset_csr(rows, cols, row_ptr, col_idx, values),
                Some(nnz) => {
                    let (indptr, indices, values) = compact(&row_ptr, &nnz, &col_idx, &values);
                    CsrMatrix::try_new(rows, cols, indptr, indices, values)
                }
            }
        }
    }

    /// Copies a borrowed faer row matrix once (validated as the owned conversion).
    impl TryFrom<SparseRowMatRef<'_, usize, f64>> for CsrMatrix {
        type Error = Error;
        fn try_from(m: SparseRowMatRef<'_, usize, f64>) -> Result<Self> {
            let (symbolic, values) = m.parts();
            let (rows, cols, row_ptr, row_nnz, col_idx) = symbolic.parts();
            let (indptr, indices, values) = match row_nnz {
                Some(nnz) => compact(row_ptr, nnz, col_idx, values),
                None => {
                    let (a, b) = (row_ptr[0], row_ptr[rows]);
                    let indptr = row_ptr.iter().map(|p| p - a).collect();
                    (indptr, col_idx[a..b].to_vec(), values[a..b].to_vec())
                }
            };
            CsrMatrix::try_new(rows, cols, indptr, indices, values)
        }
    }

    /// Converts a faer column matrix to rows (one copy; faer's transpose sums repeated entries).
    impl TryFrom<SparseColMatRef<'_, usize, f64>> for CsrMatrix {
        type Error = Error;
        fn try_from(m: SparseColMatRef<'_, usize, f64>) -> Result<Self> {
            let rows = m.to_row_major().map_err(|e| {
                Error::input(
                    crate::error::Location::source("faer column matrix"),
                    format!("conversion to rows failed: {e:?}"),
                )
            })?;
            CsrMatrix::try_from(rows)
        }
    }

    /// The entries `row_ptr[i] .. row_ptr[i] + nnz[i]` of every row, packed.
    fn compact(
        row_ptr: &[usize],
        nnz: &[usize],
        col_idx: &[usize],
        values: &[f64],
    ) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let total = nnz.iter().sum();
        let (mut indptr, mut indices, mut vals) = (
            Vec::with_capacity(nnz.len() + 1),
            Vec::with_capacity(total),
            Vec::with_capacity(total),
        );
        indptr.push(0);
        for (&start, &k) in row_ptr.iter().zip(nnz) {
            indices.extend_from_slice(&col_idx[start..start + k]);
            vals.extend_from_slice(&values[start..start + k]);
            indptr.push(indices.len());
        }
        (indptr, indices, vals)
    }
}
