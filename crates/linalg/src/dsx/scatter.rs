//! The cache-blocked sparse-scatter kernel for `S`
//! ([`SchurKernel::SparseScatter`](super::SchurKernel::SparseScatter)): the blocking plan (chunks
//! of examples × column bands), the per-example pass over a chunk, and the band updates (on one
//! or two threads, bit-identical).

use super::cols::{Cols, Ident};
use super::example::{ExampleFactor, Shared, Work, factor_range};
use super::{DsxScalings, DsxSystem};
use crate::error::Result;

impl DsxSystem<'_> {
    /// The blocked sparse-scatter kernel; adds `Σ τ_i` to `sbb`.
    ///
    /// For each chunk of consecutive examples (`ScatterPlan::chunks`, at most
    /// `SCATTER_CHUNK_NNZ` stored entries) the per-example closed form stores the two rank-one
    /// vectors `g1, g2` of every example of the chunk (`ScatterPlan::g1/g2`, support order);
    /// then `S_ww` is updated band by band (`ScatterPlan::bands`: column blocks with about
    /// `SCATTER_BAND_DOUBLES` entries of the lower triangle), each band by all the chunk's
    /// examples in order, columns `S_i[a]` of the band, rows `S_i[r]`, `r ≥ a` (a per-example
    /// cursor walks the sorted support band by band). A band and the chunk's store stay in L2
    /// while they are used, so `S` (4.9 MB at `n = 784`, beyond the 2 MiB L2) is streamed from
    /// L3 once per chunk instead of once per example.
    ///
    /// Every entry of `S` receives its updates in example order with the same expression
    /// whatever the chunks, bands and thread count, and `acc_diag`, `acc_wb`, `Σ τ_i` are
    /// summed as before (sequential per-example pass; `τ` in groups of `chunk_rows`): the
    /// factor is bit-identical to the unblocked kernel and across `Par`.
    ///
    /// With `threads ≥ 2`, two threads (exactly two): the bands are split at a column
    /// (`ScatterPlan::split`) into two sets of disjoint columns of `S`, and the work is
    /// pipelined per chunk: while the second thread updates its bands with chunk `c`, the
    /// first runs the per-example pass of chunk `c + 1` into the other store, then updates its
    /// bands with chunk `c` (one `rayon::join` per chunk on rayon's workers, no other
    /// synchronisation). The split
    /// gives the first thread `(updates − SCATTER_PASS_COST · nnz)/2` entry updates.
    ///
    /// Measured (2-core Sapphire Rapids VM, 2 MiB L2/core, noisy host), 10000×784 CSR at 19 %
    /// (`nnz` 1.49 M, 1.12e8 entry updates), random scalings, `--bench scatter`, best of 5
    /// over 8 interleaved rounds with the unblocked build: factor 177 → **128 ms** with
    /// `Par::Seq` (the unblocked kernel: 144–190 ms over the session), **74 ms** with two
    /// threads (unblocked: 172 ms, sequential scatter). Cachegrind with a 2 MiB last level
    /// (the L2), m = 2000: 3.10 M → 0.82 M L2 misses per factor, instructions 312 M → 300 M.
    /// Tuning (chunk 16 K/32 K/64 K/128 K entries × band 8 K…128 K doubles): a 128 K-entry
    /// chunk (2 MiB of `g1, g2`) overflows L2 (1.9 M misses); 64 K entries (1 MiB) with
    /// 16 K-double bands (128 KiB) had the fewest L2 and L1 misses and the best times, 32 K ×
    /// 32 K was within noise (±5 %). With two threads each thread updated at about 1.3 ns per
    /// entry against 0.85 ns alone (both cores slower when both run, on this VM).
    pub(super) fn schur_scatter(&mut self, sc: &DsxScalings<'_>, sbb: &mut f64) -> Result<()> {
        let n1 = self.n + 1;
        let sh = Shared {
            n: self.n,
            dense: self.dense,
            delta: self.settings.static_regularization,
            gemm: false,
            pair: false,
            indptr: &self.indptr,
            indices: &self.indices,
            x: &self.x,
            scale: self.scale,
            v: &self.v,
            y: &self.y,
            p_eff: &self.p_eff,
        };
        let ScatterPlan {
            chunks,
            bands,
            split,
            g1,
            g2,
            cursors: [cur0, cur1],
        } = &mut self.scatter;
        let two = self.settings.threads >= 2 && !g1[1].is_empty();
        let mut pass = ExamplePass {
            sh: &sh,
            sc,
            // `Σ τ_i` is summed in groups of `chunk_rows` examples (as the GEMM kernel does), so
            // `S_bb` too is bit-identical to the unblocked scatter kernel.
            group: self.settings.chunk_rows,
            tau: 0.0,
            sbb,
            inv_delta: &mut self.inv_delta,
            ex: &mut self.ex,
            wk: &mut self.work[0],
        };
        let [g1a, g1b] = g1;
        let [g2a, g2b] = g2;
        if !two {
            for ch in chunks.windows(2) {
                let (i0, i1) = (ch[0], ch[1]);
                pass.run(i0, i1, g1a, g2a)?;
                update_bands(
                    &sh,
                    i0,
                    i1,
                    g1a,
                    g2a,
                    bands,
                    &mut self.s,
                    &mut cur0[..i1 - i0],
                );
            }
            return Ok(());
        }
        // Two threads, pipelined: while the second thread updates its bands with chunk c, the
        // first runs the per-example pass of chunk c + 1 (into the other store), then updates
        // its own bands with chunk c. The split column balances the two loads (see
        // `ScatterPlan::new`).
        let (bands_a, bands_b) = (&bands[..=*split], &bands[*split..]);
        let (s_a, s_b) = self.s.split_at_mut(bands[*split] * n1);
        let nch = chunks.len() - 1;
        pass.run(chunks[0], chunks[1], g1a, g2a)?;
        for c in 0..nch {
            let (i0, i1) = (chunks[c], chunks[c + 1]);
            let (g1c, g1n, g2c, g2n) = if c % 2 == 0 {
                (&*g1a, &mut *g1b, &*g2a, &mut *g2b)
            } else {
                (&*g1b, &mut *g1a, &*g2b, &mut *g2a)
            };
            let (s_a, s_b) = (&mut *s_a, &mut *s_b);
            let (cur_a, cur_b) = (&mut cur0[..i1 - i0], &mut cur1[..i1 - i0]);
            let shr = &sh;
            // rayon's workers, not a new OS thread per chunk (≈ 20 chunks per factorisation)
            let ((), next) = rayon::join(
                move || update_bands(shr, i0, i1, g1c, g2c, bands_b, s_b, cur_b),
                || {
                    let next = if c + 1 < nch {
                        pass.run(i1, chunks[c + 2], g1n, g2n)
                    } else {
                        Ok(())
                    };
                    update_bands(shr, i0, i1, g1c, g2c, bands_a, s_a, cur_a);
                    next
                },
            );
            next?;
        }
        Ok(())
    }
}

