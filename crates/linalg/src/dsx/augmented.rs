//! The quasi-definite reduced system behind the example-space and sparse methods
//! ([`NormalEquations::ExampleSpace`](super::NormalEquations::ExampleSpace),
//! [`NormalEquations::SparseLdl`](super::NormalEquations::SparseLdl)).
//!
//! After the per-example arrow pivots (`α_i`, `ξ_i`) are eliminated, each example keeps two
//! variables, `λ_i` and the multiplier `μ_i` of its row `a_i` (the augmented arrow solve of
//! `example`), coupled to `w` through `r1_i` and `e_i` and to `b` through `y_i`. With
//! `μ′_i = μ_i / √ζ_i` (which stays finite when `θ_i = 0`) the system onto `(w, b)` is the Schur
//! complement of
//!
//! ```text
//!   [ Ω′    B′_w   0     ]     w:   Ω′_j = ω_j + δ + Σ_i φ_ij x_ij² (σ_ij+δ)/Δ_ij
//!   [ B′_wᵀ C′     B′_bᵀ ]     (λ_i, μ′_i):  C′_i = [[s_i, −t_i √ζ_i], [−t_i √ζ_i, −1]]
//!   [ 0     B′_b   ω_b+δ ]     B′: (w_j, λ_i) = r1_ij, (w_j, μ′_i) = −√ζ_i e_ij = −g2_ij,
//!                                  (b, μ′_i) = −y_i √ζ_i
//! ```
//!
//! onto `(w, b)`: `S = [Ω′ 0; 0 ω_b+δ] − B′ C′⁻¹ B′ᵀ` is exactly the feature space's `S`
//! (`dsx-normal-equations.md`; `C′⁻¹` has the corner inverse `[[p11, −p12], [−p12, −p22]]` of
//! `example` in these units). The matrix is **quasi-definite**: the block on `(w, λ, b)` is the
//! normal matrix of the rows `b_ij` with `α` eliminated (positive definite), the block on `μ′` is
//! `−I`. So an `LDLᵀ` exists in every symmetric order with `D`'s signs known in advance (`+` on
//! `w`, `λ`, `b`; `−` on `μ′`), which faer's dynamic regularisation is given (Vanderbei's
//! quasi-definite matrices; the same structure Clarabel's KKT solvers rely on). Solving
//! `S z = r` is solving this system with right-hand side `(r_w, 0, r_b)`.
//!
//! - **Example space**: `w` eliminated first (its block is the diagonal `Ω′`): the dense matrix
//!   `Q = C′ − B′_wᵀ Ω′⁻¹ B′_w` bordered by `b`, of order `2m + 1`, formed feature by feature
//!   (`Σ_j c_j²` scattered updates, a SYRK panel for frequent features), then faer's dense
//!   `LDLᵀ`.
//! - **Sparse**: the whole matrix of order `n + 2m + 1` in faer's supernodal sparse `LDLᵀ`, in an
//!   approximate minimum degree order of everything but `b`, with `b` last (its row is dense).
//!
//! Both scale the matrix symmetrically to a unit diagonal first (`Ω′_j`, `s_i`, `1`, and `S_bb`
//! for `b`), so that the dynamic regularisation's threshold is relative to each variable's own
//! scale, as for the feature space's `S`. The `λ_i` diagonal of `Q` is clamped to its exact
//! lower bound `ρ_i + δ` (each `r1_ij² / Ω′_j ≤ φ_ij v_j² (σ_ij+δ)/Δ_ij`), as `S_jj` is.

use faer::Par;
use faer::linalg::cholesky::ldlt::factor::{LdltRegularization, cholesky_in_place_scratch};
use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
use faer::linalg::triangular_solve::{
    solve_unit_lower_triangular_in_place, solve_unit_upper_triangular_in_place,
};
use faer::{Accum, MatMut, MatRef};

use super::ldlt::{PANEL as PANEL_LDLT, ldlt_in_place, ldlt_work_len};
use super::plan::dense_feature;
use super::{DsxScalings, DsxSystem};
use crate::error::{Block, LinalgError, Result, Scratch};

/// Columns of the SYRK panel of frequent features (example space).
const PANEL: usize = 64;

