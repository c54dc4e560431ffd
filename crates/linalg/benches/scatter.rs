//! Min-of-N timing of `DsxSystem::factor` with the sparse-scatter Schur kernel on a
//! 10000×784 CSR system at 19 % density (MNIST-like shape, `k ≈ 150` per example), `Par::Seq`
//! against two threads, interleaved repetition by repetition (robust to a shared machine).
//!
//! `cargo bench -p bulwark-linalg --bench scatter [-- REPS [M N DENSITY [seq|par|both]]]`
//! (`seq`/`par`: time one mode only, e.g. under `perf stat`).
#![allow(clippy::print_stdout)]

use bulwark_linalg::{DsxScalings, DsxSettings, DsxSystem, PairScaling, Par, RowsRef, SchurKernel};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

#[path = "support/scalings.rs"]
mod scalings;
use scalings::RandomScalings;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let reps: usize = args.first().map_or(7, |a| a.parse().unwrap());
    let m: usize = args.get(1).map_or(10000, |a| a.parse().unwrap());
    let n: usize = args.get(2).map_or(784, |a| a.parse().unwrap());
    let density: f64 = args.get(3).map_or(0.19, |a| a.parse().unwrap());
    let mode = args.get(4).map_or("both", String::as_str);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
    for _ in 0..m {
        for j in 0..n {
            if rng.random_bool(density) {
                indices.push(j);
                values.push(rng.random_range(-1.0..1.0));
            }
        }
        indptr.push(indices.len());
    }
    let nnz = indices.len();
    let scalings = RandomScalings::draw(&mut rng, m, n, nnz);
    let y: Vec<f64> = (0..m)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let v = vec![1.0; n];
    let rows = RowsRef::Csr {
        indptr: &indptr,
        indices: &indices,
        values: &values,
        n,
    };
    let sc = scalings.view(0.0);
    let mut systems: Vec<(&str, DsxSystem<'_>)> = [("Seq", Par::Seq), ("rayon(2)", Par::rayon(2))]
        .into_iter()
        .filter(|&(name, _)| match mode {
            "seq" => name == "Seq",
            "par" => name != "Seq",
            _ => true,
        })
        .map(|(name, par)| {
            let settings = DsxSettings {
                kernel: SchurKernel::SparseScatter,
                normal_equations: bulwark_linalg::NormalEquations::FeatureSpace,
                par,
                threads: if par == Par::Seq { 1 } else { 2 },
                ..DsxSettings::default()
            };
            (
                name,
                DsxSystem::try_new_with(rows, &y, &v, 1.0, settings).unwrap(),
            )
        })
        .collect();
    let mut best = vec![f64::INFINITY; systems.len()];
    let mut flops = 0.0;
    for _ in 0..reps {
        for (b, (_, sys)) in best.iter_mut().zip(&mut systems) {
            let t = Instant::now();
            flops = sys.factor(&sc).unwrap().schur_flops;
            *b = b.min(t.elapsed().as_secs_f64());
        }
    }
    let same = systems.len() == 2
        && systems[0].1.schur_factor().unwrap() == systems[1].1.schur_factor().unwrap();
    let entries = flops / 4.0;
    println!(
        "{m}×{n} {:.0} % (nnz {nnz}, Σk(k+1)/2 = {entries:.3e} entry updates), best of {reps}:",
        density * 100.0
    );
    for ((name, sys), b) in systems.iter().zip(&best) {
        // FNV-1a of the factor's bits: compare builds (e.g. before/after a kernel change)
        let l = sys.schur_factor().unwrap();
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for j in 0..l.ncols() {
            for i in j..l.nrows() {
                h = (h ^ l[(i, j)].to_bits()).wrapping_mul(0x0100_0000_01b3);
            }
        }
        println!(
            "  {name:>8}: factor {:.1} ms ({:.2} ns per entry update incl. O(nnz) pass + Cholesky), factor hash {h:016x}",
            b * 1e3,
            b / entries * 1e9
        );
    }
    if systems.len() == 2 {
        println!("  Seq and rayon(2) factors bit-identical: {same}");
    }
}
