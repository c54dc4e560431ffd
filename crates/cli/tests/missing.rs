//! Missing values end to end: a missing cell is a deleted feature (`bulwark_core::missing`) in
//! `predict`, `eval`, `certify` and `attack`, and `train --missing error|drop|delete`.

mod common;
use common::*;

use std::collections::BTreeMap;

/// wdbc as CSV text, with about `rate` of its feature cells blanked (`''`, `NA` and `?` in turn,
/// positions from a fixed xorshift stream); the blanked cells are written as `fill(j)` instead
/// when `fill` is given. Returns the text and the blanked cells per row.
fn wdbc_csv(rate: f64, fill: Option<&dyn Fn(usize) -> String>) -> (String, Vec<Vec<usize>>) {
    let (d, _) = bulwark_data::load("wdbc", None).unwrap();
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::from("label");
    for name in d.feature_names().iter() {
        text.push(',');
        text.push_str(&name);
    }
    text.push('\n');
    let (tokens, mut k) = (["", "NA", "?"], 0);
    let mut blanked = Vec::new();
    for i in 0..d.len() {
        text.push_str(&d.class_names()[d.targets().class_index(i)]);
        let mut row = Vec::new();
        for j in 0..d.n_features() {
            text.push(',');
            if next() < rate {
                row.push(j);
                match fill {
                    Some(f) => text.push_str(&f(j)),
                    None => {
                        text.push_str(tokens[k % 3]);
                        k += 1;
                    }
                }
            } else {
                text.push_str(&format!("{}", d.row(i).get(j)));
            }
        }
        text.push('\n');
        blanked.push(row);
    }
    (text, blanked)
}

fn per_example(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["predictions"].as_array().unwrap()
}

/// The acceptance test of issue 19: on wdbc with 10 % of its cells blanked, `predict` with an LP
/// model trained with standard scaling gives the same labels and scores as on the copy with those
/// cells replaced by the training means, and its certified flags agree with `certify` on that copy
/// at each record's remaining budget `N − (number missing)`.
#[test]
fn a_missing_cell_scores_as_the_training_mean_and_spends_budget() {
    let model = tmp("lp-standard.json");
    let m = model.to_str().unwrap();
    ok_json(&[
        "train", "--algo", "lp", "--data", "wdbc", "--scale", "standard", "--budget", "5", "--C",
        "1", "--out", m, "--json",
    ]);
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    let means: Vec<f64> = file["scaler"]["shift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let (blank, cells) = wdbc_csv(0.1, None);
    let mean_of = |j: usize| format!("{}", means[j]);
    let (filled, cells2) = wdbc_csv(0.1, Some(&mean_of));
    assert_eq!(cells, cells2);
    let total: usize = cells.iter().map(Vec::len).sum();
    assert!((1400..2000).contains(&total), "{total} cells blanked");
    let (pb, pf) = (tmp("wdbc-blank.csv"), tmp("wdbc-means.csv"));
    std::fs::write(&pb, blank).unwrap();
    std::fs::write(&pf, filled).unwrap();
    let (b, f) = (pb.to_str().unwrap(), pf.to_str().unwrap());

    let info = ok_json(&["data", "info", b, "--json"]);
    assert_eq!(info["missing_cells"].as_u64().unwrap() as usize, total);

    let on_blank = ok_json(&["predict", "--model", m, "--data", b, "--json"]);
    let on_means = ok_json(&["predict", "--model", m, "--data", f, "--json"]);
    assert_eq!(on_means["missing_records"], 0);
    let (pb, pm) = (per_example(&on_blank), per_example(&on_means));
    assert_eq!(pb.len(), 569);
    let mut by_budget: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, (x, z)) in pb.iter().zip(pm).enumerate() {
        assert_eq!(x["prediction"], z["prediction"], "example {i}");
        let (sx, sz) = (x["score"].as_f64().unwrap(), z["score"].as_f64().unwrap());
        assert!(
            (sx - sz).abs() <= 1e-12 * (1.0 + sz.abs()),
            "{i}: {sx} vs {sz}"
        );
        assert_eq!(x["missing"].as_u64().unwrap() as usize, cells[i].len());
        assert_eq!(x["missing_value"].as_f64().unwrap(), cells[i].len() as f64);
        assert_eq!(z["missing"], 0);
        let remaining = 5u64.saturating_sub(cells[i].len() as u64);
        by_budget.entry(remaining).or_default().push(i);
    }
    assert!(by_budget.len() >= 3, "{by_budget:?}");
    let (mut certified, mut not) = (0, 0);
    for (budget, rows) in &by_budget {
        let c = ok_json(&[
            "certify",
            "--model",
            m,
            "--data",
            f,
            "--budget",
            &budget.to_string(),
            "--per-example",
            "--json",
        ]);
        let verdicts = c["per_example"].as_array().unwrap();
        for &i in rows {
            let robust = verdicts[i]["verdict"] == "robust";
            assert_eq!(pb[i]["certified"].as_bool().unwrap(), robust, "example {i}");
            certified += usize::from(robust);
            not += usize::from(!robust);
        }
    }
    assert!(
        certified > 400 && not > 10,
        "{certified} certified, {not} not"
    );
    assert_eq!(
        on_blank["n_certified"].as_u64().unwrap() as usize,
        certified
    );

    // eval: the error on the records as they are, the same as predict's
    let e = ok_json(&["eval", "--model", m, "--data", b, "--json"]);
    assert_eq!(e["clean_error"], on_blank["error"]);
    assert_eq!(e["missing_records"], on_blank["missing_records"]);

    // attack: missing cells stay missing in the attacked copy
    let out = tmp("attacked.csv");
    let o = out.to_str().unwrap();
    ok_json(&[
        "attack",
        "--model",
        m,
        "--data",
        b,
        "--attack",
        "greedy-delete",
        "--budget",
        "5",
        "--out",
        o,
        "--json",
    ]);
    let info = ok_json(&["data", "info", o, "--json"]);
    assert_eq!(info["missing_cells"].as_u64().unwrap() as usize, total);
}

