//! Opening files: plain, gzip, bzip2 or xz, detected by the magic bytes whatever the file is
//! called, with I/O, corruption and truncation errors that name the file and the compression.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
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

/// The longest line (after decompression) a text reader accepts by default: 64 MiB.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// How many decompressed bytes [`Input::head`] holds for telling the format (1 MiB).
pub const HEAD_BYTES: usize = 1 << 20;

/// What can go wrong while reading a stream, carried inside an `io::Error` from the readers of
/// this module to the parsers ([`to_error`] turns it back into a typed error).
#[derive(Debug)]
enum ReadFailure {
    /// The compressed stream is corrupt or truncated.
    Corrupt(Compression, String),
    /// A line is longer than the limit.
    LineTooLong {
        /// 1-based line number.
        line: usize,
        /// The limit, in bytes.
        limit: u64,
        /// The compression the bytes came through.
        compression: Compression,
    },
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::Corrupt(c, e) => {
                write!(f, "corrupt or truncated {} stream: {e}", c.name())
            }
            ReadFailure::LineTooLong { line, limit, .. } => {
                write!(f, "line {line} is longer than {limit} bytes")
            }
        }
    }
}

impl std::error::Error for ReadFailure {}

/// The typed error for an I/O error met while reading `source`: a corrupt or truncated
/// compressed stream and an over-long line are input errors naming the file (and line), any
/// other failure an [`Error::Io`].
pub fn to_error(e: std::io::Error, source: &str) -> Error {
    let failure = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ReadFailure>());
    match failure {
        Some(ReadFailure::Corrupt(..)) => Error::input(
            Location::source(source),
            failure.map(ToString::to_string).unwrap_or_default(),
        ),
        Some(&ReadFailure::LineTooLong {
            line,
            limit,
            compression,
        }) => Error::TooLarge {
            location: Box::new(Location::source(source).line(line)),
            what: format!(
                "a line of more than {limit} bytes{}",
                match compression {
                    Compression::None => String::new(),
                    c => format!(" (after {} decompression)", c.name()),
                }
            ),
            bytes: limit.saturating_add(1),
            purpose: "the reader's line buffer".into(),
            limit: format!(
                "the line-length limit ({}; `--max-line` sets another)",
                bulwark_core::Bytes(limit)
            ),
        },
        None => Error::io(source, e),
    }
}

/// A decompressing reader whose read errors are [`ReadFailure::Corrupt`].
struct Decoding<R> {
    inner: R,
    compression: Compression,
}

impl<R: Read> Read for Decoding<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            std::io::Error::other(ReadFailure::Corrupt(self.compression, e.to_string()))
        })
    }
}

/// A reader that fails (an error that [`to_error`] makes an [`Error::TooLarge`]) once a line
/// exceeds `limit` bytes,
/// and remembers where each line ends (for line numbers in messages: [`LineLimit::line_at`]).
pub struct LineLimit<R> {
    inner: R,
    limit: u64,
    compression: Compression,
    /// Bytes read so far.
    offset: u64,
    /// Bytes since the last `\n`.
    current: u64,
    /// Whether the last byte read was `\r`.
    after_cr: bool,
    /// Where each line read so far ends: its `\n`, or the `\r` of its `\r\n` (one word per
    /// line: what the input contains), when asked for ([`LineLimit::recording_lines`]).
    newlines: Vec<u64>,
    /// Lines counted, whether or not their ends are recorded.
    lines: usize,
    /// Whether line ends are recorded.
    record: bool,
}

impl<R> std::fmt::Debug for LineLimit<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineLimit")
            .field("limit", &self.limit)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl<R: Read> LineLimit<R> {
    /// Wraps `inner`, whose bytes came through `compression` (named in the error).
    pub fn new(inner: R, limit: u64, compression: Compression) -> Self {
        Self {
            inner,
            limit,
            compression,
            offset: 0,
            current: 0,
            after_cr: false,
            newlines: Vec::new(),
            lines: 0,
            record: false,
        }
    }

    /// Also records where each line ends, for [`LineLimit::line_at`] (one word per line).
    pub fn recording_lines(mut self) -> Self {
        self.record = true;
        self
    }

    /// The 1-based line of the record that starts at byte `offset` (line ends recorded:
    /// [`LineLimit::recording_lines`]); an offset on the line end before it (`\n`, or either byte of `\r\n`, where csv reports a record after CRLF) counts
    /// as the next line.
    pub fn line_at(&self, offset: u64) -> usize {
        self.newlines.partition_point(|&n| n <= offset) + 1
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        for (i, &b) in buf[..k].iter().enumerate() {
            let at = self.offset + i as u64;
            if b == b'\n' {
                self.lines += 1;
                if self.record {
                    self.newlines.push(if self.after_cr { at - 1 } else { at });
                }
                self.current = 0;
                self.after_cr = false;
            } else {
                self.after_cr = b == b'\r';
                self.current += 1;
                if self.current > self.limit {
                    return Err(std::io::Error::other(ReadFailure::LineTooLong {
                        line: self.lines + 1,
                        limit: self.limit,
                        compression: self.compression,
                    }));
                }
            }
        }
        self.offset += k as u64;
        Ok(k)
    }
}