/// Blocking plan and buffers of the sparse-scatter kernel, built once from the sparsity
/// pattern (constructor or [`DsxSystem::set_settings`]); `factor` only reads the plan.
#[derive(Debug, Clone, Default)]
pub(super) struct ScatterPlan {
    /// Example boundaries of the chunks: chunk `c` is `chunks[c]..chunks[c + 1]`.
    pub(super) chunks: Vec<usize>,
    /// Column boundaries of the bands of `S_ww` (`bands[0] = 0`, last `= n`).
    pub(super) bands: Vec<usize>,
    /// Bands `..split` go to the first thread, `split..` to the second.
    pub(super) split: usize,
    /// `g1`, `g2` of one chunk, in storage order (length: the largest chunk's nnz); the second
    /// store (empty with `Par::Seq`) lets the two-thread pipeline fill one while reading the
    /// other.
    pub(super) g1: [Vec<f64>; 2],
    pub(super) g2: [Vec<f64>; 2],
    /// Per-thread support cursors, one per example of a chunk.
    pub(super) cursors: [Vec<usize>; 2],
}

/// Maximum stored entries per chunk of the scatter kernel (unless one example has more): the
/// chunk's `g1`, `g2` take `2 · 8 · SCATTER_CHUNK_NNZ` bytes = 1 MiB, half the L2. Tuned by
/// measurement, see [`DsxSystem::schur_scatter`].
pub(super) const SCATTER_CHUNK_NNZ: usize = 1 << 16;
/// Target lower-triangle entries (doubles) per band of `S_ww`: 128 KiB (tuned, ibid.).
pub(super) const SCATTER_BAND_DOUBLES: usize = 1 << 14;
/// Cost of the per-example pass per stored entry, in units of one scatter update of `S`
/// (measured ≈ 10 on the 10000×784, 19 % case): balances the two-thread split.
pub(super) const SCATTER_PASS_COST: f64 = 10.0;

