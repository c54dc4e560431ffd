//! `bulwark` under `mpirun` with one rank killed mid-fit: the failure test of
//! `scripts/test-mpi.sh` (issue 66: a killed rank must end the run with a clear error, never a
//! hang). Needs the `mpi` feature.
//!
//! `rank_dies RANK CALLS <bulwark arguments>` runs the command line like the binary does, except
//! that rank `RANK` sends itself SIGKILL when it enters its reduction number `CALLS + 1` (counted
//! over the whole run: the launch checks, then the learner's passes), so it dies at a chosen,
//! reproducible point while the other ranks wait for it in a collective.

use std::cell::Cell;
use std::io::Write;
use std::process::ExitCode;

use bulwark_core::Communicator;
use clap::Parser;

/// Passes every reduction to `inner` and kills this process at reduction `after + 1` when it is
/// rank `rank`.
#[derive(Debug)]
struct DiesAt<'a> {
    inner: &'a dyn Communicator,
    rank: usize,
    after: u64,
    calls: Cell<u64>,
}

impl DiesAt<'_> {
    fn tick(&self) {
        let calls = self.calls.get() + 1;
        self.calls.set(calls);
        if self.inner.rank() == self.rank && calls > self.after {
            // as `kill -9` from outside would: no unwinding, no MPI_Finalize
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &std::process::id().to_string()])
                .status();
            // (only if `kill` could not be run)
            std::process::abort();
        }
    }
}

impl Communicator for DiesAt<'_> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn allreduce_sum(&self, buf: &mut [f64]) {
        self.tick();
        self.inner.allreduce_sum(buf);
    }
    fn allreduce_max(&self, buf: &mut [f64]) {
        self.tick();
        self.inner.allreduce_max(buf);
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(rank), Some(after)) = (
        args.next().and_then(|a| a.parse().ok()),
        args.next().and_then(|a| a.parse().ok()),
    ) else {
        let _ = writeln!(
            std::io::stderr(),
            "usage: rank_dies RANK CALLS <bulwark arguments>"
        );
        return ExitCode::from(2);
    };
    let cli = bulwark_cli::Cli::parse_from(std::iter::once("bulwark".to_string()).chain(args));
    let world = match bulwark_cli::ranks::communicator() {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(2);
        }
    };
    // as the binary does: SIGTERM (what mpirun sends the other ranks first) only sets a flag
    let _ = bulwark_cli::interrupt::install();
    let comm = DiesAt {
        inner: world.as_ref(),
        rank,
        after,
        calls: Cell::new(0),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut sink = std::io::sink();
    let target: &mut dyn Write = if comm.is_root() { &mut out } else { &mut sink };
    match bulwark_cli::run_over(cli, target, &comm) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error (rank {}): {e:#}", comm.rank());
            ExitCode::from(2)
        }
    }
}
