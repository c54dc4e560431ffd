//! Feature matrices: dense row-major and compressed sparse rows, with a common row view.
//!
//! Rows are what every learner of the mission touches (one example at a time), so both formats
//! are row-major. `bulwark-linalg` views the dense format as a faer `MatRef` without copying
//! (`MatRef::from_row_major_slice`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Location, Result};
use crate::missing::MissingMask;

/// A dense `rows × cols` matrix of `f64` stored row-major. Deserialisation validates as
/// [`DenseMatrix::try_new`] does (a model file cannot declare a shape its values do not fill).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawDense")]
pub struct DenseMatrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

/// A [`DenseMatrix`] as stored, before validation.
#[derive(Deserialize)]
struct RawDense {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl TryFrom<RawDense> for DenseMatrix {
    type Error = Error;
    fn try_from(r: RawDense) -> Result<Self> {
        Self::try_new(r.rows, r.cols, r.data)
    }
}

/// A [`CsrMatrix`] as stored, before validation.
#[derive(Deserialize)]
struct RawCsr {
    rows: usize,
    cols: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
}

impl TryFrom<RawCsr> for CsrMatrix {
    type Error = Error;
    fn try_from(r: RawCsr) -> Result<Self> {
        Self::try_new(r.rows, r.cols, r.indptr, r.indices, r.values)
    }
}

impl DenseMatrix {
    /// Wraps row-major `data`; fails if `data.len() != rows * cols` or a value is not finite.
    pub fn try_new(rows: usize, cols: usize, data: Vec<f64>) -> Result<Self> {
        let expected = rows
            .checked_mul(cols)
            .ok_or_else(|| Error::param("rows*cols", rows, "a size that fits in memory"))?;
        if data.len() != expected {
            return Err(Error::shape(
                "dense matrix data (rows*cols)",
                expected,
                data.len(),
            ));
        }
        if let Some(k) = data.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite {
                location: Location::source("dense matrix")
                    .line(k / cols.max(1) + 1)
                    .column(k % cols.max(1) + 1),
                value: data[k].to_string(),
            });
        }
        Ok(Self { rows, cols, data })
    }
    /// A matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }
    /// Builds from a list of equally long rows.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self> {
        let cols = rows.first().map_or(0, Vec::len);
        let mut data = Vec::with_capacity(rows.len() * cols);
        for (i, r) in rows.iter().enumerate() {
            if r.len() != cols {
                return Err(Error::input(
                    Location::source("rows").line(i + 1),
                    format!("ragged row: expected {cols} values, found {}", r.len()),
                ));
            }
            data.extend_from_slice(r);
        }
        Self::try_new(rows.len(), cols, data)
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Row `i` as a slice.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
    /// Row `i` as a mutable slice.
    pub fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.data[i * self.cols..(i + 1) * self.cols]
    }
    /// The row-major storage.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }
    /// The row-major storage, mutable. Callers keep values finite.
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.data
    }
    /// Consumes the matrix, returning its row-major storage.
    pub fn into_vec(self) -> Vec<f64> {
        self.data
    }
    /// Entry `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }
    /// A new matrix made of the rows `idx`, in that order.
    pub fn select_rows(&self, idx: &[usize]) -> Self {
        let mut data = Vec::with_capacity(idx.len() * self.cols);
        for &i in idx {
            data.extend_from_slice(self.row(i));
        }
        Self {
            rows: idx.len(),
            cols: self.cols,
            data,
        }
    }
    /// A new matrix made of the columns `idx`, in that order.
    pub fn select_cols(&self, idx: &[usize]) -> Self {
        let mut data = Vec::with_capacity(self.rows * idx.len());
        for i in 0..self.rows {
            let r = self.row(i);
            data.extend(idx.iter().map(|&j| r[j]));
        }
        Self {
            rows: self.rows,
            cols: idx.len(),
            data,
        }
    }
    /// Number of non-zero entries.
    pub fn nnz(&self) -> usize {
        self.data.iter().filter(|v| **v != 0.0).count()
    }
}

/// A sparse matrix in compressed sparse row format with strictly increasing column indices per
/// row. Deserialisation validates as [`CsrMatrix::try_new`] does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawCsr")]
pub struct CsrMatrix {
    rows: usize,
    cols: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
}

