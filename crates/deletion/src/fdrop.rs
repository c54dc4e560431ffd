//! FDROP (Globerson & Roweis 2006; "TGRS" in DSX §4) by the structured interior-point method.
//!
//! FDROP's loss `[1 − y(w·x + b) + Σ_{top K} [y w_j x_j]_+]_+`, written with its threshold
//! `t ≥ 0` as `1 − y(w·x + b) + K t + Σ_j [y w_j x_j − t]_+`, has LP (4)'s constraints with
//! uniform feature values and budget `K`, up to the right-hand sides: LP (4) bounds the
//! threshold by `1/P` instead of 0, so it keeps a feature whose harm is positive but below
//! `1/P`, which FDROP deletes. Its objective is `½‖w‖² + C Σ ξ_i` instead of a box on `w`. So
//! FDROP is LP (4)'s layout with other right-hand sides and a quadratic term: the same
//! block-arrow normal equations with `s²/C` added to the `w` block (`s` the working scale:
//! [`crate::ipm`], *FDROP*). The box the method needs is kept but never active:
//! `‖w*‖₂ ≤ 2 √(C m₋)` (`m₋` the smaller class), since `½‖w*‖²` is at most the objective at
//! `w = 0` with the majority's constant bias, `2 C m₋`.

use bulwark_core::{Dataset, Error, FeatureBudget};
use bulwark_lp::Status;

use crate::error::Result;
use crate::ipm::{DsxIpm, DsxIpmSettings, IpmOptions};
use crate::layout::Lp4;

/// One FDROP fit by the structured IPM.
#[derive(Debug, Clone)]
pub struct FdropIpm {
    /// Features deleted per example.
    pub k: usize,
    /// The loss weight `C > 0`.
    pub c: f64,
    /// The IPM's tolerance on its relative residuals and gap.
    pub tolerance: f64,
    /// Iteration limit.
    pub max_iter: u32,
    /// Worker threads (`None`: rayon's current pool); the result does not depend on it.
    pub threads: Option<usize>,
    /// The method's tuning constants.
    pub settings: DsxIpmSettings,
}

/// The outcome of [`FdropIpm::solve`].
#[derive(Debug, Clone)]
pub struct FdropIpmSolution {
    /// The weights.
    pub w: Vec<f64>,
    /// The bias.
    pub b: f64,
    /// FDROP's objective `½‖w‖² + C Σ loss` at `(w, b)` ([`fdrop_objective`]).
    pub objective: f64,
    /// The dual objective of the method's last iterate, on the same scale (a lower bound on the
    /// optimum up to its dual residual).
    pub dual_objective: f64,
    /// The method's final status: [`Status::Optimal`] when its residuals and gap meet the
    /// tolerance.
    pub status: Status,
    /// Why the run stopped when it is not optimal.
    pub reason: Option<String>,
    /// Iterations performed.
    pub iterations: u32,
    /// Relative gap, primal and dual residuals of the last iterate (the IPM's measures).
    pub gap: f64,
    /// Relative primal residual.
    pub primal_residual: f64,
    /// Relative dual residual.
    pub dual_residual: f64,
    /// The radius of the (inactive) box the method works in.
    pub box_radius: f64,
    /// When FDROP's certificate ended the run ([`crate::ipm`], *FDROP*): the last iterate's
    /// relative dual residual. `gap` is then the certified relative gap between FDROP's
    /// objective at `(w, b)` and the dual value of a feasible dual point (a lower bound on the
    /// optimum), `dual_objective` that value and `dual_residual` 0.
    pub certified_from: Option<f64>,
}

impl FdropIpmSolution {
    /// Whether the method met its tolerance ([`Status::Optimal`]).
    pub fn is_optimal(&self) -> bool {
        self.status == Status::Optimal
    }
}

impl FdropIpm {
    /// Solves FDROP on `data` (binary, both classes, finite), `1 ≤ k < n`; a bad parameter is
    /// a typed error naming it.
    pub fn solve(&self, data: &Dataset) -> Result<FdropIpmSolution> {
        bulwark_core::error::check_positive("C", self.c)?;
        bulwark_core::error::check_positive("tolerance", self.tolerance)?;
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "must be >= 1").into());
        }
        self.settings
            .validate()
            .map_err(crate::params::settings_error)?;
        let n = data.n_features();
        if self.k == 0 || self.k >= n {
            return Err(Error::param(
                "k",
                self.k,
                format!("the interior-point method needs 1 <= k < n = {n}"),
            )
            .into());
        }
        let labels = data.require_two_classes()?;
        let pos = labels.iter().filter(|s| s.as_f64() > 0.0).count();
        let minority = pos.min(labels.len() - pos) as f64;
        // ‖w*‖₂ ≤ 2√(C m₋) (module docs), with a margin so the box is strictly inactive
        let radius = 2.0 * (self.c * minority).sqrt() * 1.05 + 1.0;
        let budget = FeatureBudget::uniform(n, self.k as f64)?;
        let lp = Lp4::new(data, &budget, radius)?;
        let opts = IpmOptions {
            tolerance: self.tolerance,
            max_iter: self.settings.max_iter.unwrap_or(self.max_iter),
            time_limit: f64::INFINITY,
        };
        // the IPM minimises FDROP / C: Σ ξ_i + (q/2)‖w'‖² in its working variables
        let out = DsxIpm::for_fdrop(&lp, self.threads, &self.settings, self.c)?
            .solve(opts, None, None)?;
        let (w, b) = (out.wb[..n].to_vec(), out.wb[n]);
        let scale = self.c * data.len() as f64;
        let objective = fdrop_objective(&w, b, data, self.c, self.k)?;
        Ok(FdropIpmSolution {
            w,
            b,
            objective,
            dual_objective: scale * out.dual_objective,
            status: out.status,
            reason: out.reason,
            iterations: out.iterations,
            gap: out.gap,
            primal_residual: out.primal_residual,
            dual_residual: out.dual_residual,
            box_radius: radius,
            certified_from: out.repaired_from,
        })
    }
}

/// FDROP's objective `½‖w‖² + C Σ_i [1 − y_i(w·x_i + b) + Σ_{top k} [y_i w_j x_ij]_+]_+` at
/// `(w, b)`.
pub fn fdrop_objective(w: &[f64], b: f64, data: &Dataset, c: f64, k: usize) -> Result<f64> {
    let y = data.binary_labels()?;
    if w.len() != data.n_features() {
        return Err(Error::shape("weights vs data features", data.n_features(), w.len()).into());
    }
    let mut loss = 0.0;
    let mut harm = Vec::new();
    for (i, yi) in y.iter().enumerate() {
        let (x, yi) = (data.row(i), yi.as_f64());
        harm.clear();
        harm.extend(
            x.nonzeros()
                .map(|(j, v)| yi * w[j] * v)
                .filter(|h| *h > 0.0),
        );
        loss += example_loss(yi * (x.dot(w) + b), &mut harm, k);
    }
    Ok(0.5 * w.iter().map(|v| v * v).sum::<f64>() + c * loss)
}

/// One example's FDROP loss `[1 − y(w·x + b) + Σ_{top k} h_j]_+` from its margin `y(w·x + b)`
/// and its positive harms `h` (reordered).
pub(crate) fn example_loss(margin: f64, harm: &mut [f64], k: usize) -> f64 {
    let k = k.min(harm.len());
    if k < harm.len() {
        harm.select_nth_unstable_by(k, |a, b| b.total_cmp(a));
    }
    let top: f64 = harm[..k].iter().sum();
    (1.0 - margin + top).max(0.0)
}
