//! Input checks and small numeric helpers shared by every learner of the crate.

use bulwark_core::{Dataset, Error, Result, Sign};

/// The checks every binary learner makes before training: non-empty, binary, both classes
/// present, every value finite, at least one feature, no example weights (unsupported here).
pub(crate) fn binary_training_labels<'a>(data: &'a Dataset, algorithm: &str) -> Result<&'a [Sign]> {
    let y = data.binary_training_labels()?;
    data.reject_weights(algorithm)?;
    Ok(y)
}

/// `C` must be finite and `> 0`.
pub(crate) fn check_c(c: f64) -> Result<()> {
    bulwark_core::error::check_positive("C", c).map(|_| ())
}

/// A tolerance in `(0, 1)`.
pub(crate) fn check_tolerance(name: &str, t: f64) -> Result<()> {
    if t.is_finite() && t > 0.0 && t < 1.0 {
        Ok(())
    } else {
        Err(Error::param(name, t, "a number in (0, 1)"))
    }
}

/// A count that must be at least 1.
pub(crate) fn check_at_least_one(name: &str, k: usize) -> Result<()> {
    if k >= 1 {
        Ok(())
    } else {
        Err(Error::param(name, k, "at least 1"))
    }
}

/// Dot product with four independent accumulators (core's, which the worst-case deletion uses).
pub(crate) use bulwark_core::budget::dot4;

/// `log(1 + exp(t))` without overflow.
#[inline]
pub(crate) fn softplus(t: f64) -> f64 {
    if t > 0.0 {
        t + (-t).exp().ln_1p()
    } else {
        t.exp().ln_1p()
    }
}

/// The logistic function `1 / (1 + exp(−t))` without overflow.
#[inline]
pub(crate) fn sigmoid(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}
