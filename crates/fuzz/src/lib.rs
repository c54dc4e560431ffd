#![doc = include_str!("../README.md")]

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bulwark_data::{Format, MissingPolicy, ReadOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The largest input the mutator makes (64 KiB): readers are fuzzed for their logic, and a
/// small input shows any allocation sized by a declared number at once.
pub const MAX_INPUT: usize = 64 << 10;

/// One reader under test.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Its name (`--target`), also the folder of its seeds under `corpus/`.
    pub name: &'static str,
    /// Hands the bytes to the reader; returns the outcome's signature (see [`signature`]).
    pub run: fn(&[u8]) -> String,
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "csv",
        run: csv,
    },
    Target {
        name: "libsvm",
        run: libsvm,
    },
    Target {
        name: "idx",
        run: idx,
    },
    Target {
        name: "mps",
        run: mps,
    },
    Target {
        name: "model-json",
        run: model_json,
    },
    Target {
        name: "model-bin",
        run: model_bin,
    },
    Target {
        name: "values",
        run: values,
    },
];

/// The target named `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// What an outcome looks like with its particulars taken out: `ok`, or the first six words of
/// the error's text that are made of letters only (at least three), up to the first quote or
/// backtick (where the readers quote the input). Two inputs with the same signature took, as far
/// as the fuzzer can tell, the same path; a new signature keeps its input in the corpus.
pub fn signature<T, E: std::fmt::Display>(r: &Result<T, E>) -> String {
    let Err(e) = r else {
        return "ok".into();
    };
    let text = e.to_string();
    let plain = text.split(['`', '"', '\'']).next().unwrap_or("");
    plain
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3)
        .take(6)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The most inputs a run keeps for new outcomes (the corpus stays small enough to pick from).
pub const MAX_KEPT: usize = 4096;

/// Options of the text targets: a 1 MiB line limit (inputs are at most [`MAX_INPUT`], so only
/// compressed input reaches it), missing cells kept as deleted features.
fn text_options(format: Format) -> ReadOptions {
    ReadOptions {
        format: Some(format),
        missing: MissingPolicy::Delete,
        max_line_bytes: 1 << 20,
        ..ReadOptions::default()
    }
}

/// A text file of `format` through the whole path of a file (compression, the line limit).
fn text(bytes: &[u8], name: &str, format: Format) -> String {
    let _ = Format::sniff(bytes);
    signature(&bulwark_data::load_bytes(
        bytes,
        name,
        &text_options(format),
    ))
}

fn csv(bytes: &[u8]) -> String {
    text(bytes, "fuzz.csv", Format::Csv)
}

fn libsvm(bytes: &[u8]) -> String {
    text(bytes, "fuzz.svm", Format::Libsvm)
}

/// The first two bytes say where the images file ends and the labels file starts.
fn idx(bytes: &[u8]) -> String {
    if bytes.len() < 2 {
        return "short".into();
    }
    let rest = &bytes[2..];
    let split = usize::from(u16::from_le_bytes([bytes[0], bytes[1]])).min(rest.len());
    let (images, labels) = rest.split_at(split);
    let read = |b: &[u8], dims| bulwark_data::idx::read_idx_bytes(b, "fuzz", dims);
    let r = read(images, 3).and_then(|i| {
        let l = read(labels, 1)?;
        bulwark_data::parse_idx(&i, "images", &l, "labels")
    });
    signature(&r)
}

fn mps(bytes: &[u8]) -> String {
    signature(&bulwark_lp::mps::parse_mps(bytes))
}

fn model(bytes: &[u8], name: &str) -> String {
    let path = Path::new(name);
    let r = bulwark_models::ModelFile::decode(bytes, path).and_then(|f| {
        let m = f.validate(path)?;
        // a valid file encodes again (both encodings)
        for e in [
            bulwark_models::Encoding::Json,
            bulwark_models::Encoding::Binary,
        ] {
            f.encode(e)?;
        }
        Ok(m)
    });
    signature(&r)
}

fn model_json(bytes: &[u8]) -> String {
    model(bytes, "fuzz.json")
}

fn model_bin(bytes: &[u8]) -> String {
    model(bytes, "fuzz.bin")
}

fn values(bytes: &[u8]) -> String {
    signature(&bulwark_models::values::read_values(
        bytes,
        "values.txt",
        30,
    ))
}

