//! `cargo xtask bench pairs`: LP (4) on every pair of Fashion-MNIST classes (45 tasks of 12 000
//! training images each, `N = 50`, `C = 1`, min-max scaling), as `bulwark train` fits them —
//! example screening at its defaults, the fallback chain on — written to `docs/perf-pairs.md`
//! (issue 20's acceptance: every pair solved by the structured IPM within its iteration limit,
//! with no fallback).
//!
//! The runner is `bulwark-deletion`'s `lp_bench` example (case `fashion-A-B`), one process per
//! pair on every core, so each peak RSS is that pair's; Fashion-MNIST is installed as for
//! `bench sweep`. All 45 take hours on two cores, so the run can be split into sittings: every
//! finished pair is appended to `docs/perf-pairs.jsonl` with the commit it ran at (committed
//! beside the page, so a sitting on another machine goes on where the last one stopped). A run
//! does only the pairs not in that file yet; `--fresh` starts over, `--only 0-6,2-4` runs (or
//! reruns) the pairs named, `--stop-after MINUTES` starts no pair after that many minutes, and
//! `--render-only` writes the page from the file as it is. The page says how many of the 45 it
//! holds.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::bench::{BenchFiles, cargo, commit, load_average, num, provenance, text};
use crate::project_root;
use crate::sweep::fashion_mnist;

/// Fashion-MNIST's class names, by label.
const CLASSES: [&str; 10] = [
    "T-shirt",
    "trouser",
    "pullover",
    "dress",
    "coat",
    "sandal",
    "shirt",
    "sneaker",
    "bag",
    "ankle boot",
];

/// Wall-clock limit of each solver attempt, in seconds (as `bench lp`'s real cases).
const TIME_LIMIT: f64 = 1800.0;

/// Issue 20's memory target: peak RSS at most this many times the dense f64 size of the input.
const TARGET_RSS_OVER_DENSE: f64 = 10.0;

/// Every pair `A < B` of the ten classes, as `lp_bench` names it (`A-B`).
fn all_pairs() -> Vec<String> {
    (0..10)
        .flat_map(|a| (a + 1..10).map(move |b| format!("{a}-{b}")))
        .collect()
}

/// `A-B` with two different classes in `0..=9`, normalised to `A < B`.
fn parse_pair(s: &str) -> Result<String, String> {
    let bad = || format!("`{s}` is not a pair of two different classes A-B in 0..=9");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let (a, b) = (
        a.parse::<u8>().map_err(|_| bad())?,
        b.parse::<u8>().map_err(|_| bad())?,
    );
    if a > 9 || b > 9 || a == b {
        return Err(bad());
    }
    Ok(format!("{}-{}", a.min(b), a.max(b)))
}

/// The options of `bench pairs`.
#[derive(Debug, PartialEq)]
struct Options {
    fresh: bool,
    render_only: bool,
    stop_after: Option<f64>,
    only: Option<Vec<String>>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        fresh: false,
        render_only: false,
        stop_after: None,
        only: None,
    };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--fresh" => o.fresh = true,
            "--render-only" => o.render_only = true,
            "--stop-after" => {
                let m = it
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|m| *m >= 0.0)
                    .ok_or("`--stop-after` needs a number of minutes ≥ 0")?;
                o.stop_after = Some(m);
            }
            "--only" => {
                let list = it
                    .next()
                    .ok_or("`--only` needs a list of pairs, e.g. 0-6,2-4")?;
                o.only = Some(list.split(',').map(parse_pair).collect::<Result<_, _>>()?);
            }
            other => return Err(format!("unknown option `{other}`\n{}", crate::USAGE)),
        }
    }
    Ok(o)
}

