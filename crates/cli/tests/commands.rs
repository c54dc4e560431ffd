//! `bulwark train / predict / eval / certify / attack / model / lp solve` end to end (bad inputs:
//! the corpus run by `bad_input.rs`).

mod common;
use common::*;

use std::path::PathBuf;

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
    // the repository's data/lp/ (the helper runs bulwark without BULWARK_DATA)
    let repo = bulwark_data::repository_data_dir().expect("the repository's data/ folder");
    let mps = repo.join("lp/afiro.mps");
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
fn every_learner_trains_from_the_command_line() {
    for algo in ["o2b", "svm", "fdrop", "logreg"] {
        let model = tmp(&format!("{algo}.json"));
        let m = model.to_str().unwrap();
        let mut args = vec![
            "train", "--algo", algo, "--data", "wdbc", "--scale", "minmax", "--out", m, "--json",
        ];
        // only the learners trained against a deletion budget take one (a flag a learner does
        // not take is an error, see the bad-input corpus)
        if matches!(algo, "o2b" | "fdrop") {
            args.extend(["--budget", "3"]);
        }
        let t = ok_json(&args);
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
        // the binary encoding of the same run predicts identically
        let bin = tmp(&format!("{algo}.bin"));
        let b = bin.to_str().unwrap();
        assert!(
            bulwark(&["model", "convert", m, "--out", b])
                .status
                .success()
        );
        assert_eq!(predict(m), predict(b), "{algo}");
    }
}

