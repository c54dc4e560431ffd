//! Tuning of the structured IPM: every constant of the method, with its default, validated
//! before a solve (Clarabel's settings pattern).
//!
//! The defaults are the values the method was tuned with; the measurements behind them are in
//! `docs/design/deletion.md`. The tolerance, the iteration limit and the time limit of a fit
//! are set on [`crate::DsxLpParams`] (they also apply to the fallback solvers).

use bulwark_linalg::NormalEquations;
use bulwark_lp::SettingsError;
use serde::{Deserialize, Serialize};

/// Settings of the structured interior-point method ([`crate::ipm`]). Build with
/// [`DsxIpmSettings::builder`] (which validates) or start from `Default` and check with
/// [`DsxIpmSettings::validate`]; [`crate::DsxLpParams::ipm_settings`] validates them again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DsxIpmSettings {
    /// Iteration limit of the structured IPM alone (default `None`: the fit's `max_iter`).
    /// When it is reached the fit falls back (if allowed) to `bulwark-lp`'s engine, which keeps
    /// the fit's `max_iter`.
    pub max_iter: Option<u32>,
    /// Starting value of every primal variable, row slack and dual except `w` and `b`, which
    /// start at 0 (default 0.1).
    pub start: f64,
    /// Step-length factor `η`: the fraction of the distance to the boundary taken
    /// (default 0.99; in `(0, 1)`).
    pub step_fraction: f64,
    /// Centring exponent `σ = (μ_aff/μ)^p` while the primal and dual residuals are both at most
    /// the gap (default 6).
    pub sigma_power: i32,
    /// Mehrotra's centring exponent, used while an infeasibility exceeds the gap (default 3).
    pub mehrotra_power: i32,
    /// Refine the Newton direction on the dual equations in the final phase (default `true`;
    /// `refine` in `src/ipm/`): near the optimum the normal equations' solves reach a relative
    /// residual of only 1e-7–1e-5, all of it in the dual equation, and the dual residual grew
    /// instead of converging (the "dual residual diverging at the optimum" fallbacks).
    pub dual_refinement: bool,
    /// Refinement starts once the primal residual has converged and both the gap and the dual
    /// residual are within this many times the tolerance (default 10) ...
    pub refine_within: f64,
    /// ... or from the first iteration whose dual residual exceeds this many times what the
    /// dual step promised, `(1 − α_D)` times the previous one (default 2).
    pub refine_lag: f64,
    /// ... or at every iterate whose dual residual already meets the tolerance while the gap
    /// is within this many times it (default 1000): an unrefined step would spend that
    /// residual (`(1 − α) dres + α defect`). Measuring the defect costs a pass over the data,
    /// and on LPs whose dual residual meets the tolerance from the first iterations a wider
    /// window pays it at every iteration.
    pub keep_dual_within: f64,
    /// Most refinement rounds per direction (default 3); a round is kept only when it halves
    /// the defect of the dual equation.
    pub max_refinements: usize,
    /// An iterate whose primal residual meets the tolerance and whose gap is within this many
    /// times it, but which misses a test, is also tested by the certificate of `ipm`'s module
    /// docs (the closed-form objective against a repaired dual point; default 100; 0: never).
    pub certify_within: f64,
    /// A run that stops short of the tolerance — stalled, diverging or at the iteration limit —
    /// after an iterate was certified (module docs of [`crate::ipm`], *Certificate*) within
    /// this many times the tolerance returns that iterate as `almost_optimal` (reported not
    /// converged, with its certified gap) instead of failing over to the fallback solvers
    /// (default 10; 0: never). Only iterates within `certify_within` times the tolerance are
    /// certified, so a larger factor acts as that one.
    pub accept_within: f64,
    /// Most Gondzio centrality correctors per iteration (default 2; 0 disables them).
    pub max_correctors: usize,
    /// Correctors are used on an LP only when the cost model estimates one factorisation at
    /// least this many times one solve (default 4; 0 uses them on every LP, `+∞` on none).
    pub corrector_cost_ratio: f64,
    /// Correctors are tried only while the step `min(α_P, α_D)` is below this (default 0.35).
    pub corrector_trigger: f64,
    /// Trial step increase `δ` of a corrector: the products are evaluated at
    /// `min(1, α + δ)` (default 0.2).
    pub corrector_step_increase: f64,
    /// Lower end `β_min` of the target box `[β_min, β_max]·σμ` of the products (default 0.1;
    /// in `(0, 1]`).
    pub corrector_beta_min: f64,
    /// Upper end `β_max` of the target box (default 10; at least 1).
    pub corrector_beta_max: f64,
    /// Least gain in `α_P + α_D` for a corrector to be kept (default 0.02).
    pub corrector_min_gain: f64,
    /// A corrector is kept only if neither step length falls below this fraction of the one
    /// before it (default 0.95; in `(0, 1]`).
    pub corrector_keep_fraction: f64,
    /// Accuracy asked of each Newton solve relative to the largest residual still to remove
    /// (default 0.01; in `(0, 1)`); the result is clamped to
    /// `[solve_tol_min, solve_tol_max]`.
    pub solve_accuracy: f64,
    /// Smallest relative accuracy asked of a Newton solve (default 1e-13).
    pub solve_tol_min: f64,
    /// Largest relative accuracy asked of a Newton solve (default 1e-8).
    pub solve_tol_max: f64,
    /// Solve accuracy at or above which a factorisation without regularised or clamped pivots
    /// is trusted without checking its solves against the exact operator (default 1e-8;
    /// `+∞` always checks).
    pub loose_solve_tol: f64,
    /// A checked direct solve lets the later solves with the same factorisation skip the
    /// check when its relative residual is at most this fraction of the accuracy asked
    /// (default 0.01; in `(0, 1]`).
    pub direct_solve_accept: f64,
    /// Most preconditioned-CG steps refining one Newton solve (default 4; 0 never refines).
    pub max_pcg: usize,
    /// Relative primal residual at or below which the Newton steps take it as zero and stop
    /// removing it (default 1e-14; 0 never does). The frozen residual bounds the gap: at 1e-12
    /// a real fit (Fashion-MNIST T-shirt/shirt, `N = 0`, `C = 0.1`) stalled at a gap of 6e-8.
    pub primal_rounding: f64,
    /// A step `min(α_P, α_D)` below this counts as a stall (default 1e-8).
    pub stall_step: f64,
    /// Consecutive stalls that end the solve with `numerical_error` (default 5).
    pub max_stalls: u32,
    /// Once the gap and the primal residual meet the tolerance, a dual residual above this
    /// factor times `max(best so far, tolerance)` ends the solve with `numerical_error`
    /// (default 10; `+∞` never does).
    pub divergence_factor: f64,
    /// Static regularisation of the normal equations' Schur complement (default 1e-12).
    pub static_regularization: f64,
    /// Dynamic regularisation: pivots of the unit-diagonal Schur complement below this are
    /// replaced (default 1e-14; `> 0`).
    pub dynamic_regularization_epsilon: f64,
    /// Dynamic regularisation: the value a replaced pivot gets (default 1e-10; above
    /// `dynamic_regularization_epsilon`).
    pub dynamic_regularization_delta: f64,
    /// LPs with fewer variables keep the per-example passes on the calling thread
    /// (default 40 000). The result is the same bits either way.
    pub parallel_min_vars: usize,
    /// How each Newton step's reduced system onto `(w, b)` is solved (default `Auto`: the
    /// cheapest method that fits the memory limit by `bulwark-linalg`'s cost model; an expert
    /// may force `FeatureSpace`, `ExampleSpace` or `SparseLdl`). Every method gives the same
    /// iterates up to rounding.
    pub normal_equations: NormalEquations,
    /// Most bytes the structured IPM may hold, its vectors and its normal equations together
    /// (default `None`: the memory the system reports available when the solve starts —
    /// `MemAvailable` on Linux; elsewhere no limit). The normal-equations method is chosen to
    /// fit; when none does the solve ends at once with [`crate::DeletionError::TooLarge`].
    pub memory_limit: Option<u64>,
}

