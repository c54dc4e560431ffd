//! FDROP (Globerson & Roweis 2006; "TGRS" in DSX §4) by the structured interior-point method.
//!
//! FDROP's adversary deletes features of each example at test time; here, as in DSX §2.1, a
//! feature `j` has a value `v_j ≥ 0` and the adversary deletes a set `S` with
//! `Σ_{j∈S} v_j ≤ N` (relaxed: fractions `σ_j ∈ [0, 1]` with `Σ_j σ_j v_j ≤ N`). FDROP's loss
//! is the hinge after the worst such deletion,
//! `[1 − y(w·x + b) + max_σ Σ_j σ_j [y w_j x_j]_+]_+`, whose inner maximum is a fractional
//! knapsack (features by `y w_j x_j / v_j`, largest first, until `N` is spent) and, by LP
//! duality, `min_{t ≥ 0} N t + Σ_j [y w_j x_j − v_j t]_+`. With unit values and an integer
//! `N = K` it is Globerson & Roweis's `Σ_{top K} [y w_j x_j]_+` (the `k` form: [`FdropIpm::k`],
//! [`fdrop_objective`]).
//!
//! Written with its threshold `t ≥ 0`, the loss has LP (4)'s constraints with the values `v`
//! and budget `N`, up to the right-hand sides: LP (4) bounds the threshold by `1/P` instead of
//! 0, so it keeps a feature whose harm per unit of value is positive but below `1/P`, which
//! FDROP deletes. Its objective is `½‖w‖² + C Σ ξ_i` instead of a box on `w`. So FDROP is
//! LP (4)'s layout with other right-hand sides and a quadratic term: the same block-arrow
//! normal equations with `s²/C` added to the `w` block (`s` the working scale: [`crate::ipm`],
//! *FDROP*). The box the method needs is kept but never active: `‖w*‖₂ ≤ 2 √(C m₋)` (`m₋` the
//! smaller class), since `½‖w*‖²` is at most the objective at `w = 0` with the majority's
//! constant bias, `2 C m₋`.

use bulwark_core::{Dataset, Error, FeatureBudget, FeatureValues};
use bulwark_lp::Status;

use crate::error::Result;
use crate::ipm::{DsxIpm, DsxIpmSettings, IpmOptions};
use crate::layout::Lp4;

/// One FDROP fit by the structured IPM.
#[derive(Debug, Clone)]
pub struct FdropIpm {
    /// The feature values `v_j ≥ 0`, the cost of deleting feature `j` (default
    /// [`FeatureValues::Uniform`]).
    pub values: FeatureValues,
    /// The deletion budget `N`, in the values' units: `0 < N < V([n]) = Σ_j v_j`. With unit
    /// values and an integer `N`, the `k = N` most harmful features of each example.
    pub budget: f64,
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

impl Default for FdropIpm {
    /// Unit values, `N = 1`, `C = 1`, tolerance 1e-8, 200 iterations, rayon's pool, the default
    /// settings.
    fn default() -> Self {
        Self {
            values: FeatureValues::Uniform,
            budget: 1.0,
            c: 1.0,
            tolerance: 1e-8,
            max_iter: 200,
            threads: None,
            settings: DsxIpmSettings::default(),
        }
    }
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
    /// The `k` form: `k` features of equal cost deleted per example (unit values, `N = k`).
    pub fn k(mut self, k: usize) -> Self {
        self.values = FeatureValues::Uniform;
        self.budget = k as f64;
        self
    }

    /// The values resolved for `n` features and the budget, validated: a typed error names a
    /// bad value (negative, not finite: `values[j]`), a wrong length (a shape error) or a budget
    /// outside `0 < N < V([n])` (`budget`).
    pub fn feature_budget(&self, n: usize) -> Result<FeatureBudget> {
        let budget = FeatureBudget::try_new(self.values.resolve(n)?, self.budget)?;
        if budget.budget() <= 0.0 {
            return Err(Error::param(
                "budget",
                self.budget,
                "the interior-point method needs N > 0 (with N = 0 FDROP is the SVM on the \
                 features of positive value)",
            )
            .into());
        }
        Ok(budget)
    }

