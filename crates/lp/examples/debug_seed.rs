//! Debug helper: solve a generated LP verbosely. `debug_seed KIND SEED [dense|sparse]`.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use bulwark_lp::{BackendChoice, IpmSettings, IpmSolver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut a = std::env::args().skip(1);
    let kind = a.next().unwrap_or_default();
    let seed: u64 = a.next().ok_or("seed")?.parse()?;
    let backend = match a.next().as_deref() {
        Some("dense") => BackendChoice::Dense,
        _ => BackendChoice::SparseLdl,
    };
    let lp = match kind.as_str() {
        "inf" => common::random_infeasible_lp(seed),
        "unb" => common::random_unbounded_lp(seed),
        _ => common::random_feasible_lp(seed),
    };
    println!("{:?}", common::clarabel_solve(&lp));
    let mut b = IpmSettings::builder().verbose(true).backend(backend);
    if let Ok(v) = std::env::var("LP_REFINE_TOL") {
        b = b.refine_tol(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_STATIC_REG_VAR") {
        b = b.static_reg_var(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_STATIC_REG") {
        b = b.static_reg(v.parse()?);
    }
    let s = b.build()?;
    let sol = IpmSolver::new(&lp, s)?.with_log(std::io::stdout()).solve()?;
    println!("{} {}", sol.status, sol.objective);
    Ok(())
}
