//! CSV with a header row and a `label` column (the format of the shared UCI/USPS files).

use bulwark_core::{Dataset, DenseMatrix, Error, Features, Location, Result, Targets};

use crate::labels::ClassIndex;

/// Parses CSV text: the first line is a header with a column named `label` (any position,
/// usually the first); every other column is a numeric feature. Errors name the source, line,
/// column and field: ragged rows, non-numeric or non-finite cells, no `label` column, no rows.
pub fn parse_csv(bytes: &[u8], source: &str) -> Result<Dataset> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| {
            Error::input(
                Location::source(source).line(1),
                format!("cannot read the header: {e}"),
            )
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
    let mut record = csv::StringRecord::new();
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            Error::input(
                Location::source(source).line(line),
                format!("malformed CSV: {e}"),
            )
        })?;
        if !more {
            break;
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
        if record.len() == 1 && record[0].is_empty() {
            continue; // blank line
        }
        if record.len() != headers.len() {
            return Err(Error::input(
                Location::source(source).line(line),
                format!(
                    "ragged row: expected {} fields as in the header, found {}",
                    headers.len(),
                    record.len()
                ),
            ));
        }
        for (k, cell) in record.iter().enumerate() {
            if k == label_col {
                if cell.is_empty() {
                    return Err(Error::input(
                        Location::source(source)
                            .line(line)
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
                    .line(line)
                    .column(k + 1)
                    .field(headers[k].to_string())
            };
            let v: f64 = cell.parse().map_err(|_| {
                Error::input(
                    loc(),
                    format!("expected a number, found `{}`", truncate(cell)),
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
    Dataset::try_new(
        source,
        Features::Dense(x),
        Targets::Multiclass(labels),
        feature_names,
        classes.names(),
    )
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
