//! The registrations of GURU (`guru`), KEN-GURU (`ken-guru`), M-GURU (`m-guru`) and ASVC (`asvc`) ([`bulwark_core::Learner`]).

use bulwark_core::{
    AnyModel, Communicator, Dataset, Error, Fitted, HyperParams, Learner, MoreRegular, ParamKind,
    ParamSpec, ProgressFn, Result, Tunable,
};

use bulwark_core::Kernel;
use bulwark_core::kernel::{KERNEL_PARAMS, cache_bytes_from_params};

use crate::asvc::AsvcParams;
use crate::hyperparams::{GuruParams, Solver};
use crate::kernel_guru::KenGuruParams;
use crate::loss::{Loss, NoiseNorm};
use crate::multiclass::MGuruParams;

// the parameters GURU and KEN-GURU share
const SIGMA: ParamSpec = ParamSpec {
    name: "sigma",
    kind: ParamKind::Float,
    default: Some("1"),
    help: "noise standard deviation sigma > 0 (trace bound sigma^2)",
};
const LOSS: ParamSpec = ParamSpec {
    name: "loss",
    kind: ParamKind::Text,
    default: Some("gauss"),
    help: "scalar loss in the perspective: gauss (z Phi(z) + phi(z)), log (log2(1 + 2^z)) or huber",
};
const ETA0: ParamSpec = ParamSpec {
    name: "eta0",
    kind: ParamKind::Float,
    default: Some("1"),
    help: "GURU's initial step eta0 > 0",
};
const SEED: ParamSpec = ParamSpec {
    name: "seed",
    kind: ParamKind::Count,
    default: Some("0"),
    help: "seed of the learner's random choices",
};
const MAX_EPOCHS: ParamSpec = ParamSpec {
    name: "max_epochs",
    kind: ParamKind::Count,
    default: Some("1000"),
    help: "GURU's epoch limit (epochs of M steps)",
};

const MAX_ITER: ParamSpec = ParamSpec {
    name: "max_iter",
    kind: ParamKind::Count,
    default: Some("100"),
    help: "the batch solver's Newton-iteration limit",
};
const GAP_TO_BATCH: ParamSpec = ParamSpec {
    name: "gap_to_batch",
    kind: ParamKind::Switch { value: true },
    default: Some("false"),
    help: "sgd: also run the batch solver and report the objective's relative distance to its optimum (details gap_to_batch)",
};

/// The `solver` parameter of KEN-GURU and M-GURU.
fn solver_of(p: &HyperParams) -> Result<Solver> {
    let s = p.text("solver")?;
    Solver::parse(s).ok_or_else(|| Error::param("solver", s, "one of sgd, batch"))
}

/// The `loss` parameter of GURU, KEN-GURU and M-GURU.
fn loss_of(p: &HyperParams) -> Result<Loss> {
    let loss = p.text("loss")?;
    Loss::parse(loss).ok_or_else(|| Error::param("loss", loss, "one of gauss, log, huber"))
}

/// Gaussian-robust classification (Ginodi 2010): GURU's SGD or the certified batch solver.
#[derive(Debug, Clone, Copy)]
pub struct GuruLearner;

impl Learner for GuruLearner {
    fn name(&self) -> &'static str {
        "guru"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "sigma",
            grid: &["0.25", "0.5", "1", "2", "4"],
            more_regular: MoreRegular::Larger,
        }];
        T
    }
    fn title(&self) -> &'static str {
        "GURU"
    }
    fn about(&self) -> &'static str {
        "Ginodi 2010: hinge loss in expectation under worst-case Gaussian noise of power sigma^2 (GURU SGD or certified Newton), no bias unless --bias"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            SIGMA,
            LOSS,
            ParamSpec {
                name: "norm",
                kind: ParamKind::Text,
                default: Some("l2"),
                help: "noise covariance: l2 (trace-bounded) or linf (diagonal; sgd only)",
            },
            ParamSpec {
                name: "solver",
                kind: ParamKind::Text,
                default: Some("batch"),
                help: "sgd (GURU, step eta0/sqrt(t)) or batch (Newton-CG to a certified duality gap)",
            },
            ETA0,
            SEED,
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: None,
                help: "relative duality gap to certify (default: 1e-10 batch, 1e-3 sgd)",
            },
            MAX_EPOCHS,
            ParamSpec {
                name: "max_iter",
                kind: ParamKind::Count,
                default: Some("100"),
                help: "the batch solver's Newton-iteration limit",
            },
            ParamSpec {
                name: "bias",
                kind: ParamKind::Switch { value: true },
                default: Some("false"),
                help: "append a constant feature (its weight, part of ||w||, is the bias)",
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
        let f = bulwark_core::Fit::fit(&guru_params(p)?, data)?;
        Ok(Fitted {
            model: AnyModel::Linear(f.model),
            report: f.report,
        })
    }
    /// The batch solver splits the examples over the ranks (`solver=sgd` refuses more than one).
    fn distributed(&self) -> bool {
        true
    }
    fn fit_distributed(
        &self,
        local: &Dataset,
        p: &HyperParams,
        comm: &dyn Communicator,
    ) -> Result<Fitted<AnyModel>> {
        let (fit, report) = guru_params(p)?.fit_certified_over(local, None, comm)?;
        Ok(Fitted {
            model: AnyModel::Linear(fit.model),
            report,
        })
    }
}

