#![doc = include_str!("../README.md")]

// The compiled core of the Python package `bulwark` (`bulwark._native`): the learner registry,
// fits, model files, attacks and certificates of the library, on NumPy arrays and CSR
// matrices. The scikit-learn estimators and every input check scikit-learn's conventions ask
// for live in the pure-Python part (`python/bulwark`); this module trusts none of it and
// validates again what the library needs (shapes, finiteness, class indices), so a bad call
// raises a Python exception with the library's message, never crashes the interpreter.
//
// Every long computation (fits, scores, attacks, certificates) runs with the GIL released.
// No `unsafe` block is written here; PyO3's macros expand to `unsafe` FFI glue, which is why
// this crate has its own `[lints]` table.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use bulwark_adversary::CorruptionStats;
use bulwark_core::{
    AnyModel, Classifier, CsrMatrix, Dataset, DenseMatrix, Error, FeatureNames, Features,
    HyperParams, Learner, MissingMask, ParamKind, ParamValue, RowView, Scores, Sign, Targets,
};
use bulwark_models::{Encoding, ModelFile, Training, fingerprint, registry};
use numpy::ndarray::{Array2, ArrayView2};
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError};
use pyo3::prelude::*;
mod attack;

use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};

/// The Python exception for a library error: a class of `bulwark.exceptions` (each a
/// `ValueError`, `TypeError`, `OSError` … subclass as scikit-learn's conventions expect) with
/// the library's message. Stopping by Ctrl-C is `KeyboardInterrupt`.
pub(crate) fn py_err(e: Error) -> PyErr {
    let kind = match &e {
        Error::Input { .. } => "InputError",
        Error::InvalidParameter { .. } => "ParameterError",
        Error::ShapeMismatch { .. } => "ShapeError",
        Error::NonFinite { .. } => "NonFiniteError",
        Error::SingleClass { .. } => "SingleClassError",
        Error::UnknownDataset { .. } => "UnknownDatasetError",
        Error::NotFound { .. } => "NotFoundError",
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            "NotFoundError"
        }
        Error::Io { .. } => "FileError",
        Error::TooLarge { .. } => "TooLargeError",
        Error::Interrupted { .. } => return PyKeyboardInterrupt::new_err(e.to_string()),
        Error::Numerical { .. } => "NumericalError",
        _ => "BulwarkError",
    };
    raise(kind, e.to_string())
}

/// An exception of class `kind` of `bulwark.exceptions` with `message`.
pub(crate) fn raise(kind: &str, message: String) -> PyErr {
    Python::attach(|py| {
        match py
            .import("bulwark.exceptions")
            .and_then(|m| m.getattr(kind))
            .and_then(|c| c.call1((message,)))
        {
            Ok(v) => PyErr::from_value(v),
            Err(err) => err,
        }
    })
}

/// A `TypeError` subclass of the package (a parameter of the wrong type).
fn type_error(message: String) -> PyErr {
    raise("ParameterTypeError", message)
}

// ---------------------------------------------------------------------------------------------
// input

/// The feature matrix as Python hands it over: a 2-D float64 array (any layout; read in place
/// when C-contiguous) or CSR arrays `(data, indices, indptr, rows, cols)` with sorted,
/// duplicate-free column indices (the Python side calls `sort_indices`/`sum_duplicates`).
pub(crate) enum XIn<'py> {
    Dense(PyReadonlyArray2<'py, f64>),
    Csr {
        data: PyReadonlyArray1<'py, f64>,
        indices: PyReadonlyArray1<'py, i64>,
        indptr: PyReadonlyArray1<'py, i64>,
        rows: usize,
        cols: usize,
    },
}