impl ScatterPlan {
    pub(super) fn new(
        n: usize,
        dense: bool,
        indptr: &[usize],
        indices: &[usize],
        two_threads: bool,
        chunk_nnz: usize,
        band_doubles: usize,
        pass_cost: f64,
    ) -> Self {
        let m = indptr.len() - 1;
        // Chunks: consecutive examples with at most `chunk_nnz` stored entries (at least one
        // example each).
        let mut chunks = vec![0];
        let (mut max_nnz, mut max_ex) = (0, 0);
        let mut start = 0;
        for i in 0..m {
            if i > start && indptr[i + 1] - indptr[start] > chunk_nnz {
                chunks.push(i);
                start = i;
            }
            max_nnz = max_nnz.max(indptr[i + 1] - indptr[start]);
            max_ex = max_ex.max(i + 1 - start);
        }
        chunks.push(m);
        // Exact update count of each column of S_ww: example i updates rows S_i[a..] of column
        // S_i[a].
        let mut work = vec![0.0f64; n];
        for i in 0..m {
            let k = indptr[i + 1] - indptr[i];
            for a in 0..k {
                let j = if dense { a } else { indices[indptr[i] + a] };
                work[j] += (k - a) as f64;
            }
        }
        // Two-thread split: the first thread also runs the per-example pass, so it gets
        // `(total − pass)/2` updates (the first column where the cumulative count reaches it).
        let total: f64 = work.iter().sum();
        let target = 0.5 * (total - pass_cost * indptr[m] as f64);
        let mut acc = 0.0;
        let mut split_col = n;
        for (j, &wj) in work.iter().enumerate() {
            if acc >= target {
                split_col = j;
                break;
            }
            acc += wj;
        }
        // Bands: each side of the split cut into equal-area parts of the lower triangle (column
        // j holds n − j entries of S_ww) of at most about `band_doubles` entries.
        let mut bands = vec![0];
        let mut split = 0;
        for (lo, hi) in [(0, split_col), (split_col, n)] {
            if lo < hi {
                let area = |j: usize| (n - j) as f64;
                let total: f64 = (lo..hi).map(area).sum();
                let nb = (total / band_doubles as f64).ceil().max(1.0);
                let mut acc = 0.0;
                let mut b = 1.0;
                for j in lo..hi {
                    acc += area(j);
                    if acc >= total * b / nb && j + 1 < hi {
                        bands.push(j + 1);
                        b += 1.0;
                    }
                }
                bands.push(hi);
            }
            if lo == 0 {
                split = bands.len() - 1;
            }
        }
        let second = if two_threads { max_nnz } else { 0 };
        Self {
            chunks,
            bands,
            split,
            g1: [vec![0.0; max_nnz], vec![0.0; second]],
            g2: [vec![0.0; max_nnz], vec![0.0; second]],
            cursors: [
                vec![0; max_ex],
                vec![0; if two_threads { max_ex } else { 0 }],
            ],
        }
    }
}

/// The per-example pass of the scatter kernel over consecutive chunks (sequential, in example
/// order: `acc_diag`, `acc_wb` and `Σ τ_i` are summed exactly as by the unblocked kernel).
struct ExamplePass<'a, 'b> {
    sh: &'a Shared<'a>,
    sc: &'a DsxScalings<'b>,
    group: usize,
    tau: f64,
    sbb: &'a mut f64,
    inv_delta: &'a mut [f64],
    ex: &'a mut [ExampleFactor],
    wk: &'a mut Work,
}

