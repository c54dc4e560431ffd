//! KEN-GURU's batch solver: the kernel form of (2.22) (Ginodi Ch. 4: `w = Σ_m β_m φ(x_m)`,
//! `‖w‖² = βᵀKβ`, margins `y_m (Kβ)_m`), minimised to a certificate on the exact Gram matrix.
//!
//! A pivoted Cholesky factorisation `K ≈ LLᵀ` (`L` of size `M × r`; pivot rows read through the
//! fit's Gram-row cache; stopped when the largest remaining diagonal is at most 1e-13 of the
//! largest `K_ii`, or at the rank whose factor fits in the cache cap) is Gram–Schmidt on the
//! pivots' feature vectors: the rows of `L` are the coordinates of `φ(x_m)` in an orthonormal
//! basis `e_1..e_r` of their span. So `w = Σ_j z_j e_j` has `‖w‖ = ‖z‖` and margins
//! `⟨w, φ(x_m)⟩ = L_m z` **exactly** (the remainder of each `φ(x_m)` is orthogonal to the span):
//! the linear objective (2.22) on the rows of `L` is the kernel objective restricted to the
//! span, and the linear batch solver (`batch.rs`, Newton–CG with its certificate) minimises it.
//! Then `β` on the pivots solves `L_Pᵀ β = z` (`L_P` the pivots' rows, lower triangular), and the
//! fit is certified on the exact `K` by KEN-GURU's certificate ([`check_point`]: Gram products,
//! the ray step, the dual (3.17) with `‖Σ α y φ(x)‖² = (α∘y)ᵀK(α∘y)`), which also covers what
//! the truncation left out; `converged` only when that certificate meets the tolerance.

use bulwark_core::{Dataset, DenseMatrix, Error, FitReport, Result};

use crate::algorithm::UNDERFLOW;
use crate::batch;
use crate::kernel_guru::{
    CheckBuffers, Gram, KenGuruFit, KenGuruParams, check_point, dot, kernel_model,
};
use crate::objective::Objective;

/// The factorisation stops when the largest remaining diagonal of `K − LLᵀ` is at most this
/// fraction of the largest `K_ii`.
const PIVOT_TOL: f64 = 1e-13;

/// The pivoted Cholesky factor: `l` row-major `M × stride` (the first `pivots.len()` columns
/// used), the pivots in order, and the largest remaining diagonal.
struct Factor {
    l: Vec<f64>,
    stride: usize,
    pivots: Vec<usize>,
    residual: f64,
}

/// Pivoted Cholesky of the Gram matrix of `gram` (diagonal `kdiag`), at most `max_rank` columns.
fn pivoted_cholesky(gram: &mut Gram<'_>, kdiag: &[f64], max_rank: usize) -> Factor {
    let m = kdiag.len();
    let stride = max_rank.max(1);
    let mut l = vec![0.0; m * stride];
    let mut resid = kdiag.to_vec();
    let dmax = resid.iter().fold(0.0_f64, |a, b| a.max(*b));
    let floor = PIVOT_TOL * dmax;
    let mut is_pivot = vec![false; m];
    let mut pivots = Vec::with_capacity(stride);
    let mut lp = vec![0.0; stride];
    for j in 0..stride {
        let mut best = floor;
        let mut pick = None;
        for i in 0..m {
            if !is_pivot[i] && resid[i] > best {
                best = resid[i];
                pick = Some(i);
            }
        }
        let Some(pi) = pick else { break };
        let pv = best.sqrt();
        lp[..j].copy_from_slice(&l[pi * stride..pi * stride + j]);
        let row = gram.row(pi);
        for i in 0..m {
            if is_pivot[i] {
                // exactly triangular on the pivots
                continue;
            }
            let s = row[i] - dot(&l[i * stride..i * stride + j], &lp[..j]);
            l[i * stride + j] = s / pv;
        }
        l[pi * stride + j] = pv;
        is_pivot[pi] = true;
        pivots.push(pi);
        for i in 0..m {
            if !is_pivot[i] {
                let v = l[i * stride + j];
                resid[i] = (resid[i] - v * v).max(0.0);
            }
        }
    }
    let residual = (0..m)
        .filter(|&i| !is_pivot[i])
        .fold(0.0_f64, |a, i| a.max(resid[i]));
    Factor {
        l,
        stride,
        pivots,
        residual,
    }
}

