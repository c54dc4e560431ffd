//! LP (4) on a binary task of a real data set, for studying the structured IPM on real data
//! (development tool).
//!
//! `real_lp <data> <A,B|A> [per_class] [N] [C]`: a built-in name or a file (e.g. Fashion-MNIST's
//! `train-images-idx3-ubyte.gz`), the pair `A,B` (or `A` against the rest), the first
//! `per_class` examples of each class (0: all), min-max scaling, uniform values, budget `N`
//! (default 50) and box `C` (default 1), the structured IPM alone (no fallback). Prints the
//! solver, iterations, seconds (and those in the factorisations and solves), objective, the peak
//! RSS of the fit (the high-water mark is reset after loading) and the count of refined
//! directions (the peak RSS also when the fit fails). `ENGINE=1` runs the first fallback,
//! `hsd-engine/structured`, instead of the structured IPM; `MAXIT=k` sets the iteration limit.
//! `SCREEN=0` turns example screening off, `SCREEN=1` screens at any size (default: the
//! library's, from 10 000 examples), `SCREEN_SAMPLE`, `SCREEN_MARGIN`, `SCREEN_MAX_FRACTION`,
//! `SCREEN_EARLY` (`early_stop`), `SCREEN_LEAVE` (`leave_margin`; `inf`: only add) set its
//! fields.
//! `FIRST=k` keeps the first `k` examples of the task (after `per_class`).
//! `SPARSE=1` stores the task as CSR (LP (4) then drops the zero entries' pairs).
//! `LOG=1` prints the iteration log on stderr; `START`, `ETA`, `SIGMA`, `MEHR`, `MAXCORR`,
//! `TRIGGER`, `COST`, `BMIN`, `BMAX`, `DELTA`, `REFINE` (0/1), `WITHIN`, `LAG`, `KEEP` (`keep_dual_within`), `ROUNDS`, `CERTIFY` (`certify_within`), `PROUND` (`primal_rounding`) and `STATIC`
//! override the `DsxIpmSettings` fields of the same meaning; `JITTER=e` multiplies every non-zero
//! by `1 + e·(u − 1/2)` with `u` from a fixed hash (breaks ties in the data).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

use bulwark_core::ParamGuard;
use bulwark_data::{BinaryTask, load};
use bulwark_deletion::{DsxLpParams, FeatureValues, LpBackend};

