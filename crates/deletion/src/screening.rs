//! Example screening: LP (4) solved on a working set of examples, grown until every example
//! outside it has a zero loss at the answer — the same optimum, certified, from a smaller LP.
//!
//! An example whose worst-case margin stays above 1 at the optimum (`ξ_i = 0`, its row `a_i`
//! inactive) has all its duals zero there: it could be left out of LP (4) without moving the
//! optimum. On imbalanced and easy tasks (one class against the others) most examples are such,
//! and their `(example, feature)` pairs, whose duals all tend to zero, make the central path
//! long: LP (4) on only the examples with a loss takes a fraction of the iterations of the whole
//! LP, to the same objective (`docs/design/deletion.md`, issue 20's sixth session, has the
//! measurements). By default training sets of at least [`Screening::DEFAULT_MIN_EXAMPLES`]
//! examples are screened ([`Screening::default`]); [`Screening::off`] never screens.
//!
//! # Method
//!
//! A working set `W` starts as a class-stratified sample (every `k`-th example of each class,
//! `k = round(1 / sample_fraction)`). Each round solves LP (4) on `W` with the chain of solvers
//! of [`crate::fit`], then evaluates the closed-form worst-case value (`ξ_i` before the hinge:
//! core's fractional knapsack, DSX eq. (7)) of every example at the answer `(w, b)`:
//!
//! - an example outside `W` with a positive value is a *violator*; examples outside `W` whose
//!   value is above `−margin` join `W`;
//! - examples leave `W` after the first two rounds only: after the first, the sample's examples
//!   whose value is below `−margin`; after the second, every example of `W` whose value is
//!   below `−leave_margin` ([`Screening::leave_margin`]), a wider margin (many examples that
//!   joined on the first round's rough answer are far from a loss at the second's, and would
//!   otherwise stay in every later LP). Neither happens when fewer than twice the features
//!   would stay (the next answer would fit them so closely that most other examples joined). An example leaves at most once and
//!   later rounds only add, so the rounds cannot cycle (a working set that shrank at every
//!   round did, on Fashion-MNIST; leaving after every round made USPS 0 against the rest take
//!   7–8 rounds, `docs/design/deletion.md`).
//!
//! A round ends early at its first iterate whose relative gap and primal residual are at most
//! [`Screening::early_stop`] when an example outside `W` already has a positive value at that
//! iterate's `(w, b)`: the round's exact answer would only choose the next working set, and the
//! inexact one chooses it about as well (the structured IPM spends the last third of a round's
//! iterations below a gap of 1e-3; `docs/design/deletion.md`). Those values choose the next
//! working set; a round whose iterate leaves no example outside `W` with a loss goes on to the
//! tolerance, so the last round is always solved to it.
//!
//! The rounds stop when the answer is optimal for the whole LP: the certificate is the
//! working set's dual solution extended by zeros (dual feasible for the whole LP: a left-out
//! example's equations hold with `y = 0`, `z_ξ = 1`), whose objective `D_W` bounds the whole
//! optimum from below, against the closed-form objective `P = Σ_i ξ_i(w, b)` over every example
//! (`ξ_i` of a left-out example is 0 unless it is a violator). The whole LP's relative gap
//! `(P − D_W) / (1 + P)` must meet the tolerance asked; the residuals are the working set's (the
//! closed-form `α, λ, ξ` of a left-out example are exactly feasible). A violator with a
//! loss that the gap cannot absorb starts another round.
//!
//! Each round's LP has the fit's iteration and time limits, and its fallbacks (reported as
//! `screening round k: …`); a round cancelled or out of time ends the fit.
//!
//! Screening gives up, and the whole LP is solved as one, when the working set would exceed
//! `max_fraction` of the examples (the task is mostly examples with a loss, so a smaller LP
//! saves little), after `max_rounds` rounds, or when a round is not solved; the fit reports the
//! rounds it spent either way ([`crate::SolveDiagnostics::screening`], whose `gave_up` says why),
//! and counts their iterations (`details["screening_rounds"]`, `details["screening_gave_up"]`,
//! `details["screening_ended_early"]` and the CLI's screening line show it). A give-up is not a
//! fallback: the same solver answers the whole LP.