impl CsrMatrix {
    /// Validates and wraps CSR arrays: `indptr` has `rows + 1` non-decreasing entries starting at 0,
    /// column indices are `< cols` and strictly increasing within each row, values are finite.
    pub fn try_new(
        rows: usize,
        cols: usize,
        indptr: Vec<usize>,
        indices: Vec<usize>,
        values: Vec<f64>,
    ) -> Result<Self> {
        if Some(indptr.len()) != rows.checked_add(1) {
            return Err(Error::shape(
                "CSR indptr length (rows + 1)",
                rows.saturating_add(1),
                indptr.len(),
            ));
        }
        if indices.len() != values.len() {
            return Err(Error::shape(
                "CSR values length (= indices length)",
                indices.len(),
                values.len(),
            ));
        }
        if indptr[0] != 0 || indptr[rows] != indices.len() {
            return Err(Error::input(
                Location::source("CSR matrix"),
                "indptr must start at 0 and end at nnz",
            ));
        }
        for i in 0..rows {
            let (a, b) = (indptr[i], indptr[i + 1]);
            if b < a {
                return Err(Error::input(
                    Location::source("CSR matrix").line(i + 1),
                    "indptr is decreasing",
                ));
            }
            for k in a..b {
                let j = indices[k];
                if j >= cols {
                    return Err(Error::input(
                        Location::source("CSR matrix").line(i + 1),
                        format!("column index {j} out of range (cols = {cols})"),
                    ));
                }
                if k > a && indices[k - 1] >= j {
                    return Err(Error::input(
                        Location::source("CSR matrix").line(i + 1),
                        format!(
                            "column indices not strictly increasing ({} then {j})",
                            indices[k - 1]
                        ),
                    ));
                }
                if !values[k].is_finite() {
                    return Err(Error::NonFinite {
                        location: Location::source("CSR matrix").line(i + 1).column(j + 1),
                        value: values[k].to_string(),
                    });
                }
            }
        }
        Ok(Self {
            rows,
            cols,
            indptr,
            indices,
            values,
        })
    }
    /// Compresses a dense matrix (drops exact zeros).
    pub fn from_dense(d: &DenseMatrix) -> Self {
        let mut indptr = Vec::with_capacity(d.rows() + 1);
        let mut indices = Vec::new();
        let mut values = Vec::new();
        indptr.push(0);
        for i in 0..d.rows() {
            for (j, &v) in d.row(i).iter().enumerate() {
                if v != 0.0 {
                    indices.push(j);
                    values.push(v);
                }
            }
            indptr.push(indices.len());
        }
        Self {
            rows: d.rows(),
            cols: d.cols(),
            indptr,
            indices,
            values,
        }
    }
    /// Expands to a dense matrix.
    pub fn to_dense(&self) -> DenseMatrix {
        let mut d = DenseMatrix::zeros(self.rows, self.cols);
        for i in 0..self.rows {
            let (idx, val) = self.row(i);
            let r = d.row_mut(i);
            for (&j, &v) in idx.iter().zip(val) {
                r[j] = v;
            }
        }
        d
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Row `i` as (column indices, values).
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        (&self.indices[a..b], &self.values[a..b])
    }
    /// Row pointer array (`rows + 1` entries).
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }
    /// Column indices of all stored entries.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
    /// Values of all stored entries.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// Values, mutable (the pattern is fixed). Callers keep values finite.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }
    /// A new matrix made of the rows `idx`, in that order.
    pub fn select_rows(&self, idx: &[usize]) -> Self {
        let mut indptr = Vec::with_capacity(idx.len() + 1);
        let mut indices = Vec::new();
        let mut values = Vec::new();
        indptr.push(0);
        for &i in idx {
            let (ci, cv) = self.row(i);
            indices.extend_from_slice(ci);
            values.extend_from_slice(cv);
            indptr.push(indices.len());
        }
        Self {
            rows: idx.len(),
            cols: self.cols,
            indptr,
            indices,
            values,
        }
    }
}

/// A borrowed row of either matrix format.
#[derive(Debug, Clone, Copy)]
pub enum RowView<'a> {
    /// All `n` values.
    Dense(&'a [f64]),
    /// Stored entries only: strictly increasing column indices and their values.
    Sparse {
        /// Column indices.
        indices: &'a [usize],
        /// Values.
        values: &'a [f64],
    },
}

