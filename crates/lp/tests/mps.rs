//! MPS reader tests: a complete small file and every bad-input case with its line number.

mod common;

use bulwark_lp::{IpmSettings, MpsError, Sense, Status, parse_mps_str, read_mps, solve};
use common::{RefOutcome, clarabel_solve, rel_err};

fn small_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/small.mps")
}

#[test]
fn reads_every_section_and_bound_type() {
    let lp = read_mps(small_path()).unwrap();
    assert_eq!(lp.name(), Some("SMALL"));
    assert_eq!(lp.sense(), Sense::Maximize);
    assert_eq!((lp.num_rows(), lp.num_vars(), lp.nnz()), (6, 7, 11)); // FREEROW (N) dropped
    assert_eq!(lp.offset(), 5.0); // RHS on the objective row: offset = −rhs
    assert_eq!(lp.objective(), &[3.0, 2.0, -1.0, 1.0, -2.0, 0.5, -1.0]);
    let (rl, ru) = (lp.row_lower(), lp.row_upper());
    assert_eq!((rl[0], ru[0]), (f64::NEG_INFINITY, 10.0)); // L
    assert_eq!((rl[1], ru[1]), (2.0, f64::INFINITY)); // G
    assert_eq!((rl[2], ru[2]), (1.0, 1.0)); // E
    assert_eq!((rl[3], ru[3]), (1.0, 3.0)); // E with R > 0: [rhs, rhs + R]
    assert_eq!((rl[4], ru[4]), (1.0, 3.0)); // E with R < 0: [rhs + R, rhs]
    assert_eq!((rl[5], ru[5]), (4.0, 8.0)); // L with R: [rhs − |R|, rhs]
    let (l, u) = (lp.col_lower(), lp.col_upper());
    assert_eq!((l[0], u[0]), (0.0, 4.0)); // UP
    assert_eq!((l[1], u[1]), (-1.0, f64::INFINITY)); // LO
    assert_eq!((l[2], u[2]), (f64::NEG_INFINITY, f64::INFINITY)); // FR
    assert_eq!((l[3], u[3]), (f64::NEG_INFINITY, 6.0)); // MI then UP
    assert_eq!((l[4], u[4]), (0.5, 0.5)); // FX
    assert_eq!((l[5], u[5]), (f64::NEG_INFINITY, -1.0)); // PL then negative UP: lower becomes −∞
    assert_eq!((l[6], u[6]), (0.0, 1.0)); // BV (LP relaxation)
}

#[test]
fn small_file_solves_to_the_reference_optimum() {
    let lp = read_mps(small_path()).unwrap();
    let RefOutcome::Optimal(reference) = clarabel_solve(&lp) else {
        panic!("reference failed")
    };
    let sol = solve(&lp, &IpmSettings::default()).unwrap();
    assert_eq!(sol.status, Status::Optimal);
    assert!(
        rel_err(sol.objective, reference) < 1e-8,
        "{} vs {}",
        sol.objective,
        reference
    );
}

#[test]
fn free_format_variants_are_accepted() {
    // RHS/RANGES without a set name, OBJSENSE on the header line, BOUNDS without a set name
    let text = "NAME T\nOBJSENSE MAXIMIZE\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1 c1 1\nRHS\n c1 4\nBOUNDS\n UP x 3\nENDATA\n";
    let lp = parse_mps_str(text).unwrap();
    assert_eq!(lp.sense(), Sense::Maximize);
    assert_eq!(lp.row_upper(), &[4.0]);
    assert_eq!(lp.col_upper(), &[3.0]);
    let sol = solve(&lp, &IpmSettings::default()).unwrap();
    assert!((sol.objective - 3.0).abs() < 1e-7);
}

fn err(text: &str) -> MpsError {
    parse_mps_str(text).expect_err("should fail")
}

const HEAD: &str = "NAME T\nROWS\n N obj\n L c1\nCOLUMNS\n";

#[test]
fn unknown_row_in_columns() {
    let e = err(&format!("{HEAD} x obj 1 c2 1\nENDATA\n"));
    assert!(
        matches!(&e, MpsError::UnknownRow { line: 6, name, section: "COLUMNS" } if name == "c2"),
        "{e}"
    );
    assert!(e.to_string().contains("line 6"));
}

