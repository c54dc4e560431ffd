//! The registrations of this crate's learners ([`bulwark_core::Learner`]): O2B, the linear SVM,
//! FDROP and logistic regression, with the hyper-parameters each takes.

use bulwark_core::kernel::{KERNEL_PARAMS, cache_bytes_from_params};
use bulwark_core::{
    AnyModel, Communicator, Dataset, Error, FeatureValues, Fit, Fitted, HyperParams, Kernel,
    Learner, MoreRegular, ParamKind, ParamSpec, ProgressFn, Result, Tunable,
};

use crate::{
    CrammerSingerParams, FdropParams, FdropSolver, KernelSvmParams, LogregParams, O2bParams,
    SvmParams,
};

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

const SVM_TOLERANCE_BY_KERNEL: ParamSpec = ParamSpec {
    name: "tolerance",
    kind: ParamKind::Float,
    default: None,
    help: "linear: relative duality gap to certify (default 1e-6); rbf/poly: SMO's maximal KKT violation (LIBSVM's eps, default 1e-3)",
};

const SVM_MAX_PASSES: ParamSpec = ParamSpec {
    name: "max_passes",
    kind: ParamKind::Count,
    default: None,
    help: "pass limit of the dual coordinate descent (linear kernel; default 200000)",
};
const SVM_SEED: ParamSpec = ParamSpec {
    name: "seed",
    kind: ParamKind::Count,
    default: None,
    help: "seed of the coordinate order (linear kernel; default 0; SMO is deterministic)",
};

/// The settings the SVM and FDROP share (their dual coordinate descent), from `p`.
macro_rules! dual_cd_settings {
    ($params:expr, $p:expr) => {
        $params
            .c($p.float("C")?)
            .tolerance($p.float_opt("tolerance")?.unwrap_or(1e-6))
            .max_passes($p.count_opt("max_passes")?.unwrap_or(200_000) as usize)
            .seed($p.count_opt("seed")?.unwrap_or(0))
    };
}

/// The cube-projected Perceptron with online-to-batch averaging (DSX §3).
#[derive(Debug, Clone, Copy)]
pub struct O2bLearner;

impl Learner for O2bLearner {
    fn name(&self) -> &'static str {
        "o2b"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[
            Tunable {
                name: "C",
                grid: &["0.1", "1", "10"],
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

/// The L2 SVM with an unregularised bias (the DSX baseline): linear by dual coordinate descent,
/// or with a polynomial or RBF kernel by SMO.
#[derive(Debug, Clone, Copy)]
pub struct SvmLearner;

impl Learner for SvmLearner {
    fn name(&self) -> &'static str {
        "svm"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "C",
            grid: &["0.01", "0.1", "1", "10", "100"],
            more_regular: MoreRegular::Smaller,
        }];
        T
    }
    fn title(&self) -> &'static str {
        "SVM"
    }
    fn about(&self) -> &'static str {
        "C-SVM with an unregularised bias: linear (dual CD, the DSX baseline) or --kernel poly|rbf (SMO, LIBSVM's method); on more than two classes the Crammer-Singer multiclass SVM (linear, no bias)"
    }
    fn multiclass(&self) -> bool {
        true
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            C,
            SVM_TOLERANCE_BY_KERNEL,
            SVM_MAX_PASSES,
            SVM_SEED,
            KERNEL_PARAMS[0],
            KERNEL_PARAMS[1],
            KERNEL_PARAMS[2],
            KERNEL_PARAMS[3],
            KERNEL_PARAMS[4],
        ];
        P
    }
    fn fit(
        &self,
        data: &Dataset,
        p: &HyperParams,
        _: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>> {
        let kernel = Kernel::from_params(p)?;
        if data.n_classes() > 2 {
            if kernel != Kernel::Linear {
                return Err(Error::param(
                    "kernel",
                    p.text("kernel")?,
                    "linear: the multiclass SVM (Crammer-Singer) is linear here",
                ));
            }
            let f = CrammerSingerParams::new()
                .c(p.float("C")?)
                .tolerance(p.float_opt("tolerance")?.unwrap_or(1e-6))
                .max_passes(p.count_opt("max_passes")?.unwrap_or(10_000) as usize)
                .seed(p.count_opt("seed")?.unwrap_or(0))
                .fit(data)?;
            return Ok(Fitted {
                model: AnyModel::MulticlassLinear(f.model),
                report: f.report,
            });
        }
        match kernel {
            Kernel::Linear => {
                if let Some(v) = p.get("cache_size") {
                    return Err(Error::param(
                        "cache_size",
                        v,
                        "no value: the linear SVM keeps no Gram rows",
                    ));
                }
                let f = dual_cd_settings!(SvmParams::new(), p).fit(data)?;
                Ok(any(f))
            }
            kernel => {
                for (name, why) in [
                    (
                        "seed",
                        "SMO is deterministic (the seed orders the linear solver's coordinates)",
                    ),
                    (
                        "max_passes",
                        "SMO counts iterations, not passes (the linear solver's limit)",
                    ),
                ] {
                    if let Some(v) = p.get(name) {
                        return Err(Error::param(name, v, format!("no value: {why}")));
                    }
                }
                let f = KernelSvmParams::new()
                    .kernel(kernel)
                    .c(p.float("C")?)
                    .tolerance(p.float_opt("tolerance")?.unwrap_or(1e-3))
                    .cache_bytes(cache_bytes_from_params(p)?)
                    .fit(data)?;
                Ok(Fitted {
                    model: AnyModel::Kernel(f.model),
                    report: f.report,
                })
            }
        }
    }
}

