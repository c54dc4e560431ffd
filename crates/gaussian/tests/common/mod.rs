//! Random instances shared by the certified-solver tests (`certified.rs`, `warm_start.rs`).

use bulwark_core::{Dataset, DenseMatrix, Sign};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// `c` Gaussian classes in `d` dimensions, standard deviation `spread`, class `k` centred at
/// `mu·e_k`, a fraction `flip` of the labels drawn again at random (with `flip = 0`, a small
/// `spread` and a large `mu` the classes are separable).
pub fn classes(
    m: usize,
    d: usize,
    c: usize,
    spread: f64,
    mu: f64,
    flip: f64,
    seed: u64,
) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut rows, mut y) = (Vec::new(), Vec::new());
    for i in 0..m {
        let k = i % c;
        let mut row: Vec<f64> = (0..d)
            .map(|_| spread * Distribution::<f64>::sample(&StandardNormal, &mut rng))
            .collect();
        row[k % d] += mu;
        rows.push(row);
        y.push(if rng.random::<f64>() < flip {
            rng.random_range(0..c)
        } else {
            k
        });
    }
    let names = (0..c).map(|k| format!("c{k}")).collect();
    Dataset::multiclass("mc", DenseMatrix::from_rows(&rows).unwrap(), y, names).unwrap()
}

/// Two classes in `d ≥ 2` dimensions, uniform on `[−2, 2)^d`, split by the curved boundary
/// `x₀² + x₁ = 1`, a fraction `flip` of the labels flipped.
pub fn binary(m: usize, d: usize, flip: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut rows, mut y) = (Vec::new(), Vec::new());
    for _ in 0..m {
        let row: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
        let s = row[0] * row[0] + row[1] - 1.0;
        let pos = (s > 0.0) != (rng.random::<f64>() < flip);
        rows.push(row);
        y.push(if pos { Sign::Pos } else { Sign::Neg });
    }
    Dataset::binary("k", DenseMatrix::from_rows(&rows).unwrap(), y).unwrap()
}
