//! A_mu (Klivans, Long & Servedio 2009, Theorem 1, §2.1): outlier removal by repeated variance
//! tests along the top eigenvector of the uncentred second-moment matrix, then averaging.
//!
//! ```text
//! drop (x, y) with ‖x‖² > 1 + 1e-9             (implicit in the proof of Lemma 4; KLS notes)
//! loop: (λ, w) ← top eigenpair of A = Σ_S x xᵀ   (step 1, Lemma 1)
//!       if λ < c·m·ln m / n: stop                (step 2)
//!       S ← S \ {(w·x)² ≥ c·ln m / n}            (step 3)
//! v ← (1/|S|) Σ_S y x                            (step 4)
//! ```
//!
//! `m` is the number of examples given (before any filtering), `ln` the natural log and `c = 10`
//! the paper's constant. With `c = 10` nothing can ever be removed unless `n > 10 ln m` (points
//! in the unit ball have `(w·x)² ≤ 1`), so the constant is a parameter. `A` is formed once and
//! downdated as points leave; its top eigenpair comes from Lanczos, not a full decomposition.
//! The Rayleigh quotient `λ = wᵀAw` of the returned vector is what the stopping test compares,
//! so when it passes, some point has `(w·x)² ≥ c ln m / n` and every pass removes a point.

use std::borrow::Cow;
use std::time::Instant;

use rayon::prelude::*;

use bulwark_core::{
    Dataset, DatasetView, Error, Features, Fit, FitReport, FitView, Fitted, LinearModel, Result,
};

use crate::spectral::{Gram, Lanczos, dot};

/// A_mu's settings: `AmuParams::new().constant(0.5).fit(&data)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmuParams {
    constant: f64,
    unit_ball: bool,
    eigen_tol: f64,
    max_matvecs: usize,
}

impl Default for AmuParams {
    fn default() -> Self {
        Self {
            constant: 10.0,
            unit_ball: true,
            eigen_tol: 1e-9,
            max_matvecs: 20_000,
        }
    }
}

/// One pass of A_mu's loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmuPass {
    /// `λ = wᵀAw` over the points left at the start of the pass.
    pub lambda: f64,
    /// Points removed by the pass (0 on the last, which stops).
    pub removed: usize,
    /// Lanczos products with `A`.
    pub matvecs: usize,
    /// Lanczos's residual `‖Aw − λw‖`.
    pub residual: f64,
    /// Whether Lanczos met its tolerance.
    pub converged: bool,
}

/// What A_mu did, beside its hypothesis.
#[derive(Debug, Clone, PartialEq)]
pub struct AmuFit {
    /// `v = (1/|S|) Σ_S y x` over the surviving points (not normalised).
    pub v: Vec<f64>,
    /// Indices (into the data given) of every removed point, increasing.
    pub removed: Vec<usize>,
    /// Of those, the points dropped by the unit-ball filter.
    pub removed_by_norm: usize,
    /// Every pass of the loop; the last one stopped it.
    pub passes: Vec<AmuPass>,
    /// `c·m·ln m / n`.
    pub variance_threshold: f64,
    /// `c·ln m / n`.
    pub point_threshold: f64,
    /// Whether a pass passed the variance test but removed no point (possible only by
    /// rounding; the loop stops there and the fit reports it as not converged).
    pub stalled: bool,
}

impl AmuParams {
    /// The paper's algorithm: `c = 10`, unit-ball filter on.
    pub fn new() -> Self {
        Self::default()
    }
    /// The constant `c` of both thresholds (`c·m·ln m / n`, `c·ln m / n`); the paper's is 10.
    pub fn constant(mut self, c: f64) -> Self {
        self.constant = c;
        self
    }
    /// Whether points with `‖x‖ > 1` are dropped first (default: yes; the proof assumes it).
    pub fn unit_ball(mut self, on: bool) -> Self {
        self.unit_ball = on;
        self
    }
    /// Lanczos's relative residual tolerance (default `1e-9`).
    pub fn eigen_tol(mut self, tol: f64) -> Self {
        self.eigen_tol = tol;
        self
    }

    fn check(&self) -> Result<()> {
        if !(self.constant.is_finite() && self.constant > 0.0) {
            return Err(Error::param(
                "amu_constant",
                self.constant,
                "a finite number > 0",
            ));
        }
        if !(self.eigen_tol.is_finite() && self.eigen_tol > 0.0 && self.eigen_tol < 1.0) {
            return Err(Error::param(
                "eigen_tol",
                self.eigen_tol,
                "a number in (0, 1)",
            ));
        }
        Ok(())
    }

