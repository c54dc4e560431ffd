//! The learners' hyper-parameters on the command line, built from the registry: every
//! parameter any registered learner declares becomes a `--flag` of `bulwark train`, and the
//! chosen learner accepts only its own (a flag it does not take is an error, never ignored).

use bulwark_core::{HyperParams, Learner, ParamKind, ParamSpec};
use bulwark_models::registry;
use clap::builder::PossibleValuesParser;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

/// `--algo`'s possible values: the registry's names.
pub fn algo_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        registry::learners()
            .iter()
            .map(|l| clap::builder::PossibleValue::new(l.name()).help(l.about())),
    )
}

/// The command-line flag of a parameter: its name with `-` for `_`; a switch whose presence
/// means `false` is `--no-NAME`.
pub fn flag_of(spec: &ParamSpec) -> String {
    let name = spec.name.replace('_', "-");
    match spec.kind {
        ParamKind::Switch { value: false } => format!("no-{name}"),
        _ => name,
    }
}

/// Every parameter of every learner, once (the first declaration's kind), with each learner
/// that takes it and its declaration there.
fn all_params() -> Vec<(ParamSpec, Vec<(&'static str, ParamSpec)>)> {
    let mut out: Vec<(ParamSpec, Vec<(&'static str, ParamSpec)>)> = Vec::new();
    for l in registry::learners() {
        for spec in l.params() {
            match out.iter_mut().find(|(s, _)| s.name == spec.name) {
                Some((_, who)) => who.push((l.name(), *spec)),
                None => out.push((*spec, vec![(l.name(), *spec)])),
            }
        }
    }
    out
}

/// The help of a flag: its meaning, and which learners take it with their defaults; where the
/// learners differ in meaning or default, each is named.
fn help_of(who: &[(&'static str, ParamSpec)]) -> String {
    let same_help = who.iter().all(|(_, s)| s.help == who[0].1.help);
    let default = |s: &ParamSpec| match (s.kind, s.default) {
        // a switch's flag is the non-default value
        (ParamKind::Switch { .. }, _) | (_, None) => String::new(),
        (_, Some(d)) => format!(" (default {d})"),
    };
    if same_help {
        let learners: Vec<String> = who
            .iter()
            .map(|(l, s)| format!("{l}{}", default(s)))
            .collect();
        format!("{} [{}]", who[0].1.help, learners.join(", "))
    } else {
        who.iter()
            .map(|(l, s)| format!("{l}: {}{}", s.help, default(s)))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The hyper-parameter flags given on the command line, unparsed: `(parameter, raw value)`.
#[derive(Debug, Clone, Default)]
pub struct LearnerArgs {
    /// What the user typed, in the registry's order.
    pub given: Vec<(String, String)>,
}

impl LearnerArgs {
    /// The parameters for `learner`, parsed by their declared kinds; a flag the learner does not
    /// take is a typed error naming it and listing the learner's flags.
    pub fn for_learner(&self, learner: &dyn Learner) -> bulwark_core::Result<HyperParams> {
        let mut params = HyperParams::new();
        for (name, raw) in &self.given {
            let Some(spec) = learner.params().iter().find(|s| s.name == name) else {
                let flags: Vec<String> = learner
                    .params()
                    .iter()
                    .map(|s| format!("--{}", flag_of(s)))
                    .collect();
                let spec = all_params()
                    .into_iter()
                    .find(|(s, _)| s.name == name)
                    .map(|(s, _)| s);
                return Err(bulwark_core::Error::param(
                    spec.map_or_else(|| name.clone(), |s| format!("--{}", flag_of(&s))),
                    raw,
                    format!(
                        "a flag of `{}` (it takes {})",
                        learner.name(),
                        flags.join(", ")
                    ),
                ));
            };
            params.set(spec.name, HyperParams::parse(spec, raw)?);
        }
        Ok(params)
    }
}

impl LearnerArgs {
    fn from_matches_except(m: &ArgMatches, skip: &[&str]) -> Self {
        let mut given = Vec::new();
        for (spec, _) in all_params() {
            if skip.contains(&spec.name)
                || m.value_source(spec.name) != Some(ValueSource::CommandLine)
            {
                continue;
            }
            let raw = match spec.kind {
                ParamKind::Switch { .. } => String::new(),
                _ => m.get_one::<String>(spec.name).cloned().unwrap_or_default(),
            };
            given.push((spec.name.to_string(), raw));
        }
        Self { given }
    }

    fn augment_except(mut cmd: Command, skip: &[&str]) -> Command {
        for (spec, who) in all_params() {
            if skip.contains(&spec.name) {
                continue;
            }
            let help = help_of(&who);
            let arg = Arg::new(spec.name)
                .long(flag_of(&spec))
                .help(help)
                .help_heading("Learner parameters");
            cmd = cmd.arg(match spec.kind {
                ParamKind::Switch { .. } => arg.action(ArgAction::SetTrue),
                _ => arg
                    .action(ArgAction::Set)
                    .value_name(spec.name.to_uppercase())
                    .allow_negative_numbers(true),
            });
        }
        cmd
    }
}

impl FromArgMatches for LearnerArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self::from_matches_except(m, &[]))
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for LearnerArgs {
    fn augment_args(cmd: Command) -> Command {
        Self::augment_except(cmd, &[])
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

/// The parameters `bulwark tune` takes as fixed: every learner flag but `--seed`, which is
/// `tune`'s own (the folds', the threat's and the learner's seed at once).
#[derive(Debug, Clone, Default)]
pub struct TuneLearnerArgs(pub LearnerArgs);

/// The flags [`TuneLearnerArgs`] leaves to `tune`.
const TUNE_OWNS: &[&str] = &["seed"];

impl FromArgMatches for TuneLearnerArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(LearnerArgs::from_matches_except(m, TUNE_OWNS)))
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for TuneLearnerArgs {
    fn augment_args(cmd: Command) -> Command {
        LearnerArgs::augment_except(cmd, TUNE_OWNS)
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
