//! Kernels and binary kernel models `x ↦ sign(Σ_i α_i K(s_i, x) + b)`.
//!
//! The kernel definitions follow SVM-light / LIBSVM: linear `xᵀx'`, polynomial
//! `(γ xᵀx' + c₀)^d`, RBF `exp(−γ ‖x − x'‖²)`.

use serde::{Deserialize, Serialize};

use crate::dataset::Sign;
use crate::error::{Error, Result};
use crate::matrix::{DenseMatrix, RowView};
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
        match *self {
            Kernel::Linear => dot,
            Kernel::Polynomial {
                degree,
                gamma,
                coef0,
            } => (gamma * dot + coef0).powi(degree as i32),
            Kernel::Rbf { gamma } => {
                let x_sq: f64 = x.nonzeros().map(|(_, v)| v * v).sum();
                // ‖x − s‖² ≥ 0; the expansion can round slightly below zero
                (-gamma * (x_sq - 2.0 * dot + s_sq).max(0.0)).exp()
            }
        }
    }

    /// `K(a, b)` for two dense vectors.
    pub fn eval_dense(&self, a: &[f64], b: &[f64]) -> f64 {
        let b_sq = b.iter().map(|v| v * v).sum();
        self.eval(RowView::Dense(a), b, b_sq)
    }
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
        let mut s = self.bias;
        for (i, &a) in self.coef.iter().enumerate() {
            s += a * self.kernel.eval(x, self.support.row(i), self.support_sq[i]);
        }
        s
    }
}
