//! Construction and reconfiguration of a [`DsxSystem`]: validation of the rows, labels, budget,
//! settings and scalings, and the sizing of every buffer (no allocation after this).

use std::borrow::Cow;

use faer::linalg::cholesky::ldlt::factor::cholesky_in_place_scratch;

use super::augmented::{Couplings, ExampleSpace};
use super::example::{ExampleFactor, NO_REC, Work};
use super::plan::MethodEstimate;
use super::plan::{self, Pattern};
use super::scatter::{SCATTER_BAND_DOUBLES, SCATTER_CHUNK_NNZ, SCATTER_PASS_COST, ScatterPlan};
use super::settings::validate_settings;
use super::sparse::{SparseAnalysis, SparseLdl, sparse_analysis};
use super::{
    DsxScalings, DsxSettings, DsxSystem, DynamicRegularization, NormalEquations,
    NormalEquationsPlan, PairScaling, RowsRef, SchurKernel,
};
use crate::error::{LinalgError, Result, check_finite, check_len, check_nonneg};

/// The validated rows, borrowed from the caller (the dense row pointers are built).
struct Rows<'a> {
    m: usize,
    n: usize,
    dense: bool,
    indptr: Cow<'a, [usize]>,
    indices: Cow<'a, [usize]>,
    x: Cow<'a, [f64]>,
}

fn validate_rows(rows: RowsRef<'_>) -> Result<Rows<'_>> {
    match rows {
        RowsRef::Dense { data, m, n } => {
            if m == 0 {
                return Err(LinalgError::EmptyDimension { name: "m" });
            }
            if n == 0 {
                return Err(LinalgError::EmptyDimension { name: "n" });
            }
            check_len("rows.data", m * n, data.len())?;
            check_finite("rows.data", data)?;
            Ok(Rows {
                m,
                n,
                dense: true,
                indptr: Cow::Owned((0..=m).map(|i| i * n).collect()),
                indices: Cow::Owned(Vec::new()),
                x: Cow::Borrowed(data),
            })
        }
        RowsRef::Csr {
            indptr,
            indices,
            values,
            n,
        } => {
            if indptr.len() < 2 {
                return Err(LinalgError::EmptyDimension { name: "m" });
            }
            if n == 0 {
                return Err(LinalgError::EmptyDimension { name: "n" });
            }
            let m = indptr.len() - 1;
            if indptr[0] != 0 {
                return Err(LinalgError::InvalidCsr {
                    row: 0,
                    reason: "indptr[0] must be 0",
                });
            }
            let nnz = indptr[m];
            check_len("rows.indices", nnz, indices.len())?;
            check_len("rows.values", nnz, values.len())?;
            check_finite("rows.values", values)?;
            for i in 0..m {
                if indptr[i + 1] < indptr[i] {
                    return Err(LinalgError::InvalidCsr {
                        row: i,
                        reason: "indptr must be non-decreasing",
                    });
                }
            }
            for i in 0..m {
                let cols = &indices[indptr[i]..indptr[i + 1]];
                for (a, &j) in cols.iter().enumerate() {
                    if j >= n {
                        return Err(LinalgError::InvalidCsr {
                            row: i,
                            reason: "column index >= n",
                        });
                    }
                    if a > 0 && cols[a - 1] >= j {
                        return Err(LinalgError::InvalidCsr {
                            row: i,
                            reason: "column indices must be strictly increasing",
                        });
                    }
                }
            }
            Ok(Rows {
                m,
                n,
                dense: false,
                indptr: Cow::Borrowed(indptr),
                indices: Cow::Borrowed(indices),
                x: Cow::Borrowed(values),
            })
        }
    }
}

impl DsxSystem<'static> {
    /// Validates and copies the data; sizes every buffer. `O(nnz + n²)` memory.
    ///
    /// `y_i ∈ {−1, +1}`, `v_j ≥ 0` finite, `p > 0` finite (or `p = 0` with every `v_j = 0`: λ in
    /// no row).
    pub fn try_new(rows: RowsRef<'_>, y: &[f64], v: &[f64], p: f64) -> Result<Self> {
        Self::try_new_with(rows, y, v, p, DsxSettings::default())
    }

    /// As [`DsxSystem::try_new`] with explicit settings.
    pub fn try_new_with(
        rows: RowsRef<'_>,
        y: &[f64],
        v: &[f64],
        p: f64,
        settings: DsxSettings,
    ) -> Result<Self> {
        let rows = validate_rows(rows)?;
        let owned = Rows {
            m: rows.m,
            n: rows.n,
            dense: rows.dense,
            indptr: Cow::Owned(rows.indptr.into_owned()),
            indices: Cow::Owned(rows.indices.into_owned()),
            x: Cow::Owned(rows.x.into_owned()),
        };
        DsxSystem::build(owned, 1.0, y, v, p, settings)
    }
}

