//! Ctrl-C (SIGINT) and SIGTERM: the first sets the process's [`Cancel`] flag, which commands
//! check at their safe points (between phases, at each solver iteration that reports progress,
//! before an output file is written) and stop with [`bulwark_core::Error::Interrupted`] — exit
//! status 130, one line saying what was kept, no partial output (files are written atomically).
//! A second signal ends the process at once with status 130.
//!
//! The same flag serves every long command (`train`, `eval`, `tune`): a command calls
//! [`check`] where stopping leaves nothing half-done.

use std::sync::OnceLock;

use bulwark_core::{Cancel, Result};

/// The exit status of an interrupted command (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

static CANCEL: OnceLock<Cancel> = OnceLock::new();

/// The process's cancellation flag (never set unless [`install`] was called and a signal came).
pub fn cancel() -> &'static Cancel {
    CANCEL.get_or_init(Cancel::new)
}

/// Installs the handlers of SIGINT and SIGTERM (the binary calls this once, before running a
/// command). A failure to install them is reported and the command runs without them.
pub fn install() -> std::io::Result<()> {
    let flag = cancel().flag();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // a second signal, with the flag already set, ends the process at once
        signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(EXIT_INTERRUPTED),
            flag.clone(),
        )?;
        signal_hook::flag::register(sig, flag.clone())?;
    }
    Ok(())
}

/// A safe point: stops with [`bulwark_core::Error::Interrupted`] (`kept` says what stopping here
/// keeps) when a signal came.
pub fn check(kept: impl FnOnce() -> String) -> Result<()> {
    cancel().check(kept)
}