impl<'py> XIn<'py> {
    pub(crate) fn extract(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(XIn::Dense(a));
        }
        if let Ok(t) = x.cast::<PyTuple>()
            && t.len() == 5
        {
            return Ok(XIn::Csr {
                data: t.get_item(0)?.extract()?,
                indices: t.get_item(1)?.extract()?,
                indptr: t.get_item(2)?.extract()?,
                rows: t.get_item(3)?.extract()?,
                cols: t.get_item(4)?.extract()?,
            });
        }
        Err(PyTypeError::new_err(
            "X must be a 2-D float64 NumPy array or CSR arrays (data, indices, indptr, rows, cols)",
        ))
    }
    /// Borrowed, `Send` slices of the arrays, for work with the GIL released.
    pub(crate) fn view(&self) -> PyResult<XView<'_>> {
        Ok(match self {
            XIn::Dense(a) => XView::Dense(a.as_array()),
            XIn::Csr {
                data,
                indices,
                indptr,
                rows,
                cols,
            } => {
                let s = |e: numpy::AsSliceError| PyTypeError::new_err(e.to_string());
                XView::Csr {
                    data: data.as_slice().map_err(s)?,
                    indices: indices.as_slice().map_err(s)?,
                    indptr: indptr.as_slice().map_err(s)?,
                    rows: *rows,
                    cols: *cols,
                }
            }
        })
    }
}

/// See [`XIn`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum XView<'a> {
    Dense(ArrayView2<'a, f64>),
    Csr {
        data: &'a [f64],
        indices: &'a [i64],
        indptr: &'a [i64],
        rows: usize,
        cols: usize,
    },
}

fn csr_error(msg: String) -> Error {
    Error::input(bulwark_core::Location::source("X"), msg)
}