impl<'a> DsxSystem<'a> {
    /// As [`DsxSystem::try_new_with`] for the rows `scale · rows`, without copying them: the
    /// system reads the caller's values (and column indices) and multiplies by `scale` where it
    /// reads them, which gives the same bits as a scaled copy. `scale` finite and `> 0`, and
    /// `scale · x` finite for every value.
    pub fn try_borrow_with(
        rows: RowsRef<'a>,
        scale: f64,
        y: &[f64],
        v: &[f64],
        p: f64,
        settings: DsxSettings,
    ) -> Result<Self> {
        let rows = validate_rows(rows)?;
        let big = rows.x.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        if !(scale.is_finite() && scale > 0.0 && (scale * big).is_finite()) {
            return Err(LinalgError::InvalidValue {
                name: "scale",
                index: 0,
                value: scale,
                reason: "must be finite and > 0, with scale · x finite",
            });
        }
        DsxSystem::build(rows, scale, y, v, p, settings)
    }

    /// The common part of the constructors: validates the rest and sizes every buffer.
    fn build(
        rows: Rows<'a>,
        scale: f64,
        y: &[f64],
        v: &[f64],
        p: f64,
        settings: DsxSettings,
    ) -> Result<Self> {
        let Rows {
            m,
            n,
            dense,
            indptr,
            indices,
            x,
        } = rows;
        check_len("y", m, y.len())?;
        for (index, &value) in y.iter().enumerate() {
            if value != 1.0 && value != -1.0 {
                return Err(LinalgError::InvalidValue {
                    name: "y",
                    index,
                    value,
                    reason: "labels must be -1 or +1",
                });
            }
        }
        check_len("v", n, v.len())?;
        check_nonneg("v", v)?;
        // p = 0 only with every v_j = 0: λ out of every row (a zero budget everywhere)
        let lam_free = v.iter().all(|&vj| vj == 0.0);
        if !(p.is_finite() && (p > 0.0 || (p == 0.0 && lam_free))) {
            return Err(LinalgError::InvalidValue {
                name: "p",
                index: 0,
                value: p,
                reason: "must be finite and > 0 (0 only when every v_j is 0)",
            });
        }
        validate_settings(&settings)?;
        let nnz = x.len();
        let mut p_eff = vec![0.0; m];
        let mut v0 = vec![0.0; m];
        let mut max_k = 0;
        let mut sum_k2 = 0.0;
        for i in 0..m {
            let k = indptr[i + 1] - indptr[i];
            max_k = max_k.max(k);
            sum_k2 += (k * k) as f64;
            // V0_i = Σ_{j∉S_i} v_j, computed directly (not vsum − vin) to avoid cancellation.
            let v0i = if dense || k == n {
                0.0
            } else {
                let mut acc = 0.0;
                let cols = &indices[indptr[i]..indptr[i + 1]];
                let mut a = 0;
                for (j, &vj) in v.iter().enumerate() {
                    if a < cols.len() && cols[a] == j {
                        a += 1;
                    } else {
                        acc += vj;
                    }
                }
                acc
            };
            v0[i] = v0i;
            p_eff[i] = p - v0i;
        }
        let n1 = n + 1;
        let kernel = resolve_kernel(settings.kernel, dense, sum_k2, m, n);
        // every method's cost, before anything large is allocated
        let pattern = Pattern {
            m,
            n,
            nnz,
            dense,
            sum_k2,
            indptr: &indptr,
            indices: &indices,
        };
        let Planned {
            plan,
            method,
            couplings,
            analysis,
        } = make_plan(&pattern, kernel, &settings)?;
        let feature = method == NormalEquations::FeatureSpace;
        let couplings = (!feature)
            .then(|| couplings.unwrap_or_else(|| Couplings::new(m, n, &indptr, &indices)));
        let (couplings, example_space, sparse) = match (couplings, method) {
            (Some(mut c), NormalEquations::ExampleSpace) => {
                c.allocate(m);
                let es = ExampleSpace::new(m, &c);
                (Some(c), Some(Box::new(es)), None)
            }
            (Some(mut c), NormalEquations::SparseLdl) => {
                c.allocate(m);
                let sp = match analysis {
                    Some(a) => a,
                    None => sparse_analysis(m, n, &c)?,
                };
                (Some(c), None, Some(Box::new(SparseLdl::new(m, n, sp))))
            }
            _ => (None, None, None),
        };
        let chunk = settings.chunk_rows.min(m);
        let (g1, g2) = if feature && kernel == SchurKernel::DenseGemm {
            (vec![0.0; n * chunk], vec![0.0; n * chunk])
        } else {
            (Vec::new(), Vec::new())
        };
        let scatter = if feature && kernel == SchurKernel::SparseScatter {
            ScatterPlan::new(
                n,
                dense,
                &indptr,
                &indices,
                settings.threads >= 2,
                SCATTER_CHUNK_NNZ,
                SCATTER_BAND_DOUBLES,
                SCATTER_PASS_COST,
            )
        } else {
            ScatterPlan::default()
        };
        let req = if feature {
            cholesky_in_place_scratch::<f64>(n1, settings.par, Default::default())
        } else {
            faer::dyn_stack::StackReq::EMPTY
        };
        // the solve passes' halves: the first example at or past half the non-zeros
        let solve_mid = indptr[..m].partition_point(|&q| 2 * q < nnz);
        Ok(Self {
            m,
            n,
            dense,
            indptr,
            indices,
            x,
            scale,
            y: y.to_vec(),
            v: v.to_vec(),
            p,
            p_eff,
            v0,

            sum_k2,
            settings,
            kernel,
            method,
            plan,
            couplings,
            example_space,
            sparse,
            inv_delta: vec![0.0; nnz],
            ex: vec![
                ExampleFactor {
                    p11: 0.0,
                    p12: 0.0,
                    p22: 0.0,
                    inv_kappa: 0.0,
                    inv_theta: 0.0,
                    s: 0.0,
                    sz: 0.0,
                    tz: 0.0,
                    s0: 0.0,
                    t0: 0.0,
                    rec: NO_REC,
                };
                m
            ],
            s: if feature {
                vec![0.0; n1 * n1]
            } else {
                Vec::new()
            },
            jacobi: if feature { vec![0.0; n1] } else { Vec::new() },
            signs: if feature { vec![1; n1] } else { Vec::new() },
            g1,
            g2,
            scatter,
            work: [Work::new(n, max_k), Work::new(n, max_k)],
            solve_mid,
            rb_part: vec![0.0; n + 1],
            mem: crate::error::Scratch::new(req),
            factored: false,
            refine: [Vec::new(), Vec::new(), Vec::new()],
        })
    }

