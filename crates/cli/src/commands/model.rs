//! The model file written by `bulwark train` (JSON). Top-level `weights` and `bias` hold the
//! linear model; the rest records how it was trained. Writes are atomic (temporary file in the
//! same directory, then rename), so a crash never leaves a half-written model.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use bulwark_core::{FitReport, LinearModel};
use bulwark_data::Scaler;
use serde::{Deserialize, Serialize};

/// Current model-file format version.
pub(crate) const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ModelFile {
    pub format: String,
    pub format_version: u32,
    pub algorithm: String,
    pub weights: Vec<f64>,
    pub bias: f64,
    pub n_features: usize,
    /// Feature scaling applied before the model (fitted on the training data), if any.
    pub scaler: Option<Scaler>,
    /// Per-feature training mean and variance (after scaling), for the greedy-corruption attack.
    #[serde(default)]
    pub corruption_stats: Option<bulwark_adversary::CorruptionStats>,
    pub hyper_parameters: serde_json::Value,
    pub training: serde_json::Value,
    pub report: FitReport,
    pub crate_version: String,
}

impl ModelFile {
    pub(crate) fn new(
        algorithm: &str,
        model: &LinearModel,
        scaler: Option<Scaler>,
        hyper_parameters: serde_json::Value,
        training: serde_json::Value,
        report: FitReport,
    ) -> Self {
        Self {
            format: "bulwark-model".into(),
            format_version: FORMAT_VERSION,
            algorithm: algorithm.into(),
            weights: model.weights.clone(),
            bias: model.bias,
            n_features: model.weights.len(),
            scaler,
            corruption_stats: None,
            hyper_parameters,
            training,
            report,
            crate_version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    /// Reads and validates a model file: the format name, a known format version, finite
    /// weights and a consistent feature count. Errors name the file (and line/column for JSON).
    pub(crate) fn read(path: &Path) -> anyhow::Result<(Self, LinearModel)> {
        let bytes = std::fs::read(path).map_err(|e| bulwark_core::Error::io(path, e))?;
        let file: ModelFile = serde_json::from_slice(&bytes).map_err(|e| {
            bulwark_core::Error::input(
                bulwark_core::Location::source(path.display().to_string())
                    .line(e.line())
                    .column(e.column()),
                format!("not a valid bulwark model file: {e}"),
            )
        })?;
        let bad = |msg: String| {
            bulwark_core::Error::input(
                bulwark_core::Location::source(path.display().to_string()),
                msg,
            )
        };
        if file.format != "bulwark-model" {
            return Err(bad(format!("format `{}` is not `bulwark-model`", file.format)).into());
        }
        if file.format_version != FORMAT_VERSION {
            return Err(bad(format!(
                "model format version {} is not supported (this bulwark reads version {FORMAT_VERSION})",
                file.format_version
            ))
            .into());
        }
        if file.weights.len() != file.n_features {
            return Err(bad(format!(
                "{} weights for n_features = {}",
                file.weights.len(),
                file.n_features
            ))
            .into());
        }
        let model = LinearModel::try_new(file.weights.clone(), file.bias)
            .map_err(|e| bad(format!("invalid model: {e}")))?;
        Ok((file, model))
    }

    pub(crate) fn write(&self, path: &Path) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(self)?;
        write_atomic(path, &bytes)
    }
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
