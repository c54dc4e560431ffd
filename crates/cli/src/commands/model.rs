//! The model file written by `bulwark train`, in two encodings chosen by the file extension:
//!
//! - `.json`: human-readable; top-level `weights` and `bias` hold the linear model, the rest
//!   records how it was trained (algorithm, typed hyper-parameters, feature count, a SHA-256
//!   fingerprint of the training data, crate version).
//! - `.bin`: compact; the magic bytes `BULWARK\0`, the format version as a little-endian `u32`,
//!   then the same [`ModelFile`] encoded with postcard. The version is checked before the payload
//!   is decoded, so a file from a newer format is refused with a clear message.
//!
//! Both carry exactly the same information (every field is a typed value; no free-form JSON), so
//! a JSON and a binary file of one training run predict identically. Readers accept exactly
//! [`FORMAT_VERSION`]; any change to the fields (postcard is positional) bumps it.
//!
//! Extensibility: `model` says what kind of model the file holds. Today every learner produces
//! [`ModelKind::LinearBinary`], whose parameters are the top-level `weights`/`bias`. Multiclass
//! linear or kernel models become further variants appended to [`ModelKind`] (carrying their own
//! parameters), which old readers refuse by name instead of misreading.
//!
//! Writes are atomic (temporary file in the same directory, fsync, rename), so a crash or Ctrl-C
//! never leaves a half-written model.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use bulwark_adversary::CorruptionStats;
use bulwark_core::{Dataset, Error, FitReport, LinearModel, Location, RowView};
use bulwark_data::{Scaler, ScalingKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `format` field of every model file.
pub(crate) const FORMAT: &str = "bulwark-model";
/// Current model-file format version (1 was the JSON-only format with untyped metadata).
pub(crate) const FORMAT_VERSION: u32 = 2;
/// First bytes of a binary model file.
pub(crate) const MAGIC: [u8; 8] = *b"BULWARK\0";

/// How a model file is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Pretty-printed JSON.
    Json,
    /// Magic, version, postcard.
    Binary,
}

impl Encoding {
    /// The encoding an output path asks for: `.json` or `.bin`; anything else is refused, so a
    /// typo does not silently pick a format.
    pub(crate) fn for_output(path: &Path) -> Result<Self, Error> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Ok(Encoding::Json),
            Some("bin") => Ok(Encoding::Binary),
            other => Err(Error::param(
                "out",
                path.display(),
                format!(
                    "a model file name ending in .json (text) or .bin (binary){}",
                    other.map_or(String::new(), |e| format!(", not .{e}"))
                ),
            )),
        }
    }
}

/// What kind of model the file holds. New kinds are appended (postcard stores the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ModelKind {
    /// `x ↦ sign(w·x + b)` with the top-level `weights` and `bias`.
    LinearBinary,
}

/// The hyper-parameters of each learner, as given to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HyperParameters {
    /// The DSX robust LP (4).
    Lp {
        /// Deletion budget N.
        budget: f64,
        /// Box radius C.
        #[serde(rename = "C")]
        c: f64,
        /// The `--values` argument (uniform, mi or a file).
        values: String,
        /// The feature values it resolved to.
        feature_values: Vec<f64>,
        /// KKT backend.
        backend: String,
        /// ICML 2008 bagging chunks.
        chunks: Option<usize>,
        /// Seed of the chunking.
        seed: u64,
        /// IPM tolerance.
        tolerance: f64,
    },
    /// Cube-projected Perceptron, online-to-batch.
    O2b {
        /// Deletion budget N.
        budget: f64,
        /// Box radius C.
        #[serde(rename = "C")]
        c: f64,
        /// The `--values` argument.
        values: String,
        /// The feature values it resolved to.
        feature_values: Vec<f64>,
        /// Passes over the data.
        epochs: usize,
        /// Shuffle seed.
        seed: u64,
    },
    /// Linear SVM.
    Svm {
        /// SVM C.
        #[serde(rename = "C")]
        c: f64,
        /// Seed.
        seed: u64,
        /// Solver tolerance (the learner's default when absent).
        tolerance: Option<f64>,
    },
    /// FDROP (Globerson–Roweis).
    Fdrop {
        /// SVM C.
        #[serde(rename = "C")]
        c: f64,
        /// Deleted features K.
        #[serde(rename = "K")]
        k: usize,
        /// Seed.
        seed: u64,
        /// Solver tolerance (the learner's default when absent).
        tolerance: Option<f64>,
    },
    /// Logistic regression.
    Logreg {
        /// L2 penalty.
        l2: f64,
        /// Whether an intercept was fitted.
        intercept: bool,
        /// Newton tolerance (the learner's default when absent).
        tolerance: Option<f64>,
    },
}

