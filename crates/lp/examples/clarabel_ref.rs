//! Reference solve of an MPS file with Clarabel (dev-dependency), for cross-checking and as the
//! benchmark peer of `cargo xtask bench lp --clarabel`:
//! `cargo run --release -p bulwark-lp --example clarabel_ref -- FILE.mps [--defaults] [--json]
//! [--time-limit SECONDS]`.
//!
//! Without `--defaults` the tolerances are 1e-10 (the tests' reference); with it, Clarabel's own
//! defaults (1e-8), as a user would run it. `--json` prints one line with `status`,
//! `objective`, `iterations` and `seconds` (the solve, including Clarabel's setup, not reading
//! the file). `--time-limit` sets Clarabel's own `time_limit`; a solve stopped by it reports
//! the status `time limit`.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use clarabel::solver::DefaultSettingsBuilder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // the value after `--time-limit` is not the file
    let limit_at = args.iter().position(|a| a == "--time-limit");
    let path = args
        .iter()
        .enumerate()
        .find(|(k, a)| !a.starts_with("--") && limit_at.is_none_or(|l| *k != l + 1))
        .map(|(_, a)| a)
        .ok_or("usage: clarabel_ref FILE.mps [--defaults] [--json] [--time-limit SECONDS]")?;
    let time_limit = match limit_at {
        Some(k) => Some(
            args.get(k + 1)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| *v > 0.0)
                .ok_or("--time-limit needs a positive number of seconds")?,
        ),
        None => None,
    };
    let defaults = args.iter().any(|a| a == "--defaults");
    let json = args.iter().any(|a| a == "--json");
    let lp = bulwark_lp::read_mps(path)?;
    let t = std::time::Instant::now();
    let mut settings = if defaults {
        DefaultSettingsBuilder::default()
            .verbose(false)
            .build()
            .map_err(|e| format!("clarabel settings: {e:?}"))?
    } else {
        common::reference_settings()
    };
    if let Some(limit) = time_limit {
        settings.time_limit = limit;
    }
    let (out, iterations) = common::clarabel_solve_with(&lp, settings);
    let seconds = t.elapsed().as_secs_f64();
    if json {
        let (status, objective) = match out {
            common::RefOutcome::Optimal(v) => ("optimal", v),
            other => (
                match other {
                    common::RefOutcome::PrimalInfeasible => "primal infeasible",
                    common::RefOutcome::DualInfeasible => "dual infeasible",
                    common::RefOutcome::TimeLimit => "time limit",
                    _ => "other",
                },
                f64::NAN,
            ),
        };
        println!(
            "{{\"solver\":\"Clarabel 0.11.1\",\"status\":\"{status}\",\"objective\":{},\"iterations\":{iterations},\"seconds\":{seconds:.3}}}",
            if objective.is_finite() {
                format!("{objective:.12}")
            } else {
                "null".into()
            }
        );
    } else {
        println!("{out:?} in {seconds:.3}s ({iterations} iterations)");
    }
    Ok(())
}