/// The pair (`A-B`) of a results line.
fn pair_of(line: &str) -> Option<String> {
    text(line, "pair")
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    let root = project_root();
    let mut files = BenchFiles::new(&root, "pairs")?;
    // the finished pairs are kept beside the page (module docs)
    files.results = root.join("docs/perf-pairs.jsonl");
    let render = |files: &BenchFiles| -> Result<(), String> {
        let lines = files.results()?;
        files.write_page(&render(&lines, &provenance(&root, args)))
    };
    if opts.render_only {
        return render(&files);
    }
    let fashion = fashion_mnist(&root)?;
    let done: Vec<String> = std::fs::read_to_string(&files.results)
        .unwrap_or_default()
        .lines()
        .filter_map(pair_of)
        .collect();
    let todo: Vec<String> = match &opts.only {
        Some(list) => list.clone(),
        None if opts.fresh => {
            let _ = std::fs::remove_file(&files.results);
            all_pairs()
        }
        None => all_pairs()
            .into_iter()
            .filter(|p| !done.contains(p))
            .collect(),
    };
    // (a rerun of a pair replaces its line)
    if opts.only.is_some() {
        let kept: String = std::fs::read_to_string(&files.results)
            .unwrap_or_default()
            .lines()
            .filter(|l| pair_of(l).is_none_or(|p| !todo.contains(&p)))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&files.results, kept).map_err(|e| e.to_string())?;
    }
    let commit = commit(&root);
    let started = Instant::now();
    for (k, pair) in todo.iter().enumerate() {
        let elapsed = started.elapsed().as_secs_f64();
        if opts.stop_after.is_some_and(|m| elapsed >= 60.0 * m) {
            println!(
                "stopped after {:.0} min with {} pair(s) left; run the same command again to go on",
                elapsed / 60.0,
                todo.len() - k
            );
            break;
        }
        let eta = if k == 0 {
            String::new()
        } else {
            format!(
                ", about {:.0} min left",
                elapsed / k as f64 * (todo.len() - k) as f64 / 60.0
            )
        };
        println!(
            "[{}/{}] Fashion-MNIST {pair} ({:.0} min so far{eta}) …",
            k + 1,
            todo.len(),
            elapsed / 60.0
        );
        let line = run_pair(&root, &files, &fashion, pair, &commit);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&files.results)
            .and_then(|mut f| writeln!(f, "{line}"))
            .map_err(|e| format!("{}: {e}", files.results.display()))?;
    }
    render(&files)
}

/// One pair through `lp_bench`: its JSON line with the pair, the commit and the load average
/// around it added (or, when the runner died, a line that says so).
fn run_pair(root: &Path, files: &BenchFiles, fashion: &Path, pair: &str, commit: &str) -> String {
    let out = files.dir.join(format!("pairs-{pair}.json"));
    let _ = std::fs::remove_file(&out);
    let load_before = load_average();
    let t = Instant::now();
    let status = Command::new(cargo())
        .args(["run", "--quiet", "--release", "-p", "bulwark-deletion"])
        .args(["--example", "lp_bench", "--", &format!("fashion-{pair}")])
        .arg(&out)
        .env(
            "LP_BENCH_FASHION",
            fashion.join("train-images-idx3-ubyte.gz"),
        )
        .env("LP_BENCH_TIME_LIMIT", TIME_LIMIT.to_string())
        .env_remove("RAYON_NUM_THREADS")
        .current_dir(root)
        .status();
    let extra = format!(
        "\"pair\":\"{pair}\",\"commit\":\"{commit}\",\"load_before\":{load_before:.2},\"load_after\":{:.2}",
        load_average()
    );
    match (status, std::fs::read_to_string(&out)) {
        (Ok(s), Ok(json)) if s.success() && json.trim_end().ends_with('}') => {
            let json = json.trim_end();
            format!("{},{extra}}}", &json[..json.len() - 1])
        }
        (status, _) => {
            let why = match status {
                Ok(s) => format!("the runner failed ({s})"),
                Err(e) => format!("the runner could not start ({e})"),
            };
            format!(
                "{{\"case\":\"fashion-{pair}\",\"runner_failed\":\"{why}\",\"seconds\":{:.1},{extra}}}",
                t.elapsed().as_secs_f64()
            )
        }
    }
}

/// How a pair was answered, for the table and the counts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    /// The structured IPM, no fallback, converged.
    Structured,
    /// Another solver of the chain answered, or the IPM's answer is not converged.
    Other,
    /// No solver answered, or the runner died.
    None,
}

/// Whether a results line's answer converged.
fn converged(l: &str) -> bool {
    l.contains("\"converged\":true")
}

fn answer(l: &str) -> Answer {
    let solver = text(l, "solver").unwrap_or_default();
    let fallbacks = text(l, "fallbacks").unwrap_or_default();
    let converged = converged(l);
    if text(l, "runner_failed").is_some() || text(l, "error").is_some() {
        Answer::None
    } else if solver == "dsx-ipm" && fallbacks.is_empty() && converged {
        Answer::Structured
    } else {
        Answer::Other
    }
}

