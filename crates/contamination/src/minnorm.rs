//! RoLR's own solver: the minimax (min-norm) form of the trimmed-correlation problem.
//!
//! With `a_i = y_i x_i` (rows of `A`), `z_i = ⟨β, a_i⟩` and `P_k = {t : 0 ≤ t ≤ 1, Σ t = k}`,
//! the corrected RoLR problem (the notes' form with `ν` free, Feng et al. eq. (2)) is
//!
//! `max_{‖β‖ ≤ 1} Σ_{i ≤ k} z_(i) = max_{‖β‖ ≤ 1} min_{t ∈ P_k} ⟨β, Aᵀt⟩ = min_{t ∈ P_k} ‖Aᵀt‖`
//!
//! (a bilinear saddle point over compact convex sets). Every feasible `t` gives an **upper
//! bound** `‖Aᵀt‖` and every unit `β` a **lower bound** `f(β) = Σ_{i ≤ k} z_(i)`; the estimate is
//! `β̂ = w*/‖w*‖`, `w* = Aᵀt*` the min-norm point, and the optimal value is `‖w*‖ ≥ 0`. When it is
//! 0, `β = 0` is optimal: RoLR has **broken down** (every unit vector has a negative trimmed
//! correlation).
//!
//! The method:
//! 1. accelerated projected gradient (FISTA with backtracking and adaptive restart) on
//!    `½‖Aᵀt‖²` over `P_k`, the projection onto the capped simplex by a safeguarded Newton
//!    search of its shift (exact on the final linear piece);
//! 2. at every check, an **active-set step**: the rows whose `⟨a_i, w⟩` is clearly below the
//!    `k`-th smallest get `t = 1`, clearly above `t = 0`, and the few rows tied with it solve the
//!    optimality system `⟨a_i, c + Σ_T t_j a_j⟩ = μ` (`i ∈ T`), `Σ_T t_j = k − |I|` exactly
//!    (a small dense LU); the result is kept only when it is feasible and improves the bound;
//! 3. it stops on the certified relative gap `(‖Aᵀt‖ − f(β))/‖Aᵀt‖`, or declares breakdown when
//!    the upper bound `‖Aᵀt‖` falls below `breakdown_tolerance` times the largest possible value
//!    (the sum of the `k` largest `‖a_i‖`), or reports the iteration limit with both bounds.

use bulwark_core::budget::dot4 as dot;
use faer::Mat;
use faer::linalg::solvers::Solve;

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// The relative gap met the tolerance; the optimal value is positive.
    Solved,
    /// The optimal value is 0 within the breakdown tolerance: `β̂ = 0`.
    Breakdown,
    /// The iteration limit came first.
    IterationLimit,
}

/// The result of [`solve`].
#[derive(Debug, Clone)]
pub(crate) struct MinNorm {
    /// The unit estimate (zeros on breakdown).
    pub beta: Vec<f64>,
    /// The best lower bound `f(β)` found (the objective at `beta`; 0 on breakdown).
    pub lower: f64,
    /// The best upper bound `‖Aᵀt‖`.
    pub upper: f64,
    /// FISTA iterations.
    pub iterations: usize,
    /// Active-set steps that were accepted.
    pub active_set_steps: usize,
    pub status: Status,
    /// Whether no trimming was needed (`k = m`: the closed form `Σ a_i/‖Σ a_i‖`).
    pub closed_form: bool,
}

/// Solver settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub tolerance: f64,
    pub breakdown_tolerance: f64,
    pub max_iter: usize,
}

/// The sum of the `k` smallest entries of `v` (reorders `v`).
pub(crate) fn sum_smallest(v: &mut [f64], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    if k < v.len() {
        v.select_nth_unstable_by(k - 1, f64::total_cmp);
    }
    v[..k].iter().sum()
}

/// `out = A w` (`A` row-major `m × p`).
fn mul(a: &[f64], p: usize, w: &[f64], out: &mut [f64]) {
    for (o, row) in out.iter_mut().zip(a.chunks_exact(p)) {
        *o = dot(row, w);
    }
}