/// The batch fit to the relative gap `tol` (module notes); the report's figures other than
/// the certificate's (which [`KenGuruParams::fit_certified`] adds). `warm` (`β`, one per
/// training example) is a warm start: `w₀ = Σ β_m φ(x_m)` has the coordinates `z₀ = Lᵀβ` in
/// the factor's basis (its projection onto the pivots' span, exact when the factor is), whose
/// direction the linear solver's ray search starts from.
pub(crate) fn fit(
    params: &KenGuruParams,
    data: &Dataset,
    tol: f64,
    warm: Option<&[f64]>,
) -> Result<(KenGuruFit, FitReport)> {
    let (p, mut gram) = params.setup(data)?;
    let labels = data.binary_training_labels()?;
    let obj = Objective::new(data, labels, p.spec, false);
    let m = p.y.len();
    // the factor within the cache cap (at least one column)
    let max_rank = (params.cache_bytes / (8 * m.max(1))).clamp(1, m);
    let clock = std::time::Instant::now();
    let factor = pivoted_cholesky(&mut gram, &p.kdiag, max_rank);
    let factor_seconds = clock.elapsed().as_secs_f64();
    let r = factor.pivots.len();
    if r == 0 {
        return Err(Error::Numerical {
            algorithm: "ken-guru".into(),
            message: "the kernel's Gram matrix is 0 on the training data: every w is as good"
                .into(),
        });
    }
    let mut rows = DenseMatrix::zeros(m, r);
    for i in 0..m {
        rows.row_mut(i)
            .copy_from_slice(&factor.l[i * factor.stride..i * factor.stride + r]);
    }
    let mut features = Dataset::binary("ken-guru factor", rows, labels.to_vec())?;
    if let Some(w) = data.weights() {
        features = features.with_weights(w.to_vec())?;
    }
    let lin = Objective::new(&features, labels, p.spec, false);
    let start = warm.filter(|b| b.len() == m).map(|beta| {
        let mut z = vec![0.0; r];
        for (i, &b) in beta.iter().enumerate().filter(|(_, b)| **b != 0.0) {
            for (z, l) in z.iter_mut().zip(&factor.l[i * factor.stride..]) {
                *z += b * l;
            }
        }
        z
    });
    let out = batch::solve(&lin, tol, params.max_iter, start.as_deref());
    drop(lin);
    drop(features);
    // β on the pivots: L_Pᵀ β_P = z, back substitution (L_P[j][k] = l[pivot_j, k], k ≤ j)
    let z = &out.w;
    let mut beta_p = vec![0.0; r];
    for k in (0..r).rev() {
        let mut s = z[k];
        for j in k + 1..r {
            s -= factor.l[factor.pivots[j] * factor.stride + k] * beta_p[j];
        }
        beta_p[k] = s / factor.l[factor.pivots[k] * factor.stride + k];
    }
    let mut beta = vec![0.0; m];
    for (j, &i) in factor.pivots.iter().enumerate() {
        beta[i] = beta_p[j];
    }
    // the certificate on the exact Gram matrix
    let mut bufs = CheckBuffers::new(m);
    let (certificate, on_ray, _) = check_point(&p, &mut gram, &obj, &beta, &mut bufs);
    if on_ray {
        beta.copy_from_slice(&bufs.ray);
    }
    let converged = certificate.relative_gap <= tol && certificate.primal > UNDERFLOW;
    let (model, support) = kernel_model(params.kernel, data, &beta)?;
    let (hits, misses, _) = gram.cache.stats();
    let mut report = FitReport::new("ken-guru", "newton-cg");
    report.iterations = Some(out.iterations as usize);
    report.stopped = if converged {
        None
    } else if certificate.primal <= UNDERFLOW {
        Some(
            "the objective underflows: the data are separated with a margin sigma cannot reach"
                .into(),
        )
    } else {
        Some(match out.stopped {
            Some(why) => format!(
                "{why}; certified gap {:.2e} on the exact Gram matrix",
                certificate.relative_gap
            ),
            None => format!(
                "the certificate on the exact Gram matrix ({:.2e}) misses the tolerance (the factor's: {:.2e})",
                certificate.relative_gap, out.certificate.relative_gap
            ),
        })
    };
    let d = &mut report.details;
    d.insert(out.count.0.into(), out.count.1);
    d.insert("factor_rank".into(), r as f64);
    d.insert("factor_seconds".into(), factor_seconds);
    let dmax = p.kdiag.iter().fold(0.0_f64, |a, b| a.max(*b));
    d.insert("factor_residual".into(), factor.residual / dmax.max(1e-300));
    d.insert("factor_duality_gap".into(), out.certificate.relative_gap);
    d.insert("support_vectors".into(), support as f64);
    d.insert("kernel_evaluations".into(), gram.evaluations as f64);
    d.insert("cache_rows".into(), gram.cache.capacity_rows() as f64);
    d.insert("cache_hits".into(), hits as f64);
    d.insert("cache_misses".into(), misses as f64);
    Ok((
        KenGuruFit {
            model,
            beta,
            certificate,
            steps: out.iterations,
            epochs: 0,
            converged,
        },
        report,
    ))
}