impl Default for DsxIpmSettings {
    fn default() -> Self {
        Self {
            max_iter: None,
            start: 0.1,
            step_fraction: 0.99,
            sigma_power: 6,
            mehrotra_power: 3,
            dual_refinement: true,
            refine_within: 10.0,
            refine_lag: 2.0,
            keep_dual_within: 1000.0,
            max_refinements: 3,
            certify_within: 100.0,
            accept_within: 10.0,
            max_correctors: 2,
            corrector_cost_ratio: 4.0,
            corrector_trigger: 0.35,
            corrector_step_increase: 0.2,
            corrector_beta_min: 0.1,
            corrector_beta_max: 10.0,
            corrector_min_gain: 0.02,
            corrector_keep_fraction: 0.95,
            solve_accuracy: 0.01,
            solve_tol_min: 1e-13,
            solve_tol_max: 1e-8,
            loose_solve_tol: 1e-8,
            direct_solve_accept: 0.01,
            max_pcg: 4,
            primal_rounding: 1e-14,
            stall_step: 1e-8,
            max_stalls: 5,
            divergence_factor: 10.0,
            static_regularization: 1e-12,
            dynamic_regularization_epsilon: 1e-14,
            dynamic_regularization_delta: 1e-10,
            parallel_min_vars: 40_000,
            normal_equations: NormalEquations::Auto,
            memory_limit: None,
        }
    }
}

