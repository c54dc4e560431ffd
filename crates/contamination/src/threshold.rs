//! RoLR's preprocessing (Feng et al. 2014, Algorithm 1): remove every training sample whose norm
//! is at least a threshold `T`, as a [`RowFilter`] that any learner can sit behind (RoLR, and
//! logistic regression for the paper's LR+P baseline).

use bulwark_core::{DatasetView, Error, FilteredRows, Result, RowFilter};
use serde::{Deserialize, Serialize};

/// How the threshold `T` is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum NormThreshold {
    /// The paper's `T = 4σ_x √((log p + log n)/n)` (Lemma 2), stated for Definition 1's design
    /// whose covariance is `Σ_x/n`; on data as given (covariance `Σ_x`) it is
    /// `T = 4σ_x √(log p + log n)`, natural logarithms, `n` the number of inliers. `σ_x` is given
    /// or, when `None`, estimated as the median over features of `1.4826·MAD` (robust, but
    /// inflated by heavy contamination: give it when it is known).
    Paper {
        /// The covariates' sub-Gaussian scale, if known.
        sigma_x: Option<f64>,
    },
    /// Data-driven: `T = median‖x‖ + k·1.4826·MAD(‖x‖)`.
    Mad {
        /// How many robust standard deviations above the median norm.
        k: f64,
    },
    /// A fixed threshold.
    Fixed(f64),
    /// No preprocessing.
    None,
}

impl NormThreshold {
    /// The paper's rule with `σ_x` estimated.
    pub fn paper() -> Self {
        NormThreshold::Paper { sigma_x: None }
    }
    /// The median + 3 MAD rule.
    pub fn mad() -> Self {
        NormThreshold::Mad { k: 3.0 }
    }

    /// Checks the parameters.
    pub fn check(&self) -> Result<()> {
        match *self {
            NormThreshold::Paper { sigma_x: Some(s) } if !(s.is_finite() && s > 0.0) => {
                Err(Error::param("sigma_x", s, "a finite number > 0"))
            }
            NormThreshold::Mad { k } if !(k.is_finite() && k >= 0.0) => {
                Err(Error::param("mad k", k, "a finite number >= 0"))
            }
            NormThreshold::Fixed(t) if t.is_nan() || t <= 0.0 => {
                Err(Error::param("threshold", t, "a number > 0 (or infinity)"))
            }
            _ => Ok(()),
        }
    }

    /// The threshold for `rows` with `n_inliers` inliers (`None`: keep everything).
    pub fn value(&self, rows: &DatasetView<'_>, n_inliers: usize) -> Result<Option<f64>> {
        self.check()?;
        let p = rows.n_features();
        Ok(match *self {
            NormThreshold::None => None,
            NormThreshold::Fixed(t) => Some(t),
            NormThreshold::Paper { sigma_x } => {
                let s = match sigma_x {
                    Some(s) => s,
                    None => robust_scale(rows),
                };
                let logs = (p.max(1) as f64).ln() + (n_inliers.max(1) as f64).ln();
                Some(4.0 * s * logs.max(0.0).sqrt())
            }
            NormThreshold::Mad { k } => {
                let mut norms = row_norms(rows);
                let med = median(&mut norms);
                let mut dev: Vec<f64> = norms.iter().map(|v| (v - med).abs()).collect();
                Some(med + k * 1.4826 * median(&mut dev))
            }
        })
    }
}

/// The Euclidean norm of every row.
pub(crate) fn row_norms(rows: &DatasetView<'_>) -> Vec<f64> {
    (0..rows.len())
        .map(|i| {
            rows.row(i)
                .nonzeros()
                .map(|(_, v)| v * v)
                .sum::<f64>()
                .sqrt()
        })
        .collect()
}

/// The median (0 for no values); reorders `v`.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let (len, mid) = (v.len(), v.len() / 2);
    let (lo, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let m = *m;
    if len % 2 == 1 {
        m
    } else {
        let below = lo.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (below + m)
    }
}

/// The median over features of `1.4826·MAD` (the standard deviation for Gaussian data).
fn robust_scale(rows: &DatasetView<'_>) -> f64 {
    let (m, p) = (rows.len(), rows.n_features());
    let mut cols = vec![vec![0.0; m]; p];
    let mut x = vec![0.0; p];
    for i in 0..m {
        rows.row(i).to_dense_into(&mut x);
        for (c, v) in cols.iter_mut().zip(&x) {
            c[i] = *v;
        }
    }
    let mut scales: Vec<f64> = cols
        .iter_mut()
        .map(|c| {
            let med = median(c);
            let mut dev: Vec<f64> = c.iter().map(|v| (v - med).abs()).collect();
            1.4826 * median(&mut dev)
        })
        .collect();
    median(&mut scales)
}

/// Removes the training rows with `‖x‖ ≥ T` (Feng et al. 2014, Algorithm 1), where `T` comes
/// from a [`NormThreshold`] and the number of inliers `n = rows − n₁`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NormFilter {
    /// The threshold rule.
    pub threshold: NormThreshold,
    /// The outlier bound `n₁` (for `n` in the paper's rule).
    pub n_outliers: usize,
}

