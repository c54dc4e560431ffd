//! The registrations of RoLR (`rolr`), averaging (`average`), A_mu (`kls-amu`) and SmoothBoost
//! (`kls-boost`) ([`bulwark_core::Learner`]).

use bulwark_core::{
    AnyModel, Dataset, Error, Fit, Fitted, HyperParams, Learner, MoreRegular, ParamKind, ParamSpec,
    ProgressFn, Result, Tunable,
};

use crate::amu::AmuParams;
use crate::average::AveragingParams;
use crate::boost::{OutputScale, SmoothBoostParams, WeakLearner};
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

/// A_mu (Klivans, Long & Servedio 2009, Theorem 1) as a registered learner.
#[derive(Debug, Clone, Copy)]
pub struct KlsAmuLearner;

impl Learner for KlsAmuLearner {
    fn name(&self) -> &'static str {
        "kls-amu"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "amu_constant",
            grid: &["0.5", "2", "10", "50", "250"],
            more_regular: MoreRegular::Larger,
        }];
        T
    }
    fn title(&self) -> &'static str {
        "A_mu"
    }
    fn about(&self) -> &'static str {
        "Klivans-Long-Servedio 2009, Thm 1: drop ||x|| > 1, remove points along the top eigenvector of sum x x^T while lambda >= c m ln m / n ((w.x)^2 >= c ln m / n), then average; no bias"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            ParamSpec {
                name: "amu_constant",
                kind: ParamKind::Float,
                default: Some("10"),
                help: "c in both thresholds c m ln m / n and c ln m / n (the paper's 10 removes nothing unless n > 10 ln m)",
            },
            ParamSpec {
                name: "no_ball_filter",
                kind: ParamKind::Switch { value: true },
                default: Some("false"),
                help: "keep points with ||x|| > 1 (the proof assumes they are dropped)",
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
        let f = AmuParams::new()
            .constant(p.float("amu_constant")?)
            .unit_ball(!p.flag("no_ball_filter")?)
            .fit(data)?;
        Ok(Fitted {
            model: AnyModel::Linear(f.model),
            report: f.report,
        })
    }
}

/// SmoothBoost over averaging (Klivans, Long & Servedio 2009, Theorems 2 and 3) as a
/// registered learner.
#[derive(Debug, Clone, Copy)]
pub struct KlsBoostLearner;

impl Learner for KlsBoostLearner {
    fn name(&self) -> &'static str {
        "kls-boost"
    }
    fn title(&self) -> &'static str {
        "A_mlc (SmoothBoost)"
    }
    fn about(&self) -> &'static str {
        "Klivans-Long-Servedio 2009, Thms 2-3: SmoothBoost (Servedio 2003) over outlier removal + averaging (A_mlc) or plain averaging (label noise); an ensemble model"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            ParamSpec {
                name: "weak",
                kind: ParamKind::Text,
                default: Some("filtered"),
                help: "weak learner: filtered (A_mlcw: norm filter, variance test, averaging; Thm 2) or average (Thm 3)",
            },
            ParamSpec {
                name: "kappa",
                kind: ParamKind::Float,
                default: Some("0.1"),
                help: "kappa = epsilon in (0, 1): stop when the weight mass falls below it; distributions are 1/kappa-smooth",
            },
            ParamSpec {
                name: "gamma",
                kind: ParamKind::Float,
                default: Some("0.1"),
                help: "advantage required of each weak hypothesis, in (0, 1/2); rounds < 2/(kappa gamma^2 sqrt(1-gamma))",
            },
            ParamSpec {
                name: "c0",
                kind: ParamKind::Float,
                default: Some("1"),
                help: "the weak learner's variance constant: remove along w while sum D (w.x)^2 > c0 ln(n/kappa) (the paper leaves it unspecified)",
            },
            ParamSpec {
                name: "output_scale",
                kind: ParamKind::Text,
                default: Some("0.9"),
                help: "Z in h = clip(v.x / Z): a quantile in (0, 1] of |v.x| over the sample, or paper (3 n ln m: impractically many rounds)",
            },
            ParamSpec {
                name: "max_rounds",
                kind: ParamKind::Count,
                default: None,
                help: "at most this many rounds (default: Servedio's bound)",
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
        let weak = match p.text("weak")? {
            "filtered" => WeakLearner::OutlierRemoval { c0: p.float("c0")? },
            "average" => WeakLearner::Average,
            other => return Err(Error::param("weak", other, "one of filtered, average")),
        };
        let scale = match p.text("output_scale")? {
            "paper" => OutputScale::Paper,
            other => match other.parse::<f64>() {
                Ok(q) => OutputScale::Quantile(q),
                Err(_) => {
                    return Err(Error::param(
                        "output_scale",
                        other,
                        "paper, or a quantile in (0, 1]",
                    ));
                }
            },
        };
        let mut params = SmoothBoostParams::new()
            .weak(weak)
            .kappa(p.float("kappa")?)
            .gamma(p.float("gamma")?)
            .scale(scale);
        if let Some(r) = p.count_opt("max_rounds")? {
            params = params.max_rounds(r as usize);
        }
        let f = params.fit(data)?;
        Ok(Fitted {
            model: AnyModel::Ensemble(f.model),
            report: f.report,
        })
    }
}
