//! Splits, scaling and the DSX mutual-information values.

use bulwark_core::{Dataset, DenseMatrix, Sign};
use bulwark_data::{
    BinaryTask, Scaler, ScalingKind, all_pairs, binary_task, k_fold, load, max_threshold_mi,
    mutual_information_values, train_val_test,
};
use proptest::prelude::*;

/// Independent brute force: for every threshold c in the midpoints of the sorted distinct
/// values, count the 2×2 table from scratch and compute I([x > c]; y).
fn brute_force_mi(x: &[f64], y: &[usize], k: usize) -> f64 {
    let mut vals: Vec<f64> = x.to_vec();
    vals.sort_by(f64::total_cmp);
    vals.dedup();
    let m = x.len() as f64;
    let mut best = 0.0f64;
    for w in vals.windows(2) {
        let c = 0.5 * (w[0] + w[1]);
        let mut table = vec![[0.0f64; 2]; k];
        for (xi, &yi) in x.iter().zip(y) {
            table[yi][usize::from(*xi > c)] += 1.0;
        }
        let mut mi = 0.0;
        for t in 0..2 {
            let pt: f64 = table.iter().map(|r| r[t]).sum::<f64>() / m;
            for row in &table {
                let py = (row[0] + row[1]) / m;
                let pty = row[t] / m;
                if pty > 0.0 {
                    mi += pty * (pty / (pt * py)).ln();
                }
            }
        }
        best = best.max(mi);
    }
    best
}

#[test]
fn mi_values_on_wdbc_match_brute_force() {
    let (wdbc, _) = load("wdbc", None).unwrap();
    let u = max_threshold_mi(&wdbc).unwrap();
    let dense = wdbc.features().to_dense();
    let y: Vec<usize> = (0..wdbc.len())
        .map(|i| wdbc.targets().class_index(i))
        .collect();
    for j in 0..wdbc.n_features() {
        let col: Vec<f64> = (0..wdbc.len()).map(|i| dense.get(i, j)).collect();
        let bf = brute_force_mi(&col, &y, 2);
        assert!(
            (u[j] - bf).abs() < 1e-12,
            "feature {j}: sweep {} vs brute force {bf}",
            u[j]
        );
    }
    let v = mutual_information_values(&wdbc).unwrap();
    assert!((v.iter().sum::<f64>() - 30.0).abs() < 1e-9);
    assert!(v.iter().all(|&x| x > 0.0));
    // the "worst" features of wdbc are the most informative ones; the "se" of fractal dimension is weak
    let names = wdbc.feature_names().to_vec();
    let best = (0..30).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
    assert!(
        names[best].contains("worst") || names[best].contains("mean"),
        "{}",
        names[best]
    );
}

proptest! {
    #[test]
    fn mi_sweep_equals_brute_force(
        rows in prop::collection::vec((prop_oneof![Just(0.0), Just(1.0), -3.0f64..3.0], 0usize..3), 2..40)
    ) {
        let x: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let y: Vec<usize> = rows.iter().map(|r| r.1).collect();
        let m = DenseMatrix::try_new(x.len(), 1, x.clone()).unwrap();
        let d = Dataset::multiclass("p", m, y.clone(), vec!["a".into(), "b".into(), "c".into()]).unwrap();
        let u = max_threshold_mi(&d).unwrap();
        prop_assert!((u[0] - brute_force_mi(&x, &y, 3)).abs() < 1e-12);
    }
}

#[test]
fn uninformative_features_give_uniform_values() {
    let m = DenseMatrix::try_new(4, 2, vec![1.0; 8]).unwrap();
    let d = Dataset::binary("c", m, vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg]).unwrap();
    assert_eq!(mutual_information_values(&d).unwrap(), vec![1.0, 1.0]);
}

