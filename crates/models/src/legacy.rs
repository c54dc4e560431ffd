//! Model files of format version 2 (bulwark 0.1.0 before the learner registry): the same
//! layout as version 3 except the hyper-parameters (one closed enum variant per learner) and a
//! fit report without the solver fields; and of version 3 (before the model-selection record):
//! version 4 without its last field. Read and converted, never written.

use bulwark_adversary::CorruptionStats;
use bulwark_core::{FitReport, HyperParams, ParamValue};
use bulwark_data::Scaler;
use serde::Deserialize;
use std::collections::BTreeMap;

use crate::file::{ModelFile, ModelKind, Training};

/// The version-2 hyper-parameters.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HyperParametersV2 {
    Lp {
        budget: f64,
        #[serde(rename = "C")]
        c: f64,
        values: String,
        feature_values: Vec<f64>,
        backend: String,
        chunks: Option<usize>,
        seed: u64,
        tolerance: f64,
    },
    O2b {
        budget: f64,
        #[serde(rename = "C")]
        c: f64,
        values: String,
        feature_values: Vec<f64>,
        epochs: usize,
        seed: u64,
    },
    Svm {
        #[serde(rename = "C")]
        c: f64,
        seed: u64,
        tolerance: Option<f64>,
    },
    Fdrop {
        #[serde(rename = "C")]
        c: f64,
        #[serde(rename = "K")]
        k: usize,
        seed: u64,
        tolerance: Option<f64>,
    },
    Logreg {
        l2: f64,
        intercept: bool,
        tolerance: Option<f64>,
    },
}

/// The version-2 fit report (positional in postcard: no solver fields).
#[derive(Debug, Deserialize)]
pub(crate) struct FitReportV2 {
    algorithm: String,
    objective: Option<f64>,
    iterations: Option<usize>,
    seconds: f64,
    converged: bool,
    details: BTreeMap<String, f64>,
}

/// A version-2 model file.
#[derive(Debug, Deserialize)]
pub(crate) struct ModelFileV2 {
    format: String,
    format_version: u32,
    crate_version: String,
    algorithm: String,
    model: ModelKind,
    n_features: usize,
    weights: Vec<f64>,
    bias: f64,
    scaler: Option<Scaler>,
    corruption_stats: Option<CorruptionStats>,
    hyper_parameters: HyperParametersV2,
    training: Training,
    report: FitReportV2,
}

/// A version-3 model file: every field of version 4 but `selection` (postcard is positional, so
/// its binary form needs its own layout; its JSON form reads as version 4 directly).
#[derive(Debug, Deserialize)]
pub(crate) struct ModelFileV3 {
    format: String,
    format_version: u32,
    crate_version: String,
    algorithm: String,
    model: ModelKind,
    n_features: usize,
    weights: Vec<f64>,
    bias: f64,
    scaler: Option<Scaler>,
    corruption_stats: Option<CorruptionStats>,
    hyper_parameters: HyperParams,
    training: Training,
    report: FitReport,
}

impl From<ModelFileV3> for ModelFile {
    fn from(v: ModelFileV3) -> Self {
        ModelFile {
            format: v.format,
            format_version: v.format_version,
            crate_version: v.crate_version,
            algorithm: v.algorithm,
            model: v.model,
            n_features: v.n_features,
            weights: v.weights,
            bias: v.bias,
            scaler: v.scaler,
            corruption_stats: v.corruption_stats,
            hyper_parameters: v.hyper_parameters,
            training: v.training,
            report: v.report,
            selection: None,
        }
    }
}

fn params(h: HyperParametersV2) -> HyperParams {
    use ParamValue::{Bool, Count, Float, Floats, Text};
    let p = HyperParams::new();
    match h {
        HyperParametersV2::Lp {
            budget,
            c,
            values,
            feature_values,
            backend,
            chunks,
            seed,
            tolerance,
        } => {
            let p = p
                .with("budget", Float(budget))
                .with("C", Float(c))
                .with("values", Text(values))
                .with("feature_values", Floats(feature_values))
                .with("backend", Text(backend))
                .with("seed", Count(seed))
                .with("tolerance", Float(tolerance));
            match chunks {
                Some(k) => p.with("chunks", Count(k as u64)),
                None => p,
            }
        }
        HyperParametersV2::O2b {
            budget,
            c,
            values,
            feature_values,
            epochs,
            seed,
        } => p
            .with("budget", Float(budget))
            .with("C", Float(c))
            .with("values", Text(values))
            .with("feature_values", Floats(feature_values))
            .with("epochs", Count(epochs as u64))
            .with("seed", Count(seed)),
        HyperParametersV2::Svm { c, seed, tolerance } => {
            let p = p.with("C", Float(c)).with("seed", Count(seed));
            with_tolerance(p, tolerance)
        }
        HyperParametersV2::Fdrop {
            c,
            k,
            seed,
            tolerance,
        } => {
            let p = p
                .with("C", Float(c))
                .with("k", Count(k as u64))
                .with("seed", Count(seed));
            with_tolerance(p, tolerance)
        }
        HyperParametersV2::Logreg {
            l2,
            intercept,
            tolerance,
        } => {
            let p = p.with("l2", Float(l2)).with("intercept", Bool(intercept));
            with_tolerance(p, tolerance)
        }
    }
}

fn with_tolerance(p: HyperParams, t: Option<f64>) -> HyperParams {
    match t {
        Some(t) => p.with("tolerance", ParamValue::Float(t)),
        None => p,
    }
}

impl From<ModelFileV2> for ModelFile {
    fn from(v: ModelFileV2) -> Self {
        let r = v.report;
        ModelFileV3 {
            format: v.format,
            format_version: v.format_version,
            crate_version: v.crate_version,
            algorithm: v.algorithm,
            model: v.model,
            n_features: v.n_features,
            weights: v.weights,
            bias: v.bias,
            scaler: v.scaler,
            corruption_stats: v.corruption_stats,
            hyper_parameters: params(v.hyper_parameters),
            training: v.training,
            report: FitReport {
                algorithm: r.algorithm,
                // version 2 did not record the solver
                solver: String::new(),
                objective: r.objective,
                iterations: r.iterations,
                seconds: r.seconds,
                converged: r.converged,
                details: r.details,
                ..FitReport::default()
            },
        }
        .into()
    }
}
