//! Mutual-information feature values of DSX §4.2:
//! `v_j = (1/Z) max_c I([X_j > c]; Y)` with `Z` such that `Σ_j v_j = n`.
//!
//! `(X_j, Y)` is uniform over the training examples; thresholds are the midpoints between
//! consecutive distinct values of `X_j` (any `c` between them gives the same split). One sort
//! and one sweep per feature: `O(m log m)`. Works for binary and multiclass labels.

use bulwark_core::{Dataset, Error, Result};

/// Empirical mutual information (nats) of a binary split with class counts `above` (of
/// `n_above` examples) and `total` per class over `m` examples.
fn split_mi(above: &[usize], total: &[usize], m: usize) -> f64 {
    let mf = m as f64;
    let n_above: usize = above.iter().sum();
    let n_below = m - n_above;
    let mut mi = 0.0;
    for (k, &t) in total.iter().enumerate() {
        if t == 0 {
            continue;
        }
        let py = t as f64 / mf;
        for (count, side) in [(above[k], n_above), (t - above[k], n_below)] {
            if count > 0 {
                let pxy = count as f64 / mf;
                let px = side as f64 / mf;
                mi += pxy * (pxy / (px * py)).ln();
            }
        }
    }
    mi.max(0.0)
}

/// The best single-threshold mutual information of every feature (unnormalised `u_j`).
pub fn max_threshold_mi(data: &Dataset) -> Result<Vec<f64>> {
    let m = data.len();
    if m == 0 {
        return Err(Error::param("data", "empty", "at least one example"));
    }
    let k = data.n_classes();
    let class: Vec<usize> = (0..m).map(|i| data.targets().class_index(i)).collect();
    let mut total = vec![0usize; k];
    class.iter().for_each(|&c| total[c] += 1);
    let n = data.n_features();
    let dense = data.features().to_dense();
    let mut col: Vec<(f64, usize)> = Vec::with_capacity(m);
    let mut above = vec![0usize; k];
    let mut out = Vec::with_capacity(n);
    for j in 0..n {
        col.clear();
        col.extend((0..m).map(|i| (dense.get(i, j), class[i])));
        col.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        // sweep from the top: `above` holds the class counts of values > c
        above.fill(0);
        let mut best = 0.0f64;
        let mut i = m;
        while i > 0 {
            // move the block of equal values col[s..i] above the threshold
            let v = col[i - 1].0;
            let mut s = i;
            while s > 0 && col[s - 1].0 == v {
                s -= 1;
                above[col[s].1] += 1;
            }
            if s == 0 {
                break; // no threshold below the smallest value
            }
            best = best.max(split_mi(&above, &total, m));
            i = s;
        }
        out.push(best);
    }
    Ok(out)
}

/// DSX §4.2 feature values: `u_j / Z` with `Z = Σ u_j / n`, so the values sum to `n`. If no
/// feature carries information (`Σ u_j = 0`) the values are uniform (all 1).
pub fn mutual_information_values(data: &Dataset) -> Result<Vec<f64>> {
    let u = max_threshold_mi(data)?;
    let n = u.len() as f64;
    let s: f64 = u.iter().sum();
    if s <= 0.0 {
        return Ok(vec![1.0; u.len()]);
    }
    let z = s / n;
    Ok(u.into_iter().map(|x| x / z).collect())
}
