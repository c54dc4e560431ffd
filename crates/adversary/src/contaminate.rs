//! Training-time contamination: KLS malicious noise, label noise (random or adversarial), RoLR
//! outliers and norm-matched outliers that a norm threshold cannot see. Each implements core's [`Contamination`] and returns the contaminated set with
//! the indices of the touched examples (increasing).
//!
//! The target direction `u` (KLS: the halfspace `sign(u·x)`) is given, or estimated as the
//! normalised average `Σ yᵢ xᵢ` of the clean data. Features of malicious / outlier output are
//! dense.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use bulwark_core::{
    Contamination, Dataset, DenseMatrix, Error, Features, Result, Rng, Sign, Targets,
};

use crate::sample::{Distribution, dot, standard_normal, uniform_symmetric};

fn check_rate(eta: f64) -> Result<()> {
    if eta.is_finite() && (0.0..=1.0).contains(&eta) {
        Ok(())
    } else {
        Err(Error::param("eta", eta, "a rate in [0, 1]"))
    }
}

fn check_vector(name: &str, v: &[f64], n: usize) -> Result<()> {
    if v.len() != n {
        return Err(Error::shape(format!("{name} vs data features"), n, v.len()));
    }
    if let Some((j, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(Error::param(
            format!("{name}[{}]", j + 1),
            x,
            "a finite number",
        ));
    }
    if dot(v, v) == 0.0 {
        return Err(Error::param(name, "0", "a non-zero vector"));
    }
    Ok(())
}

fn unit(v: &[f64]) -> Vec<f64> {
    let n = dot(v, v).sqrt();
    v.iter().map(|a| a / n).collect()
}

/// The unit target direction: `target`, or the normalised `Σ yᵢ xᵢ` (`e₁` if that is 0).
fn direction(target: Option<&[f64]>, data: &Dataset) -> Result<Vec<f64>> {
    let n = data.n_features();
    if n == 0 {
        return Err(Error::param("data features", 0, "at least 1"));
    }
    if let Some(u) = target {
        check_vector("target", u, n)?;
        return Ok(unit(u));
    }
    let y = data.binary_labels()?;
    let mut s = vec![0.0; n];
    for (i, yi) in y.iter().enumerate() {
        data.row(i).axpy_into(yi.as_f64(), &mut s);
    }
    if dot(&s, &s) == 0.0 {
        s[0] = 1.0;
    }
    Ok(unit(&s))
}

/// Up to `k` orthonormal directions orthogonal to the unit `u` (Gram–Schmidt on the basis
/// vectors, least aligned with `u` first, ties by index).
pub fn orthogonal_directions(u: &[f64], k: usize) -> Vec<Vec<f64>> {
    let n = u.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| u[a].abs().total_cmp(&u[b].abs()).then(a.cmp(&b)));
    let mut basis: Vec<Vec<f64>> = vec![u.to_vec()];
    let mut out = Vec::new();
    for j in order {
        if out.len() == k {
            break;
        }
        let mut z = vec![0.0; n];
        z[j] = 1.0;
        for _ in 0..2 {
            for q in &basis {
                let c = dot(&z, q);
                z.iter_mut().zip(q).for_each(|(a, b)| *a -= c * b);
            }
        }
        let norm = dot(&z, &z).sqrt();
        if norm > 1e-8 {
            z.iter_mut().for_each(|a| *a /= norm);
            basis.push(z.clone());
            out.push(z);
        }
    }
    out
}

/// The dirty points of a malicious adversary (KLS notes, "Adversaries worth simulating").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaliciousAdversary {
    /// Every dirty point is `x = radius·z` with `z = cos(angle)·z⊥ + sin(angle)·û`, `z⊥ ⟂ u`;
    /// label `+1` when `angle = 0`, else `−sign(u·z)`. Pulls the average `Σ y x` toward `z`.
    CoordinatedPull {
        /// Angle (radians) between `z` and the hyperplane, in `[−π/2, π/2]`.
        angle: f64,
        /// Norm of the dirty points (1: on the unit sphere).
        radius: f64,
    },
    /// Dirty points along `directions` orthonormal vectors `⟂ u` (round robin), scaled so that
    /// `(z·x)²` is just below `threshold` (an outlier-removal cut, e.g. `10 ln m / n` for
    /// `A_mu`); label `+1`.
    EvasivePull {
        /// The removal threshold on `(z·x)²`.
        threshold: f64,
        /// Number of orthogonal directions (at most `n − 1`).
        directions: usize,
    },
    /// The clean point with its label flipped (`y = −f(x)`).
    FlippedLabels,
    /// A uniform point in the ball whose radius is the largest clean norm, random label.
    RandomPoints,
}

