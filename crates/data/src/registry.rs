//! Built-in data set names, resolved in a data directory: `--data-dir` (the explicit argument),
//! else `BULWARK_DATA`, else the repository's own `data/` folder (see [`resolve_data_dir`]).
//! `wdbc` and `spambase` are embedded in the crate, so the default demo needs no directory.

use std::path::{Path, PathBuf};

use bulwark_core::{Dataset, Error, Result};

use crate::options::{MissingPolicy, ReadOptions};
use crate::read::{decode, read_all};
use crate::{csvfile, idx, libsvm};

/// The environment variable naming the data directory.
pub const DATA_ENV: &str = "BULWARK_DATA";

static WDBC: &[u8] = include_bytes!("../data/wdbc.csv.gz");
static SPAMBASE: &[u8] = include_bytes!("../data/spambase.csv.gz");

/// A built-in data set.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Its name on the command line.
    pub name: &'static str,
    /// Path(s) relative to the data directory (MNIST has images and labels).
    pub files: &'static [&'static str],
    /// Embedded copy, if any.
    pub embedded: Option<&'static [u8]>,
    /// One line: what it is.
    pub description: &'static str,
    /// How a user gets the file.
    pub how_to_get: &'static str,
}

/// Every built-in name.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "wdbc",
        files: &["uci/wdbc.csv.gz"],
        embedded: Some(WDBC),
        description: "UCI Breast Cancer Wisconsin (Diagnostic), 569 x 30, benign/malignant",
        how_to_get: "embedded",
    },
    Builtin {
        name: "spambase",
        files: &["uci/spambase.csv.gz"],
        embedded: Some(SPAMBASE),
        description: "UCI Spambase, 4601 x 57, nonspam/spam",
        how_to_get: "embedded",
    },
    Builtin {
        name: "ionosphere",
        files: &["uci/ionosphere.csv.gz"],
        embedded: None,
        description: "UCI Ionosphere, 351 x 34, good/bad",
        how_to_get: "UCI Ionosphere (R mlbench `Ionosphere`) as CSV with a `label` first column",
    },
    Builtin {
        name: "pima",
        files: &["uci/pima.csv.gz"],
        embedded: None,
        description: "Pima Indians Diabetes, 768 x 8, neg/pos",
        how_to_get: "R mlbench `PimaIndiansDiabetes` as CSV with a `label` first column",
    },
    Builtin {
        name: "splice",
        files: &["uci/splice.csv.gz"],
        embedded: None,
        description: "UCI Splice-junction, 3186 x 180 binary indicators, classes n/ei/ie",
        how_to_get: "R mlbench `DNA` as CSV with a `label` first column",
    },
    Builtin {
        name: "wine",
        files: &["uci/wine.csv.gz"],
        embedded: None,
        description: "UCI Wine, 178 x 13, three cultivars",
        how_to_get: "scikit-learn `wine_data.csv` with a `label` first column",
    },
    Builtin {
        name: "usps",
        files: &["usps/usps_1100.csv.gz"],
        embedded: None,
        description: "USPS digits, 1100 per digit, 11000 x 256 grey levels",
        how_to_get: "the 1100-per-digit USPS set as CSV (label, 256 pixels)",
    },
    Builtin {
        name: "mnist10k",
        files: &[
            "mnist/t10k-images-idx3-ubyte.gz",
            "mnist/t10k-labels-idx1-ubyte.gz",
        ],
        embedded: None,
        description: "MNIST test set, 10000 x 784, digits 0-9 (IDX)",
        how_to_get: "the MNIST IDX files t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (LeCun et al.)",
    },
];

/// Looks up a built-in name.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Where a data set came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The copy embedded in this crate.
    Embedded,
    /// A file (or files) on disk.
    File(PathBuf),
}

/// Where the data directory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirSource {
    /// The explicit argument (`--data-dir`).
    Argument,
    /// The environment variable [`DATA_ENV`].
    Env,
    /// The repository's `data/` folder ([`repository_data_dir`]).
    Repository,
}

/// A resolved data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    /// The directory.
    pub path: PathBuf,
    /// Where it came from.
    pub source: DirSource,
}

impl DataDir {
    /// The directory in words, for messages.
    fn describe(&self) -> String {
        let p = self.path.display();
        match self.source {
            DirSource::Argument => format!("the data directory {p}"),
            DirSource::Env => format!("the data directory {p} (from {DATA_ENV})"),
            DirSource::Repository => format!("the repository's data folder {p}"),
        }
    }
}

/// The repository's `data/` folder, found from this crate's source location at compile time
/// (`../../data` from `crates/data`), if it exists on disk with its `DATA.md`. A copy of the crate
/// built outside a Bulwark checkout (e.g. from crates.io) has none.
pub fn repository_data_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.parent()?;
    let dir = root.join("data");
    dir.join("DATA.md").is_file().then_some(dir)
}

