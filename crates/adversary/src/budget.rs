//! The budget of a test-time deletion attack.
//!
//! Core's [`bulwark_core::FeatureBudget`] requires `N < V([n])` because the learners divide by
//! `P = V([n]) − N`. An attack needs no `P`: [`AttackBudget`] accepts any finite `N ≥ 0`,
//! including `N ≥ V([n])`, in which case every feature with a positive contribution
//! `y·w_j·x_j > 0` is deleted.

use serde::{Deserialize, Serialize};

use bulwark_core::{Error, FeatureBudget, Result};

/// Feature values `v_j ≥ 0` (finite) and a deletion budget `N ≥ 0` (finite, any size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttackBudget {
    values: Vec<f64>,
    budget: f64,
}

impl AttackBudget {
    /// Validates `v_j` finite and `≥ 0`, and `N` finite and `≥ 0`.
    pub fn try_new(values: Vec<f64>, budget: f64) -> Result<Self> {
        check_values(&values)?;
        check_budget(budget)?;
        Ok(Self { values, budget })
    }
    /// Unit values `v_j = 1` on `n` features: `N` counts deleted features.
    pub fn uniform(n: usize, budget: f64) -> Result<Self> {
        Self::try_new(vec![1.0; n], budget)
    }
    /// The same values and budget as a learner's [`FeatureBudget`].
    pub fn from_feature_budget(b: &FeatureBudget) -> Self {
        Self {
            values: b.values().to_vec(),
            budget: b.budget(),
        }
    }
    /// The values `v`.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// The budget `N`.
    pub fn budget(&self) -> f64 {
        self.budget
    }
    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.values.len()
    }
    /// `V([n]) = Σ v_j`.
    pub fn total(&self) -> f64 {
        self.values.iter().sum()
    }
    /// The same values with another budget (validated).
    pub fn with_budget(&self, budget: f64) -> Result<Self> {
        check_budget(budget)?;
        Ok(Self {
            values: self.values.clone(),
            budget,
        })
    }
    /// Fails with [`Error::ShapeMismatch`] unless the budget has `n` features.
    pub fn check_features(&self, n: usize) -> Result<()> {
        if self.values.len() == n {
            Ok(())
        } else {
            Err(Error::shape(
                "feature values vs model features",
                n,
                self.values.len(),
            ))
        }
    }
}

/// Checks that a budget is finite and `≥ 0`.
pub fn check_budget(budget: f64) -> Result<f64> {
    if budget.is_finite() && budget >= 0.0 {
        Ok(budget)
    } else {
        Err(Error::param("budget", budget, "a finite number N >= 0"))
    }
}

/// Checks that every value is finite and `≥ 0` (1-based index in the error): core's check.
pub use bulwark_core::check_values;
