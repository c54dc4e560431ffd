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

/// Checks every crate under `crates/`; returns how many were checked.
pub fn run(root: &Path) -> Result<usize, String> {
    let mut problems = Vec::new();
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
    fn repository_is_tidy() {
        let n = super::run(&crate::project_root()).unwrap_or_else(|e| panic!("{e}"));
        assert!(n >= 3);
    }
}
