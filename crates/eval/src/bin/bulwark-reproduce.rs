//! `bulwark-reproduce [--quick|--full] [--only NAME[,NAME…]] [--seed S] [--data-dir DIR]
//! [--out DIR] [--jobs J] [--cache FILE | --no-cache] [--stop-after MINUTES] [--refit LEARNER[,…]]`
//! — regenerates the
//! tables and figures of Dekel, Shamir & Xiao (2010), Dekel & Shamir (ICML 2008) and Ginodi (2010,
//! ch. 2). Usually run
//! through `cargo xtask reproduce`.
//!
//! With a cache (the default for `--full`: `<out>/cache-full.jsonl`) every finished unit (one
//! split of one task) is kept, and a later run skips it: `--stop-after M` starts no unit after
//! `M` minutes, and the same command resumes. `--refit fdrop` recomputes that learner's cells in
//! the cached units of the budget-curve experiments (after a change to its solver), keeping the
//! other learners' (each refit unit is stored as soon as it finishes, so it resumes too).
//!
//! Ctrl-C (or SIGTERM) starts no new unit: the units running finish and are stored, no table of
//! an unfinished experiment is written, and the run ends with status 130 and one line saying
//! how many finished units the cache keeps. A second Ctrl-C ends the process at once.
//!
//! Exit status: 0 when every experiment ran or was skipped for missing data, 1 when an
//! experiment failed for another reason, 2 on bad arguments, 3 when the time limit stopped an
//! experiment before its last unit (run the same command again to resume), 130 when
//! interrupted.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bulwark_eval::io::write_atomic;
use bulwark_eval::{ALL, Mode, Observer, Outcome, RunConfig, UnitCache, report, run};
use indicatif::{FormattedDuration, ProgressBar, ProgressStyle};

/// The exit status of an interrupted run (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;

/// Without a terminal (a log file, CI) the bar is hidden: a plain progress line instead, at most
/// this often (and at an experiment's last unit).
const PLAIN_EVERY: Duration = Duration::from_secs(60);

const USAGE: &str = "usage: bulwark-reproduce [--quick|--full] [--only NAME[,NAME...]] [--seed S] [--data-dir DIR] [--out DIR] [--jobs J] [--cache FILE | --no-cache] [--stop-after MINUTES] [--refit LEARNER[,LEARNER...]]
  experiments: synth1 synth2 breast spam icml_random icml_adversarial usps mnist guru_binary guru_kernel guru_multiclass rolr kls poisoning text missing_real
  --cache FILE  keep every finished unit (one split of one task) in FILE and skip the units found there (default with --full: OUT/cache-full.jsonl)
  --stop-after MINUTES  start no unit after MINUTES; the same command resumes (exit status 3 while units are left)
  --refit LEARNER  recompute that learner's cells (registry name, e.g. fdrop) in the cached units of the budget-curve experiments, the other learners' kept";

/// Where the cache lives: `--cache`, none (`--no-cache`), or the mode's default.
enum CacheChoice {
    Default,
    File(PathBuf),
    Off,
}

struct Args {
    cfg: RunConfig,
    only: Vec<String>,
    out: PathBuf,
    cache: CacheChoice,
    stop_after: Option<f64>,
}

