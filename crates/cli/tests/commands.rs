//! `bulwark train / eval / certify / attack / lp solve` end to end, and their bad inputs.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bulwark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(args)
        .env_remove("BULWARK_DATA")
        .output()
        .expect("run bulwark")
}

fn ok_json(args: &[&str]) -> serde_json::Value {
    let o = bulwark(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn fails_with(args: &[&str], needle: &str) {
    let o = bulwark(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?} should fail: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected `{needle}` in `{err}`"
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bulwark-commands-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn train_eval_certify_attack_walkthrough() {
    let model = tmp("wdbc.json");
    let m = model.to_str().unwrap();
    let t = ok_json(&[
        "train", "--algo", "lp", "--data", "wdbc", "--scale", "minmax", "--budget", "5", "--C",
        "1", "--values", "mi", "--out", m, "--json",
    ]);
    let (obj, closed) = (
        t["objective"].as_f64().unwrap(),
        t["closed_form_objective"].as_f64().unwrap(),
    );
    assert!(
        (obj - closed).abs() < 1e-6 * (1.0 + obj),
        "{obj} vs {closed}"
    );
    assert!(t["iterations"].as_u64().unwrap() > 0 && t["seconds"].as_f64().is_some());
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(file["weights"].as_array().unwrap().len(), 30);
    assert!(file["bias"].is_number());

    let clean = ok_json(&["eval", "--model", m, "--data", "wdbc", "--json"])["error"]
        .as_f64()
        .unwrap();
    let greedy = ok_json(&[
        "eval",
        "--model",
        m,
        "--data",
        "wdbc",
        "--attack",
        "greedy-delete",
        "--budget",
        "5",
        "--json",
    ]);
    let exact = ok_json(&[
        "eval",
        "--model",
        m,
        "--data",
        "wdbc",
        "--attack",
        "exact-delete",
        "--budget",
        "5",
        "--json",
    ]);
    let (g, x) = (
        greedy["error"].as_f64().unwrap(),
        exact["error"].as_f64().unwrap(),
    );
    assert!(
        clean <= g && g <= x,
        "clean {clean} <= greedy {g} <= exact {x}"
    );
    let c1 = ok_json(&[
        "eval",
        "--model",
        m,
        "--data",
        "wdbc",
        "--attack",
        "greedy-corrupt",
        "--budget",
        "5",
        "--seed",
        "3",
        "--json",
    ]);
    let c2 = ok_json(&[
        "eval",
        "--model",
        m,
        "--data",
        "wdbc",
        "--attack",
        "greedy-corrupt",
        "--budget",
        "5",
        "--seed",
        "3",
        "--json",
    ]);
    assert_eq!(c1, c2, "same seed, same result");

    let cert = ok_json(&[
        "certify", "--model", m, "--data", "wdbc", "--budget", "5", "--json",
    ]);
    let (lo, up) = (
        cert["lower"].as_f64().unwrap(),
        cert["upper"].as_f64().unwrap(),
    );
    assert!(lo <= x + 1e-12 && x <= up + 1e-12, "{lo} <= {x} <= {up}");

    let out = tmp("attacked.csv.gz");
    let o = bulwark(&[
        "attack",
        "--model",
        m,
        "--data",
        "wdbc",
        "--attack",
        "greedy-delete",
        "--budget",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // the attacked file, read back and scaled by the model, has the greedy error
    let again = ok_json(&[
        "eval",
        "--model",
        m,
        "--data",
        out.to_str().unwrap(),
        "--json",
    ])["error"]
        .as_f64()
        .unwrap();
    assert!((again - g).abs() < 1e-9, "{again} vs {g}");
}

#[test]
fn lp_solve_afiro() {
    let Some(dir) = std::env::var_os("BULWARK_DATA") else {
        eprintln!("BULWARK_DATA not set: skipping");
        return;
    };
    let mps = PathBuf::from(dir).join("lp/afiro.mps");
    let v = ok_json(&["lp", "solve", mps.to_str().unwrap(), "--json"]);
    assert_eq!(v["status"], "optimal");
    let obj = v["objective"].as_f64().unwrap();
    assert!(
        ((obj - -464.7531428571) / 464.7531428571).abs() <= 1e-8,
        "{obj}"
    );
    assert!(v["iterations"].as_u64().is_some() && v["seconds"].as_f64().is_some());
}

#[test]
fn bad_inputs_across_commands() {
    let model = tmp("m.json");
    let m = model.to_str().unwrap();
    let o = bulwark(&[
        "train", "--algo", "lp", "--data", "wdbc", "--scale", "minmax", "--budget", "2", "--out", m,
    ]);
    assert!(o.status.success());
    fails_with(
        &[
            "train", "--algo", "lp", "--data", "wdbc", "--budget", "-1", "--out", m,
        ],
        "budget",
    );
    fails_with(
        &[
            "train", "--algo", "lp", "--data", "wdbc", "--budget", "30", "--out", m,
        ],
        "budget",
    );
    fails_with(
        &[
            "train", "--algo", "lp", "--data", "wdbc", "--C", "nan", "--out", m,
        ],
        "`C`",
    );
    fails_with(
        &[
            "train", "--algo", "lp", "--data", "wdbc", "--C", "-2", "--out", m,
        ],
        "`C`",
    );
    fails_with(
        &["train", "--algo", "magic", "--data", "wdbc", "--out", m],
        "invalid value 'magic'",
    );
    fails_with(
        &[
            "train", "--algo", "lp", "--data", "wdbc", "--pair", "benign", "--out", m,
        ],
        "--pair",
    );
    fails_with(
        &[
            "train",
            "--algo",
            "lp",
            "--data",
            "wdbc",
            "--positive",
            "nope",
            "--out",
            m,
        ],
        "nope",
    );
    let vals = tmp("values.txt");
    std::fs::write(&vals, "1\n2\n").unwrap();
    fails_with(
        &[
            "train",
            "--algo",
            "lp",
            "--data",
            "wdbc",
            "--values",
            vals.to_str().unwrap(),
            "--out",
            m,
        ],
        "2 feature values",
    );
    std::fs::write(&vals, "1\nx\n").unwrap();
    fails_with(
        &[
            "train",
            "--algo",
            "lp",
            "--data",
            "wdbc",
            "--values",
            vals.to_str().unwrap(),
            "--out",
            m,
        ],
        ":2",
    );
    // model files
    fails_with(
        &["eval", "--model", m, "--data", "spambase"],
        "feature count",
    );
    fails_with(
        &[
            "eval",
            "--model",
            m,
            "--data",
            "wdbc",
            "--attack",
            "greedy-delete",
            "--budget",
            "-3",
        ],
        "budget",
    );
    let text = std::fs::read_to_string(&model).unwrap();
    let trunc = tmp("trunc.json");
    std::fs::write(&trunc, &text[..text.len() / 2]).unwrap();
    fails_with(
        &["eval", "--model", trunc.to_str().unwrap(), "--data", "wdbc"],
        "not a valid bulwark model file",
    );
    let v9 = tmp("v9.json");
    std::fs::write(
        &v9,
        text.replace("\"format_version\": 1", "\"format_version\": 9"),
    )
    .unwrap();
    fails_with(
        &["eval", "--model", v9.to_str().unwrap(), "--data", "wdbc"],
        "version 9 is not supported",
    );
    fails_with(
        &[
            "eval",
            "--model",
            tmp("absent.json").to_str().unwrap(),
            "--data",
            "wdbc",
        ],
        "absent.json",
    );
    fails_with(
        &["certify", "--model", m, "--data", "wdbc", "--budget", "inf"],
        "budget",
    );
    // LP input
    let bad = tmp("bad.mps");
    std::fs::write(
        &bad,
        "NAME X\nROWS\n N obj\nCOLUMNS\n x1 nosuchrow 1\nENDATA\n",
    )
    .unwrap();
    fails_with(&["lp", "solve", bad.to_str().unwrap()], "nosuchrow");
    fails_with(
        &["lp", "solve", tmp("absent.mps").to_str().unwrap()],
        "absent.mps",
    );
}

#[test]
fn every_learner_trains_from_the_command_line() {
    for algo in ["o2b", "svm", "fdrop", "logreg"] {
        let model = tmp(&format!("{algo}.json"));
        let m = model.to_str().unwrap();
        let t = ok_json(&[
            "train", "--algo", algo, "--data", "wdbc", "--scale", "minmax", "--budget", "3",
            "--out", m, "--json",
        ]);
        assert!(
            t["objective"].as_f64().is_some_and(f64::is_finite),
            "{algo}: {t}"
        );
        assert!(t["training_error"].as_f64().unwrap() < 0.2, "{algo}: {t}");
        let file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
        assert_eq!(file["algorithm"], algo);
        assert_eq!(file["weights"].as_array().unwrap().len(), 30);
        assert!(file["bias"].is_number());
        let e = ok_json(&[
            "eval",
            "--model",
            m,
            "--data",
            "wdbc",
            "--attack",
            "greedy-delete",
            "--budget",
            "3",
            "--json",
        ]);
        assert!(e["error"].as_f64().unwrap() >= e["clean_error"].as_f64().unwrap());
    }
    let m = tmp("x.json");
    let m = m.to_str().unwrap();
    fails_with(
        &[
            "train", "--algo", "o2b", "--data", "wdbc", "--epochs", "0", "--out", m,
        ],
        "epochs",
    );
    fails_with(
        &[
            "train", "--algo", "svm", "--data", "wdbc", "--C", "-1", "--out", m,
        ],
        "`C`",
    );
    fails_with(
        &[
            "train", "--algo", "fdrop", "--data", "wdbc", "--C", "inf", "--out", m,
        ],
        "`C`",
    );
    fails_with(
        &[
            "train", "--algo", "logreg", "--data", "wdbc", "--l2", "nan", "--out", m,
        ],
        "l2",
    );
    fails_with(
        &[
            "train", "--algo", "o2b", "--data", "wdbc", "--budget", "40", "--out", m,
        ],
        "budget",
    );
    let one = tmp("one.csv");
    std::fs::write(&one, "label,a,b\nx,1,2\nx,3,4\n").unwrap();
    fails_with(
        &[
            "train",
            "--algo",
            "svm",
            "--data",
            one.to_str().unwrap(),
            "--positive",
            "x",
            "--out",
            m,
        ],
        "both classes",
    );
    let nan_values = tmp("nan-values.txt");
    std::fs::write(&nan_values, vec!["nan"; 30].join("\n")).unwrap();
    let lp = tmp("lp-for-values.json");
    assert!(
        bulwark(&[
            "train",
            "--algo",
            "lp",
            "--data",
            "wdbc",
            "--scale",
            "minmax",
            "--out",
            lp.to_str().unwrap()
        ])
        .status
        .success()
    );
    fails_with(
        &[
            "eval",
            "--model",
            lp.to_str().unwrap(),
            "--data",
            "wdbc",
            "--attack",
            "greedy-delete",
            "--budget",
            "1",
            "--values",
            nan_values.to_str().unwrap(),
        ],
        "must be finite",
    );
}
