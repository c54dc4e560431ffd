//! `cargo xtask bench lp`: the DSX LP (4) benchmark of issue 5, written to `docs/perf.md`.
//!
//! Cases, each solved by our structured interior-point method (`bulwark-deletion`'s
//! `lp_bench` example, best and median of three solves) on one thread and on every core:
//!
//! 1. `spambase`: the real UCI spambase (embedded, 4601 × 57), so no claim rests on synthetic
//!    data alone;
//! 2. `dense-1000x100`: synthetic, dense;
//! 3. `mnist-like-10000x784`: synthetic, 19 % non-zeros, with time per IPM iteration against one
//!    dense `XᵀDX` product of the same shape measured in the same process, and peak RSS
//!    (`--no-mnist` skips it);
//! 4. issue 20's real image cases, on every core, no peer (HiGHS's IPM had not finished a
//!    400-image slice of the first after 20 minutes): Fashion-MNIST T-shirt vs shirt (12 000 ×
//!    784) and T-shirt against the other nine classes (60 000 × 784), N = 50, C = 1, min-max
//!    scaling, from Debian's `dataset-fashion-mnist` (installed as for `bench sweep`;
//!    `--no-fashion` skips them): iterations, time, peak RSS and the solver that answered; the
//!    second also with example screening at the defaults of `bulwark train` (the other cases
//!    without it).
//!
//! Peers on the identical LP (the runner writes it as MPS): HiGHS's IPM (Python `highspy`, one
//! thread, no crossover; installed into `target/bench/venv` when `python3` lacks it;
//! `--no-highs` skips it) on the first two cases; Clarabel (the `bulwark-lp` dev-dependency,
//! default settings) on the first two, and with `--clarabel` on the MNIST-like one too
//! (10–20 minutes).
//!
//! **Equal threads.** Every ratio against a peer compares ours on one thread with the peer on
//! one thread. Our time on every core is reported beside it, and its ratio to a one-thread peer
//! is labelled as unequal threads. The CPU time over wall time of each solve is measured, so
//! the thread counts are checked, not assumed.
//!
//! **Nothing typed by hand.** Every number and fact in `docs/perf.md` comes from this run: the
//! runners' JSON (data, shape, budget, box, solver that answered, times), `Cargo.lock` (the
//! Clarabel version and its linear solver), `/proc/cpuinfo`, the clock and `git`. The only
//! constants are issue 5's targets, written as targets.
//!
//! Each case runs in its own process so the peak RSS is that case's. Each timed row also gives
//! the share of CPU time the hypervisor stole during the solves (`/proc/stat`): on a shared VM
//! the same binary's time varies by ±30 % and more, which is why every ratio is same-run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::project_root;

/// The `highspy` version installed when `python3` has none (pinned so runs compare).
const HIGHSPY_VERSION: &str = "1.15.1";
/// Solves of each LP by our solver and by each peer on the small cases; the report gives the
/// median (and our best).
const REPEAT: usize = 3;
/// Issue 5's targets (targets, not measurements).
const TARGET_OVER_HIGHS: f64 = 100.0;
const TARGET_SECONDS_MNIST: f64 = 10.0;
const ISSUE_CLARABEL_SECONDS_MNIST: f64 = 631.0;
const TARGET_RSS_MIB: f64 = 1024.0;
const TARGET_ITERATION_OVER_XTDX: f64 = 4.0;
/// Issue 20's targets for the real cases: (case, iterations, seconds, peak RSS in MiB).
const REAL_TARGETS: [(&str, Option<f64>, f64, f64); 3] = [
    ("fashion-0v6", Some(60.0), 30.0, 1024.0),
    ("fashion-0-vs-rest", None, 180.0, 3072.0),
    // the same LP with example screening (`lp_bench` names its settings in `data`)
    ("fashion-0-vs-rest-screened", None, 180.0, 3072.0),
];
/// Issue 20's memory target: peak RSS at most this many times the dense f64 size of the input.
const TARGET_RSS_OVER_DENSE: f64 = 10.0;
/// Wall-clock limit of each solver attempt on the real cases, in seconds (a fallback solver on
/// these LPs can take hours: the case is then reported as not solved within it).
const REAL_TIME_LIMIT: f64 = 1800.0;

/// The peers' time limit (HiGHS's and Clarabel's own) on every case but the large text one, in
/// seconds.
const PEER_TIME_LIMIT: f64 = 600.0;
/// Issue 61's limits for the 20 000 × 100 000 text case: our memory limit (MiB) and time limit
/// (s); the issue's target is an answer within them or its typed error within
/// `TEXT_ERROR_SECONDS`.
const TEXT_LIMITS: (u64, f64) = (4096, 600.0);
const TEXT_ERROR_SECONDS: f64 = 10.0;
/// Issue 61's memory target on `sparse-2000x20000-0.005` (MiB).
const TEXT_SPARSE_RSS_MIB: f64 = 1024.0;

const USAGE: &str = "usage: cargo xtask bench lp [--no-highs] [--no-mnist] [--no-fashion] [--no-text] [--clarabel]\n       cargo xtask bench sweep [--no-fashion]";

/// One case of the benchmark.
struct Case {
    name: &'static str,
    /// Whether the data are real (reported beside the synthetic cases).
    real: bool,
    highs: bool,
    clarabel: bool,
    /// Our solves per run and the peers' solves.
    repeat: usize,
    peer_repeat: usize,
    /// Our structured IPM's memory limit (MiB) and each attempt's time limit (s), when the case
    /// sets them (the text case beyond the dense methods' reach: `TEXT_LIMITS`).
    limits: Option<(u64, f64)>,
    /// Example screening at its defaults, as `bulwark train` runs it (otherwise off).
    screening: bool,
    /// The peers' time limit (s): HiGHS's `time_limit` option and Clarabel's.
    peer_time_limit: f64,
}

/// What one solver reported on one case (one JSON line, see the runners).
#[derive(Debug, Clone)]
struct Run {
    json: String,
}

impl Run {
    fn num(&self, key: &str) -> f64 {
        num(&self.json, key)
    }
    fn text(&self, key: &str) -> String {
        text(&self.json, key).unwrap_or_default()
    }
}

/// A peer's runs on one case (or why it did not run).
enum Peer {
    Ran {
        label: String,
        runs: Vec<Run>,
        cpu_per_wall: f64,
    },
    NotRun(String),
}

