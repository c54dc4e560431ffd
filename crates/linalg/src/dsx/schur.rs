//! Forming the Schur complement `S` onto `(w, b)` (DSX eq. (16), closed form): the driver, its
//! diagonal and `b` row, and the dense GEMM kernel ([`SchurKernel::DenseGemm`]).

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
use faer::prelude::ReborrowMut;
use faer::{Accum, MatMut, MatRef, Par};

use super::example::{Shared, factor_range};
use super::{DsxScalings, DsxSystem, SchurKernel};
use crate::error::Result;

impl DsxSystem<'_> {
    /// Zeroes `S` and the per-thread accumulators.
    pub(super) fn reset_schur(&mut self) {
        self.s.iter_mut().for_each(|e| *e = 0.0);
        for wk in &mut self.work {
            wk.acc_diag.iter_mut().for_each(|e| *e = 0.0);
            wk.acc_wb.iter_mut().for_each(|e| *e = 0.0);
        }
    }

    /// Adds the closed-form diagonal and the b row (accumulated contiguously in `work`), then
    /// `ω + δ`, clamps `S_jj` to its exact lower bound `ω_j + δ` (each example's contribution is
    /// PSD) and sets `S_bb = ω_b + δ + Σ τ_i` (`sbb`). Returns the number of clamped entries.
    pub(super) fn finish_schur(&mut self, sc: &DsxScalings<'_>, sbb: f64) -> usize {
        let n = self.n;
        let n1 = n + 1;
        let delta = self.settings.static_regularization;
        let [w0, w1] = &self.work;
        for j in 0..n {
            self.s[j * n1 + j] += w0.acc_diag[j] + w1.acc_diag[j];
            self.s[j * n1 + n] = w0.acc_wb[j] + w1.acc_wb[j];
        }
        let mut clamped = 0;
        for j in 0..n {
            let lower = sc.w_diag[j] + delta;
            let e = &mut self.s[j * n1 + j];
            *e += lower;
            if *e < lower {
                *e = lower;
                clamped += 1;
            }
        }
        self.s[n * n1 + n] = sbb;
        clamped
    }

    /// Forms the lower triangle of `S` (validated scalings); returns the clamped diagonals.
    pub(super) fn form_schur(&mut self, sc: &DsxScalings<'_>) -> Result<usize> {
        self.reset_schur();
        let delta = self.settings.static_regularization;
        // Diagonal of S_ww: ω_j + δ + Σ_i φ_ij x_ij² (σ_ij+δ)/Δ_ij (into `acc_diag`); the two
        // rank-one families go into the lower triangle of `s`, S_wb into `acc_wb`.
        let mut sbb = sc.b_diag + delta;
        match self.kernel {
            SchurKernel::SparseScatter => self.schur_scatter(sc, &mut sbb)?,
            _ => self.schur_gemm(sc, &mut sbb)?,
        }
        Ok(self.finish_schur(sc, sbb))
    }

    /// The dense GEMM kernel (BLAS-3 on blocks of `chunk_rows` examples; with two threads the
    /// per-example pass of each block runs in two halves and a large block's update of `S` in
    /// two column bands, [`syrk_bands`]); adds `Σ τ_i` to `sbb`.
    fn schur_gemm(&mut self, sc: &DsxScalings<'_>, sbb: &mut f64) -> Result<()> {
        let n = self.n;
        let n1 = n + 1;
        // with two threads, the per-example pass of each block and its update of `S` each run
        // on both (the same bits as one thread)
        let split = self.settings.threads >= 2;
        let chunk = self.settings.chunk_rows.min(self.m).max(1);
        let sh = Shared {
            n,
            dense: self.dense,
            delta: self.settings.static_regularization,
            gemm: true,
            pair: false,
            indptr: &self.indptr,
            indices: &self.indices,
            x: &self.x,
            scale: self.scale,
            v: &self.v,
            y: &self.y,
            p_eff: &self.p_eff,
        };
        let mut i0 = 0;
        while i0 < self.m {
            let i1 = (i0 + chunk).min(self.m);
            let c = i1 - i0;
            if !self.dense {
                self.g1[..n * c].iter_mut().for_each(|e| *e = 0.0);
                self.g2[..n * c].iter_mut().for_each(|e| *e = 0.0);
            }
            let (nz0, nz1) = (self.indptr[i0], self.indptr[i1]);
            let inv = &mut self.inv_delta[nz0..nz1];
            let ex = &mut self.ex[i0..i1];
            let (g1, g2) = (&mut self.g1[..n * c], &mut self.g2[..n * c]);
            let [w0, w1] = &mut self.work;
            if c >= 2 {
                // the two halves always accumulate separately (diagonal, b column, Σ τ_i), on
                // two threads or one, so the factor does not depend on `par`
                let mid = i0 + c / 2;
                let cut = self.indptr[mid] - nz0;
                let (inv_a, inv_b) = inv.split_at_mut(cut);
                let (ex_a, ex_b) = ex.split_at_mut(mid - i0);
                let (g1a, g1b) = g1.split_at_mut(n * (mid - i0));
                let (g2a, g2b) = g2.split_at_mut(n * (mid - i0));
                let (ra, rb) = if split {
                    std::thread::scope(|scope| {
                        let h = scope.spawn(|| {
                            factor_range(&sh, sc, mid, i1, 0.0, inv_b, ex_b, g1b, g2b, &mut [], w1)
                        });
                        let ra =
                            factor_range(&sh, sc, i0, mid, 0.0, inv_a, ex_a, g1a, g2a, &mut [], w0);
                        (ra, h.join().expect("per-example worker panicked"))
                    })
                } else {
                    let ra =
                        factor_range(&sh, sc, i0, mid, 0.0, inv_a, ex_a, g1a, g2a, &mut [], w0);
                    let rb =
                        factor_range(&sh, sc, mid, i1, 0.0, inv_b, ex_b, g1b, g2b, &mut [], w1);
                    (ra, rb)
                };
                *sbb += ra?;
                *sbb += rb?;
            } else {
                *sbb += factor_range(&sh, sc, i0, i1, 0.0, inv, ex, g1, g2, &mut [], w0)?;
            }
            let smat = MatMut::from_column_major_slice_mut(&mut self.s, n1, n1);
            let g2 = MatRef::from_column_major_slice(&self.g2[..n * c], n, c);
            let g1 = MatRef::from_column_major_slice(&self.g1[..n * c], n, c);
            // S_ww += G2 G2ᵀ − G1 G1ᵀ (lower triangle): BLAS-3, in two column bands on two
            // threads (faer's own parallel kernels would not give the same bits for every
            // thread count; the bands do)
            syrk_bands(
                smat.submatrix_mut(0, 0, n, n),
                g2,
                g1,
                split,
                self.settings.par,
            );
            i0 = i1;
        }
        Ok(())
    }
}

