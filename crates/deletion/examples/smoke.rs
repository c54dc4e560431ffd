use bulwark_core::{Dataset, DenseMatrix, Fit, Sign};
use bulwark_deletion::{DsxLpParams, LpBackend, Values};
use rand::{Rng, SeedableRng};

fn main() {
    let (m, n) = (
        std::env::args().nth(1).map_or(60, |s| s.parse().unwrap()),
        std::env::args().nth(2).map_or(6, |s| s.parse().unwrap()),
    );
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..m {
        let row: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let s: f64 = row.iter().sum::<f64>() + 0.5 * rng.random_range(-1.0..1.0);
        y.push(if s > 0.0 { Sign::Pos } else { Sign::Neg });
        x.extend(row);
    }
    let d = Dataset::binary("s", DenseMatrix::try_new(m, n, x).unwrap(), y).unwrap();
    let which = std::env::args().nth(3).unwrap_or_default();
    for b in [LpBackend::Structured, LpBackend::GenericSparse]
        .into_iter()
        .filter(|b| which.is_empty() || format!("{b:?}") == which)
    {
        let p = DsxLpParams::new()
            .budget(n as f64 / 5.0)
            .c(1.0)
            .values(Values::Uniform)
            .backend(b);
        match p.check_ref().map(|_| ()).and_then(|_| Ok(())) {
            _ => {}
        }
        let t = std::time::Instant::now();
        match p.fit(&d) {
            Ok(f) => println!(
                "{b:?}: obj {:.10} closed {:.10} iters {:?} {:.3}s",
                f.report.objective.unwrap(),
                f.report.details["closed_form_objective"],
                f.report.iterations,
                t.elapsed().as_secs_f64()
            ),
            Err(e) => println!("{b:?}: error {e}"),
        }
    }
}
use bulwark_core::ParamGuard;