/// The per-stored-entry couplings of the quasi-definite system and the column map of the
/// pattern, shared by both methods.
#[derive(Debug, Clone, Default)]
pub(super) struct Couplings {
    /// `r1_ij`, the `(w_j, λ_i)` coupling, in storage order.
    pub(super) r1: Vec<f64>,
    /// `g2_ij = √ζ_i e_ij` (the `(w_j, μ′_i)` coupling is `−g2_ij`), in storage order.
    pub(super) g2: Vec<f64>,
    /// `d_ij = φ_ij x_ij² (σ_ij+δ)/Δ_ij`, example `i`'s term of `Ω′_j`, in storage order.
    pub(super) d: Vec<f64>,
    /// `Ω′_j`, the diagonal of `w` with `α` eliminated: `ω_j + δ + Σ_i d_ij`.
    pub(super) omega: Vec<f64>,
    /// `ω_j + δ`, the part of `Ω′_j` from no example.
    pub(super) base: Vec<f64>,
    /// Each example's own terms of its diagonal block after `w` is eliminated, summed without
    /// cancellation ([`Couplings::self_terms`]): `Σ_j (r1²/d)(Ω′⁽⁻ⁱ⁾_j/Ω′_j)`,
    /// `Σ_j (r1 g2/d)(Ω′⁽⁻ⁱ⁾_j/Ω′_j)` over the entries with `d > 0`, and `Σ_j g2²/Ω′_j`.
    pub(super) self_ll: Vec<f64>,
    pub(super) self_lm: Vec<f64>,
    pub(super) self_mm: Vec<f64>,
    /// Scratch of one feature's examples (suffix sums).
    colbuf: Vec<f64>,
    /// `S_bb = ω_b + δ + Σ_i τ_i`: the scale of `b`.
    pub(super) sbb: f64,
    /// `ω_b + δ`, the part of `S_bb` from no example.
    pub(super) sbb_base: f64,
    /// The column map: feature `j`'s stored entries are `csc_pos[csc_ptr[j]..csc_ptr[j + 1]]`
    /// (storage positions), of the examples `csc_ex[..]`, in increasing example order.
    pub(super) csc_ptr: Vec<usize>,
    pub(super) csc_ex: Vec<u32>,
    pub(super) csc_pos: Vec<usize>,
}

impl Couplings {
    /// The column map of the pattern (`indices` empty: dense rows, every feature in every
    /// example), with the value vectors still empty ([`Couplings::allocate`]).
    pub(super) fn new(m: usize, n: usize, indptr: &[usize], indices: &[usize]) -> Self {
        let nnz = indptr[m];
        let dense = indices.is_empty() && nnz == m * n;
        let col = |q: usize, i: usize| if dense { q - i * n } else { indices[q] };
        let mut csc_ptr = vec![0usize; n + 1];
        for i in 0..m {
            for q in indptr[i]..indptr[i + 1] {
                csc_ptr[col(q, i) + 1] += 1;
            }
        }
        for j in 0..n {
            csc_ptr[j + 1] += csc_ptr[j];
        }
        let mut next = csc_ptr[..n].to_vec();
        let mut csc_ex = vec![0u32; nnz];
        let mut csc_pos = vec![0usize; nnz];
        for i in 0..m {
            for q in indptr[i]..indptr[i + 1] {
                let j = col(q, i);
                csc_ex[next[j]] = i as u32;
                csc_pos[next[j]] = q;
                next[j] += 1;
            }
        }
        Self {
            r1: Vec::new(),
            g2: Vec::new(),
            d: Vec::new(),
            omega: Vec::new(),
            base: Vec::new(),
            self_ll: Vec::new(),
            self_lm: Vec::new(),
            self_mm: Vec::new(),
            colbuf: Vec::new(),
            sbb: 0.0,
            sbb_base: 0.0,
            csc_ptr,
            csc_ex,
            csc_pos,
        }
    }

    /// Sizes the value vectors (`r1`, `g2`, `d` per stored entry, `Ω′` per feature, the self
    /// terms per example).
    pub(super) fn allocate(&mut self, m: usize) {
        let (nnz, n) = (self.csc_pos.len(), self.csc_ptr.len() - 1);
        self.r1 = vec![0.0; nnz];
        self.g2 = vec![0.0; nnz];
        self.d = vec![0.0; nnz];
        self.omega = vec![0.0; n];
        self.base = vec![0.0; n];
        self.self_ll = vec![0.0; m];
        self.self_lm = vec![0.0; m];
        self.self_mm = vec![0.0; m];
        let widest = (0..n)
            .map(|j| self.csc_ptr[j + 1] - self.csc_ptr[j])
            .max()
            .unwrap_or(0);
        self.colbuf = vec![0.0; widest];
    }

