//! Learners robust to a contaminated (poisoned) training set.
//!
//! - [`RolrParams`]: RoLR (Feng, Xu, Mannor & Yan 2014): norm-threshold preprocessing, then
//!   the maximum over the unit ball of the sum of the `n` smallest signed correlations, solved
//!   by our own certified min-norm method (FISTA over the capped simplex with exact
//!   active-set steps), with a typed breakdown flag;
//! - [`NormFilter`] / [`NormThreshold`]: the preprocessing as a row filter any learner can sit
//!   behind (the paper's LR+P is this filter before logistic regression);
//! - [`AveragingParams`]: averaging (Klivans, Long & Servedio 2009), `v` = the weighted average
//!   of `y x`, the weak learner of their outlier-removal and boosting algorithms;
//! - [`RolrLearner`], [`AverageLearner`]: the registrations of `rolr` and `average` for the CLI
//!   and the harness.
//!
//! ```
//! use bulwark_core::{Dataset, DenseMatrix, Fit, Sign};
//! use bulwark_contamination::{NormThreshold, RolrParams};
//!
//! let x = DenseMatrix::from_rows(&[
//!     vec![1.0, 0.2], vec![-0.8, 0.1], vec![0.9, -0.3], vec![-1.1, 0.0], vec![50.0, 1.0],
//! ])?;
//! // the last sample is an outlier: far out, labelled against the others; the median + 3 MAD
//! // norm threshold removes it, and nothing is left to trim
//! let y = vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg, Sign::Neg];
//! let data = Dataset::binary("toy", x, y)?;
//! let fit = RolrParams::new().outliers(1).threshold(NormThreshold::mad()).fit(&data)?;
//! assert_eq!(fit.report.details["removed"], 1.0);
//! assert!(fit.model.weights()[0] > 0.9);
//! assert_eq!(fit.report.details["breakdown"], 0.0);
//! # Ok::<(), bulwark_core::Error>(())
//! ```

pub mod average;
mod learner;
pub(crate) mod minnorm;
pub mod rolr;
pub mod threshold;

pub use average::{AveragingParams, average};
pub use learner::{AverageLearner, RolrLearner};
pub use rolr::{RolrParams, trimmed_correlation};
pub use threshold::{NormFilter, NormThreshold};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
