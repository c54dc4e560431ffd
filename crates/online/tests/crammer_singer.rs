//! The Crammer–Singer multiclass SVM against clarabel's QP solve of its primal, its certified
//! gap, weights as duplicated rows, and typed errors.

mod common;

use bulwark_core::{Classifier, Dataset, DenseMatrix, Fit};
use bulwark_online::CrammerSingerParams;
use common::clarabel_crammer_singer;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn classes(m: usize, n: usize, nc: usize, mu: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for i in 0..m {
        let k = i % nc;
        let mut r: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        r[k % n] += mu;
        rows.push(r);
        y.push(k);
    }
    let names = (0..nc).map(|k| format!("c{k}")).collect();
    Dataset::multiclass("mc", DenseMatrix::from_rows(&rows).unwrap(), y, names).unwrap()
}

#[test]
fn matches_clarabel_on_small_problems() {
    for (seed, (m, n, nc, mu, c)) in [
        (40, 4, 3, 0.8, 1.0),
        (60, 5, 4, 0.5, 10.0),
        (30, 3, 3, 1.5, 0.1),
        (50, 6, 5, 0.3, 100.0),
    ]
    .into_iter()
    .enumerate()
    {
        let data = classes(m, n, nc, mu, 40 + seed as u64);
        // dual coordinate descent reaches high accuracy slowly at large C (C = 10 here: a
        // certified 5e-6 after 10 000 passes, 3.7e-6 after 100 000), so the check is at 1e-5
        let f = CrammerSingerParams::new()
            .c(c)
            .tolerance(1e-5)
            .max_passes(100_000)
            .fit(&data)
            .unwrap();
        assert!(f.report.converged, "{:?}", f.report);
        assert_eq!(f.report.solver, "crammer-singer-dual-cd");
        let ours = f.report.objective.unwrap();
        let qp = clarabel_crammer_singer(&data, c);
        // the primal is above the optimum by at most the certified gap
        assert!(
            ours >= qp * (1.0 - 1e-9) && ours - qp <= 1e-5 * ours,
            "case {seed}: ours {ours} vs clarabel {qp}"
        );
        // the certified lower bound is below the QP optimum
        assert!(f.report.details["dual_objective"] <= qp * (1.0 + 1e-8));
        // better than chance on its training data
        assert!(f.model.error_rate(&data).unwrap() < 1.0 - 1.0 / nc as f64);
    }
}

#[test]
fn weights_are_duplicated_rows_and_bad_parameters_are_typed_errors() {
    let data = classes(30, 3, 3, 1.0, 5);
    let x = data.features().to_dense();
    let mut rows: Vec<Vec<f64>> = (0..30).map(|i| x.row(i).to_vec()).collect();
    let mut y: Vec<usize> = (0..30).map(|i| data.targets().class_index(i)).collect();
    rows.push(x.row(4).to_vec());
    y.push(y[4]);
    let names = data.class_names().to_vec();
    let dup = Dataset::multiclass("d", DenseMatrix::from_rows(&rows).unwrap(), y, names).unwrap();
    let mut w = vec![1.0; 30];
    w[4] = 2.0;
    let weighted = data.clone().with_weights(w).unwrap();
    let p = CrammerSingerParams::new()
        .c(2.0)
        .tolerance(1e-10)
        .max_passes(100_000);
    let (a, b) = (p.fit(&dup).unwrap(), p.fit(&weighted).unwrap());
    let (pa, pb) = (a.report.objective.unwrap(), b.report.objective.unwrap());
    assert!((pa - pb).abs() <= 1e-8 * pa, "{pa} vs {pb}");
    for (p, name) in [
        (CrammerSingerParams::new().c(0.0), "C"),
        (CrammerSingerParams::new().tolerance(0.0), "tolerance"),
        (CrammerSingerParams::new().max_passes(0), "max_passes"),
    ] {
        let e = p.fit(&data).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
}
