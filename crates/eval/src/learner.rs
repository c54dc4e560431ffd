//! The learners of an experiment, taken from the registry (`bulwark-models`) by name, with the
//! settings the papers' protocol fixes for each, and the record of how every fit was solved.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use bulwark_core::{Dataset, Error, FitReport, HyperParams, LinearModel, ParamValue};
use bulwark_models::registry;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The tolerance the DSX LP is asked for in the grid search, and the one a failed fit is
/// retried at (recorded as *relaxed* in the tables).
pub const LP_TOLERANCE: f64 = 1e-6;
/// See [`LP_TOLERANCE`].
pub const LP_RELAXED_TOLERANCE: f64 = 1e-4;

/// A registered learner as an experiment uses it; compared, ordered and serialised by name.
#[derive(Clone, Copy)]
pub struct Learner(&'static dyn bulwark_core::Learner);

impl std::fmt::Debug for Learner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Learner({})", self.0.name())
    }
}

impl PartialEq for Learner {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}
impl Eq for Learner {}
impl PartialOrd for Learner {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Learner {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.name().cmp(other.0.name())
    }
}
impl Hash for Learner {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.name().hash(h);
    }
}
impl Serialize for Learner {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name())
    }
}
impl<'de> Deserialize<'de> for Learner {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Learner::named(&name).map_err(serde::de::Error::custom)
    }
}

/// How one fit was solved, for the tables: a fallback solver answered, the tolerance was
/// relaxed, or the solver stopped without meeting its tolerance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolverTally {
    /// Fits made.
    pub fits: usize,
    /// Fits answered by a fallback solver after the first one failed.
    pub fallbacks: usize,
    /// Fits accepted at the relaxed tolerance after failing at the one asked.
    pub relaxed: usize,
    /// Fits whose solver stopped without meeting its tolerance (iteration or pass limit).
    pub not_converged: usize,
}

impl SolverTally {
    /// Subtracts `other` (a part of `self`; saturating at 0).
    pub fn sub(&mut self, other: &SolverTally) {
        self.fits = self.fits.saturating_sub(other.fits);
        self.fallbacks = self.fallbacks.saturating_sub(other.fallbacks);
        self.relaxed = self.relaxed.saturating_sub(other.relaxed);
        self.not_converged = self.not_converged.saturating_sub(other.not_converged);
    }
    /// Adds `other`.
    pub fn add(&mut self, other: &SolverTally) {
        self.fits += other.fits;
        self.fallbacks += other.fallbacks;
        self.relaxed += other.relaxed;
        self.not_converged += other.not_converged;
    }
    /// Whether every fit was answered by its first solver at the tolerance asked.
    pub fn is_clean(&self) -> bool {
        self.fallbacks == 0 && self.relaxed == 0 && self.not_converged == 0
    }
}

/// A model and how it was solved.
#[derive(Debug, Clone)]
pub struct FitOutcome {
    /// The model.
    pub model: LinearModel,
    /// One fit's tally.
    pub tally: SolverTally,
    /// What to tell the user when the fit was not clean.
    pub note: Option<String>,
}

