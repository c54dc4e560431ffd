//! The top eigenpair of an uncentred second-moment matrix `Σ cᵢ xᵢ xᵢᵀ`, by Lanczos with full
//! reorthogonalisation and explicit restarts, for the outlier-removal steps of Klivans, Long &
//! Servedio (A_mu step 1, A_mlcw step 3).
//!
//! The matrix is formed by blocked `XᵀX` products (rows scaled by `√cᵢ` when weighted) and kept
//! up to date by blocked rank-one downdates as points leave ([`Gram`]); Lanczos then works on the
//! `n × n` matrix. Every sum is taken in an order fixed by the data alone, so the results do not
//! depend on the number of threads.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch};
use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use bulwark_core::{Error, Result};

/// A symmetric linear operator on `ℝⁿ`.
pub(crate) trait SymOp {
    /// `n`.
    fn dim(&self) -> usize;
    /// `y ← A x`.
    fn apply(&self, x: &[f64], y: &mut [f64]);
}

/// Rows handled per block when forming or downdating a Gram matrix.
const BLOCK: usize = 256;

/// Rows summed by one worker when forming the Gram matrix: at least this many, and few enough
/// for at most [`GROUPS`] partial matrices. The split depends on `m` only, so the partial sums,
/// and their order, are the same on any number of threads.
const GROUP_ROWS: usize = 16 * BLOCK;
const GROUPS: usize = 16;

/// `Σ xᵢ xᵢᵀ` over the active rows of a dense row-major matrix, kept full (both triangles,
/// column-major), with downdates.
#[derive(Debug)]
pub(crate) struct Gram {
    n: usize,
    a: Vec<f64>,
    /// A block of gathered rows (`BLOCK × n`, row-major) for downdates.
    buf: Vec<f64>,
}

impl Gram {
    /// The zero matrix.
    pub(crate) fn zeros(n: usize) -> Self {
        Self {
            n,
            a: vec![0.0; n * n],
            buf: vec![0.0; BLOCK * n],
        }
    }

    /// `Σᵢ xᵢ xᵢᵀ` over `rows` of the dense row-major `x` (`n` columns), row groups summed in
    /// parallel and added in a fixed order.
    pub(crate) fn new(x: &[f64], n: usize, rows: &[usize]) -> Self {
        let mut buf = vec![0.0; BLOCK * n];
        let size = GROUP_ROWS.max(rows.len().div_ceil(GROUPS));
        let groups: Vec<&[usize]> = rows.chunks(size).collect();
        let partial = |g: &[usize], a: &mut [f64], buf: &mut [f64]| {
            for block in g.chunks(BLOCK) {
                gather(x, n, block, buf);
                rank_k(a, n, &buf[..block.len() * n], block.len(), 1.0);
            }
        };
        let mut a = vec![0.0; n * n];
        if groups.len() <= 1 {
            if let Some(g) = groups.first() {
                partial(g, &mut a, &mut buf);
            }
        } else {
            let parts: Vec<Vec<f64>> = groups
                .par_iter()
                .map(|g| {
                    let mut a = vec![0.0; n * n];
                    let mut buf = vec![0.0; BLOCK * n];
                    partial(g, &mut a, &mut buf);
                    a
                })
                .collect();
            for p in &parts {
                a.iter_mut().zip(p).for_each(|(s, v)| *s += v);
            }
        }
        let mut g = Self { n, a, buf };
        g.mirror();
        g
    }

    /// `A ← A − Σ xᵢ xᵢᵀ` over `rows` (blocks of rank-one downdates as BLAS-3 products).
    pub(crate) fn downdate(&mut self, x: &[f64], rows: &[usize]) {
        self.add(x, rows, None, -1.0);
    }

    /// `A ← 0`.
    pub(crate) fn clear(&mut self) {
        self.a.fill(0.0);
    }

