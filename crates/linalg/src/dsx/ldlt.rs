//! A blocked `LDLᵀ` of a dense symmetric quasi-definite matrix whose result does not depend on
//! the thread count: the example space's factorisation on one core or two.
//!
//! faer's `LDLᵀ` with `Par::rayon(2)` changed the last bits against `Par::Seq` on example-space
//! matrices (`tests/dsx.rs`), and the IPM's iterates must be the same bits for any thread count.
//! So the trailing updates are split here into column bands fixed by the order alone, each
//! computed by the same sequential faer kernel call whether one thread runs the bands in turn or
//! two run them at once. Right-looking, in panels of [`PANEL`] columns:
//!
//! 1. the panel's diagonal block by faer's `LDLᵀ` (with the pivot signs and the dynamic
//!    regularisation);
//! 2. the block below it, `X = A₂₁ L₁₁⁻ᵀ` (two fixed halves of its rows), kept as `W = X` and
//!    scaled to `L₂₁ = X D₁⁻¹`;
//! 3. the trailing matrix, `A₂₂ −= L₂₁ Wᵀ` (lower triangle) in two column bands of equal work.

use faer::linalg::cholesky::ldlt::factor::{
    LdltError, LdltParams, LdltRegularization, cholesky_in_place,
};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};

/// Columns per panel.
pub(super) const PANEL: usize = 256;

/// The first band's share of the trailing columns: its triangle and the rectangle below it are
/// as much work as the other band's triangle (`1 − 1/√2` of the columns).
const FIRST_BAND: f64 = 1.0 - std::f64::consts::FRAC_1_SQRT_2;

/// Doubles of work space [`ldlt_in_place`] needs for order `n`.
pub(super) fn ldlt_work_len(n: usize) -> usize {
    n * PANEL
}

/// Factors the lower triangle of `a` (order `n`) in place as `L D Lᵀ` (unit `L` below the
/// diagonal, `D` on it) with the expected pivot signs `signs` and faer's dynamic regularisation
/// `reg` (its `signs` field is ignored: `signs` is used). `work`: at least
/// [`ldlt_work_len`]`(n)` doubles; `stack`: faer's `LDLᵀ` scratch for order [`PANEL`].
/// Returns the pivots faer replaced (positive ones), or the index of a zero or non-finite pivot.
pub(super) fn ldlt_in_place(
    mut a: MatMut<'_, f64>,
    signs: &[i8],
    reg: (f64, f64),
    threads: usize,
    work: &mut [f64],
    stack: &mut faer::dyn_stack::MemStack,
) -> Result<usize, usize> {
    let n = a.nrows();
    let two = threads >= 2;
    let mut count = 0;
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + PANEL).min(n);
        let w = k1 - k0;
        // 1. the diagonal block
        let (epsilon, delta) = reg;
        let info = cholesky_in_place(
            a.rb_mut().submatrix_mut(k0, k0, w, w),
            LdltRegularization {
                dynamic_regularization_signs: Some(&signs[k0..k1]),
                dynamic_regularization_delta: delta,
                dynamic_regularization_epsilon: epsilon,
            },
            Par::Seq,
            stack,
            <faer::Spec<LdltParams, f64>>::default(),
        )
        .map_err(|LdltError::ZeroPivot { index }| k0 + index)?;
        count += info.dynamic_regularization_count;
        if k1 == n {
            break;
        }
        let rest = n - k1;
        let (top, below) = a.rb_mut().split_at_row_mut(k1);
        let l11 = top.rb().submatrix(k0, k0, w, w);
        let (mut left, a22) = below.split_at_col_mut(k1);
        let mut a21 = left.rb_mut().subcols_mut(k0, w);
        // 2. X = A₂₁ L₁₁⁻ᵀ, i.e. L₁₁ Xᵀ = A₂₁ᵀ, in two fixed halves of the rows
        {
            let half = rest / 2;
            let (x1, x2) = a21.rb_mut().split_at_row_mut(half);
            let solve = |x: MatMut<'_, f64>| {
                solve_unit_lower_triangular_in_place(l11, x.transpose_mut(), Par::Seq)
            };
            if two && half > 0 {
                rayon::join(|| solve(x1), || solve(x2));
            } else {
                solve(x1);
                solve(x2);
            }
        }
        // W = X; L₂₁ = X D₁⁻¹
        let mut wmat = MatMut::from_column_major_slice_mut(&mut work[..rest * w], rest, w);
        for c in 0..w {
            let inv = 1.0 / l11[(c, c)];
            for r in 0..rest {
                let x = a21[(r, c)];
                wmat[(r, c)] = x;
                a21[(r, c)] = x * inv;
            }
        }
        // 3. A₂₂ −= L₂₁ Wᵀ (lower triangle), in two column bands fixed by the order
        let l21 = left.rb().subcols(k0, w);
        let wref = MatRef::from_column_major_slice(&work[..rest * w], rest, w);
        trailing_update(a22, l21, wref, two);
        k0 = k1;
    }
    Ok(count)
}

/// `A₂₂ −= L Wᵀ` on the lower triangle of the square `a22`: the first `j` columns (their
/// triangle, then the rectangle below) and the rest (their triangle), each by one sequential
/// kernel call per piece, on two threads when `two`.
fn trailing_update(a22: MatMut<'_, f64>, l: MatRef<'_, f64>, w: MatRef<'_, f64>, two: bool) {
    let n = a22.nrows();
    let j = (((n as f64) * FIRST_BAND).round() as usize).clamp(1, n);
    let (left, right) = a22.split_at_col_mut(j);
    let (mut top, mut rect) = left.split_at_row_mut(j);
    let mut corner = right.subrows_mut(j, n - j);
    let (l_top, l_bot) = l.split_at_row(j);
    let (w_top, w_bot) = w.split_at_row(j);
    let mut band1 = move || {
        tri_matmul(
            top.rb_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            l_top,
            BlockStructure::Rectangular,
            w_top.transpose(),
            BlockStructure::Rectangular,
            -1.0,
            Par::Seq,
        );
        matmul(
            rect.rb_mut(),
            Accum::Add,
            l_bot,
            w_top.transpose(),
            -1.0,
            Par::Seq,
        );
    };
    let mut band2 = move || {
        tri_matmul(
            corner.rb_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            l_bot,
            BlockStructure::Rectangular,
            w_bot.transpose(),
            BlockStructure::Rectangular,
            -1.0,
            Par::Seq,
        );
    };
    if two {
        rayon::join(band1, band2);
    } else {
        band1();
        band2();
    }
}