fn parse() -> Result<Args, String> {
    let mut cfg = RunConfig::quick(0);
    cfg.data_dir = bulwark_data::data_dir(None);
    cfg.jobs = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let mut only = Vec::new();
    let mut out = PathBuf::from("docs/results");
    let mut cache = CacheChoice::Default;
    let mut stop_after = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--quick" => cfg.mode = Mode::Quick,
            "--full" => cfg.mode = Mode::Full,
            "--only" => only.extend(value("--only")?.split(',').map(str::to_string)),
            "--seed" => {
                let v = value("--seed")?;
                cfg.seed = v
                    .parse()
                    .map_err(|_| format!("--seed: `{v}` is not a u64"))?;
            }
            "--jobs" => {
                let v = value("--jobs")?;
                cfg.jobs = v
                    .parse()
                    .ok()
                    .filter(|j| *j >= 1)
                    .ok_or_else(|| format!("--jobs: `{v}` is not a positive integer"))?;
            }
            "--data-dir" => cfg.data_dir = Some(PathBuf::from(value("--data-dir")?)),
            "--out" => out = PathBuf::from(value("--out")?),
            "--cache" => cache = CacheChoice::File(PathBuf::from(value("--cache")?)),
            "--no-cache" => cache = CacheChoice::Off,
            "--stop-after" => {
                let v = value("--stop-after")?;
                stop_after = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|m| m.is_finite() && *m > 0.0)
                        .ok_or_else(|| {
                            format!("--stop-after: `{v}` is not a positive number of minutes")
                        })?,
                );
            }
            "--refit" => {
                for name in value("--refit")?.split(',') {
                    if bulwark_eval::Learner::named(name).is_err() {
                        return Err(format!("--refit: unknown learner `{name}`\n{USAGE}"));
                    }
                    cfg.refit.push(name.to_string());
                }
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if let Some(bad) = only.iter().find(|n| !ALL.contains(&n.as_str())) {
        return Err(format!(
            "--only: unknown experiment `{bad}` (one of {})",
            ALL.join(", ")
        ));
    }
    Ok(Args {
        cfg,
        only,
        out,
        cache,
        stop_after,
    })
}

/// Progress bars (indicatif), one per experiment; plain lines when stderr is not a terminal.
struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    /// The plain progress lines' state (hidden bars only).
    plain: Mutex<Plain>,
}

/// When the last plain progress line was printed, and since when (and from which unit) the
/// experiment's units have run in this sitting.
struct Plain {
    last_line: Option<Instant>,
    since: Instant,
    from: u64,
}

impl Plain {
    fn new() -> Self {
        Self {
            last_line: None,
            since: Instant::now(),
            from: 0,
        }
    }

    /// The time left at this sitting's mean rate (units finished per wall-clock second, every
    /// worker together). indicatif's own estimate follows the last few units, which finish in
    /// bursts with several workers, and swung between minutes and hours.
    fn eta(&self, pos: u64, len: u64) -> Option<Duration> {
        let done = pos.checked_sub(self.from).filter(|&d| d > 0)?;
        let per_unit = self.since.elapsed().as_secs_f64() / done as f64;
        Some(Duration::from_secs_f64(
            per_unit * len.saturating_sub(pos) as f64,
        ))
    }
}

impl Observer for Bars {
    fn on_start(&self, experiment: &str, total: u64) {
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix:>24} [{bar:30}] {pos}/{len} {elapsed_precise} (ETA {eta}) {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        pb.set_prefix(experiment.to_string());
        *self.plain.lock().expect("plain") = Plain::new();
        pb.enable_steady_tick(Duration::from_millis(500));
        if let Some(old) = self.bar.lock().expect("bar").replace(pb) {
            old.finish();
        }
    }
    fn on_resume(&self, experiment: &str, cached: u64) {
        if let Some(pb) = &*self.bar.lock().expect("bar") {
            pb.println(format!(
                "  {experiment}: {cached} of {} units found in the cache",
                pb.length().unwrap_or(0)
            ));
            pb.set_position(cached);
            pb.reset_eta();
            let mut plain = self.plain.lock().expect("plain");
            (plain.since, plain.from) = (Instant::now(), cached);
        }
    }
    fn on_unit(&self, experiment: &str, what: &str) {
        if let Some(pb) = &*self.bar.lock().expect("bar") {
            pb.set_message(what.to_string());
            pb.inc(1);
            if pb.is_hidden() {
                let (pos, len) = (pb.position(), pb.length().unwrap_or(0));
                let mut plain = self.plain.lock().expect("plain");
                if pos == len || plain.last_line.is_none_or(|t| t.elapsed() >= PLAIN_EVERY) {
                    plain.last_line = Some(Instant::now());
                    let eta = plain
                        .eta(pos, len)
                        .map_or("unknown".into(), |d| FormattedDuration(d).to_string());
                    eprintln!(
                        "{experiment:>12}: {pos}/{len} units, {} elapsed, ETA {eta} (last: {what})",
                        FormattedDuration(pb.elapsed()),
                    );
                }
            }
        }
    }
    fn on_note(&self, experiment: &str, note: &str) {
        match &*self.bar.lock().expect("bar") {
            Some(pb) => pb.println(format!("  note ({experiment}): {note}")),
            None => eprintln!("  note ({experiment}): {note}"),
        }
    }
}

