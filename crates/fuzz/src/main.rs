//! `bulwark-fuzz (--target NAME | --all) [--seconds S] [--seed N] [--corpus DIR] [--crashes DIR]
//! [--keep DIR]` and `bulwark-fuzz --replay DIR`: the mutation loop of `bulwark_fuzz` with two
//! more crash detectors than a panic. A counting global allocator aborts when the live heap
//! grows beyond [`HEAP_LIMIT`] while an input runs, and a watchdog thread aborts when one input
//! runs longer than [`SLOW_LIMIT`]; both first write the input to the crash folder. Prints one
//! line per target: executions, executions per second, corpus size, distinct outcomes.
//!
//! Exit status: 0 without a crash, 1 with one (the input is in the crash folder), 2 on bad
//! arguments.

// The counting allocator is the one place that needs `unsafe` (`GlobalAlloc` is an unsafe
// trait); each block only forwards to the system allocator.
#![allow(unsafe_code, clippy::print_stdout, clippy::print_stderr)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bulwark_fuzz::{Crash, Fuzzer, TARGETS, Target, read_dir, run_one};

/// The live heap an input may grow while it runs (256 MiB): inputs are at most 64 KiB, so more
/// is an allocation sized by a number the input declares.
const HEAP_LIMIT: usize = 256 << 20;
/// How long one input may run (10 s).
const SLOW_LIMIT: Duration = Duration::from_secs(10);

/// Live heap bytes.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Live heap bytes when the current input started.
static BASE: AtomicUsize = AtomicUsize::new(0);
/// Whether an input is running (the limit applies).
static ARMED: AtomicBool = AtomicBool::new(false);
/// Milliseconds since [`START`] at which the current input started (0: none).
static STARTED_MS: AtomicU64 = AtomicU64::new(0);
/// The current input and where a crash goes, for the allocator and the watchdog.
static CURRENT: Mutex<Option<(Vec<u8>, PathBuf)>> = Mutex::new(None);

struct Counting;

// SAFETY: every method forwards to `System` with the same arguments; the counting around it
// only reads and writes atomics (and, past the limit, disarms itself before doing anything that
// allocates, then aborts).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        over_limit(layout.size());
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        over_limit(layout.size());
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        over_limit(new_size.saturating_sub(layout.size()));
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Aborts (after saving the input) when `more` bytes would take the live heap of the running
/// input beyond [`HEAP_LIMIT`].
fn over_limit(more: usize) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    let grown = LIVE
        .load(Ordering::Relaxed)
        .saturating_sub(BASE.load(Ordering::Relaxed))
        .saturating_add(more);
    if grown > HEAP_LIMIT {
        ARMED.store(false, Ordering::SeqCst);
        crash_and_abort(&format!(
            "an allocation of {more} bytes would take the heap {grown} bytes beyond the input's start (limit {HEAP_LIMIT})"
        ));
    }
}

/// Writes the current input to the crash folder, says so, and aborts.
fn crash_and_abort(why: &str) -> ! {
    let saved = CURRENT.try_lock().ok().and_then(|c| {
        let (input, dir) = c.as_ref()?;
        save(dir, input).ok()
    });
    eprintln!(
        "CRASH: {why}; input {}",
        saved.map_or("not saved".into(), |p| p.display().to_string())
    );
    std::process::abort()
}

/// Writes `input` to `dir` under a name made of its hash; returns the path.
fn save(dir: &Path, input: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    // FNV-1a: a stable name, no dependency
    let h = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let p = dir.join(format!("{h:016x}"));
    std::fs::write(&p, input)?;
    Ok(p)
}

static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

fn now_ms() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// Before each input: remember it for the crash handlers, arm the limit, start the clock.
fn before_input(input: &[u8], crashes: &Path) {
    ARMED.store(false, Ordering::SeqCst);
    if let Ok(mut c) = CURRENT.lock() {
        match c.as_mut() {
            Some((v, d)) => {
                v.clear();
                v.extend_from_slice(input);
                if d != crashes {
                    *d = crashes.to_path_buf();
                }
            }
            None => *c = Some((input.to_vec(), crashes.to_path_buf())),
        }
    }
    BASE.store(LIVE.load(Ordering::Relaxed), Ordering::SeqCst);
    STARTED_MS.store(now_ms(), Ordering::SeqCst);
    ARMED.store(true, Ordering::SeqCst);
}

fn after_inputs() {
    ARMED.store(false, Ordering::SeqCst);
    STARTED_MS.store(0, Ordering::SeqCst);
}

fn watchdog() {
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let started = STARTED_MS.load(Ordering::SeqCst);
            if started > 0 && now_ms().saturating_sub(started) > SLOW_LIMIT.as_millis() as u64 {
                ARMED.store(false, Ordering::SeqCst);
                crash_and_abort(&format!(
                    "one input ran longer than {} s",
                    SLOW_LIMIT.as_secs()
                ));
            }
        }
    });
}

