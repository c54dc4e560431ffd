//! `cargo xtask bench smo`: the kernel SVM by SMO (`bulwark-online`) against LIBSVM
//! (scikit-learn's `SVC`) on the same data, kernel, C, tolerance (1e-3), cache (200 MB) and
//! shrinking, one thread each, in the same run: real data (Ionosphere, USPS 3 vs 5, MNIST's
//! 10 000 test images digit 0 vs the rest) beside a synthetic case, written to
//! `docs/perf-smo.md`. The LIBSVM figures of the Ionosphere and USPS cases are also written to
//! `crates/online/tests/fixtures/libsvm_reference.json`, which the test `smo_libsvm` checks
//! our solver against on every `cargo test`.
//!
//! The Rust side is `bulwark-online`'s `smo_bench` example (release build), which writes each
//! scaled task as raw f64 for the peer, so both read the same numbers. On the same cases
//! `bulwark-gaussian`'s `ken_guru_bench` example measures the cost of one KEN-GURU step (no
//! peer: the page states it).

use std::fmt::Write as _;
use std::process::Command;

use crate::bench::{BenchFiles, num, one_thread_runner, provenance, text};
use crate::guru_bench::sklearn_python;
use crate::project_root;

/// Repetitions per case (the median time is reported); the 10 000-example case runs once.
fn repeats(case: &str) -> usize {
    if case.starts_with("mnist") { 1 } else { 5 }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let render_only = args.get(1).map(String::as_str) == Some("--render-only");
    if args.len() > 1 + usize::from(render_only) {
        return Err(format!("unknown option `{}`\n{}", args[1], crate::USAGE));
    }
    let root = project_root();
    let files = BenchFiles::new(&root, "smo")?;
    let provenance = provenance(&root, args);
    if render_only {
        // the page again from the last run's results (after a change of its layout)
        return files.write_page(&render(&files.results()?, None, &provenance));
    }
    let (bench, results) = (&files.dir, &files.results);
    let _ = std::fs::remove_file(results);
    let python = sklearn_python(&root);
    let mut peer: Result<(), String> = python.as_ref().map(|_| ()).map_err(Clone::clone);
    let runner = |extra: &[&str]| {
        one_thread_runner(&root, "bulwark-online", "smo_bench")
            .args(extra)
            .output()
            .map_err(|e| format!("cannot run the bench runner: {e}"))
    };
    let list = runner(&["list"])?;
    if !list.status.success() {
        return Err(format!(
            "the SMO runner failed: {}",
            String::from_utf8_lossy(&list.stderr)
        ));
    }
    let cases: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    for case in &cases {
        let task = bench.join(format!("smo-task-{case}.bin"));
        let reps = repeats(case).to_string();
        println!("running SMO on {case} …");
        let out = runner(&[
            case,
            &reps,
            &results.display().to_string(),
            &task.display().to_string(),
        ])?;
        if !out.status.success() {
            return Err(format!(
                "the SMO runner failed on {case}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let all = files.results()?;
        let mine = all
            .lines()
            .find(|l| text(l, "case").as_deref() == Some(case.as_str()))
            .ok_or(format!("no SMO result for {case}"))?
            .to_string();
        if let Ok(python) = &python {
            println!("running LIBSVM (scikit-learn SVC, 1 thread) on {case} …");
            let kernel = text(&mine, "kernel").unwrap_or_default();
            let status = Command::new(python)
                .arg(root.join("xtask/scripts/libsvm_svc.py"))
                .arg(&task)
                .arg(format!("{}", num(&mine, "m")))
                .arg(format!("{}", num(&mine, "n")))
                .arg(results)
                .arg(case)
                .arg(&kernel)
                .arg(format!("{}", num(&mine, "gamma")))
                .arg(format!("{}", num(&mine, "degree")))
                .arg(format!("{}", num(&mine, "coef0")))
                .arg(format!("{}", num(&mine, "C")))
                .arg(format!("{}", num(&mine, "tol")))
                .arg(&reps)
                .env("OMP_NUM_THREADS", "1")
                .env("OPENBLAS_NUM_THREADS", "1")
                .status()
                .map_err(|e| format!("cannot run python: {e}"))?;
            if !status.success() {
                peer = Err(format!("the LIBSVM runner failed on {case} ({status})"));
            }
        }
    }
    for case in &cases {
        println!("timing KEN-GURU steps on {case} …");
        let status = one_thread_runner(&root, "bulwark-gaussian", "ken_guru_bench")
            .arg(case)
            .arg(repeats(case).to_string())
            .arg(results)
            .status()
            .map_err(|e| format!("cannot run the KEN-GURU runner: {e}"))?;
        if !status.success() {
            return Err(format!("the KEN-GURU runner failed on {case} ({status})"));
        }
    }
    let all = files.results()?;
    files.write_page(&render(
        &all,
        peer.as_ref().err().map(String::as_str),
        &provenance,
    ))?;
    if peer.is_ok() {
        let fixture = root.join("crates/online/tests/fixtures/libsvm_reference.json");
        std::fs::write(&fixture, reference(&all)).map_err(|e| e.to_string())?;
        println!("wrote {}", fixture.display());
    }
    Ok(())
}

fn find<'a>(rows: &[&'a str], case: &str, solver: &str) -> Option<&'a str> {
    rows.iter().copied().find(|l| {
        text(l, "case").as_deref() == Some(case) && text(l, "solver").as_deref() == Some(solver)
    })
}

