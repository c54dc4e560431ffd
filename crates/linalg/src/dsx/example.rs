//! The per-example closed form of the factorisation (DSX eqs. (19)–(21) as an augmented arrow
//! solve): the pivots, the 2×2 corner `C2⁻¹`, the two rank-one vectors for `S`, and the
//! per-thread scratch ([`Work`]) and read-only data ([`Shared`]) of the per-example passes.

use core::ops::Range;

use super::DsxScalings;
use super::cols::{Cols, Ident};
use crate::error::{Block, LinalgError, Result};

/// Per-example scalars kept by the factorisation: the inverse of the 2×2 corner
/// `C2 = [[s, −t], [−t, −(1/θ + w)]]` as `[[p11, −p12], [−p12, −p22]]`, and `1/(κ_i + δ)`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ExampleFactor {
    pub(super) p11: f64,
    pub(super) p12: f64,
    pub(super) p22: f64,
    pub(super) inv_kappa: f64,
    pub(super) inv_theta: f64,
    /// `s_i`, the arrow pivot of `λ_i` (the quasi-definite system's `λ_i` diagonal).
    pub(super) s: f64,
    /// `√ζ_i` and `t_i √ζ_i` (the quasi-definite system's `μ′_i` couplings: `y_i √ζ_i` to `b`,
    /// `−t_i √ζ_i` to `λ_i`; `augmented`).
    pub(super) sz: f64,
    pub(super) tz: f64,
    /// The parts of `s_i` and `t_i` from the entries whose diagonal term `d_ij` is 0 (a stored
    /// zero): `ρ_i + δ + Σ φ v² (σ+δ)/Δ` and `Σ φ v/Δ − P_i` over them (only with `pair`;
    /// `augmented` adds the other entries' parts without cancellation).
    pub(super) s0: f64,
    pub(super) t0: f64,
    /// Local index of the variable recovered from row `a_i` in the solve (`NO_REC`: none).
    pub(super) rec: u32,
}

pub(super) const NO_REC: u32 = u32::MAX;

/// Read-only data shared by the per-example kernels (and threads).
#[derive(Debug, Clone, Copy)]
pub(super) struct Shared<'a> {
    pub(super) n: usize,
    pub(super) dense: bool,
    pub(super) delta: f64,
    pub(super) gemm: bool,
    /// The chunk store receives `r1` (the `λ` coupling) instead of `g1`: the example-space and
    /// sparse methods (`augmented`) keep the quasi-definite couplings `r1`, `g2 = √ζ e`.
    pub(super) pair: bool,
    pub(super) indptr: &'a [usize],
    pub(super) indices: &'a [usize],
    pub(super) x: &'a [f64],
    /// The rows are `scale · x`.
    pub(super) scale: f64,
    pub(super) v: &'a [f64],
    pub(super) y: &'a [f64],
    pub(super) p_eff: &'a [f64],
}

/// Per-thread scratch of the factorisation (sized in the constructor).
#[derive(Debug, Clone)]
pub(super) struct Work {
    pub(super) kbuf1: Vec<f64>,
    pub(super) kbuf2: Vec<f64>,
    pub(super) kbuf3: Vec<f64>,
    pub(super) vbuf: Vec<f64>,
    /// An example's `φ` and `σ` when they are computed where read ([`super::PairScaling`]).
    pub(super) phibuf: Vec<f64>,
    pub(super) sigbuf: Vec<f64>,
    /// Contiguous accumulators for diag(S_ww) and S_wb (S's diagonal and last row are strided).
    pub(super) acc_diag: Vec<f64>,
    pub(super) acc_wb: Vec<f64>,
}

impl Work {
    pub(super) fn new(n: usize, max_k: usize) -> Self {
        Self {
            kbuf1: vec![0.0; max_k + 2],
            kbuf2: vec![0.0; max_k + 2],
            kbuf3: vec![0.0; max_k + 2],
            vbuf: vec![0.0; max_k + 2],
            phibuf: vec![0.0; max_k],
            sigbuf: vec![0.0; max_k],
            acc_diag: vec![0.0; n],
            acc_wb: vec![0.0; n],
        }
    }
}

