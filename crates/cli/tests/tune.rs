//! `bulwark tune` end to end: the CV table and the choice in JSON and in the model file, the
//! same seed giving the same bits, `--missing-from`, and `bulwark plot` of the table (bad
//! inputs: the corpus run by `bad_input.rs`).

mod common;
use common::*;

fn tune(out: &str, seed: &str) -> serde_json::Value {
    ok_json(&[
        "tune",
        "--algo",
        "lp",
        "--data",
        "wdbc",
        "--scale",
        "standard",
        "--grid",
        "C=0.1,1",
        "--grid",
        "budget=0,3",
        "--threat",
        "greedy-delete:3",
        "--folds",
        "3",
        "--seed",
        seed,
        "--out",
        out,
        "--json",
    ])
}

#[test]
fn tune_chooses_by_cross_validation_and_records_the_table() {
    let m = tmp("lp.json");
    let m = m.to_str().unwrap();
    let t = tune(m, "5");
    assert_eq!(t["threat"], "greedy-delete:3");
    assert_eq!(t["folds"], 3);
    assert_eq!(t["tuned"], serde_json::json!(["C", "budget", "values"]));
    let cv = t["cv"].as_array().unwrap();
    assert_eq!(cv.len(), 4);
    // the most regular point first: the smallest C with the largest budget
    assert_eq!(
        (cv[0]["C"].as_f64(), cv[0]["budget"].as_f64()),
        (Some(0.1), Some(3.0))
    );
    let means: Vec<f64> = cv
        .iter()
        .map(|r| r["mean_error"].as_f64().unwrap())
        .collect();
    let min = means.iter().copied().fold(f64::INFINITY, f64::min);
    let k = means.iter().position(|&e| e == min).unwrap();
    assert_eq!(t["best"]["C"], cv[k]["C"]);
    assert_eq!(t["best"]["budget"], cv[k]["budget"]);
    for r in cv {
        assert_eq!(r["folds"], 3);
        assert_eq!(r["fold_errors"].as_array().unwrap().len(), 3);
        assert!(r["std_error"].as_f64().unwrap() >= 0.0);
        assert_eq!(r["failed"], 0);
    }
    // on wdbc a greedy deletion of 3 features is survived best by training against it
    assert_eq!(t["best"]["budget"], 3.0, "{t}");
    // the model file carries the table, and the model is the chosen point refitted
    let info = ok_json(&["model", "info", m, "--json"]);
    let sel = &info["selection"];
    assert_eq!(sel["threat"], "greedy-delete:3");
    assert_eq!(sel["cv"].as_array().unwrap().len(), 4);
    assert_eq!(
        sel["cv"][sel["best"].as_u64().unwrap() as usize]["params"],
        t["best"]
    );
    assert_eq!(info["hyper_parameters"]["budget"], t["best"]["budget"]);
    assert_eq!(info["hyper_parameters"]["C"], t["best"]["C"]);
    assert_eq!(info["hyper_parameters"]["seed"], 5);
    let text = bulwark(&["model", "info", m]);
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .contains("selected by     tune: 3-fold CV under greedy-delete:3 (seed 5)")
    );
    // the same seed: the same choice and the same bits
    let again = tmp("lp-again.json");
    let t2 = tune(again.to_str().unwrap(), "5");
    assert_eq!(t["cv"], t2["cv"]);
    let w = |p: &str| ok_json(&["model", "info", p, "--json"])["weights"].clone();
    assert_eq!(w(m), w(again.to_str().unwrap()));
    // another seed: other folds
    let other = tmp("lp-other.json");
    let t3 = tune(other.to_str().unwrap(), "6");
    assert_ne!(t["cv"], t3["cv"]);
    // the table plotted against each tuned parameter
    let table = tmp("lp.tune.json");
    std::fs::write(&table, serde_json::to_vec(&t).unwrap()).unwrap();
    let svg = tmp("cv.svg");
    let p = ok_json(&[
        "plot",
        table.to_str().unwrap(),
        "--param",
        "budget",
        "--out",
        svg.to_str().unwrap(),
        "--json",
    ]);
    let labels: Vec<&str> = p["curves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert_eq!(labels.iter().filter(|l| l.ends_with("(chosen)")).count(), 1);
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("budget (lp, threat greedy-delete:3)")
    );
}

#[test]
fn missing_draws_from_the_records_given_and_the_text_table_marks_the_choice() {
    // pima2's complete records tuned under the pattern of its incomplete ones
    let dir = tmp("pima");
    std::fs::create_dir_all(&dir).unwrap();
    let m = dir.join("svm.json");
    let o = bulwark(&[
        "tune",
        "--algo",
        "svm",
        "--data",
        "pima2",
        "--missing",
        "drop",
        "--scale",
        "standard",
        "--grid",
        "C=0.01,1",
        "--threat",
        "missing",
        "--missing-from",
        "pima2",
        "--folds",
        "3",
        "--out",
        m.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("under missing") && text.contains("<- chosen"),
        "{text}"
    );
    assert!(
        text.contains("ties to the more regular model: the smaller C"),
        "{text}"
    );
    // without --missing-from the complete records have no pattern to draw: a typed error
    let o = bulwark(&[
        "tune",
        "--algo",
        "svm",
        "--data",
        "pima2",
        "--missing",
        "drop",
        "--threat",
        "missing",
        "--out",
        m.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("none of the 392 records misses a cell"));
}
