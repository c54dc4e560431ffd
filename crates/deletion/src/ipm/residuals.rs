//! Residuals, complementarity and the termination tests (module docs of [`crate::ipm`]).

use std::time::Instant;

use bulwark_lp::Status;

use super::kernels::inf_norm;
use super::parallel::{PARTS, chunks, jobs, parts, parts_mut};
use super::{Dir, DsxIpm, DsxIpmSettings, IpmOptions, rd_alpha};

impl DsxIpm<'_> {
    /// Complementarity `Σ (w + C)∘z_l + (C − w)∘z_u` of the box pairs and `Σ (Λ_i − λ_i) z_c,i` of
    /// the caps after steps `(ap, ad)` along `d` (`d = None`: at the current iterate). The rows
    /// and the tail are summed by [`DsxIpm::residuals`] and [`DsxIpm::recover`] in their passes.
    pub(super) fn box_complementarity(&self, d: Option<(&Dir, f64, f64)>) -> f64 {
        let mut sum = 0.0;
        for j in 0..self.n {
            let (pl, pu, zl, zu) = match d {
                None => (self.pl[j], self.pu[j], self.zl[j], self.zu[j]),
                Some((d, ap, ad)) => (
                    self.pl[j] + ap * d.u[j],
                    self.pu[j] - ap * d.u[j],
                    self.zl[j] + ad * d.zl[j],
                    self.zu[j] + ad * d.zu[j],
                ),
            };
            sum += pl * zl + pu * zu;
        }
        for &i in &self.capped {
            let l = self.lam_index(i);
            let (lam, zc) = match d {
                None => (self.u[l], self.zc[i]),
                Some((d, ap, ad)) => (self.u[l] + ap * d.u[l], self.zc[i] + ad * d.zc[i]),
            };
            sum += (self.cap[i] - lam) * zc;
        }
        sum
    }

    /// Number of complementarity pairs (rows, tail, both box sides, caps): `μ` is their mean.
    pub(super) fn n_pairs(&self) -> f64 {
        (self.rows + (self.len - self.t0()) + 2 * self.n + self.capped.len()) as f64
    }

    /// Residuals; returns `(pobj, dobj, pres, dres, gap)` and the complementarity
    /// `Σ s∘y + Σ u_t∘z_t` of the rows and the tail (the box pairs: [`DsxIpm::box_complementarity`]).
    pub(super) fn residuals(&mut self) -> ((f64, f64, f64, f64, f64), f64) {
        let lp = self.lp;
        let (n, c, t0) = (self.n, self.c_box, self.t0());
        let p = self.parts;
        // r_p = G u − s − h and r_d = c − Gᵀy − Z (module docs; G's rows as in DSX eq. (4)),
        // fused into one pass over the examples per block; per block: Gᵀy on (w, b), hᵀy,
        // Σ ξ_i and the two ∞-norms (tail part of r_d)
        let (s, y) = (parts(&self.s, &p.rows), parts(&self.y, &p.rows));
        let h_a = &self.h_a;
        let rows_b = super::rows_b!(self);
        let (u_w, u_t) = self.u.split_at(t0);
        let (u_t, z_t) = (parts(u_t, &p.tail), parts(&self.z[t0..], &p.tail));
        let mut rp_a = parts_mut(&mut self.rp_a, &p.ex);
        let mut rd_lam = parts_mut(&mut self.rd_lam, &p.ex);
        let mut rd_xi = parts_mut(&mut self.rd_xi, &p.ex);
        let zc = parts(&self.zc, &p.ex);
        let mut wacc = chunks(&mut self.wacc, n);
        // per block: [b part of Gᵀy, hᵀy, Σ ξ, ‖r_p‖∞, ‖r_d tail‖∞, Σ s∘y + u∘z]
        let mut sums = [[0.0f64; 6]; PARTS];
        let mut slots = chunks(&mut sums, 1);
        let (xs_all, cx) = (self.sys.values(), self.sys.scale());
        let inv_lam_scale = 1.0 / self.lam_scale;
        let work = jobs(|k| {
            (
                k,
                (s[k], y[k], u_t[k], z_t[k], zc[k]),
                std::mem::take(&mut rp_a[k]),
                (
                    std::mem::take(&mut rd_lam[k]),
                    std::mem::take(&mut rd_xi[k]),
                ),
                std::mem::take(&mut wacc[k]),
                std::mem::take(&mut slots[k]),
            )
        });
        self.exec.run(
            work,
            |(k, (s, y, u, z, zc), rp_a, (rd_lam, rd_xi), acc, slot)| {
                let e0 = p.ex[k];
                acc.fill(0.0);
                let (mut gb, mut hy, mut xi, mut np, mut nd) = (0.0, 0.0, 0.0, 0.0f64, 0.0f64);
                let mut cp = 0.0;
                // x·0 is NaN exactly for non-finite x: the norms turn NaN on any non-finite entry
                let mut bad = 0.0;
                let wb = u_w[n];
                for i in e0..p.ex[k + 1] {
                    let (r0, a0) = p.local(lp, k, i);
                    let kk = lp.support_len(i);
                    let nz = lp.indptr[i]..lp.indptr[i + 1];
                    // `y_i s x_ij` as `y_i` times the system's `s x_ij` (the same bits)
                    let (cols, xs, yi) = (lp.cols(i), &xs_all[nz], lp.y[i]);
                    let (lam, xii) = (u[a0 + kk], u[a0 + kk + 1]);
                    let ya = y[r0];
                    let mut act = self.lam_p[i] * lam + lp.y[i] * wb + xii;
                    let mut glam = self.lam_p[i] * ya;
                    for t in 0..kk {
                        let j = if lp.dense { t } else { cols[t] };
                        let (alpha, yb) = (u[a0 + t], y[r0 + 1 + t]);
                        act -= alpha;
                        let hb = rows_b.h(j, cx * xs[t]);
                        let cyx = yi * (cx * xs[t]);
                        let r = rows_b.rp(j, cyx * u_w[j], lam, alpha, s[r0 + 1 + t], hb);
                        np = np.max(r.abs());
                        bad += r * 0.0;
                        acc[j] += cyx * yb;
                        glam -= self.lam_v[j] * yb;
                        let d = rd_alpha(ya, yb, z[a0 + t]);
                        cp += s[r0 + 1 + t] * yb + alpha * z[a0 + t];
                        nd = nd.max(d.abs());
                        bad += d * 0.0;
                        hy += hb * yb;
                    }
                    let r = act - s[r0] - h_a[i];
                    rp_a[i - e0] = r;
                    // (a cap's dual enters λ's equation: 0 without one)
                    let dl = -glam - z[a0 + kk] + zc[i - e0];
                    let dx = 1.0 - ya - z[a0 + kk + 1];
                    rd_lam[i - e0] = dl;
                    rd_xi[i - e0] = dx;
                    np = np.max(r.abs());
                    // λ's component relative to its column's size (module docs)
                    nd = nd.max(dl.abs() * inv_lam_scale).max(dx.abs());
                    bad += (r + dl + dx) * 0.0;
                    hy += h_a[i] * ya;
                    gb += lp.y[i] * ya;
                    xi += xii;
                    cp += s[r0] * ya + lam * z[a0 + kk] + xii * z[a0 + kk + 1];
                }
                if bad.is_nan() {
                    (np, nd) = (f64::NAN, f64::NAN);
                }
                slot[0] = [gb, hy, xi, np, nd, cp];
            },
        );
        let (mut gb, mut dobj, mut pobj, mut np, mut nd) = (0.0, 0.0, 0.0, 0.0f64, 0.0f64);
        let mut comp = 0.0;
        for [b, hy, xi, p_norm, d_norm, cp] in sums {
            gb += b;
            comp += cp;
            dobj += hy;
            pobj += xi;
            // NaN-propagating maxima
            np = if p_norm.is_nan() || np.is_nan() {
                f64::NAN
            } else {
                np.max(p_norm)
            };
            nd = if d_norm.is_nan() || nd.is_nan() {
                f64::NAN
            } else {
                nd.max(d_norm)
            };
        }
        let rd_w = &mut self.rd_w;
        rd_w[..n].fill(0.0);
        for acc in self.wacc.chunks_exact(n) {
            for (o, a) in rd_w[..n].iter_mut().zip(acc) {
                *o += a;
            }
        }
        // a quadratic term (q/2)‖w‖² adds q w to w's dual residual, to the primal objective and
        // −(q/2)‖w‖² to the dual's (the QP's Wolfe dual; module docs, *FDROP*)
        let q = self.quad;
        let mut ww = 0.0;
        for j in 0..n {
            let w = self.u[j];
            rd_w[j] = q * w - rd_w[j] - (self.zl[j] - self.zu[j]);
            dobj -= c * (self.zl[j] + self.zu[j]);
            ww += w * w;
        }
        pobj += 0.5 * q * ww;
        dobj -= 0.5 * q * ww;
        for &i in &self.capped {
            dobj -= self.cap[i] * self.zc[i];
        }
        rd_w[n] = -gb;
        let pres = np / (1.0 + self.h_norm);
        let nw = inf_norm(&self.rd_w);
        let dres = if nw.is_nan() || nd.is_nan() {
            f64::NAN
        } else {
            nw.max(nd) / 2.0
        };
        let gap = (pobj - dobj).abs() / (1.0 + pobj.abs());
        ((pobj, dobj, pres, dres, gap), comp)
    }
}

