//! GURU, Ginodi Algorithm 1: stochastic gradient descent on (2.22) with step `η₀/√t`.
//!
//! As printed, with the choices the thesis leaves open made explicit:
//! - `w = 0` at the start, where the gradient is its limit `−y x` (the loss is not
//!   differentiable at 0; the limit is the thesis's "removable discontinuity");
//! - `t = 1, 2, …` (Algorithm 2 prints `t = 0`, a division by zero);
//! - examples drawn uniformly with replacement from a ChaCha8 generator seeded by `seed`;
//!   a weighted example's gradient is multiplied by its weight;
//! - **stopping rule** (the thesis's "ΔL ≥ ε" is undefined): at the end of epoch `k` of `M`
//!   steps, for `k = 1, 2, …, 8` and then every `⌊k/8⌋` epochs (so checks cost a bounded
//!   fraction of the run, and a run stops at most 12.5 % of its epochs after the first epoch it
//!   could have), the full objective `G` and the duality certificate are computed.
//!   The solver keeps the epoch-end iterate with the smallest `G` and the largest dual value
//!   seen at any check (each is a valid lower bound on `min G`), and stops when
//!   `(G_best − D_best)/G_best ≤ tolerance`, or after `max_epochs` epochs, unconverged;
//!   it returns the best checked point, whose reported gap is therefore a certified bound.
//! - **suffix averaging** (not in the thesis): the check also evaluates the average of the
//!   epoch-end iterates since the last power-of-two epoch (epochs `2^j..k`, about the last half
//!   of the run), and the best of both candidates is kept. With steps `η₀/√t` the last iterate
//!   of a smooth, strictly convex problem keeps oscillating at the scale of the step, while the
//!   average converges at the optimal rate (Polyak & Juditsky 1992; Bach & Moulines 2011). On
//!   Ionosphere, splice and USPS 3 vs 5 it lowers the gap reached in 3000 epochs by 2–10× for
//!   `η₀ ≥ 1/4` (docs/design/gaussian.md); it does not rescue `σ` near the hinge.
//! - **ray step** (not in the thesis): each checked candidate is moved to the minimiser of `G`
//!   on its ray, `τw` (a one-dimensional convex problem solved on the candidate's margins,
//!   which scale with it: no pass over the data), when that lowers `G`; the moved point is
//!   what the check records and what the solver returns. The SGD's iterates themselves are
//!   not moved. At that point `G = Σ c_m f̃'(u_m)` exactly (the dual objective at the
//!   certificate's `α`), so the certified gap is only what making `α` feasible costs — second
//!   order in the direction's error, where at an arbitrary point it is first order in the
//!   norm's. `η₀/√t` steps are slowest at growing `‖w‖`, which the ray step does at once.
//! - **certificate** (not in the thesis): near the hinge (small `σ`) the dual feasible set is
//!   thin, and scaling the checked point's `α` into it loses most of `Σ α` (a certified gap
//!   near 1 at a point 1e-5 above the optimum). After a check whose gap misses the tolerance,
//!   the best point's dual point is corrected by Newton rounds on its optimality condition
//!   ([`Objective::certificate_corrected`]): once per best point, again when an attempt ran
//!   out of budget, with the corrections' passes over the data kept at most the epochs run (so
//!   a run costs at most twice its epochs' passes; the report counts them). The correction
//!   only raises the dual bound: the iterates and the returned point are the SGD's.
//!
//! With the Euclidean norm a step costs `O(nnz(x_m))`: `w` is held as `s·v`, the update
//! `w ← (1 − ηcσ r(u)/‖w‖) w + ηc y f̃'(u) x` scales `s` and adds to `v`, and `‖w‖²` is updated
//! from `wᵀx` and `‖x‖²` (recomputed exactly at every check). With the max norm a step is
//! `O(n)` (the largest `|w_i|` is recomputed).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::algorithm::Outcome;
use crate::batch::onto_ray_minimum;
use crate::loss::NoiseNorm;
use crate::loss::first_argmax_abs;
use crate::objective::{Certificate, CorrectionScratch, Objective};

/// The fewest passes a correction of the certificate is started with.
const CORRECTION_MIN_BUDGET: usize = 4;

