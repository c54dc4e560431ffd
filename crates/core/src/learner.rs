//! The learner contract behind the registry: a learner declares its hyper-parameters
//! ([`ParamSpec`]), validates the values it is given ([`HyperParams`]) and trains an
//! [`AnyModel`]. The command-line tool and the reproduction harness enumerate learners through
//! the registry (`bulwark-models`) and know none of them by name; a learner lives in its own
//! crate and is registered there with one line.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::comm::Communicator;
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::model_any::AnyModel;
use crate::traits::Fitted;

/// The type of one hyper-parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A real number (`--C 0.5`).
    Float,
    /// A non-negative integer (`--epochs 3`).
    Count,
    /// Free text, validated by the learner (`--backend structured`).
    Text,
    /// A switch: present on the command line means `value`.
    Switch {
        /// The value when the switch is given (the default is its negation).
        value: bool,
    },
    /// Per-feature values of the deletion budget: `uniform`, `mi` or a file, resolved on the
    /// training data by the registry into the float list `feature_values`.
    FeatureValues,
}

/// One hyper-parameter a learner takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// The name, as in model files and on the command line (`--NAME`).
    pub name: &'static str,
    /// Its type.
    pub kind: ParamKind,
    /// The default as the user would type it; `None` when the learner derives it (see `help`).
    pub default: Option<&'static str>,
    /// One line for `--help`.
    pub help: &'static str,
}

/// Which end of a tunable parameter's grid gives the more regular model: the one model
/// selection (`bulwark tune`) prefers when two grid points have the same mean error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoreRegular {
    /// The smaller value (a box radius or a loss weight `C`).
    Smaller,
    /// The larger value (a deletion budget `N`, a ridge penalty, a smoothing width `sigma`).
    Larger,
    /// The value listed first in the grid (text parameters).
    First,
}

/// A hyper-parameter that model selection may search, with the grid it searches by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunable {
    /// The parameter's name (one of [`Learner::params`]).
    pub name: &'static str,
    /// The default grid, as the user would type each value (one value: not searched unless
    /// the user gives a grid).
    pub grid: &'static [&'static str],
    /// Which end of the grid is the more regular model (ties go to it).
    pub more_regular: MoreRegular,
}

/// A hyper-parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// A switch.
    Bool(bool),
    /// A count.
    Count(u64),
    /// A real number.
    Float(f64),
    /// Text.
    Text(String),
    /// A list of reals (resolved feature values).
    Floats(Vec<f64>),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Count(k) => write!(f, "{k}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Text(s) => write!(f, "{s}"),
            ParamValue::Floats(v) => write!(f, "[{} values]", v.len()),
        }
    }
}

