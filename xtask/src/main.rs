//! `cargo xtask <command>` — Bulwark's automation, in Rust rather than shell scripts.
//!
//! - `ci`: what `.ci/run` does — `cargo fmt --check`, clippy with warnings denied, the tests;
//! - `bench lp`: the LP (4) benchmark of issue 5 (real and synthetic data, peers at equal thread
//!   counts), written to `docs/perf.md`;
//! - `bench sweep`: the structured IPM over a grid of real image pairs (MNIST, USPS, and
//!   Fashion-MNIST, installed from Debian's `dataset-fashion-mnist`), written to
//!   `docs/perf-sweep.md`;
//! - `bench pairs [--fresh] [--only A-B,…] [--stop-after MINUTES] [--render-only]`: LP (4) on every pair of
//!   Fashion-MNIST classes as `bulwark train` fits it (screening, fallback chain), in sittings
//!   (finished pairs kept in `docs/perf-pairs.jsonl`), written to `docs/perf-pairs.md`;
//! - `bench guru`: GURU's batch solver and SGD against LIBLINEAR (scikit-learn, installed pinned
//!   into `target/bench`) on MNIST 0 vs rest and the synthetic MNIST-like case, written to
//!   `docs/perf-guru.md`;
//! - `bench smo`: the kernel SVM (SMO) against LIBSVM (scikit-learn's `SVC`) on real and
//!   synthetic cases, written to `docs/perf-smo.md` and the LIBSVM reference fixture;
//! - `bench amu`: A_mu at m = 100 000, n = 784 and on Fashion-MNIST against the direct
//!   algorithm, written to `docs/perf-amu.md`;
//! - `bench rolr`: RoLR's solver against clarabel on the same SOCP (synthetic m = 100 000,
//!   p = 100, and MNIST), written to `docs/perf-rolr.md`;
//! - `reproduce [--quick|--full] [--only NAME] [--stop-after MINUTES]`: every table and figure of the DSX papers
//!   and of Ginodi's and Feng et al.'s experiments,
//!   written to `docs/results/` (runs `bulwark-eval`'s `bulwark-reproduce` binary);
//! - `fuzz --minutes M [--target T] [--seed S]`: the long run of `bulwark-fuzz` over every
//!   reader (CSV, LIBSVM, IDX, MPS, model JSON and `.bin`, values files), M minutes per target;
//! - `tidy`: repository rules — every crate has a `description`, a README whose first paragraph
//!   states its purpose, `#![doc = include_str!("../README.md")]` in library crates, and no
//!   `println!`/`eprintln!` in library code (only binaries print), no committed symbolic link and
//!   no file over 4 MiB outside `data/`. Also runs under `cargo test`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod amu_bench;
mod bench;
mod fuzz;
mod guru_bench;
mod pairs;
mod reproduce;
mod rolr_bench;
mod smo_bench;
mod sweep;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: cargo xtask <ci|tidy|bench lp|reproduce>\n  ci    fmt --check, clippy -D warnings, cargo test --workspace\n  tidy  check repository rules (descriptions, READMEs, no printing in libraries)\n  bench lp [--no-highs] [--no-mnist] [--clarabel]  LP (4) benchmark on real (spambase) and synthetic data against HiGHS and Clarabel at equal thread counts, written to docs/perf.md\n  bench sweep [--no-fashion]  the structured IPM over real image pairs, iterations and failures, written to docs/perf-sweep.md\n  bench pairs [--fresh] [--only A-B,...] [--stop-after MINUTES] [--render-only]  LP (4) on all 45 Fashion-MNIST class pairs as `bulwark train` fits them (hours: each run does the pairs not yet in docs/perf-pairs.jsonl; --fresh starts over), written to docs/perf-pairs.md\n  bench guru  GURU's batch solver and SGD against LIBLINEAR (scikit-learn) on MNIST 0 vs rest and a synthetic MNIST-like case, written to docs/perf-guru.md\n  bench smo [--render-only]  the kernel SVM (SMO) against LIBSVM (scikit-learn SVC) on Ionosphere, USPS 3v5, MNIST 0 vs rest and a synthetic case, and KEN-GURU's step cost, written to docs/perf-smo.md (--render-only: the page again from the last run's results)\n  bench rolr [--render-only]  RoLR's solver against clarabel on the same SOCP (m = 100 000, p = 100 synthetic; MNIST 0 vs rest), written to docs/perf-rolr.md (--render-only: the page from the cases the last run finished)\n  bench amu [--no-fashion] [--render-only]  A_mu (KLS 2009) at m = 100 000, n = 784 on the unit ball and on Fashion-MNIST, 10 % coordinated pull, two threads, against the direct algorithm, written to docs/perf-amu.md\n  reproduce [--quick|--full] [--only NAME] [--stop-after MINUTES]  the papers' tables and figures, written to docs/results/\n  fuzz --minutes M [--target T] [--seed S]  the readers' long fuzz run, M minutes per target (executions per second, corpus size)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("tidy") => {
            tidy::run(&project_root()).map(|n| println!("tidy: {n} crates checked, all rules hold"))
        }
        Some("bench") => bench::run(&args[1..]),
        Some("reproduce") => reproduce::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("-h" | "--help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::from(2)
        }
    }
}

/// Makes SIGINT and SIGTERM set the returned flag instead of ending xtask, so a child that
/// handles them (stopping at a safe point) is waited for; a failure to install is ignored (the
/// default, ending at once, stays).
pub fn hold_signals() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}

/// `cargo run --quiet --release -p PACKAGE [--bin BIN] --` from the workspace root: a binary of
/// the workspace run in its own process (arguments follow).
pub fn release_run(package: &str, bin: Option<&str>) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.args(["run", "--quiet", "--release", "-p", package]);
    if let Some(b) = bin {
        c.args(["--bin", b]);
    }
    c.arg("--").current_dir(project_root());
    c
}

/// The workspace root (the parent of this crate's manifest directory).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn cargo(args: &[&str]) -> Result<(), String> {
    println!("$ cargo {}", args.join(" "));
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

fn ci() -> Result<(), String> {
    tidy::run(&project_root())?;
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    // the documentation builds without a warning, as in .ci/run
    println!("$ RUSTDOCFLAGS=\"-D warnings\" cargo doc --workspace --no-deps");
    let doc = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !doc.success() {
        return Err(format!("`cargo doc --workspace --no-deps` failed ({doc})"));
    }
    cargo(&["test", "--workspace"])
}
