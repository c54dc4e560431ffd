#![doc = include_str!("../README.md")]

pub mod backend;
pub mod error;
pub mod fdrop;
pub mod fit;
pub mod ipm;
pub mod layout;
pub mod learner;
mod memory;
pub mod oracle;
pub mod params;
pub mod screening;

pub use backend::StructuredBackend;
pub use bulwark_core::FeatureValues;
pub use bulwark_linalg::{NormalEquations, NormalEquationsPlan};
pub use error::{DeletionError, Result};
pub use fdrop::{FdropIpm, FdropIpmSolution, fdrop_objective, fdrop_objective_valued};
pub use fit::SolveDiagnostics;
pub use ipm::{DsxIpmSettings, DsxIpmSettingsBuilder, IpmOutcome, Progress};
pub use layout::Lp4;
pub use learner::LpLearner;
pub use params::{DsxLp, DsxLpParams, LpBackend};
pub use screening::{Screening, ScreeningReport};
