//! The model file written by `bulwark train`, in two encodings chosen by the file extension:
//!
//! - `.json`: human-readable; for linear models the top-level `weights` and `bias` hold the
//!   model; other kinds carry their parameters in `model`. The rest records how it was trained
//!   (algorithm, hyper-parameters, feature count, a SHA-256 fingerprint of the training data,
//!   crate version, the fit report).
//! - `.bin`: compact; the magic bytes `BULWARK\0`, the format version as a little-endian `u32`,
//!   then the same [`ModelFile`] encoded with postcard. The version is checked before the payload
//!   is decoded, so a file from a newer format is refused with a clear message.
//!
//! Both carry exactly the same information, so a JSON and a binary file of one training run
//! predict identically. Readers accept [`FORMAT_VERSION`] and versions 2 and 3 (converted on
//! reading);
//! any change to the fields (postcard is positional) bumps the version.
//!
//! Writes are atomic (a temporary file in the same directory, fsync, rename), so a crash or
//! Ctrl-C never leaves a half-written model.

use std::io::Write;
use std::path::Path;

use bulwark_adversary::CorruptionStats;
use bulwark_core::{
    AnyModel, Classifier, Dataset, Ensemble, Error, FeatureNames, FitReport, HyperParams,
    KernelModel, LinearModel, Location, MulticlassLinearModel, Result,
};
use bulwark_data::{Scaler, ScalingKind};
use serde::{Deserialize, Serialize};

use crate::legacy::{ModelFileV2, ModelFileV3};
use crate::selection::Selection;

/// The `format` field of every model file.
pub const FORMAT: &str = "bulwark-model";
/// Current model-file format version (3: before the model-selection record, still read; 2:
/// before the learner registry, still read; 1: the JSON-only format with untyped metadata,
/// refused).
pub const FORMAT_VERSION: u32 = 4;
/// The oldest version still read.
pub const OLDEST_READ_VERSION: u32 = 2;
/// First bytes of a binary model file.
pub const MAGIC: [u8; 8] = *b"BULWARK\0";

/// How a model file is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Pretty-printed JSON.
    Json,
    /// Magic, version, postcard.
    Binary,
}

impl Encoding {
    /// The encoding an output path asks for: `.json` or `.bin`; anything else is refused, so a
    /// typo does not silently pick a format.
    pub fn for_output(path: &Path) -> Result<Self> {
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

/// What kind of model the file holds, with the parameters of the kinds that do not fit the
/// top-level `weights`/`bias`. New kinds are appended (postcard stores the index).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// `x ↦ sign(w·x + b)` with the top-level `weights` and `bias`.
    LinearBinary,
    /// `argmax_k (W x + b)_k`.
    MulticlassLinear(MulticlassLinearModel),
    /// `sign(Σ α_i K(s_i, x) + b)`.
    Kernel(KernelModel),
    /// `sign(Σ α_t clip(w_t·x + b_t, −1, 1))`.
    Ensemble(Ensemble<LinearModel>),
}

impl ModelKind {
    /// `linear-binary`, `multiclass-linear`, `kernel` or `ensemble`.
    pub fn name(&self) -> &'static str {
        match self {
            ModelKind::LinearBinary => "linear-binary",
            ModelKind::MulticlassLinear(_) => "multiclass-linear",
            ModelKind::Kernel(_) => "kernel",
            ModelKind::Ensemble(_) => "ensemble",
        }
    }
}

/// What the model was trained on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Training {
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
    /// Feature names, in column order; empty when the data had none of their own (the
    /// defaults `x1, …, xn`: [`ModelFile::feature_names`]).
    pub feature_names: Vec<String>,
    /// Class names (binary: index 0 is −1, index 1 is +1).
    pub classes: Vec<String>,
    /// Scaling fitted on the training data.
    pub scale: Option<ScalingKind>,
    /// Error on the training data.
    pub training_error: f64,
    /// `sha256:<hex>` of the training data as loaded (see [`crate::fingerprint()`]).
    pub fingerprint: String,
}