fn predict(model: &str) -> Vec<u8> {
    let o = bulwark(&["predict", "--model", model, "--data", "wdbc"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn json_and_binary_models_of_one_run_predict_identically() {
    let (json, bin, back) = (tmp("run.json"), tmp("run.bin"), tmp("run-back.json"));
    let (j, b, k) = (
        json.to_str().unwrap(),
        bin.to_str().unwrap(),
        back.to_str().unwrap(),
    );
    let t = ok_json(&[
        "train", "--algo", "lp", "--data", "wdbc", "--scale", "standard", "--values", "mi",
        "--budget", "3", "--out", j, "--json",
    ]);
    assert!(t["fingerprint"].as_str().unwrap().starts_with("sha256:"));
    let c = ok_json(&["model", "convert", j, "--out", b, "--json"]);
    let (jb, bb) = (
        c["input_bytes"].as_u64().unwrap(),
        c["output_bytes"].as_u64().unwrap(),
    );
    assert!(bb * 2 < jb, "binary {bb} bytes vs JSON {jb} bytes");
    assert_eq!(predict(j), predict(b));
    // JSON → binary → JSON loses nothing, down to the last bit of every weight
    assert!(
        bulwark(&["model", "convert", b, "--out", k])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&json).unwrap(), std::fs::read(&back).unwrap());
    // the same training run written directly as binary: the same model
    let direct = tmp("direct.bin");
    let d = direct.to_str().unwrap();
    assert!(
        bulwark(&[
            "train", "--algo", "lp", "--data", "wdbc", "--scale", "standard", "--values", "mi",
            "--budget", "3", "--out", d,
        ])
        .status
        .success()
    );
    let (x, y) = (
        ok_json(&["model", "info", j, "--json"]),
        ok_json(&["model", "info", d, "--json"]),
    );
    for field in ["weights", "bias", "scaler", "hyper_parameters", "training"] {
        assert_eq!(x[field], y[field], "{field}");
    }
    assert_eq!(predict(j), predict(d));
}

#[test]
fn models_from_another_crate_version_of_the_same_format_load() {
    for (version, crate_version) in [(2, "0.0.1"), (3, "0.0.2")] {
        let name = format!("model-v{version}-from-{crate_version}");
        models_of_an_older_format_load(&name, version, crate_version);
    }
    // a version-3 file converts to the current version with no selection record and the same
    // predictions
    let (v3, v4) = (fixture("model-v3-from-0.0.2.bin"), tmp("v3-to-v4.bin"));
    let out = v4.to_str().unwrap();
    assert!(
        bulwark(&["model", "convert", &v3, "--out", out])
            .status
            .success()
    );
    let info = ok_json(&["model", "info", out, "--json"]);
    assert_eq!(info["format_version"], 4);
    assert!(info["selection"].is_null());
    assert_eq!(predict(&v3), predict(out));
}

fn models_of_an_older_format_load(name: &str, version: u32, crate_version: &str) {
    let (j, b) = (
        fixture(&format!("{name}.json")),
        fixture(&format!("{name}.bin")),
    );
    for m in [&j, &b] {
        let info = ok_json(&["model", "info", m, "--json"]);
        assert_eq!(info["crate_version"], crate_version, "{m}");
        assert_eq!(info["format_version"], version, "{m}");
        // trained on all of wdbc: predicting wdbc reproduces the recorded training error
        let p = ok_json(&["predict", "--model", m, "--data", "wdbc", "--json"]);
        assert_eq!(p["n_examples"], 569);
        assert_eq!(p["error"], info["training"]["training_error"], "{m}");
        let first = &p["predictions"][0];
        assert!(first["score"].is_number() && first["prediction"].is_string());
    }
    assert_eq!(predict(&j), predict(&b));
}

#[test]
fn predict_writes_csv_and_warns_about_renamed_columns() {
    let m = fixture("model-v2-from-0.0.1.bin");
    let out = tmp("pred.csv");
    let o = bulwark(&[
        "predict",
        "--model",
        &m,
        "--data",
        "wdbc",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("569 predictions"));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "index,score,prediction,label");
    assert_eq!(lines.len(), 570);
    // same feature count, other column names: predicted, with a warning unless --quiet
    let mut csv = String::from("label");
    for j in 0..30 {
        csv.push_str(&format!(",x{j}"));
    }
    csv.push_str(&format!(
        "\nbenign{}\nmalignant{}\n",
        ",0".repeat(30),
        ",1".repeat(30)
    ));
    let data = tmp("renamed.csv");
    std::fs::write(&data, csv).unwrap();
    let d = data.to_str().unwrap();
    let loud = bulwark(&["predict", "--model", &m, "--data", d]);
    assert!(loud.status.success());
    let warning = String::from_utf8_lossy(&loud.stderr);
    assert!(
        warning.starts_with("warning: ") && warning.contains("`x0`"),
        "{warning}"
    );
    let quiet = bulwark(&["predict", "--model", &m, "--data", d, "--quiet"]);
    assert!(quiet.status.success() && quiet.stderr.is_empty());
    assert_eq!(quiet.stdout, loud.stdout);
}

#[test]
fn eval_budgets_give_a_curve_consistent_with_single_budgets() {
    let m = fixture("model-v2-from-0.0.1.json");
    let curve = ok_json(&[
        "eval",
        "--model",
        &m,
        "--data",
        "wdbc",
        "--attack",
        "greedy-delete",
        "--budgets",
        "0,2,4",
        "--json",
    ]);
    let points = curve["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let errors: Vec<f64> = points
        .iter()
        .map(|p| p["error"].as_f64().unwrap())
        .collect();
    assert!(errors.windows(2).all(|w| w[0] <= w[1]), "{errors:?}");
    assert_eq!(curve["clean_error"], points[0]["error"]);
    let single = ok_json(&[
        "eval",
        "--model",
        &m,
        "--data",
        "wdbc",
        "--attack",
        "greedy-delete",
        "--budget",
        "4",
        "--json",
    ]);
    assert_eq!(single["error"], points[2]["error"]);
    assert_eq!(single["algorithm"], "lp");
}

#[test]
fn every_command_has_an_example_in_its_help() {
    for cmd in [
        &["train"][..],
        &["predict"],
        &["eval"],
        &["certify"],
        &["attack"],
        &["plot"],
        &["demo"],
        &["data", "info"],
        &["data", "sample"],
        &["lp", "solve"],
        &["model", "info"],
        &["model", "convert"],
    ] {
        let mut args = cmd.to_vec();
        args.push("--help");
        let o = bulwark(&args);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{cmd:?}");
        assert!(text.contains("Example"), "{cmd:?}: no example");
        assert!(text.contains("--quiet"), "{cmd:?}: no --quiet");
        let example = format!("bulwark {}", cmd.join(" "));
        assert!(
            text.contains(&example),
            "{cmd:?}: example does not run `{example}`"
        );
    }
}

#[test]
fn plot_joins_single_budget_evaluations_into_one_curve() {
    let m = fixture("model-v2-from-0.0.1.bin");
    let mut inputs = Vec::new();
    for b in ["4", "0", "2"] {
        let o = bulwark(&[
            "eval",
            "--model",
            &m,
            "--data",
            "wdbc",
            "--attack",
            "greedy-delete",
            "--budget",
            b,
            "--json",
        ]);
        assert!(o.status.success());
        let p = tmp(&format!("eval-{b}.json"));
        std::fs::write(&p, &o.stdout).unwrap();
        inputs.push(p.display().to_string());
    }
    let svg = tmp("curve.svg");
    let mut args = vec!["plot".to_string()];
    args.extend(inputs);
    args.extend(["--out", svg.to_str().unwrap(), "--json"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = ok_json(&refs);
    assert_eq!(v["curves"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["curves"][0]["points"], 3);
    assert_eq!(
        v["curves"][0]["label"],
        "model-v2-from-0.0.1: greedy-delete"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("greedy-delete"));
}

#[test]
fn train_screen_from_solves_on_working_sets_and_reports_the_rounds() {
    let model = tmp("screened.json");
    let m = model.to_str().unwrap();
    let args = |screen: &'static str| {
        let mut a = vec![
            "train", "--algo", "lp", "--data", "wdbc", "--scale", "standard", "--budget", "2",
            "--out", m, "--json",
        ];
        if !screen.is_empty() {
            a.extend(["--screen-from", screen]);
        }
        a
    };
    let whole = ok_json(&args(""));
    assert_eq!(whole["screening_rounds"], 0.0, "{whole}");
    let t = ok_json(&args("100"));
    // wdbc (569 examples) is screened from 100 examples on: at least one round, and the
    // answer (certified, or the whole LP's after giving up) is the same optimum
    assert!(t["screening_rounds"].as_f64().unwrap() >= 1.0, "{t}");
    assert_eq!(t["converged"], true, "{t}");
    let (a_whole, b) = (
        whole["objective"].as_f64().unwrap(),
        t["objective"].as_f64().unwrap(),
    );
    assert!(
        (a_whole - b).abs() <= 1e-6 * (1.0 + a_whole),
        "{a_whole} vs {b}"
    );
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(file["hyper_parameters"]["screen_from"], 100);
    // the text report says what screening did
    let text: Vec<&str> = args("100").into_iter().filter(|a| *a != "--json").collect();
    let o = bulwark(&text);
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("screening") && stdout.contains("on working sets of examples"),
        "{stdout}"
    );
    // --no-screening wins over --screen-from
    let mut a = args("100");
    a.push("--no-screening");
    assert_eq!(ok_json(&a)["screening_rounds"], 0.0);
    // the first sample's fraction: a bad one, or one without screening, is a typed error
    let mut a = args("100");
    a.extend(["--screen-sample", "0.25"]);
    let t = ok_json(&a);
    assert!(t["screening_rounds"].as_f64().unwrap() >= 1.0, "{t}");
    // a first sample over half the examples (0.75: every example, `k = round(1/0.75) = 1`) is
    // over the working set's limit: screening gives up and the whole LP answers, which the JSON
    // and the text say (not a fallback: the same solver answered)
    let mut a = args("100");
    a.extend(["--screen-sample", "0.75"]);
    let o = bulwark(&a);
    assert!(o.status.success(), "{o:?}");
    let t: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(t["screening_gave_up"], 1.0, "{t}");
    assert_eq!(t["solver"], "dsx-ipm", "{t}");
    assert_eq!(t["fallbacks"].as_array().unwrap().len(), 0, "{t}");
    let text: Vec<&str> = a.iter().copied().filter(|a| *a != "--json").collect();
    let o = bulwark(&text);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("gave up, the whole LP solved"), "{stdout}");
    assert!(
        (t["objective"].as_f64().unwrap() - a_whole).abs() <= 1e-6,
        "{t}"
    );
    // rounds solved to the tolerance (no early end) report none ended early
    let mut a = args("100");
    a.extend(["--screen-early-stop", "0"]);
    assert_eq!(ok_json(&a)["screening_ended_early"], 0.0);
    for (extra, what) in [
        (
            vec!["--screen-from", "100", "--screen-sample", "1.5"],
            "screening.sample_fraction",
        ),
        (
            vec!["--no-screening", "--screen-sample", "0.25"],
            "screen_sample",
        ),
        (
            vec!["--screen-from", "100", "--screen-early-stop", "1"],
            "screening.early_stop",
        ),
        (
            vec!["--no-screening", "--screen-early-stop", "0.01"],
            "screen_early_stop",
        ),
    ] {
        let mut a = args("");
        a.extend(extra);
        let o = bulwark(&a);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(what), "{err}");
    }
}

#[test]
fn train_json_names_the_solver_and_says_when_a_fallback_answered() {
    let model = tmp("solver.json");
    let m = model.to_str().unwrap();
    let t = ok_json(&[
        "train", "--algo", "lp", "--data", "wdbc", "--scale", "standard", "--budget", "2", "--out",
        m, "--json",
    ]);
    assert_eq!(t["solver"], "dsx-ipm", "{t}");
    assert_eq!(t["converged"], true);
    assert_eq!(t["fallbacks"].as_array().unwrap().len(), 0);
    assert_eq!(t["tolerance"], 1e-8);
    // (an answer that stopped short of the tolerance would say why)
    assert!(t["stopped"].is_null(), "{t}");
    // the structured IPM held to 3 iterations cannot finish: the fallback answers, the JSON
    // and a warning on stderr say so, and the model file records it
    let o = bulwark(&[
        "train",
        "--algo",
        "lp",
        "--data",
        "wdbc",
        "--scale",
        "standard",
        "--budget",
        "2",
        "--ipm-max-iter",
        "3",
        "--out",
        m,
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(t["solver"], "dsx-ipm", "{t}");
    let fallbacks = t["fallbacks"].as_array().unwrap();
    assert!(fallbacks[0].as_str().unwrap().starts_with("dsx-ipm"), "{t}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning: lp:"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(file["report"]["solver"], t["solver"]);
    assert_eq!(file["hyper_parameters"]["ipm_max_iter"], 3);
    // every other learner names its solver too
    for (algo, solver) in [
        ("o2b", "cube-projected-perceptron"),
        ("svm", "dual-cd"),
        ("logreg", "newton-cg"),
    ] {
        let t = ok_json(&[
            "train", "--algo", algo, "--data", "wdbc", "--out", m, "--json",
        ]);
        assert_eq!(t["solver"], solver, "{algo}: {t}");
    }
}

/// Kernel models from the command line: the RBF SVM (SMO) and KEN-GURU train, predict, take the
/// noise attack and convert to `.bin`; KEN-GURU with the linear kernel scores every example as
/// `--algo guru --solver sgd` with the same seed does.
#[test]
fn kernel_models_train_predict_and_take_noise() {
    for (name, args) in [
        (
            "svm-rbf",
            vec![
                "--algo", "svm", "--kernel", "rbf", "--gamma", "0.1", "--C", "10",
            ],
        ),
        (
            "ken-rbf",
            vec![
                "--algo", "ken-guru", "--kernel", "rbf", "--gamma", "0.1", "--sigma", "0.5",
                "--eta0", "0.25",
            ],
        ),
    ] {
        let model = tmp(&format!("{name}.json"));
        let m = model.to_str().unwrap();
        let mut a = vec![
            "train", "--data", "wdbc", "--scale", "minmax", "--out", m, "--json",
        ];
        a.extend(&args);
        let t = ok_json(&a);
        assert_eq!(t["model_kind"], "kernel", "{name}: {t}");
        assert!(t["converged"].as_bool().unwrap(), "{name}: {t}");
        assert!(t["training_error"].as_f64().unwrap() < 0.2, "{name}: {t}");
        let e = ok_json(&[
            "eval",
            "--model",
            m,
            "--data",
            "wdbc",
            "--attack",
            "uniform-noise",
            "--budget",
            "0.5",
            "--json",
        ]);
        assert!(e["error"].as_f64().unwrap() >= 0.0, "{name}: {e}");
        let bin = tmp(&format!("{name}.bin"));
        let b = bin.to_str().unwrap();
        assert!(
            bulwark(&["model", "convert", m, "--out", b])
                .status
                .success()
        );
        assert_eq!(predict(m), predict(b), "{name}");
    }
    let scores = |algo: &[&str], name: &str| -> Vec<f64> {
        let model = tmp(name);
        let m = model.to_str().unwrap();
        let mut a = vec![
            "train", "--data", "wdbc", "--scale", "minmax", "--out", m, "--sigma", "1",
        ];
        a.extend(["--eta0", "0.25", "--seed", "5", "--max-epochs", "20"]);
        a.extend(algo);
        assert!(bulwark(&a).status.success(), "{algo:?}");
        String::from_utf8(predict(m))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect()
    };
    let guru = scores(&["--algo", "guru", "--solver", "sgd"], "guru-sgd.json");
    let ken = scores(&["--algo", "ken-guru"], "ken-linear.json");
    assert_eq!(guru.len(), 569);
    for (a, b) in guru.iter().zip(&ken) {
        assert!((a - b).abs() <= 1e-10 * (1.0 + a.abs()), "{a} vs {b}");
    }
}

/// The certified batch solvers of M-GURU and KEN-GURU from the command line: `--json` shows the
/// solver, `converged` and the certificate (`duality_gap`, `dual_objective`); an SGD fit with
/// `--gap-to-batch` reports its distance to the batch optimum, and `converged` only when certified.
#[test]
fn m_guru_and_ken_guru_batch_solvers_report_their_certificates() {
    let m = tmp("m-guru-batch.json");
    let t = ok_json(&[
        "train",
        "--data",
        "wine",
        "--scale",
        "minmax",
        "--out",
        m.to_str().unwrap(),
        "--json",
        "--algo",
        "m-guru",
        "--solver",
        "batch",
        "--sigma",
        "0.5",
    ]);
    assert_eq!(t["solver"], "newton-cg", "{t}");
    assert_eq!(t["converged"], true, "{t}");
    assert!(t["duality_gap"].as_f64().unwrap() <= 1e-10, "{t}");
    assert!(t["dual_objective"].as_f64().unwrap() <= t["objective"].as_f64().unwrap());
    let optimum = t["objective"].as_f64().unwrap();
    let s = ok_json(&[
        "train",
        "--data",
        "wine",
        "--scale",
        "minmax",
        "--out",
        m.to_str().unwrap(),
        "--json",
        "--algo",
        "m-guru",
        "--sigma",
        "0.5",
        "--eta0",
        "0.25",
        "--max-epochs",
        "50",
        "--gap-to-batch",
    ]);
    assert_eq!(s["solver"], "m-guru", "{s}");
    let gap = s["duality_gap"].as_f64().unwrap();
    assert_eq!(s["converged"], gap <= 1e-4, "{s}");
    let distance = s["gap_to_batch"].as_f64().unwrap();
    let primal = s["objective"].as_f64().unwrap();
    assert!(
        (distance - (primal - optimum) / optimum).abs() <= 1e-8,
        "{s}"
    );
    let k = tmp("ken-guru-batch.json");
    let t = ok_json(&[
        "train",
        "--data",
        "wdbc",
        "--scale",
        "minmax",
        "--out",
        k.to_str().unwrap(),
        "--json",
        "--algo",
        "ken-guru",
        "--solver",
        "batch",
        "--kernel",
        "rbf",
        "--gamma",
        "0.1",
        "--sigma",
        "0.5",
    ]);
    assert_eq!(t["solver"], "newton-cg", "{t}");
    assert_eq!(t["model_kind"], "kernel", "{t}");
    assert_eq!(
        t["converged"],
        t["duality_gap"].as_f64().unwrap() <= 1e-10,
        "{t}"
    );
    assert!(t["duality_gap"].as_f64().unwrap() <= 1e-6, "{t}");
    assert!(t["training_error"].as_f64().unwrap() < 0.2, "{t}");
}

/// Multiclass learners on a multiclass data set (no `--pair`/`--positive`): M-GURU, M-GURU-S²
/// and the SVM (Crammer–Singer) write multiclass models, `predict` prints class names, `eval`
/// takes the noise attack on every class.
#[test]
fn multiclass_learners_train_on_every_class_and_predict_class_names() {
    for (name, extra) in [
        (
            "m-guru",
            &["--algo", "m-guru", "--sigma", "0.5", "--eta0", "0.25"][..],
        ),
        (
            "m-guru-s2",
            &[
                "--algo", "m-guru", "--s2", "--sigma", "0.5", "--eta0", "0.25",
            ][..],
        ),
        ("svm", &["--algo", "svm", "--C", "1"][..]),
    ] {
        let model = tmp(&format!("{name}.json"));
        let m = model.to_str().unwrap();
        let mut a = vec![
            "train", "--data", "wine", "--scale", "minmax", "--out", m, "--json",
        ];
        a.extend(extra);
        let t = ok_json(&a);
        assert_eq!(t["model_kind"], "multiclass-linear", "{t}");
        assert_eq!(t["classes"], 3.0, "{t}");
        assert!(t["training_error"].as_f64().unwrap() < 0.1, "{t}");
        let p = String::from_utf8(predict_on(m, "wine")).unwrap();
        let names: std::collections::BTreeSet<&str> = p
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(2).unwrap())
            .collect();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["class_0", "class_1", "class_2"]
        );
        let e = ok_json(&[
            "eval",
            "--model",
            m,
            "--data",
            "wine",
            "--attack",
            "uniform-noise",
            "--budget",
            "0",
            "--json",
        ]);
        assert_eq!(e["error"], t["training_error"], "{e}");
    }
}

fn predict_on(model: &str, data: &str) -> Vec<u8> {
    let o = bulwark(&["predict", "--model", model, "--data", data]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

#[test]
fn a_contaminated_sample_trains_a_mu_and_smoothboost() {
    let data = tmp("kls.csv");
    let d = data.to_str().unwrap();
    let sample = |out: &str| {
        ok_json(&[
            "data",
            "sample",
            "--dist",
            "ball",
            "--dim",
            "50",
            "--examples",
            "3000",
            "--eta",
            "0.1",
            "--noise",
            "coordinated-pull",
            "--seed",
            "4",
            "--out",
            out,
            "--json",
        ])
    };
    let s = sample(d);
    let corrupted = s["corrupted"].as_u64().unwrap();
    assert!((200..400).contains(&corrupted), "{s}");
    assert_eq!(s["target"].as_array().unwrap().len(), 50);
    // the same seed writes the same file
    let again = tmp("kls-again.csv");
    sample(again.to_str().unwrap());
    assert_eq!(
        std::fs::read(&data).unwrap(),
        std::fs::read(&again).unwrap()
    );

    let model = tmp("amu.json");
    let m = model.to_str().unwrap();
    let t = ok_json(&[
        "train",
        "--algo",
        "kls-amu",
        "--amu-constant",
        "0.5",
        "--data",
        d,
        "--out",
        m,
        "--json",
    ]);
    assert_eq!(t["solver"], "lanczos");
    // the coordinated pull is removed (with some clean points along it), in two passes
    let removed = t["removed"].as_f64().unwrap() as u64;
    assert!(removed >= corrupted && removed < 2 * corrupted, "{t}");
    assert_eq!(t["rounds"].as_f64(), Some(2.0));
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(file["algorithm"], "kls-amu");
    assert_eq!(file["bias"].as_f64(), Some(0.0));
    let w = file["weights"].as_array().unwrap();
    assert_eq!(w.len(), 50);
    // v is the average of y x, not normalised: far shorter than a unit vector on the ball
    let norm: f64 = w
        .iter()
        .map(|v| v.as_f64().unwrap().powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(norm > 0.05 && norm < 0.5, "{norm}");

    let boost = tmp("boost.json");
    let b = boost.to_str().unwrap();
    let t = ok_json(&[
        "train",
        "--algo",
        "kls-boost",
        "--weak",
        "average",
        "--data",
        d,
        "--out",
        b,
        "--json",
    ]);
    assert_eq!(t["solver"], "smoothboost");
    assert!(t["rounds"].as_f64().unwrap() >= 2.0, "{t}");
    assert_eq!(t["model_kind"], "ensemble");
    assert!(t["round_bound"].as_f64().unwrap() > t["rounds"].as_f64().unwrap());
    let p = bulwark(&["predict", "--model", b, "--data", d]);
    assert!(p.status.success());
}
