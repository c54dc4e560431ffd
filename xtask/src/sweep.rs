//! `cargo xtask bench sweep`: the structured IPM of LP (4) over a grid of real image pairs,
//! written to `docs/perf-sweep.md` (issue 20's real-data sweep).
//!
//! The fits are `bulwark-deletion`'s `real_sweep` example (release build): MNIST test-set and
//! USPS pairs from the repository's data folder, and Fashion-MNIST training pairs from Debian's
//! `dataset-fashion-mnist`, which this command installs under `target/bench/fashion-mnist`
//! (`apt-get download`, then `dpkg-deb -x`; `--no-fashion` skips it, and a machine without
//! `apt-get` runs the sweep without it and says so). Each fit is the structured IPM alone, so a
//! failure is counted, not hidden behind a fallback solver. Every figure in the page comes from
//! this run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::{cargo, num, provenance, text};
use crate::project_root;

/// Where Fashion-MNIST's IDX files are after installation, installing them when missing.
pub(crate) fn fashion_mnist(root: &Path) -> Result<PathBuf, String> {
    let base = root.join("target/bench/fashion-mnist");
    let dir = base.join("usr/share/datasets/fashion-mnist");
    if dir.join("train-images-idx3-ubyte.gz").is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    println!(
        "installing Fashion-MNIST (Debian dataset-fashion-mnist) into {} …",
        base.display()
    );
    let ok = Command::new("apt-get")
        .args(["download", "dataset-fashion-mnist"])
        .current_dir(&base)
        .status()
        .map_err(|e| format!("apt-get not available ({e})"))?;
    if !ok.success() {
        return Err(format!(
            "apt-get download dataset-fashion-mnist failed ({ok})"
        ));
    }
    let deb = std::fs::read_dir(&base)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("no .deb downloaded")?;
    let ok = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&base)
        .status()
        .map_err(|e| format!("dpkg-deb not available ({e})"))?;
    if !ok.success() || !dir.join("train-images-idx3-ubyte.gz").is_file() {
        return Err(format!("dpkg-deb -x {} failed ({ok})", deb.display()));
    }
    Ok(dir)
}

/// One fit of the sweep.
struct Fit {
    line: String,
}

impl Fit {
    fn solved(&self) -> bool {
        text(&self.line, "solver").as_deref() == Some("dsx-ipm")
    }
    fn iterations(&self) -> u64 {
        num(&self.line, "iterations") as u64
    }
    /// The last iterate's dual residual when the certificate repaired its dual point.
    fn repaired_from(&self) -> Option<f64> {
        Some(num(&self.line, "dual_repaired_from")).filter(|r| r.is_finite())
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(bad) = args[1..].iter().find(|a| *a != "--no-fashion") {
        return Err(format!("unknown option `{bad}`"));
    }
    let root = project_root();
    std::fs::create_dir_all(root.join("target/bench")).map_err(|e| e.to_string())?;
    let provenance = provenance(&root, args);
    let fashion = if args.iter().any(|a| a == "--no-fashion") {
        Err("not run (`--no-fashion`)".to_string())
    } else {
        fashion_mnist(&root)
    };
    let out = root.join("target/bench/sweep.jsonl");
    let mut cmd = Command::new(cargo());
    cmd.args(["run", "--quiet", "--release", "-p", "bulwark-deletion"])
        .args(["--example", "real_sweep", "--"])
        .arg(&out)
        .current_dir(&root);
    if let Ok(dir) = &fashion {
        cmd.arg(dir);
    }
    println!("running the sweep …");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run real_sweep: {e}"))?;
    if !status.success() {
        return Err(format!("real_sweep failed ({status})"));
    }
    let fits: Vec<Fit> = std::fs::read_to_string(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .lines()
        .map(|l| Fit {
            line: l.to_string(),
        })
        .collect();
    let page = render(&provenance, fashion.as_ref().err(), &fits);
    let path = root.join("docs/perf-sweep.md");
    std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

fn render(provenance: &str, fashion_skipped: Option<&String>, fits: &[Fit]) -> String {
    let mut md = String::from("# The structured IPM on real data: the sweep\n\n");
    let _ = writeln!(md, "{provenance}\n");
    md.push_str(
        "LP (4) on pairs of real image data sets (the first images of each class, min-max \
         scaling, uniform feature values), each fit by the structured IPM alone — no fallback \
         solver, so a failure is counted here. Issue 20's target: every fit within 80 \
         iterations.\n\n",
    );
    if let Some(why) = fashion_skipped {
        let _ = writeln!(md, "Fashion-MNIST: {why}.\n");
    }
    let solved: Vec<&Fit> = fits.iter().filter(|f| f.solved()).collect();
    let its: Vec<u64> = solved.iter().map(|f| f.iterations()).collect();
    let _ = writeln!(
        md,
        "**{} fits: {} solved by the structured IPM ({} of them certified by a dual point \
         repaired from the last iterate), {} not.** Iterations of the solved fits: total {}, at \
         most {}, more than 80 in {}.\n",
        fits.len(),
        solved.len(),
        solved
            .iter()
            .filter(|f| f.repaired_from().is_some())
            .count(),
        fits.len() - solved.len(),
        its.iter().sum::<u64>(),
        its.iter().max().copied().unwrap_or(0),
        its.iter().filter(|&&i| i > 80).count()
    );
    md.push_str("| iterations | fits |\n|---|---|\n");
    for (lo, hi) in [
        (0, 40),
        (41, 60),
        (61, 80),
        (81, 100),
        (101, 150),
        (151, u64::MAX),
    ] {
        let k = its.iter().filter(|&&i| i >= lo && i <= hi).count();
        let label = if hi == u64::MAX {
            format!("{lo} or more")
        } else {
            format!("{lo}–{hi}")
        };
        let _ = writeln!(md, "| {label} | {k} |");
    }
    let _ = writeln!(md, "| not solved | {} |\n", fits.len() - solved.len());
    md.push_str(
        "| data | pair | m × n | N | C | solver | iterations | refinements | dual point repaired from (the last iterate's dual residual) | seconds | why not solved |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for f in fits {
        let l = &f.line;
        let _ = writeln!(
            md,
            "| {} | {} | {} × {} | {} | {} | {} | {} | {} | {} | {:.2} | {} |",
            text(l, "data").unwrap_or_default(),
            text(l, "pair").unwrap_or_default(),
            num(l, "m"),
            num(l, "n"),
            num(l, "budget"),
            num(l, "c"),
            text(l, "solver").unwrap_or_default(),
            if f.solved() {
                f.iterations().to_string()
            } else {
                "–".into()
            },
            num(l, "refinements"),
            f.repaired_from()
                .map(|r| format!("{r:.1e}"))
                .unwrap_or_default(),
            num(l, "seconds"),
            text(l, "failure").unwrap_or_default().replace('|', "/")
        );
    }
    md
}