    /// The self terms of every example's diagonal block (fields `self_*`), without the
    /// cancellation of `s_i − Σ_j r1_ij²/Ω′_j`: since `r1_ij² = a_ij d_ij` with `a_ij` example
    /// `i`'s term of `s_i`, each entry's part is `a_ij (1 − d_ij/Ω′_j) = a_ij Ω′⁽⁻ⁱ⁾_j / Ω′_j`,
    /// with `Ω′⁽⁻ⁱ⁾_j = ω_j + δ + Σ_{k≠i} d_kj` summed from the other examples' terms (prefix
    /// and suffix sums over the feature's examples). A word that occurs in one document only
    /// (most of a text corpus's vocabulary) would otherwise leave its document's `λ` pivot as
    /// the difference of two nearly equal numbers. Likewise `t_i`'s part `φ v/Δ (1 − d/Ω′)`.
    /// A feature with `kept_at[j] != NOT_KEPT` stays in the dense system: its terms of `s_i`
    /// and `t_i` stay whole (ratio 1) and it adds nothing to `μ′`.
    pub(super) fn self_terms(&mut self, kept_at: &[u32]) {
        self.self_ll.fill(0.0);
        self.self_lm.fill(0.0);
        self.self_mm.fill(0.0);
        let n = self.omega.len();
        for j in 0..n {
            if kept_at[j] != NOT_KEPT {
                let r = self.csc_ptr[j]..self.csc_ptr[j + 1];
                for (&i, &q) in self.csc_ex[r.clone()].iter().zip(&self.csc_pos[r]) {
                    let i = i as usize;
                    let (d, r1, g2) = (self.d[q], self.r1[q], self.g2[q]);
                    if d > 0.0 {
                        self.self_ll[i] += r1 * r1 / d;
                        self.self_lm[i] += r1 * g2 / d;
                    }
                }
                continue;
            }
            let r = self.csc_ptr[j]..self.csc_ptr[j + 1];
            let (exs, pos) = (&self.csc_ex[r.clone()], &self.csc_pos[r]);
            let c = exs.len();
            // suffix sums of d over the feature's examples
            let suffix = &mut self.colbuf[..c];
            let mut acc = 0.0;
            for t in (0..c).rev() {
                suffix[t] = acc;
                acc += self.d[pos[t]];
            }
            let (omega, base) = (self.omega[j], self.base[j]);
            let mut before = 0.0;
            for t in 0..c {
                let (i, q) = (exs[t] as usize, pos[t]);
                let (d, r1, g2) = (self.d[q], self.r1[q], self.g2[q]);
                if d > 0.0 {
                    let ratio = (base + before + suffix[t]) / omega;
                    self.self_ll[i] += r1 * r1 / d * ratio;
                    self.self_lm[i] += r1 * g2 / d * ratio;
                }
                self.self_mm[i] += g2 * g2 / omega;
                before += d;
            }
        }
    }

    /// Feature `j`'s entries: `(example, storage position)`.
    #[inline]
    pub(super) fn column(&self, j: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let r = self.csc_ptr[j]..self.csc_ptr[j + 1];
        self.csc_ex[r.clone()]
            .iter()
            .zip(&self.csc_pos[r])
            .map(|(&i, &q)| (i as usize, q))
    }
}

/// The example space orders its dense system `μ′_0..μ′_{m−1}`, `λ_0..λ_{m−1}`, the kept features,
/// `b`: the `μ′` block (`≼ −I`) is eliminated first, which only adds to the `λ` pivots (a
/// positive definite Schur complement), so the `λ` pivots see no cancellation beyond their own.
///
/// A feature is kept in the example-space system (not eliminated first) when its own
/// diagonal `Ω′_j` is below this fraction of its whole scale `Ω′_j + Σ_i (r1_ij²/s_i + g2_ij²)`
/// (`factor_example_space`).
pub(super) const KEEP_RATIO: f64 = 1e-2;

/// Most refinement steps of an example-space solve against the reduced operator.
pub(super) const REDUCED_REFINEMENTS: usize = 4;

/// Most features the example space keeps in its dense system: `max(64, m/2)`, at most `n`.
pub(super) fn keep_capacity(m: usize, n: usize) -> usize {
    (m / 2).max(64).min(n)
}

