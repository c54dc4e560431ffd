//! The `bulwark` command line, as a library so that tests and the xtask can drive it.
//!
//! Two stages, as in ripgrep: [`args`] holds the raw clap definitions (validated values only);
//! each module under `commands` turns them into typed configuration and runs it. Every command
//! writes to the `Write` it is given; errors propagate to `main`, which prints one line and
//! exits with status 2.

pub mod args;
mod commands;

use std::io::Write;

pub use args::Cli;

/// Runs a parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    commands::dispatch(cli, out)
}
