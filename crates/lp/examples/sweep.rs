//! Robustness sweep over generated LPs: `sweep KIND FROM TO` (KIND = feas|inf|unb|dup).
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use bulwark_lp::{IpmSettings, Status, solve};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut a = std::env::args().skip(1);
    let kind = a.next().unwrap_or_default();
    let from: u64 = a.next().ok_or("from")?.parse()?;
    let to: u64 = a.next().ok_or("to")?.parse()?;
    let (mut ok, mut bad) = (0, Vec::new());
    for seed in from..to {
        let (lp, want) = match kind.as_str() {
            "inf" => (common::random_infeasible_lp(seed), Status::PrimalInfeasible),
            "unb" => (common::random_unbounded_lp(seed), Status::DualInfeasible),
            "dup" => {
                let lp = common::random_feasible_lp(seed);
                let mut b = common::rebuild(&lp);
                let m = lp.matrix();
                let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); lp.num_rows()];
                for j in 0..lp.num_vars() {
                    for q in m.col_ptr[j]..m.col_ptr[j + 1] {
                        rows[m.row_idx[q]].push((j, 3.0 * m.values[q]));
                    }
                }
                for (i, r) in rows.iter().enumerate() {
                    b.add_row(3.0 * lp.row_lower()[i], 3.0 * lp.row_upper()[i], r);
                }
                (b.build()?, Status::Optimal)
            }
            _ => (common::random_feasible_lp(seed), Status::Optimal),
        };
        let eq = std::env::var("LP_EQ").map(|v| v == "1").unwrap_or(true);
        let sol = solve(&lp, &IpmSettings::builder().equilibrate(eq).build()?)?;
        let good = sol.status == want
            && (want != Status::Optimal
                || matches!(common::clarabel_solve(&lp), common::RefOutcome::Optimal(r) if common::rel_err(sol.objective, r) <= 1e-6));
        if good {
            ok += 1;
        } else {
            bad.push((seed, sol.status));
        }
    }
    println!(
        "{kind}: {ok} ok, {} bad: {:?}",
        bad.len(),
        &bad[..bad.len().min(20)]
    );
    Ok(())
}
