//! The [`Solution`] in the user's space: undo equilibration and presolve, divide by `τ`
//! (or normalise a certificate ray to unit ∞-norm), compute the reduced costs; and the
//! solution reported when presolve alone decides the status.

use super::engine::{Engine, Outcome};
use super::inf_norm;
use crate::kkt::KktInfo;
use crate::presolve::{Decided, Model};
use crate::problem::{LpProblem, Sense};
use crate::solution::{Solution, Status};
use std::time::Instant;

pub(super) fn decided_solution(
    p: &LpProblem,
    model: &Model,
    d: Decided,
    start: Instant,
    kkt: KktInfo,
) -> Solution {
    let n = p.num_vars();
    let m = p.num_rows();
    let mut x = vec![0.0; n];
    let mut y = vec![0.0; m];
    let status = match d {
        Decided::PrimalInfeasible { row, sign } => {
            y[row] = sign;
            Status::PrimalInfeasible
        }
        Decided::DualInfeasible { col, sign } => {
            x[col] = sign;
            Status::DualInfeasible
        }
    };
    let _ = model;
    Solution {
        status,
        x,
        row_duals: y,
        reduced_costs: vec![0.0; n],
        objective: f64::NAN,
        dual_objective: f64::NAN,
        primal_residual: f64::NAN,
        dual_residual: f64::NAN,
        gap: f64::NAN,
        iterations: 0,
        seconds: start.elapsed().as_secs_f64(),
        kkt,
        history: Vec::new(),
        retries: Vec::new(),
    }
}

impl<'m, 'b> Engine<'m, 'b> {
    pub(super) fn finish(self, p: &LpProblem, out: Outcome, start: Instant) -> Solution {
        let md = self.md;
        let n0 = p.num_vars();
        let m0 = p.num_rows();
        let sgn = if p.sense == Sense::Maximize {
            -1.0
        } else {
            1.0
        };
        let ray_p = out.status == Status::DualInfeasible;
        let ray_d = out.status == Status::PrimalInfeasible;
        let tx = if ray_p { 1.0 } else { self.tau };
        let ty = if ray_d { 1.0 } else { self.tau };
        let mut x = vec![0.0; n0];
        for j in 0..n0 {
            if !md.fixed_x[j].is_nan() && !ray_p {
                x[j] = md.fixed_x[j];
            }
        }
        for (k, &j) in md.col_orig.iter().enumerate() {
            x[j] = md.colscale[k] * self.xi[k] / tx;
        }
        let mut y = vec![0.0; m0];
        for (k, &i) in md.row_orig.iter().enumerate() {
            y[i] = sgn * md.cscale * md.rowscale[k] * self.y[k] / ty;
        }
        if ray_p {
            let s = inf_norm(&x);
            if s > 0.0 {
                x.iter_mut().for_each(|v| *v /= s);
            }
        }
        if ray_d {
            let s = inf_norm(&y);
            if s > 0.0 {
                y.iter_mut().for_each(|v| *v /= s);
            }
        }
        let mut z = if ray_d { vec![0.0; n0] } else { p.c.clone() };
        let mut aty = vec![0.0; n0];
        p.a.mul_t_add(&y, &mut aty);
        for j in 0..n0 {
            z[j] -= aty[j];
        }
        let mut history = self.history;
        history.shrink_to_fit();
        Solution {
            status: out.status,
            x,
            row_duals: y,
            reduced_costs: z,
            objective: sgn * out.last.pobj,
            dual_objective: sgn * out.last.dobj,
            primal_residual: out.last.pres,
            dual_residual: out.last.dres,
            gap: out.last.gap,
            iterations: out.iterations,
            seconds: start.elapsed().as_secs_f64(),
            kkt: self.kkt.info(),
            history,
            retries: Vec::new(),
        }
    }
}
