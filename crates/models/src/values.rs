//! Per-feature values of the deletion budget as a user names them: `uniform`, `mi` (DSX §4.2
//! mutual information, computed on the given data), `missingness` (the surprise of each
//! feature's missing rate on the given data, `bulwark_data::missingness`) or a file with one
//! value per line.

use bulwark_core::{Dataset, Error, Location, Result};
use bulwark_data::{missingness_values, mutual_information_values};

/// Resolves `spec` for `data`: `uniform`, `mi`, `missingness` or a file (one finite value ≥ 0 per line,
/// `#` comments and blank lines skipped, exactly one per feature). Errors name the file and
/// line.
pub fn feature_values(spec: &str, data: &Dataset) -> Result<Vec<f64>> {
    let n = data.n_features();
    match spec {
        "uniform" => Ok(vec![1.0; n]),
        "mi" => mutual_information_values(data),
        "missingness" => missingness_values(data),
        path => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let mut v = Vec::new();
            for (k, line) in text.lines().enumerate() {
                let t = line.trim();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let loc = || Location::source(path).line(k + 1);
                let x: f64 = t.parse().map_err(|_| {
                    Error::input(loc(), format!("expected a feature value, found `{t}`"))
                })?;
                if !(x.is_finite() && x >= 0.0) {
                    return Err(Error::input(
                        loc(),
                        format!("feature value {x} must be finite and >= 0"),
                    ));
                }
                v.push(x);
            }
            if v.len() != n {
                return Err(Error::input(
                    Location::source(path),
                    format!(
                        "{} feature values, but the data have {n} features (one value per line)",
                        v.len()
                    ),
                ));
            }
            Ok(v)
        }
    }
}
