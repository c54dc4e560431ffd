//! Centring: the complementarity right-hand sides of the predictor and the corrector, the σ
//! rule (Mehrotra's, with a larger exponent once the iterate is nearly feasible) and Gondzio's
//! multiple centrality correctors (Gondzio 1996; Colombo & Gondzio 2008).

use std::ops::Range;

use super::{DsxIpm, second_order};
use crate::layout::Lp4;

/// Whether Gondzio correctors pay off on `lp`. Each costs one more solve plus one
/// right-hand-side and one recovery pass over the examples and, tried only after short steps
/// ([`super::DsxIpmSettings::corrector_trigger`]), saves 10–25 % of the iterations.
/// Deterministic cost model (the same input always takes the same path), in units of one
/// scalar-pass flop: the feature space's Schur-complement flops at the measured rates of the
/// kernels (BLAS-3 ≈ 8, blocked sparse scatter ≈ 6 flops per scalar-pass flop) plus the dense
/// Cholesky, or the example space's dense `LDLᵀ` of order `2m + 1`, whichever is cheaper,
/// against ≈ 14 passes over the non-zeros and two sweeps of that factor per solve. They are
/// used when that ratio is at least `cost_ratio`
/// ([`super::DsxIpmSettings::corrector_cost_ratio`]; the measurements behind the default are
/// in `docs/design/deletion.md`). The model reads the shape only, not the method the normal
/// equations use, so a forced method takes the same path as the cost model's choice.
pub(super) fn correctors_pay_off(lp: &Lp4<'_>, cost_ratio: f64) -> bool {
    let (m, n1) = (lp.m() as f64, (lp.n() + 1) as f64);
    let sum_k2: f64 = (0..lp.m())
        .map(|i| {
            let k = lp.support_len(i) as f64;
            k * k
        })
        .sum();
    let gemm = lp.dense || 16.0 * sum_k2 >= m * n1 * n1;
    let passes = 14.0 * lp.nnz() as f64;
    let feature = if gemm {
        2.0 * m * n1 * n1 / 8.0
    } else {
        2.0 * sum_k2 / 6.0
    } + n1 * n1 * n1 / 24.0;
    let e1 = 2.0 * m + 1.0;
    let example = e1 * e1 * e1 / 24.0;
    let (factor, solve) = if feature <= example {
        (feature, passes + 2.0 * n1 * n1)
    } else {
        (example, passes + 2.0 * e1 * e1)
    };
    factor >= cost_ratio * solve
}

