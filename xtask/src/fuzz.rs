//! `cargo xtask fuzz --minutes M [--target T] [--seed S]`: the long fuzz run of `bulwark-fuzz`
//! (built in release), M minutes for each target (every target when none is named), one after
//! the other. Prints each target's executions per second, corpus size and distinct outcomes; the
//! inputs kept for a new outcome go to `target/fuzz/corpus/<target>/`, a crashing input to
//! `target/fuzz/crashes/<target>/` (copy it to `crates/fuzz/regressions/<target>/` with the
//! fix, so the test suite replays it).

use crate::project_root;

pub const USAGE: &str = "cargo xtask fuzz --minutes M [--target csv|libsvm|idx|mps|model-json|model-bin|values] [--seed S]
  M minutes per target (every target when none is named); a crash stops the run (exit status 1)";

pub fn run(args: &[String]) -> Result<(), String> {
    let mut minutes: Option<f64> = None;
    let mut forwarded: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--minutes" => {
                let v = value()?;
                minutes = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|m| m.is_finite() && *m > 0.0)
                        .ok_or_else(|| format!("--minutes: `{v}` is not a positive number"))?,
                );
            }
            "--target" | "--seed" => {
                forwarded.push(a.clone());
                forwarded.push(value()?);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let minutes = minutes.ok_or_else(|| format!("--minutes is required\n{USAGE}"))?;
    if !forwarded.iter().any(|a| a == "--target") {
        forwarded.push("--all".into());
    }
    let root = project_root();
    let keep = root.join("target/fuzz/corpus");
    let crashes = root.join("target/fuzz/crashes");
    let interrupted = crate::hold_signals();
    let status = crate::release_run("bulwark-fuzz", None)
        .args(["--seconds", &(minutes * 60.0).to_string(), "--keep"])
        .arg(&keep)
        .arg("--crashes")
        .arg(&crashes)
        .args(&forwarded)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        println!(
            "fuzz: no crash; inputs kept for new outcomes in {}",
            keep.display()
        );
        Ok(())
    } else if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        std::process::exit(130)
    } else {
        Err(format!(
            "fuzz: a crash ({status}); the input is in {} — fix it and copy the input to crates/fuzz/regressions/<target>/",
            crashes.display()
        ))
    }
}
