//! Files as the field ships them, through the command line: LIBLINEAR's `heart_scale` (LIBSVM,
//! no extension), a bzip2-compressed copy without extension, svmlight `qid:` tokens, `--format`.

mod common;
use common::*;

use std::io::Write as _;
use std::path::{Path, PathBuf};

fn heart_scale() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/tests/fixtures/heart_scale")
}

#[test]
fn heart_scale_loads_and_trains_as_shipped_and_bzip2_compressed() {
    let h = heart_scale();
    let hs = h.to_str().unwrap();
    let info = ok_json(&["data", "info", hs, "--json"]);
    assert_eq!(
        (info["rows"].as_u64(), info["features"].as_u64()),
        (Some(270), Some(13))
    );
    assert_eq!(info["storage"], "sparse");

    let model = tmp("heart.json");
    let m = model.to_str().unwrap();
    let t = ok_json(&[
        "train", "--algo", "lp", "--data", hs, "--budget", "2", "--C", "1", "--out", m, "--json",
    ]);
    assert_eq!(t["rows"], 270);
    assert!(t["training_error"].as_f64().unwrap() < 0.25, "{t}");

    // bzip2, no extension: the same data (the fingerprint covers every value)
    let bz = tmp("heart-bz");
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    enc.write_all(&std::fs::read(&h).unwrap()).unwrap();
    std::fs::write(&bz, enc.finish().unwrap()).unwrap();
    let b = bz.to_str().unwrap();
    let info_bz = ok_json(&["data", "info", b, "--json"]);
    assert_eq!(info_bz["nnz"], info["nnz"]);
    let model_bz = tmp("heart-bz.json");
    let t_bz = ok_json(&[
        "train",
        "--algo",
        "lp",
        "--data",
        b,
        "--budget",
        "2",
        "--C",
        "1",
        "--out",
        model_bz.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(t_bz["fingerprint"], t["fingerprint"]);
    assert_eq!(t_bz["objective"], t["objective"]);

    // svmlight query ids are ignored: the same fingerprint
    let text = std::fs::read_to_string(&h).unwrap();
    let with_qid: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let (label, rest) = l.split_once(' ').unwrap();
            format!("{label} qid:{} {rest}\n", i / 10 + 1)
        })
        .collect();
    let q = tmp("heart-qid");
    std::fs::write(&q, with_qid).unwrap();
    let t_q = ok_json(&[
        "train",
        "--algo",
        "svm",
        "--data",
        q.to_str().unwrap(),
        "--out",
        tmp("q.json").to_str().unwrap(),
        "--json",
    ]);
    let t_svm = ok_json(&[
        "train",
        "--algo",
        "svm",
        "--data",
        hs,
        "--out",
        tmp("s.json").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(t_q["fingerprint"], t_svm["fingerprint"]);
}

#[test]
fn format_overrides_a_misleading_name() {
    let p = tmp("table.txt");
    std::fs::write(&p, "label,a,b\nx,1,2\ny,3,NA\n").unwrap();
    let s = p.to_str().unwrap();
    // the name says LIBSVM; the content is CSV, and the error says so
    let o = bulwark(&["data", "info", s]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--format csv"), "{err}");
    let info = ok_json(&["data", "info", s, "--format", "csv", "--json"]);
    assert_eq!(
        (info["rows"].as_u64(), info["missing_cells"].as_u64()),
        (Some(2), Some(1))
    );
}