/// `train --missing`: `error` refuses and names the option, `drop` leaves the incomplete records
/// out, `delete` trains on them with the missing features deleted — the same LP as on the copy
/// with zeros in those cells (no scaling: 0 is the deleted value).
#[test]
fn train_missing_policies() {
    let (blank, cells) = wdbc_csv(0.02, None);
    let zero = |_: usize| "0".to_string();
    let (zeros, _) = wdbc_csv(0.02, Some(&zero));
    let (pb, pz) = (tmp("train-blank.csv"), tmp("train-zeros.csv"));
    std::fs::write(&pb, blank).unwrap();
    std::fs::write(&pz, zeros).unwrap();
    let (b, z) = (pb.to_str().unwrap(), pz.to_str().unwrap());
    let out = tmp("m.json");
    let o = out.to_str().unwrap();

    let refused = bulwark(&["train", "--algo", "lp", "--data", b, "--out", o]);
    assert_eq!(refused.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("--missing drop") && msg.contains("train-blank.csv:"),
        "{msg}"
    );

    let incomplete = cells.iter().filter(|c| !c.is_empty()).count();
    assert!(incomplete > 50, "{incomplete}");
    let dropped = ok_json(&[
        "train",
        "--algo",
        "svm",
        "--data",
        b,
        "--missing",
        "drop",
        "--out",
        o,
        "--json",
    ]);
    assert_eq!(dropped["rows"].as_u64().unwrap() as usize, 569 - incomplete);
    assert_eq!(
        dropped["missing_dropped_records"].as_f64().unwrap(),
        incomplete as f64
    );

    let args = |data: &str| -> Vec<String> {
        [
            "train", "--algo", "lp", "--data", data, "--budget", "3", "--C", "1", "--out", o,
            "--json",
        ]
        .map(String::from)
        .to_vec()
    };
    let mut a = args(b);
    a.extend(["--missing".into(), "delete".into()]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let deleted = ok_json(&a);
    let w_deleted: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let a = args(z);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let on_zeros = ok_json(&a);
    let w_zeros: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(
        deleted["missing_deleted_cells"].as_f64().unwrap(),
        cells.iter().map(Vec::len).sum::<usize>() as f64
    );
    assert_eq!(deleted["objective"], on_zeros["objective"]);
    assert_eq!(w_deleted["weights"], w_zeros["weights"]);
}
