//! Arrow Cholesky and arrow-plus-rank-one (SMW) against faer's dense solvers.

mod common;

use bulwark_linalg::{ArrowCholesky, ArrowMatrix, ArrowPlusRankOne, Block, LinalgError};
use common::{dense_lu_solve, norm, random_vec, rel_residual};
use faer::Mat;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random SPD arrow matrix with diagonal entries log-uniform in `10^[lo, hi]`.
fn random_arrow(nd: usize, k: usize, lo: f64, hi: f64, seed: u64) -> ArrowMatrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = ArrowMatrix::zeros(nd, k);
    for d in a.diag_mut() {
        *d = 10f64.powf(rng.random_range(lo..=hi));
    }
    let diag = a.diag().to_vec();
    let mut b = a.border_mut();
    for c in 0..k {
        for i in 0..nd {
            b[(i, c)] = rng.random_range(-1.0..1.0) * diag[i].sqrt();
        }
    }
    // corner = Bᵀ D⁻¹ B + (k + 1) I + small symmetric noise: SPD with margin
    let border = a.border().to_owned();
    let mut corner = a.corner_mut();
    for r in 0..k {
        for c in 0..=r {
            let mut s = 0.0;
            for i in 0..nd {
                s += border[(i, r)] * border[(i, c)] / diag[i];
            }
            let noise = if r == c {
                (k + 1) as f64
            } else {
                rng.random_range(-0.5..0.5)
            };
            corner[(r, c)] = s + noise;
            corner[(c, r)] = s + noise;
        }
    }
    a
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn arrow_cholesky_matches_dense(nd in 0usize..12, k in 0usize..4, seed in any::<u64>()) {
        prop_assume!(nd + k > 0);
        let a = random_arrow(nd, k, -1.0, 1.0, seed);
        let dense = a.to_dense();
        let r = random_vec(nd + k, seed);
        let chol = ArrowCholesky::try_factor(&a).unwrap();
        let mut z = r.clone();
        chol.solve_in_place(&mut z).unwrap();
        prop_assert!(rel_residual(&dense, &z, &r) <= 1e-12);
        let zref = dense_lu_solve(&dense, &r);
        let err: Vec<f64> = z.iter().zip(&zref).map(|(x, y)| x - y).collect();
        prop_assert!(norm(&err) <= 1e-10 * norm(&zref));
        // apply agrees with the dense matrix
        let mut out = vec![0.0; nd + k];
        a.apply(&z, &mut out);
        let err: Vec<f64> = out.iter().zip(&r).map(|(x, y)| x - y).collect();
        prop_assert!(norm(&err) <= 1e-12 * norm(&r));
    }

    /// Diagonal ratios 1e-12 … 1e12: the arrow factor stays backward stable.
    #[test]
    fn arrow_cholesky_extreme_diagonal(nd in 1usize..12, k in 0usize..3, seed in any::<u64>()) {
        let a = random_arrow(nd, k, -12.0, 12.0, seed);
        let dense = a.to_dense();
        let r = random_vec(nd + k, seed);
        let chol = ArrowCholesky::try_factor(&a).unwrap();
        let mut z = r.clone();
        chol.solve_in_place(&mut z).unwrap();
        prop_assert!(z.iter().all(|e| e.is_finite()));
        let res = rel_residual(&dense, &z, &r) * norm(&r);
        let eta = res / (dense.norm_l2() * norm(&z) + norm(&r));
        prop_assert!(eta <= 1e-14, "backward error {eta}");
    }

    /// SMW solve of (A + θ u uᵀ) against faer's dense LU (DSX eqs. (19)–(21)).
    #[test]
    fn arrow_plus_rank_one_matches_dense(nd in 0usize..12, k in 0usize..4, theta in 0.0f64..10.0,
                                         seed in any::<u64>()) {
        prop_assume!(nd + k > 0);
        let a = random_arrow(nd, k, -1.0, 1.0, seed);
        let u = random_vec(nd + k, seed ^ 1);
        let mut dense = a.to_dense();
        for r in 0..nd + k {
            for c in 0..nd + k {
                dense[(r, c)] += theta * u[r] * u[c];
            }
        }
        let f = ArrowPlusRankOne::try_factor(&a, &u, theta).unwrap();
        let r = random_vec(nd + k, seed);
        let mut z = r.clone();
        f.solve_in_place(&mut z).unwrap();
        prop_assert!(rel_residual(&dense, &z, &r) <= 1e-11);
        prop_assert!(f.denominator() >= 1.0);
    }
}

#[test]
fn arrow_errors_are_typed() {
    let mut a = random_arrow(3, 1, 0.0, 0.0, 1);
    a.diag_mut()[1] = 0.0;
    assert!(matches!(
        ArrowCholesky::try_factor(&a),
        Err(LinalgError::NotPositiveDefinite {
            block: Block::ArrowDiagonal,
            pivot: 1,
            ..
        })
    ));
    a.diag_mut()[1] = f64::NAN;
    assert!(matches!(
        ArrowCholesky::try_factor(&a),
        Err(LinalgError::NotPositiveDefinite {
            block: Block::ArrowDiagonal,
            pivot: 1,
            ..
        })
    ));
    let mut a = random_arrow(3, 2, 0.0, 0.0, 1);
    a.corner_mut()[(1, 1)] = -100.0;
    assert!(matches!(
        ArrowCholesky::try_factor(&a),
        Err(LinalgError::NotPositiveDefinite {
            block: Block::ArrowCorner,
            pivot: 1,
            ..
        })
    ));
    // θ < 0 large enough to destroy definiteness
    let a = random_arrow(3, 1, 0.0, 0.0, 2);
    let u = vec![1.0; 4];
    assert!(matches!(
        ArrowPlusRankOne::try_factor(&a, &u, -1e6),
        Err(LinalgError::NotPositiveDefinite {
            block: Block::RankOneDenominator,
            ..
        })
    ));
    assert!(matches!(
        ArrowPlusRankOne::try_factor(&a, &u[..3], 1.0),
        Err(LinalgError::DimensionMismatch { name: "u", .. })
    ));
    let bad = ArrowMatrix::try_new(vec![1.0; 2], Mat::zeros(3, 1), Mat::zeros(1, 1));
    assert!(matches!(
        bad,
        Err(LinalgError::DimensionMismatch {
            name: "border.nrows",
            ..
        })
    ));
    let chol = ArrowCholesky::new(2, 1);
    let mut r = vec![0.0; 3];
    assert_eq!(chol.solve_in_place(&mut r), Err(LinalgError::NotFactored));
}

#[test]
fn arrow_refactor_no_fill_in() {
    // One arrow factor object, refactored with new values: same storage, O(nd·k) pattern.
    let mut chol = ArrowCholesky::new(50, 2);
    for seed in 0..5 {
        let a = random_arrow(50, 2, -3.0, 3.0, seed);
        chol.factor(&a).unwrap();
        let r = random_vec(52, seed);
        let mut z = r.clone();
        chol.solve_in_place(&mut z).unwrap();
        assert!(rel_residual(&a.to_dense(), &z, &r) <= 1e-10);
    }
    assert_eq!(chol.dim(), 52);
}
