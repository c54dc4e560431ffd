//! CSV with a header row and a `label` column (the format of the shared UCI/USPS files), with
//! missing cells.

use bulwark_core::{Dataset, DenseMatrix, Error, Features, Location, MissingMask, Result, Targets};

use std::io::Read;

use crate::labels::ClassIndex;
use crate::options::{MissingPolicy, ReadOptions};
use crate::read::{Compression, LineLimit, to_error};

/// Parses CSV text with the default [`ReadOptions`] (a missing cell is an error).
pub fn parse_csv(bytes: &[u8], source: &str) -> Result<Dataset> {
    parse_csv_with(bytes, source, &ReadOptions::default())
}

/// Parses CSV text: the first line is a header with a column named `label` (any position,
/// usually the first); every other column is a numeric feature. A feature cell that is a
/// missing-value token ([`ReadOptions::is_missing_token`]) is an error, a dropped record or a
/// masked cell holding 0, as `options.missing` says. Errors name the source, line, column and
/// field: ragged rows, cells that are neither numbers nor missing tokens, non-finite numbers, no
/// `label` column, no rows, a line longer than [`ReadOptions::max_line_bytes`], or no record
/// left by [`MissingPolicy::Drop`].
pub fn parse_csv_with(bytes: &[u8], source: &str, options: &ReadOptions) -> Result<Dataset> {
    read_csv(bytes, Compression::None, source, options)
}

/// [`parse_csv_with`] from a stream (whose bytes came through `compression`, named in
/// messages): memory grows with the records read, never beyond
/// [`ReadOptions::max_line_bytes`] for one line.
pub fn read_csv(
    input: impl Read,
    compression: Compression,
    source: &str,
    options: &ReadOptions,
) -> Result<Dataset> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(LineLimit::new(input, options.max_line_bytes, compression).recording_lines());
    let headers = reader
        .headers()
        .map_err(|e| {
            csv_error(e, source, |e| {
                Error::input(
                    Location::source(source).line(1),
                    format!("cannot read the header: {e}"),
                )
            })
        })?
        .clone();
    if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
        return Err(Error::input(
            Location::source(source).line(1),
            "empty header: expected `label,feature1,...`",
        ));
    }
    let label_col = headers
        .iter()
        .position(|h| h.eq_ignore_ascii_case("label"))
        .ok_or_else(|| {
            Error::input(
                Location::source(source).line(1),
                format!(
                    "no `label` column in the header (found: {})",
                    preview(&headers)
                ),
            )
        })?;
    let feature_names: Vec<String> = headers
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != label_col)
        .map(|(_, h)| h.to_string())
        .collect();
    let n = feature_names.len();
    let mut data = Vec::new();
    let mut raw_labels = Vec::new();
    let mut mask_indptr = vec![0usize];
    let mut mask_cols = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let line = e
                .position()
                .map_or(0, |p| reader.get_ref().line_at(p.byte()));
            csv_error(e, source, |e| {
                Error::input(
                    Location::source(source).line(line),
                    format!("malformed CSV: {e}"),
                )
            })
        })?;
        if !more {
            break;
        }
        let byte = record.position().map_or(0, csv::Position::byte);
        // counted only for a message (csv's own line count is off after CRLF line ends)
        let line = || reader.get_ref().line_at(byte);
        if record.len() == 1 && record[0].is_empty() {
            continue; // blank line
        }
        if record.len() != headers.len() {
            return Err(Error::input(
                Location::source(source).line(line()),
                format!(
                    "ragged row: expected {} fields as in the header, found {}",
                    headers.len(),
                    record.len()
                ),
            ));
        }
        let row_start = data.len();
        for (k, cell) in record.iter().enumerate() {
            if k == label_col {
                if cell.is_empty() {
                    return Err(Error::input(
                        Location::source(source)
                            .line(line())
                            .column(k + 1)
                            .field("label"),
                        "empty label",
                    ));
                }
                raw_labels.push(cell.to_string());
                continue;
            }
            let loc = || {
                Location::source(source)
                    .line(line())
                    .column(k + 1)
                    .field(headers[k].to_string())
            };
            if options.is_missing_token(cell) {
                if options.missing == MissingPolicy::Error {
                    return Err(Error::input(
                        loc(),
                        format!(
                            "missing value `{}` under the missing-value policy `error`: \
                             `--missing drop` leaves such records out, `--missing delete` \
                             deletes the missing features",
                            truncate(cell)
                        ),
                    ));
                }
                mask_cols.push(data.len() - row_start);
                data.push(0.0);
                continue;
            }
            let v: f64 = cell.parse().map_err(|_| {
                Error::input(
                    loc(),
                    format!(
                        "expected a number or a missing-value token ({}), found `{}`",
                        options.describe_tokens(),
                        truncate(cell)
                    ),
                )
            })?;
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    location: loc(),
                    value: cell.to_string(),
                });
            }
            data.push(v);
        }
        mask_indptr.push(mask_cols.len());
    }
    if raw_labels.is_empty() {
        return Err(Error::input(
            Location::source(source),
            "no data rows after the header",
        ));
    }
    let classes = ClassIndex::from_names(&raw_labels);
    let labels = raw_labels.iter().map(|l| classes.index(l)).collect();
    let x = DenseMatrix::try_new(raw_labels.len(), n, data)?;
    let d = Dataset::try_new(
        source,
        Features::Dense(x),
        Targets::Multiclass(labels),
        feature_names,
        classes.names(),
    )?
    .with_missing(MissingMask::try_new(n, mask_indptr, mask_cols)?)?;
    if options.missing == MissingPolicy::Drop {
        return drop_incomplete(d).map(|(kept, _)| kept);
    }
    Ok(d)
}

/// [`MissingPolicy::Drop`]: the records without a missing cell and the number left out; an
/// error naming the data set when none is left.
pub fn drop_incomplete(data: Dataset) -> Result<(Dataset, usize)> {
    if data.n_missing() == 0 {
        return Ok((data, 0));
    }
    let (kept, removed) = data.drop_incomplete();
    if kept.is_empty() {
        return Err(Error::input(
            Location::source(data.name()),
            format!(
                "the missing-value policy `drop` left no record: all {removed} records have a \
                 missing cell (`--missing delete` keeps them with the missing features deleted)"
            ),
        ));
    }
    Ok((kept, removed))
}

/// A csv error: the reader's own failure (a corrupt stream, an over-long line) as
/// [`to_error`] types it, anything else as `otherwise` says.
fn csv_error(e: csv::Error, source: &str, otherwise: impl FnOnce(csv::Error) -> Error) -> Error {
    if !e.is_io_error() {
        return otherwise(e);
    }
    match e.into_kind() {
        csv::ErrorKind::Io(io) => to_error(io, source),
        _ => unreachable!("is_io_error"),
    }
}

fn preview(h: &csv::StringRecord) -> String {
    let v: Vec<&str> = h.iter().take(5).collect();
    let more = if h.len() > 5 { ", …" } else { "" };
    format!("{}{more}", v.join(", "))
}

pub(crate) fn truncate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}