/// Resolves the data directory: the explicit one (`--data-dir`), else `BULWARK_DATA` (when set
/// and not empty), else the repository's `data/` folder ([`repository_data_dir`]), else none.
/// The first that applies is the only directory used; it is not checked for existence here, so a
/// missing file is reported in the directory the user chose.
pub fn resolve_data_dir(explicit: Option<&Path>) -> Option<DataDir> {
    if let Some(p) = explicit {
        return Some(DataDir {
            path: p.to_path_buf(),
            source: DirSource::Argument,
        });
    }
    if let Some(p) = std::env::var_os(DATA_ENV).filter(|s| !s.is_empty()) {
        return Some(DataDir {
            path: PathBuf::from(p),
            source: DirSource::Env,
        });
    }
    repository_data_dir().map(|path| DataDir {
        path,
        source: DirSource::Repository,
    })
}

/// The path of the resolved data directory ([`resolve_data_dir`]).
pub fn data_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    resolve_data_dir(explicit).map(|d| d.path)
}

/// A file in the data directory, e.g. `lp/afiro.mps`: its path when it exists, else
/// [`Error::NotFound`] naming the file and the directory looked in.
pub fn data_file(relative: &str, explicit: Option<&Path>) -> Result<PathBuf> {
    let dir = resolve_data_dir(explicit);
    if let Some(d) = &dir {
        let p = d.path.join(relative);
        if p.exists() {
            return Ok(p);
        }
    }
    Err(not_found(&[relative], "", "", dir.as_ref()))
}

/// The error for `files` (relative to the data directory; `what` they are, if worth saying)
/// missing from `dir`: names the first file, the directory looked in (or why there was none) and
/// how to get the data.
fn not_found(files: &[&str], what: &str, how_to_get: &str, dir: Option<&DataDir>) -> Error {
    let mut wanted = files.join(" and ");
    if !what.is_empty() {
        wanted.push_str(&format!(" ({what})"));
    }
    let get = if how_to_get.is_empty() {
        String::new()
    } else {
        format!("; get {how_to_get}")
    };
    let Some(d) = dir else {
        return Error::NotFound {
            path: PathBuf::from(files[0]),
            hint: format!(
                "no data directory to look for {wanted} in: no --data-dir given, {DATA_ENV} \
                 unset, and this build of bulwark-data has no repository data/ folder (a checkout \
                 of the Bulwark repository ships the data there); pass --data-dir DIR or set \
                 {DATA_ENV}=DIR for a directory holding {}{get}",
                files.join(" and ")
            ),
        };
    };
    let mut hint = format!("looked for {wanted} in {}{get}", d.describe());
    if let Some(r) = repository_data_dir() {
        if r != d.path && r.join(files[0]).exists() {
            hint.push_str(&format!(
                "; the repository's data folder {} has it: drop --data-dir and unset {DATA_ENV} \
                 to use it (sources and licences in its DATA.md)",
                r.display()
            ));
        } else {
            hint.push_str(&format!(
                "; {} lists the sources and checksums",
                r.join("DATA.md").display()
            ));
        }
    }
    Error::NotFound {
        path: d.path.join(files[0]),
        hint,
    }
}

/// File formats the loader understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CSV with a `label` column, optionally gzip-compressed.
    Csv,
    /// LIBSVM / svmlight.
    Libsvm,
    /// MNIST IDX images (the labels file is found beside it).
    Idx,
}

impl Format {
    /// Guesses the format from a file name: `*.csv[.gz]`, `*.libsvm|*.svm|*.svmlight|*.txt[.gz]`,
    /// `*-idx3-ubyte[.gz]`.
    pub fn from_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".csv") {
            Some(Format::Csv)
        } else if name.ends_with("idx3-ubyte") {
            Some(Format::Idx)
        } else if [".libsvm", ".svm", ".svmlight", ".txt"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            Some(Format::Libsvm)
        } else {
            None
        }
    }
}

/// Loads a file of a known or guessed format (a missing CSV cell is an error).
pub fn load_path(path: &Path, format: Option<Format>) -> Result<Dataset> {
    load_path_with(
        path,
        &ReadOptions {
            format,
            ..ReadOptions::default()
        },
    )
}

/// Loads a file with [`ReadOptions`]: the format (else guessed), the missing-value tokens and
/// policy of CSV files.
pub fn load_path_with(path: &Path, options: &ReadOptions) -> Result<Dataset> {
    let format = options.format;
    let source = path.display().to_string();
    if !path.exists() {
        return Err(Error::NotFound {
            path: path.to_path_buf(),
            hint: "no such file".into(),
        });
    }
    let format = format.or_else(|| Format::from_path(path)).ok_or_else(|| {
        Error::input(
            bulwark_core::Location::source(source.clone()),
            "unknown file format: expected .csv, .csv.gz, .libsvm/.svm/.txt or an MNIST *-idx3-ubyte[.gz] file",
        )
    })?;
    match format {
        Format::Csv => csvfile::parse_csv_with(&read_all(path)?, &source, options),
        Format::Libsvm => libsvm::parse_libsvm(&read_all(path)?, &source, None),
        Format::Idx => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().replace("images-idx3", "labels-idx1"))
                .unwrap_or_default();
            let labels = path.with_file_name(name);
            if !labels.exists() {
                return Err(Error::NotFound {
                    path: labels,
                    hint: "the IDX labels file must sit beside the images file".into(),
                });
            }
            idx::parse_idx(
                &read_all(path)?,
                &source,
                &read_all(&labels)?,
                &labels.display().to_string(),
            )
        }
    }
}

