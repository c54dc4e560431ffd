//! The repository's `data/` folder: every file matches `SHA256SUMS`, the data directory is
//! resolved in the documented order, and a missing file names itself and the places looked in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bulwark_core::Error;
use bulwark_data::{DATA_ENV, DirSource, data_file, load, repository_data_dir, resolve_data_dir};
use sha2::{Digest, Sha256};

fn repo_data() -> PathBuf {
    repository_data_dir().expect("the repository's data/ folder (with DATA.md) is missing")
}

fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every regular file under `dir`, as `/`-separated paths relative to `root`.
fn files_under(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            files_under(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).unwrap();
            let parts: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
}

#[test]
fn every_file_in_data_matches_sha256sums() {
    let dir = repo_data();
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let mut listed = BTreeMap::new();
    for (i, line) in sums.lines().enumerate() {
        let (hash, name) = line
            .split_once("  ")
            .unwrap_or_else(|| panic!("SHA256SUMS:{}: not `HASH  FILE`: {line}", i + 1));
        assert_eq!(hash.len(), 64, "SHA256SUMS:{}: {line}", i + 1);
        assert!(listed.insert(name, hash).is_none(), "{name} listed twice");
    }
    let mut present = Vec::new();
    files_under(&dir, &dir, &mut present);
    present.retain(|f| f != "SHA256SUMS" && f != "DATA.md");
    present.sort();
    let listed_names: Vec<String> = listed.keys().map(|s| s.to_string()).collect();
    assert_eq!(present, listed_names, "files in data/ vs SHA256SUMS");
    for (name, hash) in &listed {
        assert_eq!(&sha256_hex(&dir.join(name)), hash, "data/{name}");
    }
    // the embedded copies are the same bytes as the repository's files
    for name in ["wdbc", "spambase"] {
        let embedded = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("data/{name}.csv.gz"));
        assert_eq!(
            &sha256_hex(&embedded),
            listed[format!("uci/{name}.csv.gz").as_str()],
            "{}",
            embedded.display()
        );
    }
    // DATA.md describes every data file
    let data_md = std::fs::read_to_string(dir.join("DATA.md")).unwrap();
    for name in listed.keys() {
        assert!(
            data_md.contains(&format!("`{name}`")),
            "DATA.md misses {name}"
        );
    }
}

#[test]
fn the_data_directory_is_the_argument_then_the_variable_then_the_repository() {
    let other = tempfile::tempdir().unwrap();
    let d = resolve_data_dir(Some(other.path())).unwrap();
    assert_eq!(
        (d.path.as_path(), d.source),
        (other.path(), DirSource::Argument)
    );
    let d = resolve_data_dir(None).unwrap();
    match std::env::var_os(DATA_ENV).filter(|s| !s.is_empty()) {
        Some(env) => assert_eq!((d.path, d.source), (PathBuf::from(env), DirSource::Env)),
        None => assert_eq!((d.path, d.source), (repo_data(), DirSource::Repository)),
    }
    // the repository's folder is found from the crate's own location, whatever the working dir
    assert!(repo_data().ends_with("data"));
    assert!(repo_data().join("SHA256SUMS").is_file());
}

#[test]
fn a_missing_file_names_itself_and_the_directory_looked_in() {
    let empty = tempfile::tempdir().unwrap();
    let shown = empty.path().display().to_string();
    let e = data_file("lp/nope.mps", Some(empty.path())).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!("{shown}/lp/nope.mps: not found"))
            && text.contains(&format!("in the data directory {shown}"))
            && text.contains("DATA.md"),
        "{text}"
    );
    // a built-in set missing from a chosen directory: the repository's copy is pointed out
    let e = load("usps", Some(empty.path())).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!(
            "{shown}/usps/usps_1100.csv.gz: not found (looked for usps/usps_1100.csv.gz (data set `usps`) in the data directory {shown}"
        ))
            && text.contains(&format!(
                "the repository's data folder {}",
                repo_data().display()
            ))
            && text.contains("1100-per-digit"),
        "{text}"
    );
    // both MNIST files are named
    let text = load("mnist10k", Some(empty.path()))
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("mnist/t10k-images-idx3-ubyte.gz and mnist/t10k-labels-idx1-ubyte.gz"),
        "{text}"
    );
    // a file that is there
    let afiro = data_file("lp/afiro.mps", Some(&repo_data())).unwrap();
    assert_eq!(afiro, repo_data().join("lp/afiro.mps"));
}
