//! Per-feature scaling fitted on training data only, then applied to any data set.

use bulwark_core::{Dataset, Error, Features, Result};
use serde::{Deserialize, Serialize};

/// The scaling rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScalingKind {
    /// Affine map of the training range `[min, max]` onto `[−1, 1]`. For sparse data the map
    /// is `x / max|x|` instead, which keeps zeros at zero.
    MinMax,
    /// Zero mean, unit variance (dense data only).
    Standard,
}

/// A fitted per-feature affine map `x ↦ (x − shift_j) · factor_j`. Constant features get
/// `factor = 1` (and are centred), so no division by zero occurs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaler {
    /// The rule it was fitted with.
    pub kind: ScalingKind,
    /// Per-feature shift.
    pub shift: Vec<f64>,
    /// Per-feature factor.
    pub factor: Vec<f64>,
}

impl Scaler {
    /// Fits on `train`.
    pub fn fit(train: &Dataset, kind: ScalingKind) -> Result<Self> {
        let n = train.n_features();
        let m = train.len();
        if m == 0 {
            return Err(Error::param(
                "training data",
                "empty",
                "at least one example to fit a scaler",
            ));
        }
        let sparse = matches!(train.features(), Features::Sparse(_));
        // masked cells (bulwark_core::missing) take no part in the fit
        let is_missing = |i: usize, j: usize| train.missing().is_some_and(|k| k.is_missing(i, j));
        let mut shift = vec![0.0; n];
        let mut factor = vec![1.0; n];
        match (kind, sparse) {
            (ScalingKind::MinMax, false) => {
                let (mut lo, mut hi) = (vec![f64::INFINITY; n], vec![f64::NEG_INFINITY; n]);
                let Features::Dense(d) = train.features() else {
                    unreachable!()
                };
                for i in 0..m {
                    for (j, &v) in d.row(i).iter().enumerate() {
                        if !is_missing(i, j) {
                            lo[j] = lo[j].min(v);
                            hi[j] = hi[j].max(v);
                        }
                    }
                }
                for j in 0..n {
                    if lo[j] > hi[j] {
                        continue; // every cell missing: identity
                    }
                    shift[j] = 0.5 * (lo[j] + hi[j]);
                    let half = 0.5 * (hi[j] - lo[j]);
                    factor[j] = if half > 0.0 { 1.0 / half } else { 1.0 };
                }
            }
            (ScalingKind::MinMax, true) => {
                let mut amax = vec![0.0f64; n];
                for i in 0..m {
                    for (j, v) in train.row(i).nonzeros() {
                        amax[j] = amax[j].max(v.abs());
                    }
                }
                for j in 0..n {
                    factor[j] = if amax[j] > 0.0 { 1.0 / amax[j] } else { 1.0 };
                }
            }
            (ScalingKind::Standard, true) => {
                return Err(Error::param(
                    "scaling",
                    "standard",
                    "min-max for sparse data (centring would make the matrix dense)",
                ));
            }
            (ScalingKind::Standard, false) => {
                let mut mean = vec![0.0; n];
                let mut m2 = vec![0.0; n];
                // observed cells per feature (masked cells hold 0 and add nothing to the sums)
                let mut count = vec![m as f64; n];
                if let Some(mask) = train.missing() {
                    for (c, k) in count.iter_mut().zip(mask.column_counts()) {
                        *c -= k as f64;
                    }
                }
                for i in 0..m {
                    for (j, v) in train.row(i).nonzeros() {
                        mean[j] += v;
                    }
                }
                for (s, &c) in mean.iter_mut().zip(&count) {
                    *s = if c > 0.0 { *s / c } else { 0.0 };
                }
                let Features::Dense(d) = train.features() else {
                    unreachable!()
                };
                for i in 0..m {
                    for (j, &v) in d.row(i).iter().enumerate() {
                        if !is_missing(i, j) {
                            m2[j] += (v - mean[j]) * (v - mean[j]);
                        }
                    }
                }
                for j in 0..n {
                    shift[j] = mean[j];
                    let sd = if count[j] > 0.0 {
                        (m2[j] / count[j]).sqrt()
                    } else {
                        0.0
                    };
                    factor[j] = if sd > 0.0 { 1.0 / sd } else { 1.0 };
                }
            }
        }
        Ok(Self {
            kind,
            shift,
            factor,
        })
    }

    /// Applies the map to a data set with the same feature count. Missing cells
    /// (`bulwark_core::missing`) become 0, the deleted value: the same result as replacing them
    /// with `shift_j`, the value the map sends to 0.
    pub fn transform(&self, data: &Dataset) -> Result<Dataset> {
        if data.n_features() != self.factor.len() {
            return Err(Error::shape(
                "scaler features vs data features",
                self.factor.len(),
                data.n_features(),
            ));
        }
        let mut features = data.features().clone();
        features.map_in_place(|j, v| (v - self.shift[j]) * self.factor[j])?;
        data.with_features(features)
    }
}
