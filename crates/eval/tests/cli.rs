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

/// Ctrl-C during `--full`: no new unit starts, the finished units stay in the unit cache (every
/// line readable), no table of the unfinished experiment is written, the run ends with status
/// 130 and one line saying what the cache keeps; the same command then resumes from them.
#[test]
fn ctrl_c_during_a_full_run_keeps_the_finished_units() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache-full.jsonl");
    let args = ["--full", "--only", "breast", "--jobs", "1", "--out"];
    let child = reproduce()
        .args(args)
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run bulwark-reproduce");
    let lines = |p: &std::path::Path| {
        std::fs::read_to_string(p).map_or(0, |t| t.lines().filter(|l| !l.is_empty()).count())
    };
    // breast has 10 units of about a second each: interrupt after the second one
    let start = Instant::now();
    while lines(&cache) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no unit finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr:\n{err}");
    let kept = lines(&cache);
    assert!((2..10).contains(&kept), "{kept} units kept");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!(
            "interrupted: {kept} finished unit(s) kept in {}; run the same command again to resume",
            cache.display()
        )
    );
    for line in std::fs::read_to_string(&cache).unwrap().lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("a whole line");
    }
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["cache-full.jsonl"], "no table of an unfinished run");
    // the same command resumes from the kept units
    let again = reproduce()
        .args(args)
        .arg(dir.path())
        .output()
        .expect("run bulwark-reproduce");
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "unit cache {}: {kept} finished unit(s)",
            cache.display()
        )),
        "{text}"
    );
    assert_eq!(lines(&cache), 10);
}
