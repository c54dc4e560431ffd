//! Hand-vectorised reductions over slices: [`LANES`] independent accumulators, combined in a
//! fixed order (the same bits on every run).

/// Lanes of the hand-vectorised reductions (the compiler does not reorder floating-point sums).
pub(super) const LANES: usize = 8;

/// `Σ_k v_k`, vectorised.
#[inline]
pub(super) fn sum(v: &[f64]) -> f64 {
    let k = v.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    for c in v[..k].chunks_exact(LANES) {
        for l in 0..LANES {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f64>() + v[k..].iter().sum::<f64>()
}

/// `Σ_k v_k w_k`, vectorised.
#[inline]
pub(super) fn dot(v: &[f64], w: &[f64]) -> f64 {
    let k = v.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    for (v, w) in v[..k].chunks_exact(LANES).zip(w[..k].chunks_exact(LANES)) {
        for l in 0..LANES {
            acc[l] += v[l] * w[l];
        }
    }
    let mut sum: f64 = acc.iter().sum();
    for t in k..v.len() {
        sum += v[t] * w[t];
    }
    sum
}

/// `‖v‖∞`, NaN when any entry is not finite. Vectorised.
#[inline]
pub(super) fn inf_norm(v: &[f64]) -> f64 {
    let k = v.len() / LANES * LANES;
    let mut acc = [0.0f64; LANES];
    // x·0 is NaN exactly for non-finite x: a cheap, vectorisable finiteness check
    let mut bad = [0.0f64; LANES];
    for c in v[..k].chunks_exact(LANES) {
        for l in 0..LANES {
            acc[l] = acc[l].max(c[l].abs());
            bad[l] += c[l] * 0.0;
        }
    }
    let mut m = acc.iter().fold(0.0f64, |a, &b| a.max(b));
    let mut nan: f64 = bad.iter().sum();
    for &x in &v[k..] {
        m = m.max(x.abs());
        nan += x * 0.0;
    }
    if nan.is_nan() { f64::NAN } else { m }
}
