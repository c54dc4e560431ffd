//! Free-format MPS reader.
//!
//! Sections: `NAME`, `OBJSENSE` (`MIN`/`MAX`/`MINIMIZE`/`MAXIMIZE`, on the same or the
//! next line), `ROWS` (`N`, `E`, `L`, `G`), `COLUMNS` (integer `MARKER` lines are
//! accepted and ignored: the LP relaxation is read), `RHS`, `RANGES`, `BOUNDS`
//! (`UP`, `LO`, `FX`, `FR`, `MI`, `PL`, `BV`, `LI`, `UI`) and `ENDATA`. Names may not
//! contain spaces. The first `N` row is the objective; other `N` rows are dropped. An
//! RHS on the objective row sets the constant offset to `-rhs` (the usual convention).
//! A negative `UP` bound on a variable whose lower bound is still the default 0 sets
//! the lower bound to `-∞` (the classic convention). Files ending in `.gz` are
//! decompressed.

use crate::error::MpsError;
use crate::problem::{CscMatrix, LpProblem, Sense};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Reads an MPS file (`.mps` or `.mps.gz`).
pub fn read_mps(path: impl AsRef<Path>) -> Result<LpProblem, MpsError> {
    let path = path.as_ref();
    let file = std::fs::File::open(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        parse_mps(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        parse_mps(BufReader::new(file))
    }
}

/// Parses MPS text from a string.
pub fn parse_mps_str(text: &str) -> Result<LpProblem, MpsError> {
    parse_mps(text.as_bytes())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Section {
    None,
    Name,
    ObjSense,
    Rows,
    Columns,
    Rhs,
    Ranges,
    Bounds,
    End,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RowType {
    N,
    E,
    L,
    G,
}

/// The longest line the reader accepts (1 MiB): memory is bounded by it, not by the input.
pub const MAX_LINE_BYTES: u64 = 1 << 20;

fn num(tok: &str, line: usize) -> Result<f64, MpsError> {
    let v: f64 = tok.parse().map_err(|_| MpsError::BadNumber {
        line,
        token: tok.to_string(),
    })?;
    if v.is_nan() {
        return Err(MpsError::BadNumber {
            line,
            token: tok.to_string(),
        });
    }
    Ok(v)
}

/// Parses MPS text from any reader.
pub fn parse_mps<R: Read>(reader: R) -> Result<LpProblem, MpsError> {
    let reader = BufReader::new(reader);
    let mut section = Section::None;
    let mut seen_rows = false;
    let mut seen_columns = false;
    let mut name: Option<String> = None;
    let mut sense = Sense::Minimize;
    let mut obj_row: Option<String> = None;
    // row name -> (index among constraint rows, or None for the objective / dropped N rows)
    let mut row_map: HashMap<String, Option<usize>> = HashMap::new();
    let mut row_names: Vec<String> = Vec::new();
    let mut row_types: Vec<RowType> = Vec::new();
    let mut col_map: HashMap<String, usize> = HashMap::new();
    let mut col_names: Vec<String> = Vec::new();
    let mut c: Vec<f64> = Vec::new();
    let mut col_ptr: Vec<usize> = vec![0];
    let mut row_idx: Vec<usize> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    let mut current_col_rows: HashMap<usize, ()> = HashMap::new();
    let mut current_obj_set = false;
    let mut rhs: Vec<f64> = Vec::new();
    let mut ranges: Vec<Option<f64>> = Vec::new();
    let mut offset = 0.0;
    let mut col_lower: Vec<f64> = Vec::new();
    let mut col_upper: Vec<f64> = Vec::new();
    let mut lower_set: Vec<bool> = Vec::new();
    let mut line_no = 0usize;

    let mut reader = reader;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = Read::take(&mut reader, MAX_LINE_BYTES + 1).read_until(b'\n', &mut bytes)?;
        if read == 0 {
            break;
        }
        line_no += 1;
        if bytes.len() as u64 > MAX_LINE_BYTES && !bytes.ends_with(b"\n") {
            return Err(MpsError::Syntax {
                line: line_no,
                message: format!(
                    "a line longer than {MAX_LINE_BYTES} bytes (no MPS line needs one; not read further)"
                ),
            });
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| MpsError::Syntax {
            line: line_no,
            message: format!("not UTF-8 text: {e}"),
        })?;
        let line = text.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_end();
        if trimmed.is_empty() || trimmed.starts_with('*') {
            continue;
        }
        let is_header = !line.starts_with(' ') && !line.starts_with('\t');
        let toks: Vec<&str> = trimmed.split_whitespace().collect();
        if is_header {
            let head = toks[0].to_ascii_uppercase();
            section = match head.as_str() {
                "NAME" => {
                    name = toks.get(1).map(|s| (*s).to_string());
                    Section::Name
                }
                "OBJSENSE" => {
                    if let Some(s) = toks.get(1) {
                        sense = parse_sense(s, line_no)?;
                    }
                    Section::ObjSense
                }
                "ROWS" => {
                    seen_rows = true;
                    Section::Rows
                }
                "COLUMNS" => {
                    if !seen_rows {
                        return Err(MpsError::MissingSection {
                            line: line_no,
                            section: "ROWS",
                        });
                    }
                    seen_columns = true;
                    Section::Columns
                }
                "RHS" | "RANGES" | "BOUNDS" | "ENDATA" => {
                    if !seen_columns {
                        return Err(MpsError::MissingSection {
                            line: line_no,
                            section: "COLUMNS",
                        });
                    }
                    match head.as_str() {
                        "RHS" => Section::Rhs,
                        "RANGES" => Section::Ranges,
                        "BOUNDS" => Section::Bounds,
                        _ => Section::End,
                    }
                }
                _ => {
                    return Err(MpsError::Syntax {
                        line: line_no,
                        message: format!(
                            "unknown section header `{}` (expected NAME, OBJSENSE, ROWS, COLUMNS, RHS, RANGES, BOUNDS or ENDATA)",
                            toks[0]
                        ),
                    });
                }
            };
            if section == Section::End {
                break;
            }
            continue;
        }
        match section {
            Section::None | Section::Name | Section::End => {
                return Err(MpsError::Syntax {
                    line: line_no,
                    message: "data line outside of a section".into(),
                });
            }
            Section::ObjSense => sense = parse_sense(toks[0], line_no)?,
            Section::Rows => {
                if toks.len() != 2 {
                    return Err(MpsError::Syntax {
                        line: line_no,
                        message: "ROWS line: expected `TYPE NAME`".into(),
                    });
                }
                let rt = match toks[0].to_ascii_uppercase().as_str() {
                    "N" => RowType::N,
                    "E" => RowType::E,
                    "L" => RowType::L,
                    "G" => RowType::G,
                    _ => {
                        return Err(MpsError::UnknownRowType {
                            line: line_no,
                            token: toks[0].to_string(),
                        });
                    }
                };
                let rname = toks[1].to_string();
                if row_map.contains_key(&rname) {
                    return Err(MpsError::DuplicateRow {
                        line: line_no,
                        name: rname,
                    });
                }
                if rt == RowType::N {
                    if obj_row.is_none() {
                        obj_row = Some(rname.clone());
                    }
                    row_map.insert(rname, None);
                } else {
                    row_map.insert(rname.clone(), Some(row_names.len()));
                    row_names.push(rname);
                    row_types.push(rt);
                    rhs.push(0.0);
                    ranges.push(None);
                }
            }
            Section::Columns => {
                if toks.len() >= 3 && toks[1].trim_matches('\'').eq_ignore_ascii_case("MARKER") {
                    continue; // integer markers: read the LP relaxation
                }
                if toks.len() != 3 && toks.len() != 5 {
                    return Err(MpsError::Syntax {
                        line: line_no,
                        message: "COLUMNS line: expected `COLUMN ROW VALUE [ROW VALUE]`".into(),
                    });
                }
                let cname = toks[0];
                let j = if col_names.last().is_some_and(|l| l == cname) {
                    col_names.len() - 1
                } else {
                    if col_map.contains_key(cname) {
                        return Err(MpsError::DuplicateColumn {
                            line: line_no,
                            name: cname.to_string(),
                        });
                    }
                    // close previous column
                    if !col_names.is_empty() {
                        col_ptr.push(row_idx.len());
                    }
                    current_col_rows.clear();
                    current_obj_set = false;
                    col_map.insert(cname.to_string(), col_names.len());
                    col_names.push(cname.to_string());
                    c.push(0.0);
                    col_lower.push(0.0);
                    col_upper.push(f64::INFINITY);
                    lower_set.push(false);
                    col_names.len() - 1
                };
                for pair in toks[1..].chunks(2) {
                    let (rname, val) = (pair[0], num(pair[1], line_no)?);
                    match row_map.get(rname) {
                        None => {
                            return Err(MpsError::UnknownRow {
                                line: line_no,
                                name: rname.to_string(),
                                section: "COLUMNS",
                            });
                        }
                        Some(None) => {
                            if obj_row.as_deref() == Some(rname) {
                                if current_obj_set {
                                    return Err(MpsError::DuplicateEntry {
                                        line: line_no,
                                        col: cname.into(),
                                        row: rname.into(),
                                    });
                                }
                                current_obj_set = true;
                                c[j] = val;
                            }
                        }
                        Some(Some(i)) => {
                            if current_col_rows.insert(*i, ()).is_some() {
                                return Err(MpsError::DuplicateEntry {
                                    line: line_no,
                                    col: cname.into(),
                                    row: rname.into(),
                                });
                            }
                            if val != 0.0 {
                                row_idx.push(*i);
                                values.push(val);
                            }
                        }
                    }
                }
            }
            Section::Rhs | Section::Ranges => {
                let sec = if section == Section::Rhs {
                    "RHS"
                } else {
                    "RANGES"
                };
                let pairs: &[&str] = match toks.len() {
                    2 | 4 => &toks[..],
                    3 | 5 => &toks[1..],
                    _ => {
                        return Err(MpsError::Syntax {
                            line: line_no,
                            message: format!("{sec} line: expected `[SET] ROW VALUE [ROW VALUE]`"),
                        });
                    }
                };
                for pair in pairs.chunks(2) {
                    let (rname, val) = (pair[0], num(pair[1], line_no)?);
                    match row_map.get(rname) {
                        None => {
                            return Err(MpsError::UnknownRow {
                                line: line_no,
                                name: rname.to_string(),
                                section: sec,
                            });
                        }
                        Some(None) => {
                            if section == Section::Rhs && obj_row.as_deref() == Some(rname) {
                                offset = -val;
                            }
                        }
                        Some(Some(i)) => {
                            if section == Section::Rhs {
                                rhs[*i] = val;
                            } else {
                                ranges[*i] = Some(val);
                            }
                        }
                    }
                }
            }
            Section::Bounds => {
                let btype = toks[0].to_ascii_uppercase();
                let needs_value = !matches!(btype.as_str(), "FR" | "MI" | "PL" | "BV");
                if !matches!(
                    btype.as_str(),
                    "UP" | "LO" | "FX" | "FR" | "MI" | "PL" | "BV" | "LI" | "UI"
                ) {
                    return Err(MpsError::UnknownBoundType {
                        line: line_no,
                        token: toks[0].to_string(),
                    });
                }
                let (cname, val_tok) = match (needs_value, toks.len()) {
                    (true, 4) => (toks[2], Some(toks[3])),
                    (true, 3) => (toks[1], Some(toks[2])),
                    (false, 3) if btype != "BV" => (toks[2], None),
                    (false, 3) => {
                        // BV with optional value: `BV BND COL` or `BV COL VAL`
                        if col_map.contains_key(toks[2]) {
                            (toks[2], None)
                        } else {
                            (toks[1], Some(toks[2]))
                        }
                    }
                    (false, 4) => (toks[2], Some(toks[3])),
                    (false, 2) => (toks[1], None),
                    _ => {
                        return Err(MpsError::Syntax {
                            line: line_no,
                            message: "BOUNDS line: expected `TYPE [SET] COLUMN [VALUE]`".into(),
                        });
                    }
                };
                let Some(&j) = col_map.get(cname) else {
                    return Err(MpsError::UnknownColumn {
                        line: line_no,
                        name: cname.to_string(),
                    });
                };
                let val = match val_tok {
                    Some(t) => num(t, line_no)?,
                    None => 0.0,
                };
                match btype.as_str() {
                    "UP" | "UI" => {
                        col_upper[j] = val;
                        if val < 0.0 && !lower_set[j] && col_lower[j] == 0.0 {
                            col_lower[j] = f64::NEG_INFINITY;
                        }
                    }
                    "LO" | "LI" => {
                        col_lower[j] = val;
                        lower_set[j] = true;
                    }
                    "FX" => {
                        col_lower[j] = val;
                        col_upper[j] = val;
                        lower_set[j] = true;
                    }
                    "FR" => {
                        col_lower[j] = f64::NEG_INFINITY;
                        col_upper[j] = f64::INFINITY;
                        lower_set[j] = true;
                    }
                    "MI" => {
                        col_lower[j] = f64::NEG_INFINITY;
                        lower_set[j] = true;
                    }
                    "PL" => col_upper[j] = f64::INFINITY,
                    _ => {
                        // BV
                        col_lower[j] = 0.0;
                        col_upper[j] = 1.0;
                        lower_set[j] = true;
                    }
                }
            }
        }
    }
    if section != Section::End {
        let missing = if !seen_rows {
            "ROWS"
        } else if !seen_columns {
            "COLUMNS"
        } else {
            "ENDATA"
        };
        return Err(MpsError::MissingSection {
            line: line_no + 1,
            section: missing,
        });
    }
    if !col_names.is_empty() {
        col_ptr.push(row_idx.len());
    }
    let m = row_names.len();
    let n = col_names.len();
    // sort row indices within each column (COLUMNS lines may list rows in any order)
    for j in 0..n {
        let (a, b) = (col_ptr[j], col_ptr[j + 1]);
        let mut e: Vec<(usize, f64)> = (a..b).map(|p| (row_idx[p], values[p])).collect();
        e.sort_by_key(|t| t.0);
        for (k, (i, v)) in e.into_iter().enumerate() {
            row_idx[a + k] = i;
            values[a + k] = v;
        }
    }
    let mut row_lower = vec![0.0; m];
    let mut row_upper = vec![0.0; m];
    for i in 0..m {
        let b = rhs[i];
        let (lo, up) = match row_types[i] {
            RowType::E => match ranges[i] {
                None => (b, b),
                Some(r) if r >= 0.0 => (b, b + r),
                Some(r) => (b + r, b),
            },
            RowType::L => (ranges[i].map_or(f64::NEG_INFINITY, |r| b - r.abs()), b),
            RowType::G => (b, ranges[i].map_or(f64::INFINITY, |r| b + r.abs())),
            RowType::N => unreachable!("N rows are not stored"),
        };
        row_lower[i] = lo;
        row_upper[i] = up;
    }
    let a = CscMatrix {
        nrows: m,
        ncols: n,
        col_ptr,
        row_idx,
        values,
    };
    let p = LpProblem {
        name,
        sense,
        c,
        offset,
        a,
        row_lower,
        row_upper,
        col_lower,
        col_upper,
        col_names: Some(col_names),
        row_names: Some(row_names),
    };
    p.validate()?;
    Ok(p)
}

fn parse_sense(tok: &str, line: usize) -> Result<Sense, MpsError> {
    match tok.to_ascii_uppercase().as_str() {
        "MIN" | "MINIMIZE" | "MINIMISE" => Ok(Sense::Minimize),
        "MAX" | "MAXIMIZE" | "MAXIMISE" => Ok(Sense::Maximize),
        _ => Err(MpsError::Syntax {
            line,
            message: format!("OBJSENSE: expected MIN or MAX, found `{tok}`"),
        }),
    }
}
