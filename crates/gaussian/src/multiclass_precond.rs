//! The preconditioner of M-GURU's Newton–CG (`multiclass_batch.rs`), and the weighted-Laplacian
//! solves it shares with the certificate.
//!
//! The Hessian of (5.14) is a sum over class pairs, `H = Σ_{a<b} (e_a − e_b)(e_a − e_b)ᵀ ⊗ H_ab`
//! (every term of the pair acts on `δ_a − δ_b`), so its `C × C` block on one feature `j` — the
//! entries coupling `w_{a,j}` with `w_{b,j}` — is the Laplacian of the class graph with weights
//! `D_ab,j = (H_ab)_jj`. The preconditioner is the block diagonal of these `d` Laplacians,
//! applied through their pseudo-inverses: like `H` it is blind to the shifts (the same vector
//! added to every class), and like `H` it carries each pair's own scale. In the Gaussian tail
//! (small σ on separable data) the pairs' weights span tens to hundreds of orders of magnitude;
//! a scale per feature shared by the classes (the earlier preconditioner) leaves the weak pairs'
//! directions to CG at that ratio, and the certificate needs them (its flow is checked against
//! each pair's own capacity). Per term the weight is `kk (q_j)² + tt (1 − Δ̂_j²)` with
//! `q = −x − uσΔ̂` (the Hessian of `multiclass_batch.rs`), summed per ordered pair as
//! `Σ kk x_j² + 2Δ̂_j Σ kk uσ x_j + Δ̂_j² Σ kk u²σ² + (1 − Δ̂_j²) Σ tt`.
//!
//! The Laplacians are factored by Gaussian elimination in the Grassmann–Taksar–Heyman form
//! ([`laplacian_factor`]): every pivot is the sum of the remaining positive weights of its class,
//! so weights many orders of magnitude apart keep their relative accuracy.

/// The pair–feature weights and the factored Laplacians, one per feature.
pub(crate) struct FeatureLaplacians {
    c: usize,
    d: usize,
    /// `D_ab,j` for `a < b` at `(a·C + b)·d + j`; filled by the Hessian's owner.
    pub(crate) weight: Vec<f64>,
    /// Per feature `j`, the factor of its Laplacian at `j·C·C` and its pivots at `j·C`.
    factor: Vec<f64>,
    pivot: Vec<f64>,
    rhs: Vec<f64>,
    sol: Vec<f64>,
}

impl FeatureLaplacians {
    pub(crate) fn new(c: usize, d: usize) -> Self {
        Self {
            c,
            d,
            weight: vec![0.0; c * c * d],
            factor: vec![0.0; c * c * d],
            pivot: vec![0.0; c * d],
            rhs: vec![0.0; c],
            sol: vec![0.0; c],
        }
    }

    /// Factors the `d` Laplacians of [`FeatureLaplacians::weight`].
    pub(crate) fn factor(&mut self) {
        let (c, d) = (self.c, self.d);
        for j in 0..d {
            let f = &mut self.factor[j * c * c..(j + 1) * c * c];
            for a in 0..c {
                f[a * c + a] = 0.0;
                for b in a + 1..c {
                    let w = self.weight[(a * c + b) * d + j].max(0.0);
                    f[a * c + b] = w;
                    f[b * c + a] = w;
                }
            }
            laplacian_factor(f, c, &mut self.pivot[j * c..(j + 1) * c]);
        }
    }

    /// `z = P⁺ r` (class by class, `C·d`): per feature the Laplacian solve, then the mean over
    /// the classes removed (the pseudo-inverse's answer for a connected class graph).
    pub(crate) fn apply(&mut self, r: &[f64], z: &mut [f64]) {
        let (c, d) = (self.c, self.d);
        for j in 0..d {
            for a in 0..c {
                self.rhs[a] = r[a * d + j];
            }
            laplacian_solve(
                &self.factor[j * c * c..(j + 1) * c * c],
                c,
                1,
                &self.pivot[j * c..(j + 1) * c],
                &mut self.rhs,
                &mut self.sol,
            );
            let mean = self.sol.iter().sum::<f64>() / c as f64;
            for a in 0..c {
                z[a * d + j] = self.sol[a] - mean;
            }
        }
    }
}

/// Factors the weighted Laplacian of `C` classes in place (weights `ω`, symmetric row-major
/// `C × C`, diagonal unused) by Gaussian elimination in class order with every pivot computed
/// as the sum of the remaining weights of its class (a Schur complement of a Laplacian is a
/// Laplacian: the Grassmann–Taksar–Heyman form), so that only positive numbers are added and
/// every weight keeps its relative accuracy whatever their range. Afterwards the entries above
/// the diagonal hold the eliminated rows, those below the multipliers, `pivot` (length `C`)
/// the pivots; a class left without neighbours (pivot not positive) is the last of its connected
/// component.
pub(crate) fn laplacian_factor(omega: &mut [f64], c: usize, pivot: &mut [f64]) {
    for k in 0..c {
        let pk: f64 = (k + 1..c).map(|j| omega[k * c + j]).sum();
        pivot[k] = pk;
        if !(pk > 0.0 && pk.is_finite()) {
            for i in k + 1..c {
                omega[i * c + k] = 0.0;
            }
            continue;
        }
        for i in k + 1..c {
            let f = omega[i * c + k] / pk;
            omega[i * c + k] = f;
            if f == 0.0 {
                continue;
            }
            for j in (k + 1..c).filter(|&j| j != i) {
                omega[i * c + j] += f * omega[k * c + j];
            }
        }
    }
}

