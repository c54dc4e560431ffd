//! Linear models: binary `(w, b)` and multiclass one-weight-vector-per-class.

use serde::{Deserialize, Serialize};

use crate::dataset::Sign;
use crate::error::{Error, Result};
use crate::matrix::RowView;
use crate::traits::{Classifier, DecisionFunction, Linear};

/// A binary linear classifier `x ↦ sign(w·x + b)`; a score of exactly 0 predicts −1 and is
/// always counted as a mistake (DSX eq. (1)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// One weight per feature.
    pub weights: Vec<f64>,
    /// The bias (intercept).
    pub bias: f64,
}

impl LinearModel {
    /// Validates that every weight and the bias are finite.
    pub fn try_new(weights: Vec<f64>, bias: f64) -> Result<Self> {
        if let Some((j, w)) = weights.iter().enumerate().find(|(_, w)| !w.is_finite()) {
            return Err(Error::param(format!("weights[{j}]"), w, "a finite number"));
        }
        if !bias.is_finite() {
            return Err(Error::param("bias", bias, "a finite number"));
        }
        Ok(Self { weights, bias })
    }
    /// The all-zero model on `n` features.
    pub fn zeros(n: usize) -> Self {
        Self {
            weights: vec![0.0; n],
            bias: 0.0,
        }
    }
    /// `‖w‖∞`.
    pub fn max_abs_weight(&self) -> f64 {
        self.weights.iter().fold(0.0, |a, w| a.max(w.abs()))
    }
}

impl Classifier for LinearModel {
    fn n_features(&self) -> usize {
        self.weights.len()
    }
    fn n_classes(&self) -> usize {
        2
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        usize::from(Sign::of_score(self.decision(x)) == Sign::Pos)
    }
}

impl DecisionFunction for LinearModel {
    #[inline]
    fn decision(&self, x: RowView<'_>) -> f64 {
        x.dot(&self.weights) + self.bias
    }
}

impl Linear for LinearModel {
    fn weights(&self) -> &[f64] {
        &self.weights
    }
    fn bias(&self) -> f64 {
        self.bias
    }
}

/// A multiclass linear classifier: one `LinearModel` per class, prediction by the largest score
/// (ties to the lowest class index). One-vs-rest, Crammer–Singer and multiclass GURU all produce it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MulticlassLinearModel {
    /// One scorer per class, in class order.
    pub classes: Vec<LinearModel>,
}

impl MulticlassLinearModel {
    /// Validates that there are at least two classes with the same feature count.
    pub fn try_new(classes: Vec<LinearModel>) -> Result<Self> {
        if classes.len() < 2 {
            return Err(Error::param(
                "classes",
                classes.len(),
                "at least 2 per-class models",
            ));
        }
        let n = classes[0].weights.len();
        if let Some(c) = classes.iter().find(|c| c.weights.len() != n) {
            return Err(Error::shape(
                "multiclass model: per-class weight length",
                n,
                c.weights.len(),
            ));
        }
        Ok(Self { classes })
    }
    /// Scores of every class for `x`.
    pub fn scores(&self, x: RowView<'_>) -> Vec<f64> {
        self.classes.iter().map(|c| c.decision(x)).collect()
    }
}

impl Classifier for MulticlassLinearModel {
    fn n_features(&self) -> usize {
        self.classes[0].weights.len()
    }
    fn n_classes(&self) -> usize {
        self.classes.len()
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        let mut best = (0, f64::NEG_INFINITY);
        for (k, c) in self.classes.iter().enumerate() {
            let s = c.decision(x);
            if s > best.1 {
                best = (k, s);
            }
        }
        best.0
    }
}