/// A file opened for reading, decompressed on the fly: the first decompressed bytes (at most
/// [`HEAD_BYTES`], for telling the format) and a reader of the whole content.
pub struct Input {
    /// The compression found by the magic bytes.
    pub compression: Compression,
    /// The first decompressed bytes.
    pub head: Vec<u8>,
    /// Whether `head` is the whole content.
    pub complete: bool,
    /// Every decompressed byte, `head` included.
    pub reader: Box<dyn Read>,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("compression", &self.compression)
            .field("head", &self.head.len())
            .field("complete", &self.complete)
            .finish_non_exhaustive()
    }
}

/// Opens `path` for streaming: gzip and bzip2 are decompressed as they are read; xz (whose
/// decoder is not incremental) is decompressed whole, each line held to `max_line` bytes as it
/// is written, so a stream that inflates to one endless line stops at the limit. An empty file,
/// a stream that decompresses to nothing and a corrupt one are typed errors naming the file.
pub fn open(path: &Path, max_line: u64) -> Result<Input> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    open_stream(BufReader::new(file), &path.display().to_string(), max_line)
}

/// [`open`] for any stream of raw (possibly compressed) bytes; `source` is named in errors.
pub fn open_stream(mut raw: impl BufRead + 'static, source: &str, max_line: u64) -> Result<Input> {
    let source = source.to_string();
    let magic = raw.fill_buf().map_err(|e| Error::io(&source, e))?.to_vec();
    if magic.is_empty() {
        return Err(Error::input(Location::source(&source), "file is empty"));
    }
    let compression = Compression::detect(&magic);
    let reader: Box<dyn Read> = match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(Decoding {
            inner: MultiGzDecoder::new(raw),
            compression,
        }),
        Compression::Bzip2 => Box::new(Decoding {
            inner: MultiBzDecoder::new(raw),
            compression,
        }),
        Compression::Xz => {
            let mut compressed = Vec::new();
            raw.read_to_end(&mut compressed)
                .map_err(|e| Error::io(&source, e))?;
            let mut sink = LineLimitedSink::new(max_line);
            let done = xz_streams(&compressed)
                .into_iter()
                .try_for_each(|mut s| lzma_rs::xz_decompress(&mut s, &mut sink));
            if let Err(e) = done {
                return Err(match sink.too_long {
                    Some(line) => to_error(
                        std::io::Error::other(ReadFailure::LineTooLong {
                            line,
                            limit: max_line,
                            compression,
                        }),
                        &source,
                    ),
                    None => Error::input(
                        Location::source(&source),
                        format!("corrupt or truncated xz stream: {e}"),
                    ),
                });
            }
            Box::new(std::io::Cursor::new(sink.out))
        }
    };
    let mut head = Vec::new();
    let mut reader = reader;
    (&mut reader)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| to_error(e, &source))?;
    if head.is_empty() {
        return Err(Error::input(
            Location::source(&source),
            format!(
                "{} stream decompresses to an empty file",
                compression.name()
            ),
        ));
    }
    let complete = head.len() < HEAD_BYTES;
    let reader = Box::new(std::io::Cursor::new(head.clone()).chain(reader));
    Ok(Input {
        compression,
        head,
        complete,
        reader,
    })
}

/// The xz decoder's output, held to `limit` bytes per line.
struct LineLimitedSink {
    out: Vec<u8>,
    limit: u64,
    current: u64,
    line: usize,
    too_long: Option<usize>,
}

impl LineLimitedSink {
    fn new(limit: u64) -> Self {
        Self {
            out: Vec::new(),
            limit,
            current: 0,
            line: 1,
            too_long: None,
        }
    }
}

impl std::io::Write for LineLimitedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            if b == b'\n' {
                self.line += 1;
                self.current = 0;
            } else {
                self.current += 1;
                if self.current > self.limit {
                    self.too_long = Some(self.line);
                    return Err(std::io::Error::other("line too long"));
                }
            }
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
