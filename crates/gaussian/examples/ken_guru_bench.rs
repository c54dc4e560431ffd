//! The KEN-GURU part of `cargo xtask bench smo`: the cost of one KEN-GURU step (Ginodi
//! Algorithm 2: a Gram row, an `O(M)` inner product, the O(1) norm recursion) on a case of
//! `bulwark-online`'s SMO benchmark (same data, scaling and kernel). Times the first epoch
//! (`M` steps, Gram rows computed as they are first drawn) and epochs 5–8 (rows from the cache,
//! which holds the whole Gram matrix up to 1 GiB), without the checks of the stopping rule, and
//! appends one flat JSON object to `OUT.jsonl`.
//!
//! `ken_guru_bench CASE REPEATS OUT.jsonl` (release build, one thread; the median of `REPEATS`
//! runs); `ken_guru_bench list` prints the cases.
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::time::Instant;

use bulwark_gaussian::KenGuruParams;

#[path = "../../online/tests/common/smo_cases.rs"]
mod smo_cases;
use smo_cases::{CASES, load_case};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("list") {
        for c in CASES {
            println!("{}", c.0);
        }
        return Ok(());
    }
    let [_, case, reps, out] = args.as_slice() else {
        return Err("usage: ken_guru_bench CASE REPEATS OUT.jsonl | ken_guru_bench list".into());
    };
    let reps: usize = reps.parse().map_err(|e| format!("REPEATS: {e}"))?;
    let &(name, source, task, kernel, _) = CASES
        .iter()
        .find(|c| c.0 == case)
        .ok_or_else(|| format!("unknown case {case}"))?;
    let data = load_case(source, task)?;
    let m = data.len() as u64;
    // the whole Gram matrix fits the cache (at most 1 GiB: MNIST's 10 000 rows take 800 MB), so
    // that the later epochs measure the cached step
    let cache = (m * m * 8).clamp(200 << 20, 1 << 30) as usize;
    let params = KenGuruParams::new()
        .kernel(kernel)
        .sigma(1.0)
        .eta0(0.25)
        .cache_bytes(cache);
    // medians of `reps` fresh runs of 1, 4 and 8 epochs
    let time = |epochs: u64| -> Result<f64, Box<dyn std::error::Error>> {
        let mut v = Vec::new();
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            params.trajectory(&data, epochs * m)?;
            v.push(t.elapsed().as_secs_f64());
        }
        v.sort_by(f64::total_cmp);
        Ok(v[v.len() / 2])
    };
    let (first, four, eight) = (time(1)?, time(4)?, time(8)?);
    let line = serde_json::json!({
        "case": name, "solver": "ken-guru", "m": m, "n": data.n_features(),
        "repeats": reps, "cache_mb": cache >> 20,
        "first_epoch_seconds": first,
        "first_epoch_step_us": 1e6 * first / m as f64,
        // epochs 5–8: 98 % of the rows have been drawn (1 − e⁻⁴) and come from the cache
        "cached_step_us": 1e6 * (eight - four).max(0.0) / (4 * m) as f64,
    });
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)?;
    writeln!(file, "{line}")?;
    println!("{line}");
    Ok(())
}