/// Examples `i0..i1`: `inv_delta` starts at `indptr[i0]`, `ex` at `i0`. `g1`, `g2`
/// receive the two rank-one vectors: for the GEMM kernel (`sh.gemm`) as dense block columns
/// (`n` rows each, column 0 = example `i0`), for the scatter kernel over the supports, at
/// `indptr[i] − indptr[i0]` (the chunk store; `r1` instead of `g1` with `sh.pair`, and then
/// `g3` receives the diagonal terms `d_ij = φ x² (σ+δ)/Δ`; empty otherwise). Returns
/// `acc + Σ τ_i` (summed in order).
pub(super) fn factor_range(
    sh: &Shared<'_>,
    sc: &DsxScalings<'_>,
    i0: usize,
    i1: usize,
    acc: f64,
    inv_delta: &mut [f64],
    ex: &mut [ExampleFactor],
    g1: &mut [f64],
    g2: &mut [f64],
    g3: &mut [f64],
    wk: &mut Work,
) -> Result<f64> {
    let n = sh.n;
    let base = sh.indptr[i0];
    let mut sbb = acc;
    for i in i0..i1 {
        let r = sh.indptr[i]..sh.indptr[i + 1];
        let lr = r.start - base..r.end - base;
        let c = i - i0;
        let out = if sh.gemm {
            GOut::Gemm(&mut g1[c * n..(c + 1) * n], &mut g2[c * n..(c + 1) * n])
        } else if sh.pair {
            GOut::Pair(
                &mut g1[lr.clone()],
                &mut g2[lr.clone()],
                &mut g3[lr.clone()],
            )
        } else {
            GOut::Store(&mut g1[lr.clone()], &mut g2[lr.clone()])
        };
        let inv = &mut inv_delta[lr];
        let e = if sh.dense {
            factor_example(sh, sc, i, r, Ident, inv, out, wk)?
        } else {
            let cols = &sh.indices[r.clone()];
            factor_example(sh, sc, i, r, cols, inv, out, wk)?
        };
        sbb += e.p22;
        ex[c] = e;
    }
    Ok(sbb)
}

/// Checks scalings computed where read (example values starting at the non-zero `first`):
/// finite and `≥ 0`, the error naming the non-zero.
fn check_computed(name: &'static str, values: &[f64], first: usize) -> Result<()> {
    crate::error::check_nonneg(name, values).map_err(|e| match e {
        LinalgError::InvalidValue {
            name,
            index,
            value,
            reason,
        } => LinalgError::InvalidValue {
            name,
            index: first + index,
            value,
            reason,
        },
        e => e,
    })
}

/// Where [`factor_example`] writes the example's two rank-one vectors `g1`, `g2`.
enum GOut<'a> {
    /// Zero-filled GEMM block columns of length `n` (scattered by support).
    Gemm(&'a mut [f64], &'a mut [f64]),
    /// The chunk store of the scatter kernel (length `k`, support order).
    Store(&'a mut [f64], &'a mut [f64]),
    /// The couplings of the quasi-definite methods: `r1`, `g2` and the diagonal terms `d`
    /// (length `k`, support order).
    Pair(&'a mut [f64], &'a mut [f64], &'a mut [f64]),
}

