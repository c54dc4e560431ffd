//! Shared test helpers: random DSX instances and an independent dense assembly of `H`.
#![allow(dead_code)]

use bulwark_linalg::{DsxScalings, DsxSystem, PairScaling, RowsRef};
use faer::Mat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An owned random instance.
#[derive(Debug, Clone)]
pub struct Instance {
    pub m: usize,
    pub n: usize,
    pub dense: bool,
    pub data: Vec<f64>,
    pub indptr: Vec<usize>,
    pub indices: Vec<usize>,
    pub values: Vec<f64>,
    pub y: Vec<f64>,
    pub v: Vec<f64>,
    pub p: f64,
}

impl Instance {
    /// `density` in (0, 1]; sparse instances get some empty rows and explicit zeros.
    pub fn random(m: usize, n: usize, dense: bool, density: f64, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut data = vec![0.0; m * n];
        let mut indptr = vec![0];
        let mut indices = Vec::new();
        let mut values = Vec::new();
        for i in 0..m {
            let empty_row = !dense && rng.random_bool(0.15);
            for j in 0..n {
                let val: f64 = rng.random_range(-1.0..1.0);
                if dense {
                    data[i * n + j] = if rng.random_bool(0.1) { 0.0 } else { val };
                } else if !empty_row && rng.random_bool(density) {
                    indices.push(j);
                    // explicit stored zeros count as support
                    values.push(if rng.random_bool(0.1) { 0.0 } else { val });
                }
            }
            indptr.push(indices.len());
        }
        let y = (0..m)
            .map(|_| if rng.random_bool(0.5) { 1.0 } else { -1.0 })
            .collect();
        let v = (0..n)
            .map(|_| {
                if rng.random_bool(0.1) {
                    0.0
                } else {
                    rng.random_range(0.1..2.0)
                }
            })
            .collect();
        let p = rng.random_range(0.5..3.0);
        Self {
            m,
            n,
            dense,
            data,
            indptr,
            indices,
            values,
            y,
            v,
            p,
        }
    }

    pub fn rows(&self) -> RowsRef<'_> {
        if self.dense {
            RowsRef::Dense {
                data: &self.data,
                m: self.m,
                n: self.n,
            }
        } else {
            RowsRef::Csr {
                indptr: &self.indptr,
                indices: &self.indices,
                values: &self.values,
                n: self.n,
            }
        }
    }

    pub fn nnz(&self) -> usize {
        if self.dense {
            self.m * self.n
        } else {
            self.indices.len()
        }
    }

    pub fn system(&self) -> DsxSystem<'static> {
        DsxSystem::try_new(self.rows(), &self.y, &self.v, self.p).expect("valid instance")
    }

    /// (support, values) of row i.
    pub fn row(&self, i: usize) -> (Vec<usize>, Vec<f64>) {
        if self.dense {
            (
                (0..self.n).collect(),
                self.data[i * self.n..(i + 1) * self.n].to_vec(),
            )
        } else {
            let r = self.indptr[i]..self.indptr[i + 1];
            (self.indices[r.clone()].to_vec(), self.values[r].to_vec())
        }
    }
}

/// Owned scalings.
#[derive(Debug, Clone)]
pub struct Scalings {
    pub theta: Vec<f64>,
    pub phi: Vec<f64>,
    pub w_diag: Vec<f64>,
    pub b_diag: f64,
    pub sigma: Vec<f64>,
    pub rho: Vec<f64>,
    pub kappa: Vec<f64>,
}

impl Scalings {
    /// Log-uniform in `[10^lo, 10^hi]`; `w_diag` and `b_diag` may be zero with probability 0.2
    /// when `zeros` (only if every feature is covered — caller's responsibility).
    pub fn random(inst: &Instance, lo: f64, hi: f64, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let mut g = |k: usize| -> Vec<f64> {
            (0..k)
                .map(|_| 10f64.powf(rng.random_range(lo..=hi)))
                .collect()
        };
        let nnz = inst.nnz();
        let theta = g(inst.m);
        let phi = g(nnz);
        let w_diag = g(inst.n);
        let sigma = g(nnz);
        let rho = g(inst.m);
        let kappa = g(inst.m);
        let b_diag = g(1)[0];
        Self {
            theta,
            phi,
            w_diag,
            b_diag,
            sigma,
            rho,
            kappa,
        }
    }