    /// Solves FDROP on `data` (binary, both classes, finite) against the budget
    /// ([`FdropIpm::feature_budget`]); a bad parameter is a typed error naming it.
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
        let budget = self.feature_budget(n)?;
        let labels = data.require_two_classes()?;
        let pos = labels.iter().filter(|s| s.as_f64() > 0.0).count();
        let minority = pos.min(labels.len() - pos) as f64;
        // ‖w*‖₂ ≤ 2√(C m₋) (module docs), with a margin so the box is strictly inactive
        let radius = 2.0 * (self.c * minority).sqrt() * 1.05 + 1.0;
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
        let objective = fdrop_objective_valued(&w, b, data, self.c, &budget)?;
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
/// `(w, b)`: the `k` form (unit values, budget `k`; [`fdrop_objective_valued`] for any values).
pub fn fdrop_objective(w: &[f64], b: f64, data: &Dataset, c: f64, k: usize) -> Result<f64> {
    objective(w, b, data, c, Deletion::TopK(k))
}

/// FDROP's objective `½‖w‖² + C Σ_i [1 − y_i(w·x_i + b) + max_σ Σ_j σ_j [y_i w_j x_ij]_+]_+`
/// at `(w, b)` against the values and budget of `budget`: `σ ∈ [0, 1]^n` with
/// `Σ_j σ_j v_j ≤ N`, the fractional knapsack (module docs). With unit values and an integer
/// `N` it is [`fdrop_objective`] with `k = N`, to the bit.
pub fn fdrop_objective_valued(
    w: &[f64],
    b: f64,
    data: &Dataset,
    c: f64,
    budget: &FeatureBudget,
) -> Result<f64> {
    if budget.n_features() != data.n_features() {
        return Err(Error::shape(
            "feature values vs data features",
            data.n_features(),
            budget.n_features(),
        )
        .into());
    }
    objective(w, b, data, c, Deletion::of(budget))
}

fn objective(w: &[f64], b: f64, data: &Dataset, c: f64, deletion: Deletion<'_>) -> Result<f64> {
    let y = data.binary_labels()?;
    if w.len() != data.n_features() {
        return Err(Error::shape("weights vs data features", data.n_features(), w.len()).into());
    }
    let mut loss = 0.0;
    let mut harms = Harms::default();
    for (i, yi) in y.iter().enumerate() {
        let (x, yi) = (data.row(i), yi.as_f64());
        harms.clear();
        for (j, v) in x.nonzeros() {
            harms.push(&deletion, j, yi * w[j] * v);
        }
        loss += harms.loss(&deletion, yi * (x.dot(w) + b));
    }
    Ok(0.5 * w.iter().map(|v| v * v).sum::<f64>() + c * loss)
}

/// FDROP's adversary: the `k` most harmful features (unit values and an integer budget), or
/// the fractional knapsack over the feature values (module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deletion<'a> {
    /// `Σ_{top k}` of the positive harms.
    TopK(usize),
    /// The values `v` and the budget `N`.
    Valued {
        /// `v_j`.
        values: &'a [f64],
        /// `N`.
        budget: f64,
    },
}

impl<'a> Deletion<'a> {
    /// The adversary of `budget`: [`Deletion::TopK`] when every value is 1 and the budget an
    /// integer (the `k` form's arithmetic, to the bit), else [`Deletion::Valued`].
    pub(crate) fn of(budget: &'a FeatureBudget) -> Self {
        let n = budget.budget();
        if n.fract() == 0.0 && budget.values().iter().all(|&v| v == 1.0) {
            Deletion::TopK(n as usize)
        } else {
            Deletion::Valued {
                values: budget.values(),
                budget: n,
            }
        }
    }
}

/// The positive harms `y w_j x_j` of one example, for [`Harms::loss`]; reused across examples.
#[derive(Debug, Default)]
pub(crate) struct Harms {
    /// [`Deletion::TopK`]: the harms.
    top: Vec<f64>,
    /// [`Deletion::Valued`]: `(harm, v_j)`.
    valued: Vec<(f64, f64)>,
}

impl Harms {
    /// Room for `n` features.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            top: Vec::with_capacity(n),
            valued: Vec::with_capacity(n),
        }
    }
    /// Forgets the last example's harms.
    pub(crate) fn clear(&mut self) {
        self.top.clear();
        self.valued.clear();
    }
    /// Records feature `j`'s harm `h = y w_j x_j` when it is positive.
    #[inline]
    pub(crate) fn push(&mut self, deletion: &Deletion<'_>, j: usize, h: f64) {
        if h > 0.0 {
            match deletion {
                Deletion::TopK(_) => self.top.push(h),
                Deletion::Valued { values, .. } => self.valued.push((h, values[j])),
            }
        }
    }
    /// The example's FDROP loss from its margin `y(w·x + b)` and the harms recorded (reordered).
    pub(crate) fn loss(&mut self, deletion: &Deletion<'_>, margin: f64) -> f64 {
        match *deletion {
            Deletion::TopK(k) => example_loss(margin, &mut self.top, k),
            Deletion::Valued { budget, .. } => {
                valued_example_loss(margin, &mut self.valued, budget)
            }
        }
    }
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

/// One example's value-weighted FDROP loss `[1 − y(w·x + b) + max_σ Σ_j σ_j h_j]_+`,
/// `σ ∈ [0, 1]^n`, `Σ_j σ_j v_j ≤ N`, from its margin and its positive harms with their values
/// `(h_j, v_j)` (reordered): the fractional knapsack, greedy by `h_j / v_j` (a feature of value
/// 0 is deleted for free), the last feature that does not fit deleted by the fraction left.
pub(crate) fn valued_example_loss(margin: f64, items: &mut [(f64, f64)], budget: f64) -> f64 {
    let ratio = |&(h, v): &(f64, f64)| if v > 0.0 { h / v } else { f64::INFINITY };
    items.sort_unstable_by(|a, b| ratio(b).total_cmp(&ratio(a)));
    let (mut left, mut top) = (budget, 0.0);
    for &(h, v) in items.iter() {
        if v <= left {
            top += h;
            left -= v;
        } else {
            top += h * (left / v);
            break;
        }
    }
    (1.0 - margin + top).max(0.0)
}
