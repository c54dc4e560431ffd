//! Solves an MPS file and prints the iteration log and a JSON summary:
//! `cargo run --release -p bulwark-lp --example solve_mps -- FILE.mps [dense|sparse]`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use bulwark_lp::{BackendChoice, IpmSettings, IpmSolver, read_mps};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: solve_mps FILE.mps [dense|sparse]")?;
    let backend = match args.next().as_deref() {
        Some("dense") => BackendChoice::Dense,
        Some("sparse") => BackendChoice::SparseLdl,
        _ => BackendChoice::Auto,
    };
    let lp = read_mps(&path)?;
    let mut b = IpmSettings::builder().verbose(true).backend(backend);
    if let Ok(v) = std::env::var("LP_STATIC_REG") {
        b = b.static_reg(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_STATIC_REG_VAR") {
        b = b.static_reg_var(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_DYN_EPS") {
        b = b.dynamic_reg_eps(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_DYN_DELTA") {
        b = b.dynamic_reg_delta(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_STEP") {
        b = b.step_fraction(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_EQ") {
        b = b.equilibrate(v == "1");
    }
    if let Ok(v) = std::env::var("LP_RETRY") {
        b = b.retry_unscaled(v == "1");
    }
    if let Ok(v) = std::env::var("LP_RUIZ") {
        b = b.equilibrate_iters(v.parse()?);
    }
    if let Ok(v) = std::env::var("LP_MAX_ITER") {
        b = b.max_iter(v.parse()?);
    }
    let settings = b.build()?;
    let sol = IpmSolver::new(&lp, settings)?
        .with_log(std::io::stdout())
        .solve()?;
    println!("{}", serde_json::to_string_pretty(&sol.summary(&lp))?);
    println!("kkt: {:?}", sol.kkt);
    let xn = sol.x.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    println!(
        "max violation {:.3e}, |x|inf {:.3e}, cx {:.10e}",
        lp.max_violation(&sol.x),
        xn,
        lp.objective_value(&sol.x)
    );
    Ok(())
}
