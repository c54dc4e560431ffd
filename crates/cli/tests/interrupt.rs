//! Ctrl-C during a long `train`: the command stops at its next safe point, exits with status
//! 130 and one line saying what was kept, and leaves no file behind (issue 62).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Sends SIGINT to `pid` (as Ctrl-C in a terminal does).
fn interrupt(pid: u32) {
    let ok = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill -INT {pid}");
}

#[test]
fn ctrl_c_during_train_exits_130_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    // the LP on spambase takes several seconds; the signal comes while it iterates
    let child = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(["train", "--algo", "lp", "--data", "spambase", "--out"])
        .arg(&out)
        .env_remove("BULWARK_DATA")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bulwark");
    std::thread::sleep(Duration::from_millis(1500));
    let start = Instant::now();
    interrupt(child.id());
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "stderr: {err}");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("interrupted: stopped training lp; no model written"),
        "{err}"
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left files behind: {left:?}");
}
