//! `cargo xtask reproduce [--quick|--full] [--only NAME[,NAME…]] [--seed S] [--data-dir DIR]
//! [--out DIR] [--jobs J] [--cache FILE | --no-cache] [--stop-after MINUTES] [--refit LEARNER]`:
//! regenerates every
//! table and figure of Dekel, Shamir & Xiao (2010) and Dekel & Shamir (ICML 2008), and the binary
//! experiments of Ginodi (2010, `guru_binary`), into
//! `docs/results/` (default; `docs/results/full/` with `--full`), with the papers' numbers beside
//! ours. `--full` keeps every finished unit in `docs/results/full/cache-full.jsonl` and skips the
//! units found there, so the
//! papers' protocol runs in sittings: `--stop-after 120` starts no unit after two hours (exit
//! status 3 while units are left), and the same command resumes; `--refit fdrop` recomputes one
//! learner's cells in the cached units after a change to its solver.
//!
//! The work is done by the `bulwark-reproduce` binary of `bulwark-eval` (built in release and
//! run in its own process, like `bench lp`), so xtask keeps no dependencies. Exit status: 0 when
//! every experiment ran or was skipped because its data set is missing (the message names the
//! file and how to get it), 1 when an experiment failed for another reason.

use crate::project_root;

pub const USAGE: &str = "cargo xtask reproduce [--quick|--full] [--only NAME[,NAME...]] [--seed S] [--data-dir DIR] [--out DIR] [--jobs J] [--cache FILE | --no-cache] [--stop-after MINUTES] [--refit LEARNER[,LEARNER...]]
  experiments: synth1 synth2 breast spam icml_random icml_adversarial usps mnist guru_binary guru_kernel guru_multiclass rolr kls poisoning text missing_real
  --quick (default) about 28 minutes on 2 cores (docs/results/run-quick.json); --full runs the papers' protocol and records its runtime
  --full keeps finished units in OUT/cache-full.jsonl (--cache FILE elsewhere, --no-cache none) and skips them when run again
  --stop-after MINUTES  start no unit after MINUTES (exit status 3 while units are left; the same command resumes)
  --refit LEARNER  recompute that learner's cells (e.g. fdrop) in the cached units of the budget-curve experiments, keeping the other learners'
  data: the repository's data/ folder (wdbc and spambase are also embedded); --data-dir DIR or BULWARK_DATA=DIR for another directory";

pub fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let root = project_root();
    // relative paths are taken from where the user stands, as any command would
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let mut forwarded = Vec::with_capacity(args.len() + 2);
    let mut it = args.iter();
    let mut has_out = false;
    while let Some(a) = it.next() {
        forwarded.push(a.clone());
        if a == "--out" || a == "--data-dir" || a == "--cache" {
            has_out |= a == "--out";
            let v = it
                .next()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))?;
            forwarded.push(cwd.join(v).display().to_string());
        }
    }
    if !has_out {
        // the full protocol's tables sit beside the quick ones, in their own folder
        let full = args.iter().any(|a| a == "--full");
        forwarded.push("--out".into());
        forwarded.push(
            root.join(if full {
                "docs/results/full"
            } else {
                "docs/results"
            })
            .display()
            .to_string(),
        );
    }
    // Ctrl-C reaches the harness too (same process group): it stops at a unit boundary and
    // says what it kept; xtask waits for it instead of dying first
    let interrupted = crate::hold_signals();
    let status = crate::release_run("bulwark-eval", Some("bulwark-reproduce"))
        .args(&forwarded)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(1) => Err("reproduce: some experiments failed (see above)".into()),
        Some(130) => std::process::exit(130),
        _ if interrupted.load(std::sync::atomic::Ordering::SeqCst) => std::process::exit(130),
        Some(3) => {
            eprintln!(
                "reproduce: stopped at the time limit with units left; run the same command again to resume"
            );
            std::process::exit(3)
        }
        _ => Err(format!("reproduce: the harness exited with {status}")),
    }
}
