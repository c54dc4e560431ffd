//! The yardstick of the dense shapes: one `XᵀDX` as faer's GEMM `Xᵀ (D X)` (shared by the
//! development examples).

use std::time::Instant;

use faer::{Accum, Mat, Par};

/// Seconds of one `Xᵀ (D X)` into `out`, given `X` and `D X`, best of `reps`.
pub fn best_seconds(x: &Mat<f64>, dx: &Mat<f64>, out: &mut Mat<f64>, par: Par, reps: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        faer::linalg::matmul::matmul(
            out.as_mut(),
            Accum::Replace,
            x.transpose(),
            dx.as_ref(),
            1.0,
            par,
        );
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&*out);
    best
}