use bulwark_core::{Dataset, Error, FeatureBudget, Sign};
use bulwark_lp::Status;
use serde::{Deserialize, Serialize};

use crate::error::{DeletionError, Result};
use crate::fit::Solved;
use crate::ipm::Progress;
use crate::params::DsxLp;

/// When and how LP (4) is solved on a working set of examples (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Screening {
    /// Smallest training set that is screened (default
    /// [`Screening::DEFAULT_MIN_EXAMPLES`]; `usize::MAX`: never, [`Screening::off`]).
    pub min_examples: usize,
    /// Fraction of each class in the first working set (default 1/16).
    pub sample_fraction: f64,
    /// Examples whose worst-case value is above `−margin` join the working set; after the
    /// first round, the first sample's examples below `−margin` leave it (default 0.01).
    pub margin: f64,
    /// After the second round, examples of the working set whose value is below
    /// `−leave_margin` leave it (at least `margin`; default 0.02, which makes most last LPs
    /// smaller and faster, `docs/design/deletion.md`; `f64::INFINITY`: the rounds after the
    /// first only add).
    pub leave_margin: f64,
    /// Largest working set as a fraction of the examples; beyond it the whole LP is solved
    /// (default 0.55: a round on about half the examples, ended early, costs a fraction of the
    /// whole LP, which a later give-up adds to it, and saves most of it when it certifies;
    /// `docs/design/deletion.md` has the measurements).
    pub max_fraction: f64,
    /// Most rounds before the whole LP is solved (default 8).
    pub max_rounds: u32,
    /// A round ends at its first iterate whose relative gap and primal residual are at most
    /// this when an example outside the working set has a positive value at that iterate's
    /// `(w, b)`; that `(w, b)` then chooses the next working set (default 1e-3; 0: every round
    /// is solved to the tolerance).
    pub early_stop: f64,
}

/// On from [`Screening::DEFAULT_MIN_EXAMPLES`] examples. On a task where most examples keep
/// a loss, screening gives up after its first round (a sixteenth of the examples) and the
/// whole LP is solved; where most end with none, the rounds replace a whole LP whose path is
/// long (`docs/design/deletion.md` has both).
impl Default for Screening {
    fn default() -> Self {
        Self {
            min_examples: Self::DEFAULT_MIN_EXAMPLES,
            sample_fraction: 1.0 / 16.0,
            margin: 0.01,
            leave_margin: 0.02,
            max_fraction: 0.55,
            max_rounds: 8,
            early_stop: 1e-3,
        }
    }
}

impl Screening {
    /// The default smallest training set that is screened.
    pub const DEFAULT_MIN_EXAMPLES: usize = 10_000;

    /// Never screen: LP (4) on every example, as one LP.
    pub fn off() -> Self {
        Self {
            min_examples: usize::MAX,
            ..Self::default()
        }
    }

    /// Screen training sets of at least `min_examples` examples, the other fields at their
    /// defaults.
    pub fn from_examples(min_examples: usize) -> Self {
        Self {
            min_examples,
            ..Self::default()
        }
    }

    /// Checks every field (an error names `screening.<field>`).
    pub fn validate(&self) -> std::result::Result<(), Error> {
        let bad = |f: &str, v: f64, why: &str| Err(Error::param(format!("screening.{f}"), v, why));
        if !(self.sample_fraction > 0.0 && self.sample_fraction < 1.0) {
            return bad(
                "sample_fraction",
                self.sample_fraction,
                "a number in (0, 1)",
            );
        }
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return bad("margin", self.margin, "a finite number >= 0");
        }
        if self.leave_margin.is_nan() || self.leave_margin < self.margin {
            return bad(
                "leave_margin",
                self.leave_margin,
                "a number at least screening.margin (infinity: no example leaves after the first round)",
            );
        }
        if !(self.max_fraction > 0.0 && self.max_fraction <= 1.0) {
            return bad("max_fraction", self.max_fraction, "a number in (0, 1]");
        }
        if self.max_rounds == 0 {
            return bad("max_rounds", 0.0, "at least 1");
        }
        if !(self.early_stop >= 0.0 && self.early_stop < 1.0) {
            return bad("early_stop", self.early_stop, "a number in [0, 1)");
        }
        Ok(())
    }

    /// Whether a training set of `m` examples is screened.
    pub(crate) fn applies(&self, m: usize) -> bool {
        m >= self.min_examples
    }
}