/// KLS malicious noise: each example is independently replaced with probability `eta` (the mask
/// is drawn first, then the adversary fills the dirty slots).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaliciousNoise {
    /// Rate `η ∈ [0, 1]`.
    pub eta: f64,
    /// The adversary.
    pub adversary: MaliciousAdversary,
    /// Target direction `u` (`None`: estimated from the clean data).
    pub target: Option<Vec<f64>>,
}

impl Contamination for MaliciousNoise {
    fn name(&self) -> &str {
        "malicious"
    }
    fn contaminate(&self, clean: &Dataset, rng: &mut Rng) -> Result<(Dataset, Vec<usize>)> {
        check_rate(self.eta)?;
        let y = clean.binary_labels()?;
        let (m, n) = (clean.len(), clean.n_features());
        let u = direction(self.target.as_deref(), clean)?;
        let dirty: Vec<usize> = (0..m).filter(|_| rng.random::<f64>() < self.eta).collect();
        let mut x = clean.features().to_dense();
        let mut labels = y.to_vec();
        match self.adversary {
            MaliciousAdversary::CoordinatedPull { angle, radius } => {
                if !(angle.is_finite() && angle.abs() <= std::f64::consts::FRAC_PI_2) {
                    return Err(Error::param("angle", angle, "radians in [-pi/2, pi/2]"));
                }
                if !(radius.is_finite() && radius >= 0.0) {
                    return Err(Error::param("radius", radius, "a finite number >= 0"));
                }
                let zp = orthogonal_directions(&u, 1)
                    .pop()
                    .unwrap_or_else(|| vec![0.0; n]);
                let z: Vec<f64> = zp
                    .iter()
                    .zip(&u)
                    .map(|(a, b)| angle.cos() * a + angle.sin() * b)
                    .collect();
                let label = if angle == 0.0 {
                    Sign::Pos
                } else {
                    Sign::of_score(-dot(&u, &z))
                };
                for &i in &dirty {
                    x.row_mut(i)
                        .iter_mut()
                        .zip(&z)
                        .for_each(|(a, b)| *a = radius * b);
                    labels[i] = label;
                }
            }
            MaliciousAdversary::EvasivePull {
                threshold,
                directions,
            } => {
                if !(threshold.is_finite() && threshold > 0.0) {
                    return Err(Error::param("threshold", threshold, "a finite number > 0"));
                }
                if directions == 0 || directions + 1 > n {
                    return Err(Error::param(
                        "directions",
                        directions,
                        format!("between 1 and n - 1 = {}", n.saturating_sub(1)),
                    ));
                }
                let zs = orthogonal_directions(&u, directions);
                if zs.is_empty() {
                    return Err(Error::param(
                        "directions",
                        directions,
                        "a dimension with a direction orthogonal to the target",
                    ));
                }
                let s = threshold.sqrt() * (1.0 - 1e-9);
                for (t, &i) in dirty.iter().enumerate() {
                    let z = &zs[t % zs.len()];
                    x.row_mut(i).iter_mut().zip(z).for_each(|(a, b)| *a = s * b);
                    labels[i] = Sign::Pos;
                }
            }
            MaliciousAdversary::FlippedLabels => {
                for &i in &dirty {
                    labels[i] = labels[i].flip();
                }
            }
            MaliciousAdversary::RandomPoints => {
                let r = (0..m)
                    .map(|i| dot(x.row(i), x.row(i)))
                    .fold(0.0, f64::max)
                    .sqrt();
                let r = if r > 0.0 { r } else { 1.0 };
                let mut p = vec![0.0; n];
                for &i in &dirty {
                    Distribution::UnitBall.sample_into(rng, &mut p);
                    x.row_mut(i)
                        .iter_mut()
                        .zip(&p)
                        .for_each(|(a, b)| *a = r * b);
                    labels[i] = if rng.random::<bool>() {
                        Sign::Pos
                    } else {
                        Sign::Neg
                    };
                }
            }
        }
        let out = clean
            .with_features(Features::Dense(x))?
            .with_targets(Targets::Binary(labels), clean.class_names().to_vec())?;
        Ok((out, dirty))
    }
}

