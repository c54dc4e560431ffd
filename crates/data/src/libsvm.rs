//! LIBSVM / svmlight text format: `label [qid:N] index:value index:value …`, 1-based strictly
//! increasing indices, `#` comments; a `qid:N` right after the label (svmlight ranking data) is
//! checked and ignored. Labels ±1 or 0/1 give a binary data set; other labels a multiclass one.

use bulwark_core::{
    CsrMatrix, Dataset, Error, FeatureNames, Features, Location, Result, Sign, Targets,
};

use std::io::{BufRead, BufReader, Read};

use crate::csvfile::truncate;
use crate::labels::ClassIndex;
use crate::read::{Compression, LineLimit, MAX_LINE_BYTES, to_error};

/// Parses LIBSVM text. `n_features` fixes the dimension (indices beyond it are an error);
/// otherwise it is the largest index seen. A `qid:N` token right after the label (svmlight
/// ranking format) is accepted and ignored when `N` is an integer; a non-integer query id or a
/// `qid:` anywhere else is an error naming the line and column.
pub fn parse_libsvm(bytes: &[u8], source: &str, n_features: Option<usize>) -> Result<Dataset> {
    read_libsvm(bytes, Compression::None, source, n_features, MAX_LINE_BYTES)
}

/// [`parse_libsvm`] from a stream (whose bytes came through `compression`, named in
/// messages), one line at a time: memory grows with the stored values, and a line longer than
/// `max_line` bytes is an [`Error::TooLarge`]. The feature count is the largest index (no
/// memory is sized by it); the data set records where it was declared
/// ([`Dataset::dimension_source`]).
pub fn read_libsvm(
    input: impl Read,
    compression: Compression,
    source: &str,
    n_features: Option<usize>,
    max_line: u64,
) -> Result<Dataset> {
    let mut reader = BufReader::new(LineLimit::new(input, max_line, compression));
    let mut indptr = vec![0usize];
    let mut indices = Vec::new();
    let mut values = Vec::new();
    let mut raw_labels: Vec<String> = Vec::new();
    let mut max_index = 0usize;
    let mut max_at = None;
    let mut bytes = Vec::new();
    for ln in 0.. {
        bytes.clear();
        if reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| to_error(e, source))?
            == 0
        {
            break;
        }
        let line_no = ln + 1;
        let line = std::str::from_utf8(&bytes).map_err(|e| {
            Error::input(
                Location::source(source).line(line_no),
                format!("not UTF-8 text: {e}"),
            )
        })?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let content = line.split('#').next().unwrap_or("");
        let mut tokens = content.split_ascii_whitespace().peekable();
        let Some(label) = tokens.next() else { continue };
        let col_of = |tok: &str| tok.as_ptr() as usize - line.as_ptr() as usize + 1;
        if label.parse::<f64>().map_or(true, |v| !v.is_finite()) {
            return Err(Error::input(
                Location::source(source)
                    .line(line_no)
                    .column(1)
                    .field("label"),
                format!("expected a numeric label, found `{}`", truncate(label)),
            ));
        }
        raw_labels.push(label.to_string());
        let mut prev = 0usize;
        for (position, tok) in tokens.enumerate() {
            let loc = Location::source(source).line(line_no).column(col_of(tok));
            if let Some(qid) = tok.strip_prefix("qid:") {
                if position > 0 {
                    return Err(Error::input(
                        loc,
                        format!(
                            "`{}` after a feature: a query id must come right after the label",
                            truncate(tok)
                        ),
                    ));
                }
                if qid.parse::<i64>().is_err() {
                    return Err(Error::input(
                        loc,
                        format!(
                            "expected an integer query id `qid:N`, found `{}`",
                            truncate(tok)
                        ),
                    ));
                }
                continue; // svmlight ranking data: the query id is not a feature
            }
            let (i, v) = tok.split_once(':').ok_or_else(|| {
                Error::input(
                    loc.clone(),
                    format!("expected `index:value`, found `{}`", truncate(tok)),
                )
            })?;
            let idx: usize = i.parse().map_err(|_| {
                Error::input(
                    loc.clone(),
                    format!("expected a positive integer index, found `{}`", truncate(i)),
                )
            })?;
            if idx == 0 {
                return Err(Error::input(
                    loc,
                    "feature index 0: LIBSVM indices are 1-based",
                ));
            }
            if idx <= prev {
                let what = if idx == prev { "duplicate" } else { "unsorted" };
                return Err(Error::input(
                    loc,
                    format!(
                        "{what} feature index {idx} after {prev}: indices must be strictly increasing"
                    ),
                ));
            }
            if let Some(n) = n_features
                && idx > n
            {
                return Err(Error::input(
                    loc,
                    format!("feature index {idx} exceeds the declared {n} features"),
                ));
            }
            let val: f64 = v.parse().map_err(|_| {
                Error::input(
                    loc.clone(),
                    format!("expected a number, found `{}`", truncate(v)),
                )
            })?;
            if !val.is_finite() {
                return Err(Error::NonFinite {
                    location: loc,
                    value: v.to_string(),
                });
            }
            prev = idx;
            if idx > max_index {
                max_index = idx;
                max_at = Some(Location::source(source).line(line_no).column(col_of(tok)));
            }
            if val != 0.0 {
                indices.push(idx - 1);
                values.push(val);
            }
        }
        indptr.push(indices.len());
    }
    if raw_labels.is_empty() {
        return Err(Error::input(
            Location::source(source),
            "no examples (every line is empty or a comment)",
        ));
    }
    let n = n_features.unwrap_or(max_index);
    let m = raw_labels.len();
    let x = CsrMatrix::try_new(m, n, indptr, indices, values)?;
    let numeric: Vec<f64> = raw_labels
        .iter()
        .map(|s| s.parse().unwrap_or(f64::NAN))
        .collect();
    let binary: Option<Vec<Sign>> = numeric.iter().map(|&v| Sign::from_numeric(v)).collect();
    let uses_both_conventions = numeric.contains(&0.0) && numeric.contains(&-1.0);
    let data = match binary {
        Some(y) if !uses_both_conventions => {
            let neg = if numeric.contains(&0.0) { "0" } else { "-1" };
            Dataset::try_new(
                source,
                Features::Sparse(x),
                Targets::Binary(y),
                FeatureNames::Default(n),
                vec![neg.to_string(), "+1".to_string()],
            )
        }
        _ => {
            let classes = ClassIndex::from_names(&raw_labels);
            let labels = raw_labels.iter().map(|l| classes.index(l)).collect();
            Dataset::try_new(
                source,
                Features::Sparse(x),
                Targets::Multiclass(labels),
                FeatureNames::Default(n),
                classes.names(),
            )
        }
    }?;
    Ok(match (n_features, max_at) {
        (None, Some(at)) => data.with_dimension_source(at),
        _ => data,
    })
}
