//! Test-time attacks: determinism, formats, corruption statistics, evaluation reports, errors.

use bulwark_adversary::{
    Attack, AttackBudget, AttackKind, CloudDirection, CorruptionStats, Distribution, GaussianCloud,
    RandomDelete, UniformNoise, certify, error_vs_budget, evaluate, evaluate_attack,
    halfspace_data,
};
use bulwark_core::{
    CsrMatrix, Dataset, DenseMatrix, Error, Features, LinearModel, Sign, TestTimeAttack,
    rng_from_seed,
};

fn toy(m: usize, n: usize, seed: u64) -> (LinearModel, Dataset) {
    let mut rng = rng_from_seed(seed);
    let u: Vec<f64> = (0..n).map(|j| 1.0 + (j % 3) as f64).collect();
    let mut data = halfspace_data(Distribution::Gaussian, &u, m, &mut rng).unwrap();
    // sparsify: zero every third entry so that dense and CSR differ in storage
    data.features_mut()
        .map_in_place({
            let mut k = 0usize;
            move |_, v| {
                k += 1;
                if k.is_multiple_of(3) { 0.0 } else { v }
            }
        })
        .unwrap();
    let model = LinearModel::try_new(u.iter().map(|a| a * 0.5).collect(), 0.1).unwrap();
    (model, data)
}

fn as_csr(data: &Dataset) -> Dataset {
    data.with_features(Features::Sparse(data.features().to_csr()))
        .unwrap()
}