/// Which labels an adversarial label-noise model flips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelNoiseMode {
    /// Each label independently with probability `η`.
    Random,
    /// The `round(η m)` examples of largest `|u·x|` (far points; worst for averaging).
    FarFromBoundary,
    /// The `round(η m)` examples of smallest `u·x > 0` (the slab next to the boundary, one side).
    NearBoundary,
    /// The `round(η m)` examples of largest `z·x`, `z ⟂ u` (biases `E[y x]` toward `z`).
    Halfspace,
}

/// Label noise at rate `η` (agnostic / adversarial label noise of KLS, or random flips).
/// Adversarial modes are deterministic (ties by index) and do not use the generator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelNoise {
    /// Rate `η ∈ [0, 1]`.
    pub eta: f64,
    /// Which labels.
    pub mode: LabelNoiseMode,
    /// Target direction `u` (`None`: estimated from the clean data).
    pub target: Option<Vec<f64>>,
}

impl Contamination for LabelNoise {
    fn name(&self) -> &str {
        "label-noise"
    }
    fn contaminate(&self, clean: &Dataset, rng: &mut Rng) -> Result<(Dataset, Vec<usize>)> {
        check_rate(self.eta)?;
        let y = clean.binary_labels()?;
        let m = clean.len();
        let k = ((self.eta * m as f64).round() as usize).min(m);
        let mut flipped: Vec<usize> = match self.mode {
            LabelNoiseMode::Random => (0..m).filter(|_| rng.random::<f64>() < self.eta).collect(),
            mode => {
                let u = direction(self.target.as_deref(), clean)?;
                let z = match mode {
                    LabelNoiseMode::Halfspace => orthogonal_directions(&u, 1)
                        .pop()
                        .unwrap_or_else(|| u.clone()),
                    _ => u.clone(),
                };
                let mut scored: Vec<(f64, usize)> = (0..m)
                    .filter_map(|i| {
                        let s = clean.row(i).dot(&z);
                        match mode {
                            LabelNoiseMode::FarFromBoundary => Some((s.abs(), i)),
                            LabelNoiseMode::NearBoundary => (s > 0.0).then_some((-s, i)),
                            _ => Some((s, i)),
                        }
                    })
                    .collect();
                scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                scored.into_iter().take(k).map(|(_, i)| i).collect()
            }
        };
        flipped.sort_unstable();
        let mut labels = y.to_vec();
        for &i in &flipped {
            labels[i] = labels[i].flip();
        }
        let out = clean.with_targets(Targets::Binary(labels), clean.class_names().to_vec())?;
        Ok((out, flipped))
    }
}

/// `clean` followed by the rows of `data` beyond it (row-major, dense) with `labels` for all;
/// the indices of the appended rows. Example weights, if any, get 1 on the new rows.
fn appended(clean: &Dataset, data: Vec<f64>, labels: Vec<Sign>) -> Result<(Dataset, Vec<usize>)> {
    let (m, n, total) = (clean.len(), clean.n_features(), labels.len());
    let x = DenseMatrix::try_new(total, n, data)?;
    let mut out = Dataset::try_new(
        clean.name().to_string(),
        Features::Dense(x),
        Targets::Binary(labels),
        clean.feature_names().clone(),
        clean.class_names().to_vec(),
    )?;
    if let Some(w) = clean.weights() {
        let mut w = w.to_vec();
        w.resize(total, 1.0);
        out = out.with_weights(w)?;
    }
    Ok((out, (m..total).collect()))
}

