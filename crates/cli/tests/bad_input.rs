//! Runs the bad-input corpus `tests/bad-input/cases.txt` (see its header for the format and the
//! rules every case must meet) against the `bulwark` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The address-space limit every case runs under (`ulimit -v`, KiB): 4 GB.
const ADDRESS_SPACE_KIB: u64 = 4_000_000;
/// The time every case must end within.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Runs `bulwark args` under [`ADDRESS_SPACE_KIB`] (through `sh`, so an allocation sized by a
/// declared number fails fast instead of taking the machine's memory) and kills it after
/// [`TIME_LIMIT`]; `None` when it had to be killed.
fn run_limited(args: &[String]) -> Option<Output> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_bulwark"))
        .args(args)
        .env_remove("BULWARK_DATA")
        .env_remove("BULWARK_MEMORY_LIMIT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bulwark");
    // drain the pipes while waiting (a full pipe would stall the child)
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).ok();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).ok();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().expect("stdout"), err.join().expect("stderr"));
    status.map(|status| Output {
        status,
        stdout,
        stderr,
    })
}

struct Case {
    line: usize,
    name: String,
    expect: String,
    args: Vec<String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/bad-input")
}

fn parse(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.splitn(3, '|').map(str::trim).collect();
        assert_eq!(
            parts.len(),
            3,
            "cases.txt:{}: expected `name | stderr text | arguments`",
            k + 1
        );
        assert!(
            !parts[1].is_empty(),
            "cases.txt:{}: empty expectation",
            k + 1
        );
        cases.push(Case {
            line: k + 1,
            name: parts[0].to_string(),
            expect: parts[1].to_string(),
            args: parts[2].split_whitespace().map(String::from).collect(),
        });
    }
    cases
}

#[test]
fn every_bad_input_fails_cleanly() {
    let corpus = corpus_dir();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(corpus.join("cases.txt")).expect("read cases.txt");
    let cases = parse(&text);
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), cases.len(), "case names must be unique");

    let root = std::env::temp_dir().join(format!("bulwark-bad-input-{}", std::process::id()));
    let mut failures = Vec::new();
    for case in &cases {
        let tmp = root.join(&case.name);
        std::fs::create_dir_all(&tmp).unwrap();
        let args: Vec<String> = case
            .args
            .iter()
            .map(|a| {
                a.replace("{corpus}", &corpus.display().to_string())
                    .replace("{fixtures}", &fixtures.display().to_string())
                    .replace("{tmp}", &tmp.display().to_string())
            })
            .collect();
        let Some(o) = run_limited(&args) else {
            failures.push(format!(
                "cases.txt:{} {}: still running after {} s",
                case.line,
                case.name,
                TIME_LIMIT.as_secs()
            ));
            continue;
        };
        let err = String::from_utf8_lossy(&o.stderr);
        let mut problems = Vec::new();
        if let Some(expect) = case.expect.strip_prefix("ok: ") {
            let out = String::from_utf8_lossy(&o.stdout);
            if o.status.code() != Some(0) {
                problems.push(format!("exit status {:?}, expected 0", o.status.code()));
            }
            if !out.contains(expect) {
                problems.push(format!("stdout lacks `{expect}`"));
            }
            if !err.is_empty() {
                problems.push("wrote to stderr".into());
            }
            if !problems.is_empty() {
                failures.push(format!(
                    "cases.txt:{} {}: {}\n    stdout: {}\n    stderr: {}",
                    case.line,
                    case.name,
                    problems.join("; "),
                    out.trim_end(),
                    err.trim_end()
                ));
            }
            continue;
        }
        if o.status.code() != Some(2) {
            problems.push(format!("exit status {:?}, expected 2", o.status.code()));
        }
        if !err.starts_with("error: ") {
            problems.push("stderr does not start with `error: `".into());
        }
        if !err.contains(&case.expect) {
            problems.push(format!("stderr lacks `{}`", case.expect));
        }
        if err.contains("panicked") {
            problems.push("panicked".into());
        }
        // our own errors are one line; the argument parser's usage errors add a usage hint
        if !err.contains("Usage:") && !err.contains("--help") && err.trim_end().lines().count() != 1
        {
            problems.push("more than one line on stderr".into());
        }
        // every part of the message once: no `A: A` (an error and its cause saying the same)
        let parts: Vec<&str> = err.trim_end().split(": ").collect();
        if let Some(w) = parts.windows(2).find(|w| w[0] == w[1]) {
            problems.push(format!("says `{}` twice in a row", w[0]));
        }
        if !o.stdout.is_empty() {
            problems.push(format!(
                "wrote to stdout: {}",
                String::from_utf8_lossy(&o.stdout)
            ));
        }
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        if !left.is_empty() {
            problems.push(format!("left files behind: {left:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "cases.txt:{} {}: {}\n    stderr: {}",
                case.line,
                case.name,
                problems.join("; "),
                err.trim_end()
            ));
        }
    }
    std::fs::remove_dir_all(&root).ok();
    assert!(
        failures.is_empty(),
        "{} of {} bad-input cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
