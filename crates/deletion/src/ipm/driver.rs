//! The main loop: starting point, then per iteration the residuals and termination tests, one
//! factorisation of `H`, the predictor, the centring and corrector, Gondzio's correctors and the
//! step (module docs of [`crate::ipm`]).

use std::time::Instant;

use bulwark_lp::{IterationInfo, Status};

use super::certificate::Certificate;
use super::refine::Refinement;
use super::residuals::Termination;
use super::{DsxIpm, IpmOptions, IpmOutcome, IterateCheck, Progress};
use crate::error::{DeletionError, Result};

/// The iterate certified closest to optimal so far (module docs of [`crate::ipm`], *Almost
/// optimal*): its certificate, its primal and dual residuals, and its iteration; its `(w, b)`
/// is in [`DsxIpm::best_wb`].
#[derive(Clone, Copy)]
struct Best {
    cert: Certificate,
    pres: f64,
    dres: f64,
    iter: u32,
}

/// The fewest iterations the structured IPM is predicted to need, for the time check at the
/// start of a solve (it took 24 or more on every LP of the bench).
const MIN_ITERATIONS: u32 = 15;

impl DsxIpm<'_> {
    /// Starting point: `w = 0` (the centre of the box), `b = 0`, and every other primal
    /// variable, row slack and dual equal to [`super::DsxIpmSettings::start`]. Infeasible,
    /// which the method allows; well centred (every product `start²`, the box products
    /// `start`).
    fn start(&mut self) {
        let t0 = self.t0();
        let start = self.settings.start;
        self.u[..t0].fill(0.0);
        self.u[t0..].fill(start);
        self.s.fill(start);
        self.y.fill(start);
        self.z[t0..].fill(start);
        self.zl.fill(start);
        self.zu.fill(start);
        // w = 0: both box slacks are C (`c_box` = C/s in the working variables)
        self.pl.fill(self.c_box);
        self.pu.fill(self.c_box);
        for k in 0..self.capped.len() {
            self.zc[self.capped[k]] = start;
        }
        if self.lam_fixed {
            // λ out of the rows (module docs, *Zero budget*): the rows `b_ij` have right-hand
            // sides `h_b = v_j/P + |C x_ij|`, as large as the data (2.5e4 for raw USPS pixels at
            // C = 100), which the constant start would leave as its primal residual (its first
            // steps then shrink below 1e-8). Start `α_ij` at `start + h_b`, which satisfies
            // `b_ij` at `w = 0` with `s_ij = start`, and its dual at `start²/α_ij`, which keeps
            // the pair's product at `start²`.
            let rb = super::rows_b!(self);
            let (xs_all, cx) = (self.sys.values(), self.sys.scale());
            for i in 0..self.m {
                let a0 = self.lp.var_offset(i);
                let xs = &xs_all[self.lp.indptr[i]..self.lp.indptr[i + 1]];
                for (t, &x) in xs.iter().enumerate() {
                    let alpha = start + rb.h(self.lp.col(i, t), cx * x);
                    self.u[a0 + t] = alpha;
                    self.z[a0 + t] = start * start / alpha;
                }
            }
        }
    }

    /// The step lengths taken: separate primal and dual steps for LP (4); with a quadratic
    /// term both the smaller one, since `w`'s dual residual depends on the primal `w` too (a
    /// dual step longer than the primal one would not remove its share of it).
    fn common_step(&self, ap: f64, ad: f64) -> (f64, f64) {
        if self.quad > 0.0 {
            let a = ap.min(ad);
            (a, a)
        } else {
            (ap, ad)
        }
    }

    /// Runs the method; `check` may end it at an iterate ([`IterateCheck`]).
    pub(crate) fn solve(
        mut self,
        opts: IpmOptions,
        progress: Option<Progress<'_>>,
        check: Option<IterateCheck<'_>>,
    ) -> Result<IpmOutcome> {
        self.run_checked(opts, progress, check)
    }

    /// Runs the method, keeping the final iterate in `self` (for tests).
    #[cfg(test)]
    pub(super) fn run(
        &mut self,
        opts: IpmOptions,
        progress: Option<Progress<'_>>,
    ) -> Result<IpmOutcome> {
        self.run_checked(opts, progress, None)
    }

    fn run_checked(
        &mut self,
        opts: IpmOptions,
        mut progress: Option<Progress<'_>>,
        mut check: Option<IterateCheck<'_>>,
    ) -> Result<IpmOutcome> {
        let start = Instant::now();
        // a solve the cost model predicts to outlast the time limit ends at once
        let plan = self.sys.normal_equations_plan();
        let per_factor = plan.estimate(self.sys.normal_equations()).seconds;
        if let Some(per_factor) = per_factor {
            let threads = self.sys.settings().threads.clamp(1, 2) as f64;
            let at_least = per_factor * f64::from(MIN_ITERATIONS) / threads;
            if opts.time_limit.is_finite() && at_least > opts.time_limit {
                return Err(DeletionError::TooSlow {
                    plan: Box::new(plan.clone()),
                    method: self.sys.normal_equations(),
                    seconds: at_least,
                    time_limit: opts.time_limit,
                });
            }
        }
        let n = self.n;
        let inv_m = 1.0 / self.m as f64;
        self.start();
        let npairs = self.n_pairs();
        let mut iter = 0u32;
        let (mut sigma, mut step) = (0.0, 0.0);
        let mut status;
        let mut reason;
        let mut last;
        let mut stop = Termination::new(opts, &self.settings);
        let mut refine = Refinement::default();
        let mut repaired_from = None;
        // the iterate certified closest to optimal (module docs, *Almost optimal*)
        let mut best: Option<Best> = None;
        let accept = self.settings.accept_within * opts.tolerance;
        let mut ended_by_check = false;
        loop {
            let ((pobj, dobj, pres, dres, gap), comp) = self.residuals();
            let mu = (comp + self.box_complementarity(None)) / npairs;
            self.rp_zero = pres <= self.settings.primal_rounding;
            last = (pobj, dobj, pres, dres, gap);
            let info = IterationInfo {
                iter,
                pobj: pobj * inv_m,
                dobj: dobj * inv_m,
                pres,
                dres,
                gap,
                mu,
                sigma,
                step,
                tau: 1.0,
                kappa: 0.0,
                seconds: start.elapsed().as_secs_f64(),
            };
            if let Some(cb) = progress.as_mut()
                && cb(&info).is_break()
            {
                status = Status::TimeLimit;
                reason = Some("cancelled by the callback".into());
                break;
            }
            // the caller's check of the iterate's (w, b), on the caller's scale (`qbufs` is free
            // between the passes)
            if let Some(check) = check.as_mut() {
                let w = &mut self.qbufs[..n];
                for (o, &u) in w.iter_mut().zip(&self.u[..n]) {
                    *o = self.w_scale * u;
                }
                if check(w, self.u[n], gap, pres) {
                    status = Status::TimeLimit;
                    reason = Some("ended by the caller's check of the iterate".into());
                    ended_by_check = true;
                    break;
                }
            }
            // the certificate of an iterate near the optimum that misses a test (module docs,
            // *Certificate*)
            let tol = opts.tolerance;
            if pres <= tol && gap <= self.settings.certify_within * tol && (dres > tol || gap > tol)
            {
                // (FDROP's QP has its own: module docs, *FDROP*)
                let cert = if self.quad > 0.0 {
                    self.fdrop_certificate()
                } else {
                    self.certificate()
                };
                if cert.holds(tol) {
                    last = cert.outcome(pres);
                    repaired_from = Some(dres);
                    (status, reason) = (Status::Optimal, None);
                    break;
                }
                if cert.gap.max(cert.dual_residual) <= accept
                    && best.is_none_or(|b| cert.gap < b.cert.gap)
                {
                    best = Some(Best {
                        cert,
                        pres,
                        dres,
                        iter,
                    });
                    self.best_wb.copy_from_slice(&self.u[..=n]);
                }
            }
            if let Some((s, r)) = stop.check(iter, (pres, dres, gap), refine.refined(), &start) {
                (status, reason) = (s, r);
                break;
            }
            iter += 1;
            if let Err(e) = self.restore_regularization().and_then(|()| self.factor()) {
                status = Status::NumericalError;
                reason = Some(format!("factorisation failed: {e}"));
                break;
            }
            // linear-solve accuracy (relative to the right-hand side): well below the residuals
            // still to remove. (An absolute target on the dual residual was tried: it made the
            // solves 5-10x slower at MNIST scale without curing the breakdowns, which the
            // fallback chain in `fit.rs` handles.)
            let st = &self.settings;
            let tol = (st.solve_accuracy * pres.max(dres).max(gap))
                .clamp(st.solve_tol_min, st.solve_tol_max);
            // predictor (σ = 0)
            // (r_s = −s∘y and r_t = −u∘z enter `newton_rhs` and `recover` in closed form)
            // A non-finite `(w, b)` part (the solves with a factor of a nearly singular `S`
            // overflowed) re-factors with a raised regularisation (module docs,
            // *Regularisation*).
            let predictor = loop {
                self.predictor_box_rhs();
                match self.direction::<true>(true, tol) {
                    Ok(steps) if self.aff.u[..=n].iter().all(|v| v.is_finite()) => break Ok(steps),
                    Ok(_) if self.boost < super::normal_equations::MAX_BOOST => {
                        if let Err(e) = self.refactor_raised(self.boost + 1) {
                            break Err(format!("factorisation failed: {e}"));
                        }
                    }
                    Ok(_) => {
                        break Err(format!(
                            "non-finite Newton direction with the dynamic regularisation raised \
                             {} times",
                            self.boost
                        ));
                    }
                    Err(e) => break Err(format!("solve failed: {e}")),
                }
            };
            let (ap, ad, [ys, dsdy]) = match predictor {
                Ok(steps) => steps,
                Err(why) => {
                    status = Status::NumericalError;
                    reason = Some(why);
                    break;
                }
            };
            let (ap, ad) = self.common_step(ap.min(1.0), ad.min(1.0));
            // Σ (s + aΔs)∘(y + bΔy) over the rows and the tail is
            // comp + a Σ y∘Δs + b Σ s∘Δy + ab Σ Δs∘Δy, with s∘Δy = −s∘y − y∘Δs on the affine
            // direction (its sums come from `recover`)
            let rows_tail = comp + ap * ys - ad * (comp + ys) + ap * ad * dsdy;
            let box_aff = self.box_complementarity(Some((&self.aff, ap, ad)));
            let mu_aff = (rows_tail + box_aff) / npairs;
            sigma = self.sigma(mu_aff, mu, pres.max(dres), gap);
            let target = sigma * mu;
            self.second_order_rhs(target);
            let (ap, ad) = match self.direction::<false>(false, tol) {
                Ok((ap, ad, _)) => (ap, ad),
                Err(e) => {
                    status = Status::NumericalError;
                    reason = Some(format!("solve failed: {e}"));
                    break;
                }
            };
            let (mut ap, mut ad) = self.gondzio_correctors(ap, ad, target, tol);
            let refining = refine.now(&self.settings, opts.tolerance, (pres, dres, gap));
            if refining {
                match self.refine_dual(tol, opts.tolerance, (ap, ad)) {
                    Ok((steps, defect)) => {
                        (ap, ad) = steps;
                        // A dual step `α` leaves a dual residual of about
                        // `(1 − α) dres + α defect`: once the dual residual is below the
                        // tolerance and refinement could not bring the direction's defect there
                        // (`H` too ill-conditioned near the optimum), keep it below and let the
                        // primal step close the gap — unless the certificate holds at the
                        // point the uncapped step reaches (module docs, *Certificate*), which
                        // then ends the run.
                        let tol_ipm = opts.tolerance;
                        if dres < tol_ipm && defect > tol_ipm {
                            let capped = 0.5 * (tol_ipm - dres) / (defect - dres);
                            if capped < ad && self.quad == 0.0 && self.settings.certify_within > 0.0
                            {
                                let eta = self.settings.step_fraction;
                                let cert =
                                    self.certify_step((eta * ap).min(1.0), (eta * ad).min(1.0));
                                if cert.holds(tol_ipm) {
                                    // the certified point's (w, b) answer
                                    self.u[..=n].copy_from_slice(&self.aff.u[..=n]);
                                    last = cert.outcome(pres);
                                    repaired_from = Some(dres);
                                    (status, reason) = (Status::Optimal, None);
                                    break;
                                }
                            }
                            ad = ad.min(capped);
                        }
                    }
                    Err(e) => {
                        status = Status::NumericalError;
                        reason = Some(format!("refinement solve failed: {e}"));
                        break;
                    }
                }
            }
            let eta = self.settings.step_fraction;
            let (ap, ad) = self.common_step((eta * ap).min(1.0), (eta * ad).min(1.0));
            step = ap.min(ad);
            if let Some((s, r)) = stop.check_step(step) {
                (status, reason) = (s, r);
                break;
            }
            self.take_step(ap, ad);
            refine.stepped(dres, ad, refining);
        }
        // a run that stopped short returns the iterate certified closest to optimal when that
        // is within the reduced tolerance (module docs, *Almost optimal*)
        let mut wb = &self.u[..=n];
        if let Some(b) = best
            && matches!(status, Status::NumericalError | Status::IterationLimit)
        {
            let why = reason.take().map_or(String::new(), |r| format!(": {r}"));
            reason = Some(format!(
                "stopped short ({status}{why}); the iterate of iteration {} certified at a \
                 relative gap of {:.2e}",
                b.iter, b.cert.gap
            ));
            status = Status::AlmostOptimal;
            last = b.cert.outcome(b.pres);
            repaired_from = Some(b.dres);
            wb = &self.best_wb;
        }
        let (pobj, dobj, pres, dres, gap) = last;
        Ok(IpmOutcome {
            status,
            wb: wb[..n]
                .iter()
                .map(|w| self.w_scale * w)
                .chain([wb[n]])
                .collect(),
            objective: pobj * inv_m,
            dual_objective: dobj * inv_m,
            iterations: iter,
            primal_residual: pres,
            dual_residual: dres,
            gap,
            factor_seconds: self.factor_seconds,
            solve_seconds: self.solve_seconds,
            seconds: start.elapsed().as_secs_f64(),
            correctors: self.correctors,
            refinements: self.refinements,
            regularization_boosts: self.boosts,
            reason,
            repaired_from,
            ended_by_check,
            normal_equations: self.sys.normal_equations(),
        })
    }
}