/// RoLR outliers (Feng et al. 2014): `n_outliers` points with i.i.d. `U[−scale, scale]` features
/// and labels `sign(⟨−β, x⟩)` (0 → −1), appended after the clean examples (example weights, if
/// any, get 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolrOutliers {
    /// Number of outliers `n₁`.
    pub n_outliers: usize,
    /// The true parameter `β` (one entry per feature).
    pub beta: Vec<f64>,
    /// Half-width of the uniform features (the paper: `σ_o = 10`).
    pub scale: f64,
}

impl RolrOutliers {
    /// `n₁ = round(λ n)` outliers for `n` inliers (`λ = n₁/n`, the paper's ratio), scale 10.
    pub fn from_ratio(lambda: f64, n_inliers: usize, beta: Vec<f64>) -> Result<Self> {
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(Error::param("lambda", lambda, "a finite ratio >= 0"));
        }
        Ok(Self {
            n_outliers: (lambda * n_inliers as f64).round() as usize,
            beta,
            scale: 10.0,
        })
    }
}

impl Contamination for RolrOutliers {
    fn name(&self) -> &str {
        "rolr-outliers"
    }
    fn contaminate(&self, clean: &Dataset, rng: &mut Rng) -> Result<(Dataset, Vec<usize>)> {
        let y = clean.binary_labels()?;
        let n = clean.n_features();
        if self.beta.len() != n {
            return Err(Error::shape("beta vs data features", n, self.beta.len()));
        }
        if let Some((j, b)) = self.beta.iter().enumerate().find(|(_, b)| !b.is_finite()) {
            return Err(Error::param(
                format!("beta[{}]", j + 1),
                b,
                "a finite number",
            ));
        }
        if !(self.scale.is_finite() && self.scale >= 0.0) {
            return Err(Error::param("scale", self.scale, "a finite number >= 0"));
        }
        let mut data = clean.features().to_dense().into_vec();
        data.reserve(self.n_outliers * n);
        let mut labels = y.to_vec();
        let mut p = vec![0.0; n];
        for _ in 0..self.n_outliers {
            p.iter_mut()
                .for_each(|v| *v = uniform_symmetric(rng, self.scale));
            labels.push(Sign::of_score(-dot(&self.beta, &p)));
            data.extend_from_slice(&p);
        }
        appended(clean, data, labels)
    }
}

/// Outliers a norm threshold cannot see (beyond Feng et al. 2014): `n₁` points, each with the
/// norm of a clean example drawn uniformly, pointing along the defender's current
/// estimate `β̂` up to an isotropic jitter (`β̂/‖β̂‖ + jitter·h/√p`, `h ~ N(0, I_p)`,
/// renormalised), and labelled against it: `y = −sign⟨β̂, x⟩` (0 → −1). Their signed
/// correlations with `β̂` are the most negative an inlier-sized point can have, so a trimmed
/// estimator keeps them. Appended after the clean examples (example weights, if any, get 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NormMatchedOutliers {
    /// Number of outliers `n₁`.
    pub n_outliers: usize,
    /// The estimate the outliers are built against (one entry per feature, not all zero).
    pub estimate: Vec<f64>,
    /// Relative size of the isotropic jitter of the direction (`≥ 0`).
    pub jitter: f64,
}