/// The first band's share of the columns of `S_ww`: its triangle and the rectangle below it
/// are as much work as the other band's triangle when the band holds `1 − 1/√2` of the columns.
const FIRST_BAND: f64 = 1.0 - std::f64::consts::FRAC_1_SQRT_2;

/// Below this many `n² · c` (about the multiply-adds of one block's update), the update of `S`
/// is one kernel call per term on one thread: a second thread costs more than it saves
/// (measured: `dense-1000x100`, `spambase`).
const BANDS_MIN_WORK: usize = 1 << 24;

/// `S += G2 G2ᵀ − G1 G1ᵀ` on the lower triangle of the square `S`. With `par = Par::Seq` and a
/// large block, in two column bands of about equal work — the first `j` columns (their
/// triangle, then the rectangle below it) and the rest (its triangle) — on two threads when
/// `split`, else one after the other. Each entry is computed by the same sequential kernel call
/// either way, so the result depends on the shape only, never on `split`. Otherwise one faer
/// call per term with `par` (faer's parallel kernels, when asked for).
fn syrk_bands(
    sww: MatMut<'_, f64>,
    g2: MatRef<'_, f64>,
    g1: MatRef<'_, f64>,
    split: bool,
    par: Par,
) {
    let n = sww.nrows();
    if par != Par::Seq || n * n * g2.ncols() < BANDS_MIN_WORK {
        let mut sww = sww;
        for (g, alpha) in [(g2, 1.0), (g1, -1.0)] {
            syrk_lower(sww.rb_mut(), g, alpha, par);
        }
        return;
    }
    let j = ((n as f64) * FIRST_BAND).round() as usize;
    let (left, right) = sww.split_at_col_mut(j);
    let (mut top, mut below) = left.split_at_row_mut(j);
    let mut corner = right.subrows_mut(j, n - j);
    let mut band1 = move || {
        for (g, alpha) in [(g2, 1.0), (g1, -1.0)] {
            let (g_top, g_bot) = g.split_at_row(j);
            syrk_lower(top.rb_mut(), g_top, alpha, Par::Seq);
            matmul(
                below.rb_mut(),
                Accum::Add,
                g_bot,
                g_top.transpose(),
                alpha,
                Par::Seq,
            );
        }
    };
    let mut band2 = move || {
        for (g, alpha) in [(g2, 1.0), (g1, -1.0)] {
            syrk_lower(corner.rb_mut(), g.split_at_row(j).1, alpha, Par::Seq);
        }
    };
    if split {
        std::thread::scope(|scope| {
            let h = scope.spawn(band2);
            band1();
            h.join().expect("Schur band worker panicked");
        });
    } else {
        band1();
        band2();
    }
}

/// `dst += α G Gᵀ` on the lower triangle of the square `dst` (one faer call).
fn syrk_lower(dst: MatMut<'_, f64>, g: MatRef<'_, f64>, alpha: f64, par: Par) {
    tri_matmul(
        dst,
        BlockStructure::TriangularLower,
        Accum::Add,
        g,
        BlockStructure::Rectangular,
        g.transpose(),
        BlockStructure::Rectangular,
        alpha,
        par,
    );
}
