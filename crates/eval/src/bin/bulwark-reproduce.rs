//! `bulwark-reproduce [--quick|--full] [--only NAME[,NAME…]] [--seed S] [--data-dir DIR]
//! [--out DIR] [--jobs J]` — regenerates the tables and figures of Dekel, Shamir & Xiao (2010)
//! and Dekel & Shamir (ICML 2008). Usually run through `cargo xtask reproduce`.
//!
//! Exit status: 0 when every experiment ran or was skipped for missing data, 1 when an
//! experiment failed for another reason, 2 on bad arguments.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bulwark_eval::io::write_atomic;
use bulwark_eval::{ALL, Mode, Observer, Outcome, RunConfig, report, run};
use indicatif::{ProgressBar, ProgressStyle};

const USAGE: &str = "usage: bulwark-reproduce [--quick|--full] [--only NAME[,NAME...]] [--seed S] [--data-dir DIR] [--out DIR] [--jobs J]
  experiments: synth1 synth2 breast spam icml_random usps mnist";

struct Args {
    cfg: RunConfig,
    only: Vec<String>,
    out: PathBuf,
}

fn parse() -> Result<Args, String> {
    let mut cfg = RunConfig::quick(0);
    cfg.data_dir = bulwark_data::data_dir(None);
    cfg.jobs = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let mut only = Vec::new();
    let mut out = PathBuf::from("docs/results");
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
    Ok(Args { cfg, only, out })
}

/// Progress bars (indicatif), one per experiment.
struct Bars {
    bar: Mutex<Option<ProgressBar>>,
}

impl Observer for Bars {
    fn on_start(&self, experiment: &str, total: u64) {
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix:>24} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        pb.set_prefix(experiment.to_string());
        pb.enable_steady_tick(Duration::from_millis(500));
        if let Some(old) = self.bar.lock().expect("bar").replace(pb) {
            old.finish();
        }
    }
    fn on_unit(&self, _experiment: &str, what: &str) {
        if let Some(pb) = &*self.bar.lock().expect("bar") {
            pb.set_message(what.to_string());
            pb.inc(1);
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
    let cfg = &args.cfg;
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
    let start = Instant::now();
    let bars = Bars {
        bar: Mutex::new(None),
    };
    let mut summary = Vec::new();
    let mut failed = 0;
    for name in &names {
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
        };
        summary.push(serde_json::json!({"experiment": name, "status": status, "seconds": secs}));
    }
    let total = start.elapsed().as_secs_f64();
    println!(
        "total runtime {total:.1} s ({:.1} min) for {} experiment(s); {} failed",
        total / 60.0,
        names.len(),
        failed
    );
    if args.only.is_empty() {
        let run = serde_json::json!({
            "mode": cfg.mode.as_str(),
            "seed": cfg.seed,
            "jobs": cfg.jobs,
            "total_seconds": total,
            "experiments": summary,
        });
        let path = args.out.join(format!("run-{}.json", cfg.mode.as_str()));
        let text = serde_json::to_string_pretty(&run).expect("json") + "\n";
        if let Err(e) = write_atomic(&path, text.as_bytes()) {
            eprintln!("cannot record the runtime: {e}");
        }
    }
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