impl ExamplePass<'_, '_> {
    /// Examples `i0..i1` (one chunk): `g1`, `g2` receive the chunk's rank-one vectors.
    fn run(&mut self, i0: usize, i1: usize, g1: &mut [f64], g2: &mut [f64]) -> Result<()> {
        let indptr = self.sh.indptr;
        let nz0 = indptr[i0];
        let m = indptr.len() - 1;
        let mut a = i0;
        while a < i1 {
            let b = ((a / self.group + 1) * self.group).min(i1);
            let (za, zb) = (indptr[a], indptr[b]);
            self.tau = factor_range(
                self.sh,
                self.sc,
                a,
                b,
                self.tau,
                &mut self.inv_delta[za..zb],
                &mut self.ex[a..b],
                &mut g1[za - nz0..zb - nz0],
                &mut g2[za - nz0..zb - nz0],
                &mut [],
                self.wk,
            )?;
            if b.is_multiple_of(self.group) || b == m {
                *self.sbb += self.tau;
                self.tau = 0.0;
            }
            a = b;
        }
        Ok(())
    }
}

/// Updates the columns `bands[0]..bands[last]` of `S_ww` (in `s`, which starts at column
/// `bands[0]`) with the rank-one terms of examples `i0..i1` (`g1`, `g2`: the chunk store),
/// band by band, each band by every example in order.
fn update_bands(
    sh: &Shared<'_>,
    i0: usize,
    i1: usize,
    g1: &[f64],
    g2: &[f64],
    bands: &[usize],
    s: &mut [f64],
    cur: &mut [usize],
) {
    if bands.len() < 2 {
        return;
    }
    // compiled for the best instruction set of the CPU (FMA where available; `mul_add` is
    // exactly rounded on every path, so the bits do not depend on it)
    pulp::Arch::new().dispatch(UpdateBands {
        sh,
        i0,
        i1,
        g1,
        g2,
        bands,
        s,
        cur,
    });
}

/// [`update_bands`] as a [`pulp::WithSimd`] operation: its body is inlined into each
/// instruction-set variant (a plain closure would not be, and its `mul_add`s would become
/// calls to the software `fma`).
struct UpdateBands<'a, 'b> {
    sh: &'a Shared<'b>,
    i0: usize,
    i1: usize,
    g1: &'a [f64],
    g2: &'a [f64],
    bands: &'a [usize],
    s: &'a mut [f64],
    cur: &'a mut [usize],
}

impl pulp::WithSimd for UpdateBands<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let (sh, i0, i1) = (self.sh, self.i0, self.i1);
        let (g1, g2, bands, s, cur) = (self.g1, self.g2, self.bands, self.s, self.cur);
        if sh.dense {
            update_bands_cols(sh, i0, i1, g1, g2, bands, s, cur, |_| Ident);
        } else {
            let (indptr, indices) = (sh.indptr, sh.indices);
            update_bands_cols(sh, i0, i1, g1, g2, bands, s, cur, |i| {
                &indices[indptr[i]..indptr[i + 1]]
            });
        }
    }
}

/// One entry of an example's rank-two update of `S_ww`, `s + c2·h2 − c1·h1` (DSX eqs.
/// (19)–(21), pass 2 of `factor_example`), as two fused multiply-adds: `(s − c1·h1) + c2·h2`.
#[inline(always)]
pub(super) fn rank2(s: f64, c1: f64, c2: f64, h1: f64, h2: f64) -> f64 {
    c2.mul_add(h2, (-c1).mul_add(h1, s))
}

