//! Attacks, certificates and training-set contamination on Python data (GIL released).

use bulwark_adversary::{
    AimedOutliers, Attack, CertifyOptions, LabelNoise, MaliciousNoise, NormMatchedOutliers,
    RolrOutliers, certify_with,
};
use bulwark_core::{Contamination, Dataset, Error, Features, Targets, rng_from_seed};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::{Model, XIn, XView, py_err};

/// The data set of `x` (NaN = missing) with binary labels `y` (class indices 0/1) into
/// `classes`.
fn binary_data(x: XView<'_>, y: &[i64], classes: &[String]) -> Result<Dataset, Error> {
    if y.len() != x.rows() {
        return Err(Error::shape("X rows vs y labels", x.rows(), y.len()));
    }
    if classes.len() != 2 {
        return Err(Error::param(
            "classes",
            classes.len(),
            "two classes (attacks, certificates and contamination are binary)",
        ));
    }
    if let Some(&c) = y.iter().find(|&&c| !(0..2).contains(&c)) {
        return Err(Error::param("y", c, "class indices 0 or 1"));
    }
    let (features, mask) = x.features(true)?;
    let targets = Targets::Binary(
        y.iter()
            .map(|&c| {
                if c == 1 {
                    bulwark_core::Sign::Pos
                } else {
                    bulwark_core::Sign::Neg
                }
            })
            .collect(),
    );
    let n = x.cols();
    let data = Dataset::try_new(
        "X",
        features,
        targets,
        bulwark_core::FeatureNames::Default(n),
        classes.to_vec(),
    )?;
    if mask.count() > 0 {
        data.with_missing(mask)
    } else {
        Ok(data)
    }
}

/// Features back to Python: a 2-D array, or CSR arrays `(data, indices, indptr, rows, cols)`.
fn features_to_py<'py>(py: Python<'py>, f: Features) -> PyResult<Bound<'py, PyAny>> {
    match f {
        Features::Dense(d) => {
            let (r, c) = (d.rows(), d.cols());
            let a = Array2::from_shape_vec((r, c), d.into_vec())
                .map_err(|e| PyTypeError::new_err(e.to_string()))?;
            Ok(a.into_pyarray(py).into_any())
        }
        Features::Sparse(s) => {
            let (r, c) = (s.rows(), s.cols());
            let to_i64 = |v: &[usize]| v.iter().map(|&i| i as i64).collect::<Vec<_>>();
            let t = PyTuple::new(
                py,
                [
                    s.values().to_vec().into_pyarray(py).into_any(),
                    to_i64(s.indices()).into_pyarray(py).into_any(),
                    to_i64(s.indptr()).into_pyarray(py).into_any(),
                    r.into_pyobject(py)?.into_any(),
                    c.into_pyobject(py)?.into_any(),
                ],
            )?;
            Ok(t.into_any())
        }
    }
}

fn labels_of(data: &Dataset) -> Vec<i64> {
    (0..data.len())
        .map(|i| data.targets().class_index(i) as i64)
        .collect()
}

/// Runs the test-time attack `kind` (`greedy-delete`, `greedy-corrupt`, `random-delete`,
/// `exact-delete`, `uniform-noise`, `none`) with budget `N` on `(x, y)` against `model`, in
/// the model's input space (its stored scaling applied; the attacked data are mapped back).
/// Values default to those the model was trained with. Returns the attacked features,
/// the number of features touched and the examples whose exact search hit the node limit.
#[pyfunction]
#[pyo3(signature = (model, x, y, kind, budget, seed=0, values=None, node_limit=None))]
pub(crate) fn attack<'py>(
    py: Python<'py>,
    model: &Model,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    kind: &str,
    budget: f64,
    seed: u64,
    values: Option<Vec<f64>>,
    node_limit: Option<u64>,
) -> PyResult<(Bound<'py, PyAny>, usize, usize)> {
    let xin = XIn::extract(x)?;
    let xv = xin.view()?;
    let y = y
        .as_slice()
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let file = &model.file;
    let out = py
        .detach(|| -> Result<_, Error> {
            let raw = binary_data(xv, y, &file.training.classes)?;
            let data = file.input(&raw)?;
            let mut a =
                Attack::parse(kind)?.with_values(values.unwrap_or_else(|| file.budget_values()))?;
            if let Some(k) = node_limit {
                a = a.with_node_limit(k);
            }
            if let Some(s) = &file.corruption_stats {
                a = a.with_corruption(s.clone());
            }
            let mut rng = rng_from_seed(seed);
            let outcome = match model.model.as_linear() {
                Some(m) => a.run(m, &data, budget, &mut rng)?,
                None => a.run_model_free(model.model.kind(), &data, budget, &mut rng)?,
            };
            let mut features = outcome.data.features().clone();
            if let Some(s) = &file.scaler {
                // back to the caller's space: x = x' / factor + shift
                features.map_in_place(|j, v| v / s.factor[j] + s.shift[j])?;
            }
            Ok((features, outcome.touched, outcome.incomplete))
        })
        .map_err(py_err)?;
    Ok((features_to_py(py, out.0)?, out.1, out.2))
}

