//! Borrowed views of a data set: a subset of its rows, in a given order, without copying the
//! features. Splits, boosting rounds and outlier removal hand views to learners and metrics.

use std::borrow::Cow;

use crate::dataset::{Dataset, Sign, Targets};
use crate::error::{Error, Result};
use crate::matrix::{Features, RowView};

/// The rows `rows` (all of them when `None`) of a borrowed [`Dataset`]. Row `i` of the view is
/// row `rows[i]` of the data; labels and example weights follow the rows.
#[derive(Debug, Clone)]
pub struct DatasetView<'a> {
    data: &'a Dataset,
    rows: Option<Cow<'a, [usize]>>,
}

impl<'a> DatasetView<'a> {
    /// Every row of `data`.
    pub fn full(data: &'a Dataset) -> Self {
        Self { data, rows: None }
    }
    /// The rows `rows` of `data` (in that order, repeats allowed: a bootstrap sample);
    /// a typed error names the first index out of range.
    pub fn rows(data: &'a Dataset, rows: impl Into<Cow<'a, [usize]>>) -> Result<Self> {
        let rows = rows.into();
        if let Some(&i) = rows.iter().find(|&&i| i >= data.len()) {
            return Err(Error::param(
                "rows",
                i,
                format!("row indices below the data's {} rows", data.len()),
            ));
        }
        Ok(Self {
            data,
            rows: Some(rows),
        })
    }
    /// The view's rows `idx` (indices into this view), composed without copying features.
    pub fn select(&self, idx: &[usize]) -> Result<DatasetView<'a>> {
        if let Some(&i) = idx.iter().find(|&&i| i >= self.len()) {
            return Err(Error::param(
                "rows",
                i,
                format!("row indices below the view's {} rows", self.len()),
            ));
        }
        let rows: Vec<usize> = idx.iter().map(|&i| self.data_index(i)).collect();
        Ok(Self {
            data: self.data,
            rows: Some(Cow::Owned(rows)),
        })
    }
    /// The underlying data set.
    pub fn data(&self) -> &'a Dataset {
        self.data
    }
    /// The row indices into [`DatasetView::data`], when the view is not the whole set.
    pub fn indices(&self) -> Option<&[usize]> {
        self.rows.as_deref()
    }
    /// Index into the underlying data of view row `i`.
    #[inline]
    pub fn data_index(&self, i: usize) -> usize {
        self.rows.as_ref().map_or(i, |r| r[i])
    }
    /// Number of rows in the view.
    pub fn len(&self) -> usize {
        self.rows.as_ref().map_or(self.data.len(), |r| r.len())
    }
    /// Whether the view has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.data.n_features()
    }
    /// Number of classes of the underlying data.
    pub fn n_classes(&self) -> usize {
        self.data.n_classes()
    }
    /// The feature matrix of the underlying data (all rows).
    pub fn features(&self) -> &'a Features {
        self.data.features()
    }
    /// View row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> RowView<'a> {
        self.data.row(self.data_index(i))
    }
    /// Class index of view row `i` (binary: 0 for −1, 1 for +1).
    #[inline]
    pub fn class_index(&self, i: usize) -> usize {
        self.data.targets().class_index(self.data_index(i))
    }
    /// The ±1 label of view row `i`; a typed error on multiclass data.
    pub fn label(&self, i: usize) -> Result<Sign> {
        Ok(self.data.binary_labels()?[self.data_index(i)])
    }
    /// The example weight of view row `i` (1 when the data carry none).
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.data.weights().map_or(1.0, |w| w[self.data_index(i)])
    }
    /// Whether the underlying data carry example weights.
    pub fn is_weighted(&self) -> bool {
        self.data.weights().is_some()
    }
    /// An owned copy of the view's rows (copies the features: use only where a learner needs
    /// contiguous storage).
    pub fn to_dataset(&self) -> Dataset {
        match &self.rows {
            None => self.data.clone(),
            Some(r) => self.data.select(r),
        }
    }
    /// The targets of the view's rows.
    pub fn targets(&self) -> Targets {
        match self.data.targets() {
            Targets::Binary(v) => {
                Targets::Binary((0..self.len()).map(|i| v[self.data_index(i)]).collect())
            }
            Targets::Multiclass(v) => {
                Targets::Multiclass((0..self.len()).map(|i| v[self.data_index(i)]).collect())
            }
        }
    }
}

impl<'a> From<&'a Dataset> for DatasetView<'a> {
    fn from(data: &'a Dataset) -> Self {
        Self::full(data)
    }
}