impl XView<'_> {
    pub(crate) fn rows(&self) -> usize {
        match self {
            XView::Dense(a) => a.nrows(),
            XView::Csr { rows, .. } => *rows,
        }
    }
    pub(crate) fn cols(&self) -> usize {
        match self {
            XView::Dense(a) => a.ncols(),
            XView::Csr { cols, .. } => *cols,
        }
    }
    /// The CSR index arrays as `usize`, checked (the library's `CsrMatrix` checks the rest).
    fn csr_parts(&self) -> Result<(Vec<usize>, Vec<usize>), Error> {
        let XView::Csr {
            data,
            indices,
            indptr,
            rows,
            ..
        } = *self
        else {
            return Ok((Vec::new(), Vec::new()));
        };
        let conv = |v: &[i64], what: &str| -> Result<Vec<usize>, Error> {
            v.iter()
                .map(|&i| usize::try_from(i).map_err(|_| csr_error(format!("negative {what} {i}"))))
                .collect()
        };
        let ptr = conv(indptr, "CSR row pointer")?;
        let idx = conv(indices, "column index")?;
        if ptr.len() != rows + 1
            || idx.len() != data.len()
            || ptr.first() != Some(&0)
            || ptr.last() != Some(&idx.len())
            || ptr.windows(2).any(|w| w[0] > w[1])
        {
            return Err(csr_error(format!(
                "inconsistent CSR arrays ({} row pointers for {rows} rows, {} indices, {} values)",
                ptr.len(),
                idx.len(),
                data.len()
            )));
        }
        Ok((ptr, idx))
    }

    /// The library's feature matrix (a copy: `Dataset` owns its features), NaN cells read as
    /// missing (0 plus a mask) when `allow_missing`, else refused with the cell named.
    pub(crate) fn features(&self, allow_missing: bool) -> Result<(Features, MissingMask), Error> {
        let n = self.cols();
        let mut mask_ptr = vec![0usize];
        let mut mask_cols = Vec::new();
        let take = |mask_cols: &mut Vec<usize>, i: usize, j: usize, v: f64| -> Result<f64, Error> {
            if v.is_nan() && allow_missing {
                mask_cols.push(j);
                return Ok(0.0);
            }
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    location: bulwark_core::Location::source("X")
                        .line(i + 1)
                        .column(j + 1),
                    value: v.to_string(),
                });
            }
            Ok(v)
        };
        let features = match *self {
            XView::Dense(a) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, row) in a.rows().into_iter().enumerate() {
                    for (j, &v) in row.iter().enumerate() {
                        out.push(take(&mut mask_cols, i, j, v)?);
                    }
                    mask_ptr.push(mask_cols.len());
                }
                Features::Dense(DenseMatrix::try_new(a.nrows(), n, out)?)
            }
            XView::Csr { data, rows, .. } => {
                let (ptr, idx) = self.csr_parts()?;
                let mut values = Vec::with_capacity(data.len());
                for i in 0..rows {
                    for k in ptr[i]..ptr[i + 1] {
                        values.push(take(&mut mask_cols, i, idx[k], data[k])?);
                    }
                    mask_ptr.push(mask_cols.len());
                }
                Features::Sparse(CsrMatrix::try_new(rows, n, ptr, idx, values)?)
            }
        };
        let mask = MissingMask::try_new(n, mask_ptr, mask_cols)?;
        Ok((features, mask))
    }

    /// Calls `f(i, row)` for every row in the model's input space: the stored scaling applied
    /// (when the model file has one), NaN cells deleted (0). A C-contiguous dense array without
    /// NaN and without scaling is read in place.
    pub(crate) fn for_each_row(
        &self,
        file: &ModelFile,
        mut f: impl FnMut(usize, RowView<'_>),
    ) -> Result<(), Error> {
        let n = self.cols();
        if n != file.n_features {
            return Err(Error::shape(
                "model vs X: feature count",
                file.n_features,
                n,
            ));
        }
        let scaler = file.scaler.as_ref();
        let mut buf = vec![0.0; n];
        match *self {
            XView::Dense(a) => {
                let flat = a.as_slice().filter(|_| n > 0);
                for (i, row) in a.rows().into_iter().enumerate() {
                    let direct = flat
                        .map(|s| &s[i * n..(i + 1) * n])
                        .filter(|r| scaler.is_none() && !r.iter().any(|v| v.is_nan()));
                    match direct {
                        Some(r) => f(i, RowView::Dense(r)),
                        None => {
                            for (j, (&v, b)) in row.iter().zip(buf.iter_mut()).enumerate() {
                                *b = input_value(scaler, j, v);
                            }
                            f(i, RowView::Dense(&buf));
                        }
                    }
                }
            }
            XView::Csr { data, rows, .. } => {
                let (ptr, idx) = self.csr_parts()?;
                if let Some(&j) = idx.iter().find(|&&j| j >= n) {
                    return Err(csr_error(format!("column index {j} >= {n} columns")));
                }
                let mut vals = Vec::new();
                for i in 0..rows {
                    let (lo, hi) = (ptr[i], ptr[i + 1]);
                    if scaler.is_some() {
                        // the shift maps a stored 0 elsewhere: a dense row
                        buf.iter_mut().enumerate().for_each(|(j, b)| {
                            *b = input_value(scaler, j, 0.0);
                        });
                        for k in lo..hi {
                            buf[idx[k]] = input_value(scaler, idx[k], data[k]);
                        }
                        f(i, RowView::Dense(&buf));
                    } else {
                        vals.clear();
                        vals.extend(data[lo..hi].iter().map(|&v| input_value(None, 0, v)));
                        f(
                            i,
                            RowView::Sparse {
                                indices: &idx[lo..hi],
                                values: &vals,
                            },
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

/// One cell in the model's input space: scaled, a missing (NaN) cell deleted.
fn input_value(scaler: Option<&bulwark_data::Scaler>, j: usize, v: f64) -> f64 {
    if v.is_nan() {
        return 0.0;
    }
    match scaler {
        Some(s) => (v - s.shift[j]) * s.factor[j],
        None => v,
    }
}

// ---------------------------------------------------------------------------------------------
// the registry

/// Every registered learner: `name`, `title`, `about`, `multiclass`, `uses_budget` and its
/// parameters (`name`, `kind`, `default` as typed on the command line or `None`, `help`).
#[pyfunction]
fn learners(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for l in registry::learners() {
        let d = PyDict::new(py);
        d.set_item("name", l.name())?;
        d.set_item("title", l.title())?;
        d.set_item("about", l.about())?;
        d.set_item("multiclass", l.multiclass())?;
        d.set_item("uses_budget", l.uses_budget())?;
        let ps = PyList::empty(py);
        for p in l.params() {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            let (kind, switch_value) = match p.kind {
                ParamKind::Float => ("float", None),
                ParamKind::Count => ("count", None),
                ParamKind::Text => ("text", None),
                ParamKind::Switch { value } => ("switch", Some(value)),
                ParamKind::FeatureValues => ("feature_values", None),
            };
            pd.set_item("kind", kind)?;
            pd.set_item("switch_value", switch_value)?;
            pd.set_item("default", p.default)?;
            pd.set_item("help", p.help)?;
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The learner's parameters from a Python dict (`None` values left out: the registry's
/// default). Types are checked against the registry's kinds (a `TypeError` names the
/// parameter); values are checked by the learner.
fn hyper_params(learner: &dyn Learner, params: &Bound<'_, PyDict>) -> PyResult<HyperParams> {
    let mut hp = HyperParams::new();
    for (k, v) in params.iter() {
        let name: String = k.extract()?;
        if v.is_none() {
            continue;
        }
        let Some(spec) = learner.params().iter().find(|s| s.name == name) else {
            let takes: Vec<&str> = learner.params().iter().map(|s| s.name).collect();
            return Err(py_err(Error::param(
                &name,
                v.repr()?.to_string(),
                format!(
                    "a parameter of `{}` (it takes: {})",
                    learner.name(),
                    takes.join(", ")
                ),
            )));
        };
        let wrong = |expected: &str| -> PyResult<HyperParams> {
            Err(type_error(format!(
                "parameter `{name}` = {}: expected {expected}",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            )))
        };
        let is_bool = v.is_instance_of::<PyBool>();
        match spec.kind {
            ParamKind::Float => match (is_bool, v.extract::<f64>()) {
                (false, Ok(x)) => hp.set(&name, ParamValue::Float(x)),
                _ => return wrong("a number"),
            },
            ParamKind::Count => {
                let integral = !is_bool && !v.is_instance_of::<PyFloat>();
                match (integral, v.extract::<i128>()) {
                    (true, Ok(k)) => match u64::try_from(k) {
                        Ok(k) => hp.set(&name, ParamValue::Count(k)),
                        Err(_) => {
                            return Err(py_err(Error::param(&name, k, "a non-negative integer")));
                        }
                    },
                    _ => return wrong("an integer"),
                }
            }
            ParamKind::Text => match v.cast::<PyString>() {
                Ok(s) => hp.set(&name, ParamValue::Text(s.to_str()?.to_string())),
                Err(_) => return wrong("a string"),
            },
            ParamKind::Switch { .. } => match v.extract::<bool>() {
                Ok(b) if is_bool => hp.set(&name, ParamValue::Bool(b)),
                _ => return wrong("True or False"),
            },
            ParamKind::FeatureValues => {
                if let Ok(s) = v.cast::<PyString>() {
                    hp.set(&name, ParamValue::Text(s.to_str()?.to_string()));
                } else if let Ok(x) = v.extract::<Vec<f64>>() {
                    hp.set(&name, ParamValue::Text("given".into()));
                    hp.set("feature_values", ParamValue::Floats(x));
                } else {
                    return wrong("'uniform', 'mi', a file name or one value per feature");
                }
            }
        }
    }
    Ok(hp)
}

/// The hyper-parameters as Python values (`feature_values` as a list).
fn params_to_py<'py>(py: Python<'py>, hp: &HyperParams) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in hp.iter() {
        match v {
            ParamValue::Bool(b) => d.set_item(k, b)?,
            ParamValue::Count(c) => d.set_item(k, c)?,
            ParamValue::Float(x) => d.set_item(k, x)?,
            ParamValue::Text(t) => d.set_item(k, t)?,
            ParamValue::Floats(v) => d.set_item(k, v.clone())?,
        }
    }
    Ok(d)
}

/// Runs `f` in a pool of `threads` workers (the CLI's `--threads`), else in the global pool
/// (every core, or `RAYON_NUM_THREADS`).
pub(crate) fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    match threads {
        None => f(),
        Some(0) => Err(Error::param(
            "threads",
            0,
            "at least 1 (or None: every core)",
        )),
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| {
                Error::param(
                    "threads",
                    t,
                    format!("a thread count the system allows ({e})"),
                )
            })?
            .install(f),
    }
}

/// Trains the registered learner `algo` on `x` (see [`XIn`]) with class indices `y` into
/// `classes` (their names, as the model file records them), optional example weights, the
/// parameters `params` and feature names. NaN cells are missing (deleted) when
/// `allow_missing`. The GIL is released during the fit; Ctrl-C stops it at the solver's next
/// iteration (`KeyboardInterrupt`).
#[pyfunction]
#[pyo3(signature = (algo, x, y, classes, params, sample_weight=None, feature_names=None, threads=None, allow_missing=false))]
fn fit(
    py: Python<'_>,
    algo: &str,
    x: &Bound<'_, PyAny>,
    y: PyReadonlyArray1<'_, i64>,
    classes: Vec<String>,
    params: &Bound<'_, PyDict>,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    feature_names: Option<Vec<String>>,
    threads: Option<usize>,
    allow_missing: bool,
) -> PyResult<Model> {
    let learner = registry::find(algo).map_err(py_err)?;
    let given = hyper_params(learner, params)?;
    let xin = XIn::extract(x)?;
    let xv = xin.view()?;
    let y = y
        .as_slice()
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let w = match &sample_weight {
        Some(w) => Some(
            w.as_slice()
                .map_err(|e| PyTypeError::new_err(e.to_string()))?,
        ),
        None => None,
    };
    let interrupted = AtomicBool::new(false);
    let work = || -> Result<Model, Error> {
        let data = dataset(xv, y, &classes, w, feature_names, learner, allow_missing)?;
        let fp = fingerprint(&data);
        // every iteration that reports progress is a safe point: Ctrl-C stops the solver there
        let mut progress = |_: &str| {
            if interrupted.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let (mut fitted, hyper) = with_threads(threads, || {
            registry::train_with_params(learner, &data, &given, Some(&mut progress))
        })?;
        if data.n_missing() > 0 {
            let d = &mut fitted.report.details;
            d.insert("missing_dropped_records".into(), 0.0);
            d.insert("missing_deleted_cells".into(), data.n_missing() as f64);
        }
        let training_error = fitted.model.error_rate(&data)?;
        let training = Training {
            data: "python".into(),
            task: data.name().to_string(),
            pair: None,
            positive: None,
            rows: data.len(),
            feature_names: data.feature_names().stored(),
            classes: data.class_names().to_vec(),
            scale: None,
            training_error,
            fingerprint: fp,
        };
        let mut file = ModelFile::new(
            learner.name(),
            &fitted.model,
            None,
            hyper,
            training,
            fitted.report,
        );
        file.corruption_stats = Some(CorruptionStats::fit(&data)?);
        Ok(Model {
            file,
            model: fitted.model,
        })
    };
    let result = run_interruptible(py, &interrupted, work);
    if interrupted.load(Ordering::Relaxed) {
        return Err(PyKeyboardInterrupt::new_err(format!(
            "stopped training {algo} (Ctrl-C); no model"
        )));
    }
    result.map_err(py_err)
}

/// Runs `work` on a worker thread with the GIL released while this (the calling) thread waits
/// for it and, between waits, lets Python handle signals: Ctrl-C (`SIGINT`'s handler raising
/// `KeyboardInterrupt`, which only the main thread runs) sets `interrupted`, which the work reads
/// at its safe points. The result arrives through a channel, so a fit ends without polling delay.
fn run_interruptible<T: Send>(
    py: Python<'_>,
    interrupted: &AtomicBool,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        s.spawn(move || {
            // a panic in the library becomes a typed error, not a crash of the interpreter
            let r =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "unknown panic".into());
                    Err(Error::Numerical {
                        algorithm: "bulwark".into(),
                        message: format!("panicked: {msg}"),
                    })
                });
            let _ = tx.send(r);
        });
        let mut rx = rx;
        loop {
            let (got, back) = py.detach(move || {
                let got = rx.recv_timeout(std::time::Duration::from_millis(100));
                (got, rx)
            });
            rx = back;
            match got {
                Ok(r) => return r,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if py.check_signals().is_err() {
                        interrupted.store(true, Ordering::Relaxed);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Numerical {
                        algorithm: "bulwark".into(),
                        message: "the worker thread ended without a result".into(),
                    });
                }
            }
        }
    })
}

/// The library's data set for a fit: two classes are a binary task (`classes[1]` is +1), more
/// are kept as such for a multiclass learner and refused by a binary one.
fn dataset(
    x: XView<'_>,
    y: &[i64],
    classes: &[String],
    weights: Option<&[f64]>,
    feature_names: Option<Vec<String>>,
    learner: &dyn Learner,
    allow_missing: bool,
) -> Result<Dataset, Error> {
    if y.len() != x.rows() {
        return Err(Error::shape("X rows vs y labels", x.rows(), y.len()));
    }
    let k = classes.len();
    if let Some(&c) = y.iter().find(|&&c| c < 0 || c as usize >= k) {
        return Err(Error::param("y", c, format!("class indices in 0..{k}")));
    }
    let targets = match k {
        0 | 1 => {
            return Err(Error::SingleClass {
                context: "y (one class)".into(),
                class: classes.first().cloned().unwrap_or_default(),
                count: y.len(),
            });
        }
        2 => Targets::Binary(
            y.iter()
                .map(|&c| if c == 1 { Sign::Pos } else { Sign::Neg })
                .collect(),
        ),
        _ if learner.multiclass() => Targets::Multiclass(y.iter().map(|&c| c as usize).collect()),
        _ => {
            return Err(Error::param(
                "y",
                format!("{k} classes"),
                format!(
                    "two classes. Only binary classification is supported by `{}` (multiclass learners: {})",
                    learner.name(),
                    registry::learners()
                        .iter()
                        .filter(|l| l.multiclass())
                        .map(|l| l.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    };
    let (features, mask) = x.features(allow_missing)?;
    let names = match feature_names {
        Some(v) => FeatureNames::Given(v),
        None => FeatureNames::Default(x.cols()),
    };
    let mut data = Dataset::try_new("X", features, targets, names, classes.to_vec())?;
    if let Some(w) = weights {
        data = data.with_weights(w.to_vec())?;
    }
    if mask.count() > 0 {
        data = data.with_missing(mask)?;
    }
    Ok(data)
}

// ---------------------------------------------------------------------------------------------
// models

/// A trained model and its model file (exactly the CLI's `bulwark train` output).
#[pyclass(frozen, module = "bulwark._native", name = "Model")]
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) file: ModelFile,
    pub(crate) model: AnyModel,
}

fn encoding_of(name: &str) -> PyResult<Encoding> {
    match name {
        "json" => Ok(Encoding::Json),
        "bin" => Ok(Encoding::Binary),
        other => Err(py_err(Error::param(
            "encoding",
            other,
            "`json` (text) or `bin` (binary)",
        ))),
    }
}

#[pymethods]
impl Model {
    /// The learner's registry name.
    #[getter]
    fn algorithm(&self) -> &str {
        &self.file.algorithm
    }
    /// Features the model expects.
    #[getter]
    fn n_features(&self) -> usize {
        self.file.n_features
    }
    /// Class names (binary: index 0 is −1, index 1 is +1).
    #[getter]
    fn classes(&self) -> Vec<String> {
        self.file.training.classes.clone()
    }
    /// The feature names stored in the file (`None`: the defaults `x1, …, xn`).
    #[getter]
    fn feature_names(&self) -> Option<Vec<String>> {
        self.file.feature_names().given().map(<[String]>::to_vec)
    }
    /// `linear`, `multiclass-linear`, `kernel` or `ensemble`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.model.kind()
    }
    /// Scores per example: 1 for binary models, the class count for multiclass ones.
    #[getter]
    fn n_outputs(&self) -> usize {
        self.model.n_outputs()
    }
    /// Whether the file stores a scaling applied before the model (`bulwark train --scale`).
    #[getter]
    fn scaled(&self) -> bool {
        self.file.scaler.is_some()
    }
    /// The hyper-parameters, defaults included.
    #[getter]
    fn hyper_parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        params_to_py(py, &self.file.hyper_parameters)
    }
    /// The linear weights and bias (binary linear models), else `None`.
    #[getter]
    fn linear(&self) -> Option<(Vec<f64>, f64)> {
        self.model
            .as_linear()
            .map(|m| (m.weights().to_vec(), m.bias()))
    }
    /// The deletion budget `N` the model was trained for, if its learner takes one.
    #[getter]
    fn budget(&self) -> Option<f64> {
        self.file.budget()
    }
    /// How the solver that answered solved its normal equations (the DSX LP's structured IPM:
    /// `feature-space`, `example-space` or `sparse-ldl`), when it has them. Not stored in model
    /// files: `None` for a model read from one.
    #[getter]
    fn normal_equations(&self) -> Option<String> {
        self.file.report.normal_equations.clone()
    }
    /// Why the solver that answered stopped short of its tolerance, when it says. Not stored in
    /// model files: `None` for a model read from one.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.file.report.stopped.clone()
    }
    /// The fit report, the training record and the whole file as JSON text.
    fn to_json(&self) -> PyResult<String> {
        let bytes = self.file.encode(Encoding::Json).map_err(py_err)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
    /// Scores of every row: shape `(rows,)` for binary models, `(rows, classes)` otherwise.
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let xin = XIn::extract(x)?;
        let xv = xin.view()?;
        let k = self.model.n_outputs();
        let scores = py
            .detach(|| -> Result<Vec<f64>, Error> {
                let mut out = vec![0.0; xv.rows() * k];
                xv.for_each_row(&self.file, |i, row| {
                    self.model.scores_into(row, &mut out[i * k..(i + 1) * k]);
                })?;
                Ok(out)
            })
            .map_err(py_err)?;
        if k == 1 {
            Ok(scores.into_pyarray(py).into_any())
        } else {
            let a = Array2::from_shape_vec((xv.rows(), k), scores)
                .map_err(|e| PyTypeError::new_err(e.to_string()))?;
            Ok(a.into_pyarray(py).into_any())
        }
    }
    /// Predicted class indices (binary: a score of exactly 0 is class 0, DSX eq. (1)).
    fn predict_index<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let xin = XIn::extract(x)?;
        let xv = xin.view()?;
        let out = py
            .detach(|| -> Result<Vec<i64>, Error> {
                let mut out = vec![0i64; xv.rows()];
                xv.for_each_row(&self.file, |i, row| {
                    out[i] = self.model.predict_class(row) as i64;
                })?;
                Ok(out)
            })
            .map_err(py_err)?;
        Ok(out.into_pyarray(py).into_any())
    }
    /// The model file's bytes: `json` (text) or `bin` (binary), exactly the CLI's formats.
    fn to_bytes<'py>(&self, py: Python<'py>, encoding: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.file.encode(encoding_of(encoding)?).map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }
    /// Reads a model file's bytes in either encoding (`name` appears in errors).
    #[staticmethod]
    #[pyo3(signature = (data, name="<bytes>"))]
    fn from_bytes(data: &[u8], name: &str) -> PyResult<Model> {
        let path = PathBuf::from(name);
        let file = ModelFile::decode(data, &path).map_err(py_err)?;
        let model = file.validate(&path).map_err(py_err)?;
        Ok(Model { file, model })
    }
    /// Writes the model file atomically, in the encoding its extension names (`.json`, `.bin`).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.file.write(&path)).map_err(py_err)
    }
    /// Reads a model file written by `bulwark train` or [`Model::save`].
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Model> {
        let (file, model) = py.detach(|| ModelFile::read(&path)).map_err(py_err)?;
        Ok(Model { file, model })
    }
    fn __repr__(&self) -> String {
        format!(
            "Model(algorithm={:?}, kind={:?}, n_features={})",
            self.file.algorithm,
            self.model.kind(),
            self.file.n_features
        )
    }
}

/// The compiled core of `bulwark`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_FORMAT_VERSION", bulwark_models::FORMAT_VERSION)?;
    m.add_function(wrap_pyfunction!(learners, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_class::<Model>()?;
    attack::register(m)?;
    Ok(())
}