impl Contamination for NormMatchedOutliers {
    fn name(&self) -> &str {
        "norm-matched-outliers"
    }
    fn contaminate(&self, clean: &Dataset, rng: &mut Rng) -> Result<(Dataset, Vec<usize>)> {
        let y = clean.binary_labels()?;
        let n = clean.n_features();
        check_vector("estimate", &self.estimate, n)?;
        let norm = dot(&self.estimate, &self.estimate).sqrt();
        if !(self.jitter.is_finite() && self.jitter >= 0.0) {
            return Err(Error::param("jitter", self.jitter, "a finite number >= 0"));
        }
        let mut data = clean.features().to_dense().into_vec();
        data.reserve(self.n_outliers * n);
        let mut labels = y.to_vec();
        let mut d = vec![0.0; n];
        let spread = self.jitter / (n as f64).sqrt();
        // the norms of the clean rows, one drawn per outlier
        let norms: Vec<f64> = (0..clean.len())
            .map(|i| {
                clean
                    .row(i)
                    .nonzeros()
                    .map(|(_, v)| v * v)
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        if norms.is_empty() {
            return Err(Error::param("data", "empty", "at least one clean example"));
        }
        for _ in 0..self.n_outliers {
            let r = norms[rng.random_range(0..norms.len())];
            for (dj, e) in d.iter_mut().zip(&self.estimate) {
                *dj = e / norm + spread * standard_normal(rng);
            }
            let dn = dot(&d, &d).sqrt();
            let x: Vec<f64> = d.iter().map(|v| r * v / dn).collect();
            labels.push(Sign::of_score(-dot(&self.estimate, &x)));
            data.extend_from_slice(&x);
        }
        appended(clean, data, labels)
    }
}

/// Outliers aimed at a defence (the adaptive adversaries of the poisoning benchmark): `n₁`
/// copies of clean examples moved to the norm `radius` and labelled against a reference model,
/// `y = −sign(⟨β̂, x⟩ + b̂)` (0 → −1). The copied examples are the clean ones most aligned with
/// `β̂` (largest `|⟨β̂, x⟩|/‖x‖`, ties by index, cycling when `n₁` exceeds them), so the copies
/// span the directions the data uses rather than one line a learner could turn away from; each
/// direction gets an isotropic jitter (`x̂ + jitter·h/√p`, `h ~ N(0, I_p)`, renormalised).
///
/// The radius is where the defence gives a point the most weight: just inside a norm filter's
/// threshold, just below an outlier-removal cut (`‖x‖² < τ` keeps `(w·x)² < τ` for every unit
/// `w`, whatever the top eigenvector is), or far out for a loss whose gradient grows with `‖x‖`.
/// Appended after the clean examples (example weights, if any, get 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AimedOutliers {
    /// Number of outliers `n₁`.
    pub n_outliers: usize,
    /// The reference model's weights `β̂` (one entry per feature, not all zero).
    pub estimate: Vec<f64>,
    /// The reference model's intercept `b̂`.
    pub bias: f64,
    /// The norm of every outlier (`≥ 0`).
    pub radius: f64,
    /// Relative size of the isotropic jitter of the direction (`≥ 0`).
    pub jitter: f64,
}

impl Contamination for AimedOutliers {
    fn name(&self) -> &str {
        "aimed-outliers"
    }
    fn contaminate(&self, clean: &Dataset, rng: &mut Rng) -> Result<(Dataset, Vec<usize>)> {
        let y = clean.binary_labels()?;
        let n = clean.n_features();
        check_vector("estimate", &self.estimate, n)?;
        for (name, v) in [("radius", self.radius), ("jitter", self.jitter)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(name, v, "a finite number >= 0"));
            }
        }
        if !self.bias.is_finite() {
            return Err(Error::param("bias", self.bias, "a finite number"));
        }
        let x = clean.features().to_dense();
        // the clean examples by alignment with the estimate, non-zero rows only
        let mut order: Vec<(f64, usize)> = (0..clean.len())
            .filter_map(|i| {
                let r = x.row(i);
                let norm = dot(r, r).sqrt();
                (norm > 0.0).then(|| (dot(r, &self.estimate).abs() / norm, i))
            })
            .collect();
        if order.is_empty() && self.n_outliers > 0 {
            return Err(Error::param(
                "data",
                "no non-zero example",
                "a clean example to copy",
            ));
        }
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let spread = self.jitter / (n as f64).sqrt();
        let mut data = x.as_slice().to_vec();
        data.reserve(self.n_outliers * n);
        let mut labels = y.to_vec();
        let mut d = vec![0.0; n];
        for t in 0..self.n_outliers {
            let r = x.row(order[t % order.len()].1);
            let norm = dot(r, r).sqrt();
            for (dj, xj) in d.iter_mut().zip(r) {
                *dj = xj / norm + spread * standard_normal(rng);
            }
            let dn = dot(&d, &d).sqrt();
            let dn = if dn > 0.0 { dn } else { 1.0 };
            let p: Vec<f64> = d.iter().map(|v| self.radius * v / dn).collect();
            labels.push(Sign::of_score(-(dot(&self.estimate, &p) + self.bias)));
            data.extend_from_slice(&p);
        }
        appended(clean, data, labels)
    }
}
