#![doc = include_str!("../README.md")]

mod common;
pub mod crammer_singer;
mod dualcd;
pub mod learner;
pub mod logreg;
pub mod o2b;
pub mod smo;
pub mod svm;

/// Feature values (uniform or given), shared with every learner: re-exported from `bulwark-core`.
pub use bulwark_core::FeatureValues;
pub use crammer_singer::CrammerSingerParams;
pub use learner::{FdropLearner, LogregLearner, O2bLearner, SvmLearner};
pub use logreg::{LogregParams, logreg_objective};
pub use o2b::{O2bOnline, O2bParams, theorem4_bound, theorem4_step};
pub use smo::KernelSvmParams;
pub use svm::{FdropParams, FdropSolver, SvmParams, fdrop_objective, fdrop_objective_valued};
