//! `cargo xtask bench guru`: GURU's batch solver and SGD against LIBLINEAR (scikit-learn's
//! `LinearSVC`, hinge loss, dual coordinate descent) on MNIST's 10 000 test images, digit 0 vs
//! the rest, and beside it on `bench lp`'s synthetic `mnist-like-10000x784` instance, min-max
//! scaled as `bulwark train --scale minmax` does, one thread each, in the same run; written to
//! `docs/perf-guru.md`.
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

use crate::bench::{num, one_thread_runner, provenance, python_with, text};
use crate::project_root;

/// The scikit-learn installed when the machine has none (pinned so runs compare).
const SKLEARN_VERSION: &str = "1.7.2";

/// A Python with scikit-learn: `python3` if it has it, else `target/bench/venv-sklearn`.
pub(crate) fn sklearn_python(root: &Path) -> Result<PathBuf, String> {
    python_with(
        root,
        "sklearn",
        "scikit-learn",
        SKLEARN_VERSION,
        "venv-sklearn",
    )
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
    let _ = std::fs::remove_file(&results);
    let python = sklearn_python(&root);
    let mut peer: Result<(), String> = python.as_ref().map(|_| ()).map_err(Clone::clone);
    // the real case first; the synthetic one beside it (the standards: never synthetic alone)
    let sources = [
        (
            "mnist-0-vs-rest",
            root.join("data/mnist/t10k-images-idx3-ubyte.gz")
                .display()
                .to_string(),
        ),
        ("mnist-like-10000x784", "mnist-like-10000x784".to_string()),
    ];
    for (label, source) in &sources {
        let task = bench.join(format!("guru-task-{label}.bin"));
        println!("running GURU (batch and SGD) on {label} …");
        let status = one_thread_runner(&root, "bulwark-gaussian", "guru_bench")
            .arg(source)
            .args(["0", "1"])
            .arg(&results)
            .arg(&task)
            .status()
            .map_err(|e| format!("cannot run the bench runner: {e}"))?;
        if !status.success() {
            return Err(format!("the GURU runner failed on {label} ({status})"));
        }
        let ours = std::fs::read_to_string(&results).map_err(|e| e.to_string())?;
        let mine = ours
            .lines()
            .find(|l| {
                text(l, "data").as_deref() == Some(label)
                    && text(l, "solver").as_deref() == Some("guru-batch")
            })
            .ok_or(format!("no batch result for {label}"))?;
        let (m, n) = (num(mine, "m") as usize, num(mine, "n") as usize);
        if let Ok(python) = &python {
            println!("running LIBLINEAR (scikit-learn LinearSVC, 1 thread) on {label} …");
            let status = Command::new(python)
                .arg(root.join("xtask/scripts/liblinear_svc.py"))
                .arg(&task)
                .arg(m.to_string())
                .arg(n.to_string())
                .arg(&results)
                .arg(label)
                .env("OMP_NUM_THREADS", "1")
                .env("OPENBLAS_NUM_THREADS", "1")
                .status()
                .map_err(|e| format!("cannot run python: {e}"))?;
            if !status.success() {
                peer = Err(format!("the LIBLINEAR runner failed on {label} ({status})"));
            }
        }
    }
    let all = std::fs::read_to_string(&results).map_err(|e| e.to_string())?;
    let page = render(&all, peer.err().as_deref(), &provenance);
    let out = root.join("docs/perf-guru.md");
    std::fs::write(&out, page).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The page, from the runners' JSON lines: one table and one ratio per data set.
fn render(lines: &str, peer_error: Option<&str>, provenance: &str) -> String {
    let rows: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut datasets: Vec<String> = Vec::new();
    for l in &rows {
        let d = text(l, "data").unwrap_or_default();
        if !datasets.contains(&d) {
            datasets.push(d);
        }
    }
    let mut s = String::new();
    s.push_str(
        "# GURU against LIBLINEAR\n\nGenerated by `cargo xtask bench guru`; do not edit.\n\n",
    );
    s.push_str(
        "Every data set min-max scaled as `bulwark train --scale minmax` does; one thread for every \
         solver. GURU minimises Ginodi's (2.22) with σ = 1 (no bias); LIBLINEAR the hinge-loss SVM \
         with C = 1 (bias as a constant feature). Different objectives: the tables compare the \
         time to a trained linear classifier at each solver's stated accuracy. Times are medians \
         of 3 runs (SGD: one run each).\n",
    );
    for data in &datasets {
        let mine: Vec<&str> = rows
            .iter()
            .copied()
            .filter(|l| text(l, "data").as_deref() == Some(data.as_str()))
            .collect();
        let first = |solver: &str| {
            mine.iter()
                .copied()
                .find(|l| text(l, "solver").as_deref() == Some(solver))
        };
        let m = first("guru-batch").map_or(f64::NAN, |l| num(l, "m"));
        let n = first("guru-batch").map_or(f64::NAN, |l| num(l, "n"));
        let what = if data.starts_with("mnist-like") {
            "synthetic (`bench lp`'s generator: 19 % non-zeros in [0, 1), labels from a random \
             hyperplane plus noise, seed 2026)"
        } else {
            "real: the MNIST test set (`data/mnist`), digit 0 against the rest"
        };
        let _ = writeln!(s, "\n## {data}: {m} × {n}, {what}\n");
        s.push_str("| solver | setting | seconds | passes / iterations | accuracy reached | training error |\n|---|---|---|---|---|---|\n");
        for l in &mine {
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
                    if l.contains("\"converged\": false") || l.contains("\"converged\":false") {
                        format!(
                            "**not converged**: stopped at its {} iterations",
                            num(l, "iterations")
                        )
                    } else {
                        format!("tol {:.0e} (its own test)", num(l, "tol"))
                    },
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
                let (eg, ep) = (num(g, "training_error"), num(p, "training_error"));
                if (eg - ep).abs() > 0.05 {
                    let _ = writeln!(
                        s,
                        "\nThe classifiers differ: training error {eg:.4} (GURU, σ = 1) against \
                         {ep:.4} (LIBLINEAR, C = 1). σ = 1 regularises this instance far more \
                         than C = 1 does, so the ratio compares solvers of different problems, \
                         not equally good classifiers."
                    );
                }
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
    }
    let _ = writeln!(s, "\n{provenance}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_gives_the_ratio_only_when_both_ran() {
        let ours = r#"{"data":"mnist-0-vs-rest","solver":"guru-batch","m":10000,"n":784,"seconds":2.0,"passes":112,"iterations":13,"relative_gap":1.6e-10,"training_error":0.0086}
{"data":"mnist-0-vs-rest","solver":"guru-sgd","eta0":0.0625,"seconds":4.0,"passes":200,"relative_gap":0.026,"training_error":0.01}
{"data":"mnist-like-10000x784","solver":"guru-batch","m":10000,"n":784,"seconds":1.0,"passes":50,"iterations":9,"relative_gap":1e-7,"training_error":0.1}"#;
        let page = render(ours, Some("pip failed"), "machine");
        assert!(page.contains("No ratio: LIBLINEAR did not run (pip failed)"));
        assert!(page.contains("| guru-sgd | SGD η₀ = 0.0625, 50 epochs | 4.00 |"));
        let both = format!(
            "{ours}\n{}",
            r#"{"data":"mnist-0-vs-rest","solver":"liblinear","version":"scikit-learn 1.7.2","tol":0.0001,"seconds":6.0,"iterations":9827,"training_error":0.0}
{"data":"mnist-like-10000x784","solver":"liblinear","version":"scikit-learn 1.7.2","tol":0.0001,"seconds":0.5,"iterations":100,"training_error":0.1}
{"data":"mnist-like-10000x784","solver":"liblinear","version":"scikit-learn 1.7.2","tol":1e-6,"seconds":0.9,"iterations":100000,"converged":false,"training_error":0.1}"#
        );
        let page = render(&both, None, "machine");
        assert!(page.contains("**3.00×**"), "{page}");
        assert!(page.contains("**0.50×**"), "{page}");
        assert!(page.contains("**not converged**: stopped at its 100000 iterations"));
        assert_eq!(page.matches("not converged").count(), 1);
        // the synthetic case's classifiers are equally good here: no remark
        assert!(!page.contains("The classifiers differ"), "{page}");
        let worse = both.replace(
            r#""relative_gap":1e-7,"training_error":0.1}"#,
            r#""relative_gap":1e-7,"training_error":0.41}"#,
        );
        assert!(render(&worse, None, "machine").contains("The classifiers differ"));
        assert!(page.contains("## mnist-0-vs-rest: 10000 × 784, real"));
        assert!(page.contains("## mnist-like-10000x784: 10000 × 784, synthetic"));
    }
}