#[test]
fn unknown_row_in_rhs_and_ranges() {
    let e = err(&format!("{HEAD} x obj 1 c1 1\nRHS\n rhs zz 1\nENDATA\n"));
    assert!(
        matches!(
            e,
            MpsError::UnknownRow {
                line: 8,
                section: "RHS",
                ..
            }
        ),
        "{e}"
    );
    let e = err(&format!("{HEAD} x obj 1 c1 1\nRANGES\n r zz 1\nENDATA\n"));
    assert!(
        matches!(
            e,
            MpsError::UnknownRow {
                line: 8,
                section: "RANGES",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn bad_number() {
    let e = err(&format!("{HEAD} x obj 1 c1 1.2.3\nENDATA\n"));
    assert!(
        matches!(&e, MpsError::BadNumber { line: 6, token } if token == "1.2.3"),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD} x obj 1 c1 1\nBOUNDS\n UP b x abc\nENDATA\n"
    ));
    assert!(matches!(e, MpsError::BadNumber { line: 8, .. }), "{e}");
}

#[test]
fn missing_sections() {
    let e = err("NAME T\nCOLUMNS\n x obj 1\nENDATA\n");
    assert!(
        matches!(
            e,
            MpsError::MissingSection {
                line: 2,
                section: "ROWS"
            }
        ),
        "{e}"
    );
    let e = err("NAME T\nROWS\n N obj\nRHS\nENDATA\n");
    assert!(
        matches!(
            e,
            MpsError::MissingSection {
                line: 4,
                section: "COLUMNS"
            }
        ),
        "{e}"
    );
    let e = err(&format!("{HEAD} x obj 1 c1 1\n"));
    assert!(
        matches!(
            e,
            MpsError::MissingSection {
                line: 7,
                section: "ENDATA"
            }
        ),
        "{e}"
    );
}

#[test]
fn duplicate_names() {
    let e = err("NAME T\nROWS\n N obj\n L c1\n G c1\nCOLUMNS\nENDATA\n");
    assert!(
        matches!(&e, MpsError::DuplicateRow { line: 5, name } if name == "c1"),
        "{e}"
    );
    let e = err(&format!("{HEAD} x obj 1\n y obj 1\n x c1 1\nENDATA\n"));
    assert!(
        matches!(&e, MpsError::DuplicateColumn { line: 8, name } if name == "x"),
        "{e}"
    );
    let e = err(&format!("{HEAD} x c1 1 c1 2\nENDATA\n"));
    assert!(matches!(e, MpsError::DuplicateEntry { line: 6, .. }), "{e}");
}

#[test]
fn unknown_bound_row_type_and_column() {
    let e = err(&format!("{HEAD} x obj 1 c1 1\nBOUNDS\n XX b x 1\nENDATA\n"));
    assert!(
        matches!(&e, MpsError::UnknownBoundType { line: 8, token } if token == "XX"),
        "{e}"
    );
    let e = err("NAME T\nROWS\n Q obj\nCOLUMNS\nENDATA\n");
    assert!(matches!(e, MpsError::UnknownRowType { line: 3, .. }), "{e}");
    let e = err(&format!(
        "{HEAD} x obj 1 c1 1\nBOUNDS\n UP b nope 1\nENDATA\n"
    ));
    assert!(matches!(e, MpsError::UnknownColumn { line: 8, .. }), "{e}");
}

#[test]
fn syntax_errors_carry_the_line() {
    let e = err(&format!("{HEAD} x obj\nENDATA\n"));
    assert_eq!(e.line(), Some(6));
    let e = err("NAME T\nWHATEVER\nENDATA\n");
    assert!(matches!(e, MpsError::Syntax { line: 2, .. }), "{e}");
}

#[test]
fn crossed_bounds_are_a_typed_problem_error() {
    let e = err(&format!(
        "{HEAD} x obj 1 c1 1\nBOUNDS\n LO b x 5\n UP b x 1\nENDATA\n"
    ));
    assert!(
        matches!(
            e,
            MpsError::Problem(bulwark_lp::ProblemError::CrossedBounds { .. })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("`x`"));
}

#[test]
fn reads_gzipped_files() {
    use std::io::Write;
    let text = std::fs::read(small_path()).unwrap();
    let dir = std::env::temp_dir().join(format!("bulwark-lp-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small.mps.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&text).unwrap();
    enc.finish().unwrap();
    let lp = read_mps(&path).unwrap();
    assert_eq!(lp, read_mps(small_path()).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn io_errors_are_typed() {
    let e = read_mps("/nonexistent/definitely/missing.mps").unwrap_err();
    assert!(matches!(e, MpsError::Io(_)));
    assert_eq!(e.line(), None);
}

/// A line longer than the reader's limit is an error naming the line, read no further (memory
/// bounded by the limit, not by the input).
#[test]
fn a_line_longer_than_the_limit_is_refused() {
    let mut text = String::from("NAME long\nROWS\n N obj\n");
    text.push_str(&"x".repeat(bulwark_lp::mps::MAX_LINE_BYTES as usize + 10));
    text.push('\n');
    let e = bulwark_lp::mps::parse_mps_str(&text)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("line 4: a line longer than 1048576 bytes"),
        "{e}"
    );
}
