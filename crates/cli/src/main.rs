//! The `bulwark` binary: parse, run, map the result to an exit code (0 success, 2 error,
//! broken pipe counts as success). Errors print one line to stderr.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = bulwark_cli::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match bulwark_cli::run(cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.flush();
            let msg = format!("{e:#}").replace('\n', " ");
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
