//! Cancellation: a flag that something outside the computation sets (the command line's
//! Ctrl-C handler) and that long work checks at its safe points, where stopping leaves nothing
//! half-done. A safe point that finds it set returns [`Error::Interrupted`], which says what was
//! kept.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// A shared cancellation flag (cheap to clone: every clone sees the same flag).
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

/// Two flags are equal when both are set or both are not (a configuration holding one
/// compares by value).
impl PartialEq for Cancel {
    fn eq(&self, other: &Self) -> bool {
        self.is_requested() == other.is_requested()
    }
}

impl Cancel {
    /// A flag not yet set.
    pub fn new() -> Self {
        Self::default()
    }
    /// The flag itself, for a signal handler to set (`signal_hook::flag::register`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
    /// Asks the work to stop at its next safe point.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether stopping was asked for.
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
    /// A safe point: [`Error::Interrupted`] with `kept` (what stopping here keeps, in words)
    /// when stopping was asked for.
    pub fn check(&self, kept: impl FnOnce() -> String) -> Result<()> {
        if self.is_requested() {
            Err(Error::Interrupted { kept: kept() })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clone_sees_the_request() {
        let c = Cancel::new();
        let other = c.clone();
        assert!(c.check(|| "nothing".into()).is_ok());
        other.request();
        let e = c.check(|| "nothing written".into()).unwrap_err();
        assert_eq!(e.to_string(), "interrupted: nothing written");
        assert!(c.flag().load(Ordering::SeqCst));
    }
}
