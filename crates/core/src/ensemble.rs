//! Weighted votes of `[-1, 1]`-valued hypotheses: the output of boosting (SmoothBoost,
//! Servedio 2003, as used by Klivans–Long–Servedio's A_mlc) and of bagging.
//!
//! Member `t` contributes `α_t · clip(h_t(x), −1, 1)`, where `h_t` is its real-valued score;
//! the ensemble's score is the sum and its prediction the sign (0 is a mistake).

use serde::{Deserialize, Serialize};

use crate::dataset::Sign;
use crate::error::{Error, Result};
use crate::matrix::RowView;
use crate::model::binary_mistake;
use crate::traits::{Classifier, DecisionFunction};

/// A weighted vote `x ↦ sign(Σ_t α_t clip(h_t(x), −1, 1))` of binary scorers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "RawEnsemble<M>",
    bound(deserialize = "M: Deserialize<'de> + Classifier")
)]
pub struct Ensemble<M> {
    members: Vec<M>,
    alphas: Vec<f64>,
}

#[derive(Deserialize)]
struct RawEnsemble<M> {
    members: Vec<M>,
    alphas: Vec<f64>,
}

impl<M: Classifier> TryFrom<RawEnsemble<M>> for Ensemble<M> {
    type Error = Error;
    fn try_from(r: RawEnsemble<M>) -> Result<Self> {
        Self::try_new(r.members, r.alphas)
    }
}

impl<M: Classifier> Ensemble<M> {
    /// Validates: at least one member, binary members with one feature count, one finite
    /// non-negative vote weight per member, not all zero.
    pub fn try_new(members: Vec<M>, alphas: Vec<f64>) -> Result<Self> {
        let Some(first) = members.first() else {
            return Err(Error::param("members", 0, "at least one hypothesis"));
        };
        let n = first.n_features();
        for (t, h) in members.iter().enumerate() {
            if h.n_classes() != 2 {
                return Err(Error::param(
                    format!("members[{t}]"),
                    format!("{} classes", h.n_classes()),
                    "a binary hypothesis",
                ));
            }
            if h.n_features() != n {
                return Err(Error::shape(
                    format!("ensemble: features of members[{t}]"),
                    n,
                    h.n_features(),
                ));
            }
        }
        if alphas.len() != members.len() {
            return Err(Error::shape(
                "ensemble: vote weights vs members",
                members.len(),
                alphas.len(),
            ));
        }
        if let Some((t, a)) = alphas
            .iter()
            .enumerate()
            .find(|(_, a)| !(a.is_finite() && **a >= 0.0))
        {
            return Err(Error::param(
                format!("alphas[{t}]"),
                a,
                "a finite number >= 0",
            ));
        }
        if alphas.iter().all(|&a| a == 0.0) {
            return Err(Error::param(
                "alphas",
                "all zero",
                "at least one positive vote weight",
            ));
        }
        Ok(Self { members, alphas })
    }
    /// A uniform vote (bagging).
    pub fn uniform(members: Vec<M>) -> Result<Self> {
        let k = members.len();
        Self::try_new(members, vec![1.0; k])
    }
    /// The hypotheses.
    pub fn members(&self) -> &[M] {
        &self.members
    }
    /// Their vote weights `α_t`.
    pub fn alphas(&self) -> &[f64] {
        &self.alphas
    }
}

impl<M: DecisionFunction> Classifier for Ensemble<M> {
    fn n_features(&self) -> usize {
        self.members[0].n_features()
    }
    fn n_classes(&self) -> usize {
        2
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        usize::from(Sign::of_score(self.decision(x)) == Sign::Pos)
    }
    fn is_mistake(&self, x: RowView<'_>, class: usize) -> bool {
        binary_mistake(self.decision(x), class)
    }
}

impl<M: DecisionFunction> DecisionFunction for Ensemble<M> {
    fn decision(&self, x: RowView<'_>) -> f64 {
        self.members
            .iter()
            .zip(&self.alphas)
            .map(|(h, a)| a * h.decision(x).clamp(-1.0, 1.0))
            .sum()
    }
}