    /// `A ← A + alpha Σ cᵢ xᵢ xᵢᵀ` over `rows` (`cᵢ ≥ 0` indexed by row, 1 without), in blocks
    /// of rank-one updates as BLAS-3 products, sequential.
    pub(crate) fn add(&mut self, x: &[f64], rows: &[usize], c: Option<&[f64]>, alpha: f64) {
        let n = self.n;
        for block in rows.chunks(BLOCK) {
            gather(x, n, block, &mut self.buf);
            if let Some(c) = c {
                for (dst, &i) in self.buf.chunks_exact_mut(n).zip(block) {
                    let s = c[i].sqrt();
                    dst.iter_mut().for_each(|v| *v *= s);
                }
            }
            rank_k(
                &mut self.a,
                n,
                &self.buf[..block.len() * n],
                block.len(),
                alpha,
            );
        }
        self.mirror();
    }

    /// Copies the lower triangle to the upper.
    fn mirror(&mut self) {
        let n = self.n;
        for j in 0..n {
            for i in j + 1..n {
                self.a[i * n + j] = self.a[j * n + i];
            }
        }
    }

    /// The trace `Σ ‖xᵢ‖²`.
    #[cfg(test)]
    pub(crate) fn trace(&self) -> f64 {
        (0..self.n).map(|j| self.a[j * self.n + j]).sum()
    }
}

impl SymOp for Gram {
    fn dim(&self) -> usize {
        self.n
    }
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for (col, &xj) in self.a.chunks_exact(self.n).zip(x) {
            y.iter_mut().zip(col).for_each(|(s, a)| *s += xj * a);
        }
    }
}

/// Copies rows `idx` of the row-major `x` into the front of `buf`.
fn gather(x: &[f64], n: usize, idx: &[usize], buf: &mut [f64]) {
    for (dst, &i) in buf.chunks_exact_mut(n).zip(idx) {
        dst.copy_from_slice(&x[i * n..(i + 1) * n]);
    }
}

/// Lower triangle of `A += alpha · Bᵀ B` (`B`: `k × n` row-major; `A`: `n × n` column-major),
/// sequential.
fn rank_k(a: &mut [f64], n: usize, b: &[f64], k: usize, alpha: f64) {
    let b = MatRef::from_row_major_slice(b, k, n);
    let a = MatMut::from_column_major_slice_mut(a, n, n);
    tri_matmul(
        a,
        BlockStructure::TriangularLower,
        Accum::Add,
        b.transpose(),
        BlockStructure::Rectangular,
        b,
        BlockStructure::Rectangular,
        alpha,
        Par::Seq,
    );
}

/// What [`Lanczos::top`] found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TopEigen {
    /// The Ritz value `wᵀAw` of the returned unit vector (a lower bound on `λ_max`).
    pub(crate) value: f64,
    /// `‖Aw − value·w‖`.
    pub(crate) residual: f64,
    /// Products with `A`.
    pub(crate) matvecs: usize,
    /// Whether `residual ≤ tol · |value|` (or the Krylov space became invariant).
    pub(crate) converged: bool,
}

/// Lanczos workspace for one dimension; allocated once, reused by every call.
pub(crate) struct Lanczos {
    n: usize,
    k: usize,
    /// Basis vectors `q₀ … q_{k}` (row `j` = `q_j`), `(k + 1) × n`.
    q: Vec<f64>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    /// The tridiagonal matrix (column-major `k × k`), its eigenvalues and eigenvectors.
    t: Vec<f64>,
    s: Vec<f64>,
    u: Vec<f64>,
    w: Vec<f64>,
    start: Vec<f64>,
    scratch: MemBuffer,
}

impl std::fmt::Debug for Lanczos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanczos")
            .field("n", &self.n)
            .field("k", &self.k)
            .finish_non_exhaustive()
    }
}

