//! The perspective-loss family of Ginodi ch. 3 §2 and the per-example robust loss.
//!
//! A scalar loss `f̃` (the Gaussian smooth hinge `f` of (2.15), the log loss `log₂(1 + 2^z)` of
//! Lemma 8, the Huber-like `f̃₃` of Lemma 9) enters the per-example loss through its
//! perspective (2.16), (3.31):
//!
//! ```text
//! ℓ(w; x, y) = a f̃(b/a),   a = σ‖w‖,   b = 1 − y wᵀx
//! ```
//!
//! with `‖·‖` the Euclidean norm (isotropic noise, Thm 2.1) or the max norm (diagonal
//! covariance, Appendix B: the worst case puts all the noise on the largest `|w_i|`). With
//! `g(a, b) = a f̃(b/a)` and `u = b/a`: `∂g/∂b = f̃'(u)`, `∂g/∂a = r(u) = f̃(u) − u f̃'(u) ≥ 0`
//! (Lemma 4 with the corrected exponent; it is `φ(u)` for the Gaussian loss), so the gradient
//! (2.26) is `−y x f̃'(u) + r(u) ∇a`. At `w = 0` (`a = 0`, `b = 1`) the loss is its limit
//! `[b]₊ = 1` and the gradient its limit `−y x`.
//!
//! Each `f̃` comes with its concave conjugate `s(α) = min_z f̃(z) − αz` on `[0, 1]` (Lemma 6:
//! `φ∘Φ⁻¹`; (3.26): `H₂`; (3.29): `4α(1 − α)`), which the dual (3.17), (3.32) uses.

use serde::{Deserialize, Serialize};

use crate::special::{FRAC_1_SQRT_2PI, norm_cdf, norm_cdf_inv_pair, norm_pdf, smooth_hinge};

/// The scalar loss `f̃` inside the perspective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Loss {
    /// `f(z) = zΦ(z) + φ(z)`, the expected hinge under Gaussian noise (Ginodi (2.15)).
    Gauss,
    /// `f̃₂(z) = log₂(1 + 2^z)` (Ginodi Lemma 8), conjugate `H₂(α)`.
    Log,
    /// `f̃₃(z) = 0, (z + 4)²/16, z` on `z < −4`, `[−4, 4]`, `z > 4` (Ginodi Lemma 9),
    /// conjugate `4α(1 − α)`.
    Huber,
}

impl Loss {
    /// Every loss, in the order the CLI lists them.
    pub const ALL: [Loss; 3] = [Loss::Gauss, Loss::Log, Loss::Huber];