fn bits(d: &Dataset) -> Vec<u64> {
    d.features()
        .to_dense()
        .as_slice()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn every_attack_is_deterministic_per_seed() {
    let (model, data) = toy(40, 8, 1);
    let stats = CorruptionStats::fit(&toy(100, 8, 2).1).unwrap();
    for kind in AttackKind::ALL {
        let attack = Attack::new(kind).with_corruption(stats.clone());
        let a = attack
            .run(&model, &data, 3.0, &mut rng_from_seed(5))
            .unwrap();
        let b = attack
            .run(&model, &data, 3.0, &mut rng_from_seed(5))
            .unwrap();
        assert_eq!(bits(&a.data), bits(&b.data), "{kind}");
        let r1 = evaluate(&model, &data, &attack, 3.0, 11).unwrap();
        let r2 = evaluate(&model, &data, &attack, 3.0, 11).unwrap();
        assert_eq!(r1, r2);
        if matches!(kind, AttackKind::GreedyCorrupt | AttackKind::RandomDelete) {
            let c = attack
                .run(&model, &data, 3.0, &mut rng_from_seed(6))
                .unwrap();
            assert_ne!(bits(&a.data), bits(&c.data), "{kind}: the seed matters");
        }
    }
    let noise: [&dyn TestTimeAttack<LinearModel>; 3] = [
        &UniformNoise { a: 0.5 },
        &GaussianCloud {
            sigma: 0.5,
            direction: CloudDirection::Isotropic,
        },
        &GaussianCloud {
            sigma: 0.5,
            direction: CloudDirection::AlongWeights,
        },
    ];
    for a in noise {
        let x = a.attack(&model, &data, &mut rng_from_seed(3)).unwrap();
        let y = a.attack(&model, &data, &mut rng_from_seed(3)).unwrap();
        let z = a.attack(&model, &data, &mut rng_from_seed(4)).unwrap();
        assert_eq!(bits(&x), bits(&y));
        assert_ne!(bits(&x), bits(&z));
        let r = evaluate_attack(&model, &data, a, 3).unwrap();
        assert_eq!(r, evaluate_attack(&model, &data, a, 3).unwrap());
    }
}

#[test]
fn dense_and_sparse_give_the_same_attack() {
    let (model, dense) = toy(30, 10, 7);
    let sparse = as_csr(&dense);
    let stats = CorruptionStats::fit(&dense).unwrap();
    assert_eq!(stats, CorruptionStats::fit(&sparse).unwrap());
    for kind in AttackKind::ALL {
        let attack = Attack::new(kind).with_corruption(stats.clone());
        let a = attack
            .run(&model, &dense, 4.0, &mut rng_from_seed(9))
            .unwrap();
        let b = attack
            .run(&model, &sparse, 4.0, &mut rng_from_seed(9))
            .unwrap();
        if kind == AttackKind::UniformNoise {
            // noise fills the zeros: the result is dense whatever came in
            assert!(matches!(b.data.features(), Features::Dense(_)), "{kind}");
        } else {
            assert!(
                matches!(b.data.features(), Features::Sparse(_)),
                "{kind} keeps CSR"
            );
        }
        assert_eq!(bits(&a.data), bits(&b.data), "{kind}");
        assert_eq!(a.touched, b.touched);
    }
}

#[test]
fn greedy_delete_follows_dsx_order() {
    // y = +1, w = (1, -1, 2, 1, 0.5), x = (1, 1, 1, 0, 4): contributions (1, -1, 2, 0, 2)
    // v = (1, 1, 3, 1, 0): ratios (1, -, 0.67, -, +inf); N = 1 → delete feature 5 (free) and 1
    let x = DenseMatrix::from_rows(&[vec![1.0, 1.0, 1.0, 0.0, 4.0]]).unwrap();
    let data = Dataset::binary("t", x, vec![Sign::Pos]).unwrap();
    let model = LinearModel::try_new(vec![1.0, -1.0, 2.0, 1.0, 0.5], 0.0).unwrap();
    let attack = Attack::new(AttackKind::GreedyDelete)
        .with_values(vec![1.0, 1.0, 3.0, 1.0, 0.0])
        .unwrap();
    let out = attack
        .run(&model, &data, 1.0, &mut rng_from_seed(0))
        .unwrap();
    assert_eq!(
        out.data.features().to_dense().row(0),
        &[0.0, 1.0, 1.0, 0.0, 0.0]
    );
    // N = 3.5: feature 5, then 1 (cost 1, left 2.5), feature 3 (cost 3) skipped
    let out = attack
        .run(&model, &data, 3.5, &mut rng_from_seed(0))
        .unwrap();
    assert_eq!(
        out.data.features().to_dense().row(0),
        &[0.0, 1.0, 1.0, 0.0, 0.0]
    );
    // exact at N = 3.5: feature 5 + feature 3 (damage 4 > 3)
    let exact = Attack {
        kind: AttackKind::ExactDelete,
        ..attack.clone()
    };
    let out = exact
        .run(&model, &data, 3.5, &mut rng_from_seed(0))
        .unwrap();
    assert_eq!(
        out.data.features().to_dense().row(0),
        &[1.0, 1.0, 0.0, 0.0, 0.0]
    );
    // N ≥ V([n]) is allowed: every positive contribution goes
    let out = attack
        .run(&model, &data, 100.0, &mut rng_from_seed(0))
        .unwrap();
    assert_eq!(
        out.data.features().to_dense().row(0),
        &[0.0, 1.0, 0.0, 0.0, 0.0]
    );
}

#[test]
fn random_delete_removes_n_nonzeros() {
    let (model, data) = toy(50, 12, 3);
    let out = RandomDelete { count: 4 }
        .run(&model, &data, &mut rng_from_seed(1))
        .unwrap();
    for i in 0..data.len() {
        let before: Vec<usize> = data.row(i).nonzeros().map(|(j, _)| j).collect();
        let after: Vec<(usize, f64)> = out.data.row(i).nonzeros().collect();
        assert_eq!(after.len(), before.len() - before.len().min(4));
        for (j, v) in after {
            assert_eq!(v.to_bits(), data.features().to_dense().get(i, j).to_bits());
        }
    }
    // a huge count deletes everything
    let all = RandomDelete { count: 1000 }
        .run(&model, &data, &mut rng_from_seed(1))
        .unwrap();
    assert_eq!(all.data.features().nnz(), 0);
    // every non-zero is deleted with probability about N / nnz
    let (model, data) = toy(1, 12, 3);
    let nz: Vec<usize> = data.row(0).nonzeros().map(|(j, _)| j).collect();
    let mut hits = [0usize; 12];
    let mut rng = rng_from_seed(2);
    for _ in 0..4000 {
        let o = RandomDelete { count: 2 }
            .run(&model, &data, &mut rng)
            .unwrap();
        for &j in &nz {
            if o.data.features().to_dense().get(0, j) == 0.0 {
                hits[j] += 1;
            }
        }
    }
    let p = 2.0 / nz.len() as f64;
    for &j in &nz {
        let f = hits[j] as f64 / 4000.0;
        assert!((f - p).abs() < 0.04, "feature {j}: {f} vs {p}");
    }
}

#[test]
fn corruption_statistics_come_from_training_data() {
    // train: feature 0 ~ mean 5, feature 1 ~ mean -3; test: very different values
    let train = Dataset::binary(
        "train",
        DenseMatrix::from_rows(&[
            vec![4.0, -1.0],
            vec![6.0, -5.0],
            vec![5.0, -3.0],
            vec![5.0, -3.0],
        ])
        .unwrap(),
        vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg],
    )
    .unwrap();
    let stats = CorruptionStats::fit(&train).unwrap();
    assert_eq!(stats.mean, vec![5.0, -3.0]);
    assert_eq!(stats.variance, vec![0.5, 2.0]);
    let rows: Vec<Vec<f64>> = (0..2000).map(|_| vec![100.0, 100.0]).collect();
    let test = Dataset::binary(
        "test",
        DenseMatrix::from_rows(&rows).unwrap(),
        vec![Sign::Pos; 2000],
    )
    .unwrap();
    let model = LinearModel::try_new(vec![1.0, 1.0], 0.0).unwrap();
    let attack = Attack::new(AttackKind::GreedyCorrupt).with_corruption(stats);
    let out = attack
        .run(&model, &test, 1.0, &mut rng_from_seed(4))
        .unwrap();
    // the greedy corrupts feature 0 (tie on ratio, lower index first)
    let x = out.data.features().to_dense();
    let col: Vec<f64> = (0..2000).map(|i| x.get(i, 0)).collect();
    let mean = col.iter().sum::<f64>() / 2000.0;
    let var = col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2000.0;
    assert!((mean - 5.0).abs() < 0.1, "{mean}");
    assert!((var - 0.5).abs() < 0.1, "{var}");
    assert!((0..2000).all(|i| x.get(i, 1) == 100.0));
}