/// The termination tests of the main loop and the state they keep. LP (4) is always feasible
/// and bounded, so a run ends optimal, at a limit, or with a numerical error.
pub(super) struct Termination {
    opts: IpmOptions,
    divergence_factor: f64,
    /// Refinement on the dual equations is on.
    refinement: bool,
    /// The gap below which a growing dual residual stops the run: the tolerance, or the
    /// final phase of the refinement (`refine_within` times it) when refinement is on — once
    /// refinement cannot hold the dual residual, the directions are no longer reliable.
    divergence_gap: f64,
    stall_step: f64,
    max_stalls: u32,
    /// Smallest dual residual seen (for the divergence test).
    best_dres: f64,
    /// Consecutive steps below `stall_step`.
    stalls: u32,
}

/// Why a run stops: its status and, when there is more to say, the reason.
type Stop = Option<(Status, Option<String>)>;

impl Termination {
    pub(super) fn new(opts: IpmOptions, settings: &DsxIpmSettings) -> Self {
        Self {
            opts,
            divergence_factor: settings.divergence_factor,
            refinement: settings.dual_refinement,
            divergence_gap: if settings.dual_refinement {
                opts.tolerance * settings.refine_within.max(1.0)
            } else {
                opts.tolerance
            },
            stall_step: settings.stall_step,
            max_stalls: settings.max_stalls,
            best_dres: f64::INFINITY,
            stalls: 0,
        }
    }

