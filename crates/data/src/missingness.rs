//! Feature values from the data's own pattern of missing cells: the DSX budget spent where
//! deletions actually happen.
//!
//! DSX §2.1 gives every feature a value `v_j ≥ 0`, "its a-priori informativeness", and lets the
//! adversary delete any set `D` of features with `Σ_{j∈D} v_j ≤ N`; §4.2 sets the values by
//! mutual information and argues that a feature hard to lose (their example: a more
//! fault-tolerant sensor for the important pixels) should cost the adversary more. Here the cost
//! of deleting a feature is the surprise of seeing it missing: with `p_j` the rate at which
//! feature `j` is missing in the training records,
//!
//! ```text
//! v_j = −ln p̂_j,     p̂_j = (k_j + 1) / (m + 2)
//! ```
//!
//! (`k_j` of the `m` records miss it; the add-one estimate keeps a feature never seen missing at
//! a finite, large cost `ln(m + 2)`). The values are not normalised: the budget `N` is then in
//! nats, and a deletion set `D` is within it exactly when `Π_{j∈D} p̂_j ≥ e^{−N}`, i.e. when
//! features going missing independently at their observed rates would produce it with
//! probability at least `e^{−N}`. The LP (4) trained with these values hedges against the
//! deletions that are likely, not against the loss of a feature that is never missing.

use bulwark_core::{Dataset, Error, MissingMask, Result};

/// `v_j = −ln((k_j + 1) / (m + 2))` for the `n` features of `m` records whose missing cells are
/// `mask` (`None`: none missing).
pub fn missingness_values_of(mask: Option<&MissingMask>, m: usize, n: usize) -> Result<Vec<f64>> {
    let mut k = vec![0usize; n];
    if let Some(mask) = mask {
        if mask.cols() != n || mask.rows() != m {
            return Err(Error::shape("missing mask vs records", m, mask.rows()));
        }
        for i in 0..m {
            for &j in mask.row(i) {
                k[j] += 1;
            }
        }
    }
    let total = (m + 2) as f64;
    Ok(k.into_iter()
        .map(|kj| -((kj as f64 + 1.0) / total).ln())
        .collect())
}

/// [`missingness_values_of`] the training data's own missing cells.
pub fn missingness_values(data: &Dataset) -> Result<Vec<f64>> {
    missingness_values_of(data.missing(), data.len(), data.n_features())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{DenseMatrix, Sign};

    /// Four records; feature 0 never missing, feature 1 missing in two, feature 2 in all four.
    #[test]
    fn values_are_the_surprise_of_each_missing_rate() {
        let x = DenseMatrix::from_rows(&[
            vec![1.0, 0.0, 0.0],
            vec![2.0, 0.0, 0.0],
            vec![3.0, 5.0, 0.0],
            vec![4.0, 6.0, 0.0],
        ])
        .unwrap();
        let y = vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg];
        let mask = MissingMask::from_rows(3, &[vec![1, 2], vec![1, 2], vec![2], vec![2]]).unwrap();
        let d = Dataset::binary("t", x, y)
            .unwrap()
            .with_missing(mask)
            .unwrap();
        let v = missingness_values(&d).unwrap();
        let expect = [
            -(1.0f64 / 6.0).ln(),
            -(3.0f64 / 6.0).ln(),
            -(5.0f64 / 6.0).ln(),
        ];
        for (a, b) in v.iter().zip(expect) {
            assert!((a - b).abs() < 1e-15, "{v:?}");
        }
        // the rarer a feature goes missing, the more its deletion costs
        assert!(v[0] > v[1] && v[1] > v[2] && v[2] > 0.0);
        // deleting the two usually-missing features fits N = 1 nat: p = 3/6 * 5/6 >= e^-1
        assert!(v[1] + v[2] <= 1.0);
        // complete data: every feature costs ln(m + 2)
        let complete = d.clone().forget_missing();
        assert_eq!(missingness_values(&complete).unwrap(), vec![6f64.ln(); 3]);
        // a mask of the wrong shape is refused
        let other = MissingMask::from_rows(3, &[vec![1]]).unwrap();
        assert!(missingness_values_of(Some(&other), 4, 3).is_err());
    }
}