    /// Changes the settings (no reallocation unless `kernel`/`chunk_rows` change the buffers;
    /// invalidates the factorisation).
    pub fn set_settings(&mut self, settings: DsxSettings) -> Result<()> {
        validate_settings(&settings)?;
        if settings.normal_equations != self.settings.normal_equations
            || settings.memory_limit != self.settings.memory_limit
        {
            return Err(LinalgError::InvalidValue {
                name: "settings.normal_equations",
                index: 0,
                value: f64::NAN,
                reason: "the normal-equations method and the memory limit are chosen at \
                         construction and cannot change",
            });
        }
        let n1 = self.n + 1;
        let kernel = resolve_kernel(settings.kernel, self.dense, self.sum_k2, self.m, self.n);
        if self.method != NormalEquations::FeatureSpace {
            self.kernel = kernel;
            self.settings = settings;
            self.factored = false;
            return Ok(());
        }
        let chunk = settings.chunk_rows.min(self.m);
        if kernel == SchurKernel::DenseGemm {
            self.g1.resize(self.n * chunk, 0.0);
            self.g2.resize(self.n * chunk, 0.0);
        }
        let two = settings.threads >= 2;
        if kernel == SchurKernel::SparseScatter
            && (self.scatter.chunks.is_empty() || (two && self.scatter.g1[1].is_empty()))
        {
            self.scatter = ScatterPlan::new(
                self.n,
                self.dense,
                &self.indptr,
                &self.indices,
                two,
                SCATTER_CHUNK_NNZ,
                SCATTER_BAND_DOUBLES,
                SCATTER_PASS_COST,
            );
        }
        let req = cholesky_in_place_scratch::<f64>(n1, settings.par, Default::default());
        self.mem = crate::error::Scratch::new(req);
        self.kernel = kernel;
        self.settings = settings;
        self.factored = false;
        Ok(())
    }

    /// Changes only the dynamic regularisation of `S` (validated as in [`DsxSettings`]; no
    /// reallocation; invalidates the factorisation). A caller whose solve came out non-finite
    /// may re-factor with a larger one and restore it afterwards.
    pub fn set_dynamic_regularization(
        &mut self,
        regularization: Option<DynamicRegularization>,
    ) -> Result<()> {
        let settings = DsxSettings {
            dynamic_regularization: regularization,
            ..self.settings
        };
        validate_settings(&settings)?;
        self.settings = settings;
        self.factored = false;
        Ok(())
    }

