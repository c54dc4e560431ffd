//! External reference points from scikit-learn (an optional dependency): logistic regression and
//! `SGDClassifier(loss="modified_huber")` on the same training, validation and test parts as our
//! learners, each with its regularisation chosen on the validation part ([`Sklearn::run`]); and,
//! for records with missing cells, mean imputation + `LinearSVC` / `LogisticRegression` (each
//! tuned by `GridSearchCV`) and `HistGradientBoostingClassifier` with its native missing values
//! ([`Sklearn::missing_references`]).
//!
//! The interpreter is `BULWARK_PYTHON` when set, else `python3`, else the virtual environment
//! the benchmarks install (`target/bench/venv-sklearn/bin/python`); it must import `sklearn`.
//! The parts go to the child process on its standard input as raw little-endian `f64`s after a
//! one-line JSON header, so nothing is written to disk.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use bulwark_core::{Dataset, Error};
use serde::{Deserialize, Serialize};

/// The keys and titles of the references, in table order.
pub const REFERENCES: [(&str, &str); 2] = [
    ("sklearn_lr", "sklearn LogisticRegression"),
    ("sklearn_mhuber", "sklearn SGD (modified Huber)"),
];

/// What every script shares: the imports, `parts_of` (the parts of a request as `(x, y)`
/// pairs) and, after the script's `answer(head, raw)`, the loop serving requests until standard
/// input closes.
const PRELUDE: &str = r#"
import sys, json, warnings, traceback
import numpy as np
def parts_of(head, raw):
    d, off, parts = head["d"], 0, []
    for m in head["sizes"]:
        x = raw[off:off + m * d].reshape(m, d); off += m * d
        y = raw[off:off + m]; off += m
        parts.append((x, y))
    return parts
"#;
const SERVE: &str = r#"
inp = sys.stdin.buffer
while True:
    line = inp.readline()
    if not line:
        break
    try:
        head = json.loads(line)
        raw = np.frombuffer(inp.read(head["bytes"]), dtype="<f8")
        out = answer(head, raw)
    except Exception:
        out = {"error": traceback.format_exc()}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"#;

/// The script: reads the header and the parts, selects `C` (LR) and `alpha` (SGD) on the
/// validation part (ties to the first, the most regularised), prints the test errors as JSON.
/// Warnings are silenced: nobody drains its standard error while it serves.
///
/// It serves requests until its standard input closes: a request is a one-line JSON header
/// (with the payload's length in `bytes`) and the payload; the answer is one JSON line, either the
/// references or `{"error": ...}` (so the process, which imports scikit-learn once — about 1.5 s —
/// is reused by unit after unit).
const SCRIPT: &str = r#"
from sklearn.linear_model import LogisticRegression, SGDClassifier
warnings.simplefilter("ignore")
def pick(models, xt, yt, xv, yv, xs, ys):
    best = None
    for g, mk in models:
        h = mk().fit(xt, yt)
        v = float(np.mean(h.predict(xv) != yv))
        if best is None or v < best[0]:
            best = (v, g, h)
    return {"error": float(np.mean(best[2].predict(xs) != ys)), "chosen": best[1]}
def answer(head, raw):
    parts = parts_of(head, raw)
    (xt, yt), (xv, yv), (xs, ys) = parts
    seed = head["seed"]
    return {
        "sklearn_lr": pick([(c, lambda c=c: LogisticRegression(C=c, fit_intercept=False, max_iter=2000)) for c in head["lr_c"]], xt, yt, xv, yv, xs, ys),
        "sklearn_mhuber": pick([(a, lambda a=a: SGDClassifier(loss="modified_huber", alpha=a, fit_intercept=False, max_iter=2000, tol=1e-4, random_state=seed)) for a in head["sgd_alpha"]], xt, yt, xv, yv, xs, ys),
    }
"#;

/// The `C` grid of LogisticRegression (most regularised first) and SGD's `alpha` grid.
pub const LR_C: [f64; 4] = [0.01, 0.1, 1.0, 10.0];
/// SGD's `alpha` grid (most regularised first).
pub const SGD_ALPHA: [f64; 4] = [1e-1, 1e-2, 1e-3, 1e-4];

