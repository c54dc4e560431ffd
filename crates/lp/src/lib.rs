#![doc = include_str!("../README.md")]

pub mod error;
pub mod ipm;
pub mod kkt;
pub mod mps;
mod presolve;
pub mod problem;
pub mod settings;
pub mod solution;

pub use error::{KktError, LpError, MpsError, ProblemError, Result, SettingsError};
pub use ipm::{IpmSolver, solve};
pub use kkt::{KktBackend, KktInfo, KktProblem, RowKind};
pub use mps::{parse_mps, parse_mps_str, read_mps};
pub use problem::{CscMatrix, CscRef, LpBuilder, LpProblem, Sense};
pub use settings::{BackendChoice, IpmSettings, IpmSettingsBuilder};
pub use solution::{IterationInfo, Solution, SolveSummary, Status};
