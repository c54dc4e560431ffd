//! The exponential-size LP (3) of DSX, built by enumerating every admissible kept set `J`
//! (`V([n] \ J) ≤ N`) — an oracle for tiny `n` (Theorem 1 tests), solved by `bulwark-lp`'s
//! generic backend.
//!
//! ```text
//! min (1/m) Σ ξ_i  s.t.  y_i (b + Σ_{j∈J} w_j x_ij) ≥ V(J)/P − ξ_i  ∀ i, ∀ admissible J;
//!                       ξ ≥ 0, ‖w‖∞ ≤ C                                   (DSX eq. (3))
//! ```

use bulwark_core::{Dataset, Error, FeatureBudget};
use bulwark_lp::{IpmSettings, LpBuilder, Sense, Status};

use crate::error::{DeletionError, Result};

/// Largest feature count the oracle enumerates (`2ⁿ` subsets per example).
pub const MAX_FEATURES: usize = 16;

/// The optimal value of LP (3) and its `(w, b)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleSolution {
    /// `(1/m) Σ ξ_i` at the optimum.
    pub value: f64,
    /// Optimal weights.
    pub weights: Vec<f64>,
    /// Optimal bias.
    pub bias: f64,
    /// Number of constraints enumerated.
    pub constraints: usize,
}

/// Solves LP (3) by enumeration.
pub fn solve_lp3(data: &Dataset, budget: &FeatureBudget, c: f64) -> Result<OracleSolution> {
    bulwark_core::error::check_positive("C", c)?;
    let y = data.require_two_classes()?;
    let n = data.n_features();
    if n > MAX_FEATURES {
        return Err(Error::param(
            "features",
            n,
            format!("at most {MAX_FEATURES} for the enumeration oracle"),
        )
        .into());
    }
    let v = budget.values();
    let p = budget.p();
    let admissible: Vec<u32> = (0u32..(1 << n))
        .filter(|mask| {
            let deleted: f64 = (0..n).filter(|j| mask >> j & 1 == 0).map(|j| v[j]).sum();
            deleted <= budget.budget() + 1e-12
        })
        .collect();
    let m = data.len();
    let mut lp = LpBuilder::new(Sense::Minimize);
    for _ in 0..n {
        lp.add_var(0.0, -c, c);
    }
    let b = lp.add_var(0.0, f64::NEG_INFINITY, f64::INFINITY);
    let mut coeffs = Vec::with_capacity(n + 2);
    let mut constraints = 0;
    for i in 0..m {
        let xi = lp.add_var(1.0 / m as f64, 0.0, f64::INFINITY);
        let yi = y[i].as_f64();
        let mut row = vec![0.0; n];
        data.row(i).to_dense_into(&mut row);
        for &mask in &admissible {
            coeffs.clear();
            coeffs.push((b, yi));
            coeffs.push((xi, 1.0));
            let mut kept_value = 0.0;
            for j in (0..n).filter(|j| mask >> j & 1 == 1) {
                kept_value += v[j];
                if row[j] != 0.0 {
                    coeffs.push((j, yi * row[j]));
                }
            }
            lp.add_row(kept_value / p, f64::INFINITY, &coeffs);
            constraints += 1;
        }
    }
    let problem = lp.build().map_err(|e| DeletionError::Lp(e.into()))?;
    let settings = IpmSettings::builder()
        .tolerance(1e-9)
        .build()
        .map_err(|e| DeletionError::Lp(e.into()))?;
    let sol = bulwark_lp::solve(&problem, &settings)?;
    if sol.status != Status::Optimal {
        return Err(DeletionError::not_solved("hsd-engine/generic-ldl", &sol));
    }
    Ok(OracleSolution {
        value: sol.objective,
        weights: sol.x[..n].to_vec(),
        bias: sol.x[n],
        constraints,
    })
}