/// One reference's test error and chosen regularisation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// Clean test error.
    pub error: f64,
    /// The chosen `C` or `alpha`.
    pub chosen: f64,
}

/// Both references on one split.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct References {
    /// `LogisticRegression`.
    pub sklearn_lr: Reference,
    /// `SGDClassifier(loss="modified_huber")`.
    pub sklearn_mhuber: Reference,
}

impl References {
    /// The references in [`REFERENCES`] order.
    pub fn errors(&self) -> [f64; 2] {
        [self.sklearn_lr.error, self.sklearn_mhuber.error]
    }
}

fn imports_sklearn(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import sklearn"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An interpreter that imports scikit-learn, or why there is none.
pub fn find_python() -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    let env = std::env::var_os("BULWARK_PYTHON").map(PathBuf::from);
    let candidates = env.into_iter().chain([
        PathBuf::from("python3"),
        PathBuf::from("target/bench/venv-sklearn/bin/python"),
    ]);
    for p in candidates {
        if imports_sklearn(&p) {
            return Ok(p);
        }
        tried.push(p.display().to_string());
    }
    Err(format!(
        "no Python that imports scikit-learn (tried {}; set BULWARK_PYTHON, or run `cargo xtask bench guru`, which installs one)",
        tried.join(", ")
    ))
}

/// Appends `d`'s rows (its missing cells as NaN, scikit-learn's missing value, when
/// `missing_as_nan`; else the 0 they hold) and then its labels, as little-endian `f64`s.
fn push_part(buf: &mut Vec<u8>, d: &Dataset, missing_as_nan: bool) -> Result<(), Error> {
    let n = d.n_features();
    let mut row = vec![0.0; n];
    for i in 0..d.len() {
        d.row(i).to_dense_into(&mut row);
        if let (true, Some(m)) = (missing_as_nan, d.missing()) {
            for &j in m.row(i) {
                row[j] = f64::NAN;
            }
        }
        row.iter()
            .for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
    }
    for y in d.binary_labels()? {
        buf.extend_from_slice(&y.as_f64().to_le_bytes());
    }
    Ok(())
}

fn failure(message: String) -> Error {
    Error::Numerical {
        algorithm: "scikit-learn reference".into(),
        message,
    }
}

/// A request: `head` with the feature count `d`, the part sizes `sizes` and the payload length
/// `bytes` added, a newline, then every part (rows, then labels).
fn request(
    mut head: serde_json::Value,
    parts: &[&Dataset],
    missing_as_nan: bool,
) -> Result<Vec<u8>, Error> {
    let d = parts.first().map_or(0, |p| p.n_features());
    // each row's features and its label, as f64
    let bytes = 8 * (d + 1) * parts.iter().map(|p| p.len()).sum::<usize>();
    head["d"] = d.into();
    head["sizes"] = parts.iter().map(|p| p.len()).collect::<Vec<_>>().into();
    head["bytes"] = bytes.into();
    let mut request = head.to_string().into_bytes();
    request.push(b'\n');
    let start = request.len();
    request.reserve(bytes);
    for part in parts {
        push_part(&mut request, part, missing_as_nan)?;
    }
    if request.len() - start != bytes {
        return Err(failure(
            "the parts differ in their number of features".into(),
        ));
    }
    Ok(request)
}

/// The `C` grid of the imputation references (the most regular first).
pub const MISSING_C: [f64; 5] = [0.01, 0.1, 1.0, 10.0, 100.0];