/// Text that readers give meaning to, inserted or written over the input.
const TOKENS: &[&[u8]] = &[
    b",",
    b"\n",
    b"\r\n",
    b":",
    b" ",
    b"#",
    b"\"",
    b"label",
    b"qid:",
    b"NA",
    b"?",
    b"NaN",
    b"1:",
    b"-1 ",
    b"+1 ",
    b"ROWS",
    b"COLUMNS",
    b"RHS",
    b"RANGES",
    b"BOUNDS",
    b"ENDATA",
    b" N ",
    b" E ",
    b" L ",
    b" G ",
    b" UP ",
    b" FR ",
    b"MARKER",
    b"OBJSENSE",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"weights\"",
    b"\"n_features\"",
    b"\"format_version\"",
    b"\"model\"",
    b"null",
    b"true",
    b"\x1f\x8b",
    b"BZh9",
    b"\xfd7zXZ\x00",
    b"BULWARK\x00",
    b"\x00\x00\x08\x03",
    b"\x00\x00\x08\x01",
];

/// Numbers at the edges of every integer and float type, as text.
const TEXT_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "2000000000",
    "1e308",
    "1e999",
    "-1e999",
    "NaN",
    "inf",
    "-0",
    "1e-320",
    "0x10",
];

/// Mutations of a seeded stream: the same seed gives the same inputs.
#[derive(Debug)]
pub struct Mutator {
    rng: ChaCha8Rng,
}

impl Mutator {
    /// A mutator drawing from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A random index below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// One to four mutations of `input`; `other` is a corpus entry to splice from.
    pub fn mutate(&mut self, input: &mut Vec<u8>, other: &[u8]) {
        let rounds = 1 + self.below(4);
        for _ in 0..rounds {
            self.once(input, other);
        }
        input.truncate(MAX_INPUT);
    }

    fn once(&mut self, v: &mut Vec<u8>, other: &[u8]) {
        let len = v.len();
        let at = if len == 0 { 0 } else { self.below(len) };
        match self.below(12) {
            // flip a bit
            0 if len > 0 => v[at] ^= 1 << self.below(8),
            // a random byte
            1 if len > 0 => v[at] = self.rng.random(),
            // insert random bytes
            2 => {
                let k = 1 + self.below(8);
                let bytes: Vec<u8> = (0..k).map(|_| self.rng.random()).collect();
                v.splice(at..at, bytes);
            }
            // delete a range
            3 if len > 0 => {
                let k = 1 + self.below((len - at).min(64));
                v.drain(at..at + k);
            }
            // duplicate a range
            4 if len > 0 => {
                let k = 1 + self.below((len - at).min(256));
                let piece = v[at..at + k].to_vec();
                let to = self.below(len + 1);
                v.splice(to..to, piece);
            }
            // splice in part of another input
            5 if !other.is_empty() => {
                let from = self.below(other.len());
                let k = 1 + self.below((other.len() - from).min(512));
                let piece = other[from..from + k].to_vec();
                if self.rng.random() {
                    v.splice(at..at, piece);
                } else {
                    let end = (at + k).min(len);
                    v.splice(at..end, piece);
                }
            }
            // truncate
            6 if len > 0 => v.truncate(at),
            // a boundary number in place of a run of digits (or inserted)
            7 => {
                let n = TEXT_NUMBERS[self.below(TEXT_NUMBERS.len())].as_bytes();
                let end = (at..len).find(|&k| !v[k].is_ascii_digit()).unwrap_or(len);
                if end > at {
                    v.splice(at..end, n.iter().copied());
                } else {
                    v.splice(at..at, n.iter().copied());
                }
            }
            // a boundary integer in binary, little or big endian
            8 if len > 0 => {
                let width = [1usize, 2, 4, 8][self.below(4)];
                let value: u64 = match self.below(5) {
                    0 => 0,
                    1 => u64::MAX,
                    2 => u64::MAX >> 1,
                    3 => 1 << 63,
                    _ => 1 << (8 * width as u64 - 1).min(40),
                };
                let bytes = if self.rng.random() {
                    value.to_le_bytes()[..width].to_vec()
                } else {
                    value.to_be_bytes()[8 - width..].to_vec()
                };
                let end = (at + width).min(len);
                v.splice(at..end, bytes);
            }
            // a length prefix that lies: the LEB128 varint of 2^40 (postcard's lengths)
            9 => {
                let lie = [0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
                let end = if len > at && self.rng.random() {
                    at + 1
                } else {
                    at
                };
                v.splice(at..end, lie);
            }
            // a token the formats give meaning to
            _ => {
                let t = TOKENS[self.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
        }
    }
}

/// Reads every file of `dir` (sorted by name) as an input; none when it does not exist.
pub fn read_dir(dir: &Path) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut files = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(e),
    };
    for e in entries {
        let p = e?.path();
        if p.is_file() {
            let bytes = std::fs::read(&p)?;
            files.push((p, bytes));
        }
    }
    files.sort();
    Ok(files)
}

/// A crash: the input and what happened.
#[derive(Debug, Clone)]
pub struct Crash {
    /// The input.
    pub input: Vec<u8>,
    /// The panic's message.
    pub message: String,
}

/// Runs `target` on `input`, catching a panic as a [`Crash`].
pub fn run_one(target: &Target, input: &[u8]) -> Result<String, Crash> {
    catch_unwind(AssertUnwindSafe(|| (target.run)(input))).map_err(|p| Crash {
        input: input.to_vec(),
        message: p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_else(|| "a panic without a message".into()),
    })
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Inputs run.
    pub executions: u64,
    /// Seconds it took.
    pub seconds: f64,
    /// Corpus entries at the end (seeds plus the inputs kept for a new outcome).
    pub corpus: usize,
    /// Distinct outcomes seen.
    pub outcomes: usize,
    /// Inputs kept in this run (new outcomes).
    pub kept: Vec<Vec<u8>>,
}

/// The mutation loop of one target.
#[derive(Debug)]
pub struct Fuzzer<'a> {
    target: &'a Target,
    corpus: Vec<Vec<u8>>,
    seen: HashSet<String>,
    mutator: Mutator,
}