/// A model file. The field order is the binary layout: change it only with a version bump.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The bulwark version that wrote it.
    pub crate_version: String,
    /// Learner name (a name of the registry).
    pub algorithm: String,
    /// What the parameters mean.
    pub model: ModelKind,
    /// Features the model expects.
    pub n_features: usize,
    /// Linear weights (one per feature; empty for other kinds).
    pub weights: Vec<f64>,
    /// Bias (0 for other kinds).
    pub bias: f64,
    /// Feature scaling applied before the model (fitted on the training data), if any.
    pub scaler: Option<Scaler>,
    /// Per-feature training mean and variance (after scaling), for the greedy-corruption attack.
    pub corruption_stats: Option<CorruptionStats>,
    /// The learner's hyper-parameters, defaults included.
    pub hyper_parameters: HyperParams,
    /// The training data and task.
    pub training: Training,
    /// What training reported (solver, convergence, …).
    pub report: FitReport,
    /// How the hyper-parameters were chosen, for a model written by `bulwark tune`: the threat,
    /// the cross-validation table and the choice (`None` for `bulwark train`).
    #[serde(default)]
    pub selection: Option<Selection>,
}

/// Only the identifying fields, read first so that a file of another version is refused with
/// a version message rather than a complaint about its fields.
#[derive(Debug, Deserialize)]
struct JsonHeader {
    format: Option<String>,
    format_version: Option<u32>,
}

fn input_error(path: &Path, msg: String) -> Error {
    Error::input(Location::source(path.display().to_string()), msg)
}

impl ModelFile {
    /// A file for `model` trained by `algorithm` with `hyper_parameters`.
    pub fn new(
        algorithm: &str,
        model: &AnyModel,
        scaler: Option<Scaler>,
        hyper_parameters: HyperParams,
        training: Training,
        mut report: FitReport,
    ) -> Self {
        // JSON has no NaN/Inf; keep both encodings identical by dropping such figures
        report.details.retain(|_, v| v.is_finite());
        report.objective = report.objective.filter(|o| o.is_finite());
        report.reached = report.reached.filter(|o| o.is_finite());
        let (kind, weights, bias) = match model {
            AnyModel::Linear(m) => (ModelKind::LinearBinary, m.weights().to_vec(), m.bias()),
            AnyModel::MulticlassLinear(m) => (ModelKind::MulticlassLinear(m.clone()), vec![], 0.0),
            AnyModel::Kernel(m) => (ModelKind::Kernel(m.clone()), vec![], 0.0),
            AnyModel::Ensemble(m) => (ModelKind::Ensemble(m.clone()), vec![], 0.0),
        };
        Self {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            crate_version: env!("CARGO_PKG_VERSION").into(),
            algorithm: algorithm.into(),
            model: kind,
            n_features: model.n_features(),
            weights,
            bias,
            scaler,
            corruption_stats: None,
            hyper_parameters,
            training,
            report,
            selection: None,
        }
    }

