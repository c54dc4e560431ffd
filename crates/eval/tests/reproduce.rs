//! Acceptance and reproducibility of the harness (issue 8).

use bulwark_core::Dataset;
use bulwark_data::{BinaryTask, binary_task, load};
use bulwark_eval::curve::{AttackMode, CurveSpec, Scaling, Values};
use bulwark_eval::experiments::{Synth1Config, TextConfig, curve_study, synth1_with, text_with};
use bulwark_eval::{Learner, Outcome, RunConfig, Silent, report, run};

fn cfg(jobs: usize) -> RunConfig {
    let mut c = RunConfig::quick(7);
    c.jobs = jobs;
    c
}

/// DSX §4.1 with 20 repetitions: LP (N = 20) in [0.19, 0.27], SVM ≥ 0.38, SVM − LP ≥ 0.12; the
/// JSON carries the `svm` / `lp_n20` summary.
#[test]
fn synth1_meets_the_acceptance_thresholds() {
    let mut sc = Synth1Config::for_mode(bulwark_eval::Mode::Quick);
    sc.repetitions = 20;
    let res = synth1_with(&sc, &cfg(2), &Silent).unwrap();
    let svm = res.summary["svm"]["mean"].as_f64().unwrap();
    let lp = res.summary["lp_n20"]["mean"].as_f64().unwrap();
    assert!((0.19..=0.27).contains(&lp), "LP error {lp}");
    assert!(svm >= 0.38, "SVM error {svm}");
    assert!(svm - lp >= 0.12, "gap {}", svm - lp);
    // removing one label copy: the paper reports 0 for both; the SVM keeps half its weight on
    // the other copy, the LP (which hedges) stays near 0
    let one: Vec<f64> = res
        .rows
        .iter()
        .filter(|r| r.attack == "one copy removed")
        .map(|r| r.error.mean)
        .collect();
    assert_eq!(one.len(), 2);
    assert_eq!(one[0], 0.0, "SVM, one copy removed");
    assert!(one[1] < 0.05, "LP, one copy removed: {}", one[1]);

    let dir = std::env::temp_dir().join(format!("bulwark-eval-synth1-{}", std::process::id()));
    let files = report::write_all(&res, &dir).unwrap();
    assert_eq!(files.len(), 3, "json, csv, md");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("synth1.json")).unwrap()).unwrap();
    assert_eq!(json["summary"]["svm"]["mean"].as_f64(), Some(svm));
    assert!(json["summary"]["lp_n20"]["stderr"].as_f64().unwrap() > 0.0);
    assert_eq!(json["mode"], "quick");
    assert_eq!(json["seed"], 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tiny_breast() -> Dataset {
    let (raw, _) = load("wdbc", None).unwrap();
    binary_task(&raw, &BinaryTask::Natural).unwrap()
}

fn tiny_spec() -> CurveSpec {
    CurveSpec {
        learners: Learner::lineup(&["lp", "o2b", "svm"]).unwrap(),
        attacks: vec![AttackMode::Deletion, AttackMode::Corruption],
        budgets: vec![0.0, 3.0],
        grid: vec![0.1, 1.0],
        splits: 3,
        validation: 0.15,
        test: 0.3,
        caps: [Some(120), Some(60), Some(150)],
        min_df: None,
        scaling: Scaling::Standard,
        values: Values::MutualInformation,
        sparse: false,
    }
}

/// Same seed → identical numbers, whatever the thread count; another seed → other numbers.
#[test]
fn same_seed_same_numbers() {
    let tasks = vec![("breast".to_string(), tiny_breast())];
    let spec = tiny_spec();
    let a = curve_study("tiny", &tasks, &spec, &cfg(1), &Silent).unwrap();
    let b = curve_study("tiny", &tasks, &spec, &cfg(2), &Silent).unwrap();
    assert_eq!(a.rows, b.rows);
    assert_eq!(a.rows.len(), 3 * 2 * 2);
    let mut other = cfg(2);
    other.seed = 8;
    let c = curve_study("tiny", &tasks, &spec, &other, &Silent).unwrap();
    assert_ne!(a.rows, c.rows);
    // deletion at N = 0 is the clean error, the same for both attacks
    for l in ["LP", "O2B", "SVM"] {
        let at0: Vec<f64> = a
            .rows
            .iter()
            .filter(|r| r.learner == l && r.budget == 0.0)
            .map(|r| r.error.mean)
            .collect();
        assert_eq!(at0.len(), 2);
        assert_eq!(at0[0], at0[1], "{l}");
    }
    // and the CSV / Markdown carry every row
    let csv = report::to_csv(&a).unwrap();
    assert_eq!(csv.lines().count(), 1 + a.rows.len());
    assert!(report::to_markdown(&a).contains("| N | LP | O2B | SVM |"));
}

/// The `text` experiment on a small slice of the SpamAssassin words: one table per value kind
/// (`uniform`, `mi`), every learner, attack and budget in each, the clean error shared by both
/// attacks, and the protocol naming the words that carry the most information.
#[test]
fn text_runs_each_value_kind_on_the_words() {
    let mut tc = TextConfig::for_mode(bulwark_eval::Mode::Quick).unwrap();
    tc.spec.learners = Learner::lineup(&["lp", "svm"]).unwrap();
    tc.spec.budgets = vec![0.0, 5.0];
    tc.spec.grid = vec![0.1, 1.0];
    tc.spec.splits = 1;
    tc.spec.caps = [Some(150), Some(80), Some(200)];
    tc.spec.min_df = Some(8);
    let res = text_with(&tc, &cfg(2), &Silent).unwrap();
    for task in ["uniform", "mi"] {
        let rows: Vec<_> = res
            .rows
            .iter()
            .filter(|r| r.task.as_deref() == Some(task))
            .collect();
        assert_eq!(
            rows.len(),
            2 * 2 * 2,
            "{task}: learners x attacks x budgets"
        );
        for l in ["LP", "SVM"] {
            let at0: Vec<f64> = rows
                .iter()
                .filter(|r| r.learner == l && r.budget == 0.0)
                .map(|r| r.error.mean)
                .collect();
            assert_eq!(at0.len(), 2);
            assert_eq!(at0[0], at0[1], "{task} {l}");
            assert!(at0[0] < 0.2, "{task} {l}: clean error {}", at0[0]);
        }
    }
    let words = res.summary["top_mi_words"].as_array().unwrap();
    assert_eq!(words.len(), 12);
    let named: Vec<&str> = words.iter().map(|w| w["word"].as_str().unwrap()).collect();
    assert!(
        named.contains(&"click") && named.contains(&"remove"),
        "{named:?}"
    );
    assert!(
        res.protocol
            .iter()
            .any(|p| p.contains("the words in at least 8 e-mails of the training part")),
        "{:?}",
        res.protocol
    );
    let md = report::to_markdown(&res);
    assert!(md.contains("## Test error under mi, deletion") && md.contains("| N | LP | SVM |"));
    let svgs: Vec<String> = report::plots(&res).into_iter().map(|(f, _)| f).collect();
    assert!(
        svgs.contains(&"text_uniform_deletion.svg".to_string()),
        "{svgs:?}"
    );
    assert!(
        svgs.contains(&"text_mi_corruption.svg".to_string()),
        "{svgs:?}"
    );
}

/// A data set missing from the data directory is reported as such — naming the file and where
/// to get it — and is not a failure; experiments on embedded data still run.
#[test]
fn missing_data_is_named_and_not_a_failure() {
    let empty = std::env::temp_dir().join(format!("bulwark-eval-nodata-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let mut c = cfg(1);
    c.data_dir = Some(empty.clone());
    match run("usps", &c, &Silent) {
        Outcome::MissingData { dataset, message } => {
            assert_eq!(dataset, "usps");
            assert!(message.contains("usps/usps_1100.csv.gz"), "{message}");
            assert!(message.contains("DATA.md"), "{message}");
        }
        other => panic!("expected missing data, got {other:?}"),
    }
    match run("nonsense", &c, &Silent) {
        Outcome::Failed(e) => assert!(e.to_string().contains("synth1")),
        other => panic!("expected a failure, got {other:?}"),
    }
    std::fs::remove_dir_all(&empty).unwrap();
}

/// Counts the units an observer was told came from the cache.
#[derive(Default)]
struct Resumed(std::sync::atomic::AtomicU64);

impl bulwark_eval::Observer for Resumed {
    fn on_resume(&self, _experiment: &str, cached: u64) {
        self.0
            .fetch_add(cached, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The unit cache of `reproduce --full`: a run stopped by its deadline keeps nothing half-done
/// and reports how far it got; the next run finishes, storing every unit; a run after that takes
/// every unit from the cache and gives the same table as a run without one; an unreadable line
/// (a run killed while writing) is skipped and counted.
#[test]
fn the_unit_cache_resumes_a_run_with_the_same_results() {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    let dir = std::env::temp_dir().join(format!("bulwark-eval-cache-{}", std::process::id()));
    let path = dir.join("cache.jsonl");
    let _ = std::fs::remove_dir_all(&dir);
    let with_cache = |deadline: Option<std::time::Instant>| {
        let mut c = cfg(2);
        c.cache = Some(Arc::new(bulwark_eval::UnitCache::open(&path).unwrap()));
        c.deadline = deadline;
        c
    };
    let units = match run(
        "breast",
        &with_cache(Some(std::time::Instant::now())),
        &Silent,
    ) {
        Outcome::Incomplete { done, total } => {
            assert_eq!(done, 0, "no unit starts after the deadline");
            assert!(total >= 5, "{total} units");
            total
        }
        other => panic!("expected an incomplete run, got {other:?}"),
    };
    let first = match run("breast", &with_cache(None), &Silent) {
        Outcome::Done(r) => r,
        other => panic!("expected a finished run, got {other:?}"),
    };
    let cache = bulwark_eval::UnitCache::open(&path).unwrap();
    assert_eq!(cache.len(), units, "every unit stored once");
    assert!(cache.seconds(Some("breast")) > 0.0);
    assert_eq!(cache.seconds(Some("spam")), 0.0);
    drop(cache);
    let resumed = Resumed::default();
    let second = match run("breast", &with_cache(None), &resumed) {
        Outcome::Done(r) => r,
        other => panic!("expected a finished run, got {other:?}"),
    };
    assert_eq!(resumed.0.load(Ordering::Relaxed), units as u64);
    let plain = match run("breast", &cfg(1), &Silent) {
        Outcome::Done(r) => r,
        other => panic!("expected a finished run, got {other:?}"),
    };
    assert_eq!(first.rows, plain.rows, "the cache does not change a result");
    assert_eq!(second.rows, plain.rows, "cached units give the same table");
    assert_eq!(second.solver, plain.solver);
    // the resumed run's header gives the units' compute over both sittings, not its own
    // (near-zero) wall time alone
    let compute = second
        .unit_seconds
        .expect("a cached run records its units' compute");
    assert!(
        compute > second.runtime_seconds,
        "{compute} vs {}",
        second.runtime_seconds
    );
    let header = bulwark_eval::report::header(&second);
    assert!(
        header.contains(&format!(
            "{compute:.1} s of unit compute over every sitting"
        )),
        "{header}"
    );
    assert_eq!(plain.unit_seconds, None);
    assert!(bulwark_eval::report::header(&plain).contains("; runtime "));
    // a line cut short by a killed run
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"key\":\"breast/breast/0/00");
    std::fs::write(&path, text).unwrap();
    let cache = bulwark_eval::UnitCache::open(&path).unwrap();
    assert_eq!((cache.len(), cache.skipped_lines()), (units, 1));
    drop(cache);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--refit`: after a learner's cells in the cached units went stale (here: overwritten, as a
/// change to its solver would leave them), a run with `refit = ["fdrop"]` recomputes exactly that
/// learner's cells — FDROP's rows come back equal to a run without the cache, the LP's stay as
/// the cache holds them — records the refit in each unit, and a second refit run has nothing
/// left to do (it finishes even past its deadline).
#[test]
fn a_refit_recomputes_one_learners_cells_and_keeps_the_others() {
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("bulwark-eval-refit-{}", std::process::id()));
    let path = dir.join("cache.jsonl");
    let _ = std::fs::remove_dir_all(&dir);
    let with_cache = |refit: &[&str], deadline: Option<std::time::Instant>| {
        let mut c = cfg(2);
        c.cache = Some(Arc::new(bulwark_eval::UnitCache::open(&path).unwrap()));
        c.refit = refit.iter().map(|s| s.to_string()).collect();
        c.deadline = deadline;
        c
    };
    let done = |o: Outcome| match o {
        Outcome::Done(r) => r,
        other => panic!("expected a finished run, got {other:?}"),
    };
    let plain = done(run("breast", &cfg(1), &Silent));
    done(run("breast", &with_cache(&[], None), &Silent));
    // make every FDROP and LP cell of the cache stale, and drop any refit record
    let text = std::fs::read_to_string(&path).unwrap();
    let mut stale = String::new();
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        let outcome = &mut v["outcome"];
        for cell in outcome["cells"].as_array_mut().unwrap() {
            match cell["learner"].as_str().unwrap() {
                "fdrop" => cell["error"] = serde_json::json!(0.777),
                "lp" => cell["error"] = serde_json::json!(0.555),
                _ => {}
            }
        }
        outcome.as_object_mut().unwrap().remove("refits");
        stale.push_str(&v.to_string());
        stale.push('\n');
    }
    std::fs::write(&path, stale).unwrap();
    let refit = done(run("breast", &with_cache(&["fdrop"], None), &Silent));
    let rows = |r: &bulwark_eval::ExperimentResult, learner: &str| -> Vec<f64> {
        r.rows
            .iter()
            .filter(|row| row.learner == learner)
            .map(|row| row.error.mean)
            .collect()
    };
    assert!(!rows(&plain, "FDROP").is_empty());
    assert_eq!(
        rows(&refit, "FDROP"),
        rows(&plain, "FDROP"),
        "FDROP recomputed"
    );
    assert_eq!(rows(&refit, "SVM"), rows(&plain, "SVM"), "the SVM kept");
    assert!(
        rows(&refit, "LP").iter().all(|e| (e - 0.555).abs() < 1e-12),
        "the LP kept as cached: {:?}",
        rows(&refit, "LP")
    );
    assert_eq!(
        refit.solver, plain.solver,
        "the tally with FDROP's share replaced"
    );
    // every unit records the refit; a second refit run past its deadline has nothing to do
    let cache = bulwark_eval::UnitCache::open(&path).unwrap();
    let last: std::collections::HashMap<String, serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["key"].as_str().unwrap().to_string(), v["outcome"].clone())
        })
        .collect();
    assert_eq!(last.len(), cache.len());
    assert!(
        last.values()
            .all(|o| o["refits"] == serde_json::json!(["fdrop"]))
    );
    let again = done(run(
        "breast",
        &with_cache(&["fdrop"], Some(std::time::Instant::now())),
        &Silent,
    ));
    assert_eq!(rows(&again, "FDROP"), rows(&plain, "FDROP"));
    // one unit stale again and without its record (a refit stopped part-way): a run without
    // `--refit` completes the refit the other units record instead of mixing stale cells in
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let v = lines.last_mut().unwrap();
    for cell in v["outcome"]["cells"].as_array_mut().unwrap() {
        if cell["learner"] == "fdrop" {
            cell["error"] = serde_json::json!(0.777);
        }
    }
    v["outcome"].as_object_mut().unwrap().remove("refits");
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let completed = done(run("breast", &with_cache(&[], None), &Silent));
    assert_eq!(rows(&completed, "FDROP"), rows(&plain, "FDROP"));
    let _ = std::fs::remove_dir_all(&dir);
}