fn bad(field: &'static str, value: impl ToString, reason: &'static str) -> SettingsError {
    SettingsError::BadFieldValue {
        field,
        value: value.to_string(),
        reason,
    }
}

/// `Ok` when `ok(v)` holds, else the error naming `field`.
fn rule(
    field: &'static str,
    v: f64,
    ok: impl Fn(f64) -> bool,
    reason: &'static str,
) -> Result<(), SettingsError> {
    if ok(v) {
        Ok(())
    } else {
        Err(bad(field, v, reason))
    }
}

impl DsxIpmSettings {
    /// A builder starting from the defaults.
    pub fn builder() -> DsxIpmSettingsBuilder {
        DsxIpmSettingsBuilder { s: Self::default() }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let finite_pos = |v: f64| v.is_finite() && v > 0.0;
        let finite_nonneg = |v: f64| v.is_finite() && v >= 0.0;
        let unit_open = |v: f64| v > 0.0 && v < 1.0;
        let unit_half_open = |v: f64| v > 0.0 && v <= 1.0;
        if self.max_iter == Some(0) {
            return Err(bad("max_iter", 0, "must be >= 1 (or None)"));
        }
        rule("start", self.start, finite_pos, "must be finite and > 0")?;
        rule(
            "step_fraction",
            self.step_fraction,
            unit_open,
            "must lie in (0, 1)",
        )?;
        for (field, p) in [
            ("sigma_power", self.sigma_power),
            ("mehrotra_power", self.mehrotra_power),
        ] {
            if !(1..=64).contains(&p) {
                return Err(bad(field, p, "must lie in 1..=64"));
            }
        }
        rule(
            "refine_within",
            self.refine_within,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        rule(
            "keep_dual_within",
            self.keep_dual_within,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        rule(
            "certify_within",
            self.certify_within,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        rule(
            "accept_within",
            self.accept_within,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        rule(
            "refine_lag",
            self.refine_lag,
            |v| v >= 1.0 && v.is_finite(),
            "must be finite and >= 1",
        )?;
        let ratio = self.corrector_cost_ratio;
        rule("corrector_cost_ratio", ratio, |v| v >= 0.0, "must be >= 0")?;
        let (trigger, inc) = (self.corrector_trigger, self.corrector_step_increase);
        rule(
            "corrector_trigger",
            trigger,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        rule(
            "corrector_step_increase",
            inc,
            finite_pos,
            "must be finite and > 0",
        )?;
        let (lo, hi) = (self.corrector_beta_min, self.corrector_beta_max);
        rule(
            "corrector_beta_min",
            lo,
            unit_half_open,
            "must lie in (0, 1]",
        )?;
        let at_least_one = |v: f64| v.is_finite() && v >= 1.0;
        rule(
            "corrector_beta_max",
            hi,
            at_least_one,
            "must be finite and >= 1",
        )?;
        let gain = self.corrector_min_gain;
        rule(
            "corrector_min_gain",
            gain,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        let keep = self.corrector_keep_fraction;
        rule(
            "corrector_keep_fraction",
            keep,
            unit_half_open,
            "must lie in (0, 1]",
        )?;
        rule(
            "solve_accuracy",
            self.solve_accuracy,
            unit_open,
            "must lie in (0, 1)",
        )?;
        let (tmin, tmax) = (self.solve_tol_min, self.solve_tol_max);
        rule("solve_tol_min", tmin, unit_open, "must lie in (0, 1)")?;
        rule(
            "solve_tol_max",
            tmax,
            |v| v >= tmin && v < 1.0,
            "must lie in [solve_tol_min, 1)",
        )?;
        let loose = self.loose_solve_tol;
        rule("loose_solve_tol", loose, |v| v > 0.0, "must be > 0")?;
        let accept = self.direct_solve_accept;
        rule(
            "direct_solve_accept",
            accept,
            unit_half_open,
            "must lie in (0, 1]",
        )?;
        let rounding = self.primal_rounding;
        rule(
            "primal_rounding",
            rounding,
            unit_open_or_zero,
            "must lie in [0, 1)",
        )?;
        rule(
            "stall_step",
            self.stall_step,
            unit_open_or_zero,
            "must lie in [0, 1)",
        )?;
        if self.max_stalls == 0 {
            return Err(bad("max_stalls", 0, "must be >= 1"));
        }
        let div = self.divergence_factor;
        rule("divergence_factor", div, |v| v >= 1.0, "must be >= 1")?;
        let (stat, eps, delta) = (
            self.static_regularization,
            self.dynamic_regularization_epsilon,
            self.dynamic_regularization_delta,
        );
        rule(
            "static_regularization",
            stat,
            finite_nonneg,
            "must be finite and >= 0",
        )?;
        let name = "dynamic_regularization_epsilon";
        rule(name, eps, finite_pos, "must be finite and > 0")?;
        let name = "dynamic_regularization_delta";
        let above_eps = |v: f64| v.is_finite() && v > eps;
        rule(
            name,
            delta,
            above_eps,
            "must be finite and > dynamic_regularization_epsilon",
        )?;
        Ok(())
    }
}

fn unit_open_or_zero(v: f64) -> bool {
    (0.0..1.0).contains(&v)
}

/// Consuming builder of [`DsxIpmSettings`]; [`DsxIpmSettingsBuilder::build`] validates.
#[derive(Debug, Clone)]
pub struct DsxIpmSettingsBuilder {
    s: DsxIpmSettings,
}

macro_rules! setters {
    ($($name:ident: $t:ty),* $(,)?) => {
        $(
            #[doc = concat!("Sets [`DsxIpmSettings::", stringify!($name), "`].")]
            pub fn $name(mut self, v: $t) -> Self {
                self.s.$name = v;
                self
            }
        )*
    };
}

impl DsxIpmSettingsBuilder {
    setters! {
        max_iter: Option<u32>,
        start: f64,
        step_fraction: f64,
        sigma_power: i32,
        mehrotra_power: i32,
        dual_refinement: bool,
        refine_within: f64,
        refine_lag: f64,
        keep_dual_within: f64,
        max_refinements: usize,
        certify_within: f64,
        accept_within: f64,
        max_correctors: usize,
        corrector_cost_ratio: f64,
        corrector_trigger: f64,
        corrector_step_increase: f64,
        corrector_beta_min: f64,
        corrector_beta_max: f64,
        corrector_min_gain: f64,
        corrector_keep_fraction: f64,
        solve_accuracy: f64,
        solve_tol_min: f64,
        solve_tol_max: f64,
        loose_solve_tol: f64,
        direct_solve_accept: f64,
        max_pcg: usize,
        primal_rounding: f64,
        stall_step: f64,
        max_stalls: u32,
        divergence_factor: f64,
        static_regularization: f64,
        dynamic_regularization_epsilon: f64,
        dynamic_regularization_delta: f64,
        parallel_min_vars: usize,
        normal_equations: NormalEquations,
        memory_limit: Option<u64>,
    }

    /// Validates and returns the settings.
    pub fn build(self) -> Result<DsxIpmSettings, SettingsError> {
        self.s.validate()?;
        Ok(self.s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_fields_are_named() {
        assert_eq!(
            DsxIpmSettings::builder().build().unwrap(),
            DsxIpmSettings::default()
        );
        let field = |b: DsxIpmSettingsBuilder| match b.build() {
            Err(SettingsError::BadFieldValue { field, .. }) => field,
            Ok(_) => panic!("accepted"),
        };
        let b = DsxIpmSettings::builder;
        assert_eq!(field(b().step_fraction(1.0)), "step_fraction");
        assert_eq!(field(b().sigma_power(0)), "sigma_power");
        assert_eq!(field(b().refine_lag(0.5)), "refine_lag");
        assert_eq!(field(b().refine_within(f64::NAN)), "refine_within");
        assert_eq!(field(b().certify_within(-1.0)), "certify_within");
        assert_eq!(field(b().keep_dual_within(f64::NAN)), "keep_dual_within");
        assert_eq!(field(b().accept_within(-1.0)), "accept_within");
        assert_eq!(field(b().accept_within(f64::NAN)), "accept_within");
        assert_eq!(field(b().max_iter(Some(0))), "max_iter");
        assert_eq!(field(b().corrector_beta_min(0.0)), "corrector_beta_min");
        assert_eq!(field(b().corrector_beta_max(0.5)), "corrector_beta_max");
        assert_eq!(field(b().start(f64::NAN)), "start");
        assert_eq!(field(b().solve_tol_max(1e-14)), "solve_tol_max");
        assert_eq!(field(b().max_stalls(0)), "max_stalls");
        assert_eq!(field(b().divergence_factor(0.5)), "divergence_factor");
        assert_eq!(
            field(b().dynamic_regularization_delta(0.0)),
            "dynamic_regularization_delta"
        );
        // the documented open ends are accepted
        b().corrector_cost_ratio(f64::INFINITY)
            .divergence_factor(f64::INFINITY)
            .loose_solve_tol(f64::INFINITY)
            .max_correctors(0)
            .max_pcg(0)
            .build()
            .unwrap();
    }
}
