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
//! - [`AmuParams`]: A_mu (KLS Theorem 1): outlier removal by variance tests along the top
//!   eigenvector of `Σ x xᵀ` (Lanczos, rank-one downdates), then averaging;
//! - [`SmoothBoostParams`]: SmoothBoost (Servedio 2003) over outlier removal and averaging
//!   (A_mlc, KLS Theorem 2) or plain averaging (Theorem 3), an [`bulwark_core::Ensemble`];
//! - [`RolrLearner`], [`AverageLearner`], [`KlsAmuLearner`], [`KlsBoostLearner`]: the
//!   registrations of `rolr`, `average`, `kls-amu` and `kls-boost` for the CLI and the harness.
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

pub mod amu;
pub mod average;
pub mod boost;
mod learner;
pub(crate) mod minnorm;
pub mod rolr;
mod spectral;
pub mod threshold;

pub use amu::{AmuFit, AmuParams, AmuPass};
pub use average::{AveragingParams, average};
pub use boost::{BoostFit, BoostRound, BoostStop, OutputScale, SmoothBoostParams, WeakLearner};
pub use learner::{AverageLearner, KlsAmuLearner, KlsBoostLearner, RolrLearner};
pub use rolr::{RolrParams, trimmed_correlation};
pub use threshold::{NormFilter, NormThreshold};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
