#![doc = include_str!("../README.md")]

pub mod args;
mod commands;
pub mod interrupt;
pub mod learner_args;
pub mod ranks;
pub mod ui;

use std::io::Write;

pub use args::Cli;

/// Runs a parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    run_over(cli, out, &bulwark_core::Single)
}

/// [`run`] as one of the ranks of `comm` (`mpirun`, the `mpi` feature): `train` splits the
/// examples over the ranks, rank 0 writes the model and `out`; other commands refuse more than
/// one rank.
pub fn run_over(
    cli: Cli,
    out: &mut dyn Write,
    comm: &dyn bulwark_core::Communicator,
) -> anyhow::Result<()> {
    if let Some(t) = cli.threads {
        // the global pool can be set once per process; a second `run` in the same process
        // (tests) keeps the first setting
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(t))
            .build_global();
    }
    commands::dispatch(cli, out, comm)
}