impl<'a> Fuzzer<'a> {
    /// A fuzzer of `target` from `seeds` (an empty input is added), drawing from `seed`.
    pub fn new(target: &'a Target, seeds: Vec<Vec<u8>>, seed: u64) -> Self {
        let mut corpus = seeds;
        corpus.push(Vec::new());
        Self {
            target,
            corpus,
            seen: HashSet::new(),
            mutator: Mutator::new(seed),
        }
    }

    /// Runs every corpus entry once, then mutated inputs until `budget` has passed; `before`
    /// is called with each input before it runs (the binary stores it for its crash handler).
    /// The first crash ends the run.
    pub fn run(&mut self, budget: Duration, mut before: impl FnMut(&[u8])) -> Result<Stats, Crash> {
        let start = Instant::now();
        let mut stats = Stats::default();
        for k in 0..self.corpus.len() {
            let input = self.corpus[k].clone();
            before(&input);
            let sig = run_one(self.target, &input)?;
            self.seen.insert(sig);
            stats.executions += 1;
        }
        let mut input = Vec::new();
        while start.elapsed() < budget {
            // a batch between clock reads
            for _ in 0..64 {
                let a = self.mutator.below(self.corpus.len());
                let b = self.mutator.below(self.corpus.len());
                input.clear();
                input.extend_from_slice(&self.corpus[a]);
                let other = std::mem::take(&mut self.corpus[b]);
                self.mutator.mutate(&mut input, &other);
                self.corpus[b] = other;
                before(&input);
                let sig = run_one(self.target, &input)?;
                stats.executions += 1;
                if self.seen.insert(sig) && stats.kept.len() < MAX_KEPT {
                    self.corpus.push(input.clone());
                    stats.kept.push(input.clone());
                }
            }
        }
        stats.seconds = start.elapsed().as_secs_f64();
        stats.corpus = self.corpus.len();
        stats.outcomes = self.seen.len();
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_drop_the_numbers() {
        let e: Result<(), String> = Err("f.csv:12:3: found 4 fields, not `abc`".into());
        assert_eq!(signature(&e), "csv found fields not");
        let e: Result<(), String> = Err("bad token `x y z` at the end".into());
        assert_eq!(signature(&e), "bad token");
        assert_eq!(signature(&Ok::<(), String>(())), "ok");
    }

    #[test]
    fn mutations_are_reproducible_and_bounded() {
        let run = |seed| {
            let mut m = Mutator::new(seed);
            let mut v = b"label,a\n1,2\n".to_vec();
            for _ in 0..1000 {
                m.mutate(&mut v, b"+1 1:0.5 2:1\n");
            }
            v
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        assert!(run(5).len() <= MAX_INPUT);
    }

    #[test]
    fn every_target_has_seeds_and_runs_them() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        for t in TARGETS {
            let seeds = read_dir(&root.join(t.name)).unwrap();
            assert!(!seeds.is_empty(), "no seeds for {}", t.name);
            let ok = seeds
                .iter()
                .filter(|(_, s)| run_one(t, s).expect("no crash") == "ok")
                .count();
            assert!(ok > 0, "no seed of {} reads", t.name);
        }
    }
}
