//! Fits the batch solver and GURU's SGD on a four-point toy set and prints their duality
//! certificates: `cargo run -p bulwark-gaussian --example toy`.
#![allow(clippy::print_stdout)]
use bulwark_core::{Dataset, DenseMatrix, Sign};
use bulwark_gaussian::{GuruParams, Solver};

fn main() -> Result<(), bulwark_core::Error> {
    let x = DenseMatrix::from_rows(&[
        vec![1.0, 0.2],
        vec![-0.8, 0.1],
        vec![0.9, -0.3],
        vec![-1.1, 0.0],
    ])?;
    let data = Dataset::binary("toy", x, vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg])?;
    for solver in [Solver::Batch, Solver::Sgd] {
        let (fit, report) = GuruParams::new()
            .sigma(1.0)
            .solver(solver)
            .fit_certified(&data)?;
        let c = fit.certificate;
        println!(
            "{:<9} w = {:?}  G(w) = {:.10}  dual = {:.10}  relative gap = {:.1e}  ({} iterations)",
            report.solver,
            fit.model.weights(),
            c.primal,
            c.dual,
            c.relative_gap,
            fit.iterations
        );
    }
    Ok(())
}