/// GURU's parameters from the registry's.
fn guru_params(p: &HyperParams) -> Result<GuruParams> {
    let text = |name: &str, s: &str, allowed: &str| Error::param(name, s, allowed.to_string());
    let loss = loss_of(p)?;
    let norm = p.text("norm")?;
    let norm = NoiseNorm::parse(norm).ok_or_else(|| text("norm", norm, "one of l2, linf"))?;
    let solver = p.text("solver")?;
    let solver =
        Solver::parse(solver).ok_or_else(|| text("solver", solver, "one of sgd, batch"))?;
    let mut params = GuruParams::new()
        .sigma(p.float("sigma")?)
        .loss(loss)
        .norm(norm)
        .solver(solver)
        .eta0(p.float("eta0")?)
        .seed(p.count("seed")?)
        .max_epochs(p.count("max_epochs")? as usize)
        .max_iter(p.count("max_iter")? as usize)
        .bias(p.flag("bias")?);
    if let Some(t) = p.float_opt("tolerance")? {
        params = params.tolerance(t);
    }
    Ok(params)
}

/// KEN-GURU (Ginodi Ch. 4): GURU's SGD with a kernel.
#[derive(Debug, Clone, Copy)]
pub struct KenGuruLearner;

impl Learner for KenGuruLearner {
    fn name(&self) -> &'static str {
        "ken-guru"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "sigma",
            grid: &["0.25", "0.5", "1", "2", "4"],
            more_regular: MoreRegular::Larger,
        }];
        T
    }
    fn title(&self) -> &'static str {
        "KEN-GURU"
    }
    fn about(&self) -> &'static str {
        "Ginodi 2010 Ch. 4: GURU with a kernel (linear, poly, rbf; SGD or certified Newton), no bias; with the linear kernel the SGD gives the model of --algo guru --solver sgd"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            SIGMA,
            LOSS,
            ParamSpec {
                name: "solver",
                kind: ParamKind::Text,
                default: Some("sgd"),
                help: "sgd (KEN-GURU, Algorithm 2) or batch (Newton-CG on a pivoted Cholesky factor of the Gram matrix, certified on the exact one)",
            },
            ETA0,
            SEED,
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: None,
                help: "relative duality gap to certify (default: 1e-10 batch, 1e-3 sgd)",
            },
            MAX_EPOCHS,
            MAX_ITER,
            GAP_TO_BATCH,
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
        let loss = loss_of(p)?;
        let mut params = KenGuruParams::new()
            .kernel(Kernel::from_params(p)?)
            .sigma(p.float("sigma")?)
            .loss(loss)
            .solver(solver_of(p)?)
            .eta0(p.float("eta0")?)
            .seed(p.count("seed")?)
            .max_epochs(p.count("max_epochs")? as usize)
            .max_iter(p.count("max_iter")? as usize)
            .gap_to_batch(p.flag("gap_to_batch")?)
            .cache_bytes(cache_bytes_from_params(p)?);
        if let Some(t) = p.float_opt("tolerance")? {
            params = params.tolerance(t);
        }
        let f = bulwark_core::Fit::fit(&params, data)?;
        Ok(Fitted {
            model: AnyModel::Kernel(f.model),
            report: f.report,
        })
    }
}

/// M-GURU and M-GURU-S² (Ginodi Ch. 5): multiclass Gaussian-robust classification.
#[derive(Debug, Clone, Copy)]
pub struct MGuruLearner;