impl<'a> RowView<'a> {
    /// Inner product with a dense vector `w` (of length ≥ the row's dimension).
    #[inline]
    pub fn dot(&self, w: &[f64]) -> f64 {
        match *self {
            RowView::Dense(x) => x.iter().zip(w).map(|(a, b)| a * b).sum(),
            RowView::Sparse { indices, values } => {
                indices.iter().zip(values).map(|(&j, &v)| v * w[j]).sum()
            }
        }
    }
    /// The value in column `j` (0 when a sparse row does not store it).
    pub fn get(&self, j: usize) -> f64 {
        match *self {
            RowView::Dense(x) => x[j],
            RowView::Sparse { indices, values } => {
                indices.binary_search(&j).map_or(0.0, |k| values[k])
            }
        }
    }
    /// Iterates over the non-zero entries as `(column, value)`.
    pub fn nonzeros(&self) -> impl Iterator<Item = (usize, f64)> + 'a {
        let (dense, sparse) = match *self {
            RowView::Dense(x) => (
                Some(
                    x.iter()
                        .enumerate()
                        .filter(|(_, v)| **v != 0.0)
                        .map(|(j, &v)| (j, v)),
                ),
                None,
            ),
            RowView::Sparse { indices, values } => (
                None,
                Some(indices.iter().copied().zip(values.iter().copied())),
            ),
        };
        dense
            .into_iter()
            .flatten()
            .chain(sparse.into_iter().flatten())
    }
    /// `w += a · x` for a dense `w`.
    #[inline]
    pub fn axpy_into(&self, a: f64, w: &mut [f64]) {
        match *self {
            RowView::Dense(x) => w.iter_mut().zip(x).for_each(|(wj, xj)| *wj += a * xj),
            RowView::Sparse { indices, values } => {
                for (&j, &v) in indices.iter().zip(values) {
                    w[j] += a * v;
                }
            }
        }
    }
    /// Writes the row into a dense buffer of its dimension (zeros elsewhere).
    pub fn to_dense_into(&self, out: &mut [f64]) {
        match *self {
            RowView::Dense(x) => out.copy_from_slice(x),
            RowView::Sparse { indices, values } => {
                out.fill(0.0);
                for (&j, &v) in indices.iter().zip(values) {
                    out[j] = v;
                }
            }
        }
    }
}

/// The feature matrix of a data set: dense, or sparse (CSR) for LIBSVM-style data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Features {
    /// Dense row-major.
    Dense(DenseMatrix),
    /// Compressed sparse rows.
    Sparse(CsrMatrix),
}