/// Serves [`Sklearn::missing_references`]: one request is a header and the training and test
/// parts (NaN for a missing cell); the answer the three references.
const MISSING_SCRIPT: &str = r#"
from sklearn.pipeline import make_pipeline
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.linear_model import LogisticRegression
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold
warnings.simplefilter("ignore")
def linear(make, grid, xt, yt, xs, ys, cv):
    pipe = make_pipeline(SimpleImputer(strategy="mean"), StandardScaler(), make(1.0))
    name = pipe.steps[-1][0]
    g = GridSearchCV(pipe, {name + "__C": grid}, cv=cv, scoring="accuracy").fit(xt, yt)
    best = g.best_estimator_
    imp, sc, clf = best.steps[0][1], best.steps[1][1], best.steps[2][1]
    return {
        "error": float(np.mean(best.predict(xs) != ys)),
        "chosen": float(g.best_params_[name + "__C"]),
        "cv_error": float(1.0 - g.best_score_),
        "imputed": imp.statistics_.tolist(), "mean": sc.mean_.tolist(),
        "scale": sc.scale_.tolist(), "w": clf.coef_.ravel().tolist(),
        "b": float(np.ravel(clf.intercept_)[0]),
    }
def answer(head, raw):
    parts = parts_of(head, raw)
    (xt, yt), (xs, ys) = parts
    seed = head["seed"]
    cv = StratifiedKFold(n_splits=head["folds"], shuffle=True, random_state=seed)
    hgb = HistGradientBoostingClassifier(random_state=seed).fit(xt, yt)
    return {
        "svc": linear(lambda c: LinearSVC(C=c, max_iter=20000, random_state=seed), head["c"], xt, yt, xs, ys, cv),
        "lr": linear(lambda c: LogisticRegression(C=c, max_iter=5000), head["c"], xt, yt, xs, ys, cv),
        "hgb_error": float(np.mean(hgb.predict(xs) != ys)),
    }
"#;

/// A linear reference of [`Sklearn::missing_references`]: its test error, its chosen `C`, and
/// the model in the imputed, scaled space (`x ↦ w·z + b`, `z_j = (x_j − mean_j)/scale_j`, a
/// missing `x_j` replaced by `imputed_j`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearReference {
    /// Test error (scikit-learn's predictions).
    pub error: f64,
    /// The `C` chosen by cross-validation.
    pub chosen: f64,
    /// Its mean cross-validation error.
    pub cv_error: f64,
    /// The imputer's value per feature (the training mean).
    pub imputed: Vec<f64>,
    /// The scaler's mean per feature.
    pub mean: Vec<f64>,
    /// The scaler's scale per feature.
    pub scale: Vec<f64>,
    /// The weights.
    pub w: Vec<f64>,
    /// The intercept.
    pub b: f64,
}

impl LinearReference {
    /// `data` (with its missing cells) in the model's space: imputed, then scaled.
    pub fn input(&self, data: &Dataset) -> Result<Dataset, Error> {
        let n = data.n_features();
        if [
            self.imputed.len(),
            self.mean.len(),
            self.scale.len(),
            self.w.len(),
        ] != [n; 4]
        {
            return Err(Error::shape("reference vs data features", n, self.w.len()));
        }
        let mut x = data.features().to_dense();
        for i in 0..data.len() {
            let row = x.row_mut(i);
            for j in 0..n {
                let v = if data.missing().is_some_and(|m| m.is_missing(i, j)) {
                    self.imputed[j]
                } else {
                    row[j]
                };
                row[j] = (v - self.mean[j]) / self.scale[j];
            }
        }
        data.clone()
            .forget_missing()
            .with_features(bulwark_core::Features::Dense(x))
    }
    /// The model `x ↦ w·z + b`.
    pub fn model(&self) -> Result<bulwark_core::LinearModel, Error> {
        bulwark_core::LinearModel::try_new(self.w.clone(), self.b)
    }
}

/// The three references of [`Sklearn::missing_references`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingReferences {
    /// Mean imputation + `LinearSVC`.
    pub svc: LinearReference,
    /// Mean imputation + `LogisticRegression`.
    pub lr: LinearReference,
    /// `HistGradientBoostingClassifier`'s test error.
    pub hgb_error: f64,
}

