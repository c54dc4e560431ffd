//! The `bulwark-reproduce` binary as a user meets it: progress in a log, exit statuses.

use std::process::Command;

fn reproduce() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bulwark-reproduce"))
}

/// Without a terminal (stderr captured, as in a log file) the hidden progress bar is replaced by
/// plain lines with the units done and an ETA, ending at the experiment's last unit. The
/// `--only` run also replaces its experiment's record in the last whole run's `run-quick.json`
/// (of the same seed).
#[test]
fn a_run_without_a_terminal_prints_plain_progress_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = dir.path().join("run-quick.json");
    let whole = r#"{"mode": "quick", "seed": 0, "total_seconds": 9.0, "experiments": [
        {"experiment": "synth2", "status": "failed: old", "seconds": 7.0},
        {"experiment": "breast", "status": "ok", "seconds": 2.0}]}"#;
    std::fs::write(&record, whole).expect("write run-quick.json");
    let out = reproduce()
        .args(["--quick", "--only", "synth2", "--no-cache", "--out"])
        .arg(dir.path())
        .output()
        .expect("run bulwark-reproduce");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}, stderr:\n{err}",
        out.status
    );
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("units,")).collect();
    assert!(!lines.is_empty(), "no progress line in stderr:\n{err}");
    let last = lines.last().expect("a line");
    // "      synth2: k/k units, 00:00:01 elapsed, ETA 00:00:00 (last: …)"
    let counts = last
        .split_once("synth2: ")
        .and_then(|(_, r)| r.split_once(" units,"))
        .map(|(c, _)| c.to_string())
        .unwrap_or_default();
    let (done, total) = counts.split_once('/').unwrap_or(("", "-"));
    assert!(
        done == total && !done.is_empty() && last.contains("ETA"),
        "last progress line: {last}"
    );
    assert!(dir.path().join("synth2.json").exists());
    let text = std::fs::read_to_string(&record).expect("run-quick.json");
    let run: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(run["experiments"][0]["experiment"], "synth2", "{text}");
    assert_eq!(run["experiments"][0]["status"], "ok", "{text}");
    assert_eq!(run["experiments"][1]["seconds"], 2.0, "{text}");
    assert_eq!(run["rerun"], serde_json::json!(["synth2"]), "{text}");
    assert_eq!(run["total_seconds"], 9.0, "{text}");
    // another seed's run is not the recorded run's: its record is left alone
    let other = reproduce()
        .args([
            "--quick",
            "--only",
            "synth2",
            "--seed",
            "1",
            "--no-cache",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .expect("run bulwark-reproduce");
    assert!(other.status.success());
    let after = std::fs::read_to_string(&record).expect("run-quick.json");
    assert_eq!(after, text);
}

/// A bad argument is named, with exit status 2 and nothing run.
#[test]
fn a_bad_argument_is_named_with_exit_status_2() {
    let out = reproduce()
        .args(["--only", "synth9"])
        .output()
        .expect("run bulwark-reproduce");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown experiment `synth9`"), "stderr: {err}");
}
