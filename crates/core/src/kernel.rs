//! Kernels and binary kernel models `x ↦ sign(Σ_i α_i K(s_i, x) + b)`.
//!
//! The kernel definitions follow SVM-light / LIBSVM: linear `xᵀx'`, polynomial
//! `(γ xᵀx' + c₀)^d`, RBF `exp(−γ ‖x − x'‖²)`.

use serde::{Deserialize, Serialize};

use crate::dataset::Sign;
use crate::error::{Error, Result};
use crate::learner::{HyperParams, ParamKind, ParamSpec};
use crate::matrix::{DenseMatrix, Features, RowView};
use crate::model::binary_mistake;
use crate::traits::{Classifier, DecisionFunction};

/// A positive semi-definite kernel on feature vectors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kernel {
    /// `K(x, x') = xᵀx'`.
    Linear,
    /// `K(x, x') = (γ xᵀx' + c₀)^d`.
    Polynomial {
        /// Degree `d ≥ 1`.
        degree: u32,
        /// Scale `γ > 0`.
        gamma: f64,
        /// Offset `c₀ ≥ 0`.
        coef0: f64,
    },
    /// `K(x, x') = exp(−γ ‖x − x'‖²)`.
    Rbf {
        /// Width `γ > 0`.
        gamma: f64,
    },
}

impl Kernel {
    /// Checks the parameters; the error names the offending one.
    pub fn validate(&self) -> Result<()> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::param(name, v, "a finite number > 0"))
            }
        };
        match *self {
            Kernel::Linear => Ok(()),
            Kernel::Polynomial {
                degree,
                gamma,
                coef0,
            } => {
                if degree == 0 {
                    return Err(Error::param("degree", degree, "an integer >= 1"));
                }
                positive("gamma", gamma)?;
                if !(coef0.is_finite() && coef0 >= 0.0) {
                    return Err(Error::param("coef0", coef0, "a finite number >= 0"));
                }
                Ok(())
            }
            Kernel::Rbf { gamma } => positive("gamma", gamma),
        }
    }

    /// `K(x, s)` for a row `x` and a dense vector `s` with `‖s‖² = s_sq`.
    #[inline]
    pub fn eval(&self, x: RowView<'_>, s: &[f64], s_sq: f64) -> f64 {
        let dot = x.dot(s);
        let x_sq = match self {
            Kernel::Rbf { .. } => x.nonzeros().map(|(_, v)| v * v).sum(),
            _ => 0.0,
        };
        self.from_dot(dot, x_sq, s_sq)
    }

    /// `K(a, b)` from `aᵀb` and the squared norms `‖a‖²`, `‖b‖²` (only RBF uses the norms).
    #[inline]
    pub fn from_dot(&self, dot: f64, a_sq: f64, b_sq: f64) -> f64 {
        match *self {
            Kernel::Linear => dot,
            Kernel::Polynomial {
                degree,
                gamma,
                coef0,
            } => (gamma * dot + coef0).powi(degree as i32),
            // ‖a − b‖² ≥ 0; the expansion can round slightly below zero
            Kernel::Rbf { gamma } => (-gamma * (a_sq - 2.0 * dot + b_sq).max(0.0)).exp(),
        }
    }

    /// `K(a, b)` for two dense vectors.
    pub fn eval_dense(&self, a: &[f64], b: &[f64]) -> f64 {
        let b_sq = b.iter().map(|v| v * v).sum();
        self.eval(RowView::Dense(a), b, b_sq)
    }
}

/// `out[k] = K(x_i, x_{idx[k]})` for row `i` and the rows `idx` of `x`, with the squared norms
/// `sq[r] = ‖x_r‖²` by row; a sparse row `i` is first written into `dense` (of length
/// `x.cols()`, the caller's scratch, so no allocation happens here). The inner loop of every
/// Gram-row computation (SMO, KEN-GURU). Dense rows use an explicitly vectorised inner product,
/// compiled for the best instruction set of the CPU (AVX2/FMA where available).
pub fn kernel_row(
    kernel: Kernel,
    x: &Features,
    i: usize,
    idx: &[usize],
    sq: &[f64],
    dense: &mut [f64],
    out: &mut [f64],
) {
    let xi: &[f64] = match x.row(i) {
        RowView::Dense(d) => d,
        sparse => {
            sparse.to_dense_into(dense);
            dense
        }
    };
    pulp::Arch::new().dispatch(KernelRow {
        kernel,
        x,
        xi,
        sq_i: sq[i],
        idx,
        sq,
        out,
    });
}

