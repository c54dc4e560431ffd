//! Built-in data set names, resolved in a data directory: `--data-dir` (the explicit argument),
//! else `BULWARK_DATA`, else the repository's own `data/` folder (see [`resolve_data_dir`]).
//! `wdbc` and `spambase` are embedded in the crate, so the default demo needs no directory.

use std::path::{Path, PathBuf};

use bulwark_core::{Dataset, Error, Location, Result};

use crate::options::{MissingPolicy, ReadOptions};
use crate::read::{Compression, decode, open};
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
    /// A file in the data directory naming the features, one per line in feature order (the
    /// words of a bag-of-words set); `None`: the file names them (CSV) or they are `x1, x2, …`.
    pub feature_names: Option<&'static str>,
    /// The names of the classes −1 and +1 of a binary set whose file has numeric labels
    /// (LIBSVM); `None`: the names the file gives.
    pub class_names: Option<[&'static str; 2]>,
}

/// Every built-in name.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "wdbc",
        files: &["uci/wdbc.csv.gz"],
        embedded: Some(WDBC),
        description: "UCI Breast Cancer Wisconsin (Diagnostic), 569 x 30, benign/malignant",
        how_to_get: "embedded",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "spambase",
        files: &["uci/spambase.csv.gz"],
        embedded: Some(SPAMBASE),
        description: "UCI Spambase, 4601 x 57, nonspam/spam",
        how_to_get: "embedded",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "ionosphere",
        files: &["uci/ionosphere.csv.gz"],
        embedded: None,
        description: "UCI Ionosphere, 351 x 34, good/bad",
        how_to_get: "UCI Ionosphere (R mlbench `Ionosphere`) as CSV with a `label` first column",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "pima",
        files: &["uci/pima.csv.gz"],
        embedded: None,
        description: "Pima Indians Diabetes, 768 x 8, neg/pos",
        how_to_get: "R mlbench `PimaIndiansDiabetes` as CSV with a `label` first column",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "splice",
        files: &["uci/splice.csv.gz"],
        embedded: None,
        description: "UCI Splice-junction, 3186 x 180 binary indicators, classes n/ei/ie",
        how_to_get: "R mlbench `DNA` as CSV with a `label` first column",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "wine",
        files: &["uci/wine.csv.gz"],
        embedded: None,
        description: "UCI Wine, 178 x 13, three cultivars",
        how_to_get: "scikit-learn `wine_data.csv` with a `label` first column",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "housevotes84",
        files: &["uci/housevotes84.csv.gz"],
        embedded: None,
        description: "UCI Congressional Voting Records 1984, 435 x 16 votes (1 = y, 0 = n), \
                      392 missing cells in 203 records, democrat/republican",
        how_to_get: "R mlbench `HouseVotes84`, converted by the repository's \
                     data/scripts/make_mlbench.py (data/DATA.md)",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "breastcancer",
        files: &["uci/breastcancer.csv.gz"],
        embedded: None,
        description: "UCI Breast Cancer Wisconsin (Original), 699 x 9 scores 1-10, \
                      16 missing cells in 16 records, benign/malignant",
        how_to_get: "R mlbench `BreastCancer`, converted by the repository's \
                     data/scripts/make_mlbench.py (data/DATA.md)",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "pima2",
        files: &["uci/pima2.csv.gz"],
        embedded: None,
        description: "Pima Indians Diabetes with the impossible zeros missing, 768 x 8, \
                      652 missing cells in 376 records, neg/pos",
        how_to_get: "R mlbench `PimaIndiansDiabetes2`, converted by the repository's \
                     data/scripts/make_mlbench.py (data/DATA.md)",
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "usps",
        files: &["usps/usps_1100.csv.gz"],
        embedded: None,
        description: "USPS digits, 1100 per digit, 11000 x 256 grey levels",
        how_to_get: "the 1100-per-digit USPS set as CSV (label, 256 pixels)",
        feature_names: None,
        class_names: None,
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
        feature_names: None,
        class_names: None,
    },
    Builtin {
        name: "spamassassin",
        files: &["text/spamassassin.svm.gz", "text/spamassassin.vocab"],
        embedded: None,
        description: "SpamAssassin public mail corpus, binary bag of words, 5913 x 5239 (sparse), ham/spam",
        how_to_get: "the LIBSVM file and its vocabulary made by the repository's \
                     data/scripts/make_text.py (data/DATA.md)",
        feature_names: Some("text/spamassassin.vocab"),
        class_names: Some(["ham", "spam"]),
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
///
/// A file's format is, in order: the one given (`--format`), else the one its name says
/// ([`Format::from_path`]), else the one its content says ([`Format::sniff`]); see [`load_path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// CSV with a `label` column.
    Csv,
    /// LIBSVM / svmlight (`qid:` tokens after the label are ignored).
    Libsvm,
    /// MNIST IDX images (the labels file is found beside it).
    Idx,
}

