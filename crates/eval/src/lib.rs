#![doc = include_str!("../README.md")]

pub mod cache;
pub mod curve;
pub mod experiment;
pub mod experiments;
pub mod guru;
pub mod guru_kernel;
pub mod guru_multiclass;
pub mod icml_adversarial;
pub mod io;
pub mod kls;
pub mod learner;
pub mod missing_real;
pub mod plot;
pub mod poisoning;
pub mod report;
pub mod rolr;
pub mod select;
pub mod sklearn;
pub mod stats;
pub mod synth;

pub use cache::UnitCache;
pub use experiment::{ExperimentResult, Mode, Observer, Row, RunConfig, Silent};
pub use experiments::{ALL, Outcome, run};
pub use learner::Learner;
pub use plot::{Curve, LinePlot, ScatterPlot};
pub use stats::MeanSe;