impl Lanczos {
    /// A workspace for `n`-dimensional operators with at most `min(n, 96)` basis vectors per
    /// restart.
    pub(crate) fn new(n: usize) -> Self {
        let k = n.clamp(1, 96);
        let req = self_adjoint_evd_scratch::<f64>(
            k,
            ComputeEigenvectors::Yes,
            Par::Seq,
            Default::default(),
        );
        // a fixed start with every coordinate non-zero (no seed: the same data gives the same
        // bits), far from any basis vector or the all-ones direction
        let mut start: Vec<f64> = (0..n)
            .map(|j| 1.0 + 0.5 * ((j as f64 + 1.0) * 0.618_033_988_75).fract())
            .map(|v| {
                if ((v * 1e4) as u64).is_multiple_of(2) {
                    v
                } else {
                    -v
                }
            })
            .collect();
        normalise(&mut start);
        Self {
            n,
            k,
            q: vec![0.0; (k + 1) * n],
            alpha: vec![0.0; k],
            beta: vec![0.0; k],
            t: vec![0.0; k * k],
            s: vec![0.0; k],
            u: vec![0.0; k * k],
            w: vec![0.0; n],
            start,
            scratch: MemBuffer::new(req),
        }
    }

    /// The largest eigenvalue of `op` and its unit eigenvector (written to `out`), to relative
    /// residual `tol`, with at most `max_matvecs` products (then `converged` is false).
    pub(crate) fn top(
        &mut self,
        op: &dyn SymOp,
        tol: f64,
        max_matvecs: usize,
        out: &mut [f64],
    ) -> Result<TopEigen> {
        let n = self.n;
        debug_assert_eq!(op.dim(), n);
        self.q[..n].copy_from_slice(&self.start);
        let mut matvecs = 0;
        loop {
            // one Lanczos run from q₀, full reorthogonalisation (twice is enough)
            let mut dim = self.k;
            let mut invariant = false;
            for j in 0..self.k {
                let (head, tail) = self.q.split_at_mut((j + 1) * n);
                let qj = &head[j * n..];
                op.apply(qj, &mut self.w);
                matvecs += 1;
                let a = dot(qj, &self.w);
                self.alpha[j] = a;
                for _ in 0..2 {
                    for i in 0..=j {
                        let qi = &head[i * n..(i + 1) * n];
                        let c = dot(qi, &self.w);
                        self.w.iter_mut().zip(qi).for_each(|(w, q)| *w -= c * q);
                    }
                }
                let b = dot(&self.w, &self.w).sqrt();
                self.beta[j] = b;
                let scale = self.alpha[..=j].iter().fold(0.0f64, |m, v| m.max(v.abs()));
                if b <= 1e-13 * scale.max(f64::MIN_POSITIVE) || j + 1 == n {
                    dim = j + 1;
                    invariant = true;
                    break;
                }
                let next = &mut tail[..n];
                next.iter_mut().zip(&self.w).for_each(|(q, w)| *q = w / b);
            }
            // the tridiagonal's top eigenpair
            let t = &mut self.t[..dim * dim];
            t.fill(0.0);
            for j in 0..dim {
                t[j * dim + j] = self.alpha[j];
                if j + 1 < dim {
                    t[j * dim + j + 1] = self.beta[j];
                    t[(j + 1) * dim + j] = self.beta[j];
                }
            }
            let tm = MatRef::from_column_major_slice(&self.t[..dim * dim], dim, dim);
            let um = MatMut::from_column_major_slice_mut(&mut self.u[..dim * dim], dim, dim);
            let s = faer::diag::DiagMut::from_slice_mut(&mut self.s[..dim]);
            self_adjoint_evd(
                tm,
                s,
                Some(um),
                Par::Seq,
                MemStack::new(&mut self.scratch),
                Default::default(),
            )
            .map_err(|e| Error::param("eigensolver", format!("{e:?}"), "convergence"))?;
            let top = (0..dim)
                .max_by(|&a, &b| self.s[a].total_cmp(&self.s[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            let theta = self.s[top];
            let y = &self.u[top * dim..(top + 1) * dim];
            out.fill(0.0);
            for (j, &yj) in y.iter().enumerate() {
                let qj = &self.q[j * n..(j + 1) * n];
                out.iter_mut().zip(qj).for_each(|(o, q)| *o += yj * q);
            }
            normalise(out);
            let residual = (self.beta[dim - 1] * y[dim - 1]).abs();
            let converged = invariant || residual <= tol * theta.abs();
            if converged || matvecs >= max_matvecs {
                return Ok(TopEigen {
                    value: theta,
                    residual,
                    matvecs,
                    converged,
                });
            }
            // explicit restart from the Ritz vector
            self.q[..n].copy_from_slice(out);
        }
    }
}

fn normalise(v: &mut [f64]) {
    let s = dot(v, v).sqrt();
    if s > 0.0 {
        v.iter_mut().for_each(|a| *a /= s);
    }
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    bulwark_core::budget::dot4(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gram_dense(x: &[f64], n: usize, rows: &[usize]) -> Vec<f64> {
        let mut a = vec![0.0; n * n];
        for &i in rows {
            let r = &x[i * n..(i + 1) * n];
            for j in 0..n {
                for l in 0..n {
                    a[j * n + l] += r[j] * r[l];
                }
            }
        }
        a
    }

    fn data(m: usize, n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..m * n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
            })
            .collect()
    }

    #[test]
    fn the_gram_matrix_and_its_downdates_match_the_definition() {
        let (m, n) = (5000, 7);
        let x = data(m, n, 1);
        let rows: Vec<usize> = (0..m).collect();
        let mut g = Gram::new(&x, n, &rows);
        let want = gram_dense(&x, n, &rows);
        for (a, b) in g.a.iter().zip(&want) {
            assert!((a - b).abs() <= 1e-11 * want[0].abs(), "{a} vs {b}");
        }
        let gone: Vec<usize> = (0..m).filter(|i| i % 3 == 0).collect();
        g.downdate(&x, &gone);
        let left: Vec<usize> = (0..m).filter(|i| i % 3 != 0).collect();
        let want = gram_dense(&x, n, &left);
        for (a, b) in g.a.iter().zip(&want) {
            assert!((a - b).abs() <= 1e-11 * want[0].abs(), "{a} vs {b}");
        }
        assert!((g.trace() - (0..n).map(|j| want[j * n + j]).sum::<f64>()).abs() < 1e-9);
    }

    #[test]
    fn lanczos_finds_the_top_eigenpair_of_a_full_decomposition() {
        for (m, n) in [(300, 1), (300, 5), (2000, 60), (3000, 150)] {
            let x = data(m, n, n as u64);
            let rows: Vec<usize> = (0..m).collect();
            let g = Gram::new(&x, n, &rows);
            let mut lz = Lanczos::new(n);
            let mut w = vec![0.0; n];
            let r = lz.top(&g, 1e-10, 5000, &mut w).unwrap();
            assert!(r.converged, "{m}x{n}: {r:?}");
            // reference: faer's full decomposition
            let a = faer::Mat::from_fn(n, n, |i, j| g.a[j * n + i]);
            let e = a.self_adjoint_eigen(faer::Side::Lower).unwrap();
            let s = e.S().column_vector();
            let lmax = (0..n).map(|i| s[i]).fold(f64::MIN, f64::max);
            assert!(
                (r.value - lmax).abs() <= 1e-9 * lmax,
                "{m}x{n}: {} vs {lmax}",
                r.value
            );
            let mut aw = vec![0.0; n];
            g.apply(&w, &mut aw);
            let res: f64 = aw
                .iter()
                .zip(&w)
                .map(|(a, b)| (a - r.value * b).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(res <= 1e-6 * lmax, "{m}x{n}: residual {res}");
        }
    }

    #[test]
    fn weighted_updates_match_the_definition() {
        let (m, n) = (700, 6);
        let x = data(m, n, 4);
        let c: Vec<f64> = (0..m).map(|i| (i % 5) as f64 * 0.25).collect();
        let rows: Vec<usize> = (0..m).collect();
        let mut g = Gram::zeros(n);
        g.add(&x, &rows, Some(&c), 1.0);
        let gone: Vec<usize> = (0..m).step_by(7).collect();
        g.add(&x, &gone, Some(&c), -1.0);
        for j in 0..n {
            for l in 0..n {
                let want: f64 = (0..m)
                    .filter(|i| i % 7 != 0)
                    .map(|i| c[i] * x[i * n + j] * x[i * n + l])
                    .sum();
                assert!((g.a[j * n + l] - want).abs() < 1e-11, "{j} {l}");
            }
        }
        g.clear();
        assert_eq!(g.trace(), 0.0);
    }
}
