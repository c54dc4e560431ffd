//! RoLR against clarabel on the corrected SOCP (ν free), the paper's structural facts, and its
//! bad inputs.

use bulwark_adversary::RolrOutliers;
use bulwark_contamination::{NormThreshold, RolrParams, trimmed_correlation};
use bulwark_core::{Contamination, Dataset, DenseMatrix, Fit, Sign, rng_from_seed};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// `m_in` inliers `x ~ N(0, I_p)`, `y = sign(⟨β*, x⟩ + 0.5 e)`, then `m_out` outliers with
/// `scale·U[−1, 1]^p` features and labels `sign(−⟨β*, x⟩)`.
fn instance(p: usize, m_in: usize, m_out: usize, scale: f64, seed: u64) -> (Dataset, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let normal = |rng: &mut StdRng| -> f64 {
        // Box–Muller
        let (u, v): (f64, f64) = (rng.random_range(1e-12..1.0), rng.random());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let mut beta: Vec<f64> = (0..p).map(|_| normal(&mut rng)).collect();
    let nb = beta.iter().map(|v| v * v).sum::<f64>().sqrt();
    beta.iter_mut().for_each(|v| *v /= nb);
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for _ in 0..m_in {
        let x: Vec<f64> = (0..p).map(|_| normal(&mut rng)).collect();
        let s: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum::<f64>() + 0.5 * normal(&mut rng);
        y.push(Sign::of_score(s));
        rows.push(x);
    }
    for _ in 0..m_out {
        let x: Vec<f64> = (0..p)
            .map(|_| scale * rng.random_range(-1.0..1.0))
            .collect();
        let s: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
        y.push(Sign::of_score(-s));
        rows.push(x);
    }
    let d = Dataset::binary("rolr", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap();
    (d, beta)
}

/// The corrected RoLR SOCP (Feng et al. (3) with `ν` free; with `nu_nonnegative` the printed,
/// degenerate one) by clarabel: `min k ν + Σ ξ`, `y_i⟨β, x_i⟩ + ν + ξ_i ≥ 0`, `ξ ≥ 0`,
/// `‖β‖ ≤ 1`. Returns the RoLR value (minus clarabel's objective) and `β`.
fn clarabel_rolr(d: &Dataset, k: usize, nu_nonnegative: bool) -> (f64, Vec<f64>) {
    let (m, p) = (d.len(), d.n_features());
    let y = d.binary_labels().unwrap();
    let nv = p + 1 + m;
    let (inu, ixi) = (p, p + 1);
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut rhs = Vec::new();
    let mut x = vec![0.0; p];
    for i in 0..m {
        d.row(i).to_dense_into(&mut x);
        let yi = y[i].as_f64();
        let mut r: Vec<(usize, f64)> = (0..p).map(|j| (j, -yi * x[j])).collect();
        r.extend([(inu, -1.0), (ixi + i, -1.0)]);
        rows.push(r);
        rhs.push(0.0);
    }
    for i in 0..m {
        rows.push(vec![(ixi + i, -1.0)]);
        rhs.push(0.0);
    }
    if nu_nonnegative {
        rows.push(vec![(inu, -1.0)]);
        rhs.push(0.0);
    }
    let n_nonneg = rows.len();
    rows.push(Vec::new());
    rhs.push(1.0);
    for j in 0..p {
        rows.push(vec![(j, -1.0)]);
        rhs.push(0.0);
    }
    let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nv];
    for (r, row) in rows.iter().enumerate() {
        for &(c, v) in row {
            cols[c].push((r, v));
        }
    }
    let (mut colptr, mut rowval, mut nzval) = (vec![0], Vec::new(), Vec::new());
    for col in cols {
        for (r, v) in col {
            rowval.push(r);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(rows.len(), nv, colptr, rowval, nzval);
    let mut q = vec![0.0; nv];
    q[inu] = k as f64;
    q[ixi..].iter_mut().for_each(|v| *v = 1.0);
    let pm = CscMatrix::new(nv, nv, vec![0; nv + 1], Vec::new(), Vec::new());
    let cones = [
        SupportedConeT::NonnegativeConeT(n_nonneg),
        SupportedConeT::SecondOrderConeT(p + 1),
    ];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-11)
        .tol_gap_rel(1e-11)
        .tol_feas(1e-11)
        .max_iter(400)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&pm, &q, &a, &rhs, &cones, settings).unwrap();
    solver.solve();
    assert!(
        matches!(
            solver.solution.status,
            SolverStatus::Solved | SolverStatus::AlmostSolved
        ),
        "{:?}",
        solver.solution.status
    );
    (-solver.solution.obj_val, solver.solution.x[..p].to_vec())
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// Random instances with and without trimming, p from 2 to 50: the objective is the sum of
/// the n smallest correlations at β̂, equals clarabel's optimum to 1e-6 relative, and β̂
/// agrees to 1e-5.
#[test]
fn rolr_matches_clarabel_on_random_instances() {
    let (mut checked, mut breakdowns) = (0, 0);
    for (seed, p) in [2usize, 3, 5, 10, 20, 35, 50].into_iter().enumerate() {
        for (m_in, m_out, n1) in [(150, 0, 0), (150, 30, 30), (160, 20, 45), (200, 10, 10)] {
            let (d, _) = instance(p, m_in, m_out, 2.0, 100 + seed as u64);
            let fit = RolrParams::new()
                .outliers(n1)
                .threshold(NormThreshold::None)
                .fit(&d)
                .unwrap();
            let r = &fit.report;
            assert!(r.converged, "p {p} n1 {n1}: {}", r.summary());
            let k = d.len() - n1;
            if r.details["breakdown"] == 1.0 {
                let (theirs, _) = clarabel_rolr(&d, k, false);
                assert!(theirs.abs() < 1e-7 * k as f64, "p {p} n1 {n1}: {theirs}");
                assert_eq!(r.objective, Some(0.0));
                breakdowns += 1;
                continue;
            }
            let obj = r.objective.unwrap();
            let beta = fit.model.weights();
            assert_eq!(obj, trimmed_correlation(&d.view(), beta, k).unwrap());
            assert!((beta.iter().map(|v| v * v).sum::<f64>().sqrt() - 1.0).abs() < 1e-12);
            let (theirs, beta_c) = clarabel_rolr(&d, k, false);
            assert!(
                (obj - theirs).abs() <= 1e-6 * theirs.abs(),
                "p {p} n1 {n1}: ours {obj} clarabel {theirs}"
            );
            assert!(
                dist(beta, &beta_c) <= 1e-5,
                "p {p} n1 {n1}: |beta - beta_clarabel| = {:e}",
                dist(beta, &beta_c)
            );
            assert_eq!(
                r.solver,
                if n1 == 0 {
                    "closed-form"
                } else {
                    "minnorm-fista"
                }
            );
            checked += 1;
        }
    }
    assert_eq!(checked + breakdowns, 28);
    assert!(breakdowns <= 2, "{breakdowns} breakdowns");
}

/// The printed LP (3) with ν ≥ 0 is degenerate: clarabel returns β = 0 on it, while the
/// corrected problem has a positive value.
#[test]
fn printed_lp_is_degenerate() {
    let (d, _) = instance(5, 100, 20, 2.0, 7);
    let (v, beta) = clarabel_rolr(&d, 100, true);
    assert!(v.abs() < 1e-7, "{v}");
    assert!(beta.iter().all(|b| b.abs() < 1e-6), "{beta:?}");
    let (v, _) = clarabel_rolr(&d, 100, false);
    assert!(v > 1.0, "{v}");
}

/// With n₁ = 0 the estimate is Σ yx/‖Σ yx‖; the fit does not depend on the order of the
/// samples or on a global rescaling of x (up to the scale of the objective).
#[test]
fn closed_form_and_invariances() {
    let (d, _) = instance(6, 80, 20, 3.0, 11);
    let fit = RolrParams::new()
        .threshold(NormThreshold::None)
        .fit(&d)
        .unwrap();
    let y = d.binary_labels().unwrap();
    let mut s = [0.0; 6];
    let mut x = vec![0.0; 6];
    for i in 0..d.len() {
        d.row(i).to_dense_into(&mut x);
        for j in 0..6 {
            s[j] += y[i].as_f64() * x[j];
        }
    }
    let ns = s.iter().map(|v| v * v).sum::<f64>().sqrt();
    for j in 0..6 {
        assert!((fit.model.weights()[j] - s[j] / ns).abs() < 1e-14);
    }
    // order and scale
    let params = RolrParams::new()
        .outliers(25)
        .threshold(NormThreshold::None);
    let base = params.fit(&d).unwrap();
    let mut order: Vec<usize> = (0..d.len()).collect();
    order.reverse();
    order.swap(3, 40);
    let shuffled = params.fit(&d.select(&order)).unwrap();
    assert!(dist(base.model.weights(), shuffled.model.weights()) < 1e-7);
    let scaled = {
        let mut dense = d.features().to_dense();
        dense.as_mut_slice().iter_mut().for_each(|v| *v *= 37.5);
        d.with_features(dense.into()).unwrap()
    };
    let big = params.fit(&scaled).unwrap();
    assert!(dist(base.model.weights(), big.model.weights()) < 1e-7);
    let (o1, o2) = (
        base.report.objective.unwrap(),
        big.report.objective.unwrap(),
    );
    assert!((o2 - 37.5 * o1).abs() < 1e-8 * o2.abs());
}

/// The paper's outliers without preprocessing dominate: breakdown is reported with a zero
/// model; the paper's threshold (σ_x = 1) removes them and RoLR recovers β*.
#[test]
fn breakdown_is_reported_and_the_threshold_prevents_it() {
    let p = 20;
    let (clean, beta) = instance(p, 1000, 0, 0.0, 5);
    let outliers = RolrOutliers::from_ratio(0.3, 1000, beta.clone()).unwrap();
    let (d, idx) = outliers.contaminate(&clean, &mut rng_from_seed(9)).unwrap();
    assert_eq!(idx.len(), 300);
    let none = RolrParams::new()
        .outliers(300)
        .threshold(NormThreshold::None)
        .fit(&d)
        .unwrap();
    assert_eq!(
        none.report.details["breakdown"],
        1.0,
        "{}",
        none.report.summary()
    );
    assert!(none.report.converged);
    assert!(none.model.weights().iter().all(|&v| v == 0.0));
    assert_eq!(none.report.objective, Some(0.0));
    let paper = RolrParams::new()
        .outliers(300)
        .threshold(NormThreshold::Paper { sigma_x: Some(1.0) })
        .fit(&d)
        .unwrap();
    assert_eq!(paper.report.details["breakdown"], 0.0);
    assert_eq!(paper.report.details["removed"], 300.0);
    assert!(dist(paper.model.weights(), &beta) < 0.4);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let (d, _) = instance(3, 20, 0, 0.0, 1);
    let e = RolrParams::new().outliers(20).fit(&d).unwrap_err();
    assert!(e.to_string().contains("outliers"), "{e}");
    let e = RolrParams::new()
        .threshold(NormThreshold::Fixed(1e-6))
        .fit(&d)
        .unwrap_err();
    assert!(e.to_string().contains("removes all 20 samples"), "{e}");
    let e = RolrParams::new().tolerance(0.0).fit(&d).unwrap_err();
    assert!(e.to_string().contains("tolerance"), "{e}");
    let multi = Dataset::multiclass(
        "three",
        DenseMatrix::from_rows(&[vec![1.0], vec![2.0], vec![3.0]]).unwrap(),
        vec![0, 1, 2],
        vec!["a".into(), "b".into(), "c".into()],
    )
    .unwrap();
    assert!(RolrParams::new().fit(&multi).is_err());
}