impl Learner for MGuruLearner {
    fn name(&self) -> &'static str {
        "m-guru"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "sigma",
            grid: &["0.25", "0.5", "1", "2", "4"],
            more_regular: MoreRegular::Larger,
        }];
        T
    }
    fn title(&self) -> &'static str {
        "M-GURU"
    }
    fn about(&self) -> &'static str {
        "Ginodi 2010 Ch. 5: multiclass GURU, sum of robust hinges under isotropic noise (Algorithm 3; --s2: Algorithm 4; or certified Newton), no bias unless --bias"
    }
    fn multiclass(&self) -> bool {
        true
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            SIGMA,
            LOSS,
            ETA0,
            SEED,
            ParamSpec {
                name: "solver",
                kind: ParamKind::Text,
                default: Some("sgd"),
                help: "sgd (M-GURU, Algorithm 3; --s2: Algorithm 4) or batch (Newton-CG to a certified duality gap)",
            },
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: None,
                help: "relative duality gap to certify (default: 1e-10 batch, 1e-4 sgd); sgd also stops, uncertified, when its best objective improved by at most this over the second half of the run",
            },
            MAX_EPOCHS,
            MAX_ITER,
            GAP_TO_BATCH,
            ParamSpec {
                name: "s2",
                kind: ParamKind::Switch { value: true },
                default: Some("false"),
                help: "M-GURU-S2 (Algorithm 4): one random class updated per draw",
            },
            ParamSpec {
                name: "bias",
                kind: ParamKind::Switch { value: true },
                default: Some("false"),
                help: "append a constant feature (its weight, part of ||w||, is the bias)",
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
        let loss = loss_of(p)?;
        let mut params = MGuruParams::new()
            .sigma(p.float("sigma")?)
            .loss(loss)
            .solver(solver_of(p)?)
            .eta0(p.float("eta0")?)
            .seed(p.count("seed")?)
            .max_epochs(p.count("max_epochs")? as usize)
            .max_iter(p.count("max_iter")? as usize)
            .gap_to_batch(p.flag("gap_to_batch")?)
            .s2(p.flag("s2")?)
            .bias(p.flag("bias")?);
        if let Some(t) = p.float_opt("tolerance")? {
            params = params.tolerance(t);
        }
        let f = bulwark_core::Fit::fit(&params, data)?;
        Ok(Fitted {
            model: AnyModel::MulticlassLinear(f.model),
            report: f.report,
        })
    }
}

/// ASVC (Ginodi Appendix A): the SVM under worst-case displacement in a ball of radius delta.
#[derive(Debug, Clone, Copy)]
pub struct AsvcLearner;

impl Learner for AsvcLearner {
    fn name(&self) -> &'static str {
        "asvc"
    }
    fn tunable(&self) -> &'static [Tunable] {
        const T: &[Tunable] = &[Tunable {
            name: "C",
            grid: &["0.1", "1", "10"],
            more_regular: MoreRegular::Smaller,
        }];
        T
    }
    fn title(&self) -> &'static str {
        "ASVC"
    }
    fn about(&self) -> &'static str {
        "Ginodi 2010 App. A: SVM with the ball loss [1 - y(w.x + b) + delta ||w||]+ (damped alternating rounds to a certified gap)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        const P: &[ParamSpec] = &[
            ParamSpec {
                name: "delta",
                kind: ParamKind::Float,
                default: Some("0.1"),
                help: "radius delta >= 0 of the ball each training point may move in",
            },
            ParamSpec {
                name: "C",
                kind: ParamKind::Float,
                default: Some("1"),
                help: "loss weight C > 0",
            },
            ParamSpec {
                name: "tolerance",
                kind: ParamKind::Float,
                default: Some("1e-4"),
                help: "relative gap between the best ball objective and the rounds' lower bound",
            },
            ParamSpec {
                name: "max_rounds",
                kind: ParamKind::Count,
                default: Some("50"),
                help: "limit on the rounds (one SVM each)",
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
        let params = AsvcParams::new()
            .delta(p.float("delta")?)
            .c(p.float("C")?)
            .tolerance(p.float("tolerance")?)
            .max_rounds(p.count("max_rounds")? as usize);
        let f = bulwark_core::Fit::fit(&params, data)?;
        Ok(Fitted {
            model: AnyModel::Linear(f.model),
            report: f.report,
        })
    }
}