/// Loads a built-in name or a path with the default [`ReadOptions`] (see [`load_with`]).
pub fn load(spec: &str, data_dir_override: Option<&Path>) -> Result<(Dataset, Origin)> {
    load_with(spec, data_dir_override, &ReadOptions::default()).map(|l| (l.data, l.origin))
}

/// A loaded data set, where it came from and how many records the missing-value policy `drop`
/// left out.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The data.
    pub data: Dataset,
    /// Where it came from.
    pub origin: Origin,
    /// Records left out by [`MissingPolicy::Drop`] (0 otherwise).
    pub dropped: usize,
}

/// Loads a built-in name or a path with [`ReadOptions`] (format, missing-value tokens and
/// policy), reporting the records the policy `drop` left out. See [`load_spec`] for how names
/// resolve.
pub fn load_with(
    spec: &str,
    data_dir_override: Option<&Path>,
    options: &ReadOptions,
) -> Result<Loaded> {
    let dropping = options.missing == MissingPolicy::Drop;
    let parse_options = if dropping {
        ReadOptions {
            missing: MissingPolicy::Delete,
            ..options.clone()
        }
    } else {
        options.clone()
    };
    let (data, origin) = load_spec(spec, data_dir_override, &parse_options)?;
    let (data, dropped) = if dropping {
        csvfile::drop_incomplete(data)?
    } else {
        (data, 0)
    };
    Ok(Loaded {
        data,
        origin,
        dropped,
    })
}

/// Loads a built-in name or a path. A built-in name is read from the data directory
/// ([`resolve_data_dir`]); `wdbc` and `spambase` come from their embedded copies unless a
/// directory given by `--data-dir` or `BULWARK_DATA` holds the file (the repository's copies are
/// the same bytes). Unknown names get an error listing the built-in ones.
fn load_spec(
    spec: &str,
    data_dir_override: Option<&Path>,
    options: &ReadOptions,
) -> Result<(Dataset, Origin)> {
    if let Some(b) = builtin(spec) {
        // a built-in set has a known format; the override is for files
        let options = &ReadOptions {
            format: None,
            ..options.clone()
        };
        let dir = resolve_data_dir(data_dir_override);
        let file = dir
            .as_ref()
            .map(|d| d.path.join(b.files[0]))
            .filter(|f| f.exists());
        let user_file = dir
            .as_ref()
            .is_some_and(|d| d.source != DirSource::Repository);
        if let Some(bytes) = b.embedded
            && (file.is_none() || !user_file)
        {
            let d = csvfile::parse_csv_with(&decode(bytes, b.name)?, b.name, options)?;
            return Ok((d, Origin::Embedded));
        }
        if let Some(first) = file {
            let d = load_path_with(&first, options)?.with_name(b.name);
            return Ok((d, Origin::File(first)));
        }
        return Err(not_found(
            b.files,
            &format!("data set `{}`", b.name),
            b.how_to_get,
            dir.as_ref(),
        ));
    }
    let path = Path::new(spec);
    if path.exists() || spec.contains('/') || spec.contains('.') {
        return load_path_with(path, options).map(|d| (d, Origin::File(path.to_path_buf())));
    }
    let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
    Err(Error::UnknownDataset {
        name: spec.to_string(),
        hint: format!("not a file and not a built-in name ({})", names.join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without any data directory the message names the file, says why there is no directory
    /// and how to get the data, and names no folder the user does not have.
    #[test]
    fn no_data_directory_names_the_file_and_how_to_get_it() {
        let b = builtin("usps").unwrap();
        let e = not_found(b.files, "data set `usps`", b.how_to_get, None);
        assert!(
            e.to_string()
                .starts_with("usps/usps_1100.csv.gz: not found (no data directory")
        );
        let Error::NotFound { path, hint } = &e else {
            panic!("{e}")
        };
        assert_eq!(path, Path::new("usps/usps_1100.csv.gz"));
        assert!(
            hint.contains("usps/usps_1100.csv.gz (data set `usps`)")
                && hint.contains("no --data-dir given, BULWARK_DATA unset")
                && hint.contains("--data-dir DIR or set BULWARK_DATA=DIR")
                && hint.contains("1100-per-digit USPS"),
            "{hint}"
        );
        assert!(!hint.contains(env!("CARGO_MANIFEST_DIR")), "{hint}");
    }
}