/// Our solver on `case` (`repeat` solves on `threads` threads); `fashion`: the folder of
/// Fashion-MNIST's IDX files, for the real image cases (the fallback chain stays on, as a user
/// runs it; the report names the solver that answered).
fn run_ours(
    root: &Path,
    case: &str,
    threads: usize,
    repeat: usize,
    fashion: Option<&Path>,
    settings: Option<&Case>,
) -> Result<Run, String> {
    let out = root
        .join("target/bench")
        .join(format!("{case}-t{threads}.json"));
    let mut cmd = Command::new(cargo());
    cmd.args(["run", "--quiet", "--release", "-p", "bulwark-deletion"])
        .args(["--example", "lp_bench", "--", case])
        .arg(&out)
        .env("RAYON_NUM_THREADS", threads.to_string())
        // best and median of `repeat` solves (the machine may be shared)
        .env("LP_BENCH_REPEAT", repeat.to_string())
        .current_dir(root);
    // the real cases keep their iteration log, so a run that dies says how far it got
    let log = root
        .join("target/bench")
        .join(format!("{case}-t{threads}.log"));
    if let Some(c) = settings {
        if let Some((mib, seconds)) = c.limits {
            cmd.env("LP_BENCH_MEMORY_LIMIT_MIB", mib.to_string())
                .env("LP_BENCH_TIME_LIMIT", seconds.to_string());
        }
        if c.screening {
            cmd.env("LP_BENCH_SCREENING", "1");
        }
    }
    if let Some(dir) = fashion {
        let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.env("LP_BENCH_FASHION", dir.join("train-images-idx3-ubyte.gz"))
            .env("LP_BENCH_TIME_LIMIT", REAL_TIME_LIMIT.to_string())
            .env("LP_BENCH_LOG", "1")
            .stderr(file);
    }
    println!("running ours on {case}, {threads} thread(s) …");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run the bench runner: {e}"))?;
    if !status.success() {
        let progress = match fashion {
            Some(_) => std::fs::read_to_string(&log)
                .ok()
                .map(|text| how_far(&text))
                .unwrap_or_default(),
            None => String::new(),
        };
        return Err(format!(
            "bench runner failed on {case} ({status}){progress}"
        ));
    }
    let json = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(Run { json })
}

/// How far a runner's iteration log got: the solvers started (each log restarts at iteration 0)
/// and the last iteration line.
fn how_far(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.trim_start()
                .split(' ')
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect();
    let solvers = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("0 "))
        .count();
    match lines.last() {
        Some(last) => format!(
            "; {solvers} solver(s) started, the last iteration logged: `{}`",
            last.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        None => String::new(),
    }
}

pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The files of a benchmark that keeps its results: the runs append to
/// `target/bench/NAME.jsonl`, and the page `docs/perf-NAME.md` is rendered from it (again with
/// `--render-only`).
pub(crate) struct BenchFiles {
    name: &'static str,
    /// `target/bench` (created).
    pub(crate) dir: PathBuf,
    /// `target/bench/NAME.jsonl`.
    pub(crate) results: PathBuf,
    page: PathBuf,
}

impl BenchFiles {
    pub(crate) fn new(root: &Path, name: &'static str) -> Result<Self, String> {
        let dir = root.join("target/bench");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Self {
            name,
            results: dir.join(format!("{name}.jsonl")),
            page: root.join(format!("docs/perf-{name}.md")),
            dir,
        })
    }

    /// The results the runs wrote (for `--render-only`: those of the last run).
    pub(crate) fn results(&self) -> Result<String, String> {
        std::fs::read_to_string(&self.results).map_err(|e| {
            format!(
                "{}: {e} (run `cargo xtask bench {}` first)",
                self.results.display(),
                self.name
            )
        })
    }

    /// Writes the page.
    pub(crate) fn write_page(&self, page: &str) -> Result<(), String> {
        std::fs::write(&self.page, page).map_err(|e| format!("{}: {e}", self.page.display()))?;
        println!("wrote {}", self.page.display());
        Ok(())
    }
}

/// `cargo run --quiet --release -p PACKAGE --example EXAMPLE --` from the project root with one
/// rayon thread: a single-threaded benchmark runner, its own arguments still to add.
pub(crate) fn one_thread_runner(root: &Path, package: &str, example: &str) -> Command {
    let mut cmd = Command::new(cargo());
    cmd.args(["run", "--quiet", "--release", "-p", package])
        .args(["--example", example, "--"])
        .env("RAYON_NUM_THREADS", "1")
        .current_dir(root);
    cmd
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// Writes `case`'s LP as MPS (the peers' input) without solving it.
fn write_mps(root: &Path, case: &str, mps: &Path) -> Result<(), String> {
    println!("writing {case} as MPS …");
    let status = Command::new(cargo())
        .args(["run", "--quiet", "--release", "-p", "bulwark-deletion"])
        .args(["--example", "lp_bench", "--", case])
        .arg(root.join("target/bench/mps-only.json"))
        .arg(mps)
        .env("LP_BENCH_MPS_ONLY", "1")
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run the bench runner: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("writing {} failed ({status})", mps.display()))
    }
}

fn python_has(python: &Path, module: &str) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A Python interpreter that imports `module`: `python3` if it does, else a virtual environment
/// in `target/bench/VENV`, created and filled (`pip install PACKAGE==VERSION`) on first use.
pub(crate) fn python_with(
    root: &Path,
    module: &str,
    package: &str,
    version: &str,
    venv: &str,
) -> Result<PathBuf, String> {
    let system = PathBuf::from("python3");
    if python_has(&system, module) {
        return Ok(system);
    }
    let venv = root.join("target/bench").join(venv);
    let python = venv.join("bin/python");
    if !python_has(&python, module) {
        println!("installing {package} {version} into {} …", venv.display());
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(&python)
                .args(["-m", "pip", "install", "--quiet"])
                .arg(format!("{package}=={version}"))
                .status()
                .is_ok_and(|s| s.success());
        if !ok || !python_has(&python, module) {
            return Err(format!(
                "{package} is not installed and `pip install {package}=={version}` into {} failed",
                venv.display()
            ));
        }
    }
    Ok(python)
}

/// A Python interpreter with `highspy` (virtual environment `target/bench/venv`).
fn highs_python(root: &Path) -> Result<PathBuf, String> {
    python_with(root, "highspy", "highspy", HIGHSPY_VERSION, "venv")
}