/// The dense example-space factorisation. Its order is `2m + K + 1`: `μ′_i` at `i`, `λ_i` at
/// `m + i`, the `K` kept features at `2m + t`, `b` last; `K ≤ keep_capacity` changes with the
/// scalings (`factor_example_space`).
#[derive(Debug)]
pub(super) struct ExampleSpace {
    m: usize,
    /// The order of the current factorisation.
    dim: usize,
    /// Column-major `dim²` (room for the largest order): the lower triangle of `Q`, then its
    /// `LDLᵀ` (unit `L` below the diagonal, `D` on it), Jacobi-scaled.
    q: Vec<f64>,
    jacobi: Vec<f64>,
    signs: Vec<i8>,
    /// Features formed by a SYRK panel (frequent ones), in increasing order.
    dense_features: Vec<usize>,
    /// `dim × PANEL` of the largest order, column-major (empty when no feature is frequent).
    panel: Vec<f64>,
    mem: Scratch,
    /// The blocked `LDLᵀ`'s work space ([`ldlt_work_len`]).
    ldlt_work: Vec<f64>,
    /// A feature-space vector (`Ω′⁻¹ r_w`) of a solve.
    tw: Vec<f64>,
    /// The example-space vector `ν` of a solve.
    nu: Vec<f64>,
    /// The kept features, increasing, and each feature's place among them (`NOT_KEPT`).
    kept: Vec<usize>,
    kept_at: Vec<u32>,
    /// Their most: [`keep_capacity`].
    capacity: usize,
    /// The right-hand side, its residual and a correction of a refined solve (length `n + 1`).
    r0: Vec<f64>,
    res: Vec<f64>,
    dz: Vec<f64>,
    /// `(ratio, feature)` candidates of one selection.
    candidates: Vec<(f64, usize)>,
}

pub(super) const NOT_KEPT: u32 = u32::MAX;

impl ExampleSpace {
    pub(super) fn new(m: usize, couplings: &Couplings) -> Self {
        let n = couplings.csc_ptr.len() - 1;
        let capacity = keep_capacity(m, n);
        let most = 2 * m + capacity + 1;
        let dense_features: Vec<usize> = (0..n)
            .filter(|&j| dense_feature(couplings.csc_ptr[j + 1] - couplings.csc_ptr[j], 2 * m + 1))
            .collect();
        let panel = if dense_features.is_empty() {
            Vec::new()
        } else {
            vec![0.0; most * PANEL.min(dense_features.len())]
        };
        let req = cholesky_in_place_scratch::<f64>(PANEL_LDLT, Par::Seq, Default::default());
        Self {
            m,
            ldlt_work: vec![0.0; ldlt_work_len(most)],
            dim: 2 * m + 1,
            q: vec![0.0; most * most],
            jacobi: vec![0.0; most],
            signs: vec![1; most],
            dense_features,
            panel,
            mem: Scratch::new(req),
            tw: vec![0.0; n],
            nu: vec![0.0; most],
            kept: Vec::with_capacity(capacity),
            kept_at: vec![NOT_KEPT; n],
            capacity,
            r0: vec![0.0; n + 1],
            res: vec![0.0; n + 1],
            dz: vec![0.0; n + 1],
            candidates: Vec::with_capacity(n),
        }
    }

    /// Chooses the kept features for the current couplings: those whose `Ω′_j` is below
    /// [`KEEP_RATIO`] of their whole scale, the smallest ratios first when there are more than
    /// the capacity (ties by index: the choice depends on the values only).
    fn select(&mut self, c: &Couplings, s: impl Fn(usize) -> f64) {
        for &j in &self.kept {
            self.kept_at[j] = NOT_KEPT;
        }
        self.kept.clear();
        self.candidates.clear();
        for j in 0..c.omega.len() {
            let mut coupling = 0.0;
            for (i, q) in c.column(j) {
                coupling += c.r1[q] * c.r1[q] / s(i) + c.g2[q] * c.g2[q];
            }
            let ratio = c.omega[j] / (c.omega[j] + coupling);
            if ratio < KEEP_RATIO {
                self.candidates.push((ratio, j));
            }
        }
        if self.candidates.len() > self.capacity {
            self.candidates
                .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            self.candidates.truncate(self.capacity);
        }
        self.kept.extend(self.candidates.iter().map(|&(_, j)| j));
        self.kept.sort_unstable();
        for (t, &j) in self.kept.iter().enumerate() {
            self.kept_at[j] = t as u32;
        }
        self.dim = 2 * self.m + self.kept.len() + 1;
    }
}

/// The outcome of a factorisation of either method, for [`super::FactorInfo`].
pub(super) struct AugmentedInfo {
    pub(super) regularized: usize,
    pub(super) clamped: usize,
    pub(super) min_pivot: f64,
    pub(super) max_pivot: f64,
}

