//! The registry of learners: every learner of the workspace, one line each. The CLI and the
//! reproduction harness enumerate learners only through it.
//!
//! A learner implements [`bulwark_core::Learner`] in its own crate (its name, the
//! hyper-parameters it takes with their defaults, and `fit`); registering it is one line in
//! [`LEARNERS`].

use bulwark_core::memory::{bytes_for, per_feature_limit};
use bulwark_core::{
    AnyModel, Dataset, Error, Fitted, HyperParams, Learner, Location, ParamKind, ParamValue,
    ProgressFn, Result,
};

/// Every registered learner, in the order `--help` lists them.
pub static LEARNERS: &[&dyn Learner] = &[
    &bulwark_deletion::LpLearner,
    &bulwark_online::O2bLearner,
    &bulwark_online::SvmLearner,
    &bulwark_online::FdropLearner,
    &bulwark_online::LogregLearner,
    &bulwark_gaussian::GuruLearner,
    &bulwark_gaussian::KenGuruLearner,
    &bulwark_gaussian::MGuruLearner,
    &bulwark_gaussian::AsvcLearner,
    &bulwark_contamination::RolrLearner,
    &bulwark_contamination::AverageLearner,
    &bulwark_contamination::KlsAmuLearner,
    &bulwark_contamination::KlsBoostLearner,
];

/// Every registered learner.
pub fn learners() -> &'static [&'static dyn Learner] {
    LEARNERS
}

/// The names of every registered learner, comma-separated.
pub fn names() -> String {
    LEARNERS
        .iter()
        .map(|l| l.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The learner named `name`; a typed error lists the registered names.
pub fn find(name: &str) -> Result<&'static dyn Learner> {
    LEARNERS
        .iter()
        .copied()
        .find(|l| l.name() == name)
        .ok_or_else(|| Error::param("algo", name, format!("one of {}", names())))
}

/// Checks the parameters `given` to `learner`, fills the defaults it declares and resolves
/// `values` (`uniform`, `mi` on `train`, or a file) into `feature_values`. A parameter the
/// learner does not take is a typed error naming it (never silently ignored).
pub fn resolve(learner: &dyn Learner, given: &HyperParams, train: &Dataset) -> Result<HyperParams> {
    let specs = learner.params();
    for (name, _) in given.iter() {
        let known = specs.iter().any(|s| s.name == name)
            || (name == "feature_values"
                && specs.iter().any(|s| s.kind == ParamKind::FeatureValues));
        if !known {
            let takes: Vec<&str> = specs.iter().map(|s| s.name).collect();
            return Err(Error::param(
                name,
                given.get(name).map_or(String::new(), ToString::to_string),
                format!(
                    "a parameter of `{}` (it takes: {})",
                    learner.name(),
                    takes.join(", ")
                ),
            ));
        }
    }
    let mut out = given.clone();
    for spec in specs {
        if out.get(spec.name).is_none()
            && let Some(d) = spec.default
        {
            out.set(spec.name, HyperParams::parse(spec, d)?);
        }
        if spec.kind == ParamKind::FeatureValues && out.get("feature_values").is_none() {
            let v = crate::values::feature_values(out.text(spec.name)?, train)?;
            out.set("feature_values", ParamValue::Floats(v));
        }
    }
    Ok(out)
}

/// [`resolve`], then `learner.fit`; returns the model, its report and the parameters used.
pub fn train(
    learner: &dyn Learner,
    data: &Dataset,
    given: &HyperParams,
    progress: Option<ProgressFn<'_>>,
) -> Result<Fitted<AnyModel>> {
    train_with_params(learner, data, given, progress).map(|(fitted, _)| fitted)
}

/// Refuses, before anything is allocated, to train `learner` on `data` when the state it keeps
/// per feature ([`Learner::state_per_feature`], plus `extra_per_feature` numbers the caller
/// keeps: a scaler, a model file) would exceed the limit for state sized by the feature count
/// ([`per_feature_limit`]: memory bounded by what the data contain, not by the dimension a
/// LIBSVM index declares). The error names the feature count, where it was declared and the
/// cost.
pub fn check_memory(learner: &dyn Learner, data: &Dataset, extra_per_feature: u64) -> Result<()> {
    let n = data.n_features() as u64;
    let per = learner
        .state_per_feature(data.n_classes())
        .saturating_add(extra_per_feature);
    let limit = per_feature_limit(data.stored_bytes())?;
    let (location, what) = match data.dimension_source() {
        Some(at) => (
            at.clone(),
            format!("{n} features (the largest feature index)"),
        ),
        None => (Location::source(data.name()), format!("{n} features")),
    };
    limit.check(
        bytes_for(n, per.saturating_mul(8)),
        &location,
        &what,
        &format!(
            "`{}`'s per-feature state ({per} numbers per feature)",
            learner.name()
        ),
    )
}

/// [`train`] that also returns the resolved parameters (what a model file records).
pub fn train_with_params(
    learner: &dyn Learner,
    data: &Dataset,
    given: &HyperParams,
    progress: Option<ProgressFn<'_>>,
) -> Result<(Fitted<AnyModel>, HyperParams)> {
    check_memory(learner, data, 0)?;
    let params = resolve(learner, given, data)?;
    let fitted = learner.fit(data, &params, progress)?;
    Ok((fitted, params))
}