impl HyperParameters {
    /// The learner these parameters belong to (the `algorithm` field of the file).
    pub(crate) fn algorithm(&self) -> &'static str {
        match self {
            HyperParameters::Lp { .. } => "lp",
            HyperParameters::O2b { .. } => "o2b",
            HyperParameters::Svm { .. } => "svm",
            HyperParameters::Fdrop { .. } => "fdrop",
            HyperParameters::Logreg { .. } => "logreg",
        }
    }

    /// The per-feature values of the deletion budget the model was trained for, if any.
    pub(crate) fn feature_values(&self) -> Option<&[f64]> {
        match self {
            HyperParameters::Lp { feature_values, .. }
            | HyperParameters::O2b { feature_values, .. } => Some(feature_values),
            _ => None,
        }
    }
}

/// What the model was trained on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Training {
    /// The `--data` argument.
    pub data: String,
    /// Data-set (task) name.
    pub task: String,
    /// `--pair A,B`, if given.
    pub pair: Option<String>,
    /// `--positive CLASS`, if given.
    pub positive: Option<String>,
    /// Training examples.
    pub rows: usize,
    /// Feature names, in column order.
    pub feature_names: Vec<String>,
    /// Class names: index 0 is −1, index 1 is +1.
    pub classes: Vec<String>,
    /// Scaling fitted on the training data.
    pub scale: Option<ScalingKind>,
    /// Error on the training data.
    pub training_error: f64,
    /// `sha256:<hex>` of the training data as loaded (see [`fingerprint`]).
    pub fingerprint: String,
}

/// A model file. The field order is the binary layout: change it only with a version bump.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ModelFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The bulwark version that wrote it.
    pub crate_version: String,
    /// Learner name (`lp`, `o2b`, `svm`, `fdrop`, `logreg`).
    pub algorithm: String,
    /// What the parameters below mean.
    pub model: ModelKind,
    /// Features the model expects.
    pub n_features: usize,
    /// Linear weights (one per feature).
    pub weights: Vec<f64>,
    /// Bias.
    pub bias: f64,
    /// Feature scaling applied before the model (fitted on the training data), if any.
    pub scaler: Option<Scaler>,
    /// Per-feature training mean and variance (after scaling), for the greedy-corruption attack.
    pub corruption_stats: Option<CorruptionStats>,
    /// The learner's hyper-parameters.
    pub hyper_parameters: HyperParameters,
    /// The training data and task.
    pub training: Training,
    /// What training reported.
    pub report: FitReport,
}

/// Only the identifying fields, read first so that a file of another version is refused with
/// a version message rather than a complaint about its fields.
#[derive(Debug, Deserialize)]
struct JsonHeader {
    format: Option<String>,
    format_version: Option<u32>,
}

impl ModelFile {
    pub(crate) fn new(
        model: &LinearModel,
        scaler: Option<Scaler>,
        hyper_parameters: HyperParameters,
        training: Training,
        mut report: FitReport,
    ) -> Self {
        // JSON has no NaN/Inf; keep both encodings identical by dropping such figures
        report.details.retain(|_, v| v.is_finite());
        report.objective = report.objective.filter(|o| o.is_finite());
        Self {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            crate_version: env!("CARGO_PKG_VERSION").into(),
            algorithm: hyper_parameters.algorithm().into(),
            model: ModelKind::LinearBinary,
            n_features: model.weights.len(),
            weights: model.weights.clone(),
            bias: model.bias,
            scaler,
            corruption_stats: None,
            hyper_parameters,
            training,
            report,
        }
    }