impl DsxSystem<'_> {
    /// The per-example pass of the quasi-definite methods: writes `r1`, `g2` of every stored
    /// entry, the examples' corners, `Ω′` and `S_bb`. Two halves fixed by the data (two threads
    /// when the settings allow), each accumulating its own part of the diagonal, added in
    /// order: the same bits for any thread count.
    pub(super) fn pair_pass(&mut self, sc: &DsxScalings<'_>) -> Result<()> {
        use super::example::{Shared, factor_range};
        self.reset_schur();
        let delta = self.settings.static_regularization;
        let sh = Shared {
            n: self.n,
            dense: self.dense,
            delta,
            gemm: false,
            pair: true,
            indptr: &self.indptr,
            indices: &self.indices,
            x: &self.x,
            scale: self.scale,
            v: &self.v,
            y: &self.y,
            p_eff: &self.p_eff,
        };
        let c = self.couplings.as_mut().expect("quasi-definite method");
        let mid = self.solve_mid;
        let cut = self.indptr[mid];
        let (inv_a, inv_b) = self.inv_delta.split_at_mut(cut);
        let (ex_a, ex_b) = self.ex.split_at_mut(mid);
        let (r1a, r1b) = c.r1.split_at_mut(cut);
        let (g2a, g2b) = c.g2.split_at_mut(cut);
        let (da, db) = c.d.split_at_mut(cut);
        let [w0, w1] = &mut self.work;
        let m = self.m;
        let (ra, rb) = if self.settings.threads >= 2 && m >= 2 {
            rayon::join(
                || factor_range(&sh, sc, 0, mid, 0.0, inv_a, ex_a, r1a, g2a, da, w0),
                || factor_range(&sh, sc, mid, m, 0.0, inv_b, ex_b, r1b, g2b, db, w1),
            )
        } else {
            (
                factor_range(&sh, sc, 0, mid, 0.0, inv_a, ex_a, r1a, g2a, da, w0),
                factor_range(&sh, sc, mid, m, 0.0, inv_b, ex_b, r1b, g2b, db, w1),
            )
        };
        let mut sbb = sc.b_diag + delta;
        c.sbb_base = sbb;
        sbb += ra?;
        sbb += rb?;
        c.sbb = sbb;
        let [w0, w1] = &self.work;
        for j in 0..self.n {
            c.base[j] = sc.w_diag[j] + delta;
            c.omega[j] = (w0.acc_diag[j] + w1.acc_diag[j]) + c.base[j];
            if !(c.omega[j] > 0.0 && c.omega[j].is_finite()) {
                // a feature in no example, with no box term: no scale of its own (the feature
                // space regularises it the same way, relative to the largest diagonal)
                if self.settings.dynamic_regularization.is_none() || !c.omega[j].is_finite() {
                    return Err(LinalgError::NotPositiveDefinite {
                        block: Block::Schur,
                        pivot: j,
                        value: c.omega[j],
                    });
                }
            }
        }
        // features with no scale: the regularisation's value relative to the largest diagonal
        if let Some(d) = self.settings.dynamic_regularization {
            let big = c.omega.iter().fold(0.0f64, |a, &b| a.max(b));
            let fill = d.delta * if big > 0.0 { big } else { 1.0 };
            for o in &mut c.omega {
                if !(*o > 0.0) {
                    *o = fill;
                }
            }
        }
        Ok(())
    }

    /// Factors the example-space system (after [`DsxSystem::pair_pass`]): `w` eliminated first
    /// except the kept features, whose tiny `Ω′_j` would make `z_j = (r_j − B′_j ν)/Ω′_j` the
    /// difference of large numbers (near an optimum most words' rows are inactive and their
    /// `Ω′_j → 0` while their couplings stay); they are eliminated last, after every example,
    /// where their pivot is their feature-space `S_jj`.
    pub(super) fn factor_example_space(&mut self, sc: &DsxScalings<'_>) -> Result<AugmentedInfo> {
        let m = self.m;
        let delta = self.settings.static_regularization;
        let ex = &self.ex;
        let c = self.couplings.as_mut().expect("quasi-definite method");
        let es = self.example_space.as_mut().expect("example space");
        es.select(c, |i| ex[i].s);
        c.self_terms(&es.kept_at);
        let c = &*c;
        let dim = es.dim;
        let (kb, bb) = (2 * m, dim - 1);
        let q = &mut es.q[..dim * dim];
        // zero the lower triangle; the b border
        for col in 0..dim {
            q[col * dim + col..(col + 1) * dim].fill(0.0);
        }
        for i in 0..m {
            q[i * dim + bb] = -self.y[i] * ex[i].sz;
        }
        q[bb * dim + bb] = sc.b_diag + delta;
        // − B′ᵀ Ω′⁻¹ B′ over the eliminated features: rare ones scattered, frequent ones by a
        // SYRK panel; a kept feature's couplings are rows of its own
        let n = self.n;
        let mut dense = es.dense_features.iter().peekable();
        for j in 0..n {
            let is_dense = dense.peek() == Some(&&j);
            if is_dense {
                dense.next();
            }
            let r = c.csc_ptr[j]..c.csc_ptr[j + 1];
            let (exs, pos) = (&c.csc_ex[r.clone()], &c.csc_pos[r]);
            let t = es.kept_at[j];
            if t != NOT_KEPT {
                let row = kb + t as usize;
                q[row * dim + row] = c.omega[j];
                for (&i, &qa) in exs.iter().zip(pos) {
                    let i = i as usize;
                    q[(m + i) * dim + row] = c.r1[qa];
                    q[i * dim + row] = -c.g2[qa];
                }
                continue;
            }
            if is_dense {
                continue;
            }
            let w = 1.0 / c.omega[j];
            for a in 0..exs.len() {
                let (i, qa) = (exs[a] as usize, pos[a]);
                let (ra, ga) = (w * c.r1[qa], w * c.g2[qa]);
                // μ′_i at i, λ_i at m + i (module docs); the pairs (i, k), k > i, in the lower
                // triangle (an example's pair with itself: its diagonal block, set below)
                let (cl, cu) = ((m + i) * dim, i * dim);
                for b in a + 1..exs.len() {
                    let (k, qb) = (exs[b] as usize, pos[b]);
                    let (rk, gk) = (c.r1[qb], c.g2[qb]);
                    q[cl + m + k] -= ra * rk; // (λ_k, λ_i)
                    q[k * dim + m + i] += ra * gk; // (λ_i, μ′_k)
                    q[cu + m + k] += ga * rk; // (λ_k, μ′_i)
                    q[cu + k] -= ga * gk; // (μ′_k, μ′_i)
                }
            }
        }
        let mut block = Vec::new();
        let mut features = es
            .dense_features
            .iter()
            .copied()
            .filter(|&j| es.kept_at[j] == NOT_KEPT)
            .peekable();
        while features.peek().is_some() {
            block.clear();
            block.extend(features.by_ref().take(PANEL));
            let width = block.len();
            let panel = &mut es.panel[..dim * width];
            panel.fill(0.0);
            for (col, &j) in block.iter().enumerate() {
                let s = 1.0 / c.omega[j].sqrt();
                let pc = &mut panel[col * dim..(col + 1) * dim];
                for (i, qa) in c.column(j) {
                    pc[m + i] = s * c.r1[qa];
                    pc[i] = -s * c.g2[qa];
                }
            }
            let p = MatRef::from_column_major_slice(&*panel, dim, width);
            tri_matmul(
                MatMut::from_column_major_slice_mut(&mut *q, dim, dim),
                BlockStructure::TriangularLower,
                Accum::Add,
                p,
                BlockStructure::Rectangular,
                p.transpose(),
                BlockStructure::Rectangular,
                -1.0,
                Par::Seq,
            );
        }
        // every example's diagonal block C′_i − (its own terms), without cancellation
        // (`Couplings::self_terms`; a panel above also wrote these entries)
        for i in 0..m {
            let e = &ex[i];
            let (l, u) = (m + i, i);
            q[l * dim + l] = e.s0 + c.self_ll[i];
            q[u * dim + l] = -(e.sz * e.t0 + c.self_lm[i]);
            q[u * dim + u] = -1.0 - c.self_mm[i];
        }
        // λ's diagonal is at least ρ_i + δ (module docs); the Jacobi scaling: a kept feature by
        // its whole scale, b by S_bb
        let mut clamped = 0;
        for i in 0..m {
            let l = m + i;
            let lower = sc.rho[i] + delta;
            let d = &mut q[l * dim + l];
            if *d < lower {
                *d = lower;
                clamped += 1;
            }
            es.jacobi[l] = 1.0 / d.sqrt();
            es.signs[l] = 1;
            let u = i;
            es.jacobi[u] = 1.0 / (-q[u * dim + u]).sqrt();
            es.signs[u] = -1;
        }
        for (t, &j) in es.kept.iter().enumerate() {
            let mut scale = c.omega[j];
            for (i, qa) in c.column(j) {
                scale += c.r1[qa] * c.r1[qa] / ex[i].s + c.g2[qa] * c.g2[qa];
            }
            es.jacobi[kb + t] = 1.0 / scale.sqrt();
            es.signs[kb + t] = 1;
        }
        es.jacobi[bb] = 1.0 / c.sbb.sqrt();
        es.signs[bb] = 1;
        for col in 0..dim {
            let jc = es.jacobi[col];
            for (e, &jr) in q[col * dim + col..(col + 1) * dim]
                .iter_mut()
                .zip(&es.jacobi[col..dim])
            {
                *e *= jr * jc;
            }
        }
        let reg = self
            .settings
            .dynamic_regularization
            .map_or((0.0, 0.0), |d| (d.epsilon, d.delta));
        let count = ldlt_in_place(
            MatMut::from_column_major_slice_mut(q, dim, dim),
            &es.signs[..dim],
            reg,
            self.settings.threads,
            &mut es.ldlt_work,
            es.mem.stack(),
        )
        .map_err(|index| LinalgError::NotPositiveDefinite {
            block: Block::ExampleSpace,
            pivot: index,
            value: 0.0,
        })?;
        let (mut min_pivot, mut max_pivot) = (f64::INFINITY, 0.0f64);
        let mut regularized = count;
        let reg_delta = self.settings.dynamic_regularization.map(|d| d.delta);
        for r in 0..dim {
            let d = q[r * dim + r];
            let want = es.signs[r] as f64;
            if !(d * want > 0.0 && d.is_finite()) {
                return Err(LinalgError::NotPositiveDefinite {
                    block: Block::ExampleSpace,
                    pivot: r,
                    value: d / (es.jacobi[r] * es.jacobi[r]),
                });
            }
            // faer counts the positive pivots it replaced; a replaced negative one is −δ
            if want < 0.0 && reg_delta == Some(-d) {
                regularized += 1;
            }
            let p = d.abs().sqrt() / es.jacobi[r];
            min_pivot = min_pivot.min(p);
            max_pivot = max_pivot.max(p);
        }
        Ok(AugmentedInfo {
            regularized,
            clamped,
            min_pivot,
            max_pivot,
        })
    }

    /// Solves `S z = r` (`rb`: `(r_w, r_b)` in, `(z_w, z_b)` out) with the example-space factor,
    /// refined against `S` applied from the couplings ([`DsxSystem::apply_reduced`]): the
    /// Woodbury-type solve loses digits where `Ω′_j` is small beside a feature's couplings,
    /// which a few steps of iterative refinement recover (each `O(nnz + (2m)²)`; at most
    /// [`REDUCED_REFINEMENTS`], ended when a step fails to halve the residual).
    pub(super) fn solve_example_space(&mut self, rb: &mut [f64]) {
        let n1 = self.n + 1;
        let es = self.example_space.as_mut().expect("example space");
        let (mut r0, mut res, mut dz) = (
            core::mem::take(&mut es.r0),
            core::mem::take(&mut es.res),
            core::mem::take(&mut es.dz),
        );
        r0[..n1].copy_from_slice(rb);
        self.solve_example_space_once(rb);
        let rnorm = super::refine::norm2_fast(&r0[..n1]);
        let mut prev = f64::INFINITY;
        for _ in 0..REDUCED_REFINEMENTS {
            self.apply_reduced(rb, &mut res[..n1]);
            for (e, &r) in res[..n1].iter_mut().zip(&r0[..n1]) {
                *e = r - *e;
            }
            let norm = super::refine::norm2_fast(&res[..n1]);
            if !(norm > 1e-15 * rnorm) || !(norm < 0.5 * prev) {
                break;
            }
            prev = norm;
            dz[..n1].copy_from_slice(&res[..n1]);
            self.solve_example_space_once(&mut dz[..n1]);
            for (z, &d) in rb.iter_mut().zip(&dz[..n1]) {
                *z += d;
            }
        }
        let es = self.example_space.as_mut().expect("example space");
        (es.r0, es.res, es.dz) = (r0, res, dz);
    }

    /// `out = S z` for the reduced system onto `(w, b)` of the current factorisation, from the
    /// couplings: `S = diag(Ω′, ω_b + δ) − Σ_i B′_i C′_i⁻¹ B′_iᵀ` with
    /// `C′_i⁻¹ = p11_i [[1, −t_i√ζ_i], [−t_i√ζ_i, −s_i]]` (`augmented`'s module docs). `O(nnz)`.
    pub(super) fn apply_reduced(&self, z: &[f64], out: &mut [f64]) {
        let n = self.n;
        let c = self.couplings.as_ref().expect("quasi-definite method");
        let col = |i: usize, q: usize| {
            if self.dense {
                q - i * n
            } else {
                self.indices[q]
            }
        };
        for j in 0..n {
            out[j] = c.omega[j] * z[j];
        }
        let mut b = c.sbb_base * z[n];
        for i in 0..self.m {
            let e = &self.ex[i];
            let (mut ul, mut um) = (0.0, -self.y[i] * e.sz * z[n]);
            for q in self.indptr[i]..self.indptr[i + 1] {
                let zj = z[col(i, q)];
                ul += c.r1[q] * zj;
                um -= c.g2[q] * zj;
            }
            let vl = e.p11 * (ul - e.tz * um);
            let vm = e.p11 * (-e.tz * ul - e.s * um);
            for q in self.indptr[i]..self.indptr[i + 1] {
                out[col(i, q)] -= c.r1[q] * vl - c.g2[q] * vm;
            }
            b += self.y[i] * e.sz * vm;
        }
        out[n] = b;
    }

    /// One example-space solve of `S z = r` in place (no refinement):
    /// `Q ν = (−B′_Eᵀ Ω′_E⁻¹ r_E, r_K, r_b)` (`E` the eliminated features, `K` the kept ones),
    /// then `z_E = Ω′_E⁻¹ (r_E − B′_E ν)`, `z_K` and `z_b` from `ν`.
    fn solve_example_space_once(&mut self, rb: &mut [f64]) {
        let (m, n) = (self.m, self.n);
        let c = self.couplings.as_ref().expect("quasi-definite method");
        let es = self.example_space.as_mut().expect("example space");
        let dim = es.dim;
        let (kb, bb) = (2 * m, dim - 1);
        for j in 0..n {
            es.tw[j] = if es.kept_at[j] == NOT_KEPT {
                rb[j] / c.omega[j]
            } else {
                0.0
            };
        }
        let col = |i: usize, q: usize| {
            if self.dense {
                q - i * n
            } else {
                self.indices[q]
            }
        };
        let nu = &mut es.nu[..dim];
        for i in 0..m {
            let (mut l, mut u) = (0.0, 0.0);
            for q in self.indptr[i]..self.indptr[i + 1] {
                let t = es.tw[col(i, q)];
                l -= c.r1[q] * t;
                u += c.g2[q] * t;
            }
            nu[m + i] = l * es.jacobi[m + i];
            nu[i] = u * es.jacobi[i];
        }
        for (t, &j) in es.kept.iter().enumerate() {
            nu[kb + t] = rb[j] * es.jacobi[kb + t];
        }
        nu[bb] = rb[n] * es.jacobi[bb];
        let ld = MatRef::from_column_major_slice(&es.q[..dim * dim], dim, dim);
        let par = Par::Seq;
        solve_unit_lower_triangular_in_place(
            ld,
            MatMut::from_column_major_slice_mut(&mut *nu, dim, 1),
            par,
        );
        for r in 0..dim {
            nu[r] /= es.q[r * dim + r];
        }
        solve_unit_upper_triangular_in_place(
            ld.transpose(),
            MatMut::from_column_major_slice_mut(&mut *nu, dim, 1),
            par,
        );
        for (v, &jr) in nu.iter_mut().zip(&es.jacobi[..dim]) {
            *v *= jr;
        }
        // z_E = Ω′⁻¹ r_E − Ω′⁻¹ B′_E ν (accumulated into `rb` in example order); z_K, z_b
        rb[..n].fill(0.0);
        for i in 0..m {
            let (l, u) = (nu[m + i], nu[i]);
            for q in self.indptr[i]..self.indptr[i + 1] {
                rb[col(i, q)] += c.r1[q] * l - c.g2[q] * u;
            }
        }
        for j in 0..n {
            let t = es.kept_at[j];
            rb[j] = if t == NOT_KEPT {
                es.tw[j] - rb[j] / c.omega[j]
            } else {
                nu[kb + t as usize]
            };
        }
        rb[n] = nu[bb];
    }
}

/// faer's dynamic regularisation for the pivot signs `signs` (none without
/// [`super::DsxSettings::dynamic_regularization`]).
pub(super) fn regularization<'s>(
    settings: &super::DsxSettings,
    signs: &'s [i8],
) -> LdltRegularization<'s, f64> {
    match settings.dynamic_regularization {
        Some(d) => LdltRegularization {
            dynamic_regularization_signs: Some(signs),
            dynamic_regularization_delta: d.delta,
            dynamic_regularization_epsilon: d.epsilon,
        },
        None => LdltRegularization {
            dynamic_regularization_signs: None,
            dynamic_regularization_delta: 0.0,
            dynamic_regularization_epsilon: 0.0,
        },
    }
}