/// The potentials `φ` of `L φ = R` for a Laplacian factored by [`laplacian_factor`], `cols`
/// right-hand sides (`rhs` and `phi` class by class, `C·cols`; `rhs` overwritten). The last
/// class of each connected component gets potential 0 and its remaining right-hand side (the
/// component's total of `R`, zero up to rounding when `R` is a divergence) is dropped.
pub(crate) fn laplacian_solve(
    omega: &[f64],
    c: usize,
    cols: usize,
    pivot: &[f64],
    rhs: &mut [f64],
    phi: &mut [f64],
) {
    for k in 0..c {
        if !(pivot[k] > 0.0 && pivot[k].is_finite()) {
            continue;
        }
        for i in k + 1..c {
            let f = omega[i * c + k];
            if f == 0.0 {
                continue;
            }
            for col in 0..cols {
                rhs[i * cols + col] += f * rhs[k * cols + col];
            }
        }
    }
    for k in (0..c).rev() {
        let pk = pivot[k];
        if !(pk > 0.0 && pk.is_finite()) {
            phi[k * cols..(k + 1) * cols].fill(0.0);
            continue;
        }
        for col in 0..cols {
            let s: f64 = (k + 1..c)
                .map(|j| omega[k * c + j] * phi[j * cols + col])
                .sum();
            phi[k * cols + col] = (rhs[k * cols + col] + s) / pk;
        }
    }
}

/// A limited-memory quasi-Newton preconditioner (Morales and Nocedal, "Automatic preconditioning
/// by limited memory quasi-Newton updating", SIAM J. Optim. 10, 2000): the L-BFGS inverse built
/// from pairs `(s, H s)` (the search directions of the previous Newton step's conjugate
/// gradients and their Hessian products) over a base preconditioner.
pub(crate) struct PairMemory {
    dim: usize,
    cap: usize,
    s: Vec<f64>,
    y: Vec<f64>,
    rho: Vec<f64>,
    alpha: Vec<f64>,
    q: Vec<f64>,
    /// Pairs held and the slot of the next one (a ring).
    len: usize,
    next: usize,
}

impl PairMemory {
    pub(crate) fn new(dim: usize, cap: usize) -> Self {
        Self {
            dim,
            cap,
            s: vec![0.0; dim * cap],
            y: vec![0.0; dim * cap],
            rho: vec![0.0; cap],
            alpha: vec![0.0; cap],
            q: vec![0.0; dim],
            len: 0,
            next: 0,
        }
    }
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.next = 0;
    }
    /// Keeps `(s, y)` when `sᵀy > 0`, replacing the oldest pair when full.
    pub(crate) fn push(&mut self, s: &[f64], y: &[f64]) {
        if self.cap == 0 {
            return;
        }
        let sy: f64 = s.iter().zip(y).map(|(a, b)| a * b).sum();
        if !(sy > 0.0 && sy.is_finite()) {
            return;
        }
        let (k, dim) = (self.next, self.dim);
        self.s[k * dim..(k + 1) * dim].copy_from_slice(s);
        self.y[k * dim..(k + 1) * dim].copy_from_slice(y);
        self.rho[k] = 1.0 / sy;
        self.next = (k + 1) % self.cap;
        self.len = (self.len + 1).min(self.cap);
    }
    /// `z = M r` by the two-loop recursion with `base(q, z)` as the initial inverse.
    pub(crate) fn apply(
        &mut self,
        r: &[f64],
        z: &mut [f64],
        mut base: impl FnMut(&[f64], &mut [f64]),
    ) {
        let dim = self.dim;
        self.q.copy_from_slice(r);
        let slot = |i: usize| (self.next + self.cap - 1 - i) % self.cap;
        for i in 0..self.len {
            let k = slot(i);
            let s = &self.s[k * dim..(k + 1) * dim];
            let a = self.rho[k] * s.iter().zip(&self.q).map(|(x, y)| x * y).sum::<f64>();
            self.alpha[k] = a;
            for (q, y) in self.q.iter_mut().zip(&self.y[k * dim..(k + 1) * dim]) {
                *q -= a * y;
            }
        }
        base(&self.q, z);
        for i in (0..self.len).rev() {
            let k = slot(i);
            let y = &self.y[k * dim..(k + 1) * dim];
            let b = self.rho[k] * y.iter().zip(z.iter()).map(|(x, y)| x * y).sum::<f64>();
            let a = self.alpha[k];
            for (z, s) in z.iter_mut().zip(&self.s[k * dim..(k + 1) * dim]) {
                *z += (a - b) * s;
            }
        }
    }
}