fn run_highs(root: &Path, python: &Path, mps: &Path, repeat: usize, time_limit: f64) -> Peer {
    let mut runs = Vec::new();
    for k in 0..repeat {
        println!(
            "running HiGHS (IPM, 1 thread) on {}, {}/{repeat} …",
            mps.display(),
            k + 1
        );
        let out = Command::new(python)
            .arg(root.join("xtask/scripts/highs_lp.py"))
            .arg(mps)
            .arg(time_limit.to_string())
            .output();
        let s = match out {
            Ok(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Err(e) => return Peer::NotRun(format!("cannot run {}: {e}", python.display())),
        };
        if s.is_empty() || text(&s, "error").is_some() {
            return Peer::NotRun(text(&s, "error").unwrap_or_else(|| "no output".into()));
        }
        runs.push(Run { json: s });
    }
    let first = &runs[0];
    let label = format!(
        "HiGHS {} (highspy): IPM, no crossover, threads option {}, time limit {time_limit:.0} s",
        first.text("version"),
        first.num("threads")
    );
    let cpu_per_wall = median(runs.iter().map(|r| r.num("cpu_per_wall")).collect());
    Peer::Ran {
        label,
        runs,
        cpu_per_wall,
    }
}

/// Clarabel's version and its linear solver, read from `Cargo.lock`: without its `faer`
/// dependency (the `faer-sparse` feature), Clarabel's only direct solver is QDLDL, which is
/// single-threaded.
fn clarabel_build(root: &Path) -> (String, String) {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let block = lock
        .split("[[package]]")
        .find(|b| b.contains("name = \"clarabel\""))
        .unwrap_or("");
    let version = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("version = "))
        .map_or_else(
            || "(version not in Cargo.lock)".into(),
            |v| v.trim_matches('"').to_string(),
        );
    let kkt = if block.contains("\"faer\"") {
        "KKT solver chosen by `auto` (QDLDL or faer)"
    } else {
        "KKT solver QDLDL (built without `faer-sparse`, per Cargo.lock)"
    };
    (version, kkt.to_string())
}