/// `out = Aᵀ t`.
fn mul_t(a: &[f64], p: usize, t: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (ti, row) in t.iter().zip(a.chunks_exact(p)) {
        if *ti != 0.0 {
            for (o, r) in out.iter_mut().zip(row) {
                *o += ti * r;
            }
        }
    }
}

/// Projects `v` onto `{0 ≤ t ≤ 1, Σ t = k}` (`0 < k < len`): `t_i = clamp(v_i − θ, 0, 1)` with
/// the shift `θ` found by Newton steps on the piecewise-linear `h(θ) = Σ clamp(v_i − θ, 0, 1)`,
/// safeguarded by bisection; `theta` is the warm start and returns the shift.
pub(crate) fn project_capped_simplex(v: &[f64], k: f64, theta: &mut f64, out: &mut [f64]) {
    let (mut lo, mut hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    lo -= 1.0; // h(lo) = m ≥ k
    let mut th = if *theta > lo && *theta < hi {
        *theta
    } else {
        0.5 * (lo + hi)
    };
    for _ in 0..200 {
        let (mut n_up, mut n_free, mut s_free) = (0.0, 0.0, 0.0);
        for &x in v {
            let d = x - th;
            if d >= 1.0 {
                n_up += 1.0;
            } else if d > 0.0 {
                n_free += 1.0;
                s_free += x;
            }
        }
        let h = n_up + s_free - n_free * th;
        if (h - k).abs() <= 1e-13 * k.max(1.0) {
            break;
        }
        if h > k {
            lo = th;
        } else {
            hi = th;
        }
        let newton = if n_free > 0.0 {
            (n_up + s_free - k) / n_free
        } else {
            f64::NAN
        };
        th = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if hi - lo <= 1e-15 * (hi.abs() + lo.abs() + 1.0) {
            break;
        }
    }
    *theta = th;
    for (o, &x) in out.iter_mut().zip(v) {
        *o = (x - th).clamp(0.0, 1.0);
    }
}

/// Scratch memory of one solve, allocated once.
struct Work {
    t: Vec<f64>,
    t_prev: Vec<f64>,
    y: Vec<f64>,
    step: Vec<f64>,
    g: Vec<f64>,
    sorted: Vec<f64>,
    w: Vec<f64>,
    w_prev: Vec<f64>,
    wy: Vec<f64>,
    w_next: Vec<f64>,
    t_next: Vec<f64>,
}

/// Solves the problem for `A` (row-major `m × p`, rows `y_i x_i`) and trim size `k ≤ m`.
pub(crate) fn solve(a: &[f64], m: usize, p: usize, k: usize, s: Settings) -> MinNorm {
    // ‖a_i‖, for the largest value any unit β can reach (the sum of the k largest) and the
    // radii of the active-set step
    let row_norms: Vec<f64> = a.chunks_exact(p).map(|r| dot(r, r).sqrt()).collect();
    let a_max = row_norms.iter().copied().fold(0.0f64, f64::max);
    let mut negated: Vec<f64> = row_norms.iter().map(|v| -v).collect();
    let scale = -sum_smallest(&mut negated, k);
    drop(negated);
    let breakdown_at = s.breakdown_tolerance * scale;
    if k >= m {
        // no trimming: t = 1 is the only feasible point (Feng et al.: nothing is trimmed)
        let mut w = vec![0.0; p];
        mul_t(a, p, &vec![1.0; m], &mut w);
        let nw = dot(&w, &w).sqrt();
        return finish(w, nw, nw, 0, 0, Status::Solved, true, breakdown_at);
    }
    let kf = k as f64;
    let mut wk = Work {
        t: vec![kf / m as f64; m],
        t_prev: vec![0.0; m],
        y: vec![0.0; m],
        step: vec![0.0; m],
        g: vec![0.0; m],
        sorted: vec![0.0; m],
        w: vec![0.0; p],
        w_prev: vec![0.0; p],
        wy: vec![0.0; p],
        w_next: vec![0.0; p],
        t_next: vec![0.0; m],
    };
    mul_t(a, p, &wk.t, &mut wk.w);
    // the Lipschitz constant of ∇ = A Aᵀ t: a power-iteration estimate, then backtracking
    let mut lip = {
        let mut v = vec![1.0 / (p as f64).sqrt(); p];
        let mut est = 0.0;
        for _ in 0..8 {
            mul(a, p, &v, &mut wk.g);
            mul_t(a, p, &wk.g, &mut wk.wy);
            est = dot(&wk.wy, &wk.wy).sqrt();
            if est == 0.0 {
                break;
            }
            for (x, y) in v.iter_mut().zip(&wk.wy) {
                *x = y / est;
            }
        }
        est.max(f64::MIN_POSITIVE)
    };
    let mut theta = 0.0;
    let mut momentum = 1.0f64;
    let (mut best_lower, mut best_beta) = (f64::NEG_INFINITY, vec![0.0; p]);
    let mut upper = dot(&wk.w, &wk.w).sqrt();
    let mut accepted = 0;
    let check_every = 10;
    let mut it = 0;
    let status = loop {
        if it % check_every == 0 {
            let nw = dot(&wk.w, &wk.w).sqrt();
            upper = upper.min(nw);
            if upper <= breakdown_at {
                break Status::Breakdown;
            }
            // the lower bound at β = w/‖w‖, and the active-set step from the same products
            mul(a, p, &wk.w, &mut wk.g);
            wk.sorted.copy_from_slice(&wk.g);
            let low = sum_smallest(&mut wk.sorted, k) / nw;
            if low > best_lower {
                best_lower = low;
                for (b, x) in best_beta.iter_mut().zip(&wk.w) {
                    *b = x / nw;
                }
            }
            if upper - best_lower <= s.tolerance * upper {
                break Status::Solved;
            }
            // the current point's own gap bounds its distance to w*
            let gap = nw - best_lower.max(0.0);
            let rows = Rows {
                a,
                p,
                norms: &row_norms,
                max_norm: a_max,
            };
            if let Some((t_as, w_as)) = active_set_step(&rows, k, &wk.g, &wk.sorted, nw, gap) {
                let n_as = dot(&w_as, &w_as).sqrt();
                mul(a, p, &w_as, &mut wk.g);
                wk.sorted.copy_from_slice(&wk.g);
                let low = sum_smallest(&mut wk.sorted, k) / n_as;
                if n_as < upper && n_as > 0.0 {
                    accepted += 1;
                    upper = n_as;
                    // restart FISTA from the better point
                    wk.t.copy_from_slice(&t_as);
                    wk.w.copy_from_slice(&w_as);
                    momentum = 1.0;
                }
                if low > best_lower {
                    best_lower = low;
                    for (b, x) in best_beta.iter_mut().zip(&w_as) {
                        *b = x / n_as;
                    }
                }
                if upper - best_lower <= s.tolerance * upper {
                    break Status::Solved;
                }
            }
        }
        if it >= s.max_iter {
            break Status::IterationLimit;
        }
        it += 1;
        // FISTA step from the extrapolated point y = t + γ (t − t_prev); Aᵀy by linearity
        let next_m = 0.5 * (1.0 + (1.0 + 4.0 * momentum * momentum).sqrt());
        let gamma = if it == 1 {
            0.0
        } else {
            (momentum - 1.0) / next_m
        };
        for i in 0..m {
            wk.y[i] = wk.t[i] + gamma * (wk.t[i] - wk.t_prev[i]);
        }
        for j in 0..p {
            wk.wy[j] = wk.w[j] + gamma * (wk.w[j] - wk.w_prev[j]);
        }
        mul(a, p, &wk.wy, &mut wk.g); // ∇ at y
        let fy = 0.5 * dot(&wk.wy, &wk.wy);
        loop {
            for i in 0..m {
                wk.step[i] = wk.y[i] - wk.g[i] / lip;
            }
            project_capped_simplex(&wk.step, kf, &mut theta, &mut wk.t_next);
            mul_t(a, p, &wk.t_next, &mut wk.w_next);
            let f_next = 0.5 * dot(&wk.w_next, &wk.w_next);
            let (mut lin, mut quad) = (0.0, 0.0);
            for i in 0..m {
                let d = wk.t_next[i] - wk.y[i];
                lin += wk.g[i] * d;
                quad += d * d;
            }
            if f_next <= fy + lin + 0.5 * lip * quad * (1.0 + 1e-12) + 1e-300 {
                // adaptive restart (O'Donoghue & Candès): momentum against the step
                let mut restart = 0.0;
                for i in 0..m {
                    restart += wk.g[i] * (wk.t_next[i] - wk.t[i]);
                }
                momentum = if restart > 0.0 { 1.0 } else { next_m };
                break;
            }
            lip *= 2.0;
        }
        std::mem::swap(&mut wk.t_prev, &mut wk.t);
        std::mem::swap(&mut wk.t, &mut wk.t_next);
        std::mem::swap(&mut wk.w_prev, &mut wk.w);
        std::mem::swap(&mut wk.w, &mut wk.w_next);
    };
    if status == Status::Breakdown {
        return finish(
            vec![0.0; p],
            0.0,
            upper,
            it,
            accepted,
            status,
            false,
            breakdown_at,
        );
    }
    MinNorm {
        beta: best_beta,
        lower: best_lower,
        upper,
        iterations: it,
        active_set_steps: accepted,
        status,
        closed_form: false,
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    w: Vec<f64>,
    nw: f64,
    upper: f64,
    iterations: usize,
    active_set_steps: usize,
    status: Status,
    closed_form: bool,
    breakdown_at: f64,
) -> MinNorm {
    let broken = status == Status::Breakdown || nw <= breakdown_at;
    let beta = if broken {
        vec![0.0; w.len()]
    } else {
        w.iter().map(|x| x / nw).collect()
    };
    MinNorm {
        beta,
        lower: if broken { 0.0 } else { nw },
        upper,
        iterations,
        active_set_steps,
        status: if broken { Status::Breakdown } else { status },
        closed_form,
    }
}

/// The rows `a_i` of `A` (row-major, `p` columns) with their norms, computed once per solve.
struct Rows<'a> {
    a: &'a [f64],
    p: usize,
    norms: &'a [f64],
    max_norm: f64,
}

/// The active-set step at the point whose products `g = A w` are given (`sorted` holds `g`
/// with its `k`-th smallest at `k − 1`): rows clearly below the `k`-th smallest product are
/// in (`t = 1`), rows tied with it (within what the current gap allows) solve the optimality
/// system exactly. Returns `(t, Aᵀt)` when the system is regular and its solution feasible.
fn active_set_step(
    rows: &Rows<'_>,
    k: usize,
    g: &[f64],
    sorted: &[f64],
    nw: f64,
    gap: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let (a, p, a_max) = (rows.a, rows.p, rows.max_norm);
    let mu = sorted[k - 1];
    // ‖w − w*‖² ≤ 2‖w‖·gap (min-norm optimality), so |⟨a_i, w − w*⟩| ≤ ‖a_i‖·√(2‖w‖ gap), and
    // the k-th smallest product moves by at most max_j ‖a_j‖·√(2‖w‖ gap)
    let radius = (2.0 * nw * gap.max(0.0)).sqrt() + 1e-13 * nw;
    let mut inside = Vec::new();
    let mut tied = Vec::new();
    for (i, (&gi, norm)) in g.iter().zip(rows.norms).enumerate() {
        let r = radius * (norm + a_max);
        if gi < mu - r {
            inside.push(i);
        } else if gi <= mu + r {
            tied.push(i);
        }
    }
    if inside.len() > k || inside.len() + tied.len() < k || tied.is_empty() || tied.len() > p + 1 {
        return None;
    }
    // the tied rows solve the optimality system of their face; a row whose t leaves [0, 1]
    // leaves the face (t < 0: out, t > 1: in) and the system is solved again
    let mut t = vec![0.0; g.len()];
    for &i in &inside {
        t[i] = 1.0;
    }
    let mut in_count = inside.len();
    let mut c = vec![0.0; p];
    for &i in &inside {
        for (cj, aj) in c.iter_mut().zip(&a[i * p..(i + 1) * p]) {
            *cj += aj;
        }
    }
    // the Gram matrix of the tied rows, once: a row that leaves the face only drops its row and
    // column (`slot[i]` is tied row i's place in it), so every round's system has the same
    // entries as if it were formed anew
    let q0 = tied.len();
    let mut gram = vec![0.0; q0 * q0];
    for i in 0..q0 {
        let ri = &a[tied[i] * p..(tied[i] + 1) * p];
        for j in 0..=i {
            let v = dot(ri, &a[tied[j] * p..(tied[j] + 1) * p]);
            gram[i * q0 + j] = v;
            gram[j * q0 + i] = v;
        }
    }
    let mut slot: Vec<usize> = (0..q0).collect();
    loop {
        let q = tied.len();
        if q == 0 || in_count > k || in_count + q < k {
            return None;
        }
        let r_need = (k - in_count) as f64;
        // [BᵀB  −1; 1ᵀ 0] [t; μ] = [−Bᵀc; r]
        let row = |i: usize| &a[tied[i] * p..(tied[i] + 1) * p];
        let mut kkt = Mat::<f64>::zeros(q + 1, q + 1);
        let mut rhs = Mat::<f64>::zeros(q + 1, 1);
        for i in 0..q {
            let gi = &gram[slot[i] * q0..(slot[i] + 1) * q0];
            for j in 0..=i {
                let v = gi[slot[j]];
                kkt[(i, j)] = v;
                kkt[(j, i)] = v;
            }
            kkt[(i, q)] = -1.0;
            kkt[(q, i)] = 1.0;
            rhs[(i, 0)] = -dot(row(i), &c);
        }
        rhs[(q, 0)] = r_need;
        let sol = kkt.full_piv_lu().solve(&rhs);
        let mut worst = (0.0, None);
        for i in 0..q {
            let v = sol[(i, 0)];
            if !v.is_finite() {
                return None;
            }
            let excess = (-v).max(v - 1.0);
            if excess > 1e-12 && excess > worst.0 {
                worst = (excess, Some(i));
            }
        }
        match worst.1 {
            None => {
                for (i, &ix) in tied.iter().enumerate() {
                    t[ix] = sol[(i, 0)].clamp(0.0, 1.0);
                }
                break;
            }
            Some(i) => {
                let ix = tied.swap_remove(i);
                slot.swap_remove(i);
                if sol[(i, 0)] > 1.0 {
                    t[ix] = 1.0;
                    in_count += 1;
                    for (cj, aj) in c.iter_mut().zip(&a[ix * p..(ix + 1) * p]) {
                        *cj += aj;
                    }
                }
            }
        }
    }
    // Σ t = k within rounding after the clamp
    let excess: f64 = t.iter().sum::<f64>() - k as f64;
    if excess.abs() > 1e-9 * k as f64 {
        return None;
    }
    let mut w = vec![0.0; p];
    mul_t(a, p, &t, &mut w);
    Some((t, w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    /// The projection is the Euclidean projection: it beats random feasible points and meets
    /// the sum exactly.
    #[test]
    fn capped_simplex_projection() {
        let mut rng = StdRng::seed_from_u64(3);
        for trial in 0..200 {
            let m = rng.random_range(2..40);
            let k = rng.random_range(1..m) as f64;
            let v: Vec<f64> = (0..m).map(|_| rng.random_range(-3.0..3.0)).collect();
            let mut out = vec![0.0; m];
            let mut th = 0.0;
            project_capped_simplex(&v, k, &mut th, &mut out);
            assert!((out.iter().sum::<f64>() - k).abs() < 1e-10, "trial {trial}");
            assert!(out.iter().all(|x| (0.0..=1.0).contains(x)));
            let dist = |t: &[f64]| -> f64 { t.iter().zip(&v).map(|(a, b)| (a - b).powi(2)).sum() };
            let d0 = dist(&out);
            for _ in 0..50 {
                // another feasible point: a random point of the capped simplex
                let mut u: Vec<f64> = (0..m).map(|_| rng.random_range(-2.0..2.0)).collect();
                let mut th2 = 0.0;
                let src = u.clone();
                project_capped_simplex(&src, k, &mut th2, &mut u);
                assert!(dist(&u) >= d0 - 1e-9);
            }
        }
    }

    #[test]
    fn sum_of_smallest() {
        let mut v = vec![5.0, -1.0, 3.0, 0.5, 2.0];
        assert_eq!(sum_smallest(&mut v, 2), -0.5);
        assert_eq!(sum_smallest(&mut v, 5), 9.5);
    }
}
