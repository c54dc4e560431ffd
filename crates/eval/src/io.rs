//! Atomic file output: every result file is written to a temporary sibling and renamed into
//! place, so a crashed or interrupted run never leaves a half-written table or plot.

use std::io::Write;
use std::path::Path;

use bulwark_core::Error;

/// Writes `bytes` to `path` atomically: a temporary file in the same directory (so the rename
/// does not cross file systems), flushed and synced, then renamed over `path`. Creates the
/// parent directory when missing.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}
