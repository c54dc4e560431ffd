//! The two synthetic data sets of DSX §4.1.

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

    #[test]
    fn synth2_shape_and_determinism() {
        let a = synth2(200, &mut rng_from_seed(5)).unwrap();
        let b = synth2(200, &mut rng_from_seed(5)).unwrap();
        assert_eq!(a, b);
        assert_eq!((a.len(), a.n_features()), (200, 40));
    }
}