    /// Runs A_mu on `data` (binary labels, no example weights, `m ≥ 2` examples, `n ≥ 2`
    /// features).
    pub fn run(&self, data: &DatasetView<'_>) -> Result<AmuFit> {
        self.check()?;
        let (m, n) = (data.len(), data.n_features());
        check_input(data, "A_mu counts examples")?;
        let x = dense_rows(data);
        let x: &[f64] = &x;
        let mf = m as f64;
        let variance_threshold = self.constant * mf * mf.ln() / n as f64; // KLS A_mu step 2
        let point_threshold = self.constant * mf.ln() / n as f64; // KLS A_mu step 3
        let mut active: Vec<usize> = (0..m)
            .filter(|&i| {
                let r = &x[i * n..(i + 1) * n];
                // points on the sphere are in the ball: ‖x‖² ≤ 1 up to rounding
                !self.unit_ball || dot(r, r) <= 1.0 + 1e-9
            })
            .collect();
        let mut removed: Vec<usize> = Vec::with_capacity(m - active.len());
        if active.len() < m {
            let mut keep = active.iter().peekable();
            for i in 0..m {
                if keep.peek() == Some(&&i) {
                    keep.next();
                } else {
                    removed.push(i);
                }
            }
        }
        let removed_by_norm = removed.len();
        let mut gram = Gram::new(x, n, &active);
        let mut lanczos = Lanczos::new(n);
        let mut w = vec![0.0; n];
        let mut proj = vec![0.0; active.len()];
        let mut gone = Vec::with_capacity(active.len());
        let mut passes = Vec::new();
        let mut stalled = false;
        while !active.is_empty() {
            let top = lanczos.top(&gram, self.eigen_tol, self.max_matvecs, &mut w)?;
            let mut pass = AmuPass {
                lambda: top.value,
                removed: 0,
                matvecs: top.matvecs,
                residual: top.residual,
                converged: top.converged,
            };
            if top.value < variance_threshold {
                passes.push(pass);
                break;
            }
            let p = &mut proj[..active.len()];
            p.par_iter_mut().zip(active.par_iter()).for_each(|(p, &i)| {
                let d = dot(&x[i * n..(i + 1) * n], &w);
                *p = d * d;
            });
            gone.clear();
            gone.extend(
                active
                    .iter()
                    .zip(p.iter())
                    .filter(|&(_, &p)| p >= point_threshold)
                    .map(|(&i, _)| i),
            );
            pass.removed = gone.len();
            passes.push(pass);
            if gone.is_empty() {
                // only possible by rounding between wᵀAw and the projections: reported
                stalled = true;
                break;
            }
            gram.downdate(x, &gone);
            removed.extend_from_slice(&gone);
            let mut k = 0;
            active.retain(|i| {
                let drop = k < gone.len() && gone[k] == *i;
                if drop {
                    k += 1;
                }
                !drop
            });
        }
        if active.is_empty() {
            return Err(Error::param(
                "data",
                format!("all {m} examples removed"),
                "examples left to average (a larger constant, or points inside the unit ball)",
            ));
        }
        removed.sort_unstable();
        // step 4: the average of y x over the survivors
        let mut v = vec![0.0; n];
        for &i in &active {
            let c = data.label(i)?.as_f64();
            v.iter_mut()
                .zip(&x[i * n..(i + 1) * n])
                .for_each(|(s, a)| *s += c * a);
        }
        let k = active.len() as f64;
        v.iter_mut().for_each(|a| *a /= k);
        Ok(AmuFit {
            v,
            removed,
            removed_by_norm,
            passes,
            variance_threshold,
            point_threshold,
            stalled,
        })
    }
}

/// The checks A_mu and SmoothBoost share: at least 2 examples and 2 features, binary labels,
/// finite values and no example weights (`why` says why not).
pub(crate) fn check_input(data: &DatasetView<'_>, why: &str) -> Result<()> {
    let (m, n) = (data.len(), data.n_features());
    if m < 2 {
        return Err(Error::param("data", format!("{m} examples"), "at least 2"));
    }
    if n < 2 {
        return Err(Error::param(
            "data",
            format!("{n} feature(s)"),
            "at least 2 (the thresholds divide by n)",
        ));
    }
    data.data().binary_labels()?;
    data.data().check_finite()?;
    if data.is_weighted() {
        return Err(Error::param(
            "example weights",
            "given",
            format!("none: {why} (use unweighted data)"),
        ));
    }
    Ok(())
}

/// The view's rows as one dense row-major array: borrowed when the data is a dense matrix
/// seen whole, else copied.
pub(crate) fn dense_rows<'a>(data: &DatasetView<'a>) -> Cow<'a, [f64]> {
    match (data.features(), data.indices()) {
        (Features::Dense(d), None) => Cow::Borrowed(d.as_slice()),
        _ => {
            let n = data.n_features();
            let mut out = vec![0.0; data.len() * n];
            for (i, row) in out.chunks_exact_mut(n).enumerate() {
                data.row(i).to_dense_into(row);
            }
            Cow::Owned(out)
        }
    }
}

impl FitView for AmuParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit_view(&self, data: &DatasetView<'_>) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        let fit = self.run(data)?;
        let mut report = FitReport::new("kls-amu", "lanczos");
        let unconverged = fit.passes.iter().filter(|p| !p.converged).count();
        report.converged = unconverged == 0 && !fit.stalled;
        report.iterations = Some(fit.passes.len());
        let d = &mut report.details;
        d.insert("removed".into(), fit.removed.len() as f64);
        d.insert("removed_by_norm".into(), fit.removed_by_norm as f64);
        d.insert(
            "removed_by_variance".into(),
            (fit.removed.len() - fit.removed_by_norm) as f64,
        );
        d.insert("rounds".into(), fit.passes.len() as f64);
        d.insert(
            "matvecs".into(),
            fit.passes.iter().map(|p| p.matvecs).sum::<usize>() as f64,
        );
        d.insert("eigen_unconverged".into(), unconverged as f64);
        d.insert("stalled".into(), f64::from(u8::from(fit.stalled)));
        d.insert(
            "final_lambda".into(),
            fit.passes.last().map_or(0.0, |p| p.lambda),
        );
        d.insert("variance_threshold".into(), fit.variance_threshold);
        d.insert("point_threshold".into(), fit.point_threshold);
        d.insert("amu_constant".into(), self.constant);
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted {
            model: LinearModel::try_new(fit.v, 0.0)?,
            report,
        })
    }
}

impl Fit for AmuParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.fit_view(&data.view())
    }
}
