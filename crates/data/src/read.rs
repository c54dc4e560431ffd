//! Opening files: plain, gzip, bzip2 or xz, detected by the magic bytes whatever the file is
//! called, with I/O, corruption and truncation errors that name the file and the compression.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use bulwark_core::{Error, Location, Result};
use bzip2::read::MultiBzDecoder;
use flate2::read::MultiGzDecoder;

/// The magic bytes that open an xz stream.
const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0x00];
/// The magic bytes that close an xz stream (the last two bytes of its footer).
const XZ_FOOTER_MAGIC: [u8; 2] = [b'Y', b'Z'];

/// A compression recognised by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed (no known magic).
    None,
    /// gzip (magic `1f 8b`); concatenated members are read one after the other.
    Gzip,
    /// bzip2 (magic `BZh`); concatenated streams (e.g. pbzip2 output) are read one after the
    /// other.
    Bzip2,
    /// xz (magic `fd 37 7a 58 5a 00`); concatenated streams and stream padding are read too.
    Xz,
}

impl Compression {
    /// The compression `raw` starts with.
    pub fn detect(raw: &[u8]) -> Self {
        if raw.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if raw.starts_with(b"BZh") {
            Compression::Bzip2
        } else if raw.starts_with(&XZ_MAGIC) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// Its name in messages: `gzip`, `bzip2`, `xz`, or `none`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
        }
    }
}

/// Reads a whole file, decompressing gzip, bzip2 or xz when the file starts with its magic
/// bytes (see [`Compression::detect`]), whatever its name. A missing, empty, truncated or corrupt
/// file is a typed error naming it.
pub fn read_all(path: &Path) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut raw = Vec::new();
    BufReader::new(file)
        .read_to_end(&mut raw)
        .map_err(|e| Error::io(path, e))?;
    decode(&raw, &path.display().to_string())
}

/// Decompresses `raw` if it is gzip, bzip2 or xz; names `source` in errors. Empty input, a
/// corrupt or truncated stream and a stream that decompresses to nothing are errors.
pub fn decode(raw: &[u8], source: &str) -> Result<Vec<u8>> {
    if raw.is_empty() {
        return Err(Error::input(Location::source(source), "file is empty"));
    }
    let compression = Compression::detect(raw);
    let mut out = Vec::with_capacity(raw.len() * 4);
    let done = match compression {
        Compression::None => return Ok(raw.to_vec()),
        Compression::Gzip => MultiGzDecoder::new(raw)
            .read_to_end(&mut out)
            .map(drop)
            .map_err(|e| e.to_string()),
        Compression::Bzip2 => MultiBzDecoder::new(raw)
            .read_to_end(&mut out)
            .map(drop)
            .map_err(|e| e.to_string()),
        Compression::Xz => xz_streams(raw).into_iter().try_for_each(|mut stream| {
            lzma_rs::xz_decompress(&mut stream, &mut out).map_err(|e| e.to_string())
        }),
    };
    let name = compression.name();
    done.map_err(|e| {
        Error::input(
            Location::source(source),
            format!("corrupt or truncated {name} stream: {e}"),
        )
    })?;
    if out.is_empty() {
        return Err(Error::input(
            Location::source(source),
            format!("{name} stream decompresses to an empty file"),
        ));
    }
    Ok(out)
}

/// Splits xz data into its concatenated streams (`xz` allows several, each optionally followed
/// by null stream padding; `lzma_rs::xz_decompress` reads exactly one). A boundary is a stream
/// footer's closing `YZ`, then null padding, then the next stream's magic; a false boundary inside
/// compressed data (an 8-byte pattern at least) would make a piece fail to decode, which is
/// reported like any other corruption.
fn xz_streams(raw: &[u8]) -> Vec<&[u8]> {
    let mut streams = Vec::new();
    let mut start = 0;
    let mut at = XZ_MAGIC.len();
    while at + XZ_FOOTER_MAGIC.len() <= raw.len() {
        if raw[at..].starts_with(&XZ_FOOTER_MAGIC) {
            let end = at + XZ_FOOTER_MAGIC.len();
            let padding = raw[end..].iter().take_while(|&&b| b == 0).count();
            let next = end + padding;
            if next == raw.len() || raw[next..].starts_with(&XZ_MAGIC) {
                streams.push(&raw[start..end]);
                if next == raw.len() {
                    return streams;
                }
                start = next;
                at = next + XZ_MAGIC.len();
                continue;
            }
        }
        at += 1;
    }
    streams.push(&raw[start..]);
    streams
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_magic() {
        assert_eq!(Compression::detect(b"\x1f\x8b\x08"), Compression::Gzip);
        assert_eq!(Compression::detect(b"BZh91AY&SY"), Compression::Bzip2);
        assert_eq!(Compression::detect(&XZ_MAGIC), Compression::Xz);
        assert_eq!(Compression::detect(b"\xfd7zXZ"), Compression::None);
        assert_eq!(Compression::detect(b"+1 1:0.5"), Compression::None);
        assert_eq!(Compression::detect(b""), Compression::None);
    }

    #[test]
    fn xz_streams_split_at_footers_followed_by_a_header() {
        let a: Vec<u8> = [&XZ_MAGIC[..], b"abcYZ"].concat();
        let b: Vec<u8> = [&XZ_MAGIC[..], b"dYZeYZ"].concat();
        let both = [&a[..], &[0, 0, 0, 0], &b[..], &[0, 0, 0, 0]].concat();
        assert_eq!(xz_streams(&both), vec![&a[..], &b[..]]);
        assert_eq!(xz_streams(&a), vec![&a[..]]);
        // no footer at all: one piece, left for the decoder to reject
        assert_eq!(xz_streams(&XZ_MAGIC), vec![&XZ_MAGIC[..]]);
        // a `YZ` inside the data that is not followed by a header is not a boundary
        let inner: Vec<u8> = [&XZ_MAGIC[..], b"aYZbYZ"].concat();
        assert_eq!(xz_streams(&inner), vec![&inner[..]]);
    }

    #[test]
    fn corrupt_and_empty_streams_name_the_source_and_compression() {
        let e = decode(b"BZh9 not really bzip2", "f.dat").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.dat: corrupt or truncated bzip2 stream"),
            "{e}"
        );
        let e = decode(&[&XZ_MAGIC[..], b"garbage"].concat(), "g").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("g: corrupt or truncated xz stream"),
            "{e}"
        );
        let e = decode(b"", "h").unwrap_err();
        assert_eq!(e.to_string(), "h: file is empty");
    }
}
