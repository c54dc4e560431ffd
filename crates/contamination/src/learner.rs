//! The registrations of RoLR (`rolr`) and averaging (`average`) ([`bulwark_core::Learner`]).

use bulwark_core::{
    AnyModel, Dataset, Error, Fit, Fitted, HyperParams, Learner, ParamKind, ParamSpec, ProgressFn,
    Result,
};

use crate::average::AveragingParams;
use crate::rolr::RolrParams;
use crate::threshold::NormThreshold;

/// RoLR (Feng et al. 2014) as a registered learner.
#[derive(Debug, Clone, Copy)]
pub struct RolrLearner;

/// Parses `--threshold`: `paper`, `mad`, `none` or a positive number.
fn threshold_of(p: &HyperParams) -> Result<NormThreshold> {
    let t = p.text("threshold")?;
    Ok(match t {
        "paper" => NormThreshold::Paper {
            sigma_x: p.float_opt("sigma_x")?,
        },
        "mad" => NormThreshold::Mad {
            k: p.float("mad_k")?,
        },
        "none" => NormThreshold::None,
        other => match other.parse::<f64>() {
            Ok(v) => NormThreshold::Fixed(v),
            Err(_) => {
                return Err(Error::param(
                    "threshold",
                    other,
                    "one of paper, mad, none, or a number > 0",
                ));
            }
        },
    })
}

impl Learner for RolrLearner {
    fn name(&self) -> &'static str {
        "rolr"
    }
    fn title(&self) -> &'static str {
        "RoLR"
    }
    fn about(&self) -> &'static str {
        "Feng et al. 2014: remove samples with ||x|| >= T, then maximise the sum of the n smallest y<beta, x> over the unit ball (n = samples - outliers); certified, breakdown reported"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            ParamSpec {
                name: "outliers",
                kind: ParamKind::Count,
                default: Some("0"),
                help: "the outlier bound n1 (fewer than the training samples)",
            },
            ParamSpec {
                name: "threshold",
                kind: ParamKind::Text,
                default: Some("paper"),
                help: "preprocessing: paper (4 sigma_x sqrt(log p + log n)), mad (median + k MAD of the norms), none, or a number",
            },
            ParamSpec {
                name: "sigma_x",
                kind: ParamKind::Float,
                default: None,
                help: "the covariates' scale in the paper's threshold (default: the median over features of 1.4826 MAD)",
            },
            ParamSpec {
                name: "mad_k",
                kind: ParamKind::Float,
                default: Some("3"),
                help: "robust standard deviations above the median norm for --threshold mad",
            },
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: Some("1e-10"),
                help: "certified relative gap between the upper bound and the objective",
            },
            ParamSpec {
                name: "max_iter",
                kind: ParamKind::Count,
                default: Some("20000"),
                help: "the solver's iteration limit",
            },
        ];
        P
    }
    fn fit(
        &self,
        data: &Dataset,
        p: &HyperParams,
        _: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>> {
        let params = RolrParams::new()
            .outliers(p.count("outliers")? as usize)
            .threshold(threshold_of(p)?)
            .tolerance(p.float("tolerance")?)
            .max_iter(p.count("max_iter")? as usize);
        let f = params.fit(data)?;
        Ok(Fitted {
            model: AnyModel::Linear(f.model),
            report: f.report,
        })
    }
}

/// Averaging (Klivans, Long & Servedio 2009) as a registered learner.
#[derive(Debug, Clone, Copy)]
pub struct AverageLearner;

impl Learner for AverageLearner {
    fn name(&self) -> &'static str {
        "average"
    }
    fn title(&self) -> &'static str {
        "averaging"
    }
    fn about(&self) -> &'static str {
        "Klivans-Long-Servedio 2009: sign(v.x) with v the (weighted) average of the label-signed examples y x; no bias, v not normalised"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fit(
        &self,
        data: &Dataset,
        _: &HyperParams,
        _: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>> {
        let f = AveragingParams::new().fit(data)?;
        Ok(Fitted {
            model: AnyModel::Linear(f.model),
            report: f.report,
        })
    }
}
