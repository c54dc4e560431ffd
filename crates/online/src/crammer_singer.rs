//! The multiclass SVM of Crammer & Singer (2001):
//! `min_W ½ Σ_k ‖w_k‖² + C Σ_i c_i max_k (e_i^k + w_kᵀx_i − w_{y_i}ᵀx_i)`, `e_i^k = 1 − δ_{k y_i}`,
//! no bias (append a constant feature for one, as LIBLINEAR does), prediction
//! `argmax_k w_kᵀx`.
//!
//! Solved by the sequential dual method of Keerthi, Sundararajan, Chang, Hsieh & Lin (KDD 2008),
//! LIBLINEAR's `MCSVM_CS`, written from the paper: the dual
//! `min_α ½ Σ_k ‖w_k(α)‖² + Σ_i Σ_k e_i^k α_i^k`, `w_k = Σ_i α_i^k x_i`,
//! `α_i^k ≤ C_i δ_{k y_i}`, `Σ_k α_i^k = 0`, one example's `C` variables at a time, each
//! subproblem solved exactly (sort the shifted gradients, find the water level `β`, Crammer &
//! Singer §6). Examples are visited in a seeded random order each pass. It stops on a
//! certified relative duality gap `(P(W) − D(α))/P(W)` computed every pass (one pass over the
//! data), or at the pass limit (reported).

use std::time::Instant;

use bulwark_core::{
    Dataset, DenseMatrix, Error, Fit, FitReport, Fitted, MulticlassLinearModel, ParamGuard, Result,
    rng_from_seed,
};
use rand::seq::SliceRandom;

use crate::common::{check_at_least_one, check_c, check_tolerance};

/// Crammer–Singer multiclass SVM; see the module notes.
#[derive(Debug, Clone, PartialEq)]
pub struct CrammerSingerParams {
    c: f64,
    tolerance: f64,
    max_passes: usize,
    seed: u64,
}

impl Default for CrammerSingerParams {
    fn default() -> Self {
        Self {
            c: 1.0,
            tolerance: 1e-6,
            max_passes: 10_000,
            seed: 0,
        }
    }
}

impl CrammerSingerParams {
    /// Defaults: `C = 1`, relative duality gap 1e-6, 10 000 passes, seed 0.
    pub fn new() -> Self {
        Self::default()
    }
    /// The loss weight `C > 0` (an example's is `C` times its weight).
    pub fn c(mut self, c: f64) -> Self {
        self.c = c;
        self
    }
    /// The certified relative duality gap at which to stop, in `(0, 1)`.
    pub fn tolerance(mut self, t: f64) -> Self {
        self.tolerance = t;
        self
    }
    /// The pass limit.
    pub fn max_passes(mut self, k: usize) -> Self {
        self.max_passes = k;
        self
    }
    /// The seed of the visiting order.
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }
}

impl ParamGuard for CrammerSingerParams {
    type Checked = CrammerSingerParams;
    type Error = Error;
    fn check_ref(&self) -> Result<&CrammerSingerParams> {
        check_c(self.c)?;
        check_tolerance("tolerance", self.tolerance)?;
        check_at_least_one("max_passes", self.max_passes)?;
        Ok(self)
    }
    fn check(self) -> Result<CrammerSingerParams> {
        self.check_ref()?;
        Ok(self)
    }
}

/// The exact solution of one example's subproblem
/// `min ½ a Σ_k α_k² + Σ_k b_k α_k`, `α_k ≤ cap·δ_{k y}`, `Σ α_k = 0` (Crammer & Singer §6):
/// `α_k = min(cap·δ_{k y}, (β − b_k)/a)` with the water level `β` from the sorted
/// `d_k = b_k + a·cap·δ_{k y}`.
fn subproblem(a: f64, b: &[f64], y: usize, cap: f64, d: &mut [f64], out: &mut [f64]) {
    d.copy_from_slice(b);
    d[y] += a * cap;
    d.sort_unstable_by(|p, q| q.total_cmp(p));
    let mut beta = d[0] - a * cap;
    let mut r = 1;
    while r < d.len() && beta < r as f64 * d[r] {
        beta += d[r];
        r += 1;
    }
    beta /= r as f64;
    for (k, o) in out.iter_mut().enumerate() {
        let bound = if k == y { cap } else { 0.0 };
        *o = ((beta - b[k]) / a).min(bound);
    }
}