    /// The name used on the command line and in model files.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Gauss => "gauss",
            Loss::Log => "log",
            Loss::Huber => "huber",
        }
    }

    /// The loss named `s` (`gauss`, `log`, `huber`).
    pub fn parse(s: &str) -> Option<Loss> {
        Loss::ALL.into_iter().find(|l| l.name() == s)
    }

    /// `f̃(z)`.
    pub fn value(self, z: f64) -> f64 {
        match self {
            Loss::Gauss => smooth_hinge(z),
            // log₂(1 + 2^z) = softplus(z ln 2)/ln 2, stable for both signs
            Loss::Log => {
                let x = z * std::f64::consts::LN_2;
                (x.max(0.0) + (-x.abs()).exp().ln_1p()) / std::f64::consts::LN_2
            }
            Loss::Huber => {
                if z < -4.0 {
                    0.0
                } else if z <= 4.0 {
                    (z + 4.0) * (z + 4.0) / 16.0
                } else {
                    z
                }
            }
        }
    }

    /// `f̃'(z)` (Ginodi (2.17) for the Gaussian loss: `Φ(z)`), in `[0, 1]`.
    pub fn d1(self, z: f64) -> f64 {
        match self {
            Loss::Gauss => norm_cdf(z),
            Loss::Log => sigmoid(z * std::f64::consts::LN_2),
            Loss::Huber => ((z + 4.0) / 8.0).clamp(0.0, 1.0),
        }
    }

    /// `1 − f̃'(z)`, computed without cancellation (the dual needs it where `f̃' ≈ 1`).
    pub fn d1_complement(self, z: f64) -> f64 {
        match self {
            Loss::Gauss => norm_cdf(-z),
            Loss::Log => sigmoid(-z * std::f64::consts::LN_2),
            Loss::Huber => ((4.0 - z) / 8.0).clamp(0.0, 1.0),
        }
    }

    /// `f̃''(z)` (Ginodi (2.18) for the Gaussian loss: `φ(z)`; 0 outside `[−4, 4]` for Huber).
    pub fn d2(self, z: f64) -> f64 {
        match self {
            Loss::Gauss => norm_pdf(z),
            Loss::Log => {
                let p = sigmoid(z * std::f64::consts::LN_2);
                std::f64::consts::LN_2 * p * sigmoid(-z * std::f64::consts::LN_2)
            }
            Loss::Huber => {
                if (-4.0..=4.0).contains(&z) {
                    0.125
                } else {
                    0.0
                }
            }
        }
    }

    /// `r(z) = f̃(z) − z f̃'(z) ≥ 0`, the perspective's derivative in its scale `a`
    /// (Ginodi Lemma 4, exponent corrected: `φ(z)` for the Gaussian loss; `H₂(f̃₂'(z))` for the
    /// log loss; `(16 − z²)/16` on `[−4, 4]` for Huber).
    pub fn scale_derivative(self, z: f64) -> f64 {
        match self {
            Loss::Gauss => norm_pdf(z),
            Loss::Log => {
                let x = z * std::f64::consts::LN_2;
                binary_entropy(sigmoid(x), sigmoid(-x))
            }
            Loss::Huber => {
                if (-4.0..=4.0).contains(&z) {
                    (16.0 - z * z) / 16.0
                } else {
                    0.0
                }
            }
        }
    }

    /// The concave conjugate `s(α) = min_z f̃(z) − αz` for `α ∈ [0, 1]` (`−∞` outside), given
    /// `α` with its complement `ᾱ = 1 − α` (both computed accurately by the caller): Ginodi
    /// Lemma 6 `φ(Φ⁻¹(α))`, (3.26) `H₂(α)`, (3.29) `4α(1 − α)`.
    pub fn conjugate(self, alpha: f64, alpha_bar: f64) -> f64 {
        if !(0.0..=1.0).contains(&alpha) || !(0.0..=1.0).contains(&alpha_bar) {
            return f64::NEG_INFINITY;
        }
        match self {
            Loss::Gauss => {
                if alpha == 0.0 || alpha_bar == 0.0 {
                    0.0
                } else {
                    norm_pdf(norm_cdf_inv_pair(alpha, alpha_bar))
                }
            }
            Loss::Log => binary_entropy(alpha, alpha_bar),
            Loss::Huber => 4.0 * alpha * alpha_bar,
        }
    }

    /// `(s(α), z*(α))`: the conjugate and its minimiser, whose negative is the conjugate's slope
    /// `s'(α) = −z*(α)` (one inverse-CDF evaluation for both).
    pub fn conjugate_and_argmin(self, alpha: f64, alpha_bar: f64) -> (f64, f64) {
        if !(0.0..=1.0).contains(&alpha) || !(0.0..=1.0).contains(&alpha_bar) {
            return (f64::NEG_INFINITY, f64::NAN);
        }
        match self {
            Loss::Gauss => {
                let z = norm_cdf_inv_pair(alpha, alpha_bar);
                (if z.is_finite() { norm_pdf(z) } else { 0.0 }, z)
            }
            Loss::Log | Loss::Huber => (
                self.conjugate(alpha, alpha_bar),
                self.conjugate_argmin(alpha, alpha_bar),
            ),
        }
    }

    /// The minimiser `z*(α) = (f̃')⁻¹(α)` of the conjugate's definition: `Φ⁻¹(α)`,
    /// `log₂(α/(1 − α))`, `8α − 4`.
    pub fn conjugate_argmin(self, alpha: f64, alpha_bar: f64) -> f64 {
        match self {
            Loss::Gauss => norm_cdf_inv_pair(alpha, alpha_bar),
            Loss::Log => (alpha / alpha_bar).log2(),
            Loss::Huber => 8.0 * alpha - 4.0,
        }
    }

    /// `sup_z (f̃(z) − [z]₊)`: how far the loss can sit above the hinge (`1/√(2π)` for the
    /// Gaussian loss, Thm 3.1; 1 for the log loss; 1 for Huber).
    pub fn max_excess_over_hinge(self) -> f64 {
        match self {
            Loss::Gauss => FRAC_1_SQRT_2PI,
            Loss::Log | Loss::Huber => 1.0,
        }
    }
}