struct KernelRow<'a> {
    kernel: Kernel,
    x: &'a Features,
    xi: &'a [f64],
    sq_i: f64,
    idx: &'a [usize],
    sq: &'a [f64],
    out: &'a mut [f64],
}

impl pulp::WithSimd for KernelRow<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let KernelRow {
            kernel,
            x,
            xi,
            sq_i,
            idx,
            sq,
            out,
        } = self;
        for (o, &r) in out.iter_mut().zip(idx) {
            let dot = match x.row(r) {
                RowView::Dense(d) => simd_dot(simd, d, xi),
                sparse => sparse.dot(xi),
            };
            *o = kernel.from_dot(dot, sq_i, sq[r]);
        }
    }
}

/// `aᵀb` with four vector accumulators (the order of the additions is fixed for a given
/// instruction set).
#[inline(always)]
fn simd_dot<S: pulp::Simd>(simd: S, a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let (ah, at) = S::as_simd_f64s(a);
    let (bh, bt) = S::as_simd_f64s(b);
    let mut acc = [simd.splat_f64s(0.0); 4];
    let chunks = ah.len() / 4;
    for c in 0..chunks {
        for (k, acc) in acc.iter_mut().enumerate() {
            *acc = simd.mul_add_e_f64s(ah[4 * c + k], bh[4 * c + k], *acc);
        }
    }
    for k in 4 * chunks..ah.len() {
        acc[0] = simd.mul_add_e_f64s(ah[k], bh[k], acc[0]);
    }
    let sum = simd.add_f64s(simd.add_f64s(acc[0], acc[1]), simd.add_f64s(acc[2], acc[3]));
    let mut s = simd.reduce_sum_f64s(sum);
    for (p, q) in at.iter().zip(bt) {
        s += p * q;
    }
    s
}

/// The command-line parameters of a kernel learner, shared by every learner that takes a kernel
/// (`--kernel`, `--gamma`, `--degree`, `--coef0`, `--cache-size`); read back by
/// [`Kernel::from_params`] and [`cache_bytes_from_params`].
pub const KERNEL_PARAMS: [ParamSpec; 5] = [
    ParamSpec {
        name: "kernel",
        kind: ParamKind::Text,
        default: Some("linear"),
        help: "kernel: linear (x'z), poly ((gamma x'z + coef0)^degree) or rbf (exp(-gamma |x - z|^2))",
    },
    ParamSpec {
        name: "gamma",
        kind: ParamKind::Float,
        default: None,
        help: "kernel width / scale gamma > 0 for rbf and poly (default 1, SVM-light's)",
    },
    ParamSpec {
        name: "degree",
        kind: ParamKind::Count,
        default: None,
        help: "degree >= 1 of the poly kernel (default 3, SVM-light's)",
    },
    ParamSpec {
        name: "coef0",
        kind: ParamKind::Float,
        default: None,
        help: "offset coef0 >= 0 of the poly kernel (default 1)",
    },
    ParamSpec {
        name: "cache_size",
        kind: ParamKind::Float,
        default: None,
        help: "cap of the Gram-row cache in MiB (default 200)",
    },
];

impl Kernel {
    /// The kernel named by `kernel` with `gamma`, `degree`, `coef0` (defaults 1, 3, 1); a
    /// parameter the kernel does not use is a typed error, never ignored.
    pub fn from_params(p: &HyperParams) -> Result<Kernel> {
        let name = p.text("kernel")?;
        let unused = |param: &str, kernel: &str| -> Result<()> {
            match p.get(param) {
                Some(v) => Err(Error::param(
                    param,
                    v,
                    format!("no value: the {kernel} kernel does not take it"),
                )),
                None => Ok(()),
            }
        };
        let kernel = match name {
            "linear" => {
                for q in ["gamma", "degree", "coef0"] {
                    unused(q, "linear")?;
                }
                Kernel::Linear
            }
            "rbf" => {
                for q in ["degree", "coef0"] {
                    unused(q, "rbf")?;
                }
                Kernel::Rbf {
                    gamma: p.float_opt("gamma")?.unwrap_or(1.0),
                }
            }
            "poly" => {
                let degree = p.count_opt("degree")?.unwrap_or(3);
                Kernel::Polynomial {
                    degree: u32::try_from(degree)
                        .map_err(|_| Error::param("degree", degree, "an integer below 2^32"))?,
                    gamma: p.float_opt("gamma")?.unwrap_or(1.0),
                    coef0: p.float_opt("coef0")?.unwrap_or(1.0),
                }
            }
            other => {
                return Err(Error::param("kernel", other, "one of linear, poly, rbf"));
            }
        };
        kernel.validate()?;
        Ok(kernel)
    }
}

