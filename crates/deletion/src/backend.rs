//! The structured KKT backend: `bulwark-lp`'s Newton system for LP (4), solved through the
//! block-arrow normal equations of `bulwark-linalg` (DSX eqs. (13)–(21)).
//!
//! Every row of LP (4) is an inequality row, so (see `bulwark_lp::kkt`) the rows are
//! eliminated: with `Θ = E⁻¹`,
//!
//! ```text
//! (D_x + Aᵀ Θ A) Δx = Aᵀ Θ r_y − r_x,      Δy = Θ (r_y − A Δx),
//! ```
//!
//! and `H = D_x + AᵀΘA` is exactly `GᵀΘG + diag(ω, ω_b, σ, ρ, κ)` of `DsxSystem`, factored in
//! `O(Σ_i |S_i|²)` (or two GEMMs for dense data) plus one Cholesky of order `n + 1`. The
//! products by `A` and `Aᵀ` are applied from the structure in `O(nnz)`; no matrix is stored
//! besides the data. Nothing is allocated after [`StructuredBackend::analyze`].

use bulwark_linalg::{
    DsxScalings, DsxSettings, DsxSystem, DynamicRegularization, PairScaling, RowsRef,
};
use bulwark_lp::KktError;
use bulwark_lp::kkt::{KktBackend, KktInfo, KktProblem, RowKind};

use crate::layout::Lp4;

const NAME: &str = "dsx-structured";

/// Scaling vectors of the current factorisation.
#[derive(Debug, Default)]
struct Scalings {
    theta: Vec<f64>,
    phi: Vec<f64>,
    w_diag: Vec<f64>,
    b_diag: f64,
    sigma: Vec<f64>,
    rho: Vec<f64>,
    kappa: Vec<f64>,
}

impl Scalings {
    fn view(&self) -> DsxScalings<'_> {
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

/// The structured backend for LP (4) built by [`Lp4`].
#[derive(Debug)]
pub struct StructuredBackend<'a> {
    lp: Lp4<'a>,
    system: Option<DsxSystem<'static>>,
    settings: DsxSettings,
    s: Scalings,
    /// Θ = 1 / row_diag, in LP row order.
    row_theta: Vec<f64>,
    rhs: Vec<f64>,
    z: Vec<f64>,
    tmp_rows: Vec<f64>,
    info: KktInfo,
}

impl<'a> StructuredBackend<'a> {
    /// A backend for the LP laid out by `lp`. `settings` tunes the linear algebra (parallelism,
    /// regularisation); the default adds a tiny static regularisation and dynamic
    /// regularisation of the Schur complement, removed again by PCG refinement against the
    /// exact operator.
    pub fn new(lp: Lp4<'a>, settings: Option<DsxSettings>) -> Self {
        let settings = settings.unwrap_or(DsxSettings {
            static_regularization: 1e-12,
            dynamic_regularization: Some(DynamicRegularization {
                epsilon: 1e-14,
                delta: 1e-10,
            }),
            ..DsxSettings::default()
        });
        Self {
            lp,
            system: None,
            settings,
            s: Scalings::default(),
            row_theta: Vec::new(),
            rhs: Vec::new(),
            z: Vec::new(),
            tmp_rows: Vec::new(),
            info: KktInfo {
                name: NAME,
                ..KktInfo::default()
            },
        }
    }

    /// `out = A z` (rows of LP (4)) from the structure.
    fn mul_a(lp: &Lp4<'_>, z: &[f64], out: &mut [f64]) {
        let n = lp.n();
        let zb = z[n];
        for i in 0..lp.m() {
            let (a0, r0) = (lp.var_offset(i), lp.row_offset(i));
            let k = lp.support_len(i);
            let (lam, xi) = (z[a0 + k], z[a0 + k + 1]);
            let mut s = lp.p_i[i] * lam + lp.y[i] * zb + xi;
            for (t, nz) in (lp.indptr[i]..lp.indptr[i + 1]).enumerate() {
                let j = lp.col(i, t);
                let alpha = z[a0 + t];
                s -= alpha;
                out[r0 + 1 + t] = lp.y[i] * lp.x[nz] * z[j] - lp.v()[j] * lam + alpha;
            }
            out[r0] = s;
        }
    }