// JSON (human-readable) stores plain values (`"C": 1.0`); postcard (not self-describing) stores
// a tagged enum. Both round-trip exactly.
#[derive(Serialize, Deserialize)]
enum Tagged {
    Bool(bool),
    Count(u64),
    Float(f64),
    Text(String),
    Floats(Vec<f64>),
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            match self {
                ParamValue::Bool(b) => s.serialize_bool(*b),
                ParamValue::Count(k) => s.serialize_u64(*k),
                // a float that happens to be integral is written with a fraction (1.0), so
                // it reads back as a float
                ParamValue::Float(x) => s.serialize_f64(*x),
                ParamValue::Text(t) => s.serialize_str(t),
                ParamValue::Floats(v) => v.serialize(s),
            }
        } else {
            match self.clone() {
                ParamValue::Bool(b) => Tagged::Bool(b),
                ParamValue::Count(k) => Tagged::Count(k),
                ParamValue::Float(x) => Tagged::Float(x),
                ParamValue::Text(t) => Tagged::Text(t),
                ParamValue::Floats(v) => Tagged::Floats(v),
            }
            .serialize(s)
        }
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = ParamValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean, a number, a string or a list of numbers")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<ParamValue, E> {
        Ok(ParamValue::Bool(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<ParamValue, E> {
        Ok(ParamValue::Count(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<ParamValue, E> {
        Ok(ParamValue::Float(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<ParamValue, E> {
        Ok(ParamValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<ParamValue, E> {
        Ok(ParamValue::Text(v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<ParamValue, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element::<f64>()? {
            v.push(x);
        }
        Ok(ParamValue::Floats(v))
    }
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        if d.is_human_readable() {
            d.deserialize_any(PlainVisitor)
        } else {
            Ok(match Tagged::deserialize(d)? {
                Tagged::Bool(b) => ParamValue::Bool(b),
                Tagged::Count(k) => ParamValue::Count(k),
                Tagged::Float(x) => ParamValue::Float(x),
                Tagged::Text(t) => ParamValue::Text(t),
                Tagged::Floats(v) => ParamValue::Floats(v),
            })
        }
    }
}

/// A learner's hyper-parameters by name, as given (defaults filled in by the registry).
/// Typed getters name the parameter in their errors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HyperParams(BTreeMap<String, ParamValue>);

impl HyperParams {
    /// No parameters.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets `name` (builder style).
    pub fn with(mut self, name: &str, value: ParamValue) -> Self {
        self.0.insert(name.to_string(), value);
        self
    }
    /// Sets `name`.
    pub fn set(&mut self, name: &str, value: ParamValue) {
        self.0.insert(name.to_string(), value);
    }
    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.0.get(name)
    }
    /// Every `(name, value)`, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    fn wrong(name: &str, v: &ParamValue, expected: &str) -> Error {
        Error::param(name, v, expected)
    }
    fn missing(name: &str) -> Error {
        Error::param(name, "missing", "a value (no default)")
    }
    /// A real number (a count is accepted).
    pub fn float(&self, name: &str) -> Result<f64> {
        match self.get(name) {
            Some(ParamValue::Float(x)) => Ok(*x),
            Some(ParamValue::Count(k)) => Ok(*k as f64),
            Some(v) => Err(Self::wrong(name, v, "a number")),
            None => Err(Self::missing(name)),
        }
    }
    /// A real number, or `None` when not set.
    pub fn float_opt(&self, name: &str) -> Result<Option<f64>> {
        self.get(name).map(|_| self.float(name)).transpose()
    }
    /// A count.
    pub fn count(&self, name: &str) -> Result<u64> {
        match self.get(name) {
            Some(ParamValue::Count(k)) => Ok(*k),
            Some(ParamValue::Float(x)) if x.fract() == 0.0 && *x >= 0.0 && *x < 2f64.powi(53) => {
                Ok(*x as u64)
            }
            Some(v) => Err(Self::wrong(name, v, "a non-negative integer")),
            None => Err(Self::missing(name)),
        }
    }
    /// A count, or `None` when not set.
    pub fn count_opt(&self, name: &str) -> Result<Option<u64>> {
        self.get(name).map(|_| self.count(name)).transpose()
    }
    /// A switch.
    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(v) => Err(Self::wrong(name, v, "true or false")),
            None => Err(Self::missing(name)),
        }
    }
    /// Text.
    pub fn text(&self, name: &str) -> Result<&str> {
        match self.get(name) {
            Some(ParamValue::Text(t)) => Ok(t),
            Some(v) => Err(Self::wrong(name, v, "text")),
            None => Err(Self::missing(name)),
        }
    }
    /// A list of reals.
    pub fn floats(&self, name: &str) -> Result<&[f64]> {
        match self.get(name) {
            Some(ParamValue::Floats(v)) => Ok(v),
            Some(v) => Err(Self::wrong(name, v, "a list of numbers")),
            None => Err(Self::missing(name)),
        }
    }
    /// Parses `raw` (as typed on the command line) for the parameter `spec`; the error names
    /// the parameter.
    pub fn parse(spec: &ParamSpec, raw: &str) -> Result<ParamValue> {
        let bad = |expected: &str| Error::param(spec.name, raw, expected);
        match spec.kind {
            ParamKind::Float => raw
                .trim()
                .parse::<f64>()
                .map(ParamValue::Float)
                .map_err(|_| bad("a number")),
            ParamKind::Count => raw
                .trim()
                .parse::<u64>()
                .map(ParamValue::Count)
                .map_err(|_| bad("a non-negative integer")),
            ParamKind::Text | ParamKind::FeatureValues => Ok(ParamValue::Text(raw.to_string())),
            ParamKind::Switch { value } => match raw {
                "" | "true" => Ok(ParamValue::Bool(value)),
                "false" => Ok(ParamValue::Bool(!value)),
                _ => Err(bad("true or false")),
            },
        }
    }
}

/// Per-iteration progress of a long fit: a message for a progress bar, and a way to stop
/// (`ControlFlow::Break`).
pub type ProgressFn<'a> = &'a mut dyn FnMut(&str) -> std::ops::ControlFlow<()>;

/// A learner as the registry knows it.
pub trait Learner: Sync {
    /// Its name on the command line and in model files (`lp`, `svm`, …).
    fn name(&self) -> &'static str;
    /// Its name in tables and legends (`LP`, `SVM`, …).
    fn title(&self) -> &'static str;
    /// One line for `--help`.
    fn about(&self) -> &'static str;
    /// The hyper-parameters it takes.
    fn params(&self) -> &'static [ParamSpec];
    /// The hyper-parameters model selection may search (`bulwark tune`), in the order their
    /// regularity breaks ties (the first one's most regular value first), each with a default
    /// grid; none by default.
    fn tunable(&self) -> &'static [Tunable] {
        &[]
    }
    /// Whether it trains against a deletion budget (`budget`, `feature_values`): such a
    /// learner is trained with the budget it is attacked with in the experiments.
    fn uses_budget(&self) -> bool {
        self.params()
            .iter()
            .any(|p| p.kind == ParamKind::FeatureValues)
    }
    /// Whether it trains on multiclass data as such (a multiclass model); the command line then
    /// keeps every class of a data set when no binary task (`--pair`, `--positive`) is given.
    fn multiclass(&self) -> bool {
        false
    }
    /// The numbers (`f64`) it keeps per feature while training, an estimate (8 by default) for
    /// the memory check made before training ([`crate::memory::per_feature_limit`]);
    /// `classes` is the data's class count.
    fn state_per_feature(&self, classes: usize) -> u64 {
        let _ = classes;
        8
    }
    /// Trains on `data` with `params` (every declared parameter present: the registry fills
    /// the defaults and resolves `feature_values`). The report names the solver that answered.
    fn fit(
        &self,
        data: &Dataset,
        params: &HyperParams,
        progress: Option<ProgressFn<'_>>,
    ) -> Result<Fitted<AnyModel>>;
    /// Whether [`Learner::fit_distributed`] splits the examples over several ranks (`false`:
    /// it trains on one process only).
    fn distributed(&self) -> bool {
        false
    }
    /// Trains on the examples of every rank taking part in `comm`, `local` being this rank's
    /// share: the per-example sums are combined through `comm` ([`crate::comm`]) and every rank
    /// returns the same model. On one process ([`crate::comm::Single`]) this is [`Learner::fit`];
    /// a learner that is not [`Learner::distributed`] refuses more than one rank.
    fn fit_distributed(
        &self,
        local: &Dataset,
        params: &HyperParams,
        comm: &dyn Communicator,
    ) -> Result<Fitted<AnyModel>> {
        if comm.size() == 1 {
            return self.fit(local, params, None);
        }
        Err(Error::Distributed {
            ranks: comm.size(),
            message: format!("{} does not train over several ranks", self.name()),
        })
    }
}

impl fmt::Debug for dyn Learner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Learner({})", self.name())
    }
}
