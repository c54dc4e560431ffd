//! Every figure `docs/results/README.md` quotes is checked against the file it comes from, so a
//! regenerated table with moved numbers fails here until the prose follows.
//!
//! **Markers.** A quoted figure is followed, without a space, by an HTML comment (invisible when
//! rendered) naming its source, fields separated by `;`:
//!
//! - `0.349<!-- spam.csv; learner=LP; attack=deletion; budget=4 -->`: the one CSV row whose
//!   columns equal the `key=value` filters (`task=all` unless a `task` is given; numbers compare
//!   as numbers), column `mean_error` unless a bare column name (`stderr`, `paper`, …) is given;
//! - `121<!-- run-quick.json; total_seconds -->`: a JSON value by dotted path (`grid.0` indexes
//!   an array; on an object a number is a key);
//! - `0.15<!-- not a cell: the generator's noise scale -->`: a number that is not a table cell
//!   (a parameter, a threshold, the paper's text), with the reason.
//!
//! **Tolerance.** The quoted figure must equal the value rounded to the quoted digits: within
//! half a unit of its last digit (`0.349` covers [0.3485, 0.3495]). A figure followed by `%`
//! is compared as a fraction (`8.6 %` against 0.086).
//!
//! **Nothing unmarked.** In the sections about an experiment (a heading `## NAME` with
//! `docs/results/NAME.csv`), every decimal number and every percentage must carry a marker.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results")
}

fn readme() -> String {
    std::fs::read_to_string(results_dir().join("README.md")).expect("docs/results/README.md")
}

/// A CSV as a header and its rows.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn load_csv(name: &str) -> Result<Table, String> {
    let path = results_dir().join(name);
    let mut r = csv::Reader::from_path(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let header = r
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let rows = r
        .records()
        .map(|rec| rec.map(|rec| rec.iter().map(str::to_string).collect()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{name}: {e}"))?;
    Ok(Table { header, rows })
}

/// Whether a CSV cell equals a filter value (as numbers when both parse).
fn same(cell: &str, want: &str) -> bool {
    match (cell.parse::<f64>(), want.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => cell == want,
    }
}

/// The value a marker points at.
fn lookup(marker: &str, csvs: &mut BTreeMap<String, Table>) -> Result<f64, String> {
    let mut parts = marker.split(';').map(str::trim);
    let file = parts.next().unwrap_or_default();
    if file.ends_with(".csv") {
        if !csvs.contains_key(file) {
            csvs.insert(file.to_string(), load_csv(file)?);
        }
        let table = &csvs[file];
        let mut filters: Vec<(&str, &str)> = Vec::new();
        let mut column = "mean_error";
        for p in parts {
            match p.split_once('=') {
                Some((k, v)) => filters.push((k.trim(), v.trim())),
                None => column = p,
            }
        }
        if !filters.iter().any(|(k, _)| *k == "task") {
            filters.push(("task", "all"));
        }
        let col = |name: &str| {
            table
                .header
                .iter()
                .position(|h| h == name)
                .ok_or(format!("{file} has no column `{name}`"))
        };
        let filters: Vec<(usize, &str)> = filters
            .iter()
            .map(|(k, v)| col(k).map(|c| (c, *v)))
            .collect::<Result<_, _>>()?;
        let c = col(column)?;
        let hits: Vec<&Vec<String>> = table
            .rows
            .iter()
            .filter(|r| filters.iter().all(|(k, v)| same(&r[*k], v)))
            .collect();
        match hits.as_slice() {
            [row] => row[c]
                .parse()
                .map_err(|_| format!("{file}: `{}` is not a number", row[c])),
            [] => Err(format!("no row of {file} matches")),
            _ => Err(format!("{} rows of {file} match", hits.len())),
        }
    } else if file.ends_with(".json") {
        let path = results_dir().join(file);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let key = parts.next().ok_or("a JSON marker needs a path")?;
        for k in key.split('.') {
            // an index into an array, else an object key (which may be a number: `n.50`)
            v = match (k.parse::<usize>(), v.is_array()) {
                (Ok(i), true) => v.get(i).cloned(),
                _ => v.get(k).cloned(),
            }
            .ok_or(format!("{file} has no `{key}`"))?;
        }
        v.as_f64().ok_or(format!("{file}: `{key}` is not a number"))
    } else {
        Err(format!(
            "unknown marker (want FILE.csv; …, FILE.json; PATH or `not a cell: why`): {marker}"
        ))
    }
}

/// The number written just before byte `end` of `line` (digits and one `.`), with its count
/// of decimals and whether a `%` follows it.
fn number_before(line: &str, end: usize) -> Option<(f64, usize, bool)> {
    let before = line[..end].trim_end();
    let (before, percent) = match before.strip_suffix('%') {
        Some(b) => (b.trim_end(), true),
        None => (before, false),
    };
    let start = before
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
    let s = before[start..].trim_start_matches('.');
    let decimals = s.split_once('.').map_or(0, |(_, d)| d.len());
    s.parse().ok().map(|v| (v, decimals, percent))
}

#[derive(Debug)]
struct Quote {
    line: usize,
    marker: String,
    quoted: f64,
    decimals: usize,
    percent: bool,
}

/// Every marker of the README with the figure before it.
fn quotes(text: &str) -> Result<Vec<Quote>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(s) = line[from..].find("<!--") {
            let s = from + s;
            let e = line[s..]
                .find("-->")
                .map(|e| s + e)
                .ok_or(format!("line {}: unclosed comment", i + 1))?;
            let marker = line[s + 4..e].trim().to_string();
            let (quoted, decimals, percent) = number_before(line, s).ok_or(format!(
                "line {}: no number before <!-- {marker} -->",
                i + 1
            ))?;
            out.push(Quote {
                line: i + 1,
                marker,
                quoted,
                decimals,
                percent,
            });
            from = e + 3;
        }
    }
    Ok(out)
}

