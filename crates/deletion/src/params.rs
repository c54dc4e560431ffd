//! Hyper-parameters and their validation (training: [`crate::fit`]).

use bulwark_core::{Error, FeatureBudget, FeatureValues, ParamGuard};
use bulwark_lp::SettingsError;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::ipm::DsxIpmSettings;
use crate::screening::Screening;

/// Which solver answers LP (4) first (see [`crate::fit`] for the fallbacks after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LpBackend {
    /// The custom primal–dual interior-point method of DSX §3 ([`crate::ipm`]) on the
    /// block-arrow normal equations of `bulwark-linalg`: `O(Σ|S_i|²)` per iteration, `O(nnz)`
    /// memory. The default.
    Structured,
    /// `bulwark-lp`'s generic homogeneous self-dual engine with the structured KKT backend
    /// [`crate::StructuredBackend`] (same linear algebra, generic iteration; for cross-checks).
    EngineStructured,
    /// `bulwark-lp`'s generic sparse LDLᵀ (for cross-checks).
    GenericSparse,
    /// `bulwark-lp`'s dense backend (tiny problems only).
    Dense,
}

impl LpBackend {
    /// The stable name of the solver this backend runs, as reported in
    /// [`crate::SolveDiagnostics::solver`] and `FitReport::solver`: `dsx-ipm`,
    /// `hsd-engine/structured`, `hsd-engine/generic-ldl` or `hsd-engine/dense`.
    pub fn solver_name(self) -> &'static str {
        match self {
            Self::Structured => "dsx-ipm",
            Self::EngineStructured => "hsd-engine/structured",
            Self::GenericSparse => "hsd-engine/generic-ldl",
            Self::Dense => "hsd-engine/dense",
        }
    }
}

/// Unchecked hyper-parameters of the DSX LP classifier (LP (4)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsxLpParams(DsxLp);

/// Validated hyper-parameters; see [`DsxLpParams`] for the meaning of each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsxLp {
    pub(crate) budget: f64,
    pub(crate) c: f64,
    pub(crate) values: FeatureValues,
    pub(crate) backend: LpBackend,
    pub(crate) tolerance: f64,
    pub(crate) max_iter: u32,
    pub(crate) time_limit: f64,
    pub(crate) chunks: Option<usize>,
    pub(crate) seed: u64,
    /// Worker threads of the custom IPM (`None`: rayon's current pool).
    #[serde(default)]
    pub(crate) threads: Option<usize>,
    /// Whether a failed solve may fall back to another solver.
    #[serde(default = "yes")]
    pub(crate) fallback: bool,
    /// Tuning of the structured IPM.
    #[serde(default)]
    pub(crate) ipm_settings: DsxIpmSettings,
    /// Most memory (bytes) a fallback engine may need to be started (`None`: the memory the
    /// system reports available when it would start).
    #[serde(default)]
    pub(crate) fallback_memory: Option<u64>,
    /// LP (4) on working sets of examples ([`crate::screening`]).
    #[serde(default)]
    pub(crate) screening: Screening,
}

fn yes() -> bool {
    true
}

impl Default for DsxLpParams {
    fn default() -> Self {
        Self(DsxLp {
            budget: 1.0,
            c: 1.0,
            values: FeatureValues::Uniform,
            backend: LpBackend::Structured,
            tolerance: 1e-8,
            max_iter: 400,
            time_limit: f64::INFINITY,
            chunks: None,
            seed: 0,
            threads: None,
            fallback: true,
            ipm_settings: DsxIpmSettings::default(),
            fallback_memory: None,
            screening: Screening::default(),
        })
    }
}

