//! The record of a model selection (`bulwark tune`): the threat the grid was scored under, the
//! cross-validation table and the choice. `bulwark_eval::select` computes it; a model file
//! written by `tune` carries it ([`crate::ModelFile::selection`]).

use bulwark_core::HyperParams;
use serde::{Deserialize, Serialize};

/// One grid point of a cross-validation: its parameter values and the errors of its folds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CvRow {
    /// The values of the tuned parameters at this point.
    pub params: HyperParams,
    /// Mean validation error over the folds scored (`None`: no fold was scored).
    pub mean_error: Option<f64>,
    /// Standard error of that mean (sample standard deviation over √folds; `None` below two
    /// folds).
    pub std_error: Option<f64>,
    /// Folds scored (a fold whose fit failed is not).
    pub folds: usize,
    /// The validation error of each fold scored, in fold order.
    pub fold_errors: Vec<f64>,
    /// Fits whose solver answered without meeting its tolerance.
    pub not_converged: usize,
    /// Fits that failed (no model): one line each.
    pub failures: Vec<String>,
}

/// A finished model selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// The learner (registry name).
    pub learner: String,
    /// The threat every fold was scored under, as given (`greedy-delete:2`, `missing`, …).
    pub threat: String,
    /// Number of cross-validation folds (stratified).
    pub folds: usize,
    /// Seed of the folds and of every random choice of the threat.
    pub seed: u64,
    /// The tuned parameters, in the order their regularity breaks ties.
    pub tuned: Vec<String>,
    /// The rule that chose, in words (smallest mean error; ties to the more regular model).
    pub rule: String,
    /// Index into `cv` of the chosen point.
    pub best: usize,
    /// One row per grid point, the most regular first.
    pub cv: Vec<CvRow>,
}

impl Selection {
    /// The chosen row.
    pub fn chosen(&self) -> &CvRow {
        &self.cv[self.best]
    }
}
