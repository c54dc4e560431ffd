//! The registration of the DSX LP (4) learner ([`bulwark_core::Learner`]) and the
//! hyper-parameters it takes.

use std::ops::ControlFlow;

use bulwark_core::{
    AnyModel, Dataset, Error, FeatureValues, Fitted, HyperParams, Learner, MoreRegular, ParamKind,
    ParamSpec, ProgressFn, Tunable,
};
use bulwark_lp::IterationInfo;

use crate::{DeletionError, DsxIpmSettings, DsxLpParams, LpBackend, NormalEquations, Screening};

/// DSX LP (4), solved by the structured interior-point method (with the fallbacks its report
/// names).
#[derive(Debug, Clone, Copy)]
pub struct LpLearner;

impl Learner for LpLearner {
    fn name(&self) -> &'static str {
        "lp"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[
            Tunable {
                name: "C",
                grid: &["0.01", "0.1", "1", "10"],
                more_regular: MoreRegular::Smaller,
            },
            Tunable {
                name: "budget",
                grid: &["0", "1", "2"],
                more_regular: MoreRegular::Larger,
            },
            Tunable {
                name: "values",
                grid: &["uniform"],
                more_regular: MoreRegular::First,
            },
        ];
        T
    }
    fn title(&self) -> &'static str {
        "LP"
    }
    fn about(&self) -> &'static str {
        "the DSX robust LP (4), structured interior-point solver"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            ParamSpec {
                name: "C",
                kind: ParamKind::Float,
                default: Some("1"),
                help: "box radius C > 0 (|w_j| <= C, |b| <= C)",
            },
            ParamSpec {
                name: "budget",
                kind: ParamKind::Float,
                default: Some("1"),
                help: "deletion budget N (0 <= N < total feature value)",
            },
            ParamSpec {
                name: "values",
                kind: ParamKind::FeatureValues,
                default: Some("uniform"),
                help: "feature values: uniform, mi (mutual information on the training data) or a file",
            },
            ParamSpec {
                name: "backend",
                kind: ParamKind::Text,
                default: Some("structured"),
                help: "LP backend: structured, engine-structured, generic-sparse or dense",
            },
            ParamSpec {
                name: "chunks",
                kind: ParamKind::Count,
                default: None,
                help: "ICML 2008 bagging: solve on K seeded chunks and average (default: one LP)",
            },
            ParamSpec {
                name: "seed",
                kind: ParamKind::Count,
                default: Some("0"),
                help: "seed of the chunking",
            },
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: Some("1e-8"),
                help: "relative residual and gap tolerance of the interior-point method",
            },
            ParamSpec {
                name: "max_iter",
                kind: ParamKind::Count,
                default: Some("400"),
                help: "interior-point iteration limit (of every solver in the fallback chain)",
            },
            ParamSpec {
                name: "ipm_max_iter",
                kind: ParamKind::Count,
                default: None,
                help: "iteration limit of the structured IPM alone, before the fallback solvers take over (default: max_iter)",
            },
            ParamSpec {
                name: "accept_within",
                kind: ParamKind::Float,
                default: Some("10"),
                help: "when the structured IPM stops short (stalled, or at its limit) with an iterate certified within this many times the tolerance, that iterate answers, reported not converged (0: the fallback solvers instead)",
            },
            ParamSpec {
                name: "screen_from",
                kind: ParamKind::Count,
                default: Some("10000"),
                help: "solve LP (4) on working sets of examples, certified for every example, for training sets of at least K examples",
            },
            ParamSpec {
                name: "no_screening",
                kind: ParamKind::Switch { value: true },
                default: Some("false"),
                help: "solve LP (4) as one LP at every size (no working sets of examples)",
            },
            ParamSpec {
                name: "screen_sample",
                kind: ParamKind::Float,
                default: None,
                help: "the fraction of each class in the first working set of screening (default 1/16)",
            },
            ParamSpec {
                name: "screen_early_stop",
                kind: ParamKind::Float,
                default: None,
                help: "a screening round ends at its first iterate within this relative gap when that iterate leaves an example outside the working set with a loss; the last round is solved to the tolerance (default 1e-3; 0: every round to the tolerance)",
            },
            ParamSpec {
                name: "normal_equations",
                kind: ParamKind::Text,
                default: Some("auto"),
                help: "how the structured IPM solves its normal equations: auto (the cheapest that fits by a cost model), feature-space (dense n x n), example-space (dense 2m x 2m, for more features than examples) or sparse-ldl",
            },
            ParamSpec {
                name: "time_limit",
                kind: ParamKind::Float,
                default: None,
                help: "wall-clock limit (seconds) of each solver attempt; a fit the cost model predicts to outlast it ends at once with an error saying why (default: none)",
            },
            ParamSpec {
                name: "memory_limit_mib",
                kind: ParamKind::Count,
                default: None,
                help: "most memory (MiB) the structured IPM may hold; a fit that cannot fit ends at once with an error saying what each method would need (default: what the system reports available)",
            },
            ParamSpec {
                name: "fallback_memory_mib",
                kind: ParamKind::Count,
                default: None,
                help: "most memory (MiB) a fallback engine may need to be started, about 1 KiB per stored (example, feature) pair (default: what the system reports available)",
            },
        ];
        P
    }
    fn fit(
        &self,
        data: &Dataset,
        p: &HyperParams,
        progress: Option<ProgressFn<'_>>,
    ) -> bulwark_core::Result<Fitted<AnyModel>> {
        let backend = match p.text("backend")? {
            "structured" => LpBackend::Structured,
            "engine-structured" => LpBackend::EngineStructured,
            "generic-sparse" => LpBackend::GenericSparse,
            "dense" => LpBackend::Dense,
            other => {
                return Err(Error::param(
                    "backend",
                    other,
                    "structured, engine-structured, generic-sparse or dense",
                ));
            }
        };
        let max_iter = u32::try_from(p.count("max_iter")?).map_err(|_| {
            Error::param(
                "max_iter",
                p.count("max_iter").unwrap_or(0),
                "at most 2^32 - 1",
            )
        })?;
        let params =
            DsxLpParams::new()
                .budget(p.float("budget")?)
                .c(p.float("C")?)
                .values(FeatureValues::Given(p.floats("feature_values")?.to_vec()))
                .backend(backend)
                .chunks(p.count_opt("chunks")?.map(|k| k as usize))
                .seed(p.count("seed")?)
                .tolerance(p.float("tolerance")?)
                .max_iter(max_iter)
                .time_limit(p.float_opt("time_limit")?.unwrap_or(f64::INFINITY))
                .fallback_memory(match p.count_opt("fallback_memory_mib")? {
                    None => None,
                    Some(mib) => Some(mib.checked_mul(1 << 20).ok_or_else(|| {
                        Error::param("fallback_memory_mib", mib, "at most 2^44 MiB")
                    })?),
                });
        let screening = if p.flag("no_screening")? {
            for name in ["screen_sample", "screen_early_stop"] {
                if let Some(f) = p.float_opt(name)? {
                    return Err(Error::param(
                        name,
                        f,
                        "only with screening (no_screening is set)",
                    ));
                }
            }
            Screening::off()
        } else {
            let k = p.count("screen_from")?;
            let mut s = Screening::from_examples(
                usize::try_from(k).map_err(|_| Error::param("screen_from", k, "a count"))?,
            );
            if let Some(f) = p.float_opt("screen_sample")? {
                s.sample_fraction = f;
            }
            if let Some(f) = p.float_opt("screen_early_stop")? {
                s.early_stop = f;
            }
            s
        };
        // (a working set's LP also starts from iteration 0: the progress messages below)
        let screened = screening.applies(data.len());
        let params = params.screening(screening);
        let ipm_max_iter = match p.count_opt("ipm_max_iter")? {
            None => None,
            Some(k) => Some(
                u32::try_from(k)
                    .map_err(|_| Error::param("ipm_max_iter", k, "at most 2^32 - 1"))?,
            ),
        };
        let accept = p.float("accept_within")?;
        let method = p.text("normal_equations")?;
        let normal_equations = NormalEquations::from_name(method).ok_or_else(|| {
            Error::param(
                "normal_equations",
                method,
                "auto, feature-space, example-space or sparse-ldl",
            )
        })?;
        let memory_limit = match p.count_opt("memory_limit_mib")? {
            None => None,
            Some(mib) => Some(
                mib.checked_mul(1 << 20)
                    .ok_or_else(|| Error::param("memory_limit_mib", mib, "at most 2^44 MiB"))?,
            ),
        };
        let settings = DsxIpmSettings::builder()
            .max_iter(ipm_max_iter)
            .accept_within(accept)
            .normal_equations(normal_equations)
            .memory_limit(memory_limit)
            .build()
            .map_err(|e| {
                let bulwark_lp::SettingsError::BadFieldValue {
                    field,
                    value,
                    reason,
                } = e;
                let name = if field == "max_iter" {
                    "ipm_max_iter"
                } else {
                    field
                };
                Error::param(name, value, reason)
            })?;
        let params = params.ipm_settings(settings);
        let fitted = match progress {
            None => params.fit_with_progress(data, None),
            Some(cb) => {
                // a solve that starts again from iteration 0 is the next solver of the fallback
                // chain (or, with chunks, the next chunk's LP): the bar says which, so a long
                // fallback is not mistaken for the structured IPM (the reason is reported with
                // the fit)
                let chunked = p.count_opt("chunks")?.is_some();
                let (mut runs, mut last) = (1u32, 0u32);
                let mut adapt = |info: &IterationInfo| -> ControlFlow<()> {
                    if info.iter < last {
                        runs += 1;
                    }
                    last = info.iter;
                    let what = match (chunked, runs) {
                        (true, k) => format!("LP (4), LP {k} of the chunks"),
                        (false, 1) => "LP (4), structured interior point".to_string(),
                        (false, k) if screened => format!(
                            "LP (4), LP {k}: a screening round, the whole LP or a fallback solver (the fit's report says which)"
                        ),
                        (false, k) => format!(
                            "LP (4), fallback solver {} (the structured IPM stopped; why is reported at the end)",
                            k - 1
                        ),
                    };
                    cb(&format!(
                        "{what}: iteration {}, gap {:.1e}, primal res {:.1e}",
                        info.iter, info.gap, info.pres
                    ))
                };
                params.fit_with_progress(data, Some(&mut adapt))
            }
        }
        .map_err(into_core)?;
        Ok(Fitted {
            model: AnyModel::Linear(fitted.model),
            report: fitted.report,
        })
    }
}

