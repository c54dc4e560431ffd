//! Atomic file output: every result file is written to a temporary sibling and renamed into
//! place, so a crashed or interrupted run never leaves a half-written table or plot.

use std::path::Path;

use bulwark_core::Error;

/// Writes `bytes` to `path` atomically ([`bulwark_models::write_atomic`]: a temporary file in
/// the same directory, synced, then renamed over `path`), creating the parent directory when
/// missing.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    bulwark_models::write_atomic(path, bytes)
}