impl Bars {
    fn finish(&self) {
        if let Some(pb) = self.bar.lock().expect("bar").take() {
            pb.finish_and_clear();
        }
    }
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // a panic inside a learner is caught and recorded as a failed fit; print it on one line
    std::panic::set_hook(Box::new(|info| eprintln!("  panic caught: {info}")));
    let start = Instant::now();
    let mut cfg = args.cfg.clone();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // the first signal stops new units; a second one, with the flag set, ends the process
        let installed = signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(EXIT_INTERRUPTED),
            cfg.cancel.flag(),
        )
        .and_then(|_| signal_hook::flag::register(sig, cfg.cancel.flag()));
        if let Err(e) = installed {
            eprintln!("warning: Ctrl-C will end the run at once (no handler: {e})");
        }
    }
    let cache_path = match (&args.cache, cfg.mode) {
        (CacheChoice::File(p), _) => Some(p.clone()),
        (CacheChoice::Default, Mode::Full) => Some(args.out.join("cache-full.jsonl")),
        (CacheChoice::Default, Mode::Quick) | (CacheChoice::Off, _) => None,
    };
    if let Some(p) = &cache_path {
        match UnitCache::open(p) {
            Ok(c) => {
                println!(
                    "unit cache {}: {} finished unit(s){}",
                    p.display(),
                    c.len(),
                    match c.skipped_lines() {
                        0 => String::new(),
                        k => format!(", {k} unreadable line(s) skipped (those units run again)"),
                    }
                );
                cfg.cache = Some(Arc::new(c));
            }
            Err(e) => {
                eprintln!("cannot open the unit cache: {e}");
                return ExitCode::from(2);
            }
        }
    }
    cfg.deadline = args
        .stop_after
        .map(|m| start + Duration::from_secs_f64(m * 60.0));
    let cfg = &cfg;
    let names: Vec<&str> = if args.only.is_empty() {
        ALL.to_vec()
    } else {
        ALL.iter()
            .copied()
            .filter(|n| args.only.iter().any(|o| o == n))
            .collect()
    };
    println!(
        "reproduce --{} (seed {}, {} worker thread(s), data dir {}) -> {}",
        cfg.mode.as_str(),
        cfg.seed,
        cfg.jobs,
        cfg.data_dir
            .as_ref()
            .map_or("none (embedded wdbc/spambase only)".into(), |d| d
                .display()
                .to_string()),
        args.out.display()
    );
    if cfg.mode == Mode::Quick {
        println!(
            "quick mode: fewer splits, a subset of the digit pairs, capped training sets, coarser C grids (each experiment's notes list its reductions)"
        );
    }
    let bars = Bars {
        bar: Mutex::new(None),
        plain: Mutex::new(Plain::new()),
    };
    let mut summary = Vec::new();
    let mut failed = 0;
    let mut incomplete = 0;
    for name in &names {
        if cfg.cancel.is_requested() {
            break;
        }
        let t = Instant::now();
        let outcome = run(name, cfg, &bars);
        bars.finish();
        let secs = t.elapsed().as_secs_f64();
        let status = match outcome {
            Outcome::Done(res) => match report::write_all(&res, &args.out) {
                Ok(files) => {
                    println!("{name:>12}: done in {secs:.1} s, {} files", files.len());
                    if name == &"synth1" {
                        let s = &res.summary;
                        println!(
                            "              SVM {:.3} ± {:.3} (paper 0.477 ± 0.004), LP N=20 {:.3} ± {:.3} (paper 0.22 ± 0.002)",
                            s["svm"]["mean"].as_f64().unwrap_or(f64::NAN),
                            s["svm"]["stderr"].as_f64().unwrap_or(f64::NAN),
                            s["lp_n20"]["mean"].as_f64().unwrap_or(f64::NAN),
                            s["lp_n20"]["stderr"].as_f64().unwrap_or(f64::NAN),
                        );
                    }
                    "ok".to_string()
                }
                Err(e) => {
                    failed += 1;
                    eprintln!("{name:>12}: FAILED writing results: {e}");
                    format!("failed: {e}")
                }
            },
            Outcome::MissingData { message, .. } => {
                println!("{name:>12}: skipped — {message}");
                format!("missing data: {message}")
            }
            Outcome::Failed(e) => {
                failed += 1;
                eprintln!("{name:>12}: FAILED: {e}");
                format!("failed: {e}")
            }
            Outcome::Incomplete { done, total } if cfg.cancel.is_requested() => {
                incomplete += 1;
                format!("interrupted: {done} of {total} units")
            }
            Outcome::Incomplete { done, total } => {
                incomplete += 1;
                println!(
                    "{name:>12}: stopped at the time limit with {done} of {total} units finished (kept in the cache); run the same command again to resume"
                );
                format!("incomplete: {done} of {total} units")
            }
        };
        let mut record = serde_json::json!({"experiment": name, "status": status, "seconds": secs});
        if let Some(c) = &cfg.cache {
            // compute of the experiment's units over every sitting (one worker each)
            record["unit_seconds"] = serde_json::json!(c.seconds(Some(name)));
        }
        summary.push(record);
    }
    let total = start.elapsed().as_secs_f64();
    println!(
        "total runtime {total:.1} s ({:.1} min) for {} experiment(s); {} failed",
        total / 60.0,
        names.len(),
        failed
    );
    let path = args.out.join(format!("run-{}.json", cfg.mode.as_str()));
    let record = if args.only.is_empty() && incomplete == 0 {
        let mut run = serde_json::json!({
            "mode": cfg.mode.as_str(),
            "seed": cfg.seed,
            "jobs": cfg.jobs,
            "total_seconds": total,
            "experiments": summary,
        });
        if let Some(c) = &cfg.cache {
            // the units of every sitting, each timed on one worker
            run["unit_seconds"] = serde_json::json!(c.seconds(None));
            run["cache"] = serde_json::json!(c.path().display().to_string());
        }
        Some(run)
    } else if incomplete == 0 && failed == 0 {
        // an `--only` run updates its experiments' records in the last whole run's (of the
        // same seed), so the recorded total compute stays that of the cache
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter(|r| r["seed"].as_u64() == Some(cfg.seed))
            .map(|mut run| {
                let units = cfg.cache.as_ref().map(|c| c.seconds(None));
                report::merge_rerun(&mut run, &summary, units);
                run
            })
    } else {
        None
    };
    if let Some(run) = record {
        let text = serde_json::to_string_pretty(&run).expect("json") + "\n";
        if let Err(e) = write_atomic(&path, text.as_bytes()) {
            eprintln!("cannot record the runtime: {e}");
        }
    }
    if cfg.cancel.is_requested() {
        eprintln!(
            "interrupted: {}",
            match &cfg.cache {
                Some(c) => format!(
                    "{} finished unit(s) kept in {}; run the same command again to resume",
                    c.len(),
                    c.path().display()
                ),
                None => "no unit cache (--full keeps one): the finished units are lost".into(),
            }
        );
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    if failed > 0 {
        ExitCode::from(1)
    } else if incomplete > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}
