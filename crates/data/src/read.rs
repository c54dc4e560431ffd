//! Opening files: plain or gzip (detected by the magic bytes, not the extension), with I/O and
//! truncation errors that name the file.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use bulwark_core::{Error, Location, Result};
use flate2::read::MultiGzDecoder;

/// Reads a whole file, decompressing gzip when the file starts with the gzip magic `1f 8b`.
/// A missing, empty, truncated or corrupt file is a typed error naming it.
pub fn read_all(path: &Path) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut raw = Vec::new();
    BufReader::new(file)
        .read_to_end(&mut raw)
        .map_err(|e| Error::io(path, e))?;
    decode(&raw, &path.display().to_string())
}

/// Decompresses `raw` if it is gzip; names `source` in errors. Empty input is an error.
pub fn decode(raw: &[u8], source: &str) -> Result<Vec<u8>> {
    if raw.is_empty() {
        return Err(Error::input(Location::source(source), "file is empty"));
    }
    if raw.len() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
        let mut out = Vec::with_capacity(raw.len() * 4);
        MultiGzDecoder::new(raw)
            .read_to_end(&mut out)
            .map_err(|e| {
                Error::input(
                    Location::source(source),
                    format!("corrupt or truncated gzip stream: {e}"),
                )
            })?;
        if out.is_empty() {
            return Err(Error::input(
                Location::source(source),
                "gzip stream decompresses to an empty file",
            ));
        }
        Ok(out)
    } else {
        Ok(raw.to_vec())
    }
}