/// `1/(1 + e^{−x})`, stable for both signs.
#[inline]
pub(crate) fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `H₂(p) = −p log₂ p − q log₂ q` with `q = 1 − p` given separately (accurate near 0 and 1).
#[inline]
fn binary_entropy(p: f64, q: f64) -> f64 {
    let h = |p: f64| if p > 0.0 { -p * p.log2() } else { 0.0 };
    h(p) + h(q)
}

/// The norm in the perspective: the adversary's covariance class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseNorm {
    /// `‖w‖₂`: covariance with bounded trace, worst case `σ² ŵŵᵀ` (Ginodi Thm 2.1).
    L2,
    /// `‖w‖∞`: diagonal covariance with bounded trace, worst case all the noise on the largest
    /// `|w_i|` (Ginodi Appendix B, (B.2) corrected to `β w_{i*}²`). Not differentiable where the
    /// largest `|w_i|` is tied; only the SGD solver takes it.
    Linf,
}

impl NoiseNorm {
    /// The name used on the command line (`l2`, `linf`).
    pub fn name(self) -> &'static str {
        match self {
            NoiseNorm::L2 => "l2",
            NoiseNorm::Linf => "linf",
        }
    }
    /// The norm named `s`.
    pub fn parse(s: &str) -> Option<NoiseNorm> {
        [NoiseNorm::L2, NoiseNorm::Linf]
            .into_iter()
            .find(|n| n.name() == s)
    }
    /// `‖w‖`.
    pub fn of(self, w: &[f64]) -> f64 {
        match self {
            NoiseNorm::L2 => w.iter().map(|v| v * v).sum::<f64>().sqrt(),
            NoiseNorm::Linf => w.iter().fold(0.0, |m, v| m.max(v.abs())),
        }
    }
    /// The dual norm `‖v‖_*` (what the dual constraint (3.17) bounds): `‖v‖₂` or `‖v‖₁`.
    pub fn dual_of(self, v: &[f64]) -> f64 {
        match self {
            NoiseNorm::L2 => v.iter().map(|x| x * x).sum::<f64>().sqrt(),
            NoiseNorm::Linf => v.iter().map(|x| x.abs()).sum(),
        }
    }
    /// Adds `scale · ∇‖w‖` to `out` (`w ≠ 0`; for the max norm the subgradient at the first
    /// largest `|w_i|`).
    pub fn add_gradient(self, w: &[f64], norm: f64, scale: f64, out: &mut [f64]) {
        match self {
            NoiseNorm::L2 => {
                let c = scale / norm;
                for (o, w) in out.iter_mut().zip(w) {
                    *o += c * w;
                }
            }
            NoiseNorm::Linf => {
                if !w.is_empty() {
                    let i = first_argmax_abs(w);
                    out[i] += scale * w[i].signum();
                }
            }
        }
    }
}

/// The first index of the largest `|v_k|` (0 for an empty slice): where the max norm's
/// subgradient sits (Appendix B).
pub(crate) fn first_argmax_abs(v: &[f64]) -> usize {
    let mut k = 0;
    for (j, x) in v.iter().enumerate() {
        if x.abs() > v[k].abs() {
            k = j;
        }
    }
    k
}

/// The robust loss of one example from its margin term `b = 1 − y wᵀx` and the perspective's
/// scale `a = σ‖w‖`, with the `a = 0` limit `[b]₊` (Ginodi (2.16), (3.31)).
#[inline]
pub fn perspective(loss: Loss, a: f64, b: f64) -> f64 {
    if a > 0.0 {
        a * loss.value(b / a)
    } else {
        b.max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Loss::ALL {
            assert_eq!(Loss::parse(l.name()), Some(l));
        }
        assert_eq!(Loss::parse("hinge"), None);
        assert_eq!(NoiseNorm::parse("linf"), Some(NoiseNorm::Linf));
    }
}
