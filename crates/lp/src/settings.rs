//! Solver settings and their validating builder.

use crate::error::SettingsError;
use serde::{Deserialize, Serialize};

/// Which built-in KKT backend to use (a custom backend is passed to
/// [`crate::IpmSolver::with_backend`] instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// Currently the sparse LDLᵀ backend (the dense one has no pivoting and is meant
    /// for tests and as a reference for the normal-equation elimination).
    #[default]
    Auto,
    /// [`crate::kkt::FaerLdlBackend`]: sparse LDLᵀ of the quasi-definite augmented system.
    SparseLdl,
    /// [`crate::kkt::DenseBackend`]: dense normal equations / dense LDLᵀ (tiny problems, tests).
    Dense,
}

/// Interior-point settings. Build with [`IpmSettings::builder`]; `Default` gives the
/// documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpmSettings {
    /// Maximum number of IPM iterations (default 200).
    pub max_iter: u32,
    /// Wall-clock limit in seconds (default ∞).
    pub time_limit: f64,
    /// Relative primal and dual residual tolerance (default 1e-8).
    pub tol_feas: f64,
    /// Relative duality-gap tolerance (default 1e-8).
    pub tol_gap: f64,
    /// Tolerance of the infeasibility certificates (default 1e-8).
    pub tol_infeas: f64,
    /// Write an iteration log to the solver's log target (default false).
    pub verbose: bool,
    /// Ruiz equilibration of `A` plus cost and bound scaling (default true).
    pub equilibrate: bool,
    /// Number of Ruiz sweeps (default 15).
    pub equilibrate_iters: u32,
    /// After a `numerical_error`, retry once with the built-in backend's static
    /// regularisation multiplied by 100 (default true; not with a user backend).
    pub retry_regularized: bool,
    /// After a `numerical_error` on the equilibrated problem (and the regularised retry),
    /// retry once without equilibration (default true; iterations of every attempt are counted).
    pub retry_unscaled: bool,
    /// Light presolve: drop empty/free rows, fix empty columns (default true).
    /// Fixed variables are always eliminated.
    pub presolve: bool,
    /// Proximal diagonal for free variables in the Newton matrix (default 1e-8).
    pub free_reg: f64,
    /// Static regularisation of the row block in the built-in backends (default 1e-9).
    pub static_reg: f64,
    /// Static regularisation of the variable block in the built-in backends (default 1e-13).
    pub static_reg_var: f64,
    /// Dynamic regularisation threshold: pivots smaller than this are replaced (default 1e-13).
    pub dynamic_reg_eps: f64,
    /// Dynamic regularisation value (default 1e-7).
    pub dynamic_reg_delta: f64,
    /// Maximum iterative-refinement steps per solve (default 10).
    pub refine_max_iter: u32,
    /// Relative residual `‖r − K s‖∞ / (1 + ‖r‖∞)` at which refinement stops (default
    /// 1e-15); it also stops when a step reduces the residual by less than half.
    pub refine_tol: f64,
    /// Fraction of the step to the boundary (default 0.99).
    pub step_fraction: f64,
    /// Built-in backend selection (default `Auto`).
    pub backend: BackendChoice,
    /// Record per-iteration information in [`crate::Solution::history`] (default false).
    pub record_history: bool,
}

impl Default for IpmSettings {
    fn default() -> Self {
        Self {
            max_iter: 200,
            time_limit: f64::INFINITY,
            tol_feas: 1e-8,
            tol_gap: 1e-8,
            tol_infeas: 1e-8,
            verbose: false,
            equilibrate: true,
            equilibrate_iters: 15,
            retry_regularized: true,
            retry_unscaled: true,
            presolve: true,
            free_reg: 1e-8,
            static_reg: 1e-9,
            static_reg_var: 1e-13,
            dynamic_reg_eps: 1e-13,
            dynamic_reg_delta: 1e-7,
            refine_max_iter: 10,
            refine_tol: 1e-15,
            step_fraction: 0.99,
            backend: BackendChoice::Auto,
            record_history: false,
        }
    }
}