/// FDROP / TGRS (Globerson & Roweis 2006).
#[derive(Debug, Clone, Copy)]
pub struct FdropLearner;

impl Learner for FdropLearner {
    fn name(&self) -> &'static str {
        "fdrop"
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
        ];
        T
    }
    fn title(&self) -> &'static str {
        "FDROP"
    }
    fn about(&self) -> &'static str {
        "FDROP / TGRS (Globerson & Roweis 2006): SVM under the worst deletion of features of total value at most N (with unit values, the N most harmful)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            C,
            ParamSpec {
                name: "k",
                kind: ParamKind::Count,
                default: None,
                help: "the k form: k features of unit value deleted per example (default: --budget in units of --values)",
            },
            BUDGET,
            VALUES,
            SVM_TOLERANCE,
            MAX_PASSES,
            SEED,
            ParamSpec {
                name: "solver",
                kind: ParamKind::Text,
                default: Some("auto"),
                help: "auto (the interior-point method for 0 < k < n, else dual-cd), dual-cd or interior-point",
            },
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
        // feature values resolved by the registry (`values`), uniform when called without them
        let values = match p.get("feature_values") {
            Some(_) => FeatureValues::Given(p.floats("feature_values")?.to_vec()),
            None => FeatureValues::Uniform,
        };
        let problem = match p.count_opt("k")? {
            Some(k) => {
                if let FeatureValues::Given(v) = &values
                    && v.iter().any(|&x| x != 1.0)
                {
                    return Err(bulwark_core::Error::param(
                        "k",
                        k,
                        "the k form has unit feature values: with other values give the budget N instead",
                    ));
                }
                FdropParams::new().k(k as usize)
            }
            None => FdropParams::new().budget(p.float("budget")?).values(values),
        };
        let solver = match p.get("solver") {
            None => FdropSolver::Auto,
            Some(_) => match p.text("solver")? {
                "auto" => FdropSolver::Auto,
                "dual-cd" => FdropSolver::DualCd,
                "interior-point" => FdropSolver::InteriorPoint,
                other => {
                    return Err(bulwark_core::Error::param(
                        "solver",
                        other,
                        "one of auto, dual-cd, interior-point",
                    ));
                }
            },
        };
        let f = dual_cd_settings!(problem.solver(solver), p).fit(data)?;
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
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "l2",
            grid: &["0", "0.0001", "0.001", "0.01", "0.1"],
            more_regular: MoreRegular::Larger,
        }];
        T
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
        let f = logreg_params(p)?.fit(data)?;
        Ok(any(f))
    }
    fn distributed(&self) -> bool {
        true
    }
    fn fit_distributed(
        &self,
        local: &Dataset,
        p: &HyperParams,
        comm: &dyn Communicator,
    ) -> Result<Fitted<AnyModel>> {
        Ok(any(logreg_params(p)?.fit_over(local, comm)?))
    }
}

fn logreg_params(p: &HyperParams) -> Result<LogregParams> {
    Ok(LogregParams::new()
        .l2(p.float("l2")?)
        .intercept(p.flag("intercept")?)
        .tolerance(p.float("tolerance")?))
}

fn any(f: Fitted<bulwark_core::LinearModel>) -> Fitted<AnyModel> {
    Fitted {
        model: AnyModel::Linear(f.model),
        report: f.report,
    }
}