/// Per-example closed form; returns `τ_i = s_i/D_i` (example `i`'s contribution to
/// `S_bb`). Writes the two rank-one vectors into `out` (a GEMM block column or the scatter
/// kernel's chunk store), and accumulates the diagonal of `S_ww` and the column `S_wb`.
///
/// Elimination order: the arrow pivots `Δ_ij` (α) and `κ_i` (ξ) first, then the 2×2
/// quasi-definite corner on `(λ_i, μ_i)` with `μ_i = θ_i (a_i·z)` the multiplier of row
/// `a_i` (DSX eqs. (19)–(21) written as an augmented arrow solve instead of SMW):
/// `C2 = [[s, −t], [−t, −(1/θ + w)]]`, `det C2 = −D`, `D = s/θ + s w + t² > 0`
/// (sum of non-negative terms: no cancellation, no division by `s` alone).
#[inline]
fn factor_example<C: Cols>(
    sh: &Shared<'_>,
    sc: &DsxScalings<'_>,
    i: usize,
    r: Range<usize>,
    cols: C,
    inv_delta: &mut [f64],
    out: GOut<'_>,
    wk: &mut Work,
) -> Result<ExampleFactor> {
    let k = r.len();
    let delta = sh.delta;
    // (φ and σ computed where read, `PairScaling::Ratio`, are validated here, as computed)
    let (phi, phi_ok) = sc.phi.example(i, r.clone()).slice_checked(&mut wk.phibuf);
    let (sigma, sigma_ok) = sc.sigma.example(i, r.clone()).slice_checked(&mut wk.sigbuf);
    if !phi_ok {
        check_computed("phi", phi, r.start)?;
    }
    if !sigma_ok {
        check_computed("sigma", sigma, r.start)?;
    }
    let x = &sh.x[r.clone()];
    let vloc = cols.gather(k, sh.v, &mut wk.vbuf);
    let pi = sh.p_eff[i];
    let yi = sh.y[i];
    // Pass 1: arrow pivots Δ_ij = φ_ij + σ_ij + δ; s_i, t_i, w_i (contiguous, no indexing).
    let mut sum_s = 0.0;
    let mut t_part = 0.0;
    let mut sum_inv = 0.0;
    let mut min_piv = f64::INFINITY;
    let dg = &mut wk.kbuf3[..k];
    for (((((&ph, &sg), &xa), &vj), inv), dga) in phi
        .iter()
        .zip(sigma)
        .zip(x)
        .zip(vloc)
        .zip(inv_delta.iter_mut())
        .zip(dg.iter_mut())
    {
        let sd = sg + delta;
        let dl = ph + sd;
        min_piv = min_piv.min(dl);
        let id = 1.0 / dl;
        *inv = id;
        let fv = ph * vj * id;
        sum_s += fv * vj * sd; // φ v² (σ+δ)/Δ
        t_part += fv; // φ v /Δ
        sum_inv += id;
        // diag(S_ww) += φ x² (σ+δ)/Δ = φ x² − d²/Δ  (computed without cancellation)
        let xa = sh.scale * xa;
        *dga = ph * xa * xa * sd * id;
    }
    if !(min_piv > 0.0) {
        // scalings are validated finite and ≥ 0, so the only failure is Δ_ij = 0
        let a = phi
            .iter()
            .zip(sigma)
            .position(|(&ph, &sg)| !(ph + sg + delta > 0.0))
            .unwrap_or(0);
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: a,
            value: phi[a] + sigma[a] + delta,
        });
    }
    // (pair mode) the parts of s and t from the entries with d = 0, and the d's themselves
    let (mut s0, mut t0) = (sc.rho[i] + delta, -pi);
    let out = match out {
        GOut::Pair(g1, g2, d) => {
            for ((((&ph, &sg), &vj), &id), &dga) in phi
                .iter()
                .zip(sigma)
                .zip(vloc)
                .zip(inv_delta.iter())
                .zip(dg.iter())
            {
                if dga == 0.0 {
                    let fv = ph * vj * id;
                    s0 += fv * vj * (sg + delta);
                    t0 += fv;
                }
            }
            d.copy_from_slice(dg);
            GOut::Store(g1, g2)
        }
        out => out,
    };
    cols.scatter_add(&mut wk.acc_diag, dg);
    let kap = sc.kappa[i] + delta;
    if !(kap > 0.0) {
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: k + 1,
            value: kap,
        });
    }
    // s_i = γ_i − Σ c²/Δ = ρ_i + δ + Σ φ v² (σ+δ)/Δ  (arrow pivot of λ, no cancellation)
    let s = sc.rho[i] + delta + sum_s;
    if !(s > 0.0) {
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: k,
            value: s,
        });
    }
    // t_i = Σ φ v/Δ − P_i ;  w_i = Σ 1/Δ + 1/κ ;  ζ_i = 1/(1/θ + w) = θ/(1 + θ w)
    let t = t_part - pi;
    let w = sum_inv + 1.0 / kap;
    let theta = sc.theta[i];
    let zeta = theta / (1.0 + theta * w);
    // C2⁻¹ = [[p11, −p12], [−p12, −p22]],  p11 = 1/(s + t² ζ) = (1/θ + w)/D,
    // p12 = t ζ p11 = t/D,  p22 = s ζ p11 = s/D = τ_i.
    let p11 = 1.0 / (s + t * t * zeta);
    let p12 = t * zeta * p11;
    let p22 = s * zeta * p11;
    if !(p11.is_finite() && p12.is_finite() && p22.is_finite()) {
        return Err(LinalgError::NotPositiveDefinite {
            block: Block::Example(i),
            pivot: k,
            value: s + t * t * zeta,
        });
    }
    let ex = ExampleFactor {
        p11,
        p12,
        p22,
        inv_kappa: 1.0 / kap,
        inv_theta: 1.0 / theta,
        s,
        sz: zeta.sqrt(),
        tz: t * zeta.sqrt(),
        s0,
        t0,
        rec: if kap < min_piv {
            if theta > kap { (k + 1) as u32 } else { NO_REC }
        } else if theta > min_piv {
            inv_delta
                .iter()
                .enumerate()
                .fold(
                    (0, 0.0),
                    |(ia, best), (a, &id)| {
                        if id > best { (a, id) } else { (ia, best) }
                    },
                )
                .0 as u32
        } else {
            NO_REC
        },
    };
    let sq_p11 = p11.sqrt();
    let sq_zeta = zeta.sqrt();
    let tz = t * zeta;
    // Pass 2: with d_j = φ_j y x_j, e_j = d_j/Δ_j, r1_j = d_j v_j (σ_j+δ)/Δ_j, example i
    // contributes to S_ww
    //     − p11 (r1 + tζ e)(r1 + tζ e)ᵀ + ζ e eᵀ        (G1 row, G2 row)
    // each family bounded entrywise by the diagonal scale φ x² (no 1/s blow-up), and
    // S_wb += y (p22 e − p12 r1),  S_bb += p22.
    let (g1, g2, gemm_cols) = match out {
        GOut::Gemm(gc1, gc2) => (&mut wk.kbuf1[..k], &mut wk.kbuf2[..k], Some((gc1, gc2))),
        GOut::Store(g1, g2) | GOut::Pair(g1, g2, _) => (g1, g2, None),
    };
    let wb = &mut wk.kbuf3[..k];
    for ((((((&ph, &sg), &xa), &vj), &id), (g1a, g2a)), wba) in phi
        .iter()
        .zip(sigma)
        .zip(x)
        .zip(vloc)
        .zip(inv_delta.iter())
        .zip(g1.iter_mut().zip(g2.iter_mut()))
        .zip(wb.iter_mut())
    {
        let e = ph * yi * (sh.scale * xa) * id;
        let r1 = e * vj * (sg + delta);
        *g1a = if sh.pair { r1 } else { sq_p11 * (r1 + tz * e) };
        *g2a = sq_zeta * e;
        *wba = yi * (p22 * e - p12 * r1);
    }
    cols.scatter_add(&mut wk.acc_wb, wb);
    if let Some((gc1, gc2)) = gemm_cols {
        cols.scatter_set(gc1, g1);
        cols.scatter_set(gc2, g2);
    }
    Ok(ex)
}