/// A deletion error as the registry's error type: input and parameter errors keep their type,
/// solver failures become [`Error::Numerical`] naming the learner.
pub fn into_core(e: DeletionError) -> Error {
    match e {
        DeletionError::Core(e) => e,
        other => Error::Numerical {
            algorithm: "lp".into(),
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use bulwark_core::ParamGuard;

    use super::*;

    /// The registry states its defaults as text; a fit from the registry (`bulwark train`) and
    /// one from `DsxLpParams::new()` must start from the same tolerance and iteration limit.
    #[test]
    fn registry_defaults_are_the_library_defaults() {
        let default = |name: &str| {
            LpLearner
                .params()
                .iter()
                .find(|p| p.name == name)
                .and_then(|p| p.default)
                .unwrap_or_else(|| panic!("{name} has a default"))
        };
        let params = DsxLpParams::default();
        let lib = params.check_ref().unwrap();
        assert_eq!(default("max_iter").parse::<u32>().unwrap(), lib.max_iter);
        assert_eq!(default("tolerance").parse::<f64>().unwrap(), lib.tolerance);
        assert_eq!(
            default("screen_from").parse::<usize>().unwrap(),
            lib.screening.min_examples
        );
        assert_eq!(default("no_screening"), "false");
        assert_eq!(
            default("accept_within").parse::<f64>().unwrap(),
            DsxIpmSettings::default().accept_within
        );
    }
}