#[path = "../tests/common/log.rs"]
mod log;
#[path = "../tests/common/pairs.rs"]
mod pairs;
#[path = "../tests/common/rss.rs"]
mod rss;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (raw, _) = load(&a[0], None).unwrap();
    let task = match a[1].split_once(',') {
        Some((x, y)) => BinaryTask::Pair(x.into(), y.into()),
        None => BinaryTask::Positive(a[1].clone()),
    };
    let per_class = a
        .get(2)
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&k| k > 0);
    let mut d = pairs::first_per_class(&raw, &task, per_class);
    if let Some(k) = std::env::var("FIRST")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        d = d.select(&(0..k.min(d.len())).collect::<Vec<_>>());
    }
    // the loaded set is not the solver's: peak RSS measures the fit on the task's copy
    drop(raw);
    // SPARSE=1: the same data stored as CSR (LP (4) then drops the zero entries' pairs)
    if std::env::var_os("SPARSE").is_some() {
        let csr = bulwark_core::Features::Sparse(d.features().to_csr());
        d = d.with_features(csr).unwrap();
    }
    // JITTER=e: multiply every non-zero by 1 + e·(u − 1/2), u uniform from a fixed hash (ties
    // broken; for studying the path, not for results).
    if let Some(e) = std::env::var("JITTER")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
    {
        let mut k: u64 = 0x9E37_79B9_7F4A_7C15;
        d.features_mut()
            .map_in_place(|_, x| {
                k = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = k;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                let u = (z >> 11) as f64 / (1u64 << 53) as f64;
                if x == 0.0 {
                    0.0
                } else {
                    x * (1.0 + e * (u - 0.5))
                }
            })
            .unwrap();
    }
    let n_budget: f64 = a.get(3).map_or(50.0, |s| s.parse().unwrap());
    let c: f64 = a.get(4).map_or(1.0, |s| s.parse().unwrap());
    let mut st = bulwark_deletion::DsxIpmSettings::default();
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
    if let Some(v) = env("START") {
        st.start = v;
    }
    if let Some(v) = env("ETA") {
        st.step_fraction = v;
    }
    if let Some(v) = env("SIGMA") {
        st.sigma_power = v as i32;
    }
    if let Some(v) = env("MEHR") {
        st.mehrotra_power = v as i32;
    }
    if let Some(v) = env("MAXCORR") {
        st.max_correctors = v as usize;
    }
    if let Some(v) = env("TRIGGER") {
        st.corrector_trigger = v;
    }
    if let Some(v) = env("COST") {
        st.corrector_cost_ratio = v;
    }
    if let Some(v) = env("BMIN") {
        st.corrector_beta_min = v;
    }
    if let Some(v) = env("BMAX") {
        st.corrector_beta_max = v;
    }
    if let Some(v) = env("DELTA") {
        st.corrector_step_increase = v;
    }
    if let Some(v) = env("REFINE") {
        st.dual_refinement = v != 0.0;
    }
    if let Some(v) = env("WITHIN") {
        st.refine_within = v;
    }
    if let Some(v) = env("LAG") {
        st.refine_lag = v;
    }
    if let Some(v) = env("KEEP") {
        st.keep_dual_within = v;
    }
    if let Some(v) = env("PROUND") {
        st.primal_rounding = v;
    }
    if let Some(v) = env("STATIC") {
        st.static_regularization = v;
    }
    if let Some(v) = env("ROUNDS") {
        st.max_refinements = v as usize;
    }
    if let Some(v) = env("CERTIFY") {
        st.certify_within = v;
    }
    // `ENGINE=1`: the fallback engine (`hsd-engine/structured`) instead; `MAXIT=k`: its limit
    let backend = if std::env::var_os("ENGINE").is_some() {
        LpBackend::EngineStructured
    } else {
        LpBackend::Structured
    };
    let mut params = DsxLpParams::new()
        .budget(n_budget)
        .c(c)
        .values(FeatureValues::Uniform)
        .backend(backend)
        .fallback(false)
        .ipm_settings(st);
    if let Some(k) = env("MAXIT") {
        params = params.max_iter(k as u32);
    }
    // `SCREEN=0`: no example screening; `SCREEN=1`: screening at any size (default: the
    // library's, from 10 000 examples); `SCREEN_SAMPLE`, `SCREEN_MARGIN`: its fields
    let mut screening = match env("SCREEN") {
        Some(0.0) => bulwark_deletion::Screening::off(),
        Some(_) => bulwark_deletion::Screening {
            min_examples: 0,
            ..Default::default()
        },
        None => bulwark_deletion::Screening::default(),
    };
    if let Some(v) = env("SCREEN_SAMPLE") {
        screening.sample_fraction = v;
    }
    if let Some(v) = env("SCREEN_MARGIN") {
        screening.margin = v;
    }
    if let Some(v) = env("SCREEN_MAX_FRACTION") {
        screening.max_fraction = v;
    }
    if let Some(v) = env("SCREEN_EARLY") {
        screening.early_stop = v;
    }
    if let Some(v) = env("SCREEN_LEAVE") {
        screening.leave_margin = v;
    }
    params = params.screening(screening);
    let mut log = |it: &bulwark_lp::IterationInfo| {
        eprintln!("{}", log::log_line(it));
        std::ops::ControlFlow::Continue(())
    };
    let progress: Option<bulwark_deletion::Progress<'_>> =
        std::env::var_os("LOG").map(|_| &mut log as _);
    // the peak RSS below is the fit's, not the load's
    rss::reset_peak();
    let t = Instant::now();
    let checked = params.check_ref().expect("valid parameters");
    let (_, f) = match checked.fit_with_progress(&d, progress) {
        Ok(f) => f,
        Err(e) => {
            println!(
                "m {} FAILED after {:.2}s: {e} | peak RSS {:.1} MiB",
                d.len(),
                t.elapsed().as_secs_f64(),
                rss::peak_mib()
            );
            return;
        }
    };
    println!(
        "m {} n {} N {n_budget} C {c}: {} it {} {:.2}s (factor {:.2}s, solves {:.2}s) obj {} gap {:.2e} (closed form {}) {} | peak RSS {:.1} MiB | refined {}",
        d.len(),
        d.n_features(),
        f.solver,
        f.iterations,
        t.elapsed().as_secs_f64(),
        f.factor_seconds,
        f.solve_seconds,
        f.objective,
        f.gap,
        f.closed_form_objective,
        f.fallbacks.join("; "),
        rss::peak_mib(),
        f.refinements
    );
    if let Some(r) = f.dual_repaired_from {
        println!("certified by a repaired dual point (the iterate's dual residual {r:.2e})");
    }
    for s in &f.stopped_short {
        println!("NOT converged: {s}");
    }
    for r in &f.screening {
        println!("{}", r.describe());
    }
}