impl Format {
    /// Every format, in the order [`Format::sniff`] tries them.
    pub const ALL: [Format; 3] = [Format::Idx, Format::Libsvm, Format::Csv];

    /// Its name as `--format` takes it: `csv`, `libsvm`, `idx`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Libsvm => "libsvm",
            Format::Idx => "idx",
        }
    }

    /// Guesses the format from a file name, after dropping a `.gz`, `.bz2` or `.xz` suffix:
    /// `*.csv`, `*.libsvm|*.svm|*.svmlight|*.txt`, `*idx3-ubyte`. `None` when the name says
    /// nothing (the content decides then: [`Format::sniff`]).
    pub fn from_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = strip_compression_suffix(&name);
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

    /// Recognises the format from a file's (decompressed) content:
    /// - IDX: the images magic `00 00 08 03` (unsigned bytes, 3 dimensions);
    /// - LIBSVM: the first line that is neither empty nor a `#` comment is a numeric label
    ///   followed only by `index:value` tokens (an integer index, a numeric value) and `qid:…`
    ///   tokens;
    /// - CSV: that line has a comma (a header such as `label,f1,f2`).
    ///
    /// `None` when none of these holds.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(&IDX_IMAGES_MAGIC) {
            return Some(Format::Idx);
        }
        let line = first_data_line(bytes)?;
        let line = line.split('#').next().unwrap_or("");
        let mut tokens = line.split_ascii_whitespace();
        let label = tokens.next()?;
        if label.parse::<f64>().is_ok_and(f64::is_finite) && tokens.all(is_libsvm_token) {
            return Some(Format::Libsvm);
        }
        // A header of `label` alone would be a CSV without features: not taken for one.
        line.contains(',').then_some(Format::Csv)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = Error;

    /// Parses `csv`, `libsvm` or `idx` (any case); anything else is an
    /// [`Error::InvalidParameter`] listing them.
    fn from_str(s: &str) -> Result<Self> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| Error::InvalidParameter {
                name: "format".into(),
                value: s.to_string(),
                expected: "one of csv, libsvm, idx".into(),
            })
    }
}

/// The magic of an IDX images file (unsigned bytes, 3 dimensions).
const IDX_IMAGES_MAGIC: [u8; 4] = [0, 0, 8, 3];
/// The magic of an IDX labels file (unsigned bytes, 1 dimension).
const IDX_LABELS_MAGIC: [u8; 4] = [0, 0, 8, 1];
/// Compression suffixes dropped from a file name before reading its format from it.
const COMPRESSION_SUFFIXES: [&str; 3] = [".gz", ".bz2", ".xz"];

fn strip_compression_suffix(name: &str) -> &str {
    COMPRESSION_SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name)
}

/// The first line of `bytes` that is neither blank nor a `#` comment (a UTF-8 byte-order mark
/// dropped), as lossy UTF-8; `None` if there is none.
fn first_data_line(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    bytes
        .split(|&b| b == b'\n')
        .map(String::from_utf8_lossy)
        .find(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
}

/// `index:value` with a positive integer index and a numeric value, or `qid:…` (the parser
/// checks the query id).
fn is_libsvm_token(tok: &str) -> bool {
    let Some((i, v)) = tok.split_once(':') else {
        return false;
    };
    i == "qid"
        || (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) && v.parse::<f64>().is_ok())
}

/// What the start of an unrecognised file looks like, for the error message: its first line
/// (shortened) if that is printable text, else its first bytes in hex.
fn describe_start(bytes: &[u8]) -> String {
    const SHOWN: usize = 64;
    let head = &bytes[..bytes.len().min(SHOWN)];
    let line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    let cut = line.len() == head.len() && bytes.len() > head.len();
    let text = match std::str::from_utf8(line) {
        Ok(s) => Some(s),
        // a character cut in two at the end of the shown bytes
        Err(e) if cut && e.error_len().is_none() => {
            std::str::from_utf8(&line[..e.valid_up_to()]).ok()
        }
        Err(_) => None,
    };
    match text {
        Some(s)
            if !s.trim().is_empty()
                && !s.chars().any(|c| c.is_control() && c != '\t' && c != '\r') =>
        {
            let ellipsis = if cut { "…" } else { "" };
            format!("starts with `{}{ellipsis}`", s.trim_end())
        }
        _ => {
            let hex: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
            format!("starts with the bytes {}", hex.join(" "))
        }
    }
}

