//! The two synthetic data sets of DSX §4.1, the two binary toys of Ginodi (2010) §2.5 and the
//! multiclass toys of its ch. 5 §4.

use bulwark_adversary::{random_unit_vector, standard_normal};
use bulwark_core::{Dataset, DenseMatrix, Error, Rng, Sign};
use rand::Rng as _;

/// Draws `m` points of `N(0, I_d)` labelled by the hyperplane `sign(u·x)` through the origin.
/// With `margin`, points closer than 1 to the hyperplane are rejected and redrawn (the
/// "linearly separable" sample of DSX §4.1's second experiment). Returns rows and labels.
fn separable(
    m: usize,
    d: usize,
    margin: bool,
    rng: &mut Rng,
) -> Result<(Vec<Vec<f64>>, Vec<Sign>), Error> {
    let u = random_unit_vector(d, rng)?;
    let mut rows = Vec::with_capacity(m);
    let mut labels = Vec::with_capacity(m);
    while rows.len() < m {
        let x: Vec<f64> = (0..d).map(|_| standard_normal(rng)).collect();
        let s: f64 = x.iter().zip(&u).map(|(a, b)| a * b).sum();
        if margin && s.abs() < 1.0 {
            continue;
        }
        labels.push(Sign::of_score(s));
        rows.push(x);
    }
    Ok((rows, labels))
}

/// DSX §4.1, first experiment: `m` points in `R^20` (separable with margin 1 when `margin`,
/// else plain Gaussian), each label flipped with probability `flip`, then two copies of the
/// (noisy) label appended as features 21 and 22.
pub fn synth1(m: usize, flip: f64, margin: bool, rng: &mut Rng) -> Result<Dataset, Error> {
    let (rows, clean) = separable(m, 20, margin, rng)?;
    let mut data = Vec::with_capacity(m * 22);
    let mut labels = Vec::with_capacity(m);
    for (x, y) in rows.into_iter().zip(clean) {
        let y = if rng.random::<f64>() < flip {
            y.flip()
        } else {
            y
        };
        data.extend(x);
        data.extend([y.as_f64(), y.as_f64()]);
        labels.push(y);
    }
    Dataset::binary("synth1", DenseMatrix::try_new(m, 22, data)?, labels)
}

/// DSX §4.1, second experiment (feature redundancy, Fig. 1): 200 points `u ∈ R^3` separable
/// with margin 1, a random `40 × 3` Gaussian matrix `A`, `x = A u` plus Gaussian noise of
/// variance `0.15 j` on feature `j = 1..40` (noise grows with the index).
pub fn synth2(m: usize, rng: &mut Rng) -> Result<Dataset, Error> {
    let (rows, labels) = separable(m, 3, true, rng)?;
    let n = 40;
    let a: Vec<f64> = (0..n * 3).map(|_| standard_normal(rng)).collect();
    let mut data = Vec::with_capacity(m * n);
    for u in &rows {
        for j in 0..n {
            let clean: f64 = (0..3).map(|k| a[j * 3 + k] * u[k]).sum();
            let sd = (0.15 * (j + 1) as f64).sqrt();
            data.push(clean + sd * standard_normal(rng));
        }
    }
    Dataset::binary("synth2", DenseMatrix::try_new(m, n, data)?, labels)
}

/// `m` two-dimensional points, labels ±1 with probability ½, each drawn by `point`.
fn toy(
    name: &str,
    m: usize,
    rng: &mut Rng,
    point: impl Fn(f64, &mut Rng) -> [f64; 2],
) -> Result<Dataset, Error> {
    let mut data = Vec::with_capacity(2 * m);
    let mut labels = Vec::with_capacity(m);
    for _ in 0..m {
        let y = if rng.random::<bool>() {
            Sign::Pos
        } else {
            Sign::Neg
        };
        data.extend(point(y.as_f64(), rng));
        labels.push(y);
    }
    Dataset::binary(name, DenseMatrix::try_new(m, 2, data)?, labels)
}

/// Ginodi Fig. 2.4 (a), "Gaussian data" (the thesis gives no parameters; ours): labels ±1 with
/// probability ½, `x = (1, 1) + y (1, 1) + N(0, I₂)`. The Bayes classifier `x₁ + x₂ > 2` is
/// right with probability `Φ(√2) ≈ 92.1 %` (the thesis's accuracies: 92.5 %).
pub fn toy_a(m: usize, rng: &mut Rng) -> Result<Dataset, Error> {
    toy("toy_a", m, rng, |s, rng| {
        let e1 = standard_normal(rng);
        [1.0 + s + e1, 1.0 + s + standard_normal(rng)]
    })
}

/// Ginodi Fig. 2.4 (b), "narrow Gaussian with outliers" (parameters ours): labels ±1 with
/// probability ½; with probability 0.95 `x = (1, 1) + (0, 0.5 y) + (2 ε₁, 0.3 ε₂)`, classes
/// narrow across the boundary `x₂ = 1` and long along it (Bayes accuracy `Φ(5/3) ≈ 95.2 %` on
/// this part); with probability 0.05 an outlier `x = (1, 1) + (8 y, −1.5 y) + 0.5 ε`, far out
/// along the boundary and on the wrong side of it, which pulls a hinge-loss fit.
pub fn toy_b(m: usize, rng: &mut Rng) -> Result<Dataset, Error> {
    toy("toy_b", m, rng, |s, rng| {
        let (e1, e2) = (standard_normal(rng), standard_normal(rng));
        if rng.random::<f64>() < 0.05 {
            [1.0 + 8.0 * s + 0.5 * e1, 1.0 - 1.5 * s + 0.5 * e2]
        } else {
            [1.0 + 2.0 * e1, 1.0 + 0.5 * s + 0.3 * e2]
        }
    })
}

