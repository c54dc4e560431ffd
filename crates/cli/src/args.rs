//! Raw command-line definitions (clap derive). Values are parsed and range-checked here;
//! building configuration objects happens in the command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Robust linear classification under feature deletion, corruption and contamination.
#[derive(Debug, Parser)]
#[command(name = "bulwark", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Data directory holding the non-embedded data sets (default: $BULWARK_DATA).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect data sets.
    #[command(subcommand)]
    Data(DataCommand),
    /// A short end-to-end demonstration on the embedded wdbc data (no data directory needed).
    #[command(after_help = "Example:\n  bulwark demo --budget 3 --seed 1")]
    Demo(DemoArgs),
}

/// `bulwark data …`
#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Shape, classes and sparsity of a data set (a built-in name or a file).
    #[command(
        after_help = "Examples:\n  bulwark data info wdbc --json\n  bulwark data info mnist10k --data-dir ../shared/data\n  bulwark data info my.libsvm"
    )]
    Info(DataInfoArgs),
}

/// `bulwark data info`
#[derive(Debug, Args)]
pub struct DataInfoArgs {
    /// Built-in name (wdbc, spambase, ionosphere, pima, splice, wine, usps, mnist10k) or a path.
    pub data: String,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark demo`
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Deletion budget N (features the adversary may delete per example, unit values).
    #[arg(long, default_value_t = 3.0)]
    pub budget: f64,
    /// Seed of the train/test split.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