    /// The tests on the relative residuals `(pres, dres, gap)` of the iterate after `iter`
    /// iterations (`refined`: the last step was along a direction refined on the dual
    /// equations; `start`: when the solve began).
    pub(super) fn check(
        &mut self,
        iter: u32,
        (pres, dres, gap): (f64, f64, f64),
        refined: bool,
        start: &Instant,
    ) -> Stop {
        let tol = self.opts.tolerance;
        if !(pres.is_finite() && dres.is_finite() && gap.is_finite()) {
            return Some((Status::NumericalError, Some("non-finite residuals".into())));
        }
        if pres <= tol && dres <= tol && gap <= tol {
            return Some((Status::Optimal, None));
        }
        // Final-phase breakdown: the gap and the primal residual have (nearly) converged but the
        // dual residual grows again as `H` becomes too ill-conditioned for the solves, and
        // (with refinement) refinement could not hold it (tiny sparse fits of the `stress`
        // sweep). Further iterations only make it worse: stop now, so the caller's fallback
        // starts at once. With refinement on, only once it has been tried: a step along an
        // unrefined direction can land in the final phase with a dual residual that the next,
        // refined directions remove (the jump itself makes refinement start: `Refinement`).
        let best = self.best_dres;
        if gap <= self.divergence_gap
            && (refined || !self.refinement)
            && pres <= tol
            && dres > self.divergence_factor * best.max(tol)
        {
            let reason =
                format!("dual residual diverging at the optimum ({dres:.2e}, best {best:.2e})");
            return Some((Status::NumericalError, Some(reason)));
        }
        self.best_dres = best.min(dres);
        if iter >= self.opts.max_iter {
            return Some((Status::IterationLimit, None));
        }
        if start.elapsed().as_secs_f64() > self.opts.time_limit {
            return Some((Status::TimeLimit, None));
        }
        None
    }

    /// The stall test on the step `min(α_P, α_D)` about to be taken.
    pub(super) fn check_step(&mut self, step: f64) -> Stop {
        if step < self.stall_step {
            self.stalls += 1;
            if self.stalls >= self.max_stalls {
                let reason = format!("{} step lengths below {:e}", self.stalls, self.stall_step);
                return Some((Status::NumericalError, Some(reason)));
            }
        } else {
            self.stalls = 0;
        }
        None
    }
}