/// What screening did in one fit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScreeningReport {
    /// LPs solved on working sets.
    pub rounds: u32,
    /// Iterations of every solver attempt of those LPs.
    pub iterations: u32,
    /// Examples in each round's working set, in order.
    pub working_sets: Vec<usize>,
    /// Rounds ended early, at an iterate that left an example outside the working set with a
    /// loss ([`Screening::early_stop`]).
    #[serde(default)]
    pub ended_early: u32,
    /// Why screening gave up and the whole LP was solved (`None`: the answer is the last
    /// working set's, certified for the whole LP).
    pub gave_up: Option<String>,
}

impl ScreeningReport {
    /// `screening: k rounds (working sets a, b, …; i iterations), <outcome>`, for messages
    /// (`screening: before a round, gave up: <why>; …` when no round was solved).
    pub fn describe(&self) -> String {
        let outcome = match &self.gave_up {
            Some(why) => format!("gave up: {why}; the whole LP solved"),
            None => "certified for the whole LP".into(),
        };
        if self.rounds == 0 {
            return format!("screening: before a round, {outcome}");
        }
        let sets: Vec<String> = self.working_sets.iter().map(usize::to_string).collect();
        let early = match self.ended_early {
            0 => String::new(),
            k => format!("; {k} ended early"),
        };
        format!(
            "screening: {} round(s) (working sets of {} examples; {} iterations{early}), {outcome}",
            self.rounds,
            sets.join(", "),
            self.iterations,
        )
    }
}

/// The working set of the first round: every `k`-th example of each class, in order.
pub(crate) fn first_working_set(y: &[Sign], fraction: f64) -> Vec<bool> {
    let k = (1.0 / fraction).round().max(1.0) as usize;
    let mut seen = [0usize; 2];
    y.iter()
        .map(|s| {
            let c = &mut seen[usize::from(*s == Sign::Pos)];
            *c += 1;
            (*c - 1) % k == 0
        })
        .collect()
}

/// The next working set (module docs): returns the count of violators (examples outside the set
/// with a positive value). Examples outside it whose value is above `−margin` join; examples in
/// it whose value is below `−leave` leave unless they have left once before (`left` marks
/// them); with `leave` `None` none leaves.
pub(crate) fn next_working_set(
    values: &[f64],
    margin: f64,
    leave: Option<f64>,
    in_set: &mut [bool],
    left: &mut [bool],
) -> usize {
    let mut violators = 0;
    for ((v, inside), gone) in values.iter().zip(in_set.iter_mut()).zip(left.iter_mut()) {
        if *inside {
            if leave.is_some_and(|t| *v < -t) && !*gone {
                *inside = false;
                *gone = true;
            }
        } else {
            violators += usize::from(*v > 0.0);
            *inside = *v > -margin;
        }
    }
    violators
}