    /// Reads and validates a model file in either encoding (binary when it starts with the
    /// magic bytes or is named `*.bin`). Errors name the file (and line/column for JSON).
    pub fn read(path: &Path) -> Result<(Self, AnyModel)> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let file = Self::decode(&bytes, path)?;
        let model = file.validate(path)?;
        Ok((file, model))
    }

    /// Decodes bytes read from `path` (named in errors) without validating the model. The
    /// feature count must not exceed the file's size in bytes: every feature a model uses takes
    /// at least a byte of it (a weight, a column of support vectors), so a larger count is only
    /// declared, and memory sized by it later (uniform budget values, scaling) is refused here.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<Self> {
        let binary = bytes.starts_with(&MAGIC) || path.extension().is_some_and(|e| e == "bin");
        let file = if binary {
            Self::decode_binary(bytes, path)?
        } else {
            Self::decode_json(bytes, path)?
        };
        if file.n_features > bytes.len() {
            return Err(Error::TooLarge {
                location: Box::new(Location::source(path.display().to_string())),
                what: format!("n_features = {} (declared by the model)", file.n_features),
                bytes: (file.n_features as u64).saturating_mul(8),
                purpose: "one number per feature".into(),
                limit: format!(
                    "a model file of {} bytes, which can hold at most one feature per byte",
                    bytes.len()
                ),
            });
        }
        Ok(file)
    }

    fn decode_json(bytes: &[u8], path: &Path) -> Result<Self> {
        let syntax = |e: serde_json::Error| {
            Error::input(
                Location::source(path.display().to_string())
                    .line(e.line())
                    .column(e.column()),
                format!("not a valid bulwark model file: {e}"),
            )
        };
        let header: JsonHeader = serde_json::from_slice(bytes).map_err(syntax)?;
        let version = check_header(header.format.as_deref(), header.format_version, path)?;
        if version == 2 {
            let v2: ModelFileV2 = serde_json::from_slice(bytes).map_err(syntax)?;
            return Ok(v2.into());
        }
        serde_json::from_slice(bytes).map_err(syntax)
    }

    fn decode_binary(bytes: &[u8], path: &Path) -> Result<Self> {
        let bad = |msg: String| input_error(path, msg);
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
        let version = check_header(Some(FORMAT), Some(u32::from_le_bytes(v)), path)?;
        let payload = &bytes[MAGIC.len() + 4..];
        let damaged = |e: postcard::Error| {
            bad(format!(
                "corrupted or truncated binary model file ({e}; {} payload bytes)",
                payload.len()
            ))
        };
        let (file, rest): (Self, &[u8]) = if version == 2 {
            let (v2, rest): (ModelFileV2, &[u8]) =
                postcard::take_from_bytes(payload).map_err(damaged)?;
            (v2.into(), rest)
        } else if version == 3 {
            let (v3, rest): (ModelFileV3, &[u8]) =
                postcard::take_from_bytes(payload).map_err(damaged)?;
            (v3.into(), rest)
        } else {
            postcard::take_from_bytes(payload).map_err(damaged)?
        };
        if !rest.is_empty() {
            return Err(bad(format!(
                "corrupted binary model file: {} unexpected bytes after the model",
                rest.len()
            )));
        }
        check_header(Some(&file.format), Some(file.format_version), path)?;
        Ok(file)
    }

    /// Consistency checks shared by both encodings; returns the model.
    pub fn validate(&self, path: &Path) -> Result<AnyModel> {
        let bad = |msg: String| input_error(path, msg);
        if crate::registry::find(&self.algorithm).is_err() {
            return Err(bad(format!(
                "unknown algorithm `{}` (this bulwark knows {})",
                self.algorithm,
                crate::registry::names()
            )));
        }
        if matches!(self.model, ModelKind::LinearBinary) && self.weights.len() != self.n_features {
            return Err(bad(format!(
                "{} weights for n_features = {}",
                self.weights.len(),
                self.n_features
            )));
        }
        let model = match &self.model {
            ModelKind::LinearBinary => AnyModel::Linear(
                LinearModel::try_new(self.weights.clone(), self.bias)
                    .map_err(|e| bad(format!("invalid model: {e}")))?,
            ),
            ModelKind::MulticlassLinear(m) => AnyModel::MulticlassLinear(m.clone()),
            ModelKind::Kernel(m) => AnyModel::Kernel(m.clone()),
            ModelKind::Ensemble(m) => AnyModel::Ensemble(m.clone()),
        };
        if !matches!(self.model, ModelKind::LinearBinary) && !self.weights.is_empty() {
            return Err(bad(format!(
                "a {} model keeps its parameters in `model`, but `weights` has {} entries",
                self.model.name(),
                self.weights.len()
            )));
        }
        let n = self.n_features;
        if model.n_features() != n {
            return Err(bad(format!(
                "the {} model has {} features for n_features = {n}",
                self.model.name(),
                model.n_features()
            )));
        }
        let feature_values = match self.hyper_parameters.get("feature_values") {
            Some(_) => Some(
                self.hyper_parameters
                    .floats("feature_values")
                    .map_err(|e| bad(format!("hyper_parameters: {e}")))?
                    .len(),
            ),
            None => None,
        };
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
            ("hyper_parameters.feature_values", feature_values),
            (
                "training.feature_names",
                Some(self.training.feature_names.len()).filter(|&l| l > 0),
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
        if self.training.classes.len() != model.n_classes() {
            return Err(bad(format!(
                "a model of {} classes needs {} class names, found {}",
                model.n_classes(),
                model.n_classes(),
                self.training.classes.len()
            )));
        }
        Ok(model)
    }

    /// The encoded bytes, always in the current format version (a file read from version 2 or 3
    /// is written as version 4).
    pub fn encode(&self, encoding: Encoding) -> Result<Vec<u8>> {
        if self.format_version != FORMAT_VERSION {
            let current = ModelFile {
                format_version: FORMAT_VERSION,
                ..self.clone()
            };
            return current.encode(encoding);
        }
        let failed = |e: String| Error::Numerical {
            algorithm: "model file".into(),
            message: format!("cannot encode: {e}"),
        };
        Ok(match encoding {
            Encoding::Json => {
                let mut v = serde_json::to_vec_pretty(self).map_err(|e| failed(e.to_string()))?;
                v.push(b'\n');
                v
            }
            Encoding::Binary => {
                let mut v =
                    Vec::with_capacity(self.n_features.saturating_mul(16).saturating_add(64));
                v.extend_from_slice(&MAGIC);
                v.extend_from_slice(&self.format_version.to_le_bytes());
                postcard::to_io(self, &mut v).map_err(|e| failed(e.to_string()))?;
                v
            }
        })
    }

    /// Writes the file atomically, in the encoding named by its extension.
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = self.encode(Encoding::for_output(path)?)?;
        write_atomic(path, &bytes)
    }

    /// The names of the features the model was trained on (the defaults `x1, …, xn` when the
    /// file stores none).
    pub fn feature_names(&self) -> FeatureNames {
        FeatureNames::from_stored(self.training.feature_names.clone(), self.n_features)
    }

    /// The per-feature values of the deletion budget the model was trained for, if any.
    pub fn feature_values(&self) -> Option<&[f64]> {
        self.hyper_parameters.floats("feature_values").ok()
    }

    /// The feature values of the deletion budget the model was trained for, else uniform
    /// (`v_j = 1` for each of its features): the values its attacks and certificates use.
    pub fn budget_values(&self) -> Vec<f64> {
        self.feature_values()
            .map_or_else(|| vec![1.0; self.n_features], <[f64]>::to_vec)
    }

    /// The deletion budget `N` the model was trained for, if its learner takes one.
    pub fn budget(&self) -> Option<f64> {
        self.hyper_parameters.float("budget").ok()
    }

    /// `data` in the model's input space: the feature count checked, the stored scaling applied,
    /// missing cells deleted (0, the convention of `bulwark_core::missing`, whose mask is kept).
    /// Every score of the model is computed on this.
    pub fn input(&self, data: &Dataset) -> Result<Dataset> {
        if data.n_features() != self.n_features {
            return Err(Error::shape(
                format!("model vs data {}: feature count", data.name()),
                self.n_features,
                data.n_features(),
            ));
        }
        match &self.scaler {
            Some(s) => s.transform(data),
            None => Ok(data.clone()),
        }
    }

    /// The class name of binary class `positive` (index 1) or negative (index 0).
    pub fn class_name(&self, positive: bool) -> &str {
        &self.training.classes[usize::from(positive)]
    }
}

fn check_header(format: Option<&str>, version: Option<u32>, path: &Path) -> Result<u32> {
    let bad = |msg: String| input_error(path, msg);
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
        Some(v) if (OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&v) => Ok(v),
        Some(v) => Err(bad(format!(
            "model format version {v} is not supported (this bulwark {} reads versions {OLDEST_READ_VERSION} to {FORMAT_VERSION}{})",
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

/// Writes `bytes` to `path` atomically: a temporary file beside it (`tempfile`), fsync,
/// rename. A failure leaves `path` as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let result = (|| -> std::io::Result<()> {
        let mut f = tempfile::NamedTempFile::new_in(dir)?;
        f.write_all(bytes)?;
        f.as_file().sync_all()?;
        f.persist(path).map_err(|e| e.error)?;
        Ok(())
    })();
    result.map_err(|e| Error::io(path, e))
}

/// Fails early (before any long computation) when `path` cannot be written: its directory
/// must exist and be a directory.
pub fn check_output_dir(path: &Path) -> Result<()> {
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