#[test]
fn reports_serialise_and_curves_match_single_evaluations() {
    let (model, data) = toy(60, 10, 5);
    let attack = Attack::new(AttackKind::ExactDelete);
    let budgets = [0.0, 1.0, 2.0, 4.0, 8.0];
    let curve = error_vs_budget(&model, &data, &attack, &budgets, 3).unwrap();
    for (p, &n) in curve.iter().zip(&budgets) {
        let r = evaluate(&model, &data, &attack, n, 3).unwrap();
        assert_eq!(p.error, r.error);
        assert_eq!(r.incomplete, 0);
    }
    assert!(
        curve.windows(2).all(|w| w[0].error <= w[1].error),
        "{curve:?}"
    );
    let r0 = evaluate(&model, &data, &Attack::new(AttackKind::None), 0.0, 0).unwrap();
    assert_eq!(r0.error, r0.clean_error);
    assert_eq!(curve[0].error, r0.error);
    let json = serde_json::to_value(evaluate(&model, &data, &attack, 2.0, 1).unwrap()).unwrap();
    assert!(json["error"].is_f64());
    assert_eq!(json["attack"], "exact-delete");
    let cert = certify(&model, &data, &AttackBudget::uniform(10, 2.0).unwrap()).unwrap();
    let json = serde_json::to_value(&cert).unwrap();
    for key in [
        "lower",
        "upper",
        "exact",
        "greedy_lower",
        "relaxation_upper",
        "per_example",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
    // uniform values: greedy = exact, and the certificate matches the attacks
    let g = evaluate(
        &model,
        &data,
        &Attack::new(AttackKind::GreedyDelete),
        2.0,
        0,
    )
    .unwrap();
    assert_eq!(cert.exact, Some(g.error));
    assert_eq!(cert.lower, cert.greedy_lower);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let (model, data) = toy(10, 4, 1);
    let greedy = Attack::new(AttackKind::GreedyDelete);
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = evaluate(&model, &data, &greedy, bad, 0).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameter { name, .. } if name == "budget"),
            "{e}"
        );
        assert!(AttackBudget::uniform(4, bad).is_err());
    }
    for bad in [-0.5, f64::NAN, f64::NEG_INFINITY] {
        assert!(matches!(
            greedy.clone().with_values(vec![1.0, bad, 1.0, 1.0]),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(AttackBudget::try_new(vec![1.0, 1.0, bad, 1.0], 1.0).is_err());
    }
    // feature counts: model vs data, values vs model
    let wide = LinearModel::try_new(vec![1.0; 5], 0.0).unwrap();
    for kind in AttackKind::ALL {
        let e = evaluate(&wide, &data, &Attack::new(kind), 1.0, 0).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{kind}: {e}");
    }
    let short = greedy.clone().with_values(vec![1.0; 3]).unwrap();
    assert!(matches!(
        evaluate(&model, &data, &short, 1.0, 0),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        certify(&wide, &data, &AttackBudget::uniform(4, 1.0).unwrap()),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        certify(&model, &data, &AttackBudget::uniform(5, 1.0).unwrap()),
        Err(Error::ShapeMismatch { .. })
    ));
    // attack-specific requirements
    assert!(matches!(
        evaluate(
            &model,
            &data,
            &Attack::new(AttackKind::GreedyCorrupt),
            1.0,
            0
        ),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        evaluate(
            &model,
            &data,
            &Attack::new(AttackKind::RandomDelete),
            1.5,
            0
        ),
        Err(Error::InvalidParameter { .. })
    ));
    let other = CorruptionStats::fit(&toy(5, 3, 1).1).unwrap();
    assert!(matches!(
        evaluate(
            &model,
            &data,
            &Attack::new(AttackKind::GreedyCorrupt).with_corruption(other),
            1.0,
            0
        ),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        Attack::parse("gready"),
        Err(Error::InvalidParameter { .. })
    ));
    assert_eq!(
        Attack::parse("random-delete").unwrap().kind,
        AttackKind::RandomDelete
    );
    // noise parameters
    assert!(
        UniformNoise { a: -1.0 }
            .apply(&data, &mut rng_from_seed(0))
            .is_err()
    );
    // multiclass data and empty data
    let multi = Dataset::multiclass(
        "m",
        DenseMatrix::from_rows(&[vec![1.0; 4], vec![2.0; 4]]).unwrap(),
        vec![0, 2],
        vec!["a".into(), "b".into(), "c".into()],
    )
    .unwrap();
    assert!(matches!(
        evaluate(&model, &multi, &greedy, 1.0, 0),
        Err(Error::Input { .. })
    ));
    let empty = data.select(&[]);
    assert!(evaluate(&model, &empty, &greedy, 1.0, 0).is_err());
    // an empty CSR matrix row is fine
    let csr = CsrMatrix::try_new(1, 4, vec![0, 0], vec![], vec![]).unwrap();
    let d = Dataset::binary("e", csr, vec![Sign::Pos]).unwrap();
    assert_eq!(evaluate(&model, &d, &greedy, 1.0, 0).unwrap().error, 0.0);
}

#[test]
fn gaussian_cloud_along_weights_moves_only_along_w() {
    let (model, data) = toy(20, 5, 8);
    let cloud = GaussianCloud {
        sigma: 1.0,
        direction: CloudDirection::AlongWeights,
    };
    let out = cloud
        .apply(model.weights(), &data, &mut rng_from_seed(1))
        .unwrap();
    let norm = model.weights().iter().map(|a| a * a).sum::<f64>().sqrt();
    for i in 0..data.len() {
        let mut d = [0.0; 5];
        let (a, b) = (out.features().to_dense(), data.features().to_dense());
        for j in 0..5 {
            d[j] = a.get(i, j) - b.get(i, j);
        }
        let e = d
            .iter()
            .zip(model.weights())
            .map(|(x, w)| x * w)
            .sum::<f64>()
            / norm;
        for j in 0..5 {
            assert!((d[j] - e * model.weights()[j] / norm).abs() < 1e-12);
        }
    }
    let u = UniformNoise { a: 0.25 }
        .apply(&data, &mut rng_from_seed(1))
        .unwrap();
    let (a, b) = (u.features().to_dense(), data.features().to_dense());
    assert!(
        a.as_slice()
            .iter()
            .zip(b.as_slice())
            .all(|(x, y)| (x - y).abs() <= 0.25)
    );
}

#[test]
fn noise_curves_start_at_the_clean_error_and_are_seeded() {
    use bulwark_adversary::{NoiseKind, error_vs_noise, error_vs_noise_linear};
    let (model, data) = toy(200, 6, 12);
    let clean = evaluate(&model, &data, &Attack::new(AttackKind::None), 0.0, 0)
        .unwrap()
        .error;
    for kind in [
        NoiseKind::Uniform,
        NoiseKind::Gaussian(CloudDirection::Isotropic),
        NoiseKind::Gaussian(CloudDirection::AlongWeights),
    ] {
        let mags = [0.0, 0.5, 1000.0];
        let c = error_vs_noise_linear(&model, &data, kind, &mags, 5, 9).unwrap();
        assert_eq!(
            c,
            error_vs_noise_linear(&model, &data, kind, &mags, 5, 9).unwrap()
        );
        if kind == NoiseKind::Gaussian(CloudDirection::AlongWeights) {
            // any classifier: the cloud along the weights needs weights
            assert!(error_vs_noise(&model, &data, kind, &mags, 5, 9).is_err());
            continue;
        }
        assert_eq!(c, error_vs_noise(&model, &data, kind, &mags, 5, 9).unwrap());
        assert_eq!((c[0].error, c[0].std), (clean, 0.0), "{kind:?}");
        assert!(c[1].std > 0.0, "{kind:?}");
        assert!((c[2].error - 0.5).abs() < 0.15, "{kind:?}: {c:?}");
        assert!(error_vs_noise(&model, &data, kind, &mags, 0, 9).is_err());
        assert!(error_vs_noise(&model, &data, kind, &[-1.0], 1, 9).is_err());
    }
}

#[test]
fn noise_curves_and_noise_attacks_take_any_classifier() {
    use bulwark_adversary::{NoiseKind, error_vs_noise};
    use bulwark_core::{
        Classifier, DenseMatrix, Kernel, KernelModel, MulticlassLinearModel, TestTimeAttack,
    };
    let (model, data) = toy(120, 4, 3);
    // the linear model as a kernel model (linear kernel, one support vector = w): the same
    // curve, computed without weights
    let sv = DenseMatrix::from_rows(&[model.weights().to_vec()]).unwrap();
    let kernel = KernelModel::try_new(Kernel::Linear, sv, vec![1.0], model.bias()).unwrap();
    let mags = [0.0, 0.3, 2.0];
    for kind in [
        NoiseKind::Uniform,
        NoiseKind::Gaussian(CloudDirection::Isotropic),
    ] {
        let a = error_vs_noise(&model, &data, kind, &mags, 3, 4).unwrap();
        let b = error_vs_noise(&kernel, &data, kind, &mags, 3, 4).unwrap();
        for (p, q) in a.iter().zip(&b) {
            assert!(
                (p.error - q.error).abs() <= 1.0 / data.len() as f64,
                "{a:?} vs {b:?}"
            );
        }
    }
    let r = evaluate_attack(&kernel, &data, &UniformNoise { a: 0.5 }, 3).unwrap();
    assert_eq!(r.clean_error, model.error_rate(&data).unwrap());
    // a multiclass model on multiclass data
    let y: Vec<usize> = (0..data.len()).map(|i| i % 3).collect();
    let mdata = bulwark_core::Dataset::multiclass(
        "m",
        data.features().clone(),
        y,
        vec!["a".into(), "b".into(), "c".into()],
    )
    .unwrap();
    let w = DenseMatrix::from_rows(&[
        vec![1.0, 0.0, 0.0, 0.0],
        vec![0.0, 1.0, 0.0, 0.0],
        vec![0.0, 0.0, 1.0, 0.0],
    ])
    .unwrap();
    let mc = MulticlassLinearModel::try_new(w, vec![0.0; 3]).unwrap();
    let c = error_vs_noise(&mc, &mdata, NoiseKind::Uniform, &[0.0], 1, 0).unwrap();
    assert_eq!(c[0].error, mc.error_rate(&mdata).unwrap());
    let noisy = UniformNoise { a: 0.1 }
        .attack(&mc, &mdata, &mut bulwark_core::rng_from_seed(1))
        .unwrap();
    assert_eq!(noisy.len(), mdata.len());
}