const USAGE: &str = "usage: bulwark-fuzz (--target NAME | --all) [--seconds S] [--seed N] [--corpus DIR] [--crashes DIR] [--keep DIR]
       bulwark-fuzz --replay DIR   (every file of DIR/<target>/ through its target)
  targets: csv libsvm idx mps model-json model-bin values
  --corpus DIR   seeds in DIR/<target>/ (default: this crate's corpus/)
  --crashes DIR  where a crashing input is written (default: target/fuzz/crashes)
  --keep DIR     also write the inputs kept for a new outcome to DIR/<target>/";

struct Args {
    targets: Vec<&'static Target>,
    seconds: f64,
    seed: u64,
    corpus: PathBuf,
    crashes: PathBuf,
    keep: Option<PathBuf>,
    replay: Option<PathBuf>,
}

fn parse() -> Result<Args, String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        targets: Vec::new(),
        seconds: 10.0,
        seed: 0,
        corpus: here.join("corpus"),
        crashes: here.join("../../target/fuzz/crashes"),
        keep: None,
        replay: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |f: &str| {
            it.next()
                .ok_or_else(|| format!("{f} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--target" => {
                let v = value("--target")?;
                a.targets.push(
                    bulwark_fuzz::target(&v)
                        .ok_or_else(|| format!("unknown target `{v}`\n{USAGE}"))?,
                );
            }
            "--all" => a.targets = TARGETS.iter().collect(),
            "--seconds" => {
                let v = value("--seconds")?;
                a.seconds = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| format!("--seconds: `{v}` is not a number of seconds"))?;
            }
            "--seed" => {
                let v = value("--seed")?;
                a.seed = v
                    .parse()
                    .map_err(|_| format!("--seed: `{v}` is not a u64"))?;
            }
            "--corpus" => a.corpus = PathBuf::from(value("--corpus")?),
            "--crashes" => a.crashes = PathBuf::from(value("--crashes")?),
            "--keep" => a.keep = Some(PathBuf::from(value("--keep")?)),
            "--replay" => a.replay = Some(PathBuf::from(value("--replay")?)),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if a.targets.is_empty() && a.replay.is_none() {
        return Err(format!(
            "no target: --target NAME, --all or --replay DIR\n{USAGE}"
        ));
    }
    Ok(a)
}

/// Where the last panic was (file:line:column).
static PANIC_AT: Mutex<String> = Mutex::new(String::new());

fn report_crash(c: &Crash, crashes: &Path, target: &str) -> ExitCode {
    let saved = save(&crashes.join(target), &c.input);
    let at = PANIC_AT.lock().map(|a| a.clone()).unwrap_or_default();
    eprintln!(
        "CRASH in {target}: panic at {at}: {}; input {}",
        c.message,
        saved.map_or_else(|e| format!("not saved ({e})"), |p| p.display().to_string())
    );
    ExitCode::from(1)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // panics are caught and reported as crashes; the hook only keeps where the last one was
    std::panic::set_hook(Box::new(|info| {
        if let (Some(l), Ok(mut at)) = (info.location(), PANIC_AT.lock()) {
            *at = format!("{}:{}:{}", l.file(), l.line(), l.column());
        }
    }));
    watchdog();
    if let Some(dir) = &args.replay {
        let mut n = 0;
        for t in TARGETS {
            let inputs = match read_dir(&dir.join(t.name)) {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("{}: {e}", dir.join(t.name).display());
                    return ExitCode::from(2);
                }
            };
            let crashes = args.crashes.join(t.name);
            for (path, input) in inputs {
                before_input(&input, &crashes);
                let r = run_one(t, &input);
                after_inputs();
                match r {
                    Ok(sig) => println!("{}: {sig}", path.display()),
                    Err(c) => return report_crash(&c, &args.crashes, t.name),
                }
                n += 1;
            }
        }
        println!("replayed {n} input(s) without a crash");
        return ExitCode::SUCCESS;
    }
    for t in &args.targets {
        let seeds = match read_dir(&args.corpus.join(t.name)) {
            Ok(s) => s.into_iter().map(|(_, b)| b).collect(),
            Err(e) => {
                eprintln!("{}: {e}", args.corpus.join(t.name).display());
                return ExitCode::from(2);
            }
        };
        let crashes = args.crashes.join(t.name);
        let mut fuzzer = Fuzzer::new(t, seeds, args.seed);
        let r = fuzzer.run(Duration::from_secs_f64(args.seconds), |input| {
            before_input(input, &crashes)
        });
        after_inputs();
        match r {
            Ok(stats) => {
                println!(
                    "{:>10}: {} executions in {:.1} s ({:.0}/s), corpus {} ({} kept), {} distinct outcomes, no crash",
                    t.name,
                    stats.executions,
                    stats.seconds,
                    stats.executions as f64 / stats.seconds.max(1e-9),
                    stats.corpus,
                    stats.kept.len(),
                    stats.outcomes
                );
                if let Some(keep) = &args.keep {
                    for input in &stats.kept {
                        if let Err(e) = save(&keep.join(t.name), input) {
                            eprintln!("cannot keep an input: {e}");
                        }
                    }
                }
            }
            Err(c) => return report_crash(&c, &args.crashes, t.name),
        }
    }
    ExitCode::SUCCESS
}