    /// `out = Aᵀ u` (variables of LP (4)) from the structure.
    fn mul_at(lp: &Lp4<'_>, u: &[f64], out: &mut [f64]) {
        let n = lp.n();
        out[..=n].fill(0.0);
        for i in 0..lp.m() {
            let (a0, r0) = (lp.var_offset(i), lp.row_offset(i));
            let k = lp.support_len(i);
            let ua = u[r0];
            out[n] += lp.y[i] * ua;
            let mut lam = lp.p_i[i] * ua;
            for (t, nz) in (lp.indptr[i]..lp.indptr[i + 1]).enumerate() {
                let j = lp.col(i, t);
                let ub = u[r0 + 1 + t];
                out[j] += lp.y[i] * lp.x[nz] * ub;
                out[a0 + t] = ub - ua;
                lam -= lp.v()[j] * ub;
            }
            out[a0 + k] = lam;
            out[a0 + k + 1] = ua;
        }
    }

    /// Checks that the IPM's matrix is LP (4) as laid out: compares `A z` computed from the CSC
    /// matrix and from the structure for two deterministic test vectors.
    fn verify(&self, p: &KktProblem<'_>) -> Result<(), KktError> {
        let (nv, nr) = (self.lp.num_vars(), self.lp.num_rows());
        let unsupported = |reason: String| KktError::Unsupported {
            backend: NAME,
            reason,
        };
        if p.a.ncols != nv || p.a.nrows != nr {
            return Err(unsupported(format!(
                "matrix is {} x {}, LP (4) layout needs {nr} x {nv} (was the problem presolved?)",
                p.a.nrows, p.a.ncols
            )));
        }
        if let Some(i) = p.row_kind.iter().position(|k| *k != RowKind::Inequality) {
            return Err(unsupported(format!(
                "row {i} is an equality row; LP (4) has only inequality rows"
            )));
        }
        let mut z = vec![0.0; nv];
        let mut from_csc = vec![0.0; nr];
        let mut from_structure = vec![0.0; nr];
        for seed in [1u64, 7] {
            for (k, e) in z.iter_mut().enumerate() {
                let h = (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    ^ seed.wrapping_mul(0xD1B5_4A32_D192_ED03);
                *e = ((h >> 11) as f64 / (1u64 << 53) as f64) - 0.5;
            }
            from_csc.fill(0.0);
            p.a.mul_add(&z, &mut from_csc);
            Self::mul_a(&self.lp, &z, &mut from_structure);
            let scale = from_csc.iter().fold(1.0f64, |a, v| a.max(v.abs()));
            if let Some(r) =
                (0..nr).find(|&r| (from_csc[r] - from_structure[r]).abs() > 1e-12 * scale)
            {
                return Err(unsupported(format!(
                    "row {r} of the matrix differs from LP (4)'s structure"
                )));
            }
        }
        Ok(())
    }
}

impl KktBackend for StructuredBackend<'_> {
    fn name(&self) -> &'static str {
        NAME
    }

    fn requires_original_layout(&self) -> bool {
        true
    }

    fn analyze(&mut self, problem: KktProblem<'_>) -> Result<(), KktError> {
        self.verify(&problem)?;
        let lp = &self.lp;
        let indices = lp.csr_indices();
        let rows = RowsRef::Csr {
            indptr: &lp.indptr,
            indices: &indices,
            values: &lp.x[..],
            n: lp.n(),
        };
        let system =
            DsxSystem::try_new_with(rows, &lp.y, lp.v(), lp.p(), self.settings).map_err(|e| {
                KktError::Unsupported {
                    backend: NAME,
                    reason: e.to_string(),
                }
            })?;
        let (m, n, nnz) = (lp.m(), lp.n(), lp.nnz());
        self.s = Scalings {
            theta: vec![0.0; m],
            phi: vec![0.0; nnz],
            w_diag: vec![0.0; n],
            b_diag: 0.0,
            sigma: vec![0.0; nnz],
            rho: vec![0.0; m],
            kappa: vec![0.0; m],
        };
        self.row_theta = vec![0.0; lp.num_rows()];
        self.rhs = vec![0.0; lp.num_vars()];
        self.z = vec![0.0; lp.num_vars()];
        self.tmp_rows = vec![0.0; lp.num_rows()];
        self.info.dim = system.len();
        self.info.matrix_nnz = nnz + (n + 1) * (n + 2) / 2;
        self.info.factor_nnz = (n + 1) * (n + 2) / 2 + 3 * nnz;
        self.system = Some(system);
        Ok(())
    }

    fn factor(&mut self, var_diag: &[f64], row_diag: &[f64]) -> Result<(), KktError> {
        let Some(system) = self.system.as_mut() else {
            return Err(KktError::NotReady {
                backend: NAME,
                missing: "analyze",
            });
        };
        let lp = &self.lp;
        if var_diag.len() != lp.num_vars() {
            return Err(KktError::Dimension {
                what: "var_diag",
                got: var_diag.len(),
                expected: lp.num_vars(),
            });
        }
        if row_diag.len() != lp.num_rows() {
            return Err(KktError::Dimension {
                what: "row_diag",
                got: row_diag.len(),
                expected: lp.num_rows(),
            });
        }
        for (t, &e) in self.row_theta.iter_mut().zip(row_diag) {
            if e.is_nan() || e <= 0.0 || e.is_infinite() {
                return Err(KktError::NonFinite(
                    "row_diag (must be finite and > 0 for LP (4))",
                ));
            }
            *t = 1.0 / e;
        }
        let n = lp.n();
        self.s.w_diag.copy_from_slice(&var_diag[..n]);
        self.s.b_diag = var_diag[n];
        for i in 0..lp.m() {
            let (a0, r0) = (lp.var_offset(i), lp.row_offset(i));
            let k = lp.support_len(i);
            let nz0 = lp.indptr[i];
            self.s.sigma[nz0..nz0 + k].copy_from_slice(&var_diag[a0..a0 + k]);
            self.s.rho[i] = var_diag[a0 + k];
            self.s.kappa[i] = var_diag[a0 + k + 1];
            self.s.theta[i] = self.row_theta[r0];
            self.s.phi[nz0..nz0 + k].copy_from_slice(&self.row_theta[r0 + 1..r0 + 1 + k]);
        }
        let fi = system.factor(&self.s.view()).map_err(|e| match e {
            bulwark_linalg::LinalgError::NotPositiveDefinite { .. } => {
                KktError::BadPivot { index: 0 }
            }
            other => KktError::Unsupported {
                backend: NAME,
                reason: other.to_string(),
            },
        })?;
        self.info.regularized_pivots = fi.regularized_pivots;
        self.info.total_regularized_pivots += fi.regularized_pivots;
        self.info.factorizations += 1;
        Ok(())
    }

    fn solve(&mut self, rhs_x: &mut [f64], rhs_y: &mut [f64]) -> Result<(), KktError> {
        let Some(system) = self.system.as_mut() else {
            return Err(KktError::NotReady {
                backend: NAME,
                missing: "analyze",
            });
        };
        let lp = &self.lp;
        // t = Aᵀ Θ r_y − r_x
        for ((t, &th), &r) in self
            .tmp_rows
            .iter_mut()
            .zip(&self.row_theta)
            .zip(rhs_y.iter())
        {
            *t = th * r;
        }
        Self::mul_at(lp, &self.tmp_rows, &mut self.rhs);
        for (r, &x) in self.rhs.iter_mut().zip(rhs_x.iter()) {
            *r -= x;
        }
        // H Δx = t by the block-arrow factorisation (DSX eqs. (15)–(18), (21)). The IPM refines
        // the whole Newton step against the exact operator, so no inner refinement is needed.
        self.z.copy_from_slice(&self.rhs);
        system
            .solve_in_place(&self.s.view(), &mut self.z)
            .map_err(|e| KktError::Unsupported {
                backend: NAME,
                reason: e.to_string(),
            })?;
        if self.z.iter().any(|v| !v.is_finite()) {
            return Err(KktError::NonFinite("structured solve"));
        }
        rhs_x.copy_from_slice(&self.z);
        // Δy = Θ (r_y − A Δx)
        Self::mul_a(lp, &self.z, &mut self.tmp_rows);
        for ((y, &th), &ax) in rhs_y.iter_mut().zip(&self.row_theta).zip(&self.tmp_rows) {
            *y = th * (*y - ax);
        }
        self.info.solves += 1;
        Ok(())
    }

    fn info(&self) -> KktInfo {
        self.info.clone()
    }
}
