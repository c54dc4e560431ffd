//! Runs the README's command-line walkthrough (between `<!-- walkthrough:start -->` and
//! `<!-- walkthrough:end -->`) exactly as written: `sh -e` in an empty directory, `$B` set to
//! the built binary. Then checks what it produced.

use std::path::Path;
use std::process::Command;

fn walkthrough() -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).expect("read README.md");
    let start = text
        .find("<!-- walkthrough:start -->")
        .expect("README has a walkthrough:start marker");
    let end = text
        .find("<!-- walkthrough:end -->")
        .expect("README has a walkthrough:end marker");
    text[start..end]
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_readme_walkthrough_runs() {
    let script = walkthrough();
    assert!(
        script.contains("$B train") && script.contains("$B plot"),
        "{script}"
    );
    let dir = std::env::temp_dir().join(format!("bulwark-walkthrough-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new("sh")
        .arg("-ec")
        .arg(&script)
        .current_dir(&dir)
        .env("B", env!("CARGO_BIN_EXE_bulwark"))
        .env_remove("BULWARK_DATA")
        .output()
        .expect("run sh");
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(
        o.status.success(),
        "walkthrough failed\n--- script\n{script}\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    // the models: one JSON, one binary; predictions for every example
    let model = json(&dir.join("spam.json"));
    assert_eq!(model["n_features"], 57);
    assert!(
        std::fs::read(dir.join("svm.bin"))
            .unwrap()
            .starts_with(b"BULWARK\0")
    );
    let predictions = std::fs::read_to_string(dir.join("predictions.csv")).unwrap();
    assert_eq!(predictions.lines().count(), 4601 + 1);

    // the curves: the robust LP degrades less than the SVM under greedy deletion
    let last_error = |file: &str| {
        let v = json(&dir.join(file));
        let p = v["points"].as_array().unwrap();
        p[p.len() - 1]["error"].as_f64().unwrap()
    };
    let (lp, svm) = (last_error("lp.eval.json"), last_error("svm.eval.json"));
    assert!(
        lp + 0.1 < svm,
        "at the largest budget: lp {lp} vs svm {svm}"
    );

    // the attacked data set and the plot
    assert!(dir.join("attacked.csv.gz").is_file());
    let svg = std::fs::read_to_string(dir.join("spambase.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.contains("<svg"),
        "not an SVG"
    );
    assert!(svg.contains("spambase: greedy deletion") && svg.contains("greedy-delete"));
    // no temporary files left behind by the atomic writes
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name();
        assert!(
            !name.to_string_lossy().contains(".tmp-"),
            "{name:?} left behind"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
