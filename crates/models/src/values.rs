//! Per-feature values of the deletion budget as a user names them: `uniform`, `mi` (DSX §4.2
//! mutual information, computed on the given data), `missingness` (the surprise of each
//! feature's missing rate on the given data, `bulwark_data::missingness`) or a file with one
//! value per line.

use std::io::BufRead;

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
            let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            read_values(std::io::BufReader::new(file), path, n)
        }
    }
}

/// Reads a values file from a stream (`source` named in errors): one finite value ≥ 0 per
/// line, `#` comments and blank lines skipped, exactly `n` of them. Reading stops at the first
/// value beyond `n` and at a line longer than 4 KiB, so memory never exceeds `n` values.
pub fn read_values(mut input: impl std::io::BufRead, source: &str, n: usize) -> Result<Vec<f64>> {
    /// No value needs a longer line.
    const MAX_LINE: u64 = 4096;
    let mut v = Vec::new();
    let mut line = Vec::new();
    for k in 0.. {
        line.clear();
        let read = std::io::Read::take(&mut input, MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(source, e))?;
        if read == 0 {
            break;
        }
        let loc = || Location::source(source).line(k + 1);
        if line.len() as u64 > MAX_LINE {
            return Err(Error::input(
                loc(),
                format!("a line longer than {MAX_LINE} bytes: expected one feature value"),
            ));
        }
        let t = String::from_utf8_lossy(&line);
        let t = t.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let x: f64 = t.parse().map_err(|_| {
            Error::input(
                loc(),
                format!(
                    "expected a feature value, found `{}`",
                    t.chars().take(40).collect::<String>()
                ),
            )
        })?;
        if !(x.is_finite() && x >= 0.0) {
            return Err(Error::input(
                loc(),
                format!("feature value {x} must be finite and >= 0"),
            ));
        }
        if v.len() == n {
            return Err(Error::input(
                loc(),
                format!(
                    "more than {n} feature values, but the data have {n} features (one value per line)"
                ),
            ));
        }
        v.push(x);
    }
    if v.len() != n {
        return Err(Error::input(
            Location::source(source),
            format!(
                "{} feature values, but the data have {n} features (one value per line)",
                v.len()
            ),
        ));
    }
    Ok(v)
}