fn render(lines: &str, provenance: &str) -> String {
    let rows: Vec<&str> = lines.lines().filter(|l| pair_of(l).is_some()).collect();
    let mut md = String::from("# Every pair of Fashion-MNIST classes\n\n");
    let _ = writeln!(md, "{provenance}\n");
    md.push_str(
        "LP (4) on each pair of the ten Fashion-MNIST classes (the Debian package \
         `dataset-fashion-mnist`'s 60 000 training images; 12 000 examples × 784 features per \
         pair, min-max scaling, uniform feature values, `N = 50`, `C = 1`), fitted as `bulwark \
         train` fits it: example screening at its defaults, the fallback chain on, each solver \
         attempt limited to 1800 s, every core. Issue 20's acceptance: every pair solved by the \
         structured IPM within its iteration limit, with no fallback. A screening that gives up \
         is not a fallback: the same solver then answers the whole LP. Rows may come from \
         different sittings (a run does the pairs not yet done); each names its commit and the load average before \
         and after it, since seconds compare only between runs on an otherwise idle machine.\n\n",
    );
    let count = |a: Answer| rows.iter().filter(|l| answer(l) == a).count();
    let certified = rows
        .iter()
        .filter(|l| num(l, "screening_rounds") > 0.0 && num(l, "screening_gave_up") == 0.0)
        .count();
    let gave_up = rows
        .iter()
        .filter(|l| num(l, "screening_gave_up") > 0.0)
        .count();
    let its: Vec<f64> = rows.iter().map(|l| num(l, "iterations")).collect();
    let secs: f64 = rows
        .iter()
        .map(|l| num(l, "seconds"))
        .filter(|s| s.is_finite())
        .sum();
    let worst_rss = rows
        .iter()
        .map(|l| num(l, "peak_rss_mib") / dense_mib(l))
        .filter(|r| r.is_finite())
        .fold(0.0f64, f64::max);
    let _ = writeln!(
        md,
        "**{} of the 45 pairs in this file. Solved by the structured IPM with no fallback: {}; \
         answered by another solver or not converged: {}; not answered: {}.** Screening \
         certified {} of them on working sets of examples and gave up on {} (the whole LP \
         solved). Iterations, every LP of a fit counted: at most {}. Seconds summed over the \
         rows: {:.0} ({:.1} h). Peak RSS at most {:.1} times the dense input (issue 20: at \
         most {TARGET_RSS_OVER_DENSE}).\n",
        rows.len(),
        count(Answer::Structured),
        count(Answer::Other),
        count(Answer::None),
        certified,
        gave_up,
        its.iter()
            .copied()
            .filter(|i| i.is_finite())
            .fold(0.0f64, f64::max),
        secs,
        secs / 3600.0,
        worst_rss,
    );
    let missing: Vec<String> = all_pairs()
        .into_iter()
        .filter(|p| !rows.iter().any(|l| pair_of(l).as_deref() == Some(p)))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            md,
            "Not yet run ({}; `cargo xtask bench pairs` runs them): {}.\n",
            missing.len(),
            missing.join(", ")
        );
    }
    md.push_str(
        "| pair | solver that answered | fallbacks | converged | screening | iterations | seconds | peak RSS MiB | RSS / dense input | certified by a repaired dual point (the iterate's dual residual) | commit | load before / after |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for l in &rows {
        let pair = pair_of(l).unwrap_or_default();
        let names = pair
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .map(|(a, b)| format!("{a}/{b} {}/{}", CLASSES[a], CLASSES[b]))
            .unwrap_or(pair.clone());
        if let Some(why) = text(l, "runner_failed") {
            let _ = writeln!(
                md,
                "| {names} | none: {why} | | | | | {:.1} | | | | {} | {:.1} / {:.1} |",
                num(l, "seconds"),
                text(l, "commit").unwrap_or_default(),
                num(l, "load_before"),
                num(l, "load_after"),
            );
            continue;
        }
        let screening = match (num(l, "screening_rounds"), num(l, "screening_gave_up")) {
            (r, g) if g > 0.0 => format!("{r} round(s), gave up: the whole LP"),
            (r, _) if r > 0.0 => format!("{r} round(s), certified"),
            _ => "not screened".into(),
        };
        let repaired = Some(num(l, "dual_repaired_from"))
            .filter(|r| r.is_finite())
            .map(|r| format!("{r:.1e}"))
            .unwrap_or_default();
        let solver = match text(l, "error") {
            Some(e) => format!("none: {}", e.replace('|', "/")),
            None => text(l, "solver").unwrap_or_default(),
        };
        let _ = writeln!(
            md,
            "| {names} | {solver} | {} | {} | {screening} | {} | {:.1} | {:.0} | {:.1} | {repaired} | {} | {:.1} / {:.1} |",
            text(l, "fallbacks").unwrap_or_default().replace('|', "/"),
            if converged(l) { "yes" } else { "no" },
            num(l, "iterations"),
            num(l, "seconds"),
            num(l, "peak_rss_mib"),
            num(l, "peak_rss_mib") / dense_mib(l),
            text(l, "commit").unwrap_or_default(),
            num(l, "load_before"),
            num(l, "load_after"),
        );
    }
    md
}

