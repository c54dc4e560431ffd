//! The blocked scatter kernel against a verbatim copy of the unblocked one (bit-exact), and the
//! two-half product and residual of the refinement against `apply`.

use faer::Par;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cols::{Cols, Ident};
use super::example::{Shared, factor_range};
use super::refine::{norm2, norm2_fast};
use super::scatter::{SCATTER_PASS_COST, ScatterPlan, rank2};
use super::*;

/// The scatter loop of `factor_example` before blocking (immediate per-example scatter).
fn legacy_scatter<C: Cols>(cols: C, g1: &[f64], g2: &[f64], s_mat: &mut [f64], n1: usize) {
    let n = n1 - 1;
    let k = g1.len();
    let mut a = 0;
    while a + 1 < k {
        let (ja, jb) = (cols.at(a), cols.at(a + 1));
        let (c1a, c2a, c1b, c2b) = (g1[a], g2[a], g1[a + 1], g2[a + 1]);
        let (left, right) = s_mat.split_at_mut(jb * n1);
        let col_a = &mut left[ja * n1..ja * n1 + n];
        let col_b = &mut right[..n];
        col_a[ja] = rank2(col_a[ja], c1a, c2a, g1[a], g2[a]);
        for (jr, (&h1, &h2)) in cols
            .range_iter(a + 1, k)
            .zip(g1[a + 1..].iter().zip(&g2[a + 1..]))
        {
            col_a[jr] = rank2(col_a[jr], c1a, c2a, h1, h2);
            col_b[jr] = rank2(col_b[jr], c1b, c2b, h1, h2);
        }
        a += 2;
    }
    if a < k {
        let ja = cols.at(a);
        let d = &mut s_mat[ja * n1 + ja];
        *d = rank2(*d, g1[a], g2[a], g1[a], g2[a]);
    }
}

impl DsxSystem<'_> {
    /// `form_schur` with the unblocked kernel: one example at a time, scattered at once.
    fn form_schur_legacy(&mut self, sc: &DsxScalings<'_>) -> usize {
        self.reset_schur();
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
        let mut sbb = sc.b_diag + self.settings.static_regularization;
        // the unblocked code summed `τ_i` per block of `chunk_rows` examples
        let group = self.settings.chunk_rows.min(self.m).max(1);
        let mut tau = 0.0;
        for i in 0..self.m {
            let r = self.indptr[i]..self.indptr[i + 1];
            let (g1, g2) = (
                &mut self.scatter.g1[0][..r.len()],
                &mut self.scatter.g2[0][..r.len()],
            );
            tau = factor_range(
                &sh,
                sc,
                i,
                i + 1,
                tau,
                &mut self.inv_delta[r.clone()],
                &mut self.ex[i..=i],
                g1,
                g2,
                &mut [],
                &mut self.work[0],
            )
            .unwrap();
            if (i + 1) % group == 0 || i + 1 == self.m {
                sbb += tau;
                tau = 0.0;
            }
            if self.dense {
                legacy_scatter(Ident, g1, g2, &mut self.s, n1);
            } else {
                legacy_scatter(&self.indices[r], g1, g2, &mut self.s, n1);
            }
        }
        self.finish_schur(sc, sbb)
    }
}

struct Owned {
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
    m: usize,
    n: usize,
    dense: bool,
}

impl Owned {
    /// CSR rows with non-uniform column densities (some columns empty), or dense rows.
    fn random(m: usize, n: usize, density: f64, dense: bool, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let col_p: Vec<f64> = (0..n)
            .map(|j| {
                if j % 7 == 3 {
                    0.0
                } else {
                    (density * rng.random_range(0.2..1.8)).min(1.0)
                }
            })
            .collect();
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for _ in 0..m {
            for (j, &pj) in col_p.iter().enumerate() {
                if dense || rng.random_bool(pj) {
                    indices.push(j);
                    values.push(rng.random_range(-1.0..1.0));
                }
            }
            indptr.push(indices.len());
        }
        Self {
            indptr,
            indices,
            values,
            m,
            n,
            dense,
        }
    }