impl DsxIpm<'_> {
    /// The box part of the predictor's complementarity right-hand sides (`σ = 0`):
    /// `r_l = −(w + C)∘z_l`, `r_u = −(C − w)∘z_u`. The rows' and the tail's (`−s∘y`, `−u∘z`)
    /// enter `newton_rhs` and `recover` in closed form.
    pub(super) fn predictor_box_rhs(&mut self) {
        for j in 0..self.n {
            self.rl[j] = -self.pl[j] * self.zl[j];
            self.ru[j] = -self.pu[j] * self.zu[j];
        }
        // the caps: r_c = −(Λ − λ) z_c
        for k in 0..self.capped.len() {
            let i = self.capped[k];
            let lam = self.u[self.lam_index(i)];
            self.rc[i] = -(self.cap[i] - lam) * self.zc[i];
        }
    }

    /// The centring parameter `σ = (μ_aff/μ)^p`: the aggressive exponent
    /// ([`super::DsxIpmSettings::sigma_power`]) only while both infeasibilities (`infeas`, the
    /// larger relative residual) are at most the gap, Mehrotra's
    /// ([`super::DsxIpmSettings::mehrotra_power`]) otherwise.
    pub(super) fn sigma(&self, mu_aff: f64, mu: f64, infeas: f64, gap: f64) -> f64 {
        let power = if infeas <= gap {
            self.settings.sigma_power
        } else {
            self.settings.mehrotra_power
        };
        (mu_aff / mu).clamp(0.0, 1.0).powi(power)
    }

    /// The corrector's complementarity right-hand sides with Mehrotra's second-order term:
    /// `σμ − x∘z − Δx_aff∘Δz_aff` for every pair, `target = σμ`. Those of the rows and the tail
    /// are read in that form from the products the predictor's recovery stored (`so_target`);
    /// the box's and the caps' are computed here.
    pub(super) fn second_order_rhs(&mut self, target: f64) {
        self.so_target = Some(target);
        for j in 0..self.n {
            let dw = self.aff.u[j];
            self.rl[j] = target - self.pl[j] * self.zl[j] - dw * self.aff.zl[j];
            self.ru[j] = target - self.pu[j] * self.zu[j] + dw * self.aff.zu[j];
        }
        for k in 0..self.capped.len() {
            let i = self.capped[k];
            let l = self.lam_index(i);
            let (lam, dl) = (self.u[l], self.aff.u[l]);
            self.rc[i] = target - (self.cap[i] - lam) * self.zc[i] + dl * self.aff.zc[i];
        }
    }

    /// Gondzio's multiple centrality correctors after the corrector step `(ap, ad)` (before
    /// `η`): each costs one more solve with the same factorisation, is tried only after a short
    /// step ([`super::DsxIpmSettings::corrector_trigger`]) and is kept only when it lengthens the
    /// step ([`super::DsxIpmSettings::corrector_min_gain`],
    /// [`super::DsxIpmSettings::corrector_keep_fraction`]). Returns the step lengths of the
    /// direction kept in `self.dir`.
    pub(super) fn gondzio_correctors(
        &mut self,
        mut ap: f64,
        mut ad: f64,
        target: f64,
        tol: f64,
    ) -> (f64, f64) {
        let (trigger, gain) = (
            self.settings.corrector_trigger,
            self.settings.corrector_min_gain,
        );
        let keep = self.settings.corrector_keep_fraction;
        for _ in 0..self.max_correctors {
            if ap.min(ad) >= trigger {
                break;
            }
            self.centrality_rhs(ap, ad, target);
            let Ok((ap2, ad2, _)) = self.direction::<false>(true, tol) else {
                break;
            };
            if ap2.min(1.0) + ad2.min(1.0) >= ap.min(1.0) + ad.min(1.0) + gain
                && ap2 >= keep * ap
                && ad2 >= keep * ad
            {
                std::mem::swap(&mut self.aff, &mut self.dir);
                (ap, ad) = (ap2, ad2);
                self.correctors += 1;
            } else {
                break;
            }
        }
        (ap, ad)
    }

    /// Adds Gondzio's centrality correction to the complementarity right-hand sides: at the
    /// trial step `α̃ = min(1, α + δ)` along the current direction, products outside
    /// `[β_min σμ, β_max σμ]` are pulled back into it (Gondzio 1996; Colombo & Gondzio 2008).
    /// The box's and the caps' here; the rows' and the tail's in the next right-hand side's
    /// pass (`centrality`), which reads the same iterate and direction.
    fn centrality_rhs(&mut self, ap: f64, ad: f64, target: f64) {
        let st = &self.settings;
        let cen = Centrality {
            tp: (ap + st.corrector_step_increase).min(1.0),
            td: (ad + st.corrector_step_increase).min(1.0),
            lo: st.corrector_beta_min * target,
            hi: st.corrector_beta_max * target,
        };
        let d = &self.dir;
        let tp = cen.tp;
        for j in 0..self.n {
            let dw = tp * d.u[j];
            self.rl[j] += cen.clamp((self.pl[j] + dw) * (self.zl[j] + cen.td * d.zl[j]));
            self.ru[j] += cen.clamp((self.pu[j] - dw) * (self.zu[j] + cen.td * d.zu[j]));
        }
        for &i in &self.capped {
            let l = self.lam_index(i);
            let lam = self.u[l] + tp * d.u[l];
            self.rc[i] += cen.clamp((self.cap[i] - lam) * (self.zc[i] + cen.td * d.zc[i]));
        }
        self.centrality = Some(cen);
    }
}

/// A pending Gondzio correction (`DsxIpm::centrality_rhs`): the trial steps and the target box
/// `[lo, hi]` of the products.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Centrality {
    tp: f64,
    td: f64,
    lo: f64,
    hi: f64,
}

impl Centrality {
    /// The correction of a product `v` at the trial point: clamped into `[lo, hi]`, its decrease
    /// capped at `hi` (branch-free `if`s, no NaN checks).
    #[inline(always)]
    fn clamp(&self, v: f64) -> f64 {
        let (lo, hi) = (self.lo, self.hi);
        let t = if v < lo {
            lo
        } else if v > hi {
            hi
        } else {
            v
        };
        let d = t - v;
        if d < -hi { -hi } else { d }
    }

    /// Adds the correction of the pairs `(x_t, z_t)` along `(dx_t, dz_t)`, `t` in `range`, at
    /// the trial steps to their right-hand sides `r_t`; with `SO`, `r_t` holds the second-order
    /// product and becomes `target − x_t z_t − r_t` plus the correction (`DsxIpm::so_target`).
    #[inline(always)]
    pub(super) fn add_to<const SO: bool>(
        &self,
        target: f64,
        range: Range<usize>,
        r: &mut [f64],
        [x, dx, z, dz]: [&[f64]; 4],
    ) {
        for t in range {
            let c = self.clamp((x[t] + self.tp * dx[t]) * (z[t] + self.td * dz[t]));
            let base = if SO {
                second_order(target, x[t], z[t], r[t])
            } else {
                r[t]
            };
            r[t] = base + c;
        }
    }
}
