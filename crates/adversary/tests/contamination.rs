//! Training-time contamination and samplers.

use bulwark_adversary::{
    AimedOutliers, Distribution, LabelNoise, LabelNoiseMode, MaliciousAdversary, MaliciousNoise,
    NormMatchedOutliers, RolrOutliers, halfspace_data, orthogonal_directions, random_unit_vector,
};
use bulwark_core::{Contamination, Dataset, Error, Sign, rng_from_seed};

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Mean vector and second-moment matrix (about the mean) of the rows.
fn moments(x: &bulwark_core::DenseMatrix) -> (Vec<f64>, Vec<Vec<f64>>) {
    let (m, n) = (x.rows(), x.cols());
    let mut mean = vec![0.0; n];
    for i in 0..m {
        for j in 0..n {
            mean[j] += x.get(i, j) / m as f64;
        }
    }
    let mut cov = vec![vec![0.0; n]; n];
    for i in 0..m {
        for a in 0..n {
            for b in 0..n {
                cov[a][b] += (x.get(i, a) - mean[a]) * (x.get(i, b) - mean[b]) / m as f64;
            }
        }
    }
    (mean, cov)
}

#[test]
fn samplers_have_the_right_first_and_second_moments() {
    let (m, n) = (40_000, 4);
    for (k, dist) in Distribution::ALL.into_iter().enumerate() {
        let x = dist
            .sample(m, n, &mut rng_from_seed(100 + k as u64))
            .unwrap();
        let (mean, cov) = moments(&x);
        let diag = if dist.is_isotropic() {
            1.0
        } else {
            1.0 / (n as f64 + 2.0)
        };
        for a in 0..n {
            assert!(mean[a].abs() < 0.03, "{dist:?} mean[{a}] = {}", mean[a]);
            for b in 0..n {
                let want = if a == b { diag } else { 0.0 };
                assert!(
                    (cov[a][b] - want).abs() < 0.04 * diag.max(0.2),
                    "{dist:?} cov[{a}][{b}] = {}",
                    cov[a][b]
                );
            }
        }
        if dist == Distribution::UnitBall {
            assert!((0..m).all(|i| dot(x.row(i), x.row(i)) <= 1.0));
        }
        if dist == Distribution::IsotropicBall {
            assert!((0..m).all(|i| dot(x.row(i), x.row(i)) <= n as f64 + 2.0 + 1e-9));
        }
        if dist == Distribution::Cube {
            assert!(x.as_slice().iter().all(|v| v.abs() <= 3f64.sqrt()));
        }
        if dist == Distribution::CenteredExponential {
            assert!(x.as_slice().iter().all(|&v| v >= -1.0));
            // skewness of Exp(1) is 2
            let s = (0..m).map(|i| x.get(i, 0).powi(3)).sum::<f64>() / m as f64;
            assert!((s - 2.0).abs() < 0.3, "{s}");
        }
        let again = dist
            .sample(m, n, &mut rng_from_seed(100 + k as u64))
            .unwrap();
        assert_eq!(x, again);
    }
}

#[test]
fn halfspace_labels_and_unit_vectors() {
    let mut rng = rng_from_seed(1);
    let u = random_unit_vector(6, &mut rng).unwrap();
    assert!((dot(&u, &u) - 1.0).abs() < 1e-12);
    let d = halfspace_data(Distribution::Laplace, &u, 200, &mut rng).unwrap();
    let y = d.binary_labels().unwrap();
    for i in 0..d.len() {
        assert_eq!(y[i], Sign::of_score(d.row(i).dot(&u)));
    }
    let z = orthogonal_directions(&u, 5);
    assert_eq!(z.len(), 5);
    for (a, za) in z.iter().enumerate() {
        assert!(dot(za, &u).abs() < 1e-12);
        for (b, zb) in z.iter().enumerate() {
            let want = if a == b { 1.0 } else { 0.0 };
            assert!((dot(za, zb) - want).abs() < 1e-12);
        }
    }
}

fn clean(m: usize, n: usize, seed: u64) -> (Vec<f64>, Dataset) {
    let mut rng = rng_from_seed(seed);
    let u = random_unit_vector(n, &mut rng).unwrap();
    let d = halfspace_data(Distribution::UnitBall, &u, m, &mut rng).unwrap();
    (u, d)
}

