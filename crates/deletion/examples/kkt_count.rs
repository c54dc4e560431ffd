use bulwark_core::{Dataset, DenseMatrix, FeatureBudget, Sign};
use bulwark_deletion::{Lp4, StructuredBackend};
use bulwark_lp::{IpmSettings, IpmSolver};
use rand::{Rng, SeedableRng};
fn main() {
    let (m, n) = (1000, 100);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..m {
        let row: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let s: f64 = row.iter().sum::<f64>() + 3.0 * rng.random_range(-1.0..1.0);
        y.push(if s > 0.0 { Sign::Pos } else { Sign::Neg });
        x.extend(row);
    }
    let d = Dataset::binary("s", DenseMatrix::try_new(m, n, x).unwrap(), y).unwrap();
    let lp = Lp4::new(&d, &FeatureBudget::uniform(n, 10.0).unwrap(), 1.0).unwrap();
    let p = lp.build().unwrap();
    for rmi in [10u32, 2, 0] {
        let s = IpmSettings::builder()
            .equilibrate(false)
            .presolve(false)
            .refine_max_iter(rmi)
            .build()
            .unwrap();
        let t = std::time::Instant::now();
        let sol = IpmSolver::new(&p, s)
            .unwrap()
            .with_backend(StructuredBackend::new(lp.clone(), None))
            .solve()
            .unwrap();
        println!(
            "refine_max_iter {rmi}: {:?} obj {:.10} iters {} factorizations {} solves {} {:.3}s",
            sol.status,
            sol.objective,
            sol.iterations,
            sol.kkt.factorizations,
            sol.kkt.solves,
            t.elapsed().as_secs_f64()
        );
    }
}
