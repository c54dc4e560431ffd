//! Noise clouds for GURU's noise-robustness curves (Ginodi 2010, Figs. 2.5–2.7): additive noise
//! on every feature of every test example. The result is always dense (noise fills the zeros).

use serde::{Deserialize, Serialize};

use bulwark_core::{Classifier, Dataset, DenseMatrix, Error, Linear, Result, Rng, TestTimeAttack};

use crate::attack::check_model_data;
use crate::sample::{standard_normal, uniform_symmetric};

/// Adds i.i.d. `U(−a, a)` noise to every feature (GURU Figs. 2.5 and 2.7).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UniformNoise {
    /// Half-width `a ≥ 0`.
    pub a: f64,
}

/// Where a Gaussian cloud puts its noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CloudDirection {
    /// `x + σ ε`, `ε ~ N(0, I)`.
    Isotropic,
    /// GURU's worst-case cloud `x + σ ε ŵ`, `ε ~ N(0, 1)`, all noise along the unit weight
    /// vector (Fig. 2.6). A zero weight vector adds nothing.
    AlongWeights,
}

/// Adds Gaussian noise of standard deviation `σ` (`N(0, σ² I)` or along `ŵ`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GaussianCloud {
    /// Standard deviation `σ ≥ 0`.
    pub sigma: f64,
    /// Isotropic or along the weights.
    pub direction: CloudDirection,
}

fn check_scale(name: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Error::param(name, v, "a finite number >= 0"))
    }
}

fn add_noise(data: &Dataset, mut noise: impl FnMut(&mut [f64])) -> Result<Dataset> {
    let n = data.n_features();
    let mut out = DenseMatrix::zeros(data.len(), n);
    for i in 0..data.len() {
        let r = out.row_mut(i);
        data.row(i).to_dense_into(r);
        noise(r);
    }
    data.with_features(out.into())
}

impl UniformNoise {
    /// Noisy copy of `data` (the model is not used; any feature count).
    pub fn apply(&self, data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        check_scale("a", self.a)?;
        add_noise(data, |r| {
            r.iter_mut()
                .for_each(|v| *v += uniform_symmetric(rng, self.a))
        })
    }
}

impl GaussianCloud {
    /// Noisy copy of `data`; `w` is the model's weight vector (used by `AlongWeights`).
    pub fn apply(&self, w: &[f64], data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        check_scale("sigma", self.sigma)?;
        match self.direction {
            CloudDirection::Isotropic => add_noise(data, |r| {
                r.iter_mut()
                    .for_each(|v| *v += self.sigma * standard_normal(rng))
            }),
            CloudDirection::AlongWeights => {
                if w.len() != data.n_features() {
                    return Err(Error::shape(
                        "model feature count vs data feature count",
                        w.len(),
                        data.n_features(),
                    ));
                }
                let norm = w.iter().map(|a| a * a).sum::<f64>().sqrt();
                add_noise(data, |r| {
                    let e = self.sigma * standard_normal(rng);
                    if norm > 0.0 {
                        r.iter_mut().zip(w).for_each(|(v, wj)| *v += e * wj / norm);
                    }
                })
            }
        }
    }
}

/// Uniform noise needs nothing of the model but its feature count: any classifier.
impl<M: Classifier + ?Sized> TestTimeAttack<M> for UniformNoise {
    fn name(&self) -> &str {
        "uniform-noise"
    }
    fn attack(&self, model: &M, data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        model.check_features(data.features())?;
        self.apply(data, rng)
    }
}

/// The Gaussian cloud may point along the weights ([`CloudDirection::AlongWeights`]): linear
/// models only.
impl<M: Linear + ?Sized> TestTimeAttack<M> for GaussianCloud {
    fn name(&self) -> &str {
        match self.direction {
            CloudDirection::Isotropic => "gaussian-noise",
            CloudDirection::AlongWeights => "gaussian-noise-along-w",
        }
    }
    fn attack(&self, model: &M, data: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        check_model_data(model, data)?;
        self.apply(model.weights(), data, rng)
    }
}
