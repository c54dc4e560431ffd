//! Times the attacks and the certificate on synthetic data:
//! `cargo run --release -p bulwark-adversary --example robustness_timing -- [m] [n] [density]`.
#![allow(clippy::print_stdout)]

use std::time::Instant;

use bulwark_adversary::{
    Attack, AttackBudget, AttackKind, CertifyOptions, Distribution, certify_with, evaluate,
    halfspace_data, random_unit_vector,
};
use bulwark_core::{LinearModel, rng_from_seed};
use rand::Rng as _;

fn main() -> Result<(), bulwark_core::Error> {
    let args: Vec<String> = std::env::args().collect();
    let m: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(784);
    let density: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0.2);
    let mut rng = rng_from_seed(1);
    let u = random_unit_vector(n, &mut rng)?;
    let mut data = halfspace_data(Distribution::Cube, &u, m, &mut rng)?;
    data.features_mut().map_in_place(|_, v| {
        if rng.random::<f64>() < density {
            v
        } else {
            0.0
        }
    })?;
    // a dense model close to u; MI-like real values normalised to Σ v = n
    let w: Vec<f64> = u
        .iter()
        .map(|a| a + 0.02 * (rng.random::<f64>() - 0.5))
        .collect();
    let model = LinearModel::try_new(w, 0.0)?;
    let raw: Vec<f64> = (0..n).map(|_| 0.2 + rng.random::<f64>()).collect();
    let z = raw.iter().sum::<f64>() / n as f64;
    let values: Vec<f64> = raw.iter().map(|v| v / z).collect();
    println!(
        "m = {m}, n = {n}, density = {density}, nnz = {}",
        data.features().nnz()
    );
    for budget in [1.0, 5.0, 20.0] {
        for (label, vals) in [("uniform", None), ("real", Some(values.clone()))] {
            for kind in [AttackKind::GreedyDelete, AttackKind::ExactDelete] {
                let mut a = Attack::new(kind);
                if let Some(v) = &vals {
                    a = a.with_values(v.clone())?;
                }
                let t = Instant::now();
                let r = evaluate(&model, &data, &a, budget, 0)?;
                println!(
                    "N = {budget:>4} {label:>7} {kind:>13}: error {:.4} (clean {:.4}), incomplete {}, {:.3} s",
                    r.error,
                    r.clean_error,
                    r.incomplete,
                    t.elapsed().as_secs_f64()
                );
            }
            let b = AttackBudget::try_new(vals.clone().unwrap_or_else(|| vec![1.0; n]), budget)?;
            let t = Instant::now();
            let c = certify_with(&model, &data, &b, &CertifyOptions::default())?;
            println!(
                "N = {budget:>4} {label:>7}       certify: greedy {:.4} lower {:.4} upper {:.4} relaxation {:.4} exact {:?}, undecided {}, {:.3} s",
                c.greedy_lower,
                c.lower,
                c.upper,
                c.relaxation_upper,
                c.exact,
                c.n_undecided,
                t.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}
