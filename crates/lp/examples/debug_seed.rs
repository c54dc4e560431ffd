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
        "dup" => {
            let lp = common::random_feasible_lp(seed);
            let mut b = common::rebuild(&lp);
            let s: f64 = std::env::var("LP_DUP_SCALE")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1e-3);
            let a = lp.matrix();
            let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); lp.num_rows()];
            for j in 0..lp.num_vars() {
                for q in a.col_ptr[j]..a.col_ptr[j + 1] {
                    rows[a.row_idx[q]].push((j, s * a.values[q]));
                }
            }
            for (i, r) in rows.iter().enumerate() {
                let (lo, up) = (s * lp.row_lower()[i], s * lp.row_upper()[i]);
                b.add_row(lo.min(up), lo.max(up), r);
            }
            b.build()?
        }
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
    let sol = IpmSolver::new(&lp, s)?
        .with_log(std::io::stdout())
        .solve()?;
    println!("{} {}", sol.status, sol.objective);
    Ok(())
}
