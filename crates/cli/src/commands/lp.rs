use std::io::Write;

use anyhow::Context;
use bulwark_lp::{IpmSettings, IpmSolver, read_mps};

use crate::args::LpSolveArgs;

pub(crate) fn solve(args: &LpSolveArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let problem = read_mps(&args.file).with_context(|| args.file.display().to_string())?;
    let mut b = IpmSettings::builder()
        .tolerance(args.tolerance)
        .max_iter(args.max_iter)
        .verbose(args.verbose);
    if let Some(t) = args.time_limit {
        b = b.time_limit(t);
    }
    let settings = b.build().context("invalid solver settings")?;
    let mut solver = IpmSolver::new(&problem, settings)?;
    if args.verbose {
        solver = solver.with_log(std::io::stderr());
    }
    let solution = solver.solve()?;
    let summary = solution.summary(&problem);
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &summary)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "problem     {} ({} rows, {} columns, {} non-zeros)",
            summary.name.as_deref().unwrap_or("-"),
            summary.rows,
            summary.cols,
            summary.nnz
        )?;
        writeln!(out, "status      {}", summary.status.as_str())?;
        writeln!(out, "objective   {:.12e}", summary.objective)?;
        writeln!(out, "iterations  {}", summary.iterations)?;
        writeln!(out, "seconds     {:.3}", summary.seconds)?;
        writeln!(
            out,
            "residuals   primal {:.2e}, dual {:.2e}, gap {:.2e}",
            summary.primal_residual, summary.dual_residual, summary.gap
        )?;
    }
    Ok(())
}