impl DsxLpParams {
    /// Defaults: `N = 1`, `C = 1`, uniform values, structured backend, tolerance 1e-8,
    /// fallbacks allowed, default [`DsxIpmSettings`].
    pub fn new() -> Self {
        Self::default()
    }
    /// The deletion budget `N` (`0 ≤ N < V([n])`).
    pub fn budget(mut self, n: f64) -> Self {
        self.0.budget = n;
        self
    }
    /// The box radius `C` (`‖w‖∞ ≤ C`, `C > 0`).
    pub fn c(mut self, c: f64) -> Self {
        self.0.c = c;
        self
    }
    /// Feature values.
    pub fn values(mut self, v: FeatureValues) -> Self {
        self.0.values = v;
        self
    }
    /// The solver that answers first (default [`LpBackend::Structured`]).
    pub fn backend(mut self, b: LpBackend) -> Self {
        self.0.backend = b;
        self
    }
    /// Relative residual and gap tolerance of every solver (default 1e-8).
    pub fn tolerance(mut self, t: f64) -> Self {
        self.0.tolerance = t;
        self
    }
    /// Iteration limit of every solver (default 400: on whole pairs of real image classes the
    /// structured IPM can need more than 200, `docs/design/deletion.md`; its own limit can be
    /// set apart with [`DsxIpmSettings::max_iter`]). When the structured IPM reaches it or
    /// stops on a numerical error, the fit falls back (unless [`DsxLpParams::fallback`] is
    /// off); the report names the solver that answered and every failed attempt.
    pub fn max_iter(mut self, k: u32) -> Self {
        self.0.max_iter = k;
        self
    }
    /// Wall-clock limit of each solver attempt in seconds (default ∞).
    pub fn time_limit(mut self, s: f64) -> Self {
        self.0.time_limit = s;
        self
    }
    /// ICML 2008 variant: split the training set into `k` seeded chunks, solve LP (4) on each
    /// and average the weights and biases (bagging). `None` (default) solves one LP.
    pub fn chunks(mut self, k: Option<usize>) -> Self {
        self.0.chunks = k;
        self
    }
    /// Seed of the chunk assignment.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
    /// Worker threads of the structured IPM's per-example passes and factorisations
    /// (default `None`: rayon's current pool, i.e. every core unless `RAYON_NUM_THREADS` or an
    /// enclosing pool says otherwise). The blocks of work and the order of every sum are fixed
    /// by the data, so the model is bit-identical for any thread count.
    pub fn threads(mut self, t: Option<usize>) -> Self {
        self.0.threads = t;
        self
    }
    /// Whether a solve that stops without an answer may fall back to the next solver
    /// (default `true`; see [`crate::fit`]). With `false` the first solver's failure is a
    /// [`crate::DeletionError::NotSolved`] naming it.
    pub fn fallback(mut self, allow: bool) -> Self {
        self.0.fallback = allow;
        self
    }
    /// Tuning of the structured IPM (default [`DsxIpmSettings::default`]); validated with the
    /// other parameters (a bad field is an error naming `ipm_settings.<field>`).
    pub fn ipm_settings(mut self, s: DsxIpmSettings) -> Self {
        self.0.ipm_settings = s;
        self
    }
    /// Most memory in bytes a fallback engine may need for the fit to start it (default
    /// `None`: the memory the system reports available at that moment — `MemAvailable` on
    /// Linux; elsewhere no limit). The engines hold about 1 KiB per stored (example, feature)
    /// pair, some 30 times the structured IPM: one that would not fit is not started, and the
    /// fit's [`crate::DeletionError::NotSolved`] says so instead of the process being killed
    /// for want of memory (see [`crate::fit`]).
    pub fn fallback_memory(mut self, bytes: Option<u64>) -> Self {
        self.0.fallback_memory = bytes;
        self
    }
    /// Example screening: LP (4) solved on working sets of examples, grown until the answer is
    /// certified optimal for every example ([`crate::screening`]; default: training sets of at
    /// least [`Screening::DEFAULT_MIN_EXAMPLES`] examples, [`Screening::off`] never). The same
    /// optimum (to the tolerance) from smaller LPs on tasks where most examples end with a zero
    /// loss; [`crate::SolveDiagnostics::screening`] reports the rounds.
    pub fn screening(mut self, s: Screening) -> Self {
        self.0.screening = s;
        self
    }
}

/// A bad IPM setting as a parameter error naming `ipm_settings.<field>`.
pub(crate) fn settings_error(e: SettingsError) -> Error {
    let SettingsError::BadFieldValue {
        field,
        value,
        reason,
    } = e;
    Error::param(format!("ipm_settings.{field}"), value, reason)
}

impl ParamGuard for DsxLpParams {
    type Checked = DsxLp;
    type Error = Error;
    fn check_ref(&self) -> std::result::Result<&DsxLp, Error> {
        let p = &self.0;
        bulwark_core::error::check_positive("C", p.c)?;
        bulwark_core::error::check_nonnegative("budget", p.budget)?;
        if !(p.tolerance.is_finite() && p.tolerance > 0.0 && p.tolerance < 1.0) {
            return Err(Error::param("tolerance", p.tolerance, "a number in (0, 1)"));
        }
        if p.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if p.time_limit.is_nan() || p.time_limit <= 0.0 {
            return Err(Error::param("time_limit", p.time_limit, "> 0 seconds"));
        }
        if let Some(k) = p.chunks
            && k == 0
        {
            return Err(Error::param("chunks", k, "at least 1"));
        }
        if let Some(t) = p.threads
            && t == 0
        {
            return Err(Error::param("threads", t, "at least 1"));
        }
        p.values.check()?;
        p.ipm_settings.validate().map_err(settings_error)?;
        p.screening.validate()?;
        Ok(p)
    }
    fn check(self) -> std::result::Result<DsxLp, Error> {
        self.check_ref()?;
        Ok(self.0)
    }
}

impl DsxLp {
    /// The budget of this training set (values resolved, validated against the data).
    pub fn feature_budget(&self, n_features: usize) -> Result<FeatureBudget> {
        let v = self.values.resolve(n_features)?;
        Ok(FeatureBudget::try_new(v, self.budget)?)
    }
    /// The tolerance asked of every solver.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
    /// The tuning of the structured IPM.
    pub fn ipm_settings(&self) -> &DsxIpmSettings {
        &self.ipm_settings
    }
}