/// The fixture of the `smo_libsvm` test: LIBSVM's dual objective and support-vector count for
/// the Ionosphere and USPS cases.
fn reference(lines: &str) -> String {
    let rows: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut s = String::from("{\n");
    let mut first = true;
    for l in &rows {
        let case = text(l, "case").unwrap_or_default();
        if text(l, "solver").as_deref() != Some("libsvm")
            || !(case.starts_with("ionosphere") || case.starts_with("usps"))
        {
            continue;
        }
        if !first {
            s.push_str(",\n");
        }
        first = false;
        let _ = write!(
            s,
            "  \"{case}\": {{\"dual_objective\": {:?}, \"support_vectors\": {}, \"version\": \"{}\"}}",
            num(l, "dual_objective"),
            num(l, "support_vectors"),
            text(l, "version").unwrap_or_default()
        );
    }
    s.push_str("\n}\n");
    s
}

/// The page: one row per case, our time over LIBSVM's, and whether the solutions agree.
fn render(lines: &str, peer_error: Option<&str>, provenance: &str) -> String {
    let rows: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut s = String::new();
    s.push_str(
        "# Kernel SVM (SMO) against LIBSVM\n\nGenerated by `cargo xtask bench smo`; do not edit.\n\n\
         Both solve the C-SVM dual with an unregularised bias on the same min-max-scaled rows \
         (`bulwark train --scale minmax`), with the same kernel, C, stopping tolerance 1e-3 \
         (LIBSVM's ε on the maximal violating pair), a 200 MB kernel cache and shrinking; one \
         thread each, in the same run. Times are medians of 5 fits (the MNIST case: one fit); \
         scikit-learn's time includes its input checks. The dual objective of the peer is \
         recomputed from its support vectors and dual coefficients.\n\n",
    );
    s.push_str(
        "| case | m × n | kernel | C | SMO s | LIBSVM s | SMO / LIBSVM | dual objective (SMO) | relative difference | support vectors (SMO / LIBSVM) | iterations (SMO / LIBSVM) |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut worst_ratio: f64 = 0.0;
    for l in rows
        .iter()
        .filter(|l| text(l, "solver").as_deref() == Some("bulwark-smo"))
    {
        let case = text(l, "case").unwrap_or_default();
        let kernel = match text(l, "kernel").as_deref() {
            Some("rbf") => format!("RBF γ = {}", num(l, "gamma")),
            Some("poly") => format!(
                "poly d = {}, γ = {}, c₀ = {}",
                num(l, "degree"),
                num(l, "gamma"),
                num(l, "coef0")
            ),
            other => other.unwrap_or_default().to_string(),
        };
        let ours = num(l, "seconds");
        let (theirs, ratio, diff, sv, its) = match find(&rows, &case, "libsvm") {
            Some(p) => {
                let r = ours / num(p, "seconds");
                worst_ratio = worst_ratio.max(r);
                let (a, b) = (num(l, "dual_objective"), num(p, "dual_objective"));
                (
                    format!("{:.3}", num(p, "seconds")),
                    format!("**{r:.2}×**"),
                    format!("{:.1e}", (a - b).abs() / b.abs()),
                    format!(
                        "{} / {}",
                        num(l, "support_vectors"),
                        num(p, "support_vectors")
                    ),
                    format!("{} / {}", num(l, "iterations"), num(p, "iterations")),
                )
            }
            None => (
                "—".into(),
                "—".into(),
                "—".into(),
                format!("{} / —", num(l, "support_vectors")),
                format!("{} / —", num(l, "iterations")),
            ),
        };
        let real = if case.starts_with("synthetic") {
            " (synthetic)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "| {case}{real} | {} × {} | {kernel} | {} | {ours:.3} | {theirs} | {ratio} | {:.10} | {diff} | {sv} | {its} |",
            num(l, "m"),
            num(l, "n"),
            num(l, "C"),
            num(l, "dual_objective"),
        );
    }
    match peer_error {
        Some(e) => {
            let _ = writeln!(s, "\nNo ratios: LIBSVM did not run ({e}).");
        }
        None => {
            let _ = writeln!(
                s,
                "\nLargest SMO / LIBSVM time ratio: **{worst_ratio:.2}×** (below 1 SMO is faster)."
            );
            if let Some(v) = rows.iter().find_map(|l| text(l, "version")) {
                let _ = writeln!(s, "\nPeer: {v} (its bundled LIBSVM).");
            }
        }
    }
    let ken: Vec<&str> = rows
        .iter()
        .copied()
        .filter(|l| text(l, "solver").as_deref() == Some("ken-guru"))
        .collect();
    if !ken.is_empty() {
        s.push_str(
            "\n## KEN-GURU: cost of one step\n\nGinodi's Algorithm 2 on the same cases and kernels \
             (σ = 1, η₀ = 1/4, a cache that holds the whole Gram matrix: 200 MB, or M² doubles up \
             to 1 GiB): a step is one Gram row (computed the first time an example is drawn, then \
             cached) and an inner product of length M. The first epoch computes about 63 % of the \
             rows; in epochs 5–8, 98 % come from the cache (the remaining first draws dominate the \
             MNIST figure). Medians of the runs shown, without the checks of the stopping rule.\n\n\
             | case | M × n | cache MB | runs | first epoch s | µs per step, first epoch | µs per step, epochs 5–8 |\n|---|---|---|---|---|---|---|\n",
        );
        for l in ken {
            let _ = writeln!(
                s,
                "| {} | {} × {} | {} | {} | {:.3} | {:.1} | {:.2} |",
                text(l, "case").unwrap_or_default(),
                num(l, "m"),
                num(l, "n"),
                num(l, "cache_mb"),
                num(l, "repeats"),
                num(l, "first_epoch_seconds"),
                num(l, "first_epoch_step_us"),
                num(l, "cached_step_us")
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
    fn the_page_gives_ratios_only_when_the_peer_ran_and_the_fixture_only_real_cases() {
        let ours = r#"{"case":"usps-3v5-rbf","solver":"bulwark-smo","m":2200,"n":256,"kernel":"rbf","gamma":0.01,"degree":0,"coef0":0,"C":10.0,"seconds":0.15,"iterations":1449,"dual_objective":171.47074547,"support_vectors":605}
{"case":"synthetic-4000x50-rbf","solver":"bulwark-smo","m":4000,"n":50,"kernel":"rbf","gamma":0.02,"degree":0,"coef0":0,"C":1.0,"seconds":1.0,"iterations":9000,"dual_objective":1000.0,"support_vectors":3000}"#;
        let page = render(ours, Some("pip failed"), "machine");
        assert!(page.contains("No ratios: LIBSVM did not run (pip failed)"));
        assert!(page.contains("synthetic-4000x50-rbf (synthetic)"));
        let both = format!(
            "{ours}\n{}",
            r#"{"case":"usps-3v5-rbf","solver":"libsvm","version":"scikit-learn 1.7.2","seconds":0.10,"iterations":1468,"dual_objective":171.47075243,"support_vectors":605}
{"case":"synthetic-4000x50-rbf","solver":"libsvm","version":"scikit-learn 1.7.2","seconds":2.0,"iterations":9100,"dual_objective":1000.0,"support_vectors":3001}"#
        );
        let page = render(&both, None, "machine");
        assert!(!page.contains("KEN-GURU"));
        assert!(page.contains("**1.50×**"), "{page}");
        assert!(page.contains("**0.50×**"), "{page}");
        assert!(page.contains("Largest SMO / LIBSVM time ratio: **1.50×**"));
        assert!(page.contains("| 605 / 605 |"));
        let ken = format!(
            "{both}\n{}",
            r#"{"case":"usps-3v5-rbf","solver":"ken-guru","m":2200,"n":256,"cache_mb":200,"repeats":5,"first_epoch_seconds":0.47,"first_epoch_step_us":214.7,"cached_step_us":7.28}"#
        );
        let page = render(&ken, None, "machine");
        assert!(
            page.contains("| usps-3v5-rbf | 2200 × 256 | 200 | 5 | 0.470 | 214.7 | 7.28 |"),
            "{page}"
        );
        let fixture = reference(&both);
        assert!(fixture.contains("\"usps-3v5-rbf\": {\"dual_objective\": 171.47075243"));
        assert!(!fixture.contains("synthetic"));
    }
}