    pub(super) fn check_scalings(&self, s: &DsxScalings<'_>) -> Result<()> {
        let (m, n) = (self.m, self.n);
        check_len("theta", m, s.theta.len())?;
        s.phi.check_len("phi", &self.indptr)?;
        check_len("w_diag", n, s.w_diag.len())?;
        s.sigma.check_len("sigma", &self.indptr)?;
        check_len("rho", m, s.rho.len())?;
        check_len("kappa", m, s.kappa.len())?;
        check_nonneg("theta", s.theta)?;
        // (values computed where read are checked where the factorisation computes them)
        if let PairScaling::Values(phi) = s.phi {
            check_nonneg("phi", phi)?;
        }
        check_nonneg("w_diag", s.w_diag)?;
        check_nonneg("b_diag", core::slice::from_ref(&s.b_diag))?;
        if let PairScaling::Values(sigma) = s.sigma {
            check_nonneg("sigma", sigma)?;
        }
        check_nonneg("rho", s.rho)?;
        check_nonneg("kappa", s.kappa)?;
        Ok(())
    }
}

/// The feature space's Schur kernel for `Auto`: the scatter kernel when `16 Σ_i |S_i|² <
/// m (n+1)²` (sparse rows).
fn resolve_kernel(
    kernel: SchurKernel,
    dense: bool,
    sum_k2: f64,
    m: usize,
    n: usize,
) -> SchurKernel {
    let n1 = (n + 1) as f64;
    match kernel {
        SchurKernel::Auto => {
            if !dense && sum_k2 * 16.0 < (m as f64) * n1 * n1 {
                SchurKernel::SparseScatter
            } else {
                SchurKernel::DenseGemm
            }
        }
        k => k,
    }
}

/// What [`make_plan`] decided, with the structures it built on the way (the column map, and
/// the sparse analysis when it was done).
struct Planned {
    plan: NormalEquationsPlan,
    method: NormalEquations,
    couplings: Option<Couplings>,
    analysis: Option<SparseAnalysis>,
}

/// The cost model ([`plan`]): the dense methods from the shape, the sparse one from its
/// symbolic analysis when it is forced, or when the dense methods would cost more than the
/// analysis or do not fit. `TooLarge` when nothing fits.
fn make_plan(p: &Pattern<'_>, kernel: SchurKernel, settings: &DsxSettings) -> Result<Planned> {
    let requested = settings.normal_equations;
    let limit = settings.memory_limit;
    let counts = p.column_counts();
    let feature = plan::feature_space(p, kernel == SchurKernel::DenseGemm, settings.chunk_rows);
    let example = plan::example_space(p, &counts);
    drop(counts);
    let dense_best = [&feature, &example]
        .into_iter()
        .filter(|e| e.fits(limit))
        .filter_map(|e| e.seconds)
        .fold(f64::INFINITY, f64::min);
    let analyse = match requested {
        NormalEquations::SparseLdl => true,
        NormalEquations::Auto => !p.dense && dense_best > 2.0 * plan::sparse_analysis_seconds(p),
        _ => false,
    };
    // the column map (12 bytes per stored entry) only where a method that reads it may be
    // chosen: the sparse analysis, or the example space when it is the cheaper dense method
    let example_may_win = example.fits(limit)
        && (!feature.fits(limit) || example.seconds <= feature.seconds || analyse);
    let needs_map = analyse
        || matches!(requested, NormalEquations::ExampleSpace)
        || (requested == NormalEquations::Auto && example_may_win);
    let couplings = needs_map.then(|| Couplings::new(p.m, p.n, p.indptr, p.indices));
    let mut analysis = None;
    let sparse = match (&couplings, analyse) {
        (Some(c), true) => {
            let a = sparse_analysis(p.m, p.n, c)?;
            let scratch = SparseLdl::scratch_bytes(&a.symbolic);
            let e = plan::sparse_ldl(p, a.symbolic.len_val(), a.row_idx.len(), a.flops, scratch);
            analysis = Some(a);
            e
        }
        _ => MethodEstimate::not_analysed(NormalEquations::SparseLdl),
    };
    let estimates = [feature, example, sparse];
    let chosen = plan::choose(requested, &estimates, limit);
    let plan = NormalEquationsPlan {
        m: p.m,
        n: p.n,
        nnz: p.nnz,
        estimates,
        limit,
        requested,
        chosen,
    };
    let Some(method) = chosen else {
        return Err(LinalgError::TooLarge {
            plan: Box::new(plan),
        });
    };
    if method != NormalEquations::SparseLdl {
        analysis = None;
    }
    Ok(Planned {
        plan,
        method,
        couplings: if method == NormalEquations::FeatureSpace {
            None
        } else {
            couplings
        },
        analysis,
    })
}