pub(crate) fn solve(
    obj: &Objective<'_>,
    eta0: f64,
    seed: u64,
    tolerance: f64,
    max_epochs: usize,
) -> Outcome {
    let (m, dim) = (obj.len(), obj.dim());
    let spec = obj.spec();
    let (sigma, loss) = (spec.sigma, spec.loss);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let row_sq: Vec<f64> = (0..m).map(|i| obj.row_norm_sq(i)).collect();
    let mut v = vec![0.0; dim];
    let mut s = 1.0_f64;
    let mut nsq = 0.0_f64;
    let mut t: u64 = 1;
    let mut w = vec![0.0; dim];
    let mut b = vec![0.0; m];
    let mut dual_v = vec![0.0; dim];
    let mut grad = vec![0.0; dim];
    let mut along = vec![0.0; m];
    let mut ray = vec![0.0; dim];
    let mut checks = EpochChecks::new(dim);
    let mut scratch = CorrectionScratch::default();
    let mut passes = 0;
    let mut converged = false;
    let mut epochs = 0;
    let euclid = spec.norm == NoiseNorm::L2;

    while epochs < max_epochs {
        epochs += 1;
        for _ in 0..m {
            let i = rng.random_range(0..m);
            let c = obj.weight(i);
            let y = obj.label(i);
            let eta = eta0 / (t as f64).sqrt();
            t += 1;
            if euclid {
                let p = s * obj.dot(i, &v);
                let bi = 1.0 - y * p;
                let n = nsq.sqrt();
                // w ← shrink·w + coef·x  (Ginodi (2.25) with the gradient (2.26))
                let (shrink, coef) = if n > 0.0 {
                    let u = bi / (sigma * n);
                    (
                        1.0 - eta * c * sigma * loss.scale_derivative(u) / n,
                        eta * c * y * loss.d1(u),
                    )
                } else {
                    // the w = 0 limit: b = 1 > 0, gradient −y x
                    (1.0, eta * c * y)
                };
                nsq = (shrink * shrink * nsq + 2.0 * shrink * coef * p + coef * coef * row_sq[i])
                    .max(0.0);
                s *= shrink;
                if s == 0.0 {
                    v.fill(0.0);
                    s = 1.0;
                    nsq = 0.0;
                }
                if coef != 0.0 {
                    obj.axpy(i, coef / s, &mut v);
                }
                if !(1e-150..=1e150).contains(&s.abs()) {
                    for x in v.iter_mut() {
                        *x *= s;
                    }
                    s = 1.0;
                }
            } else {
                let p = obj.dot(i, &v);
                let bi = 1.0 - y * p;
                let n = spec.norm.of(&v);
                if n > 0.0 {
                    let u = bi / (sigma * n);
                    let coef = eta * c * y * loss.d1(u);
                    // the subgradient of ‖w‖∞ at the first largest |w_k| (Appendix B)
                    let k = first_argmax_abs(&v);
                    v[k] -= eta * c * sigma * loss.scale_derivative(u) * v[k].signum();
                    obj.axpy(i, coef, &mut v);
                } else {
                    obj.axpy(i, eta * c * y, &mut v);
                }
            }
        }
        // the check: G, the certificate, the best iterate and the best dual bound
        for (w, v) in w.iter_mut().zip(&v) {
            *w = s * v;
        }
        if euclid {
            nsq = w.iter().map(|x| x * x).sum();
        }
        if !checks.end_epoch(epochs, &w, epochs == max_epochs) {
            continue;
        }
        for which in 0..checks.candidates() {
            let cand = checks.candidate(which, &w);
            let mut value = obj.value_into(cand, &mut b);
            // the candidate moved to the minimum of G on its ray (module docs, *ray step*)
            let norm = spec.norm.of(cand);
            let moved = onto_ray_minimum(obj, cand, &mut ray, norm, value, &mut b, &mut along);
            let on_ray = moved.is_some();
            if let Some((_, moved)) = moved {
                value = moved;
            }
            let point = if on_ray { &ray[..] } else { cand };
            obj.gradient_from(point, &b, &mut dual_v, &mut grad);
            grad.fill(0.0);
            passes += 3;
            let cert = obj.certificate(point, &b, &dual_v, value);
            if on_ray {
                checks.offer_point(&ray, cert);
            } else {
                checks.offer(which, &w, cert);
            }
        }
        let mut gap = checks.settle();
        // the best point's dual point corrected (the module docs, *certificate*), once per
        // best point (again when an attempt ran out of budget), the corrections costing at
        // most as many passes as the epochs run
        let budget = epochs.saturating_sub(scratch.passes());
        if gap > tolerance && !checks.corrected && budget >= CORRECTION_MIN_BUDGET {
            ray.copy_from_slice(checks.best_point());
            let value = obj.value_into(&ray, &mut b);
            obj.gradient_from(&ray, &b, &mut dual_v, &mut grad);
            grad.fill(0.0);
            passes += 2;
            let plain = obj.certificate(&ray, &b, &dual_v, value);
            let cert = obj.certificate_corrected(
                plain,
                &ray,
                &b,
                &dual_v,
                tolerance,
                budget,
                &mut scratch,
            );
            checks.offer_dual(cert.dual);
            checks.corrected = !scratch.exhausted();
            gap = checks.settle();
        }
        if gap <= tolerance {
            converged = true;
            break;
        }
    }
    let (best_w, best) = checks.into_best();
    Outcome {
        w: best_w,
        certificate: best,
        iterations: t - 1,
        passes: passes + epochs + scratch.passes(),
        converged,
        stopped: (!converged).then(|| format!("epoch limit {max_epochs} reached")),
        solver: "guru-sgd",
        count: ("epochs", epochs as f64),
    }
}

