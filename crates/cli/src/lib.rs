#![doc = include_str!("../README.md")]

pub mod args;
mod commands;
pub mod interrupt;
pub mod learner_args;
pub mod ui;

use std::io::Write;

pub use args::Cli;

/// Runs a parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(t) = cli.threads {
        // the global pool can be set once per process; a second `run` in the same process
        // (tests) keeps the first setting
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(t))
            .build_global();
    }
    commands::dispatch(cli, out)
}