impl DsxLp {
    /// LP (4) on `data` by screening (module docs): `Ok(Some(..))` with the certified answer,
    /// `Ok(None)` when screening gave up (`report` says why; the caller solves the whole LP), or
    /// the error of a round that was cancelled or ran out of time. The rounds' fallbacks are
    /// appended to `fallbacks` (each `screening round k: …`), also when screening gives up.
    pub(crate) fn solve_screened(
        &self,
        data: &Dataset,
        budget: &FeatureBudget,
        mut progress: Option<Progress<'_>>,
        report: &mut ScreeningReport,
        fallbacks: &mut Vec<String>,
    ) -> Result<Option<Solved>> {
        let s = &self.screening;
        let m = data.len();
        let y = data.require_two_classes()?;
        let mut in_set = first_working_set(y, s.sample_fraction);
        let mut left = vec![false; m];
        // the rounds' time in factorisations and solves, and their refinements
        let (mut factor, mut solve, mut refinements, mut boosts) = (0.0, 0.0, 0, 0);
        loop {
            let idx: Vec<usize> = (0..m).filter(|&i| in_set[i]).collect();
            if idx.len() as f64 > s.max_fraction * m as f64 {
                report.gave_up = Some(format!(
                    "the working set would hold {} of {m} examples (more than {} of them)",
                    idx.len(),
                    s.max_fraction
                ));
                return Ok(None);
            }
            if report.rounds == s.max_rounds {
                report.gave_up = Some(format!(
                    "{} rounds without a certified answer",
                    s.max_rounds
                ));
                return Ok(None);
            }
            report.rounds += 1;
            report.working_sets.push(idx.len());
            let sub = data.select(&idx);
            let round = report.rounds;
            // the early end of a round (`Screening::early_stop`): at the first iterate within
            // it, the values of every example at its (w, b); the round ends there when one
            // outside the working set has a loss (those values then choose the next set)
            let mut early: Option<Vec<f64>> = None;
            let mut checked = false;
            let mut check = |w: &[f64], b: f64, gap: f64, pres: f64| {
                if checked || gap > s.early_stop || pres > s.early_stop {
                    return false;
                }
                checked = true;
                let Ok(values) = budget.worst_case_values(w, b, data) else {
                    return false;
                };
                let outside = values
                    .iter()
                    .zip(&in_set)
                    .any(|(&v, &inside)| !inside && v > 0.0);
                if outside {
                    early = Some(values);
                }
                outside
            };
            let check = (s.early_stop > 0.0).then_some(&mut check as _);
            let p = progress.as_mut().map(|p| &mut **p as _);
            let solved = self.solve_whole(&sub, budget, p, check);
            let Solved {
                model,
                mut answer,
                shape,
            } = match solved {
                Ok(one) => one,
                Err(DeletionError::NotSolved {
                    status: Status::TimeLimit,
                    ..
                }) => {
                    return solved.map(|_| None);
                }
                Err(e) => {
                    report.gave_up = Some(format!("round {round} not solved: {e}"));
                    return Ok(None);
                }
            };
            report.iterations += answer.iterations;
            factor += answer.run.factor_seconds;
            solve += answer.run.solve_seconds;
            refinements += answer.run.refinements;
            boosts += answer.run.regularization_boosts;
            fallbacks.extend(
                std::mem::take(&mut answer.fallbacks)
                    .into_iter()
                    .map(|f| format!("screening round {round}: {f}")),
            );
            let ended_early = answer.run.ended_by_check;
            let values = match early {
                Some(v) if ended_early => v,
                _ => budget.worst_case_values(model.weights(), model.bias(), data)?,
            };
            report.ended_early += u32::from(ended_early);
            // the whole LP's objective at (w, b), and the working set's dual bound, as sums
            // (the IPM's scale: c = 1 on every ξ_i)
            let primal: f64 = values.iter().map(|v| v.max(0.0)).sum();
            let dual = answer.run.dual_objective * idx.len() as f64;
            let gap = (primal - dual).abs() / (1.0 + primal.abs());
            // examples far from a loss leave (after the first round beyond `margin`, after the
            // second beyond `leave_margin`; later rounds only add), each at most once, unless
            // fewer than twice the features would stay (the next answer would fit them too
            // closely)
            let leave = match round {
                1 => s.margin,
                2 => s.leave_margin,
                _ => f64::INFINITY,
            };
            let leave = (leave.is_finite()
                && idx.iter().filter(|&&i| values[i] >= -leave).count()
                    >= 2 * (data.n_features() + 1))
                .then_some(leave);
            let violators = next_working_set(&values, s.margin, leave, &mut in_set, &mut left);
            if !ended_early && (violators == 0 || gap <= self.tolerance) {
                answer.run.objective = primal / m as f64;
                answer.run.dual_objective = dual / m as f64;
                answer.run.gap = gap;
                answer.run.factor_seconds = factor;
                answer.run.solve_seconds = solve;
                answer.run.refinements = refinements;
                answer.run.regularization_boosts = boosts;
                answer.iterations = report.iterations;
                answer.fallbacks = std::mem::take(fallbacks);
                return Ok(Some(Solved {
                    model,
                    answer,
                    shape,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_working_set_samples_each_class() {
        let y: Vec<Sign> = (0..40)
            .map(|i| if i % 4 == 0 { Sign::Pos } else { Sign::Neg })
            .collect();
        let w = first_working_set(&y, 0.25);
        // 10 positives (every 4th: 3 of them), 30 negatives (8 of them)
        let pos = (0..40).filter(|&i| w[i] && y[i] == Sign::Pos).count();
        let neg = (0..40).filter(|&i| w[i] && y[i] == Sign::Neg).count();
        assert_eq!((pos, neg), (3, 8));
        assert!(w[0] && w[1], "the first of each class is in");
    }

    #[test]
    fn an_example_leaves_the_working_set_at_most_once() {
        let mut inside = vec![true, false, false];
        let mut left = vec![false; 3];
        // example 0 inactive: leaves; 1 violates: joins; 2 just inside the margin: joins
        let v = next_working_set(
            &[-1.0, 0.5, -0.005],
            0.01,
            Some(0.01),
            &mut inside,
            &mut left,
        );
        assert_eq!(v, 1);
        assert_eq!(inside, vec![false, true, true]);
        // 0 comes back, then is inactive again: it stays this time
        next_working_set(&[0.2, 0.5, 0.1], 0.01, Some(0.01), &mut inside, &mut left);
        assert!(inside[0]);
        next_working_set(&[-1.0, 0.5, 0.1], 0.01, Some(0.01), &mut inside, &mut left);
        assert!(inside[0], "an example leaves at most once");
    }

    #[test]
    fn a_wider_leave_margin_keeps_examples_near_the_margin() {
        let mut inside = vec![true, true, true, false];
        let mut left = vec![false; 4];
        // 0 is within the leave margin: it stays; 1 is beyond it: it leaves
        let v = next_working_set(
            &[-0.015, -0.5, 0.3, -0.05],
            0.01,
            Some(0.02),
            &mut inside,
            &mut left,
        );
        assert_eq!(v, 0);
        assert_eq!(inside, vec![true, false, true, false]);
        // no leave threshold: none leaves, and the outside examples still join
        let v = next_working_set(
            &[-1.0, 0.1, -1.0, -0.001],
            0.01,
            None,
            &mut inside,
            &mut left,
        );
        assert_eq!(v, 1);
        assert_eq!(inside, vec![true, true, true, true]);
        assert_eq!(left, vec![false, true, false, false]);
    }

    #[test]
    fn bad_settings_name_their_field() {
        for (s, field) in [
            (
                Screening {
                    sample_fraction: 1.0,
                    ..Screening::default()
                },
                "sample_fraction",
            ),
            (
                Screening {
                    margin: f64::NAN,
                    ..Screening::default()
                },
                "margin",
            ),
            (
                Screening {
                    leave_margin: 0.005,
                    ..Screening::default()
                },
                "leave_margin",
            ),
            (
                Screening {
                    leave_margin: f64::NAN,
                    ..Screening::default()
                },
                "leave_margin",
            ),
            (
                Screening {
                    max_fraction: 0.0,
                    ..Screening::default()
                },
                "max_fraction",
            ),
            (
                Screening {
                    max_rounds: 0,
                    ..Screening::default()
                },
                "max_rounds",
            ),
        ] {
            let e = s.validate().unwrap_err().to_string();
            assert!(e.contains(&format!("screening.{field}")), "{e}");
        }
        assert!(Screening::default().validate().is_ok());
        let only_add = Screening {
            leave_margin: f64::INFINITY,
            ..Screening::default()
        };
        assert!(only_add.validate().is_ok());
        assert!(!Screening::off().applies(usize::MAX - 1));
        let on = Screening::default();
        assert!(on.applies(10_000) && !on.applies(9_999));
    }
}