/// The format of a file whose name said nothing: [`Format::sniff`] on its (decompressed)
/// content, else an error naming the file, what was tried and how to say the format.
fn sniff_or_explain(bytes: &[u8], raw_compression: Compression, source: &str) -> Result<Format> {
    if let Some(f) = Format::sniff(bytes) {
        return Ok(f);
    }
    let decompressed = match raw_compression {
        Compression::None => String::new(),
        c => format!(" after {} decompression", c.name()),
    };
    let message = if bytes.starts_with(&IDX_LABELS_MAGIC) {
        "this is an IDX labels file (magic 0x00000801): load the images file \
         (`*-images-idx3-ubyte`, magic 0x00000803) instead; its labels file is found beside it"
            .to_string()
    } else {
        format!(
            "unknown file format: neither the name (.csv, .libsvm/.svm/.svmlight/.txt or \
             *idx3-ubyte, each optionally .gz/.bz2/.xz) nor the content{decompressed} says which: \
             it is not IDX images (magic 00 00 08 03), LIBSVM (`label index:value …`) or CSV (a \
             header line with commas), it {}; pass --format csv|libsvm|idx to say which",
            describe_start(bytes)
        )
    };
    Err(Error::input(Location::source(source), message))
}

/// The IDX labels file for an images file: its name with `labels-idx1` in place of
/// `images-idx3`, as is or with its compression suffix changed (`.gz`, `.bz2`, `.xz` or none:
/// the content says the compression); an error naming what was expected when the name has no
/// `images-idx3` or no such file exists.
fn idx_labels_path(images: &Path, source: &str) -> Result<PathBuf> {
    let name = images
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains("images-idx3") {
        return Err(Error::input(
            Location::source(source),
            format!(
                "IDX images need their labels file beside them, named as the images file with \
                 `labels-idx1` in place of `images-idx3` (t10k-images-idx3-ubyte → \
                 t10k-labels-idx1-ubyte), but `{name}` has no `images-idx3`: name the pair \
                 NAME-images-idx3-ubyte and NAME-labels-idx1-ubyte (optionally .gz/.bz2/.xz)"
            ),
        ));
    }
    let labels = name.replace("images-idx3", "labels-idx1");
    let stem = strip_compression_suffix(&labels);
    let others = std::iter::once(stem.to_string())
        .chain(COMPRESSION_SUFFIXES.iter().map(|s| format!("{stem}{s}")));
    if let Some(found) = std::iter::once(labels.clone())
        .chain(others.filter(|c| *c != labels))
        .map(|c| images.with_file_name(c))
        .find(|p| p.is_file())
    {
        return Ok(found);
    }
    Err(Error::NotFound {
        path: images.with_file_name(&labels),
        hint: format!(
            "the IDX labels file must sit beside the images file; looked for {stem} with and \
             without .gz/.bz2/.xz"
        ),
    })
}

/// Loads a file. Its format is `format` when given, else the one its name says
/// ([`Format::from_path`]), else the one its content says ([`Format::sniff`]); gzip, bzip2 and xz
/// are decompressed whatever the name ([`crate::read::decode`]). An IDX images file's labels
/// file is found beside it (`…images-idx3…` → `…labels-idx1…`). When a format taken from the name
/// does not parse and the content looks like another one, the error says so. A missing CSV cell
/// is an error ([`load_path_with`] reads them).
pub fn load_path(path: &Path, format: Option<Format>) -> Result<Dataset> {
    load_path_with(
        path,
        &ReadOptions {
            format,
            ..ReadOptions::default()
        },
    )
}

/// [`load_path`] with [`ReadOptions`]: the format (else from the name, else from the content),
/// the missing-value tokens and policy of CSV files.
pub fn load_path_with(path: &Path, options: &ReadOptions) -> Result<Dataset> {
    let source = path.display().to_string();
    if !path.exists() {
        return Err(Error::NotFound {
            path: path.to_path_buf(),
            hint: "no such file".into(),
        });
    }
    let input = open(path, options.max_line_bytes)?;
    load_input(input, path, &source, options)
}

