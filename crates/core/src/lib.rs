#![doc = include_str!("../README.md")]

pub mod budget;
pub mod cancel;
pub mod comm;
pub mod dataset;
pub mod ensemble;
pub mod error;
pub mod gram;
#[cfg(any(feature = "sprs", feature = "faer"))]
pub mod interop;
pub mod kernel;
pub mod learner;
pub mod matrix;
pub mod memory;
pub mod missing;
pub mod model;
pub mod model_any;
pub mod names;
pub mod rng;
pub mod traits;
pub mod transform;
pub mod view;

pub use budget::{DeletionScratch, FeatureBudget, FeatureValues, WorstCase, check_values};
pub use cancel::Cancel;
pub use comm::{Communicator, Single};
pub use dataset::{Dataset, Sign, Targets};
pub use ensemble::Ensemble;
pub use error::{Error, Location, Result};
pub use gram::GramCache;
pub use kernel::{Kernel, KernelModel};
pub use learner::{
    HyperParams, Learner, MoreRegular, ParamKind, ParamSpec, ParamValue, ProgressFn, Tunable,
};
pub use matrix::{CsrMatrix, DenseMatrix, Features, RowView};
pub use memory::{Bytes, MemoryLimit};
pub use missing::MissingMask;
pub use model::{LinearModel, MulticlassLinearModel};
pub use model_any::AnyModel;
pub use names::FeatureNames;
pub use rng::{Rng, rng_for_stream, rng_from_seed};
pub use traits::{
    Classifier, Contamination, DecisionFunction, Fit, FitReport, FitView, FitWith, Fitted, Linear,
    ParamGuard, Scores, TestTimeAttack,
};
pub use transform::{
    Filtered, FilteredRows, FitTransform, Pipeline, RowFilter, Transform, Transformed,
};
pub use view::DatasetView;