    /// Reads and validates a model file in either encoding (binary when it starts with the
    /// magic bytes or is named `*.bin`). Errors name the file (and line/column for JSON).
    pub(crate) fn read(path: &Path) -> anyhow::Result<(Self, LinearModel)> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let binary = bytes.starts_with(&MAGIC) || path.extension().is_some_and(|e| e == "bin");
        let file = if binary {
            Self::decode_binary(&bytes, path)?
        } else {
            Self::decode_json(&bytes, path)?
        };
        let model = file.validate(path)?;
        Ok((file, model))
    }

    fn decode_json(bytes: &[u8], path: &Path) -> Result<Self, Error> {
        let syntax = |e: serde_json::Error| {
            Error::input(
                Location::source(path.display().to_string())
                    .line(e.line())
                    .column(e.column()),
                format!("not a valid bulwark model file: {e}"),
            )
        };
        let header: JsonHeader = serde_json::from_slice(bytes).map_err(syntax)?;
        check_header(header.format.as_deref(), header.format_version, path)?;
        serde_json::from_slice(bytes).map_err(syntax)
    }

    fn decode_binary(bytes: &[u8], path: &Path) -> Result<Self, Error> {
        let bad = |msg: String| Error::input(Location::source(path.display().to_string()), msg);
        if bytes.len() < MAGIC.len() + 4 {
            return Err(bad(format!(
                "truncated binary model file ({} bytes, shorter than its {}-byte header)",
                bytes.len(),
                MAGIC.len() + 4
            )));
        }
        if !bytes.starts_with(&MAGIC) {
            return Err(bad(
                "not a bulwark binary model file (it does not start with the magic bytes `BULWARK\\0`)"
                    .into(),
            ));
        }
        let mut v = [0u8; 4];
        v.copy_from_slice(&bytes[MAGIC.len()..MAGIC.len() + 4]);
        check_header(Some(FORMAT), Some(u32::from_le_bytes(v)), path)?;
        let payload = &bytes[MAGIC.len() + 4..];
        let (file, rest): (Self, &[u8]) = postcard::take_from_bytes(payload).map_err(|e| {
            bad(format!(
                "corrupted or truncated binary model file ({e}; {} payload bytes)",
                payload.len()
            ))
        })?;
        if !rest.is_empty() {
            return Err(bad(format!(
                "corrupted binary model file: {} unexpected bytes after the model",
                rest.len()
            )));
        }
        check_header(Some(&file.format), Some(file.format_version), path)?;
        Ok(file)
    }

    /// Consistency checks shared by both encodings; returns the linear model.
    fn validate(&self, path: &Path) -> Result<LinearModel, Error> {
        let bad = |msg: String| Error::input(Location::source(path.display().to_string()), msg);
        if self.algorithm != self.hyper_parameters.algorithm() {
            return Err(bad(format!(
                "unknown algorithm `{}` (the hyper-parameters are those of `{}`)",
                self.algorithm,
                self.hyper_parameters.algorithm()
            )));
        }
        let n = self.n_features;
        if self.weights.len() != n {
            return Err(bad(format!(
                "{} weights for n_features = {n}",
                self.weights.len()
            )));
        }
        let lengths = [
            ("scaler.shift", self.scaler.as_ref().map(|s| s.shift.len())),
            (
                "scaler.factor",
                self.scaler.as_ref().map(|s| s.factor.len()),
            ),
            (
                "corruption_stats.mean",
                self.corruption_stats.as_ref().map(|s| s.mean.len()),
            ),
            (
                "corruption_stats.variance",
                self.corruption_stats.as_ref().map(|s| s.variance.len()),
            ),
            (
                "hyper_parameters.feature_values",
                self.hyper_parameters.feature_values().map(<[f64]>::len),
            ),
            (
                "training.feature_names",
                Some(self.training.feature_names.len()),
            ),
        ];
        for (name, len) in lengths {
            if let Some(len) = len.filter(|&l| l != n) {
                return Err(bad(format!(
                    "{name} has {len} entries for n_features = {n}"
                )));
            }
        }
        if let Some(s) = &self.scaler
            && let Some(x) = s.shift.iter().chain(&s.factor).find(|x| !x.is_finite())
        {
            return Err(bad(format!("scaler holds the non-finite value {x}")));
        }
        if self.training.classes.len() != 2 {
            return Err(bad(format!(
                "a binary model needs 2 class names, found {}",
                self.training.classes.len()
            )));
        }
        LinearModel::try_new(self.weights.clone(), self.bias)
            .map_err(|e| bad(format!("invalid model: {e}")))
    }

    /// The encoded bytes.
    pub(crate) fn encode(&self, encoding: Encoding) -> anyhow::Result<Vec<u8>> {
        Ok(match encoding {
            Encoding::Json => {
                let mut v = serde_json::to_vec_pretty(self)?;
                v.push(b'\n');
                v
            }
            Encoding::Binary => {
                let mut v = Vec::with_capacity(64 + 16 * self.n_features);
                v.extend_from_slice(&MAGIC);
                v.extend_from_slice(&self.format_version.to_le_bytes());
                postcard::to_io(self, &mut v).context("encoding the binary model")?;
                v
            }
        })
    }

    /// Writes the file atomically, in the encoding named by its extension.
    pub(crate) fn write(&self, path: &Path) -> anyhow::Result<()> {
        let bytes = self.encode(Encoding::for_output(path)?)?;
        write_atomic(path, &bytes)
    }

    /// The positive-class name (index 1) and negative-class name (index 0).
    pub(crate) fn class_name(&self, positive: bool) -> &str {
        &self.training.classes[usize::from(positive)]
    }
}

