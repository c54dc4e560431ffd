#![doc = include_str!("../README.md")]

pub mod budget;
pub mod dataset;
pub mod error;
#[cfg(any(feature = "sprs", feature = "faer"))]
pub mod interop;
pub mod matrix;
pub mod model;
pub mod rng;
pub mod traits;

pub use budget::{DeletionScratch, FeatureBudget, FeatureValues, WorstCase, check_values};
pub use dataset::{Dataset, Sign, Targets};
pub use error::{Error, Location, Result};
pub use matrix::{CsrMatrix, DenseMatrix, Features, RowView};
pub use model::{LinearModel, MulticlassLinearModel};
pub use rng::{Rng, rng_for_stream, rng_from_seed};
pub use traits::{
    Classifier, Contamination, DecisionFunction, Fit, FitReport, FitWith, Fitted, Linear,
    ParamGuard, TestTimeAttack,
};