impl NormFilter {
    /// The filter of `threshold` for data with at most `n_outliers` outliers.
    pub fn new(threshold: NormThreshold, n_outliers: usize) -> Self {
        Self {
            threshold,
            n_outliers,
        }
    }

    /// The threshold on `rows` (`None`: no filtering); `n₁ ≥ rows` is a typed error.
    pub fn threshold_on(&self, rows: &DatasetView<'_>) -> Result<Option<f64>> {
        if self.n_outliers >= rows.len() {
            return Err(Error::param(
                "outliers",
                self.n_outliers,
                format!("fewer than the {} training samples", rows.len()),
            ));
        }
        self.threshold.value(rows, rows.len() - self.n_outliers)
    }
}

impl NormFilter {
    /// [`RowFilter::filter`] with the threshold it used (`None`: nothing filtered).
    pub fn filter_with_threshold<'a>(
        &self,
        train: &DatasetView<'a>,
    ) -> Result<(FilteredRows<'a>, Option<f64>)> {
        let Some(t) = self.threshold_on(train)? else {
            let all = FilteredRows {
                kept: train.clone(),
                removed: Vec::new(),
            };
            return Ok((all, None));
        };
        let norms = row_norms(train);
        let (mut kept, mut removed) = (Vec::new(), Vec::new());
        for (i, v) in norms.iter().enumerate() {
            if *v >= t {
                removed.push(i);
            } else {
                kept.push(i);
            }
        }
        if kept.is_empty() {
            return Err(Error::param(
                "threshold",
                format!("{t:.6e}"),
                format!(
                    "a value above the smallest sample norm {:.6e}: it removes all {} samples",
                    norms.iter().copied().fold(f64::INFINITY, f64::min),
                    train.len()
                ),
            ));
        }
        let rows = FilteredRows {
            kept: train.select(&kept)?,
            removed,
        };
        Ok((rows, Some(t)))
    }
}

impl RowFilter for NormFilter {
    fn name(&self) -> &str {
        "norm-filter"
    }
    fn filter<'a>(&self, train: &DatasetView<'a>) -> Result<FilteredRows<'a>> {
        Ok(self.filter_with_threshold(train)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{Dataset, DenseMatrix, Sign};

    fn data(rows: &[[f64; 2]]) -> Dataset {
        let x =
            DenseMatrix::from_rows(&rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>()).unwrap();
        let y = (0..rows.len())
            .map(|i| if i % 2 == 0 { Sign::Pos } else { Sign::Neg })
            .collect();
        Dataset::binary("t", x, y).unwrap()
    }

    #[test]
    fn paper_threshold_is_lemma_2_on_the_data_scale() {
        let d = data(&[[1.0, 0.0], [0.0, 1.0], [3.0, 4.0], [0.5, 0.5]]);
        let f = NormFilter::new(NormThreshold::Paper { sigma_x: Some(1.0) }, 1);
        // p = 2, n = 3
        let t = f.threshold_on(&d.view()).unwrap().unwrap();
        assert!((t - 4.0 * (2f64.ln() + 3f64.ln()).sqrt()).abs() < 1e-12);
        // Feng et al.'s p = 20, n = 1000: T·√n = 12.59
        let t20 = 4.0 * (20f64.ln() + 1000f64.ln()).sqrt();
        assert!((t20 - 12.59).abs() < 0.005, "{t20}");
        assert!((t20 / 1000f64.sqrt() - 0.39807).abs() < 1e-5);
    }

    #[test]
    fn fixed_threshold_removes_norms_at_or_above_it() {
        let d = data(&[[1.0, 0.0], [0.0, 2.0], [3.0, 4.0], [0.5, 0.5]]);
        let r = NormFilter::new(NormThreshold::Fixed(2.0), 0)
            .filter(&d.view())
            .unwrap();
        assert_eq!(r.removed, [1, 2]);
        assert_eq!(r.kept.len(), 2);
        let e = NormFilter::new(NormThreshold::Fixed(0.1), 0)
            .filter(&d.view())
            .unwrap_err();
        assert!(e.to_string().contains("removes all 4 samples"), "{e}");
        let e = NormFilter::new(NormThreshold::None, 4)
            .filter(&d.view())
            .unwrap_err();
        assert!(e.to_string().contains("outliers"), "{e}");
    }

    #[test]
    fn mad_threshold_and_median() {
        let mut v = vec![3.0, 1.0, 2.0, 10.0];
        assert_eq!(median(&mut v), 2.5);
        let d = data(&[[1.0, 0.0], [0.0, 1.0], [0.0, 1.2], [100.0, 0.0], [0.8, 0.0]]);
        let r = NormFilter::new(NormThreshold::mad(), 0)
            .filter(&d.view())
            .unwrap();
        assert_eq!(r.removed, [3]);
    }
}