    fn rows(&self) -> RowsRef<'_> {
        if self.dense {
            RowsRef::Dense {
                data: &self.values,
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
}

use super::test_scalings::RandomScalings;

fn check(m: usize, n: usize, density: f64, dense: bool, plan: Option<(usize, usize, f64)>) {
    let inst = Owned::random(m, n, density, dense, (m * 31 + n) as u64);
    let scalings = RandomScalings::new(m, n, inst.values.len(), 5);
    let sc = scalings.view(0.5);
    let y: Vec<f64> = (0..m)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let v: Vec<f64> = (0..n).map(|j| 0.5 + (j % 5) as f64 * 0.3).collect();
    let mut results = Vec::new();
    for (par, chunk_rows) in [
        (Par::Seq, 256),
        (Par::rayon(2), 256),
        (Par::Seq, 3),
        (Par::rayon(2), 3),
    ] {
        let settings = DsxSettings {
            kernel: SchurKernel::SparseScatter,
            par,
            threads: if par == Par::Seq { 1 } else { 2 },
            chunk_rows,
            static_regularization: 1e-9,
            normal_equations: super::NormalEquations::FeatureSpace,
            ..DsxSettings::default()
        };
        let mut sys = DsxSystem::try_new_with(inst.rows(), &y, &v, 2.0, settings).unwrap();
        if let Some((chunk, band, cost)) = plan {
            let (two, ip, ix) = (par != Par::Seq, &sys.indptr, &sys.indices);
            sys.scatter = ScatterPlan::new(n, dense, ip, ix, two, chunk, band, cost);
        }
        let p = &sys.scatter;
        assert_eq!(p.bands[0], 0);
        assert_eq!(*p.bands.last().unwrap(), n);
        assert!(p.bands.windows(2).all(|w| w[0] < w[1]), "{:?}", p.bands);
        assert_eq!(*p.chunks.last().unwrap(), m);
        assert_eq!(p.g1[1].is_empty(), par == Par::Seq);
        sys.form_schur(&sc).unwrap();
        let blocked = sys.s.clone();
        sys.form_schur_legacy(&sc);
        let legacy = sys.s.clone();
        assert!(
            blocked
                .iter()
                .zip(&legacy)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "m {m} n {n} dense {dense} plan {plan:?} par {par:?} chunk_rows {chunk_rows}: \
             blocked != unblocked"
        );
        results.push(blocked);
    }
    // Par::Seq and two threads: bit-identical
    assert_eq!(results[0], results[1]);
    assert_eq!(results[2], results[3]);
}

/// The two-half product and residual of the refinement (`apply_halves`) against the
/// public sequential `apply`: the same values to rounding, the residual's norm equal to
/// the norm of `r − H z`, and the same bits on one thread and two.
#[test]
fn split_apply_and_residual_match_apply() {
    for (m, n, density, dense) in [
        (40, 30, 0.3, false),
        (25, 17, 1.0, true),
        (3, 5, 0.6, false),
    ] {
        let inst = Owned::random(m, n, density, dense, 7 + m as u64);
        let scalings = RandomScalings::new(m, n, inst.values.len(), 11);
        let sc = scalings.view(0.5);
        let y: Vec<f64> = (0..m)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let v: Vec<f64> = (0..n).map(|j| 0.5 + (j % 3) as f64 * 0.25).collect();
        let mut outs = Vec::new();
        for threads in [1, 2] {
            let settings = DsxSettings {
                threads,
                ..DsxSettings::default()
            };
            let mut sys = DsxSystem::try_new_with(inst.rows(), &y, &v, 2.0, settings).unwrap();
            let len = sys.len();
            let z: Vec<f64> = (0..len)
                .map(|t| ((t * 37 % 11) as f64 - 5.0) / 3.0)
                .collect();
            let r: Vec<f64> = (0..len)
                .map(|t| ((t * 13 % 7) as f64 - 3.0) / 2.0)
                .collect();
            let mut reference = vec![0.0; len];
            sys.apply(&sc, &z, &mut reference);
            let mut hz = vec![0.0; len];
            assert_eq!(sys.apply_halves::<false>(&sc, &z, &[], &mut hz), 0.0);
            let scale = norm2(&reference);
            for (a, b) in hz.iter().zip(&reference) {
                assert!((a - b).abs() <= 1e-13 * scale, "{a} vs {b}");
            }
            let mut res = vec![0.0; len];
            let norm = sys.apply_halves::<true>(&sc, &z, &r, &mut res);
            let direct: Vec<f64> = r.iter().zip(&reference).map(|(a, b)| a - b).collect();
            for (a, b) in res.iter().zip(&direct) {
                assert!((a - b).abs() <= 1e-13 * scale, "{a} vs {b}");
            }
            assert!((norm - norm2(&direct)).abs() <= 1e-12 * norm2(&direct));
            outs.push((hz, res, norm));
        }
        assert_eq!(outs[0], outs[1], "one thread and two differ");
    }
    assert_eq!(norm2_fast(&[3.0, 4.0]), 5.0);
    assert_eq!(norm2_fast(&[3e200, 4e200]), norm2(&[3e200, 4e200]));
    assert_eq!(norm2_fast(&[0.0; 5]), 0.0);
}

#[test]
fn blocked_scatter_is_bit_identical_to_unblocked() {
    // tiny chunks and bands: many chunks, many bands on both sides of the split (pass cost
    // 0), or every band on the second thread (pass cost 10: the first thread only runs the
    // per-example pass)
    for cost in [0.0, SCATTER_PASS_COST] {
        check(40, 30, 0.3, false, Some((13, 12, cost)));
        check(40, 30, 0.3, false, Some((1, 1, cost)));
        check(25, 17, 1.0, true, Some((20, 9, cost)));
        check(9, 1, 0.5, false, Some((2, 1, cost)));
        check(9, 3, 0.9, false, Some((4, 2, cost)));
    }
    check(9, 2, 0.9, false, None);
    // the default plan (n = 784: several bands per side)
    check(120, 784, 0.19, false, None);
    check(60, 300, 0.5, false, None);
    check(6, 200, 1.0, true, None);
}

#[test]
fn scatter_plan_splits_work_and_area() {
    let inst = Owned::random(200, 784, 0.19, false, 1);
    let (chunk, band) = (1 << 15, 1 << 16);
    let (ip, ix) = (&inst.indptr, &inst.indices);
    let p = ScatterPlan::new(784, false, ip, ix, true, chunk, band, SCATTER_PASS_COST);
    // 307 720 lower-triangle entries in bands of at most `band` entries (+ one column)
    assert!(p.bands.len() > 307_720 / band, "{:?}", p.bands);
    assert!(p.split >= 1 && p.split < p.bands.len() - 1);
    for w in p.bands.windows(2) {
        let area: usize = (w[0]..w[1]).map(|j| 784 - j).sum();
        assert!(area <= band + 784, "band {w:?}: {area}");
    }
    // the two threads' update counts: (total − pass)/2 for the first, which also runs the
    // per-example pass
    let mut work = [0.0f64; 2];
    for i in 0..inst.m {
        let cols = &inst.indices[inst.indptr[i]..inst.indptr[i + 1]];
        for (a, &j) in cols.iter().enumerate() {
            work[usize::from(j >= p.bands[p.split])] += (cols.len() - a) as f64;
        }
    }
    let pass = SCATTER_PASS_COST * inst.values.len() as f64;
    let rel = (work[0] + pass - work[1]).abs() / (work[0] + work[1]);
    assert!(rel < 0.02, "{work:?} + {pass}: imbalance {rel}");
    for c in p.chunks.windows(2) {
        let nnz = inst.indptr[c[1]] - inst.indptr[c[0]];
        assert!(nnz <= 1 << 15 || c[1] == c[0] + 1);
    }
    let max_nnz = p
        .chunks
        .windows(2)
        .map(|c| inst.indptr[c[1]] - inst.indptr[c[0]]);
    assert_eq!(p.g1[0].len(), max_nnz.max().unwrap());
    assert_eq!(p.g1[1].len(), p.g1[0].len());
}