fn check_header(format: Option<&str>, version: Option<u32>, path: &Path) -> Result<(), Error> {
    let bad = |msg: String| Error::input(Location::source(path.display().to_string()), msg);
    match format {
        Some(FORMAT) => {}
        Some(f) => return Err(bad(format!("format `{f}` is not `{FORMAT}`"))),
        None => {
            return Err(bad(format!(
                "not a bulwark model file (no `format: \"{FORMAT}\"` field)"
            )));
        }
    }
    match version {
        Some(FORMAT_VERSION) => Ok(()),
        Some(v) => Err(bad(format!(
            "model format version {v} is not supported (this bulwark {} reads version {FORMAT_VERSION}{})",
            env!("CARGO_PKG_VERSION"),
            if v < FORMAT_VERSION {
                ": retrain the model"
            } else {
                ": use a newer bulwark"
            }
        ))),
        None => Err(bad("no `format_version` field".into())),
    }
}

/// A stable SHA-256 fingerprint of a data set as loaded: its shape, feature and class names,
/// labels and non-zero values (so the dense and the sparse copy of the same numbers agree).
/// Returned as `sha256:<64 hex digits>`.
pub(crate) fn fingerprint(data: &Dataset) -> String {
    let mut h = Sha256::new();
    let len = |h: &mut Sha256, n: usize| h.update((n as u64).to_le_bytes());
    let text = |h: &mut Sha256, s: &str| {
        len(h, s.len());
        h.update(s.as_bytes());
    };
    h.update(b"bulwark-data-fingerprint-v1");
    len(&mut h, data.len());
    len(&mut h, data.n_features());
    for name in data.feature_names() {
        text(&mut h, name);
    }
    len(&mut h, data.n_classes());
    for name in data.class_names() {
        text(&mut h, name);
    }
    let mut nz = Vec::new();
    for i in 0..data.len() {
        len(&mut h, data.targets().class_index(i));
        nz.clear();
        let row: RowView<'_> = data.row(i);
        nz.extend(row.nonzeros().filter(|&(_, x)| x != 0.0));
        len(&mut h, nz.len());
        for &(j, x) in &nz {
            len(&mut h, j);
            h.update(x.to_bits().to_le_bytes());
        }
    }
    let mut s = String::from("sha256:");
    for b in h.finalize() {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("{}: cannot write", path.display()))
}