/// The dense f64 size of a row's input, in MiB.
fn dense_mib(l: &str) -> f64 {
    num(l, "m") * num(l, "n") * 8.0 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(pair: &str, solver: &str, fallbacks: &str, rounds: u32, gave_up: u32) -> String {
        format!(
            "{{\"case\":\"fashion-{pair}\",\"solver\":\"{solver}\",\"fallbacks\":\"{fallbacks}\",\"converged\":true,\"m\":12000,\"n\":784,\"iterations\":500,\"seconds\":200.0,\"peak_rss_mib\":600.0,\"screening_rounds\":{rounds},\"screening_gave_up\":{gave_up},\"dual_repaired_from\":null,\"pair\":\"{pair}\",\"commit\":\"abc\",\"load_before\":0.10,\"load_after\":2.00}}"
        )
    }

    #[test]
    fn all_45_pairs_and_their_names() {
        let p = all_pairs();
        assert_eq!(p.len(), 45);
        assert_eq!(p[0], "0-1");
        assert_eq!(p[44], "8-9");
        assert_eq!(parse_pair("6-0").unwrap(), "0-6");
        assert!(parse_pair("3-3").is_err());
        assert!(parse_pair("1-10").is_err());
        assert!(parse_pair("x").is_err());
    }

    #[test]
    fn options_are_checked() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = options(&args(&["pairs", "--only", "6-0,2-4", "--fresh"])).unwrap();
        assert_eq!(o.only, Some(vec!["0-6".into(), "2-4".into()]));
        assert!(o.fresh && !o.render_only);
        assert_eq!(
            options(&args(&["pairs", "--stop-after", "90"]))
                .unwrap()
                .stop_after,
            Some(90.0)
        );
        assert!(options(&args(&["pairs", "--stop-after", "-1"])).is_err());
        assert!(options(&args(&["pairs", "--only"])).is_err());
        assert!(options(&args(&["pairs", "--fast"])).is_err());
    }

    #[test]
    fn the_page_counts_how_each_pair_was_answered_and_names_the_missing() {
        let lines = [
            line("0-6", "dsx-ipm", "", 1, 1),
            line("1-4", "dsx-ipm", "", 4, 0),
            line("2-4", "hsd-engine/structured", "dsx-ipm: iteration limit", 1, 1),
            "{\"case\":\"fashion-5-8\",\"runner_failed\":\"the runner failed (signal: 9)\",\"seconds\":12.0,\"pair\":\"5-8\",\"commit\":\"abc\",\"load_before\":0.10,\"load_after\":2.00}".to_string(),
        ]
        .join("\n");
        let page = render(&lines, "prov");
        assert!(
            page.contains(
                "**4 of the 45 pairs in this file. Solved by the structured IPM with no fallback: 2; \
                 answered by another solver or not converged: 1; not answered: 1.** Screening \
                 certified 1 of them on working sets of examples and gave up on 2"
            ),
            "{page}"
        );
        assert!(page.contains("Not yet run (41;"), "{page}");
        assert!(page.contains(
            "| 1/4 trouser/coat | dsx-ipm |  | yes | 4 round(s), certified | 500 | 200.0 | 600 | 8.4 |  | abc | 0.1 / 2.0 |"
        ), "{page}");
        assert!(
            page.contains("| 5/8 sandal/bag | none: the runner failed (signal: 9) |"),
            "{page}"
        );
        assert!(page.contains("gave up: the whole LP"), "{page}");
    }
}
