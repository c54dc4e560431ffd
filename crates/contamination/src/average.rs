//! Averaging (Klivans, Long & Servedio 2009; Servedio 1999): the hypothesis `sign(v·x)` with
//! `v = Σ_i c_i y_i x_i / Σ_i c_i`, the (weighted) average of the label-signed examples. It is
//! the weak learner the paper's outlier-removal and boosting algorithms build on, and on its own
//! a learner that tolerates a little malicious noise on the uniform ball. `v` is not
//! normalised; there is no bias.

use std::time::Instant;

use bulwark_core::{
    Dataset, DatasetView, Error, Fit, FitReport, FitView, Fitted, LinearModel, Result,
};

/// Averaging; it has no hyper-parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AveragingParams;

impl AveragingParams {
    /// The learner.
    pub fn new() -> Self {
        Self
    }
}

/// `v = Σ c_i y_i x_i / Σ c_i` over the rows of `data` (`c_i` the example weights, 1 without).
pub fn average(data: &DatasetView<'_>) -> Result<Vec<f64>> {
    if data.is_empty() {
        return Err(Error::param("data", "empty", "at least one example"));
    }
    let mut v = vec![0.0; data.n_features()];
    let mut total = 0.0;
    for i in 0..data.len() {
        let c = data.weight(i) * data.label(i)?.as_f64();
        total += data.weight(i);
        for (j, x) in data.row(i).nonzeros() {
            v[j] += c * x;
        }
    }
    if total <= 0.0 {
        return Err(Error::param(
            "example weights",
            total,
            "a positive total weight",
        ));
    }
    v.iter_mut().for_each(|x| *x /= total);
    Ok(v)
}

impl FitView for AveragingParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit_view(&self, data: &DatasetView<'_>) -> Result<Fitted<LinearModel>> {
        let start = Instant::now();
        data.data().check_finite()?;
        let v = average(data)?;
        let mut report = FitReport::new("average", "closed-form");
        report.converged = true;
        report.details.insert("removed".into(), 0.0);
        report.seconds = start.elapsed().as_secs_f64();
        Ok(Fitted {
            model: LinearModel::try_new(v, 0.0)?,
            report,
        })
    }
}

impl Fit for AveragingParams {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> Result<Fitted<LinearModel>> {
        self.fit_view(&data.view())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{DenseMatrix, Sign};

    #[test]
    fn the_average_of_signed_examples_weighted() {
        let x = DenseMatrix::from_rows(&[vec![1.0, 2.0], vec![3.0, -1.0], vec![0.5, 0.5]]).unwrap();
        let d = Dataset::binary("a", x, vec![Sign::Pos, Sign::Neg, Sign::Pos]).unwrap();
        let f = AveragingParams::new().fit(&d).unwrap();
        assert_eq!(
            f.model.weights(),
            [(1.0 - 3.0 + 0.5) / 3.0, (2.0 + 1.0 + 0.5) / 3.0]
        );
        assert_eq!(f.model.bias(), 0.0);
        // weight 2 on a row is that row twice
        let w = d.clone().with_weights(vec![2.0, 1.0, 1.0]).unwrap();
        let twice = d.select(&[0, 0, 1, 2]);
        let (a, b) = (
            AveragingParams::new().fit(&w).unwrap(),
            AveragingParams::new().fit(&twice).unwrap(),
        );
        for (p, q) in a.model.weights().iter().zip(b.model.weights()) {
            assert!((p - q).abs() < 1e-15);
        }
        let empty = d.select(&[]);
        assert!(AveragingParams::new().fit(&empty).is_err());
    }
}
