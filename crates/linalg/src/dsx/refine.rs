//! Iterative refinement: PCG on the exact `H`, preconditioned by the factorisation of `H + δI`
//! ([`DsxSystem::solve_refined`], [`RefineInfo`]), and its vector norms.

use super::{DsxScalings, DsxSystem};
use crate::error::{LinalgError, Result, check_len};

/// A PCG iteration of [`DsxSystem::solve_refined`] whose true residual is above this fraction
/// of the one before it ends the refinement (stagnation).
const STALL_RATIO: f64 = 0.5;

/// Outcome of [`DsxSystem::solve_refined`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefineInfo {
    /// PCG iterations performed (0: the direct solve was already accurate enough).
    pub iterations: usize,
    /// Achieved `‖r − H z‖₂ / ‖r‖₂` with the exact `H` (recomputed, not recurrence-based).
    pub relative_residual: f64,
}

impl DsxSystem<'_> {
    /// Solves `H z = rhs` for the exact `H` (no static regularisation) by preconditioned
    /// conjugate gradients, preconditioned by the current factorisation of `H + δI`, starting
    /// from the direct solve. Stops when `‖rhs − H z‖₂ ≤ tol ‖rhs‖₂`, after `max_iter`
    /// iterations, or when an iteration fails to halve the true residual (stagnation at the
    /// rounding floor), and returns the best iterate (smallest true residual).
    ///
    /// `sc` must be the scalings passed to the last [`DsxSystem::factor`]. The three work
    /// vectors of the length [`DsxSystem::len`] are allocated by the first call and kept;
    /// [`DsxSystem::solve_refined_in`] takes them from the caller instead.
    pub fn solve_refined(
        &mut self,
        sc: &DsxScalings<'_>,
        rhs: &[f64],
        z: &mut [f64],
        tol: f64,
        max_iter: usize,
    ) -> Result<RefineInfo> {
        let len = self.len();
        let mut work = core::mem::take(&mut self.refine);
        for w in &mut work {
            w.resize(len, 0.0);
        }
        let [a, b, c] = &mut work;
        let out = self.solve_refined_in(sc, rhs, z, tol, max_iter, [a, b, c]);
        self.refine = work;
        out
    }

    /// [`DsxSystem::solve_refined`] with the caller's work vectors (each at least
    /// [`DsxSystem::len`] long; their contents are overwritten), e.g. vectors of its own that are
    /// not needed during the solve, so the system holds none. No allocation.
    pub fn solve_refined_in(
        &mut self,
        sc: &DsxScalings<'_>,
        rhs: &[f64],
        z: &mut [f64],
        tol: f64,
        max_iter: usize,
        work: [&mut [f64]; 3],
    ) -> Result<RefineInfo> {
        if !self.factored {
            return Err(LinalgError::NotFactored);
        }
        let len = self.len();
        check_len("rhs", len, rhs.len())?;
        check_len("z", len, z.len())?;
        for w in &work {
            if w.len() < len {
                return Err(LinalgError::DimensionMismatch {
                    name: "work",
                    expected: len,
                    got: w.len(),
                });
            }
        }
        let rnorm = norm2_fast(rhs);
        if rnorm == 0.0 {
            z.iter_mut().for_each(|e| *e = 0.0);
            return Ok(RefineInfo {
                iterations: 0,
                relative_residual: 0.0,
            });
        }
        // `pre` holds `M⁻¹ r`, then `H d`, then the candidate `z + α d` (its true residual is
        // computed before `z` takes it, so `z` itself is always the best iterate)
        let [res, pre, dir] = work;
        let (res, pre, dir) = (&mut res[..len], &mut pre[..len], &mut dir[..len]);
        z.copy_from_slice(rhs);
        self.solve_in_place(sc, z)?;
        // res = rhs − H z
        let mut rel = self.apply_halves::<true>(sc, z, rhs, res) / rnorm;
        let mut it = 0;
        if rel <= tol || max_iter == 0 {
            return Ok(RefineInfo {
                iterations: 0,
                relative_residual: rel,
            });
        }
        let mut best_rel = rel;
        pre.copy_from_slice(res);
        self.solve_in_place(sc, pre)?;
        dir.copy_from_slice(pre);
        let mut rz = dot(res, pre);
        while it < max_iter {
            it += 1;
            let prev = rel;
            self.apply_halves::<false>(sc, dir, &[], pre);
            let dhd = dot(dir, pre);
            if !(dhd > 0.0 && rz.is_finite()) {
                break;
            }
            let alpha = rz / dhd;
            let cand = &mut *pre;
            for t in 0..len {
                cand[t] = z[t] + alpha * dir[t];
            }
            // Recompute the true residual (robust against recurrence drift).
            rel = self.apply_halves::<true>(sc, cand, rhs, res) / rnorm;
            // CG does not decrease ‖r‖₂ monotonically: `z` takes the candidate only when it is
            // no worse (a NaN residual is never taken).
            if rel <= best_rel {
                best_rel = rel;
                z.copy_from_slice(cand);
            }
            if !rel.is_finite() {
                break;
            }
            // Stagnation: at the rounding floor of computing `H z` itself (an ill-conditioned
            // `H` near an IPM's optimum), PCG cannot lower the residual further; measured at
            // MNIST scale (10000 × 784), the true residual stayed within 0.5–2× of the
            // direct solve's for 4 iterations. Stop once an iteration fails to halve it.
            if rel <= tol || rel > STALL_RATIO * prev {
                break;
            }
            pre.copy_from_slice(res);
            self.solve_in_place(sc, pre)?;
            let rz_new = dot(res, pre);
            let beta = rz_new / rz;
            rz = rz_new;
            for t in 0..len {
                dir[t] = pre[t] + beta * dir[t];
            }
        }
        Ok(RefineInfo {
            iterations: it,
            relative_residual: best_rel.min(rel),
        })
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `‖a‖₂` as a plain sum of squares (four lanes), or [`norm2`] when that over- or underflows.
pub(super) fn norm2_fast(a: &[f64]) -> f64 {
    let k = a.len() / 4 * 4;
    let mut acc = [0.0f64; 4];
    for c in a[..k].chunks_exact(4) {
        for l in 0..4 {
            acc[l] += c[l] * c[l];
        }
    }
    let sq = (acc[0] + acc[1]) + (acc[2] + acc[3]) + a[k..].iter().map(|x| x * x).sum::<f64>();
    if sq.is_finite() && sq > 1e-280 {
        sq.sqrt()
    } else {
        norm2(a)
    }
}

pub(super) fn norm2(a: &[f64]) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    let s: f64 = a.iter().map(|x| (x / scale) * (x / scale)).sum();
    scale * s.sqrt()
}
