//! FDROP on a pair of MNIST test-set digits, the first images of each class, min-max scaled:
//! solver, passes or iterations, gap and time per fit (development tool).
//!
//! `fdrop_real <A,B> <per_class> <k> <C> [max_passes] [tol]`; `NOBIAS=1` fits without a bias,
//! `DUALCD=1` by the dual coordinate descent (default: the library's choice), `SET=usps` on
//! another built-in set.
//! (The measurements of `docs/design/online.md`, *Limitations*.)
#![allow(clippy::print_stdout)]

use std::time::Instant;

use bulwark_core::Fit;
use bulwark_data::{BinaryTask, load};
use bulwark_online::{FdropParams, FdropSolver};

// the same tasks as the structured IPM's real-data checks
#[path = "../../deletion/tests/common/pairs.rs"]
mod pairs;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (x, y) = a[0].split_once(',').ok_or("pair A,B")?;
    let per_class: usize = a[1].parse()?;
    let k: usize = a[2].parse()?;
    let c: f64 = a[3].parse()?;
    let passes: usize = a.get(4).map_or(Ok(300), |s| s.parse())?;
    let tol: f64 = a.get(5).map_or(Ok(1e-3), |s| s.parse())?;
    let set = std::env::var("SET").unwrap_or_else(|_| "mnist10k".into());
    let (raw, _) = load(&set, None)?;
    let d = pairs::first_per_class(&raw, &BinaryTask::Pair(x.into(), y.into()), Some(per_class));
    let t = Instant::now();
    let f = FdropParams::new()
        .k(k)
        .c(c)
        .tolerance(tol)
        .max_passes(passes)
        .bias(std::env::var_os("NOBIAS").is_none())
        .solver(if std::env::var_os("DUALCD").is_some() {
            FdropSolver::DualCd
        } else {
            FdropSolver::Auto
        })
        .fit(&d)?;
    let r = &f.report;
    println!(
        "m {} n {} k {k} C {c}: {} passes {} converged {} primal {:.8} dual {:.8} rel gap {:.2e} {:.2}s",
        d.len(),
        d.n_features(),
        r.solver,
        r.iterations.unwrap_or(0),
        r.converged,
        r.objective.unwrap_or(f64::NAN),
        r.details["dual_objective"],
        r.details["relative_gap"],
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