#[inline(always)]
fn update_bands_cols<'c, C: Cols + 'c>(
    sh: &Shared<'_>,
    i0: usize,
    i1: usize,
    g1: &[f64],
    g2: &[f64],
    bands: &[usize],
    s: &mut [f64],
    cur: &mut [usize],
    support: impl Fn(usize) -> C,
) {
    let n1 = sh.n + 1;
    let base = sh.indptr[i0];
    let c_base = bands[0];
    for (i, cu) in (i0..i1).zip(cur.iter_mut()) {
        let k = sh.indptr[i + 1] - sh.indptr[i];
        let cols = support(i);
        // first support position in this thread's columns (once per chunk and thread)
        *cu = if c_base == 0 {
            0
        } else {
            let (mut lo, mut hi) = (0, k);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if cols.at(mid) < c_base {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
    }
    for band in bands.windows(2) {
        let c1 = band[1];
        for (i, cu) in (i0..i1).zip(cur.iter_mut()) {
            let r = sh.indptr[i] - base..sh.indptr[i + 1] - base;
            let k = r.len();
            let cols = support(i);
            let a0 = *cu;
            let mut a1 = a0;
            while a1 < k && cols.at(a1) < c1 {
                a1 += 1;
            }
            *cu = a1;
            if a1 > a0 {
                scatter_columns(cols, a0, a1, &g1[r.clone()], &g2[r], s, c_base, n1);
            }
        }
    }
}

/// `S[S_i[r], S_i[a]] += g2[a] g2[r] − g1[a] g1[r]` for `a ∈ a0..a1`, `r ≥ a` (`s` starts at
/// column `c_base`, columns of length `n1`). Four columns per sweep (then two, then one): each
/// loaded (index, g1, g2) triple feeds eight fused multiply-adds ([`rank2`]).
#[inline(always)]
fn scatter_columns<C: Cols>(
    cols: C,
    a0: usize,
    a1: usize,
    g1: &[f64],
    g2: &[f64],
    s: &mut [f64],
    c_base: usize,
    n1: usize,
) {
    let k = g1.len();
    let n = n1 - 1;
    let mut a = a0;
    while a + 3 < a1 {
        let j = [cols.at(a), cols.at(a + 1), cols.at(a + 2), cols.at(a + 3)];
        let c1 = [g1[a], g1[a + 1], g1[a + 2], g1[a + 3]];
        let c2 = [g2[a], g2[a + 1], g2[a + 2], g2[a + 3]];
        let (rest, right) = s.split_at_mut((j[3] - c_base) * n1);
        let col_d = &mut right[..n];
        let (rest, right) = rest.split_at_mut((j[2] - c_base) * n1);
        let col_c = &mut right[..n];
        let (rest, right) = rest.split_at_mut((j[1] - c_base) * n1);
        let col_b = &mut right[..n];
        let col_a = &mut rest[(j[0] - c_base) * n1..][..n];
        // the 4×4 triangle on the four columns' own rows
        for q in 0..4 {
            let (h1, h2) = (c1[q], c2[q]);
            let jr = j[q];
            col_a[jr] = rank2(col_a[jr], c1[0], c2[0], h1, h2);
            if q >= 1 {
                col_b[jr] = rank2(col_b[jr], c1[1], c2[1], h1, h2);
            }
            if q >= 2 {
                col_c[jr] = rank2(col_c[jr], c1[2], c2[2], h1, h2);
            }
            if q == 3 {
                col_d[jr] = rank2(col_d[jr], c1[3], c2[3], h1, h2);
            }
        }
        for (jr, (&h1, &h2)) in cols
            .range_iter(a + 4, k)
            .zip(g1[a + 4..].iter().zip(&g2[a + 4..]))
        {
            col_a[jr] = rank2(col_a[jr], c1[0], c2[0], h1, h2);
            col_b[jr] = rank2(col_b[jr], c1[1], c2[1], h1, h2);
            col_c[jr] = rank2(col_c[jr], c1[2], c2[2], h1, h2);
            col_d[jr] = rank2(col_d[jr], c1[3], c2[3], h1, h2);
        }
        a += 4;
    }
    while a + 1 < a1 {
        let (ja, jb) = (cols.at(a) - c_base, cols.at(a + 1) - c_base);
        let (c1a, c2a, c1b, c2b) = (g1[a], g2[a], g1[a + 1], g2[a + 1]);
        let (left, right) = s.split_at_mut(jb * n1);
        let col_a = &mut left[ja * n1..ja * n1 + n];
        let col_b = &mut right[..n];
        col_a[cols.at(a)] = rank2(col_a[cols.at(a)], c1a, c2a, g1[a], g2[a]);
        for (jr, (&h1, &h2)) in cols
            .range_iter(a + 1, k)
            .zip(g1[a + 1..].iter().zip(&g2[a + 1..]))
        {
            col_a[jr] = rank2(col_a[jr], c1a, c2a, h1, h2);
            col_b[jr] = rank2(col_b[jr], c1b, c2b, h1, h2);
        }
        a += 2;
    }
    if a < a1 {
        let ja = cols.at(a) - c_base;
        let (c1a, c2a) = (g1[a], g2[a]);
        let col_a = &mut s[ja * n1..ja * n1 + n];
        for (jr, (&h1, &h2)) in cols.range_iter(a, k).zip(g1[a..].iter().zip(&g2[a..])) {
            col_a[jr] = rank2(col_a[jr], c1a, c2a, h1, h2);
        }
    }
}
