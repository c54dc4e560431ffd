//! Built-in data set names, resolved in a data directory (`--data-dir` or `BULWARK_DATA`).
//! `wdbc` and `spambase` are embedded in the crate, so the default demo needs no directory.

use std::path::{Path, PathBuf};

use bulwark_core::{Dataset, Error, Result};

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

/// The data directory: the explicit one, else `BULWARK_DATA`, else none.
pub fn data_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    explicit.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(DATA_ENV)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    })
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

/// Loads a file of a known or guessed format.
pub fn load_path(path: &Path, format: Option<Format>) -> Result<Dataset> {
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
        Format::Csv => csvfile::parse_csv(&read_all(path)?, &source),
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

/// Loads a built-in name (from the data directory when it has the file, else the embedded copy)
/// or a path. Unknown names get an error listing the built-in ones.
pub fn load(spec: &str, data_dir_override: Option<&Path>) -> Result<(Dataset, Origin)> {
    if let Some(b) = builtin(spec) {
        let dir = data_dir(data_dir_override);
        if let Some(dir) = &dir {
            let first = dir.join(b.files[0]);
            if first.exists() {
                let d = load_path(&first, None)?.with_name(b.name);
                return Ok((d, Origin::File(first)));
            }
        }
        if let Some(bytes) = b.embedded {
            let d = csvfile::parse_csv(&decode(bytes, b.name)?, b.name)?;
            return Ok((d, Origin::Embedded));
        }
        let where_ = match &dir {
            Some(d) => d.join(b.files[0]),
            None => PathBuf::from(format!("$BULWARK_DATA/{}", b.files[0])),
        };
        let hint = match dir {
            Some(_) => format!("data set `{}` needs {}", b.name, b.how_to_get),
            None => format!(
                "data set `{}` is not embedded: pass --data-dir DIR or set {DATA_ENV} to a directory holding {} ({})",
                b.name, b.files[0], b.how_to_get
            ),
        };
        return Err(Error::NotFound { path: where_, hint });
    }
    let path = Path::new(spec);
    if path.exists() || spec.contains('/') || spec.contains('.') {
        return load_path(path, None).map(|d| (d, Origin::File(path.to_path_buf())));
    }
    let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
    Err(Error::UnknownDataset {
        name: spec.to_string(),
        hint: format!("not a file and not a built-in name ({})", names.join(", ")),
    })
}