/// CPU seconds used by this process's waited-for children (`/proc/self/stat` cutime + cstime,
/// 1/100 s ticks); `None` off Linux.
fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // after the command name: state is field 3, cutime field 16, cstime field 17
    let ticks = f.get(13)?.parse::<f64>().ok()? + f.get(14)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Solves `mps` with Clarabel (`bulwark-lp`'s `clarabel_ref` example: the dev-dependency,
/// default settings), run as a built binary so its CPU time can be measured.
fn run_clarabel(root: &Path, mps: &Path, repeat: usize, time_limit: f64) -> Result<Peer, String> {
    let status = Command::new(cargo())
        .args(["build", "--quiet", "--release", "-p", "bulwark-lp"])
        .args(["--example", "clarabel_ref"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot build clarabel_ref: {e}"))?;
    if !status.success() {
        return Err(format!("building clarabel_ref failed ({status})"));
    }
    let exe = target_dir(root).join("release/examples/clarabel_ref");
    let mut runs = Vec::new();
    let (mut cpu, mut wall) = (0.0, 0.0);
    for k in 0..repeat {
        println!(
            "running Clarabel (default settings) on {}, {}/{repeat} …",
            mps.display(),
            k + 1
        );
        let cpu0 = children_cpu_seconds();
        let t = Instant::now();
        let o = Command::new(&exe)
            .arg(mps)
            .args(["--defaults", "--json", "--time-limit"])
            .arg(time_limit.to_string())
            .env("RAYON_NUM_THREADS", "1")
            .current_dir(root)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        wall += t.elapsed().as_secs_f64();
        cpu += match (cpu0, children_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        if !o.status.success() {
            return Err(format!(
                "clarabel_ref failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        runs.push(Run {
            json: String::from_utf8_lossy(&o.stdout).trim().to_string(),
        });
    }
    let (version, kkt) = clarabel_build(root);
    Ok(Peer::Ran {
        label: format!("Clarabel {version}: default settings, time limit {time_limit:.0} s, {kkt}"),
        runs,
        // the whole process, reading the MPS file included
        cpu_per_wall: cpu / wall,
    })
}

/// The raw text after `"key":` up to the next `,` or `}` (numbers, `null`, `true`, `false`).
fn raw(json: &str, key: &str) -> Option<String> {
    let k = format!("\"{key}\":");
    let start = json.find(&k)? + k.len();
    let rest = &json[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

pub(crate) fn num(json: &str, key: &str) -> f64 {
    raw(json, key)
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}

/// A JSON string field, unescaped (`\"`, `\\`, `\n`, `\uXXXX`); `None` if absent or not a
/// string.
pub(crate) fn text(json: &str, key: &str) -> Option<String> {
    let k = format!("\"{key}\":");
    let start = json.find(&k)? + k.len();
    let mut chars = json[start..].trim_start().chars();
    if chars.next()? != '"' {
        return None;
    }
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The raw text of a JSON array field (`[a,b,c]` → `a, b, c`).
fn field_array(json: &str, key: &str) -> String {
    let k = format!("\"{key}\":[");
    json.find(&k)
        .and_then(|s| {
            let rest = &json[s + k.len()..];
            rest.find(']').map(|e| rest[..e].replace(',', ", "))
        })
        .unwrap_or_default()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// A table cell for a string from a runner: `|` escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn run(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("sweep") {
        return crate::sweep::run(args);
    }
    if args.first().map(String::as_str) == Some("guru") {
        return crate::guru_bench::run(args);
    }
    if args.first().map(String::as_str) == Some("smo") {
        return crate::smo_bench::run(args);
    }
    if args.first().map(String::as_str) == Some("amu") {
        return crate::amu_bench::run(args);
    }
    if args.first().map(String::as_str) == Some("rolr") {
        return crate::rolr_bench::run(args);
    }
    if args.first().map(String::as_str) == Some("pairs") {
        return crate::pairs::run(args);
    }
    if args.first().map(String::as_str) != Some("lp") {
        return Err(USAGE.into());
    }
    if let Some(bad) = args[1..].iter().find(|a| {
        ![
            "--no-highs",
            "--no-mnist",
            "--no-fashion",
            "--no-text",
            "--clarabel",
        ]
        .contains(&a.as_str())
    }) {
        return Err(format!("unknown option `{bad}`\n{USAGE}"));
    }
    let root = project_root();
    std::fs::create_dir_all(root.join("target/bench")).map_err(|e| e.to_string())?;
    let no_highs = args.iter().any(|a| a == "--no-highs");
    let no_mnist = args.iter().any(|a| a == "--no-mnist");
    let with_clarabel = args.iter().any(|a| a == "--clarabel");
    // what is being measured: read before anything is written
    let provenance = provenance(&root, args);
    let load_start = load_average();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let python = if no_highs {
        Err("not run (`--no-highs`)".to_string())
    } else {
        highs_python(&root)
    };

    let mut cases = vec![
        Case {
            name: "spambase",
            real: true,
            highs: true,
            clarabel: true,
            repeat: REPEAT,
            peer_repeat: REPEAT,
            limits: None,
            screening: false,
            peer_time_limit: PEER_TIME_LIMIT,
        },
        Case {
            name: "dense-1000x100",
            real: false,
            highs: true,
            clarabel: true,
            repeat: REPEAT,
            peer_repeat: REPEAT,
            limits: None,
            screening: false,
            peer_time_limit: PEER_TIME_LIMIT,
        },
    ];
    if !no_mnist {
        cases.push(Case {
            name: "mnist-like-10000x784",
            real: false,
            highs: false,
            clarabel: with_clarabel,
            repeat: REPEAT,
            peer_repeat: 1,
            limits: None,
            screening: false,
            peer_time_limit: PEER_TIME_LIMIT,
        });
    }

    let reports: Vec<Report<'_>> = cases
        .iter()
        .map(|case| run_case(&root, case, &cases, &python, cores))
        .collect::<Result<_, _>>()?;

    // issue 61's text-shaped cases: the real corpus, the synthetic 2000 × 20000 at 0.5 %, and the
    // 20 000 × 100 000 Zipf case beyond the dense methods' reach (with issue 61's limits and
    // screening, as `bulwark train` runs it)
    let text_cases: Vec<Case> = if args.iter().any(|a| a == "--no-text") {
        Vec::new()
    } else {
        vec![
            Case {
                name: "spamassassin",
                real: true,
                highs: true,
                clarabel: true,
                // ours takes minutes on it: one solve per thread count
                repeat: 1,
                peer_repeat: 1,
                limits: None,
                screening: false,
                peer_time_limit: PEER_TIME_LIMIT,
            },
            Case {
                name: "sparse-2000x20000-0.005",
                real: false,
                highs: true,
                clarabel: true,
                repeat: REPEAT,
                peer_repeat: 1,
                limits: None,
                screening: false,
                peer_time_limit: PEER_TIME_LIMIT,
            },
            Case {
                name: "zipf-20000x100000-60",
                real: false,
                highs: true,
                clarabel: with_clarabel,
                repeat: 1,
                peer_repeat: 1,
                limits: Some(TEXT_LIMITS),
                screening: true,
                peer_time_limit: TEXT_LIMITS.1,
            },
        ]
    };
    let text_reports: Vec<Report<'_>> = text_cases
        .iter()
        .map(|case| run_case(&root, case, &text_cases, &python, cores))
        .collect::<Result<_, _>>()?;

    let real: Vec<(&str, Result<Run, String>)> = if args.iter().any(|a| a == "--no-fashion") {
        REAL_TARGETS
            .iter()
            .map(|t| (t.0, Err("not run (`--no-fashion`)".to_string())))
            .collect()
    } else {
        match crate::sweep::fashion_mnist(&root) {
            Ok(dir) => REAL_TARGETS
                .iter()
                .map(|t| (t.0, run_ours(&root, t.0, cores, 1, Some(&dir), None)))
                .collect(),
            Err(e) => REAL_TARGETS
                .iter()
                .map(|t| (t.0, Err(format!("Fashion-MNIST not installed: {e}"))))
                .collect(),
        }
    };

    let load_end = load_average();
    let mut md = render(
        &format!(
            "{provenance} Load average (1 min, /proc/loadavg) at the start of the run \
             {load_start:.1}, at the end {load_end:.1}{}",
            if load_start.max(load_end) > cores as f64 {
                format!(
                    ": above {cores}, so other jobs shared the cores and the times below are \
                     longer than on an idle machine (the CPU/wall column shows by how much)."
                )
            } else {
                ".".into()
            }
        ),
        cores,
        &reports,
    );
    render_real(&mut md, &real);
    render_text(&mut md, &text_reports);
    let path = root.join("docs/perf.md");
    std::fs::write(&path, md).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Our solver (one thread, and every core) and the peers on `case`; `all`: the cases of its
/// group (named when a peer is not run on this one).
fn run_case<'c>(
    root: &Path,
    case: &'c Case,
    all: &[Case],
    python: &Result<PathBuf, String>,
    cores: usize,
) -> Result<Report<'c>, String> {
    let mps = root.join("target/bench").join(format!("{}.mps", case.name));
    let any_peer = case.clarabel || (case.highs && python.is_ok());
    if any_peer {
        write_mps(root, case.name, &mps)?;
    }
    let one = run_ours(root, case.name, 1, case.repeat, None, Some(case))?;
    let every = if cores > 1 {
        Some(run_ours(
            root,
            case.name,
            cores,
            case.repeat,
            None,
            Some(case),
        )?)
    } else {
        None
    };
    let mut peers = Vec::new();
    if case.highs {
        peers.push(match python {
            Ok(py) => run_highs(root, py, &mps, case.peer_repeat, case.peer_time_limit),
            Err(e) => Peer::NotRun(format!("HiGHS: {e}")),
        });
    } else {
        peers.push(Peer::NotRun(format!(
            "HiGHS: not run on this case (the bench runs it on {})",
            all.iter()
                .filter(|c| c.highs)
                .map(|c| format!("`{}`", c.name))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    if case.clarabel {
        peers.push(run_clarabel(
            root,
            &mps,
            case.peer_repeat,
            case.peer_time_limit,
        )?);
    } else {
        peers.push(Peer::NotRun(
            "Clarabel: not run on this case (`--clarabel` adds it)".into(),
        ));
    }
    Ok((case, one, every, peers))
}

/// The section of issue 61's text-shaped cases: ours on one thread against each peer on one
/// thread, the normal-equations method the cost model chose, peak memory, and the targets.
fn render_text(md: &mut String, reports: &[Report<'_>]) {
    if reports.is_empty() {
        md.push_str("\n## Text-shaped data (issue 61)\n\nNot run (`--no-text`).\n");
        return;
    }
    md.push_str(&format!(
        "\n## Text-shaped data (issue 61)\n\nThe real corpus (a binary bag of words of the words \
         in at least 20 e-mails), a synthetic case with more features than examples at 0.5 % \
         non-zeros, and a Zipf case of the size of a real corpus (shapes and densities in the \
         table). Ours (`lp_bench`, uniform feature values, C = 1) on one thread against each \
         peer on one thread, on the identical LP; *method* is the normal equations' method the \
         cost model chose. The large Zipf case runs with issue 61's limits, a memory limit of \
         {} MiB and a time limit of {:.0} s, and example screening at its defaults (as `bulwark \
         train` runs it): the target is an answer within them, or their typed error within \
         {TEXT_ERROR_SECONDS:.0} s. The peers' time limit (HiGHS's and Clarabel's own) is \
         {PEER_TIME_LIMIT:.0} s, {:.0} s on the large case.\n\n\
         | case | data | m × n | non-zeros | N | ours: method, status | ours s, 1 thread \
         (iterations) | ours s, all cores | peak RSS MiB | peer (1 thread) | peer s (status, \
         iterations) | **ratio, 1 vs 1 thread** | objective, relative difference | target \
         (issue 61) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        TEXT_LIMITS.0, TEXT_LIMITS.1, TEXT_LIMITS.1
    ));
    for (case, one, every, peers) in reports {
        let error = text(&one.json, "error");
        let status = match (&error, raw(&one.json, "converged").as_deref()) {
            (Some(e), _) => format!("typed error: {}", cell(e)),
            (None, Some("true")) => "optimal".to_string(),
            _ => "not converged".to_string(),
        };
        let method = text(&one.json, "normal_equations").unwrap_or_else(|| "—".into());
        let ours_s = if error.is_some() {
            one.num("seconds")
        } else {
            one.num("seconds_median")
        };
        let target = match case.name {
            "sparse-2000x20000-0.005" => format!(
                "no slower than HiGHS's IPM; ≤ {TEXT_SPARSE_RSS_MIB:.0} MiB; objective = \
                 HiGHS's to 1e-6"
            ),
            "zipf-20000x100000-60" => format!(
                "≤ {} MiB and ≤ {:.0} s, or the typed error within {TEXT_ERROR_SECONDS:.0} s",
                TEXT_LIMITS.0, TEXT_LIMITS.1
            ),
            _ => "objective = HiGHS's to 1e-6".to_string(),
        };
        let peer_rows: Vec<(String, String, String, String)> = peers
            .iter()
            .map(|p| match p {
                Peer::Ran { label, runs, .. } => {
                    let r = &runs[0];
                    let peer_s = median(runs.iter().map(|r| r.num("seconds")).collect());
                    let solved = runs.iter().all(peer_optimal);
                    let diff = if solved && error.is_none() {
                        format!(
                            "{:.1e}",
                            ((r.num("objective") - one.num("objective")) / one.num("objective"))
                                .abs()
                        )
                    } else {
                        "—".into()
                    };
                    (
                        cell(label.split(':').next().unwrap_or(label)),
                        format!(
                            "{peer_s:.1} ({}, {})",
                            cell(&r.text("status")),
                            r.num("iterations")
                        ),
                        if solved && error.is_none() {
                            format!("**{}**", ratio(peer_s, ours_s))
                        } else {
                            "—".into()
                        },
                        diff,
                    )
                }
                Peer::NotRun(why) => (cell(why), "—".into(), "—".into(), "—".into()),
            })
            .collect();
        for (k, (peer, peer_s, r, diff)) in peer_rows.iter().enumerate() {
            let first = k == 0;
            md.push_str(&format!(
                "| `{}` | {} | {} × {} | {:.2} % | {} | {} | {} | {} | {} | {peer} | {peer_s} | \
                 {r} | {diff} | {} |\n",
                case.name,
                if first {
                    cell(&one.text("data"))
                } else {
                    "〃".into()
                },
                one.num("m"),
                one.num("n"),
                100.0 * one.num("nnz") / (one.num("m") * one.num("n")),
                one.num("budget"),
                if first {
                    format!("{method}, {status}")
                } else {
                    "〃".into()
                },
                if first {
                    format!("{ours_s:.2} ({})", one.num("iterations"))
                } else {
                    "〃".into()
                },
                every
                    .as_ref()
                    .map_or("—".into(), |a| if text(&a.json, "error").is_some() {
                        format!("{:.2} (typed error)", a.num("seconds"))
                    } else {
                        format!("{:.2}", a.num("seconds_median"))
                    }),
                one.num("peak_rss_mib"),
                if first { target.clone() } else { "〃".into() },
            ));
        }
    }
}

/// The section of the real image cases (issue 20), each against its targets.
fn render_real(md: &mut String, runs: &[(&str, Result<Run, String>)]) {
    md.push_str(&format!(
        "\n## Real image data (issue 20): Fashion-MNIST, N = 50, C = 1, min-max scaling\n\n\
         One solve each on every core, the fallback chain on (as `bulwark train` runs it), each \
         solver attempt limited to {REAL_TIME_LIMIT:.0} s; no peer \
         (HiGHS's IPM had not finished a 400-image slice of the first case after 20 minutes, \
         Clarabel took 175 s on that slice). Peak RSS is the process's from the start of the \
         solve (the 60 000 images read are dropped before it); *dense input* is `m × n` \
         doubles.\n\n\
         | case | data | m × n | non-zeros | threads | solver that answered | status | \
         iterations | seconds | peak RSS MiB | RSS / dense input | issue 20's target |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    ));
    for (case, run) in runs {
        let (_, it, secs, rss) = REAL_TARGETS
            .iter()
            .find(|t| t.0 == *case)
            .copied()
            .unwrap_or((case, None, f64::NAN, f64::NAN));
        let target = format!(
            "{}≤ {secs:.0} s, ≤ {rss:.0} MiB, ≤ {TARGET_RSS_OVER_DENSE:.0}× dense input",
            it.map_or(String::new(), |k| format!("≤ {k:.0} iterations, "))
        );
        match run {
            Ok(r) => {
                let dense_mib = r.num("m") * r.num("n") * 8.0 / (1024.0 * 1024.0);
                md.push_str(&format!(
                    "| `{case}` | {} | {} × {} | {:.1} % | {} | {} | {} | {} | {:.1} | {:.0} | \
                     {:.1} | {target} |\n",
                    cell(&r.text("data")),
                    r.num("m"),
                    r.num("n"),
                    100.0 * r.num("nnz") / (r.num("m") * r.num("n")),
                    r.num("threads"),
                    cell(&ours_label(r)),
                    match (raw(&r.json, "converged").as_deref(), text(&r.json, "error")) {
                        (Some("true"), _) => "optimal".to_string(),
                        // no solver answered: the runner's error names the last one, its
                        // status and figures, and any fallback not started
                        (_, Some(e)) => cell(&format!("not solved: {e}")),
                        _ => "not converged".to_string(),
                    },
                    r.num("iterations"),
                    r.num("seconds"),
                    r.num("peak_rss_mib"),
                    r.num("peak_rss_mib") / dense_mib,
                ));
            }
            Err(why) => md.push_str(&format!(
                "| `{case}` | — | — | — | — | {} | — | — | — | — | — | {target} |
",
                cell(why)
            )),
        }
    }
}

/// Our solver's label: the solver that answered, as the runner reported it (and the LPs of
/// example screening, when it ran).
fn ours_label(r: &Run) -> String {
    let fallbacks = r.text("fallbacks");
    let mut label = if text(&r.json, "error").is_some() {
        format!("none (the last tried: bulwark {})", r.text("solver"))
    } else if fallbacks.is_empty() {
        format!("bulwark: {}", r.text("solver"))
    } else {
        format!("bulwark: {} (after: {fallbacks})", r.text("solver"))
    };
    let rounds = r.num("screening_rounds");
    if rounds > 0.0 {
        label.push_str(&format!(", on {rounds} working sets of examples"));
    }
    label
}

/// `peer / ours` when both solved, else why not.
fn ratio(peer_seconds: f64, ours_seconds: f64) -> String {
    if peer_seconds.is_finite() && ours_seconds.is_finite() && ours_seconds > 0.0 {
        format!("{:.1}×", peer_seconds / ours_seconds)
    } else {
        "—".into()
    }
}

fn peer_optimal(r: &Run) -> bool {
    r.text("status").eq_ignore_ascii_case("optimal")
}

type Report<'a> = (&'a Case, Run, Option<Run>, Vec<Peer>);

fn render(provenance: &str, cores: usize, reports: &[Report<'_>]) -> String {
    let mut md = String::from("# Performance\n\n");
    md.push_str(provenance);
    md.push_str(&format!(
        "\n\n**How to read the ratios.** Every ratio against a peer is measured in this run, on the \
         identical LP (the runner writes it as MPS, the peer reads that file), at **equal thread \
         counts: ours on 1 thread against the peer on 1 thread**. Ours on {cores} threads is \
         reported beside it; its ratio to a 1-thread peer is labelled *unequal threads*. Times are \
         medians of the solves of one LP ({REPEAT} of ours per case and thread count; the \
         peers' count is in their rows), ours including building LP (4) from the data, HiGHS's \
         excluding reading the MPS file, Clarabel's including its setup but not reading the file. \
         *CPU/wall* is the CPU time of the process over its wall-clock time during the solves \
         (Clarabel: the whole process, reading included): at most about 1 on one thread, and \
         below 1 when the shared machine gave the process less than a core. Each row names the \
         solver that answered.\n"
    ));

    // summary
    md.push_str(&format!(
        "\n## Summary\n\n| case | data | peer (1 thread) | peer s | ours (solver that \
         answered) | ours s, 1 thread | **ratio, 1 vs 1 thread** | ours s, {cores} threads | \
         ratio, {cores} vs 1 thread (unequal threads) | target (issue 5) |\n\
         |---|---|---|---|---|---|---|---|---|---|\n"
    ));
    for (case, one, all, peers) in reports {
        for peer in peers {
            let Peer::Ran { label, runs, .. } = peer else {
                continue;
            };
            let peer_s = median(runs.iter().map(|r| r.num("seconds")).collect());
            let solved = runs.iter().all(peer_optimal);
            let peer_s = if solved { peer_s } else { f64::NAN };
            let target = match (case.name, label.starts_with("HiGHS")) {
                ("dense-1000x100", true) => format!("≥ {TARGET_OVER_HIGHS:.0}×"),
                ("mnist-like-10000x784", false) => format!(
                    "≥ {:.1}× (≤ {TARGET_SECONDS_MNIST:.0} s where Clarabel took \
                     {ISSUE_CLARABEL_SECONDS_MNIST:.0} s)",
                    ISSUE_CLARABEL_SECONDS_MNIST / TARGET_SECONDS_MNIST
                ),
                _ => String::new(),
            };
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {:.3} | **{}** | {} | {} | {} |\n",
                case.name,
                if case.real { "real" } else { "synthetic" },
                cell(label.split(':').next().unwrap_or(label)),
                if solved {
                    format!("{peer_s:.3}")
                } else {
                    format!("not solved: {}", cell(&runs[0].text("status")))
                },
                cell(&ours_label(one)),
                one.num("seconds_median"),
                ratio(peer_s, one.num("seconds_median")),
                all.as_ref()
                    .map_or("—".into(), |a| format!("{:.3}", a.num("seconds_median"))),
                all.as_ref()
                    .map_or("—".into(), |a| ratio(peer_s, a.num("seconds_median"))),
                target
            ));
        }
    }

    for (case, one, all, peers) in reports {
        let ours: Vec<&Run> = std::iter::once(one).chain(all.as_ref()).collect();
        md.push_str(&format!(
            "\n## `{}` ({}): {} × {}, {:.1} % non-zeros, N = {}, C = {}, {} feature values\n\n{}. \
             LP (4): {} variables, {} rows.\n\n",
            case.name,
            if case.real { "real data" } else { "synthetic" },
            one.num("m"),
            one.num("n"),
            100.0 * one.num("nnz") / (one.num("m") * one.num("n")),
            one.num("budget"),
            one.num("c"),
            one.text("values"),
            one.text("data"),
            one.num("lp_vars"),
            one.num("lp_rows"),
        ));
        md.push_str(
            "| solver that answered | threads | CPU/wall | status | objective | iterations | \
             seconds: median (best; all) |\n|---|---|---|---|---|---|---|\n",
        );
        for o in &ours {
            md.push_str(&format!(
                "| {} | {} | {:.2} | {} | {:.9} | {} | {:.3} ({:.3}; {}) |\n",
                cell(&ours_label(o)),
                o.num("threads"),
                o.num("cpu_per_wall"),
                if raw(&o.json, "converged").as_deref() == Some("true") {
                    "optimal"
                } else {
                    "not converged"
                },
                o.num("objective"),
                o.num("iterations"),
                o.num("seconds_median"),
                o.num("seconds"),
                field_array(&o.json, "seconds_all"),
            ));
        }
        let mut notes = Vec::new();
        for peer in peers {
            match peer {
                Peer::Ran {
                    label,
                    runs,
                    cpu_per_wall,
                } => {
                    let r = &runs[0];
                    let all_s: Vec<String> = runs
                        .iter()
                        .map(|r| format!("{:.3}", r.num("seconds")))
                        .collect();
                    md.push_str(&format!(
                        "| {} | 1 | {:.2} | {} | {:.9} | {} | {:.3} ({}) |\n",
                        cell(label),
                        cpu_per_wall,
                        cell(&r.text("status")),
                        r.num("objective"),
                        r.num("iterations"),
                        median(runs.iter().map(|r| r.num("seconds")).collect()),
                        all_s.join(", "),
                    ));
                    if peer_optimal(r) {
                        notes.push(format!(
                            "{}: objective differs from ours by {:.1e} (relative)",
                            label.split(':').next().unwrap_or(label),
                            ((r.num("objective") - one.num("objective")) / one.num("objective"))
                                .abs()
                        ));
                    }
                }
                Peer::NotRun(why) => notes.push(why.clone()),
            }
        }
        if !notes.is_empty() {
            md.push_str(&format!("\n{}.\n", notes.join("; ")));
        }
        md.push_str(&format!(
            "\nHypervisor steal during our solves: {}. Time per IPM iteration against one dense \
             `XᵀDX` of the data's shape (faer GEMM, same process and thread count): {}.\n",
            ours.iter()
                .map(|o| format!(
                    "{:.1} % ({} thread(s))",
                    o.num("steal_percent"),
                    o.num("threads")
                ))
                .collect::<Vec<_>>()
                .join(", "),
            ours.iter()
                .map(|o| format!(
                    "{:.4} s / {:.5} s = {:.2} ({} thread(s))",
                    o.num("seconds_per_iteration"),
                    o.num("xtdx_seconds"),
                    o.num("iteration_over_xtdx"),
                    o.num("threads")
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if case.name == "mnist-like-10000x784" {
            mnist_table(&mut md, &ours);
        }
    }
    md.push_str(
        "\nRaw JSON of our runs: `target/bench/*.json`; the peers' JSON lines are printed by \
         `xtask/scripts/highs_lp.py` and `bulwark-lp`'s `clarabel_ref` example.\n",
    );
    md
}

/// Issue 5's figures for the MNIST-like case, per thread count.
fn mnist_table(md: &mut String, ours: &[&Run]) {
    md.push_str("\n| quantity |");
    for o in ours {
        md.push_str(&format!(" {} thread(s) |", o.num("threads")));
    }
    md.push_str(" target (issue 5) |\n|---|");
    md.push_str(&"---|".repeat(ours.len() + 1));
    md.push('\n');
    let mut row = |label: &str, target: String, f: &dyn Fn(&Run) -> String| {
        md.push_str(&format!("| {label} |"));
        for o in ours {
            md.push_str(&format!(" {} |", f(o)));
        }
        md.push_str(&format!(" {target} |\n"));
    };
    row(
        "solve time, median (best)",
        format!("≤ {TARGET_SECONDS_MNIST:.0} s on the issue's machine"),
        &|o| {
            format!(
                "{:.2} s ({:.2} s)",
                o.num("seconds_median"),
                o.num("seconds")
            )
        },
    );
    row("peak RSS", format!("≤ {TARGET_RSS_MIB:.0} MiB"), &|o| {
        format!("{:.0} MiB", o.num("peak_rss_mib"))
    });
    row(
        "time per iteration / one XᵀDX",
        format!("≤ {TARGET_ITERATION_OVER_XTDX:.0}"),
        &|o| format!("{:.2}", o.num("iteration_over_xtdx")),
    );
    row("of which factorisations / solves", String::new(), &|o| {
        format!(
            "{:.2} s / {:.2} s",
            o.num("factor_seconds"),
            o.num("solve_seconds")
        )
    });
}

/// `git`'s trimmed output in `root`, `None` when it fails.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The commit checked out in `root` (12 hex digits), or `unknown`.
pub(crate) fn commit(root: &Path) -> String {
    git(root, &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into())
}

/// Where and when this run happened: date, commit, machine, command.
pub(crate) fn provenance(root: &Path, args: &[String]) -> String {
    let commit = commit(root);
    let dirty = git(root, &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    format!(
        "Generated by `cargo xtask bench {}` on {} (UTC) at commit `{commit}`{}; nothing in \
         this file is typed by hand. Machine: {}.",
        args.join(" "),
        utc_date(),
        if dirty {
            " with uncommitted changes"
        } else {
            ""
        },
        machine()
    )
}

/// The 1-minute load average (`/proc/loadavg`; NaN off Linux).
pub(crate) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Today's date (UTC), `YYYY-MM-DD`, from the system clock (civil-from-days).
fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .map_or("unknown CPU".into(), |l| {
            l.split(':').nth(1).unwrap_or("").trim().to_string()
        });
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(String::new(), |kb| {
            format!(", {:.1} GiB RAM", kb / 1024.0 / 1024.0)
        });
    format!("{cpu}, {cores} cores available to this process{mem}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_fields() {
        let j = r#"{"solver":"dsx-ipm (a, b) \"x\"","n":57,"c":1,"none":null}"#;
        assert_eq!(text(j, "solver").as_deref(), Some("dsx-ipm (a, b) \"x\""));
        assert_eq!(num(j, "n"), 57.0);
        assert_eq!(num(j, "c"), 1.0);
        assert!(num(j, "none").is_nan());
        assert_eq!(text(j, "n"), None);
    }

    #[test]
    fn ratios_only_when_both_solved() {
        assert_eq!(ratio(10.0, 2.0), "5.0×");
        assert_eq!(ratio(f64::NAN, 2.0), "—");
    }

    fn ours(threads: usize, median: f64) -> Run {
        Run {
            json: format!(
                r#"{{"case":"spambase","data":"UCI spambase (real)","solver":"dsx-ipm (block-arrow normal equations)","fallbacks":"","budget":4,"c":1,"values":"uniform","converged":true,"cpu_per_wall":0.98,"m":4601,"n":57,"nnz":59231,"objective":0.8017,"iterations":45,"seconds":{median},"seconds_median":{median},"seconds_all":[{median}],"lp_vars":68491,"lp_rows":63832,"steal_percent":0.1,"threads":{threads}}}"#
            ),
        }
    }

    #[test]
    fn a_dead_runner_says_how_far_it_got() {
        let log = "  0 pobj +1e-1 dres 2e2 step 0.000 t 0.5s\n  1 pobj +5e0 step 0.5 t 5.1s\nnote\n  0 pobj +1e-1 hsd\n  7 pobj +2e0 t 99.0s\n";
        let s = how_far(log);
        assert!(s.contains("2 solver(s) started"), "{s}");
        assert!(s.ends_with("`7 pobj +2e0 t 99.0s`"), "{s}");
        assert_eq!(how_far("nothing logged\n"), "");
    }

    #[test]
    fn real_cases_name_the_solver_the_memory_ratio_and_what_did_not_run() {
        let run = Run {
            json: r#"{"case":"fashion-0v6","data":"Fashion-MNIST (real)","solver":"dsx-ipm","fallbacks":"","converged":true,"m":12000,"n":784,"nnz":4704000,"iterations":176,"seconds":170.5,"peak_rss_mib":2870.0,"threads":2}"#.into(),
        };
        let mut md = String::new();
        render_real(
            &mut md,
            &[
                ("fashion-0v6", Ok(run)),
                ("fashion-0-vs-rest", Err("not run (`--no-fashion`)".into())),
            ],
        );
        let row = md
            .lines()
            .find(|l| l.starts_with("| `fashion-0v6`"))
            .unwrap();
        assert!(row.contains("bulwark: dsx-ipm"), "{row}");
        assert!(
            row.contains("| 176 |") && row.contains("| 170.5 |"),
            "{row}"
        );
        // 2870 MiB over 12000 × 784 doubles (71.8 MiB)
        assert!(row.contains("| 40.0 |"), "{row}");
        assert!(row.contains("≤ 60 iterations, ≤ 30 s"), "{row}");
        let rest = md
            .lines()
            .find(|l| l.starts_with("| `fashion-0-vs-rest`"))
            .unwrap();
        assert!(rest.contains("not run (`--no-fashion`)"), "{rest}");
        assert!(rest.contains("≤ 180 s, ≤ 3072 MiB"), "{rest}");
        assert!(md.contains("each solver attempt limited to 1800 s"), "{md}");
    }

    /// Issue 61's text section: a solved case against a peer (ratio, method, objective
    /// difference, target) and the large case ended by its typed error (the error, its time).
    #[test]
    fn text_cases_render_the_method_the_ratio_and_a_typed_error() {
        let case = |name: &'static str, limits| Case {
            name,
            real: false,
            highs: true,
            clarabel: false,
            repeat: 1,
            peer_repeat: 1,
            limits,
            screening: limits.is_some(),
            peer_time_limit: PEER_TIME_LIMIT,
        };
        let (sparse, zipf) = (
            case("sparse-2000x20000-0.005", None),
            case("zipf-20000x100000-60", Some(TEXT_LIMITS)),
        );
        let solved = Run {
            json: r#"{"case":"sparse-2000x20000-0.005","data":"synthetic","solver":"dsx-ipm","fallbacks":"","budget":50,"converged":true,"m":2000,"n":20000,"nnz":200000,"objective":0.981551295,"iterations":39,"seconds":29.0,"seconds_median":29.5,"peak_rss_mib":289.0,"threads":1,"normal_equations":"example-space"}"#.into(),
        };
        let refused = Run {
            json: r#"{"case":"zipf-20000x100000-60","data":"synthetic text","solver":"none","fallbacks":"","converged":false,"error":"LP (4) on 20000 examples x 100000 features does not fit in 4.0 GiB","budget":5,"m":20000,"n":100000,"nnz":984941,"iterations":0,"seconds":7.8,"peak_rss_mib":150.0,"threads":1}"#.into(),
        };
        let highs = |s: &str, status: &str| Peer::Ran {
            label: "HiGHS 1.15.1 (highspy): IPM, no crossover, threads option 1".into(),
            runs: vec![Run {
                json: format!(
                    r#"{{"version":"1.15.1","threads":1,"status":"{status}","objective":0.98155130,"iterations":30,"seconds":{s},"cpu_per_wall":0.99}}"#
                ),
            }],
            cpu_per_wall: 0.99,
        };
        let reports = vec![
            (&sparse, solved, None, vec![highs("102.0", "Optimal")]),
            (
                &zipf,
                refused,
                None,
                vec![highs("600.0", "Time limit reached")],
            ),
        ];
        let mut md = String::new();
        render_text(&mut md, &reports);
        let row = |name: &str| {
            md.lines()
                .find(|l| l.starts_with(&format!("| `{name}`")))
                .unwrap()
                .to_string()
        };
        let s = row("sparse-2000x20000-0.005");
        assert!(s.contains("example-space, optimal"), "{s}");
        assert!(s.contains("**3.5×**"), "{s}");
        assert!(s.contains("no slower than HiGHS"), "{s}");
        let z = row("zipf-20000x100000-60");
        assert!(z.contains("typed error: LP (4) on 20000 examples"), "{z}");
        assert!(z.contains("| 7.80 (0) |"), "{z}");
        assert!(z.contains("Time limit reached"), "{z}");
        assert!(z.contains("or the typed error within 10 s"), "{z}");
    }

    #[test]
    fn a_real_case_no_solver_answered_says_why_with_its_time_and_memory() {
        let run = Run {
            json: r#"{"case":"fashion-0-vs-rest","data":"Fashion-MNIST (real)","solver":"dsx-ipm","fallbacks":"","converged":false,"error":"LP (4) not solved by dsx-ipm: status iteration_limit after 200 iterations (primal residual 4.01e-14, dual residual 4.58e-2, gap 4.87e-2); hsd-engine/structured not started: it would need about 45 GiB, 16 GiB available","m":60000,"n":784,"nnz":23000000,"iterations":200,"seconds":880.5,"peak_rss_mib":7100.0,"threads":2}"#.into(),
        };
        let mut md = String::new();
        render_real(&mut md, &[("fashion-0-vs-rest", Ok(run))]);
        let row = md
            .lines()
            .find(|l| l.starts_with("| `fashion-0-vs-rest`"))
            .unwrap();
        assert!(
            row.contains("none (the last tried: bulwark dsx-ipm)"),
            "{row}"
        );
        assert!(
            row.contains("not solved: LP (4) not solved by dsx-ipm"),
            "{row}"
        );
        assert!(row.contains("hsd-engine/structured not started"), "{row}");
        assert!(
            row.contains("| 200 |") && row.contains("| 880.5 |"),
            "{row}"
        );
        assert!(row.contains("| 7100 |"), "{row}");
    }

    #[test]
    fn report_compares_one_thread_with_one_thread_and_names_the_solvers() {
        let case = Case {
            name: "spambase",
            real: true,
            highs: true,
            clarabel: true,
            repeat: 3,
            peer_repeat: 1,
            limits: None,
            screening: false,
            peer_time_limit: PEER_TIME_LIMIT,
        };
        let highs = Peer::Ran {
            label: "HiGHS 1.15.1 (highspy): IPM, no crossover, threads option 1".into(),
            runs: vec![Run {
                json: r#"{"version":"1.15.1","threads":1,"status":"Optimal","objective":0.8017,"iterations":30,"seconds":10.0,"cpu_per_wall":0.99}"#.into(),
            }],
            cpu_per_wall: 0.99,
        };
        let reports = vec![(
            &case,
            ours(1, 2.0),
            Some(ours(2, 1.0)),
            vec![highs, Peer::NotRun("Clarabel: not run".into())],
        )];
        let md = render("Generated by a test.", 2, &reports);
        // 1 vs 1 thread: 10 / 2; 2 threads against the 1-thread peer: 10 / 1, labelled unequal
        assert!(md.contains("| **5.0×** |"), "{md}");
        assert!(md.contains("| 10.0× |"), "{md}");
        assert!(md.contains("(unequal threads)"), "{md}");
        assert!(
            md.contains("bulwark: dsx-ipm (block-arrow normal equations)"),
            "{md}"
        );
        assert!(md.contains("HiGHS 1.15.1 (highspy): IPM"), "{md}");
        assert!(md.contains("Clarabel: not run"), "{md}");
        assert!(md.contains("(real data)"), "{md}");
    }

    #[test]
    fn date_is_iso() {
        let d = utc_date();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"), "{d}");
    }
}