/// A running interpreter serving a script ([`SCRIPT`] or [`MISSING_SCRIPT`]).
#[derive(Debug)]
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn spawn(python: &Path, script: &str) -> Result<Self, String> {
        let mut child = Command::new(python)
            .args(["-c", &format!("{PRELUDE}{script}{SERVE}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        let stdin = child.stdin.take().ok_or("no standard input")?;
        let stdout = child.stdout.take().ok_or("no standard output")?;
        Ok(Self {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
        })
    }

    /// Sends one request and reads its answer line.
    fn ask(&mut self, request: &[u8]) -> Result<String, String> {
        let stdin = self.stdin.as_mut().ok_or("closed")?;
        let sent = stdin.write_all(request).and_then(|()| stdin.flush());
        let mut line = String::new();
        let read = sent.and_then(|()| self.stdout.read_line(&mut line));
        match read {
            Ok(n) if n > 0 => Ok(line),
            // it died: what it said on its standard error says why
            other => {
                self.stdin = None;
                let _ = self.child.kill();
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                let _ = self.child.wait();
                Err(match other {
                    Err(e) => format!("the interpreter failed ({e}): {}", err.trim()),
                    Ok(_) => format!("the interpreter exited: {}", err.trim()),
                })
            }
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // closing its standard input ends the serving loop
        self.stdin = None;
        let _ = self.child.wait();
    }
}

/// The references' runner: a pool of interpreters, each importing scikit-learn once and reused
/// by call after call (one per concurrent caller; `Sync`).
#[derive(Debug)]
pub struct Sklearn {
    python: PathBuf,
    idle: Mutex<Vec<Worker>>,
    idle_missing: Mutex<Vec<Worker>>,
}

impl Sklearn {
    /// A runner using `python` (e.g. from [`find_python`]); interpreters start on first use.
    pub fn new(python: PathBuf) -> Self {
        Self {
            python,
            idle: Mutex::new(Vec::new()),
            idle_missing: Mutex::new(Vec::new()),
        }
    }

    /// Sends `request` to an idle interpreter of `pool` running `script` (started when none is
    /// idle) and parses its answer; an answer `{"error": …}` is an error.
    fn ask(
        &self,
        pool: &Mutex<Vec<Worker>>,
        script: &str,
        request: &[u8],
    ) -> Result<serde_json::Value, Error> {
        let idle = pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut worker = match idle {
            Some(w) => w,
            None => Worker::spawn(&self.python, script).map_err(failure)?,
        };
        let line = worker.ask(request).map_err(failure)?;
        // a worker that answered (even with an error of its own) serves the next call
        pool.lock().unwrap_or_else(|p| p.into_inner()).push(worker);
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| failure(format!("its output: {e}")))?;
        if let Some(e) = value.get("error").filter(|e| e.is_string()) {
            return Err(failure(e.as_str().unwrap_or_default().trim().to_string()));
        }
        Ok(value)
    }

    /// Runs both references on `train` / `val` / `test` (same features).
    pub fn run(
        &self,
        train: &Dataset,
        val: &Dataset,
        test: &Dataset,
        seed: u64,
    ) -> Result<References, Error> {
        let head = serde_json::json!({
            "seed": seed % (1 << 31),
            "lr_c": LR_C,
            "sgd_alpha": SGD_ALPHA,
        });
        let request = request(head, &[train, val, test], false)?;
        let value = self.ask(&self.idle, SCRIPT, &request)?;
        serde_json::from_value(value).map_err(|e| failure(format!("its output: {e}")))
    }

    /// The references for records with missing cells: trained on `train`, tested on `test`
    /// (the same features; a missing cell goes to scikit-learn as NaN): mean imputation,
    /// standard scaling and `LinearSVC` / `LogisticRegression`, each with `C` in [`MISSING_C`]
    /// chosen by `GridSearchCV` (stratified `folds`-fold, shuffled with `seed`; ties to the
    /// smaller `C`), and `HistGradientBoostingClassifier` (its defaults, `random_state = seed`),
    /// which routes missing values natively. The linear models come back with their weights in
    /// the imputed, scaled space, so the harness can attack them.
    pub fn missing_references(
        &self,
        train: &Dataset,
        test: &Dataset,
        folds: usize,
        seed: u64,
    ) -> Result<MissingReferences, Error> {
        let head = serde_json::json!({
            "seed": seed % (1 << 31),
            "folds": folds,
            "c": MISSING_C,
        });
        let request = request(head, &[train, test], true)?;
        let value = self.ask(&self.idle_missing, MISSING_SCRIPT, &request)?;
        serde_json::from_value(value).map_err(|e| failure(format!("its output: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{DenseMatrix, Sign};

    /// Where scikit-learn is installed, both references run and separate a separable set;
    /// elsewhere the search says why it found none.
    #[test]
    fn references_run_where_sklearn_is_installed() {
        let python = match find_python() {
            Ok(p) => p,
            Err(why) => {
                assert!(why.contains("BULWARK_PYTHON"), "{why}");
                return;
            }
        };
        let part = |m: usize, off: f64| {
            let x: Vec<f64> = (0..m)
                .flat_map(|i| [i as f64 / m as f64 - 0.5 + off, 1.0])
                .collect();
            let y = (0..m)
                .map(|i| Sign::of_score(i as f64 / m as f64 - 0.5 + off))
                .collect();
            Dataset::binary("t", DenseMatrix::try_new(m, 2, x).unwrap(), y).unwrap()
        };
        let sk = Sklearn::new(python);
        let r = sk
            .run(&part(60, 0.0), &part(40, 0.003), &part(50, 0.007), 3)
            .unwrap();
        // the same interpreter answers again, identically, and reports a bad request as an
        // error without dying
        assert_eq!(sk.idle.lock().unwrap().len(), 1);
        let again = sk
            .run(&part(60, 0.0), &part(40, 0.003), &part(50, 0.007), 3)
            .unwrap();
        assert_eq!(r, again);
        let one_class = part(60, 10.0);
        let bad = sk.run(&one_class, &part(40, 0.003), &part(50, 0.007), 3);
        assert!(bad.is_err(), "{bad:?}");
        assert_eq!(sk.idle.lock().unwrap().len(), 1);
        assert!(r.sklearn_lr.error < 0.1, "{r:?}");
        assert!(r.sklearn_mhuber.error < 0.2, "{r:?}");
        assert!(LR_C.contains(&r.sklearn_lr.chosen));
    }
    /// Where scikit-learn is installed, the imputation references run on records with missing
    /// cells, and a linear reference's weights, applied in the harness to the imputed, scaled
    /// records, give back scikit-learn's own test error.
    #[test]
    fn missing_references_run_where_sklearn_is_installed() {
        let Ok(python) = find_python() else { return };
        // a separable problem in two features, with every fifth record missing feature 1
        let part = |m: usize, off: f64| {
            let mut rows = Vec::new();
            let mut y = Vec::new();
            let mut miss: Vec<Vec<usize>> = Vec::new();
            for i in 0..m {
                let t = i as f64 / m as f64 - 0.5 + off;
                let gone = i % 5 == 0;
                rows.push(vec![t, if gone { 0.0 } else { 2.0 * t + 0.1 }]);
                miss.push(if gone { vec![1] } else { vec![] });
                y.push(Sign::of_score(t));
            }
            Dataset::binary("t", DenseMatrix::from_rows(&rows).unwrap(), y)
                .unwrap()
                .with_missing(bulwark_core::MissingMask::from_rows(2, &miss).unwrap())
                .unwrap()
        };
        let (train, test) = (part(80, 0.0), part(50, 0.003));
        let sk = Sklearn::new(python);
        let r = sk.missing_references(&train, &test, 3, 1).unwrap();
        assert!(
            r.svc.error < 0.1 && r.lr.error < 0.1 && r.hgb_error < 0.2,
            "{r:?}"
        );
        assert!(MISSING_C.contains(&r.svc.chosen));
        for lin in [&r.svc, &r.lr] {
            use bulwark_core::Classifier;
            let z = lin.input(&test).unwrap();
            let e = lin.model().unwrap().error_rate(&z).unwrap();
            assert!((e - lin.error).abs() < 1e-12, "{e} vs {}", lin.error);
        }
        assert_eq!(r, sk.missing_references(&train, &test, 3, 1).unwrap());
    }
}