impl Learner {
    /// The registered learner `name`.
    pub fn named(name: &str) -> Result<Self, Error> {
        registry::find(name).map(Learner)
    }
    /// The registered learners `names`, in that order.
    pub fn lineup(names: &[&str]) -> Result<Vec<Self>, Error> {
        names.iter().map(|n| Self::named(n)).collect()
    }
    /// Table / legend name.
    pub fn name(self) -> &'static str {
        self.0.title()
    }
    /// The registry's name (`fdrop`, …), as `--refit` takes it.
    pub fn registry_name(self) -> &'static str {
        self.0.name()
    }
    /// Whether training depends on the budget `N`.
    pub fn uses_budget(self) -> bool {
        self.0.uses_budget()
    }
    /// Whether `C` is tuned on the validation split attacked like the test set (robust learners)
    /// or on the clean validation split (the SVM baseline, trained "without regard to feature
    /// deletion/corruption in the test set", DSX §4).
    pub fn tuned_under_attack(self) -> bool {
        self.uses_budget()
    }

    /// The hyper-parameters of one grid point: `C`, the budget `N` and the feature values for
    /// learners that take them, the seed, and the settings the protocol fixes (DSX §4: the
    /// LP at tolerance [`LP_TOLERANCE`]; the SVM at 1e-4; FDROP against the same values and
    /// budget `N` as the LP — the worst deletion of features of total value at most `N`, so
    /// with mutual-information values `N` is in value units, not a count of features — by its
    /// default solver: the interior-point method for `0 < N < V([n])` (tolerance 1e-8, at most
    /// 200 iterations), the dual coordinate descent otherwise (`N = 0`: the SVM's problem; a
    /// certified gap of 1e-3). With unit values `N` is rounded to the whole features it deletes
    /// (`k = round(N)`, the `k` form: the models of the unit-valued experiments are those of
    /// FDROP's count of deletions).
    fn params(self, c: f64, n_budget: f64, values: &[f64], seed: u64) -> HyperParams {
        let takes = |name: &str| self.0.params().iter().any(|p| p.name == name);
        let mut p = HyperParams::new().with("C", ParamValue::Float(c));
        if takes("seed") {
            p.set("seed", ParamValue::Count(seed));
        }
        if takes("values") {
            p.set("budget", ParamValue::Float(n_budget));
            p.set("values", ParamValue::Text("given".into()));
            p.set("feature_values", ParamValue::Floats(values.to_vec()));
        }
        match self.0.name() {
            "lp" => p.set("tolerance", ParamValue::Float(LP_TOLERANCE)),
            "svm" => p.set("tolerance", ParamValue::Float(1e-4)),
            "fdrop" => {
                if values.iter().all(|&v| v == 1.0) {
                    // unit values: whole features (a budget of every feature deletes them all)
                    p.set("budget", ParamValue::Float(n_budget.round()));
                }
                p.set("tolerance", ParamValue::Float(1e-3));
                p.set("solver", ParamValue::Text("auto".into()));
            }
            _ => {}
        }
        p
    }

    /// Trains on `train` with box / loss weight `c`, budget `n_budget` and feature values `v`.
    /// A fit of the LP that fails at [`LP_TOLERANCE`] is retried at [`LP_RELAXED_TOLERANCE`]
    /// and counted as relaxed. A panic inside a learner becomes an [`Error::Numerical`] naming
    /// the learner, so one bad fit costs a grid point, not the run.
    pub fn fit(
        self,
        train: &Dataset,
        c: f64,
        n_budget: f64,
        values: &[f64],
        seed: u64,
    ) -> Result<FitOutcome, Error> {
        crate::select::no_panic(self.name(), || {
            self.fit_inner(train, c, n_budget, values, seed)
        })
    }

    fn fit_inner(
        self,
        train: &Dataset,
        c: f64,
        n_budget: f64,
        values: &[f64],
        seed: u64,
    ) -> Result<FitOutcome, Error> {
        let params = self.params(c, n_budget, values, seed);
        let first = registry::train(self.0, train, &params, None);
        let (fitted, relaxed_after) = match first {
            Ok(f) => (f, None),
            Err(e) if self.0.name() == "lp" => {
                let mut p = params;
                p.set("tolerance", ParamValue::Float(LP_RELAXED_TOLERANCE));
                (registry::train(self.0, train, &p, None)?, Some(e))
            }
            Err(e) => return Err(e),
        };
        let report = &fitted.report;
        let tally = SolverTally {
            fits: 1,
            fallbacks: usize::from(report.fell_back()),
            relaxed: usize::from(relaxed_after.is_some()),
            not_converged: usize::from(!report.converged),
        };
        let note = (!tally.is_clean())
            .then(|| note_of(self.name(), c, n_budget, report, relaxed_after.as_ref()));
        Ok(FitOutcome {
            model: fitted.model.into_linear("the deletion experiments")?,
            tally,
            note,
        })
    }
}

fn note_of(name: &str, c: f64, n: f64, r: &FitReport, relaxed_after: Option<&Error>) -> String {
    let mut s = format!("{name} C={c} N={n}: {}", r.summary());
    if let Some(e) = relaxed_after {
        s.push_str(&format!(
            "; accepted at the relaxed tolerance {LP_RELAXED_TOLERANCE:.0e} after failing at {LP_TOLERANCE:.0e} ({e})"
        ));
    }
    s
}