#[test]
fn splits_are_seeded_disjoint_and_stratified() {
    let (wdbc, _) = load("wdbc", None).unwrap();
    let a = train_val_test(&wdbc, 0.2, 0.3, true, 42).unwrap();
    let b = train_val_test(&wdbc, 0.2, 0.3, true, 42).unwrap();
    let c = train_val_test(&wdbc, 0.2, 0.3, true, 43).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut all: Vec<usize> = a
        .train
        .iter()
        .chain(&a.validation)
        .chain(&a.test)
        .copied()
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..569).collect::<Vec<_>>());
    let test = wdbc.select(&a.test);
    let frac = test.class_counts()["malignant"] as f64 / test.len() as f64;
    assert!((frac - 212.0 / 569.0).abs() < 0.01, "{frac}");
    assert!(train_val_test(&wdbc, 0.5, 0.5, false, 1).is_err());
    assert!(train_val_test(&wdbc, f64::NAN, 0.5, false, 1).is_err());

    let folds = k_fold(&wdbc, 5, true, 3).unwrap();
    let mut seen = vec![0; 569];
    for f in &folds {
        f.test.iter().for_each(|&i| seen[i] += 1);
        assert_eq!(f.train.len() + f.test.len(), 569);
    }
    assert!(seen.iter().all(|&s| s == 1));
    assert!(k_fold(&wdbc, 1, false, 0).is_err());
}

#[test]
fn scaling_is_fitted_on_training_data_only() {
    let (wdbc, _) = load("wdbc", None).unwrap();
    let split = train_val_test(&wdbc, 0.0, 0.5, false, 5).unwrap();
    let (train, test) = (wdbc.select(&split.train), wdbc.select(&split.test));
    let s = Scaler::fit(&train, ScalingKind::MinMax).unwrap();
    let tr = s.transform(&train).unwrap().features().to_dense();
    assert!(
        tr.as_slice()
            .iter()
            .all(|v| (-1.0 - 1e-12..=1.0 + 1e-12).contains(v))
    );
    for j in 0..30 {
        let col: Vec<f64> = (0..tr.rows()).map(|i| tr.get(i, j)).collect();
        let (lo, hi) = col
            .iter()
            .fold((f64::MAX, f64::MIN), |a, &v| (a.0.min(v), a.1.max(v)));
        assert!((lo + 1.0).abs() < 1e-12 && (hi - 1.0).abs() < 1e-12);
    }
    // test data go through the training map: not re-fitted, so their range may exceed [-1, 1]
    let te = s.transform(&test).unwrap();
    let refit = Scaler::fit(&test, ScalingKind::MinMax).unwrap();
    assert_ne!(refit, s);
    assert_eq!(te.len(), test.len());
    let st = Scaler::fit(&train, ScalingKind::Standard)
        .unwrap()
        .transform(&train)
        .unwrap()
        .features()
        .to_dense();
    let mean0: f64 = (0..st.rows()).map(|i| st.get(i, 0)).sum::<f64>() / st.rows() as f64;
    assert!(mean0.abs() < 1e-12);
    assert!(
        s.transform(
            &wdbc
                .select(&[0])
                .with_features(wdbc.select(&[0]).features().clone())
                .unwrap()
        )
        .is_ok()
    );
}

#[test]
fn pairs_and_positive_class() {
    let m = DenseMatrix::try_new(6, 1, (0..6).map(f64::from).collect()).unwrap();
    let d = Dataset::multiclass(
        "digits",
        m,
        vec![0, 1, 2, 0, 1, 2],
        vec!["0".into(), "1".into(), "2".into()],
    )
    .unwrap();
    let pairs = all_pairs(&d).unwrap();
    assert_eq!(pairs.len(), 3);
    let p = binary_task(&d, &BinaryTask::Pair("2".into(), "0".into())).unwrap();
    assert_eq!(p.len(), 4);
    assert_eq!(p.binary_labels().unwrap()[0], Sign::Neg); // example 0 is class "0" → −1
    assert_eq!(p.class_names(), ["0", "2"]);
    let r = binary_task(&d, &BinaryTask::Positive("1".into())).unwrap();
    assert_eq!(
        r.binary_labels()
            .unwrap()
            .iter()
            .filter(|s| **s == Sign::Pos)
            .count(),
        2
    );
    assert!(binary_task(&d, &BinaryTask::Natural).is_err());
    assert!(binary_task(&d, &BinaryTask::Pair("1".into(), "1".into())).is_err());
}