/// Ginodi ch. 5 §4, Toy-3 / Toy-4 ("each class is a Gaussian", Fig. 5.3; the parameters are
/// ours): `k` classes drawn uniformly, class `c` at `x = (1, 1) + 3 (cos 2πc/k, sin 2πc/k) +
/// N(0, I₂)`. The Bayes rule (the nearest mean) is right with probability ≈ 99.1 % for `k = 3`
/// and ≈ 96.7 % for `k = 4` (the thesis's accuracies: 98.67 % and 96 %).
pub fn toy_classes(k: usize, m: usize, rng: &mut Rng) -> Result<Dataset, Error> {
    if k < 2 {
        return Err(Error::param("classes", k, "at least 2"));
    }
    let mut data = Vec::with_capacity(2 * m);
    let mut labels = Vec::with_capacity(m);
    for _ in 0..m {
        let c = rng.random_range(0..k);
        let (s, co) = (std::f64::consts::TAU * c as f64 / k as f64).sin_cos();
        data.push(1.0 + 3.0 * co + standard_normal(rng));
        data.push(1.0 + 3.0 * s + standard_normal(rng));
        labels.push(c);
    }
    Dataset::multiclass(
        format!("toy_{k}"),
        DenseMatrix::try_new(m, 2, data)?,
        labels,
        (0..k).map(|c| c.to_string()).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::rng_from_seed;

    #[test]
    fn synth1_label_copies_and_flip_rate() {
        let d = synth1(2000, 0.2, true, &mut rng_from_seed(3)).unwrap();
        let y = d.binary_labels().unwrap();
        assert_eq!(d.n_features(), 22);
        for i in 0..d.len() {
            let r = d.row(i).nonzeros().collect::<Vec<_>>();
            let last: Vec<f64> = r.iter().filter(|(j, _)| *j >= 20).map(|p| p.1).collect();
            assert_eq!(last, vec![y[i].as_f64(); 2]);
        }
    }

    #[test]
    fn synth1_flip_rate_is_one_fifth() {
        // the flip rate is the error of the best classifier that ignores the copies: regenerate
        // with the same stream and compare the noisy labels with the clean ones
        let m = 20_000;
        let mut rng = rng_from_seed(11);
        let (rows, clean) = separable(m, 20, true, &mut rng).unwrap();
        assert!(rows.iter().all(|r| r.len() == 20));
        let mut rng = rng_from_seed(11);
        let noisy = synth1(m, 0.2, true, &mut rng).unwrap();
        let y = noisy.binary_labels().unwrap();
        let flipped = (0..m).filter(|&i| y[i] != clean[i]).count() as f64 / m as f64;
        assert!((flipped - 0.2).abs() < 0.01, "flip rate {flipped}");
    }

    /// The toys' Bayes rules are right as often as their documentation says.
    #[test]
    fn toy_bayes_accuracies() {
        let m = 40_000;
        let a = toy_a(m, &mut rng_from_seed(1)).unwrap();
        let ya = a.binary_labels().unwrap();
        let hits = (0..m)
            .filter(|&i| {
                let r: Vec<f64> = a.row(i).nonzeros().map(|p| p.1).collect();
                Sign::of_score(r.iter().sum::<f64>() - 2.0) == ya[i]
            })
            .count() as f64
            / m as f64;
        assert!((hits - 0.921).abs() < 0.005, "toy (a): {hits}");
        let b = toy_b(m, &mut rng_from_seed(2)).unwrap();
        let yb = b.binary_labels().unwrap();
        let mut x = vec![0.0; 2];
        let hits = (0..m)
            .filter(|&i| {
                b.row(i).to_dense_into(&mut x);
                Sign::of_score(x[1] - 1.0) == yb[i]
            })
            .count() as f64
            / m as f64;
        // 0.95 * 0.952 on the main part, the outliers all wrong
        assert!((hits - 0.904).abs() < 0.006, "toy (b): {hits}");
    }

    /// The multiclass toys' nearest-mean rule is right as often as documented, every class
    /// appears about equally often.
    #[test]
    fn toy_classes_bayes_accuracies() {
        let m = 40_000;
        for (k, bayes, seed) in [(3, 0.991, 3), (4, 0.967, 4)] {
            let d = toy_classes(k, m, &mut rng_from_seed(seed)).unwrap();
            assert_eq!(d.n_classes(), k);
            let mut x = vec![0.0; 2];
            let mut counts = vec![0usize; k];
            let hits = (0..m)
                .filter(|&i| {
                    d.row(i).to_dense_into(&mut x);
                    let c = d.targets().class_index(i);
                    counts[c] += 1;
                    let dist = |j: usize| {
                        let (s, co) = (std::f64::consts::TAU * j as f64 / k as f64).sin_cos();
                        (x[0] - 1.0 - 3.0 * co).powi(2) + (x[1] - 1.0 - 3.0 * s).powi(2)
                    };
                    (0..k).min_by(|&a, &b| dist(a).total_cmp(&dist(b))) == Some(c)
                })
                .count() as f64
                / m as f64;
            assert!((hits - bayes).abs() < 0.004, "toy {k}: {hits}");
            for c in counts {
                assert!((c as f64 / m as f64 - 1.0 / k as f64).abs() < 0.01);
            }
        }
        assert!(toy_classes(1, 10, &mut rng_from_seed(0)).is_err());
    }

    #[test]
    fn synth2_shape_and_determinism() {
        let a = synth2(200, &mut rng_from_seed(5)).unwrap();
        let b = synth2(200, &mut rng_from_seed(5)).unwrap();
        assert_eq!(a, b);
        assert_eq!((a.len(), a.n_features()), (200, 40));
    }
}