    pub fn as_ref(&self) -> DsxScalings<'_> {
        DsxScalings {
            theta: &self.theta,
            phi: PairScaling::Values(&self.phi),
            w_diag: &self.w_diag,
            b_diag: self.b_diag,
            sigma: PairScaling::Values(&self.sigma),
            rho: &self.rho,
            kappa: &self.kappa,
        }
    }
}

/// Independent dense `H = Gᵀ diag(θ, φ) G + diag(ω, ω_b, σ, ρ, κ) + δI`, built from the LP rows
/// as written in the contract (not from `apply`).
pub fn dense_h(inst: &Instance, sc: &Scalings, delta: f64) -> Mat<f64> {
    let (m, n) = (inst.m, inst.n);
    let len = n + 1 + inst.nnz() + 2 * m;
    let vsum: f64 = inst.v.iter().sum();
    let mut h = Mat::<f64>::zeros(len, len);
    let mut off = n + 1;
    let mut nz = 0;
    let add_row = |h: &mut Mat<f64>, coefs: &[(usize, f64)], wgt: f64| {
        for &(a, ca) in coefs {
            for &(b, cb) in coefs {
                h[(a, b)] += wgt * ca * cb;
            }
        }
    };
    for i in 0..m {
        let (cols, vals) = inst.row(i);
        let k = cols.len();
        let vin: f64 = cols.iter().map(|&j| inst.v[j]).sum();
        let p_i = inst.p - (vsum - vin);
        let lam = off + k;
        let xi = off + k + 1;
        // row a_i: P_i λ − Σ α + y b + ξ
        let mut coefs = vec![(lam, p_i), (n, inst.y[i]), (xi, 1.0)];
        for a in 0..k {
            coefs.push((off + a, -1.0));
        }
        add_row(&mut h, &coefs, sc.theta[i]);
        for a in 0..k {
            let j = cols[a];
            // row b_ij: y x w_j − v_j λ + α_ij
            let coefs = [(j, inst.y[i] * vals[a]), (lam, -inst.v[j]), (off + a, 1.0)];
            add_row(&mut h, &coefs, sc.phi[nz + a]);
            h[(off + a, off + a)] += sc.sigma[nz + a];
        }
        h[(lam, lam)] += sc.rho[i];
        h[(xi, xi)] += sc.kappa[i];
        nz += k;
        off += k + 2;
    }
    for j in 0..n {
        h[(j, j)] += sc.w_diag[j];
    }
    h[(n, n)] += sc.b_diag;
    for t in 0..len {
        h[(t, t)] += delta;
    }
    h
}

pub fn matvec(h: &Mat<f64>, x: &[f64]) -> Vec<f64> {
    (0..h.nrows())
        .map(|r| (0..h.ncols()).map(|c| h[(r, c)] * x[c]).sum())
        .collect()
}

pub fn norm(x: &[f64]) -> f64 {
    x.iter().map(|e| e * e).sum::<f64>().sqrt()
}

/// `‖r − H z‖₂ / ‖r‖₂`.
pub fn rel_residual(h: &Mat<f64>, z: &[f64], r: &[f64]) -> f64 {
    let hz = matvec(h, z);
    let d: Vec<f64> = hz.iter().zip(r).map(|(a, b)| a - b).collect();
    norm(&d) / norm(r)
}

pub fn random_vec(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xabcdef);
    (0..len).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// Reference solve with faer's dense Cholesky (falls back to LU if Cholesky fails).
pub fn dense_solve(h: &Mat<f64>, r: &[f64]) -> Vec<f64> {
    use faer::linalg::solvers::Solve;
    let rhs = Mat::from_fn(r.len(), 1, |i, _| r[i]);
    let sol = match h.llt(faer::Side::Lower) {
        Ok(llt) => llt.solve(&rhs),
        Err(_) => h.partial_piv_lu().solve(&rhs),
    };
    (0..r.len()).map(|i| sol[(i, 0)]).collect()
}

/// Reference solve with faer's dense LU.
pub fn dense_lu_solve(h: &Mat<f64>, r: &[f64]) -> Vec<f64> {
    use faer::linalg::solvers::Solve;
    let rhs = Mat::from_fn(r.len(), 1, |i, _| r[i]);
    let sol = h.partial_piv_lu().solve(&rhs);
    (0..r.len()).map(|i| sol[(i, 0)]).collect()
}