/// Fails early (before any long computation) when `path` cannot be written: its directory
/// must exist and be a directory.
pub(crate) fn check_output_dir(path: &Path) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::NotFound {
            path: dir.to_path_buf(),
            hint: format!("the directory of the output file {}", path.display()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ModelFile {
        let model = LinearModel::try_new(vec![0.5, -1.25, 1e-300], 0.1).unwrap();
        let mut f = ModelFile::new(
            &model,
            None,
            HyperParameters::Lp {
                budget: 1.0,
                c: 1.0,
                values: "uniform".into(),
                feature_values: vec![1.0; 3],
                backend: "structured".into(),
                chunks: None,
                seed: 0,
                tolerance: 1e-8,
            },
            Training {
                data: "x.csv".into(),
                task: "x".into(),
                pair: None,
                positive: None,
                rows: 4,
                feature_names: vec!["a".into(), "b".into(), "c".into()],
                classes: vec!["neg".into(), "pos".into()],
                scale: Some(ScalingKind::MinMax),
                training_error: 0.25,
                fingerprint: "sha256:00".into(),
            },
            FitReport {
                algorithm: "lp".into(),
                solver: "dsx-ipm".into(),
                objective: Some(0.1 + 0.2),
                iterations: Some(7),
                seconds: 0.5,
                converged: true,
                details: [("gap".to_string(), 1e-9), ("bad".to_string(), f64::NAN)]
                    .into_iter()
                    .collect(),
                ..FitReport::default()
            },
        );
        f.corruption_stats = Some(CorruptionStats {
            mean: vec![0.0; 3],
            variance: vec![1.0; 3],
        });
        f
    }

    #[test]
    fn json_and_binary_carry_the_same_model() {
        let f = sample();
        let p = Path::new("m");
        let json = f.encode(Encoding::Json).unwrap();
        let bin = f.encode(Encoding::Binary).unwrap();
        assert!(
            bin.len() < json.len() / 2,
            "{} vs {}",
            bin.len(),
            json.len()
        );
        let a = ModelFile::decode_json(&json, p).unwrap();
        let b = ModelFile::decode_binary(&bin, p).unwrap();
        assert_eq!(a, b);
        assert!(!a.report.details.contains_key("bad"));
        assert_eq!(a.weights[2].to_bits(), 1e-300f64.to_bits());
    }

    #[test]
    fn binary_damage_is_a_typed_error() {
        let bin = sample().encode(Encoding::Binary).unwrap();
        let p = Path::new("m.bin");
        for cut in [0, 5, 12, bin.len() / 2, bin.len() - 1] {
            let e = ModelFile::decode_binary(&bin[..cut], p).unwrap_err();
            assert!(e.to_string().starts_with("m.bin"), "{e}");
            assert!(e.to_string().contains("truncated"), "{cut}: {e}");
        }
        let mut v = bin.clone();
        v[8..12].copy_from_slice(&999u32.to_le_bytes());
        let e = ModelFile::decode_binary(&v, p).unwrap_err().to_string();
        assert!(e.contains("version 999 is not supported"), "{e}");
        let mut v = bin.clone();
        v.push(0);
        let e = ModelFile::decode_binary(&v, p).unwrap_err().to_string();
        assert!(e.contains("1 unexpected bytes"), "{e}");
    }

    #[test]
    fn output_extension_chooses_the_encoding() {
        assert_eq!(
            Encoding::for_output(Path::new("a/m.json")).unwrap(),
            Encoding::Json
        );
        assert_eq!(
            Encoding::for_output(Path::new("m.bin")).unwrap(),
            Encoding::Binary
        );
        let e = Encoding::for_output(Path::new("m.txt")).unwrap_err();
        assert!(e.to_string().contains("not .txt"), "{e}");
    }

    #[test]
    fn fingerprint_ignores_storage_but_not_values() {
        use bulwark_core::{CsrMatrix, DenseMatrix, Sign};
        let y = vec![Sign::Pos, Sign::Neg];
        let dense = Dataset::binary(
            "d",
            DenseMatrix::from_rows(&[vec![1.0, 0.0], vec![0.0, 2.0]]).unwrap(),
            y.clone(),
        )
        .unwrap();
        let sparse = Dataset::binary(
            "d",
            CsrMatrix::try_new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 2.0]).unwrap(),
            y.clone(),
        )
        .unwrap();
        let other = Dataset::binary(
            "d",
            DenseMatrix::from_rows(&[vec![1.0, 0.0], vec![0.0, 2.5]]).unwrap(),
            y,
        )
        .unwrap();
        let f = fingerprint(&dense);
        assert_eq!(f.len(), "sha256:".len() + 64);
        assert_eq!(f, fingerprint(&sparse));
        assert_ne!(f, fingerprint(&other));
    }
}