impl Fit for CrammerSingerParams {
    type Model = MulticlassLinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<MulticlassLinearModel>> {
        self.check_ref()?;
        let start = Instant::now();
        let y = data.multiclass_training_classes()?;
        let (m, n, nc) = (data.len(), data.n_features(), data.n_classes());
        let cap: Vec<f64> = (0..m)
            .map(|i| self.c * data.weights().map_or(1.0, |w| w[i]))
            .collect();
        let sq: Vec<f64> = (0..m)
            .map(|i| data.row(i).nonzeros().map(|(_, v)| v * v).sum())
            .collect();
        let mut w = vec![0.0; nc * n];
        let mut alpha = vec![0.0; m * nc];
        let mut order: Vec<usize> = (0..m).collect();
        let mut rng = rng_from_seed(self.seed);
        let (mut b, mut d, mut new) = (vec![0.0; nc], vec![0.0; nc], vec![0.0; nc]);
        let mut scores = vec![0.0; nc];
        let (mut primal, mut dual, mut gap) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY);
        let mut passes = 0;
        let mut converged = false;
        while passes < self.max_passes {
            passes += 1;
            order.shuffle(&mut rng);
            for &i in &order {
                if sq[i] == 0.0 {
                    // x_i = 0: the loss is the constant 1 whatever W, α_i stays 0
                    continue;
                }
                let x = data.row(i);
                let a = &mut alpha[i * nc..(i + 1) * nc];
                // b_k = ∂/∂α_i^k of the dual minus a·α_i^k = w_kᵀx_i + e_i^k − ‖x_i‖² α_i^k
                for k in 0..nc {
                    let e = if k == y[i] { 0.0 } else { 1.0 };
                    b[k] = x.dot(&w[k * n..(k + 1) * n]) + e - sq[i] * a[k];
                }
                subproblem(sq[i], &b, y[i], cap[i], &mut d, &mut new);
                for k in 0..nc {
                    let delta = new[k] - a[k];
                    if delta != 0.0 {
                        x.axpy_into(delta, &mut w[k * n..(k + 1) * n]);
                        a[k] = new[k];
                    }
                }
            }
            // the certificate: P(W) and D(α) at W = W(α)
            let half_norm = 0.5 * w.iter().map(|v| v * v).sum::<f64>();
            let mut loss = 0.0;
            let mut linear = 0.0;
            for i in 0..m {
                let x = data.row(i);
                for (k, s) in scores.iter_mut().enumerate() {
                    *s = x.dot(&w[k * n..(k + 1) * n]);
                }
                let yi = y[i];
                let worst = (0..nc)
                    .map(|k| {
                        if k == yi {
                            0.0
                        } else {
                            1.0 + scores[k] - scores[yi]
                        }
                    })
                    .fold(0.0f64, f64::max);
                loss += cap[i] * worst;
                linear += (0..nc)
                    .filter(|&k| k != yi)
                    .map(|k| alpha[i * nc + k])
                    .sum::<f64>();
            }
            primal = half_norm + loss;
            dual = -half_norm - linear;
            gap = ((primal - dual) / primal.abs().max(1e-300)).max(0.0);
            if gap <= self.tolerance {
                converged = true;
                break;
            }
        }
        let model = MulticlassLinearModel::try_new(DenseMatrix::try_new(nc, n, w)?, vec![0.0; nc])
            .map_err(|e| Error::Numerical {
                algorithm: "svm".into(),
                message: format!("the dual method produced an invalid model ({e})"),
            })?;
        let mut report = FitReport::new("svm", "crammer-singer-dual-cd");
        report.objective = Some(primal);
        report.iterations = Some(passes);
        report.converged = converged;
        report.tolerance = Some(self.tolerance);
        report.reached = Some(gap);
        let dd = &mut report.details;
        dd.insert("dual_objective".into(), dual);
        dd.insert("relative_gap".into(), gap);
        dd.insert("duality_gap".into(), primal - dual);
        dd.insert("classes".into(), nc as f64);
        dd.insert("C".into(), self.c);
        dd.insert(
            "support_vectors".into(),
            (0..m)
                .filter(|&i| alpha[i * nc..(i + 1) * nc].iter().any(|a| *a != 0.0))
                .count() as f64,
        );
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted { model, report })
    }
}
