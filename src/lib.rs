//! Bulwark: robust linear classification under feature deletion, corruption and training-set
//! contamination. This facade re-exports every library crate of the workspace under a short
//! name, plus a [`prelude`] of the most used types:
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`core`] | `bulwark-core` | data sets, labels, matrices (with sprs/faer conversions), linear models, the feature budget, traits, errors |
//! | [`data`] | `bulwark-data` | loaders, built-in data sets, binary tasks, splits, scaling, MI feature values |
//! | [`linalg`] | `bulwark-linalg` | structured linear algebra for the DSX interior-point method |
//! | [`lp`] | `bulwark-lp` | a general LP interior-point engine and MPS reader |
//! | [`deletion`] | `bulwark-deletion` | the Dekel–Shamir–Xiao robust LP (4) classifier |
//! | [`online`] | `bulwark-online` | O2B (cube-projected Perceptron), linear SVM, FDROP, logistic regression |
//! | [`gaussian`] | `bulwark-gaussian` | Gaussian-robust losses (Ginodi 2010): GURU SGD, certified batch solver |
//! | [`adversary`] | `bulwark-adversary` | test-time attacks, certified robust error, contamination |
//! | [`eval`] | `bulwark-eval` | the reproduction harness of the papers' experiments |
//!
//! Train the robust LP and the SVM baseline on the embedded breast-cancer data and attack both
//! with the DSX greedy deletion adversary:
//!
//! ```
//! use bulwark::prelude::*;
//!
//! let (raw, _) = load("wdbc", None)?;
//! let data = binary_task(&raw, &BinaryTask::Natural)?;
//! let split = train_test(&data, 0.3, true, 7)?;
//! let scaler = Scaler::fit(&data.select(&split.train), ScalingKind::MinMax)?;
//! let (train, test) = (
//!     scaler.transform(&data.select(&split.train))?,
//!     scaler.transform(&data.select(&split.test))?,
//! );
//!
//! let lp = DsxLpParams::new().budget(3.0).c(1.0).fit(&train)?.model;
//! let svm = SvmParams::new().c(1.0).fit(&train)?.model;
//! let greedy = Attack::new(AttackKind::GreedyDelete);
//! for (name, model) in [("lp", &lp), ("svm", &svm)] {
//!     let clean = model.error_rate(&test)?;
//!     let attacked = evaluate(model, &test, &greedy, 3.0, 1)?.error;
//!     assert!(clean <= attacked && attacked <= 1.0, "{name}: {clean} vs {attacked}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use bulwark_adversary as adversary;
pub use bulwark_core as core;
pub use bulwark_data as data;
pub use bulwark_deletion as deletion;
pub use bulwark_eval as eval;
pub use bulwark_gaussian as gaussian;
pub use bulwark_linalg as linalg;
pub use bulwark_lp as lp;
pub use bulwark_online as online;

/// The most used types and functions: `use bulwark::prelude::*;`.
pub mod prelude {
    pub use bulwark_adversary::{Attack, AttackBudget, AttackKind, certify, evaluate};
    pub use bulwark_core::{
        Classifier, CsrMatrix, Dataset, DenseMatrix, FeatureBudget, FeatureValues, Features, Fit,
        FitWith, LinearModel, ParamGuard, Sign,
    };
    pub use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load, train_test};
    pub use bulwark_deletion::DsxLpParams;
    pub use bulwark_gaussian::GuruParams;
    pub use bulwark_online::{FdropParams, LogregParams, O2bParams, SvmParams};
}
