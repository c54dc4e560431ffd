//! Model selection, in one place for `bulwark tune` and for every tuned grid of the
//! reproduction harness, so the two cannot disagree.
//!
//! - [`best`] is the choosing rule itself: the smallest score, ties to the candidate listed first
//!   (or last). Every grid of the harness picks its parameter through it, on a validation split;
//!   [`tune`] picks through it on the mean error of stratified, seeded K-fold cross-validation.
//! - [`Grid`] is a learner's search space: the parameters it declares tunable
//!   ([`bulwark_core::Learner::tunable`]), with their default grids or the user's, its points
//!   ordered from the most regular model to the least, so that "ties to the first" is "ties to
//!   the more regular model".
//! - [`Threat`] is what every fold's model is scored under: `none`, `missing` (the pattern of
//!   missing cells of the data, or of a pool of records given), `greedy-delete:N`,
//!   `random-delete:N`, `greedy-corrupt:N`, `uniform-noise:X`, or a contamination model of
//!   `bulwark-adversary` applied to the training folds (`label-random:0.1`, …).
//! - [`tune`] runs the cross-validation and returns a [`bulwark_models::Selection`] (the table a
//!   model file records); [`fit_chosen`] refits the chosen point on all the data.
//!
//! ```
//! use bulwark_eval::select::{Ties, best};
//! // the second and third candidates tie: the first of them (the more regular) wins
//! assert_eq!(best(&[Some(0.3), Some(0.2), Some(0.2)], Ties::First), Some(1));
//! assert_eq!(best(&[Some(0.3), Some(0.2), Some(0.2)], Ties::Last), Some(2));
//! // a candidate without a score (its fit failed) is never chosen
//! assert_eq!(best(&[None, Some(0.5)], Ties::First), Some(1));
//! ```

mod grid;
mod threat;
mod tune;

pub use grid::{Axis, Grid};
pub use threat::{Contaminant, Patterns, TestAttack, Threat};
pub(crate) use tune::no_panic;
pub use tune::{Chosen, Step, TuneSpec, fit_chosen, tune};

/// Which of several equal scores [`best`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// The one listed first.
    First,
    /// The one listed last.
    Last,
}

/// The index of the smallest score (`None` or NaN: a candidate without one, never chosen);
/// equal scores go to the first or last listed. `None` when no candidate has a score.
pub fn best(scores: &[Option<f64>], ties: Ties) -> Option<usize> {
    let mut out: Option<(usize, f64)> = None;
    for (i, s) in scores.iter().enumerate() {
        let Some(s) = s.filter(|x| !x.is_nan()) else {
            continue;
        };
        let take = match out {
            None => true,
            Some((_, b)) => s < b || (ties == Ties::Last && s == b),
        };
        if take {
            out = Some((i, s));
        }
    }
    out.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_takes_the_smallest_score_and_breaks_ties_as_told() {
        let s = [Some(0.4), Some(0.1), None, Some(0.1), Some(0.7)];
        assert_eq!(best(&s, Ties::First), Some(1));
        assert_eq!(best(&s, Ties::Last), Some(3));
        assert_eq!(best(&[None, None], Ties::First), None);
        assert_eq!(best(&[], Ties::Last), None);
        // a NaN score is no score
        assert_eq!(best(&[Some(f64::NAN), Some(0.9)], Ties::First), Some(1));
        assert_eq!(best(&[Some(0.9), Some(f64::NAN)], Ties::Last), Some(0));
        assert_eq!(best(&[Some(f64::NAN)], Ties::First), None);
    }
}
