#![doc = include_str!("../README.md")]

pub mod args;
mod commands;
pub mod ui;

use std::io::Write;

pub use args::Cli;

/// Runs a parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    commands::dispatch(cli, out)
}