/// Loads CSV or LIBSVM data from bytes in memory (plain, gzip, bzip2 or xz), as [`load_path_with`]
/// reads a file named `source`: the format from `options`, else the name, else the content. IDX
/// images need their labels file beside them, so they are read from a path only.
pub fn load_bytes(bytes: &[u8], source: &str, options: &ReadOptions) -> Result<Dataset> {
    let input = crate::read::open_stream(
        std::io::Cursor::new(bytes.to_vec()),
        source,
        options.max_line_bytes,
    )?;
    load_input(input, Path::new(source), source, options)
}

/// The rest of [`load_path_with`] once the input is open.
fn load_input(
    input: crate::read::Input,
    path: &Path,
    source: &str,
    options: &ReadOptions,
) -> Result<Dataset> {
    let format = options.format;
    let source = source.to_string();
    // the format is told from the first lines; a line cut at the end of the head is left out
    let mut head = input.head.clone();
    if !input.complete
        && let Some(end) = head.iter().rposition(|&b| b == b'\n')
    {
        head.truncate(end + 1);
    }
    let (format, from_name) = match format {
        Some(f) => (f, false),
        None => match Format::from_path(path) {
            Some(f) => (f, true),
            None => (sniff_or_explain(&head, input.compression, &source)?, false),
        },
    };
    let compression = input.compression;
    let parsed = match format {
        Format::Csv => csvfile::read_csv(input.reader, compression, &source, options),
        Format::Libsvm => libsvm::read_libsvm(
            input.reader,
            compression,
            &source,
            None,
            options.max_line_bytes,
        ),
        Format::Idx => {
            let labels = idx_labels_path(path, &source)?;
            let labels_source = labels.display().to_string();
            let images = idx::read_idx_bytes(input.reader, &source, 3)?;
            let labels = idx::read_idx_bytes(
                open(&labels, options.max_line_bytes)?.reader,
                &labels_source,
                1,
            )?;
            idx::parse_idx(&images, &source, &labels, &labels_source)
        }
    };
    parsed.map_err(|e| match e {
        Error::Input { location, message } if from_name => {
            let hint = Format::sniff(&head)
                .filter(|&f| f != format)
                .map(|f| {
                    format!(
                        " (the name says {format} but the content looks like {f}: pass --format {f})"
                    )
                })
                .unwrap_or_default();
            Error::Input {
                location,
                message: message + &hint,
            }
        }
        e => e,
    })
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
/// policy), reporting the records the policy `drop` left out. A built-in name is read from the
/// data directory ([`resolve_data_dir`]), `wdbc` and `spambase` from their embedded copies
/// unless a directory given by `--data-dir` or `BULWARK_DATA` holds the file; anything else is a
/// path ([`load_path_with`]).
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

/// Gives a built-in set loaded from its file the names its registry entry declares: the
/// features' from the [`Builtin::feature_names`] file in the same data directory (one per line;
/// a missing file is [`Error::NotFound`], a count that differs from the columns an input error
/// naming both), the classes' from [`Builtin::class_names`].
fn name_features_and_classes(d: Dataset, b: &Builtin, dir: Option<&DataDir>) -> Result<Dataset> {
    let d = match b.feature_names {
        None => d,
        Some(rel) => {
            let path = dir.map(|dd| dd.path.join(rel)).filter(|p| p.is_file());
            let Some(path) = path else {
                return Err(not_found(
                    &[rel],
                    &format!("the feature names of `{}`", b.name),
                    b.how_to_get,
                    dir,
                ));
            };
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let names: Vec<String> = text.lines().map(str::to_string).collect();
            if names.len() != d.n_features() {
                return Err(Error::input(
                    Location::source(path.display().to_string()),
                    format!(
                        "{} feature names (one per line) for the {} features of `{}` ({})",
                        names.len(),
                        d.n_features(),
                        b.name,
                        b.files[0]
                    ),
                ));
            }
            d.with_feature_names(names)?
        }
    };
    match b.class_names {
        Some(names) if d.is_binary() => {
            d.with_class_names(names.iter().map(|s| s.to_string()).collect())
        }
        Some(_) => Err(Error::input(
            Location::source(b.files[0]),
            format!("`{}` should have two classes, -1 and +1", b.name),
        )),
        None => Ok(d),
    }
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
            let d = name_features_and_classes(d, b, dir.as_ref())?;
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
