//! The `bulwark` binary: parse, run, map the result to an exit code (0 success, 2 error,
//! broken pipe counts as success). Errors print one line to stderr.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = bulwark_cli::Cli::parse();
    // under `mpirun`: this rank's communicator (MPI is finalised when it is dropped)
    let comm = match bulwark_cli::ranks::communicator() {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = bulwark_cli::interrupt::install() {
        let _ = writeln!(
            std::io::stderr(),
            "warning: Ctrl-C will end bulwark at once (no handler: {e})"
        );
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // every rank but 0 writes nothing to stdout
    let mut sink = std::io::sink();
    let target: &mut dyn Write = if comm.is_root() { &mut out } else { &mut sink };
    match bulwark_cli::run_over(cli, target, comm.as_ref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if is_interrupted(&e) => {
            let _ = out.flush();
            let _ = writeln!(std::io::stderr(), "{}", error_line(&e));
            ExitCode::from(bulwark_cli::interrupt::EXIT_INTERRUPTED)
        }
        Err(e) => {
            let _ = out.flush();
            // over several ranks an error every rank shares is printed once, by rank 0; a
            // rank's own failure by that rank (the others say which rank failed)
            if comm.is_root() || !is_distributed(&e) {
                let rank = if comm.size() > 1 {
                    format!(" (rank {})", comm.rank())
                } else {
                    String::new()
                };
                let _ = writeln!(std::io::stderr(), "error{rank}: {}", error_line(&e));
            }
            ExitCode::from(2)
        }
    }
}

fn is_distributed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<bulwark_core::Error>(),
            Some(bulwark_core::Error::Distributed { .. })
        )
    })
}

/// The error on one line: each cause in the chain once. A cause whose text the message already
/// holds is left out (an `Error::Io` shows its OS error and then has it as its source, which
/// `{e:#}` would print twice); the rest are joined by `: ` as `{e:#}` does.
fn error_line(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if msg.is_empty() {
            msg = text;
        } else if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
    }
    msg.replace('\n', " ")
}

fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<bulwark_core::Error>(),
            Some(bulwark_core::Error::Interrupted { .. })
        )
    })
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::error_line;

    #[test]
    fn io_errors_state_the_os_message_once() {
        let io = std::io::Error::from_raw_os_error(2);
        let os = io.to_string();
        let e = anyhow::Error::from(bulwark_core::Error::io("/nope.json", io));
        assert_eq!(format!("{e:#}"), format!("/nope.json: {os}: {os}"));
        assert_eq!(error_line(&e), format!("/nope.json: {os}"));
        let e = e.context("reading the model");
        assert_eq!(
            error_line(&e),
            format!("reading the model: /nope.json: {os}")
        );
    }

    #[test]
    fn distinct_causes_are_all_kept_on_one_line() {
        let e = anyhow::anyhow!("inner\ncause")
            .context("middle")
            .context("outer");
        assert_eq!(error_line(&e), "outer: middle: inner cause");
        assert_eq!(error_line(&e), format!("{e:#}").replace('\n', " "));
    }
}
