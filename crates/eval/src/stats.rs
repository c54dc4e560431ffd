//! Summary statistics of repeated runs.

use serde::{Deserialize, Serialize};

/// Mean and standard error (`sd / √k`, sample standard deviation with divisor `k − 1`) of `k`
/// repetitions — the "±" of DSX §4.1 and the error bars of Figs. 1–7.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanSe {
    /// Mean.
    pub mean: f64,
    /// Standard error of the mean (0 for a single value).
    pub stderr: f64,
    /// Number of values.
    pub n: usize,
}

impl MeanSe {
    /// Of a non-empty slice (an empty one gives NaN mean, `n = 0`).
    pub fn of(values: &[f64]) -> Self {
        let k = values.len();
        if k == 0 {
            return Self {
                mean: f64::NAN,
                stderr: f64::NAN,
                n: 0,
            };
        }
        let mean = values.iter().sum::<f64>() / k as f64;
        let stderr = if k > 1 {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
            (var / k as f64).sqrt()
        } else {
            0.0
        };
        Self { mean, stderr, n: k }
    }
}

#[cfg(test)]
mod tests {
    use super::MeanSe;

    #[test]
    fn mean_and_standard_error() {
        let s = MeanSe::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        // sample sd = sqrt(5/3); se = sd / 2
        assert!((s.stderr - (5.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-15);
        assert_eq!(MeanSe::of(&[0.3]).stderr, 0.0);
        assert!(MeanSe::of(&[]).mean.is_nan());
    }
}