impl Features {
    /// Number of examples.
    pub fn rows(&self) -> usize {
        match self {
            Features::Dense(d) => d.rows(),
            Features::Sparse(s) => s.rows(),
        }
    }
    /// Number of features.
    pub fn cols(&self) -> usize {
        match self {
            Features::Dense(d) => d.cols(),
            Features::Sparse(s) => s.cols(),
        }
    }
    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> RowView<'_> {
        match self {
            Features::Dense(d) => RowView::Dense(d.row(i)),
            Features::Sparse(s) => {
                let (indices, values) = s.row(i);
                RowView::Sparse { indices, values }
            }
        }
    }
    /// Number of non-zero entries.
    pub fn nnz(&self) -> usize {
        match self {
            Features::Dense(d) => d.nnz(),
            Features::Sparse(s) => s.nnz(),
        }
    }
    /// The bytes the stored values (and, for CSR, their indices and row pointers) take.
    pub fn stored_bytes(&self) -> u64 {
        let word = std::mem::size_of::<usize>() as u64;
        match self {
            Features::Dense(d) => (d.as_slice().len() as u64).saturating_mul(8),
            Features::Sparse(s) => (s.nnz() as u64)
                .saturating_mul(8 + word)
                .saturating_add((s.rows() as u64 + 1).saturating_mul(word)),
        }
    }
    /// A new matrix of the rows `idx`.
    pub fn select_rows(&self, idx: &[usize]) -> Self {
        match self {
            Features::Dense(d) => Features::Dense(d.select_rows(idx)),
            Features::Sparse(s) => Features::Sparse(s.select_rows(idx)),
        }
    }
    /// A dense copy (or the matrix itself when already dense).
    pub fn to_dense(&self) -> DenseMatrix {
        match self {
            Features::Dense(d) => d.clone(),
            Features::Sparse(s) => s.to_dense(),
        }
    }
    /// A CSR copy (or the matrix itself when already sparse).
    pub fn to_csr(&self) -> CsrMatrix {
        match self {
            Features::Dense(d) => CsrMatrix::from_dense(d),
            Features::Sparse(s) => s.clone(),
        }
    }
    /// Applies `f(column, value)` to every stored value in place (zeros of a sparse matrix stay
    /// implicit, so `f(j, 0) = 0` must hold for sparse data). Non-finite results are rejected.
    pub fn map_in_place(&mut self, mut f: impl FnMut(usize, f64) -> f64) -> Result<()> {
        match self {
            Features::Dense(d) => {
                let cols = d.cols();
                for (k, v) in d.as_mut_slice().iter_mut().enumerate() {
                    *v = f(k % cols, *v);
                    if !v.is_finite() {
                        return Err(Error::NonFinite {
                            location: Location::source("feature transform")
                                .line(k / cols + 1)
                                .column(k % cols + 1),
                            value: v.to_string(),
                        });
                    }
                }
            }
            Features::Sparse(s) => {
                let indices = s.indices.clone();
                for (v, &j) in s.values_mut().iter_mut().zip(&indices) {
                    *v = f(j, *v);
                    if !v.is_finite() {
                        return Err(Error::NonFinite {
                            location: Location::source("feature transform").column(j + 1),
                            value: v.to_string(),
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

impl Features {
    /// Sets every cell of `mask` to 0 (the deleted value, see [`crate::missing`]); a sparse
    /// matrix drops those entries. The mask must have this matrix's shape.
    pub fn delete_cells(&mut self, mask: &MissingMask) -> Result<()> {
        if mask.rows() != self.rows() || mask.cols() != self.cols() {
            return Err(Error::shape(
                "missing mask vs feature rows",
                self.rows(),
                mask.rows(),
            ));
        }
        match self {
            Features::Dense(d) => {
                for i in 0..mask.rows() {
                    let r = d.row_mut(i);
                    for &j in mask.row(i) {
                        r[j] = 0.0;
                    }
                }
            }
            Features::Sparse(s) => {
                if mask.count() == 0 {
                    return Ok(());
                }
                let mut indptr = Vec::with_capacity(s.rows() + 1);
                let mut indices = Vec::with_capacity(s.nnz());
                let mut values = Vec::with_capacity(s.nnz());
                indptr.push(0);
                for i in 0..s.rows() {
                    let (idx, val) = s.row(i);
                    let gone = mask.row(i);
                    for (&j, &v) in idx.iter().zip(val) {
                        if gone.binary_search(&j).is_err() {
                            indices.push(j);
                            values.push(v);
                        }
                    }
                    indptr.push(indices.len());
                }
                *s = CsrMatrix::try_new(s.rows(), s.cols(), indptr, indices, values)?;
            }
        }
        Ok(())
    }
}

impl From<DenseMatrix> for Features {
    fn from(d: DenseMatrix) -> Self {
        Features::Dense(d)
    }
}

impl From<CsrMatrix> for Features {
    fn from(s: CsrMatrix) -> Self {
        Features::Sparse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored matrix is validated as a constructed one: a shape whose product overflows or
    /// that its values do not fill, an index out of range, are errors, not panics later.
    #[test]
    fn deserialisation_validates_the_shape() {
        let ok: DenseMatrix =
            serde_json::from_str(r#"{"rows": 1, "cols": 2, "data": [1.0, 2.0]}"#).unwrap();
        assert_eq!(ok.row(0), [1.0, 2.0]);
        for bad in [
            r#"{"rows": 2, "cols": 2, "data": [1.0, 2.0]}"#,
            r#"{"rows": 4294967296, "cols": 4294967296, "data": []}"#,
        ] {
            let r = serde_json::from_str::<DenseMatrix>(bad);
            assert!(r.is_err(), "{bad}: {r:?}");
        }
        let bad_csr =
            r#"{"rows": 1, "cols": 2, "indptr": [0, 1], "indices": [5], "values": [1.0]}"#;
        let e = serde_json::from_str::<CsrMatrix>(bad_csr).unwrap_err();
        assert!(e.to_string().contains("column index 5 out of range"), "{e}");
        let huge = r#"{"rows": 18446744073709551615, "cols": 1, "indptr": [0], "indices": [], "values": []}"#;
        assert!(serde_json::from_str::<CsrMatrix>(huge).is_err());
    }
}
