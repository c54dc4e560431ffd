//! `cargo xtask bench guru`: GURU's batch solver and SGD against LIBLINEAR (scikit-learn's
//! `LinearSVC`, hinge loss, dual coordinate descent) on MNIST's 10 000 test images, digit 0 vs
//! the rest, min-max scaled as `bulwark train --scale minmax` does, one thread each, in the same
//! run; written to `docs/perf-guru.md`.
//!
//! The Rust side is `bulwark-gaussian`'s `guru_bench` example (release build), which also writes
//! the scaled task as raw f64 for the peer (`target/bench/guru-task.bin`), so both read the same
//! numbers. scikit-learn is installed, pinned, into `target/bench/venv-sklearn` on first use.
//! The two solve different objectives (GURU's (2.22) with σ = 1 against the hinge SVM with
//! C = 1): the comparison is the time to a trained linear classifier at each solver's accuracy,
//! which the table states.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::{cargo, num, provenance, text};
use crate::project_root;

/// The scikit-learn installed when the machine has none (pinned so runs compare).
const SKLEARN_VERSION: &str = "1.7.2";

fn python_has_sklearn(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import sklearn"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A Python with scikit-learn: `python3` if it has it, else `target/bench/venv-sklearn`.
fn sklearn_python(root: &Path) -> Result<PathBuf, String> {
    let system = PathBuf::from("python3");
    if python_has_sklearn(&system) {
        return Ok(system);
    }
    let venv = root.join("target/bench/venv-sklearn");
    let python = venv.join("bin/python");
    if !python_has_sklearn(&python) {
        println!(
            "installing scikit-learn {SKLEARN_VERSION} into {} …",
            venv.display()
        );
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(&python)
                .args(["-m", "pip", "install", "--quiet"])
                .arg(format!("scikit-learn=={SKLEARN_VERSION}"))
                .status()
                .is_ok_and(|s| s.success());
        if !ok || !python_has_sklearn(&python) {
            return Err(format!(
                "scikit-learn is not installed and `pip install scikit-learn=={SKLEARN_VERSION}` into {} failed",
                venv.display()
            ));
        }
    }
    Ok(python)
}

pub fn run(args: &[String]) -> Result<(), String> {
    if args.len() > 1 {
        return Err(format!("unknown option `{}`\n{}", args[1], crate::USAGE));
    }
    let root = project_root();
    let bench = root.join("target/bench");
    std::fs::create_dir_all(&bench).map_err(|e| e.to_string())?;
    let provenance = provenance(&root, args);
    let results = bench.join("guru.jsonl");
    let task = bench.join("guru-task.bin");
    let _ = std::fs::remove_file(&results);
    println!("running GURU (batch and SGD) on MNIST 0 vs rest …");
    let status = Command::new(cargo())
        .args(["run", "--quiet", "--release", "-p", "bulwark-gaussian"])
        .args(["--example", "guru_bench", "--"])
        .arg(root.join("data/mnist/t10k-images-idx3-ubyte.gz"))
        .args(["0", "1"])
        .arg(&results)
        .arg(&task)
        .env("RAYON_NUM_THREADS", "1")
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run the bench runner: {e}"))?;
    if !status.success() {
        return Err(format!("the GURU runner failed ({status})"));
    }
    let ours = std::fs::read_to_string(&results).map_err(|e| e.to_string())?;
    let m = num(&ours, "m") as usize;
    let n = num(&ours, "n") as usize;
    let peer = match sklearn_python(&root) {
        Ok(python) => {
            println!("running LIBLINEAR (scikit-learn LinearSVC, 1 thread) …");
            let status = Command::new(&python)
                .arg(root.join("xtask/scripts/liblinear_svc.py"))
                .arg(&task)
                .arg(m.to_string())
                .arg(n.to_string())
                .arg(&results)
                .env("OMP_NUM_THREADS", "1")
                .env("OPENBLAS_NUM_THREADS", "1")
                .status()
                .map_err(|e| format!("cannot run python: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("the LIBLINEAR runner failed ({status})"))
            }
        }
        Err(e) => Err(e),
    };
    let all = std::fs::read_to_string(&results).map_err(|e| e.to_string())?;
    let page = render(&all, peer.err().as_deref(), &provenance);
    let out = root.join("docs/perf-guru.md");
    std::fs::write(&out, page).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The page, from the runners' JSON lines.
fn render(lines: &str, peer_error: Option<&str>, provenance: &str) -> String {
    let rows: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    let first = |solver: &str| {
        rows.iter()
            .copied()
            .find(|l| text(l, "solver").as_deref() == Some(solver))
    };
    let mut s = String::new();
    s.push_str(
        "# GURU against LIBLINEAR\n\nGenerated by `cargo xtask bench guru`; do not edit.\n\n",
    );
    let m = first("guru-batch").map_or(f64::NAN, |l| num(l, "m"));
    let n = first("guru-batch").map_or(f64::NAN, |l| num(l, "n"));
    let _ = writeln!(
        s,
        "MNIST test set (`data/mnist`), digit 0 against the rest: {m} × {n}, min-max scaled to \
         [−1, 1] as `bulwark train --scale minmax` does; one thread for every solver. GURU \
         minimises Ginodi's (2.22) with σ = 1 (no bias); LIBLINEAR the hinge-loss SVM with C = 1 \
         (bias as a constant feature). Different objectives: the table compares the time to a \
         trained linear classifier at each solver's stated accuracy. Times are medians of 3 runs \
         (SGD: one run each).\n"
    );
    s.push_str("| solver | setting | seconds | passes / iterations | accuracy reached | training error |\n|---|---|---|---|---|---|\n");
    for l in &rows {
        let solver = text(l, "solver").unwrap_or_default();
        let (setting, reached, work) = match solver.as_str() {
            "guru-batch" => (
                "Newton–CG to relative duality gap 1e-6".to_string(),
                format!("gap {:.1e}", num(l, "relative_gap")),
                format!(
                    "{} passes, {} Newton its",
                    num(l, "passes"),
                    num(l, "iterations")
                ),
            ),
            "guru-sgd" => (
                format!("SGD η₀ = {}, 50 epochs", num(l, "eta0")),
                format!("gap {:.1e}", num(l, "relative_gap")),
                format!("{} passes", num(l, "passes")),
            ),
            "liblinear" => (
                format!("LinearSVC tol {:.0e}", num(l, "tol")),
                format!("tol {:.0e} (its own test)", num(l, "tol")),
                format!("{} iterations", num(l, "iterations")),
            ),
            _ => continue,
        };
        let _ = writeln!(
            s,
            "| {solver} | {setting} | {:.2} | {work} | {reached} | {:.4} |",
            num(l, "seconds"),
            num(l, "training_error")
        );
    }
    match (first("guru-batch"), first("liblinear")) {
        (Some(g), Some(p)) => {
            let _ = writeln!(
                s,
                "\nLIBLINEAR at its default tolerance over GURU's batch solver to a 1e-6 gap: \
                 **{:.2}×** ({:.2} s against {:.2} s; above 1 GURU is faster).",
                num(p, "seconds") / num(g, "seconds"),
                num(p, "seconds"),
                num(g, "seconds")
            );
            if let Some(v) = text(p, "version") {
                let _ = writeln!(s, "\nPeer: {v}.");
            }
        }
        _ => {
            let _ = writeln!(
                s,
                "\nNo ratio: LIBLINEAR did not run ({}).",
                peer_error.unwrap_or("no result")
            );
        }
    }
    let _ = writeln!(s, "\n{provenance}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_gives_the_ratio_only_when_both_ran() {
        let ours = r#"{"solver":"guru-batch","m":10000,"n":784,"seconds":2.0,"passes":112,"iterations":13,"relative_gap":1.6e-10,"training_error":0.0086}
{"solver":"guru-sgd","eta0":0.0625,"seconds":4.0,"passes":200,"relative_gap":0.026,"training_error":0.01}"#;
        let page = render(ours, Some("pip failed"), "machine");
        assert!(page.contains("No ratio: LIBLINEAR did not run (pip failed)"));
        assert!(page.contains("| guru-sgd | SGD η₀ = 0.0625, 50 epochs | 4.00 |"));
        let both = format!(
            "{ours}\n{}",
            r#"{"solver":"liblinear","version":"scikit-learn 1.7.2","tol":0.0001,"seconds":6.0,"iterations":9827,"training_error":0.0}"#
        );
        let page = render(&both, None, "machine");
        assert!(page.contains("**3.00×**"), "{page}");
        assert!(page.contains("10000 × 784"));
    }
}