/// The epoch-end bookkeeping of GURU's SGD (and KEN-GURU's): the suffix average of the
/// epoch-end iterates since the last power-of-two epoch, the check schedule (epochs 1–8, then
/// every `⌊k/8⌋`), and the best checked iterate with the largest dual bound seen.
pub(crate) struct EpochChecks {
    avg: Vec<f64>,
    avg_count: usize,
    avg_reset: usize,
    next_check: usize,
    best: Certificate,
    best_dual: f64,
    best_x: Vec<f64>,
    /// Whether the best point's dual point has been corrected (GURU's SGD).
    pub(crate) corrected: bool,
}

impl EpochChecks {
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            avg: vec![0.0; dim],
            avg_count: 0,
            avg_reset: 1,
            next_check: 1,
            best: Certificate {
                primal: f64::INFINITY,
                dual: 0.0,
                relative_gap: 1.0,
                scale: 0.0,
                constraint_residual: f64::INFINITY,
            },
            best_dual: 0.0,
            best_x: vec![0.0; dim],
            corrected: false,
        }
    }

    /// Adds the iterate `x` at the end of epoch `epoch` to the average; whether a check is due
    /// (always on the `last` epoch).
    pub(crate) fn end_epoch(&mut self, epoch: usize, x: &[f64], last: bool) -> bool {
        if epoch == self.avg_reset {
            self.avg.fill(0.0);
            self.avg_count = 0;
            self.avg_reset *= 2;
        }
        self.avg_count += 1;
        let k = self.avg_count as f64;
        for (a, v) in self.avg.iter_mut().zip(x) {
            *a += (v - *a) / k;
        }
        if epoch < self.next_check && !last {
            return false;
        }
        self.next_check = epoch + (epoch / 8).max(1);
        true
    }

    /// The candidates of a check: the iterate, and the average once it has two terms.
    pub(crate) fn candidates(&self) -> usize {
        if self.avg_count > 1 { 2 } else { 1 }
    }

    /// Candidate `which` (0: the iterate `x`, 1: the average).
    pub(crate) fn candidate<'a>(&'a self, which: usize, x: &'a [f64]) -> &'a [f64] {
        if which == 0 { x } else { &self.avg }
    }

    /// Records the certificate of candidate `which`: its dual bound always, the candidate
    /// itself when its objective is the smallest so far.
    pub(crate) fn offer(&mut self, which: usize, x: &[f64], cert: Certificate) {
        self.best_dual = self.best_dual.max(cert.dual);
        if cert.primal < self.best.primal {
            self.best = cert;
            let src = if which == 0 { x } else { &self.avg };
            self.best_x.copy_from_slice(src);
            self.corrected = false;
        }
    }

    /// [`EpochChecks::offer`] for a point derived from a candidate (e.g. moved along its ray).
    pub(crate) fn offer_point(&mut self, point: &[f64], cert: Certificate) {
        self.best_dual = self.best_dual.max(cert.dual);
        if cert.primal < self.best.primal {
            self.best = cert;
            self.best_x.copy_from_slice(point);
            self.corrected = false;
        }
    }

    /// Records a dual bound found for the best point.
    pub(crate) fn offer_dual(&mut self, dual: f64) {
        self.best_dual = self.best_dual.max(dual);
    }

    /// The best checked point so far.
    pub(crate) fn best_point(&self) -> &[f64] {
        &self.best_x
    }

    /// The best iterate's certificate with the best dual bound; returns its relative gap.
    pub(crate) fn settle(&mut self) -> f64 {
        let best = &mut self.best;
        best.dual = self.best_dual;
        best.relative_gap = if best.primal > 0.0 {
            ((best.primal - self.best_dual) / best.primal).max(0.0)
        } else {
            0.0
        };
        best.relative_gap
    }

    /// The smallest objective checked so far.
    pub(crate) fn best_primal(&self) -> f64 {
        self.best.primal
    }

    /// The best iterate and its certificate.
    pub(crate) fn into_best(self) -> (Vec<f64>, Certificate) {
        (self.best_x, self.best)
    }
}
