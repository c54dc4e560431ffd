//! Repository rules, checked by `cargo xtask tidy` and by `cargo test` (see the test below).

use std::fs;
use std::path::{Path, PathBuf};

fn read(p: &Path) -> Result<String, String> {
    fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The largest committed file outside `data/` (4 MiB): data sets belong in `data/`, with their
/// checksums.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Committed files outside `data/` allowed above [`MAX_FILE_BYTES`], with the reason.
const LARGE_FILES: &[(&str, &str)] = &[(
    "docs/results/full/cache-full.jsonl",
    "the unit cache of `reproduce --full`, committed so the papers' protocol resumes anywhere",
)];

/// The rules on committed files (`git ls-files`): no symbolic link (one points into a single
/// machine's file system), no file over [`MAX_FILE_BYTES`] outside `data/` unless listed in
/// [`LARGE_FILES`]. Without git (a copy that is not a checkout) nothing is checked.
fn committed_files(root: &Path, problems: &mut Vec<String>) {
    let Ok(out) = std::process::Command::new("git")
        .args(["ls-files", "-s", "-z"])
        .current_dir(root)
        .output()
    else {
        return;
    };
    if !out.status.success() {
        return;
    }
    for entry in out.stdout.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        // `<mode> <object> <stage>\t<path>`
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        problems.extend(file_problem(
            meta.split(' ').next().unwrap_or(""),
            path,
            || fs::symlink_metadata(root.join(path)).map_or(0, |m| m.len()),
        ));
    }
}

/// The rule a committed file of git `mode` at `path` (of `size()` bytes) breaks, if any.
fn file_problem(mode: &str, path: &str, size: impl FnOnce() -> u64) -> Option<String> {
    if mode == "120000" {
        return Some(format!(
            "{path}: a committed symbolic link (it points into one machine's file system): remove it"
        ));
    }
    if path.starts_with("data/") || LARGE_FILES.iter().any(|(p, _)| *p == path) {
        return None;
    }
    let size = size();
    (size > MAX_FILE_BYTES).then(|| {
        format!(
            "{path}: {size} bytes, over the {MAX_FILE_BYTES}-byte limit for files outside data/"
        )
    })
}

/// Checks every crate under `crates/` and the committed files; returns how many crates were
/// checked.
pub fn run(root: &Path) -> Result<usize, String> {
    let mut problems = Vec::new();
    committed_files(root, &mut problems);
    let mut count = 0;
    let mut crates: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .collect();
    crates.sort();
    for dir in crates.iter().filter(|d| d.join("Cargo.toml").exists()) {
        count += 1;
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let manifest = read(&dir.join("Cargo.toml"))?;
        if !manifest
            .lines()
            .any(|l| l.trim_start().starts_with("description"))
        {
            problems.push(format!("crates/{name}: Cargo.toml has no `description`"));
        }
        match fs::read_to_string(dir.join("README.md")) {
            Err(_) => problems.push(format!("crates/{name}: no README.md")),
            Ok(readme) => {
                let purpose = readme
                    .lines()
                    .find(|l| !(l.starts_with('#') || l.trim().is_empty()));
                if purpose.is_none_or(|l| l.trim().len() < 20) {
                    problems.push(format!(
                        "crates/{name}: README.md must open with a sentence stating the purpose"
                    ));
                }
            }
        }
        let lib = dir.join("src/lib.rs");
        if lib.exists() {
            if !read(&lib)?.contains("include_str!(\"../README.md\")") {
                problems.push(format!("crates/{name}: src/lib.rs should start with #![doc = include_str!(\"../README.md\")]"));
            }
            let mut files = Vec::new();
            rust_files(&dir.join("src"), &mut files);
            for f in files {
                if f.ends_with("main.rs") || f.components().any(|c| c.as_os_str() == "bin") {
                    continue;
                }
                let text = read(&f)?;
                for (k, line) in text.lines().enumerate() {
                    let l = line.trim_start();
                    if !l.starts_with("//") && (l.contains("println!(") || l.contains("eprintln!("))
                    {
                        problems.push(format!(
                            "{}:{}: library code must not print",
                            f.display(),
                            k + 1
                        ));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(count)
    } else {
        Err(format!(
            "tidy found {} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn links_and_large_files_outside_data_are_refused() {
        use super::{MAX_FILE_BYTES, file_problem};
        let e = file_problem("120000", "noxz", || 10).unwrap();
        assert!(e.starts_with("noxz: a committed symbolic link"), "{e}");
        assert!(file_problem("100644", "src/lib.rs", || 1000).is_none());
        let e = file_problem("100644", "docs/big.bin", || MAX_FILE_BYTES + 1).unwrap();
        assert!(e.contains("over the 4194304-byte limit"), "{e}");
        assert!(file_problem("100644", "data/mnist/x.gz", || 1 << 30).is_none());
        assert!(file_problem("120000", "data/link", || 1).is_some());
        assert!(file_problem("100644", "docs/results/full/cache-full.jsonl", || 1 << 30).is_none());
    }

    #[test]
    fn repository_is_tidy() {
        let n = super::run(&crate::project_root()).unwrap_or_else(|e| panic!("{e}"));
        assert!(n >= 3);
    }
}
