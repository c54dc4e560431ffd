use std::io::Write;

use anyhow::Context;
use bulwark_lp::{IpmSettings, IpmSolver, read_mps};

use crate::args::LpSolveArgs;
use crate::ui::Ui;

pub(crate) fn solve(args: &LpSolveArgs, ui: Ui, out: &mut dyn Write) -> anyhow::Result<()> {
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
    // the iteration log and the spinner both write to stderr: one or the other
    let spinner = ui.spinner(
        args.json || args.verbose,
        format!(
            "interior point on {} ({} x {})",
            args.file.display(),
            problem.num_rows(),
            problem.num_vars()
        ),
    );
    if args.verbose {
        solver = solver.with_log(std::io::stderr());
    } else if !spinner.is_hidden() {
        let pb = spinner.clone();
        solver = solver.with_callback(move |info| {
            pb.set_message(format!(
                "interior point: iteration {}, gap {:.1e}, primal res {:.1e}",
                info.iter, info.gap, info.pres
            ));
            std::ops::ControlFlow::Continue(())
        });
    }
    let solution = solver.solve();
    spinner.finish_and_clear();
    let solution = solution?;
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
        for r in &summary.retries {
            writeln!(out, "retried     {r}")?;
        }
    }
    Ok(())
}