#[test]
fn malicious_noise_replaces_about_eta_m_examples() {
    let (u, data) = clean(2000, 8, 2);
    let y0 = data.binary_labels().unwrap();
    let advs = [
        MaliciousAdversary::CoordinatedPull {
            angle: 0.0,
            radius: 1.0,
        },
        MaliciousAdversary::CoordinatedPull {
            angle: 0.5,
            radius: 1.0,
        },
        MaliciousAdversary::EvasivePull {
            threshold: 0.2,
            directions: 3,
        },
        MaliciousAdversary::FlippedLabels,
        MaliciousAdversary::RandomPoints,
    ];
    for adv in advs {
        let noise = MaliciousNoise {
            eta: 0.1,
            adversary: adv,
            target: Some(u.clone()),
        };
        let (out, dirty) = noise.contaminate(&data, &mut rng_from_seed(3)).unwrap();
        let (again, dirty2) = noise.contaminate(&data, &mut rng_from_seed(3)).unwrap();
        assert_eq!((&out, &dirty), (&again, &dirty2), "{adv:?} deterministic");
        assert_eq!(out.len(), data.len());
        // Binomial(2000, 0.1): mean 200, sd ≈ 13.4
        assert!(
            (dirty.len() as f64 - 200.0).abs() < 60.0,
            "{adv:?}: {}",
            dirty.len()
        );
        let y = out.binary_labels().unwrap();
        let (xo, xc) = (out.features().to_dense(), data.features().to_dense());
        for i in 0..data.len() {
            if dirty.binary_search(&i).is_err() {
                assert_eq!(xo.row(i), xc.row(i));
                assert_eq!(y[i], y0[i]);
            }
        }
        for &i in &dirty {
            let x = xo.row(i);
            match adv {
                MaliciousAdversary::CoordinatedPull { angle, .. } => {
                    assert!((dot(x, x) - 1.0).abs() < 1e-9);
                    assert!((dot(x, &u) - angle.sin()).abs() < 1e-9);
                    let want = if angle == 0.0 { Sign::Pos } else { Sign::Neg };
                    assert_eq!(y[i], want);
                }
                MaliciousAdversary::EvasivePull { threshold, .. } => {
                    assert!(dot(x, &u).abs() < 1e-9);
                    assert!(dot(x, x) < threshold && dot(x, x) > 0.99 * threshold);
                    assert_eq!(y[i], Sign::Pos);
                }
                MaliciousAdversary::FlippedLabels => {
                    assert_eq!(x, xc.row(i));
                    assert_eq!(y[i], y0[i].flip());
                }
                MaliciousAdversary::RandomPoints => {
                    assert!(dot(x, x) <= 1.0 + 1e-9);
                }
            }
        }
    }
    let bad = MaliciousNoise {
        eta: 1.5,
        adversary: MaliciousAdversary::FlippedLabels,
        target: None,
    };
    assert!(matches!(
        bad.contaminate(&data, &mut rng_from_seed(0)),
        Err(Error::InvalidParameter { .. })
    ));
    let bad = MaliciousNoise {
        eta: 0.1,
        adversary: MaliciousAdversary::FlippedLabels,
        target: Some(vec![1.0; 3]),
    };
    assert!(matches!(
        bad.contaminate(&data, &mut rng_from_seed(0)),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn label_noise_flips_the_chosen_examples() {
    let (u, data) = clean(500, 5, 4);
    let y0 = data.binary_labels().unwrap();
    for mode in [
        LabelNoiseMode::Random,
        LabelNoiseMode::FarFromBoundary,
        LabelNoiseMode::NearBoundary,
        LabelNoiseMode::Halfspace,
    ] {
        let noise = LabelNoise {
            eta: 0.1,
            mode,
            target: Some(u.clone()),
        };
        let (out, flipped) = noise.contaminate(&data, &mut rng_from_seed(5)).unwrap();
        assert_eq!(out.features(), data.features());
        let y = out.binary_labels().unwrap();
        for i in 0..data.len() {
            let f = flipped.binary_search(&i).is_ok();
            assert_eq!(y[i] != y0[i], f);
        }
        if mode == LabelNoiseMode::Random {
            assert!((flipped.len() as f64 - 50.0).abs() < 25.0);
        } else {
            assert_eq!(flipped.len(), 50, "{mode:?}");
        }
        if mode == LabelNoiseMode::FarFromBoundary {
            let cut = flipped
                .iter()
                .map(|&i| data.row(i).dot(&u).abs())
                .fold(f64::INFINITY, f64::min);
            let kept_max = (0..data.len())
                .filter(|i| flipped.binary_search(i).is_err())
                .map(|i| data.row(i).dot(&u).abs())
                .fold(0.0, f64::max);
            assert!(cut >= kept_max);
        }
        if mode == LabelNoiseMode::NearBoundary {
            assert!(
                flipped
                    .iter()
                    .all(|&i| data.row(i).dot(&u) > 0.0 && y0[i] == Sign::Pos)
            );
        }
    }
}

#[test]
fn rolr_outliers_are_appended_with_opposite_labels() {
    let (u, data) = clean(100, 6, 6);
    let out = RolrOutliers::from_ratio(0.5, 100, u.clone()).unwrap();
    assert_eq!(out.n_outliers, 50);
    let (d, idx) = out.contaminate(&data, &mut rng_from_seed(7)).unwrap();
    assert_eq!(d.len(), 150);
    assert_eq!(idx, (100..150).collect::<Vec<_>>());
    let y = d.binary_labels().unwrap();
    let x = d.features().to_dense();
    for &i in &idx {
        assert!(x.row(i).iter().all(|v| v.abs() <= 10.0));
        assert_eq!(y[i], Sign::of_score(-dot(x.row(i), &u)));
    }
    for i in 0..100 {
        assert_eq!(x.row(i), data.features().to_dense().row(i));
    }
    // outliers spread over the cube: variance of U[-10, 10] is 100/3
    let var = idx.iter().map(|&i| x.get(i, 0).powi(2)).sum::<f64>() / 50.0;
    assert!(var > 15.0 && var < 55.0, "{var}");
    let (d2, _) = out.contaminate(&data, &mut rng_from_seed(7)).unwrap();
    assert_eq!(d, d2);
    assert!(
        RolrOutliers {
            n_outliers: 3,
            beta: vec![1.0; 2],
            scale: 10.0
        }
        .contaminate(&data, &mut rng_from_seed(0))
        .is_err()
    );
}

/// Norm-matched outliers have the clean examples' norms, point along the estimate (up to the
/// jitter) and are labelled against it.
#[test]
fn norm_matched_outliers_hide_at_the_inliers_norm() {
    let p = 20;
    let (u, data) = clean(200, p, 8);
    let out = NormMatchedOutliers {
        n_outliers: 400,
        estimate: u.iter().map(|v| 3.0 * v).collect(),
        jitter: 0.5,
    };
    let (d, idx) = out.contaminate(&data, &mut rng_from_seed(3)).unwrap();
    assert_eq!(idx, (200..600).collect::<Vec<_>>());
    let y = d.binary_labels().unwrap();
    let x = d.features().to_dense();
    let clean_norms: Vec<f64> = (0..200).map(|i| dot(x.row(i), x.row(i)).sqrt()).collect();
    let mut mean_norm = 0.0;
    for &i in &idx {
        let r = x.row(i);
        let norm = dot(r, r).sqrt();
        mean_norm += norm / 400.0;
        assert!(clean_norms.iter().any(|c| (c - norm).abs() < 1e-12));
        // the direction: cos(angle to u) = 1/sqrt(1 + jitter^2) on average, about 0.89
        assert!(dot(r, &u) / norm > 0.6, "{}", dot(r, &u) / norm);
        assert_eq!(y[i], Sign::Neg);
    }
    let clean_mean = clean_norms.iter().sum::<f64>() / 200.0;
    assert!(
        (mean_norm - clean_mean).abs() < 0.05,
        "{mean_norm} vs {clean_mean}"
    );
    let bad = NormMatchedOutliers {
        n_outliers: 1,
        estimate: vec![0.0; p],
        jitter: 0.5,
    };
    assert!(bad.contaminate(&data, &mut rng_from_seed(3)).is_err());
}

/// Aimed outliers have exactly the given norm, copy the directions of the clean examples most
/// aligned with the estimate, are labelled against it, and bad parameters are typed errors.
#[test]
fn aimed_outliers_copy_clean_directions_against_the_estimate() {
    let p = 20;
    let (u, data) = clean(200, p, 9);
    let est: Vec<f64> = u.iter().map(|v| 2.0 * v).collect();
    let out = AimedOutliers {
        n_outliers: 300,
        estimate: est.clone(),
        bias: 0.3,
        radius: 7.5,
        jitter: 0.0,
    };
    let (d, idx) = out.contaminate(&data, &mut rng_from_seed(4)).unwrap();
    assert_eq!(idx, (200..500).collect::<Vec<_>>());
    let y = d.binary_labels().unwrap();
    let x = d.features().to_dense();
    let unit_rows: Vec<Vec<f64>> = (0..200)
        .map(|i| {
            let r = x.row(i);
            let n = dot(r, r).sqrt();
            r.iter().map(|v| v / n).collect()
        })
        .collect();
    let align = |v: &[f64]| dot(v, &u).abs();
    let mut cut: Vec<f64> = unit_rows.iter().map(|r| align(r)).collect();
    cut.sort_by(|a, b| b.total_cmp(a));
    for (t, &i) in idx.iter().enumerate() {
        let r = x.row(i);
        assert!((dot(r, r).sqrt() - 7.5).abs() < 1e-12);
        let dir: Vec<f64> = r.iter().map(|v| v / 7.5).collect();
        // a copy of a clean direction, the (t mod 200)-th most aligned
        let k = unit_rows
            .iter()
            .position(|q| q.iter().zip(&dir).all(|(a, b)| (a - b).abs() < 1e-12))
            .expect("a clean direction");
        assert_eq!(align(&unit_rows[k]), cut[t % 200]);
        assert_eq!(y[i], Sign::of_score(-(dot(&est, r) + 0.3)));
    }
    for bad in [
        AimedOutliers {
            radius: f64::NAN,
            ..out.clone()
        },
        AimedOutliers {
            jitter: -1.0,
            ..out.clone()
        },
        AimedOutliers {
            bias: f64::INFINITY,
            ..out.clone()
        },
        AimedOutliers {
            estimate: vec![0.0; p],
            ..out.clone()
        },
    ] {
        assert!(bad.contaminate(&data, &mut rng_from_seed(3)).is_err());
    }
}