/// The certified robust error of a binary linear `model` on `(x, y)` under deletion with
/// budget `N` (values: the model's by default): the whole certificate as JSON text.
#[pyfunction]
#[pyo3(signature = (model, x, y, budget, values=None, exact=true, node_limit=None))]
pub(crate) fn certify<'py>(
    py: Python<'py>,
    model: &Model,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    budget: f64,
    values: Option<Vec<f64>>,
    exact: bool,
    node_limit: Option<u64>,
) -> PyResult<String> {
    let xin = XIn::extract(x)?;
    let xv = xin.view()?;
    let y = y
        .as_slice()
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let file = &model.file;
    py.detach(|| -> Result<String, Error> {
        let linear = model.model.require_linear("a deletion certificate")?;
        let raw = binary_data(xv, y, &file.training.classes)?;
        let data = file.input(&raw)?;
        let values = values.unwrap_or_else(|| file.budget_values());
        let b = bulwark_adversary::AttackBudget::try_new(values, budget)?;
        let mut options = CertifyOptions {
            exact,
            ..CertifyOptions::default()
        };
        if let Some(k) = node_limit {
            options.node_limit = k;
        }
        let c = certify_with(linear, &data, &b, &options)?;
        serde_json::to_string(&c).map_err(|e| Error::Numerical {
            algorithm: "certificate".into(),
            message: e.to_string(),
        })
    })
    .map_err(py_err)
}

/// Contaminates the binary training set `(x, y)` with the simulator `kind` (`label-noise`,
/// `malicious`, `rolr-outliers`, `norm-matched-outliers`, `aimed-outliers`) whose fields are
/// the JSON object `spec` (the library's serde form). Returns the contaminated features, the
/// class indices and the indices of the corrupted examples.
#[pyfunction]
#[pyo3(signature = (kind, spec, x, y, classes, seed=0))]
pub(crate) fn contaminate<'py>(
    py: Python<'py>,
    kind: &str,
    spec: &str,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, i64>,
    classes: Vec<String>,
    seed: u64,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Vec<usize>)> {
    let xin = XIn::extract(x)?;
    let xv = xin.view()?;
    let y = y
        .as_slice()
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let bad = |e: serde_json::Error| Error::param(kind, spec, format!("its fields ({e})"));
    let (features, labels, corrupted) = py
        .detach(|| -> Result<_, Error> {
            let data = binary_data(xv, y, &classes)?;
            let sim: Box<dyn Contamination> = match kind {
                "label-noise" => Box::new(serde_json::from_str::<LabelNoise>(spec).map_err(bad)?),
                "malicious" => Box::new(serde_json::from_str::<MaliciousNoise>(spec).map_err(bad)?),
                "rolr-outliers" => {
                    Box::new(serde_json::from_str::<RolrOutliers>(spec).map_err(bad)?)
                }
                "norm-matched-outliers" => {
                    Box::new(serde_json::from_str::<NormMatchedOutliers>(spec).map_err(bad)?)
                }
                "aimed-outliers" => {
                    Box::new(serde_json::from_str::<AimedOutliers>(spec).map_err(bad)?)
                }
                other => {
                    return Err(Error::param(
                        "contamination",
                        other,
                        "one of label-noise, malicious, rolr-outliers, norm-matched-outliers, aimed-outliers",
                    ));
                }
            };
            let mut rng = rng_from_seed(seed);
            let (out, idx) = sim.contaminate(&data, &mut rng)?;
            let labels = labels_of(&out);
            Ok((out.features().clone(), labels, idx))
        })
        .map_err(py_err)?;
    Ok((
        features_to_py(py, features)?,
        labels.into_pyarray(py).into_any(),
        corrupted,
    ))
}

/// Features, class indices, class names and feature names of a loaded data set.
type LoadedData<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Vec<String>,
    Option<Vec<String>>,
);

/// Loads a data set (a built-in name or a file) as the CLI does: features (dense array or CSR
/// arrays), class indices, class names, feature names (`None`: the defaults).
#[pyfunction]
#[pyo3(signature = (name, data_dir=None))]
pub(crate) fn load_dataset<'py>(
    py: Python<'py>,
    name: &str,
    data_dir: Option<std::path::PathBuf>,
) -> PyResult<LoadedData<'py>> {
    let loaded = py
        .detach(|| {
            let options = bulwark_data::ReadOptions {
                missing: bulwark_data::MissingPolicy::Delete,
                ..bulwark_data::ReadOptions::default()
            };
            bulwark_data::load_with(name, data_dir.as_deref(), &options).map(|l| l.data)
        })
        .map_err(py_err)?;
    let labels = labels_of(&loaded);
    let classes = loaded.class_names().to_vec();
    let names = loaded.feature_names().given().map(<[String]>::to_vec);
    let mut features = loaded.features().clone();
    if let Some(mask) = loaded.missing() {
        // missing cells back to NaN, the package's convention
        for i in 0..mask.rows() {
            for &j in mask.row(i) {
                if let Features::Dense(d) = &mut features {
                    d.row_mut(i)[j] = f64::NAN;
                }
            }
        }
    }
    Ok((
        features_to_py(py, features)?,
        labels.into_pyarray(py).into_any(),
        classes,
        names,
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(attack, m)?)?;
    m.add_function(wrap_pyfunction!(certify, m)?)?;
    m.add_function(wrap_pyfunction!(contaminate, m)?)?;
    m.add_function(wrap_pyfunction!(load_dataset, m)?)?;
    Ok(())
}
