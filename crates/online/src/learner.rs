//! The registrations of this crate's learners ([`bulwark_core::Learner`]): O2B, the linear SVM,
//! FDROP and logistic regression, with the hyper-parameters each takes.

use bulwark_core::{
    AnyModel, Dataset, FeatureValues, Fit, Fitted, HyperParams, Learner, ParamKind, ParamSpec,
    ProgressFn, Result,
};

use crate::{FdropParams, LogregParams, O2bParams, SvmParams};

const C: ParamSpec = ParamSpec {
    name: "C",
    kind: ParamKind::Float,
    default: Some("1"),
    help: "box radius / loss weight C > 0",
};
const BUDGET: ParamSpec = ParamSpec {
    name: "budget",
    kind: ParamKind::Float,
    default: Some("1"),
    help: "deletion budget N (0 <= N < total feature value)",
};
const VALUES: ParamSpec = ParamSpec {
    name: "values",
    kind: ParamKind::FeatureValues,
    default: Some("uniform"),
    help: "feature values: uniform, mi (mutual information on the training data) or a file",
};
const SEED: ParamSpec = ParamSpec {
    name: "seed",
    kind: ParamKind::Count,
    default: Some("0"),
    help: "seed of the learner's random choices",
};
const SVM_TOLERANCE: ParamSpec = ParamSpec {
    name: "tolerance",
    kind: ParamKind::Float,
    default: Some("1e-6"),
    help: "relative duality gap to certify",
};
const MAX_PASSES: ParamSpec = ParamSpec {
    name: "max_passes",
    kind: ParamKind::Count,
    default: Some("200000"),
    help: "pass limit of the dual coordinate descent",
};

/// The settings the SVM and FDROP share (their dual coordinate descent), from `p`.
macro_rules! dual_cd_settings {
    ($params:expr, $p:expr) => {
        $params
            .c($p.float("C")?)
            .tolerance($p.float("tolerance")?)
            .max_passes($p.count("max_passes")? as usize)
            .seed($p.count("seed")?)
    };
}

/// The cube-projected Perceptron with online-to-batch averaging (DSX §3).
#[derive(Debug, Clone, Copy)]
pub struct O2bLearner;

impl Learner for O2bLearner {
    fn name(&self) -> &'static str {
        "o2b"
    }
    fn title(&self) -> &'static str {
        "O2B"
    }
    fn about(&self) -> &'static str {
        "DSX §3: cube-projected Perceptron on the worst-case-deletion hinge, online-to-batch"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            C,
            BUDGET,
            VALUES,
            ParamSpec {
                name: "epochs",
                kind: ParamKind::Count,
                default: Some("1"),
                help: "passes over the training data (more than one is beyond DSX's theory)",
            },
            SEED,
        ];
        P
    }
    fn fit(
        &self,
        data: &Dataset,
        p: &HyperParams,
        _: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>> {
        let epochs = p.count("epochs")? as usize;
        if epochs == 0 {
            return Err(bulwark_core::Error::param("epochs", 0, "at least 1"));
        }
        let f = O2bParams::new()
            .c(p.float("C")?)
            .budget(p.float("budget")?)
            .values(FeatureValues::Given(p.floats("feature_values")?.to_vec()))
            .epochs(epochs)
            .shuffle_seed(Some(p.count("seed")?))
            .fit(data)?;
        Ok(any(f))
    }
}

/// The linear L2 SVM with an unregularised bias (the DSX baseline).
#[derive(Debug, Clone, Copy)]
pub struct SvmLearner;

impl Learner for SvmLearner {
    fn name(&self) -> &'static str {
        "svm"
    }
    fn title(&self) -> &'static str {
        "SVM"
    }
    fn about(&self) -> &'static str {
        "linear SVM (L2, unregularised bias), the DSX baseline"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[C, SVM_TOLERANCE, MAX_PASSES, SEED];
        P
    }
    fn fit(
        &self,
        data: &Dataset,
        p: &HyperParams,
        _: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>> {
        let f = dual_cd_settings!(SvmParams::new(), p).fit(data)?;
        Ok(any(f))
    }
}

/// FDROP / TGRS (Globerson & Roweis 2006).
#[derive(Debug, Clone, Copy)]
pub struct FdropLearner;

impl Learner for FdropLearner {
    fn name(&self) -> &'static str {
        "fdrop"
    }
    fn title(&self) -> &'static str {
        "FDROP"
    }
    fn about(&self) -> &'static str {
        "FDROP / TGRS (Globerson & Roweis 2006): SVM under deletion of the k most harmful features"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            C,
            ParamSpec {
                name: "k",
                kind: ParamKind::Count,
                default: None,
                help: "features deleted per example (default: the integer part of --budget)",
            },
            BUDGET,
            SVM_TOLERANCE,
            MAX_PASSES,
            SEED,
        ];
        P
    }
    fn uses_budget(&self) -> bool {
        true
    }
    fn fit(
        &self,
        data: &Dataset,
        p: &HyperParams,
        _: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>> {
        let k = match p.count_opt("k")? {
            Some(k) => k as usize,
            None => {
                let n = p.float("budget")?;
                if !(n.is_finite() && n >= 0.0) {
                    return Err(bulwark_core::Error::param(
                        "budget",
                        n,
                        "a finite number >= 0",
                    ));
                }
                n.floor() as usize
            }
        };
        let f = dual_cd_settings!(FdropParams::new().k(k), p).fit(data)?;
        Ok(any(f))
    }
}

/// Logistic regression (Newton–CG, optional L2, unpenalised intercept).
#[derive(Debug, Clone, Copy)]
pub struct LogregLearner;

impl Learner for LogregLearner {
    fn name(&self) -> &'static str {
        "logreg"
    }
    fn title(&self) -> &'static str {
        "LR"
    }
    fn about(&self) -> &'static str {
        "logistic regression (Newton, optional L2, unpenalised intercept)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            ParamSpec {
                name: "l2",
                kind: ParamKind::Float,
                default: Some("0"),
                help: "L2 penalty λ >= 0 on the weights",
            },
            ParamSpec {
                name: "intercept",
                kind: ParamKind::Switch { value: false },
                default: Some("true"),
                help: "no intercept: b = 0 (by default an unpenalised intercept is fitted)",
            },
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: Some("1e-8"),
                help: "relative gradient-norm tolerance",
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
        let f = LogregParams::new()
            .l2(p.float("l2")?)
            .intercept(p.flag("intercept")?)
            .tolerance(p.float("tolerance")?)
            .fit(data)?;
        Ok(any(f))
    }
}

fn any(f: Fitted<bulwark_core::LinearModel>) -> Fitted<AnyModel> {
    Fitted {
        model: AnyModel::Linear(f.model),
        report: f.report,
    }
}
