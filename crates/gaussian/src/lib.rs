//! Gaussian-robust linear classification (Ginodi 2010, "Gaussian Robust Classification",
//! chapters 2–3): the loss a linear classifier suffers in expectation when an adversary adds
//! zero-mean Gaussian noise of bounded power to every training point, and the learners that
//! minimise it.
//!
//! - [`special`]: `φ`, `Φ` (the thesis's "erf"), `Φ⁻¹`, and the smooth hinge
//!   `f(z) = zΦ(z) + φ(z)` (2.15), accurate over all of ℝ.
//! - [`loss`]: the perspective family `σ‖w‖ f̃((1 − y wᵀx)/(σ‖w‖))` with `f̃` the Gaussian
//!   smooth hinge, the log loss or the Huber-like `f̃₃` (ch. 3 §2), each with its conjugate, and
//!   the Euclidean or max norm (Appendix B).
//! - [`objective`]: the objective (2.22), its gradient (2.26), Hessian products and the duality
//!   certificate of (3.17) with the corrected Thm 1.2.
//! - [`GuruParams`]: GURU (Algorithm 1, SGD) or the batch Newton–CG solver, both returning the
//!   certificate; registered as the learner `guru` ([`GuruLearner`]).
//! - [`AsvcParams`]: ASVC (Appendix A), the SVM with the ball loss, by damped alternating rounds
//!   to a certified gap; the learner `asvc` ([`AsvcLearner`]).
//!
//! The classifier is `sgn(wᵀx)`: GURU has no bias. [`GuruParams::bias`] appends a constant
//! feature, whose weight is then part of `‖w‖` like any other.
//!
//! ```
//! use bulwark_core::{Dataset, DenseMatrix, Fit, Sign};
//! use bulwark_gaussian::{GuruParams, Solver};
//!
//! let x = DenseMatrix::from_rows(&[vec![1.0, 0.2], vec![-0.8, 0.1], vec![0.9, -0.3], vec![-1.1, 0.0]])?;
//! let data = Dataset::binary("toy", x, vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg])?;
//! let (fit, _) = GuruParams::new().sigma(0.5).fit_certified(&data)?;
//! assert!(fit.converged && fit.certificate.relative_gap <= 1e-10);
//! let sgd = GuruParams::new().sigma(1.0).solver(Solver::Sgd).tolerance(1e-3).fit(&data)?;
//! assert!(sgd.report.details["duality_gap"] <= 1e-3);
//! # Ok::<(), bulwark_core::Error>(())
//! ```

pub mod algorithm;
pub mod asvc;
mod batch;
pub mod hyperparams;
mod kernel_batch;
pub mod kernel_guru;
mod learner;
pub mod loss;
pub mod multiclass;
mod multiclass_batch;
mod multiclass_precond;
pub mod objective;
mod sgd;
pub mod special;

pub use algorithm::GuruFit;
pub use asvc::AsvcParams;
pub use hyperparams::{GuruParams, Solver};
pub use kernel_guru::{KenGuruFit, KenGuruParams};
pub use learner::{AsvcLearner, GuruLearner, KenGuruLearner, MGuruLearner};
pub use loss::{Loss, NoiseNorm};
pub use multiclass::{MGuruParams, MulticlassObjective, NOT_CERTIFIABLE};
pub use objective::{Certificate, Objective, RobustLoss};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