#[test]
fn every_quoted_figure_matches_its_source() {
    let text = readme();
    let quotes = quotes(&text).unwrap();
    assert!(quotes.len() > 40, "only {} markers", quotes.len());
    let mut csvs = BTreeMap::new();
    let mut errors = Vec::new();
    for q in &quotes {
        if let Some(why) = q.marker.strip_prefix("not a cell:") {
            if why.trim().is_empty() {
                errors.push(format!("line {}: `not a cell` needs a reason", q.line));
            }
            continue;
        }
        let scale = if q.percent { 100.0 } else { 1.0 };
        match lookup(&q.marker, &mut csvs) {
            Ok(v) => {
                let half_unit = 0.5 * 10f64.powi(-(q.decimals as i32));
                if (q.quoted - v * scale).abs() > half_unit + 1e-9 {
                    errors.push(format!(
                        "line {}: quotes {}{} but <!-- {} --> is {} ({:.*})",
                        q.line,
                        q.quoted,
                        if q.percent { " %" } else { "" },
                        q.marker,
                        v,
                        q.decimals,
                        v * scale
                    ));
                }
            }
            Err(e) => errors.push(format!("line {}: {e}", q.line)),
        }
    }
    assert!(
        errors.is_empty(),
        "stale or broken figures:\n{}",
        errors.join("\n")
    );
}

/// Decimal numbers and percentages without a marker, in the sections about an experiment.
fn unmarked(text: &str, experiments: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut checked = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## ") {
            let first = h.split_whitespace().next().unwrap_or("");
            checked = experiments.iter().any(|e| e == first);
            continue;
        }
        if !checked || line.starts_with('#') {
            continue;
        }
        let b = line.as_bytes();
        let mut j = 0;
        while j < b.len() {
            if !b[j].is_ascii_digit() {
                j += 1;
                continue;
            }
            let start = j;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            let mut num = &line[start..j];
            // a sentence's full stop is not a decimal point
            if let Some(n) = num.strip_suffix('.') {
                num = n;
            }
            let after = line[start + num.len()..].trim_start();
            let percent = after.starts_with('%');
            let after = if percent {
                after[1..].trim_start()
            } else {
                after
            };
            let section_ref = line[..start].ends_with('§');
            if (num.contains('.') || percent) && !section_ref && !after.starts_with("<!--") {
                out.push(format!(
                    "line {}: {num}{}",
                    i + 1,
                    if percent { " %" } else { "" }
                ));
            }
        }
    }
    out
}

#[test]
fn no_unmarked_figures_in_the_experiment_sections() {
    let mut experiments: Vec<String> = std::fs::read_dir(results_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".csv").map(str::to_string)
        })
        .collect();
    experiments.sort();
    assert!(experiments.len() >= 7, "{experiments:?}");
    let missing = unmarked(&readme(), &experiments);
    assert!(
        missing.is_empty(),
        "figures without a source marker:\n{}",
        missing.join("\n")
    );
}

/// The README says the LP is below the SVM on every digit pair under deletion (every point of
/// `*_pairs_deletion.svg` below the diagonal), at every budget.
#[test]
fn pairs_claim_every_point_below_the_diagonal() {
    for file in ["usps.csv", "mnist.csv"] {
        let t = load_csv(file).unwrap();
        let col = |n: &str| t.header.iter().position(|h| h == n).unwrap();
        let (task, learner, attack, budget, err) = (
            col("task"),
            col("learner"),
            col("attack"),
            col("budget"),
            col("mean_error"),
        );
        let mut pairs = 0;
        for lp in t.rows.iter().filter(|r| {
            r[task] != "all" && r[learner] == "LP" && r[attack] == "deletion" && r[budget] != "0"
        }) {
            let svm = t
                .rows
                .iter()
                .find(|r| {
                    r[task] == lp[task]
                        && r[learner] == "SVM"
                        && r[attack] == "deletion"
                        && r[budget] == lp[budget]
                })
                .unwrap_or_else(|| {
                    panic!("{file}: no SVM row for {} N = {}", lp[task], lp[budget])
                });
            let (a, b): (f64, f64) = (lp[err].parse().unwrap(), svm[err].parse().unwrap());
            assert!(
                a < b,
                "{file} {} N = {}: LP {a} vs SVM {b}",
                lp[task],
                lp[budget]
            );
            pairs += 1;
        }
        assert!(pairs > 0, "{file}: no pair rows");
    }
}

#[test]
fn the_checker_catches_a_stale_figure_and_an_unmarked_one() {
    let mut csvs = BTreeMap::new();
    let q = &quotes("LP 0.351<!-- spam.csv; learner=LP; attack=deletion; budget=4 -->").unwrap()[0];
    let v = lookup(&q.marker, &mut csvs).unwrap();
    assert!((q.quoted - v).abs() > 0.5e-3, "0.351 should not match {v}");
    let exps = vec!["spam".to_string()];
    assert_eq!(
        unmarked("## spam\nLP 0.349 and 8 % here.\n## other\n0.5", &exps),
        vec!["line 2: 0.349", "line 2: 8 %"]
    );
    assert_eq!(number_before("x 8.6 %", 7), Some((8.6, 1, true)));
}
