//! Missing CSV cells: tokens, the three policies, and scaling that ignores them when it fits and
//! deletes them (0) when it transforms (`bulwark_core::missing`).

use bulwark_core::{Dataset, Error, Features};
use bulwark_data::{
    MissingPolicy, ReadOptions, Scaler, ScalingKind, load_with, parse_csv, parse_csv_with,
};

const TEXT: &str = "a,label,b,c\n1,x,NA,3\n,y,2,?\nNaN,x,nan,na\n4,y,5,-\n7,x,8,9\n";

fn delete() -> ReadOptions {
    ReadOptions {
        missing_tokens: vec!["-".into()],
        ..ReadOptions::missing(MissingPolicy::Delete)
    }
}

fn dense(d: &Dataset) -> Vec<Vec<f64>> {
    let Features::Dense(x) = d.features() else {
        panic!("dense expected")
    };
    (0..d.len()).map(|i| x.row(i).to_vec()).collect()
}

#[test]
fn tokens_become_a_mask_of_zeros_with_the_label_anywhere() {
    let d = parse_csv_with(TEXT.as_bytes(), "t.csv", &delete()).unwrap();
    assert_eq!(d.feature_names().to_vec(), ["a", "b", "c"]);
    let m = d.missing().unwrap();
    let rows: Vec<&[usize]> = (0..5).map(|i| m.row(i)).collect();
    assert_eq!(rows, [&[1][..], &[0, 2], &[0, 1, 2], &[2], &[]]);
    assert_eq!((m.count(), m.incomplete_rows()), (7, 4));
    assert_eq!(
        dense(&d),
        [
            [1.0, 0.0, 3.0],
            [0.0, 2.0, 0.0],
            [0.0, 0.0, 0.0],
            [4.0, 5.0, 0.0],
            [7.0, 8.0, 9.0]
        ]
    );
    // without the user's token `-` is text, and the error names file, line, column and field
    let e = parse_csv_with(
        TEXT.as_bytes(),
        "t.csv",
        &ReadOptions::missing(MissingPolicy::Delete),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:5:4 (field `c`): expected a number or a missing-value token (empty, NA, NaN, ?), found `-`"
    );
    // infinities are still refused: they are not missing
    let e = parse_csv("label,a\nx,inf\n".as_bytes(), "i.csv").unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }), "{e}");
}

#[test]
fn the_error_policy_names_the_cell_and_the_other_policies() {
    let e = parse_csv_with(TEXT.as_bytes(), "t.csv", &ReadOptions::default()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("t.csv:2:3 (field `b`): missing value `NA`")
            && msg.contains("--missing drop")
            && msg.contains("--missing delete"),
        "{msg}"
    );
    // CRLF line ends: the same line numbers
    let crlf = TEXT.replace('\n', "\r\n");
    let e = parse_csv_with(crlf.as_bytes(), "t.csv", &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("t.csv:2:3 "), "{e}");
}

#[test]
fn the_drop_policy_keeps_complete_records_or_fails() {
    let opts = ReadOptions {
        missing: MissingPolicy::Drop,
        ..delete()
    };
    let d = parse_csv_with(TEXT.as_bytes(), "t.csv", &opts).unwrap();
    assert_eq!(d.len(), 1);
    assert!(d.missing().is_none());
    assert_eq!(dense(&d), [[7.0, 8.0, 9.0]]);
    let e = parse_csv_with("label,a\nx,NA\ny,\n".as_bytes(), "n.csv", &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "n.csv: the missing-value policy `drop` left no record: all 2 records have a missing cell \
         (`--missing delete` keeps them with the missing features deleted)"
    );
    // load_with reports how many records were left out
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.csv");
    std::fs::write(&p, TEXT).unwrap();
    let l = load_with(p.to_str().unwrap(), None, &opts).unwrap();
    assert_eq!((l.data.len(), l.dropped), (1, 4));
}

/// The scaling fits on the observed cells only, and a missing cell scales to 0: the same as the
/// value `shift_j` the map sends to 0 written in its place.
#[test]
fn scaling_ignores_missing_cells_and_maps_them_to_zero() {
    let d = parse_csv_with(TEXT.as_bytes(), "t.csv", &delete()).unwrap();
    for kind in [ScalingKind::Standard, ScalingKind::MinMax] {
        let s = Scaler::fit(&d, kind).unwrap();
        // feature a is observed as 1, 4, 7; b as 2, 5, 8; c as 3, 9
        match kind {
            ScalingKind::Standard => {
                assert_eq!(s.shift, [4.0, 5.0, 6.0]);
                assert!((s.factor[0] - 1.0 / 6f64.sqrt()).abs() < 1e-15);
                assert_eq!(s.factor[2], 1.0 / 3.0);
            }
            ScalingKind::MinMax => {
                assert_eq!(s.shift, [4.0, 5.0, 6.0]);
                assert_eq!(s.factor, [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
            }
        }
        let t = s.transform(&d).unwrap();
        assert_eq!(t.missing(), d.missing());
        let filled: String = {
            let mut out = String::from("a,label,b,c\n");
            for i in 0..d.len() {
                let cell = |j: usize| {
                    if d.missing().unwrap().is_missing(i, j) {
                        format!("{}", s.shift[j])
                    } else {
                        format!("{}", d.row(i).get(j))
                    }
                };
                let label = &d.class_names()[d.targets().class_index(i)];
                out.push_str(&format!("{},{label},{},{}\n", cell(0), cell(1), cell(2)));
            }
            out
        };
        let copy = parse_csv(filled.as_bytes(), "f.csv").unwrap();
        assert_eq!(dense(&s.transform(&copy).unwrap()), dense(&t), "{kind:?}");
    }
}