impl IpmSettings {
    /// A builder starting from the defaults.
    pub fn builder() -> IpmSettingsBuilder {
        IpmSettingsBuilder { s: Self::default() }
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<(), SettingsError> {
        fn pos(field: &'static str, v: f64) -> Result<(), SettingsError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SettingsError::BadFieldValue {
                    field,
                    value: v.to_string(),
                    reason: "must be finite and > 0",
                })
            }
        }
        fn nonneg(field: &'static str, v: f64) -> Result<(), SettingsError> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(SettingsError::BadFieldValue {
                    field,
                    value: v.to_string(),
                    reason: "must be finite and >= 0",
                })
            }
        }
        if self.max_iter == 0 {
            return Err(SettingsError::BadFieldValue {
                field: "max_iter",
                value: "0".into(),
                reason: "must be >= 1",
            });
        }
        if self.time_limit.is_nan() || self.time_limit <= 0.0 {
            return Err(SettingsError::BadFieldValue {
                field: "time_limit",
                value: self.time_limit.to_string(),
                reason: "must be > 0 (use infinity for none)",
            });
        }
        pos("tol_feas", self.tol_feas)?;
        pos("tol_gap", self.tol_gap)?;
        pos("tol_infeas", self.tol_infeas)?;
        nonneg("free_reg", self.free_reg)?;
        nonneg("static_reg", self.static_reg)?;
        nonneg("static_reg_var", self.static_reg_var)?;
        pos("dynamic_reg_eps", self.dynamic_reg_eps)?;
        pos("dynamic_reg_delta", self.dynamic_reg_delta)?;
        pos("refine_tol", self.refine_tol)?;
        if !(self.step_fraction > 0.0 && self.step_fraction < 1.0) {
            return Err(SettingsError::BadFieldValue {
                field: "step_fraction",
                value: self.step_fraction.to_string(),
                reason: "must lie in (0, 1)",
            });
        }
        Ok(())
    }
}

/// Consuming builder for [`IpmSettings`]; [`IpmSettingsBuilder::build`] validates.
#[derive(Debug, Clone)]
pub struct IpmSettingsBuilder {
    s: IpmSettings,
}

macro_rules! setter {
    ($(#[$doc:meta] $name:ident: $t:ty),* $(,)?) => {
        $(#[$doc] pub fn $name(mut self, v: $t) -> Self { self.s.$name = v; self })*
    };
}

impl IpmSettingsBuilder {
    setter! {
        /// See [`IpmSettings::max_iter`].
        max_iter: u32,
        /// See [`IpmSettings::time_limit`] (seconds).
        time_limit: f64,
        /// See [`IpmSettings::tol_feas`].
        tol_feas: f64,
        /// See [`IpmSettings::tol_gap`].
        tol_gap: f64,
        /// See [`IpmSettings::tol_infeas`].
        tol_infeas: f64,
        /// See [`IpmSettings::verbose`].
        verbose: bool,
        /// See [`IpmSettings::equilibrate`].
        equilibrate: bool,
        /// See [`IpmSettings::equilibrate_iters`].
        equilibrate_iters: u32,
        /// See [`IpmSettings::retry_regularized`].
        retry_regularized: bool,
        /// See [`IpmSettings::retry_unscaled`].
        retry_unscaled: bool,
        /// See [`IpmSettings::presolve`].
        presolve: bool,
        /// See [`IpmSettings::static_reg`].
        static_reg: f64,
        /// See [`IpmSettings::free_reg`].
        free_reg: f64,
        /// See [`IpmSettings::static_reg_var`].
        static_reg_var: f64,
        /// See [`IpmSettings::dynamic_reg_eps`].
        dynamic_reg_eps: f64,
        /// See [`IpmSettings::dynamic_reg_delta`].
        dynamic_reg_delta: f64,
        /// See [`IpmSettings::refine_max_iter`].
        refine_max_iter: u32,
        /// See [`IpmSettings::refine_tol`].
        refine_tol: f64,
        /// See [`IpmSettings::step_fraction`].
        step_fraction: f64,
        /// See [`IpmSettings::backend`].
        backend: BackendChoice,
        /// See [`IpmSettings::record_history`].
        record_history: bool,
    }

    /// Sets both `tol_feas` and `tol_gap`.
    pub fn tolerance(mut self, tol: f64) -> Self {
        self.s.tol_feas = tol;
        self.s.tol_gap = tol;
        self
    }

    /// Validates and returns the settings.
    pub fn build(self) -> Result<IpmSettings, SettingsError> {
        self.s.validate()?;
        Ok(self.s)
    }
}