/// The Gram-row cache cap in bytes from `cache_size` (MiB, default 200); 0, negative or
/// non-finite sizes are typed errors.
pub fn cache_bytes_from_params(p: &HyperParams) -> Result<usize> {
    let mib = p.float_opt("cache_size")?.unwrap_or(200.0);
    if !(mib.is_finite() && mib > 0.0) {
        return Err(Error::param("cache_size", mib, "a size in MiB > 0"));
    }
    Ok(((mib * 1048576.0) as usize).max(1))
}

/// A binary kernel classifier: support vectors `s_i` (rows of a dense matrix), coefficients
/// `α_i` (signed: `α_i = y_i · dual_i` for an SVM) and a bias `b`; the score is
/// `Σ_i α_i K(s_i, x) + b`, a score of 0 is a mistake (as for linear models).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawKernelModel")]
pub struct KernelModel {
    kernel: Kernel,
    support: DenseMatrix,
    coef: Vec<f64>,
    bias: f64,
    #[serde(skip)]
    support_sq: Vec<f64>,
}

#[derive(Deserialize)]
struct RawKernelModel {
    kernel: Kernel,
    support: DenseMatrix,
    coef: Vec<f64>,
    bias: f64,
}

impl TryFrom<RawKernelModel> for KernelModel {
    type Error = Error;
    fn try_from(r: RawKernelModel) -> Result<Self> {
        Self::try_new(r.kernel, r.support, r.coef, r.bias)
    }
}

impl KernelModel {
    /// Validates the kernel, one coefficient per support vector, and finite numbers.
    pub fn try_new(
        kernel: Kernel,
        support: DenseMatrix,
        coef: Vec<f64>,
        bias: f64,
    ) -> Result<Self> {
        kernel.validate()?;
        if support.as_slice().len() != support.rows() * support.cols() {
            return Err(Error::shape(
                "kernel model: support-vector storage",
                support.rows() * support.cols(),
                support.as_slice().len(),
            ));
        }
        if coef.len() != support.rows() {
            return Err(Error::shape(
                "kernel model: coefficients vs support vectors",
                support.rows(),
                coef.len(),
            ));
        }
        for (name, values) in [("support", support.as_slice()), ("coef", &coef[..])] {
            if let Some((j, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::param(format!("{name}[{j}]"), v, "a finite number"));
            }
        }
        if !bias.is_finite() {
            return Err(Error::param("bias", bias, "a finite number"));
        }
        let support_sq = (0..support.rows())
            .map(|i| support.row(i).iter().map(|v| v * v).sum())
            .collect();
        Ok(Self {
            kernel,
            support,
            coef,
            bias,
            support_sq,
        })
    }
    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }
    /// The support vectors, one per row.
    pub fn support_vectors(&self) -> &DenseMatrix {
        &self.support
    }
    /// The signed coefficients `α_i`.
    pub fn coefficients(&self) -> &[f64] {
        &self.coef
    }
    /// The bias `b`.
    pub fn bias(&self) -> f64 {
        self.bias
    }
}

impl Classifier for KernelModel {
    fn n_features(&self) -> usize {
        self.support.cols()
    }
    fn n_classes(&self) -> usize {
        2
    }
    fn predict_class(&self, x: RowView<'_>) -> usize {
        usize::from(Sign::of_score(self.decision(x)) == Sign::Pos)
    }
    fn is_mistake(&self, x: RowView<'_>, class: usize) -> bool {
        binary_mistake(self.decision(x), class)
    }
}

impl DecisionFunction for KernelModel {
    fn decision(&self, x: RowView<'_>) -> f64 {
        let x_sq = match self.kernel {
            Kernel::Rbf { .. } => x.nonzeros().map(|(_, v)| v * v).sum(),
            _ => 0.0,
        };
        pulp::Arch::new().dispatch(Decision {
            model: self,
            x,
            x_sq,
        })
    }
}

/// [`KernelModel`]'s score as a [`pulp::WithSimd`] operation (vectorised inner products).
struct Decision<'a> {
    model: &'a KernelModel,
    x: RowView<'a>,
    x_sq: f64,
}

impl pulp::WithSimd for Decision<'_> {
    type Output = f64;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> f64 {
        let Decision { model, x, x_sq } = self;
        let mut s = model.bias;
        for (i, &a) in model.coef.iter().enumerate() {
            let sv = model.support.row(i);
            let dot = match x {
                RowView::Dense(d) => simd_dot(simd, d, sv),
                sparse => sparse.dot(sv),
            };
            s += a * model.kernel.from_dot(dot, x_sq, model.support_sq[i]);
        }
        s
    }
}
