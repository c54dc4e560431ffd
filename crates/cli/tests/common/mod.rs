//! Helpers shared by the integration tests that run the `bulwark` binary.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the built binary with `args`, without `BULWARK_DATA` (the repository's data folder).
pub fn bulwark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(args)
        .env_remove("BULWARK_DATA")
        .output()
        .expect("run bulwark")
}

/// Runs it, requires success and parses stdout as JSON.
pub fn ok_json(args: &[&str]) -> serde_json::Value {
    let o = bulwark(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// A path `name` in a directory of this test binary and process.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "bulwark-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}
