//! What the CLI shows on stderr besides errors: progress (indicatif) and warnings. Progress is
//! drawn only for a person watching: never with `--quiet`, `--json`, or when stderr is not a
//! terminal (pipes, CI, tests).

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Output preferences shared by every command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ui {
    /// `--quiet`: no progress, no warnings.
    pub quiet: bool,
}

impl Ui {
    fn hidden(self, json: bool) -> bool {
        self.quiet || json || !std::io::stderr().is_terminal()
    }

    /// A spinner with a message and the elapsed time, for work of unknown length. Finish it
    /// with `finish_and_clear`.
    pub fn spinner(self, json: bool, msg: impl Into<Cow<'static, str>>) -> ProgressBar {
        if self.hidden(json) {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new_spinner().with_message(msg);
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
            pb.set_style(style);
        }
        pb.enable_steady_tick(Duration::from_millis(120));
        pb
    }

    /// A bar over `len` steps.
    pub fn bar(self, json: bool, len: u64, msg: impl Into<Cow<'static, str>>) -> ProgressBar {
        if self.hidden(json) {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len).with_message(msg);
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} [{elapsed}<{eta}]")
        {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.enable_steady_tick(Duration::from_millis(250));
        pb
    }

    /// A one-line warning on stderr (not with `--quiet`).
    pub fn warn(self, msg: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr(), "warning: {msg}");
        }
    }
}
