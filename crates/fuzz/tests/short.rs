//! The short fuzz run of the test suite: every target for a few seconds from the seed corpus
//! (a crash — a panic, an allocation beyond 256 MiB, an input running over 10 s — fails it and
//! leaves the input in `target/fuzz/crashes/<target>/`), and every input that once crashed a
//! reader (`regressions/`) replayed. `cargo xtask fuzz --minutes M` is the long run.

use std::process::Command;

fn fuzz() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bulwark-fuzz"))
}

/// Seconds per target: 6, or `BULWARK_FUZZ_SECONDS`.
fn seconds() -> String {
    std::env::var("BULWARK_FUZZ_SECONDS").unwrap_or_else(|_| "6".into())
}

#[test]
fn every_target_survives_a_short_run() {
    let o = fuzz()
        .args(["--all", "--seconds", &seconds(), "--seed"])
        .arg(std::process::id().to_string())
        .output()
        .expect("run bulwark-fuzz");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}\n{out}\n{err}", o.status);
    assert_eq!(
        out.matches("no crash").count(),
        bulwark_fuzz::TARGETS.len(),
        "{out}"
    );
}

#[test]
fn no_regression_crashes_again() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let o = fuzz()
        .arg("--replay")
        .arg(&dir)
        .output()
        .expect("run bulwark-fuzz");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{:?}\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("without a crash"), "{out}");
}
