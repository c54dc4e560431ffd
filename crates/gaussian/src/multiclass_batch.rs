//! M-GURU's batch solver and its duality certificate (Ginodi Ch. 5, the objective
//! (5.12)–(5.14); the thesis derives no multiclass dual, the one here is derived like (3.17)).
//!
//! **Objective.** `G(W) = Σ_m c_m Σ_{k≠y_m} g(σ‖Δ_{y_m k}‖, 1 − Δ_{y_m k}ᵀx_m)`,
//! `Δ_{ab} = w_a − w_b`, `g(a, b) = a f̃(b/a)` (Ginodi eq. (5.14)): convex, and unchanged when the
//! same vector is added to every `w_a` (only differences enter). The solver starts on the ray
//! of the limit gradient at `W = 0` (as the binary batch solver does) and runs Newton–CG with
//! an Armijo line search; the gradient and every Hessian product are orthogonal to the shifts
//! and the preconditioner (one scale per feature, shared by the classes) keeps them so (what
//! CG's rounding adds along the shifts is removed from each direction). A step that lowers `G`
//! is followed by the ray search on the new point (`G(τW)` from its scores, no pass over the
//! data) when that gains more than [`RAY_GAIN`]. A warm start (the optimum at a nearby `σ`)
//! replaces the limit gradient's direction.
//!
//! **Certificate.** For `p_{mk} ∈ [0, 1]` the conjugate inequality `g(a, b) ≥ p b + a s(p)`
//! (`s` the concave conjugate of `f̃`, Ginodi Lemma 6: `s = φ∘Φ⁻¹`) summed over the terms gives,
//! for every `W`,
//!
//! `G(W) ≥ P + Σ_{a<b} (σ S_{ab} ‖Δ_{ab}‖ − V_{ab}ᵀΔ_{ab})`,   `P = Σ c p`,
//!
//! with `S_{ab}` the sum of `c s(p)` over the terms of the class pair `{a, b}` and `V_{ab}` the
//! signed sum of `c p x` over them. Only the class divergences `N_a` of `V` (`Σ_{a<b} V_{ab}ᵀΔ_{ab}
//! = Σ_a w_aᵀN_a`) matter: if vectors `U_{ab}` have the same divergences and `‖U_{ab}‖ ≤ σS_{ab}`,
//! the sum is `≥ 0` for every `W` (Cauchy–Schwarz per pair), so `min G ≥ P`. The `U` offered is
//! `U_{ab} = σ S_{ab} Δ̂_{ab} + ω_{ab}(φ_a − φ_b)`: the tight choice at the current `W`, whose
//! divergences differ from `N` by minus the gradient, corrected by the least-squares flow
//! (`ω_{ab} = S_{ab}`, potentials `φ` from the `C × C` weighted Laplacian, eliminated without
//! subtractions so that weights many orders of magnitude apart — pairs deep in the Gaussian tail
//! at small σ — keep their relative accuracy; a pair without dual mass carries no flow). Then the dual point is
//! scaled by the largest `κ ∈ (0, 1]` with `κ‖U_{ab}‖ ≤ σ S_{ab}(κp)` for every pair (each
//! side concave in `κ`, `s(0) = 0`), and the bound is `κP`. At the optimum `∇G = 0`, the
//! correction vanishes, `κ = 1` and `P = G` (Euler's identity for the 1-homogeneous `g` gives
//! `G − P = ⟨∇G, W⟩`): the gap closes. With two classes it is the certificate of (3.17).

use crate::algorithm::{Outcome, UNDERFLOW};
use crate::batch::{CgScratch, armijo, minimise_on_ray, newton_direction};
use crate::loss::perspective;
use crate::multiclass::MulticlassObjective;
use crate::objective::{Certificate, largest_feasible_scale};

/// The buffers of the solver and the certificate, allocated once per fit. Ordered class pairs
/// are indexed `a·C + b`, the terms `(m, k)` of the objective `m·C + k`.
pub(crate) struct Work {
    c: usize,
    d: usize,
    /// `‖Δ_ab‖` and `Δ̂_ab` (`C·C`, `C·C·d`).
    norm: Vec<f64>,
    hat: Vec<f64>,
    /// `x_mᵀw_a` (`M·C`).
    scores: Vec<f64>,
    /// Per term: the margin ratio `u`, `p = f̃'(u)`, `1 − p`, the Hessian weights.
    u: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
    kk: Vec<f64>,
    tt: Vec<f64>,
    /// Per ordered pair: accumulators, `Σ tt`, `Δ̂ᵀ(p_a − p_b)` of a Hessian product.
    acc: Vec<f64>,
    tsum: Vec<f64>,
    hd: Vec<f64>,
    /// Per example and class (`M·C`): the products `x_mᵀp_a` of a Hessian product, and the
    /// coefficients of `x_m` added to each class by a pass.
    xp: Vec<f64>,
    xcoef: Vec<f64>,
    /// `P = Σ c p` of the last pass.
    psum: f64,
    // the certificate's: divergences, residual, potentials, Laplacian, pair capacities
    nvec: Vec<f64>,
    rvec: Vec<f64>,
    phi: Vec<f64>,
    lap: Vec<f64>,
    wts: Vec<f64>,
    pairp: Vec<f64>,
    col: Vec<f64>,
    cap: Vec<f64>,
    unorm: Vec<f64>,
    /// The terms of each unordered pair `a < b` (CSR by `a·C + b`).
    offsets: Vec<usize>,
    terms: Vec<usize>,
}

impl Work {
    pub(crate) fn new(obj: &MulticlassObjective<'_>) -> Self {
        let (c, d, m) = (obj.classes, obj.dim(), obj.len());
        let mut count = vec![0usize; c * c + 1];
        for i in 0..m {
            let y = obj.class[i];
            for k in (0..c).filter(|&k| k != y) {
                count[y.min(k) * c + y.max(k) + 1] += 1;
            }
        }
        for j in 1..count.len() {
            count[j] += count[j - 1];
        }
        let offsets = count.clone();
        let mut fill = count;
        let mut terms = vec![0usize; m * (c - 1)];
        for i in 0..m {
            let y = obj.class[i];
            for k in (0..c).filter(|&k| k != y) {
                let pair = y.min(k) * c + y.max(k);
                terms[fill[pair]] = i * c + k;
                fill[pair] += 1;
            }
        }
        Self {
            c,
            d,
            norm: vec![0.0; c * c],
            hat: vec![0.0; c * c * d],
            scores: vec![0.0; m * c],
            u: vec![0.0; m * c],
            p: vec![0.0; m * c],
            q: vec![0.0; m * c],
            kk: vec![0.0; m * c],
            tt: vec![0.0; m * c],
            acc: vec![0.0; c * c],
            tsum: vec![0.0; c * c],
            hd: vec![0.0; c * c],
            xp: vec![0.0; m * c],
            xcoef: vec![0.0; m * c],
            psum: 0.0,
            nvec: vec![0.0; c * d],
            rvec: vec![0.0; c * d],
            phi: vec![0.0; c * d],
            lap: vec![0.0; c * c],
            wts: vec![0.0; c * c],
            pairp: vec![0.0; c * c],
            col: vec![0.0; c],
            cap: vec![0.0; c * c],
            unorm: vec![0.0; c * c],
            offsets,
            terms,
        }
    }

    /// The pair differences of `W` and the scores `x_mᵀw_a`: one pass over the data.
    pub(crate) fn set_point(&mut self, obj: &MulticlassObjective<'_>, w: &[f64]) {
        let (c, d) = (self.c, self.d);
        for a in 0..c {
            for b in 0..c {
                let ab = a * c + b;
                let hat = &mut self.hat[ab * d..(ab + 1) * d];
                if a == b {
                    self.norm[ab] = 0.0;
                    hat.fill(0.0);
                    continue;
                }
                let mut s = 0.0;
                for j in 0..d {
                    let v = w[a * d + j] - w[b * d + j];
                    hat[j] = v;
                    s += v * v;
                }
                let n = s.sqrt();
                self.norm[ab] = n;
                if n > 0.0 {
                    for h in hat.iter_mut() {
                        *h /= n;
                    }
                }
            }
        }
        obj.scores_into(w, &mut self.scores);
    }

    /// `G(tW)` for the `W` of [`Work::set_point`], from its norms and scores (no pass over the
    /// data): `Σ c g(σt‖Δ‖, 1 − t Δᵀx)` (Ginodi eq. (5.14)).
    fn value_at_scale(&self, obj: &MulticlassObjective<'_>, t: f64) -> f64 {
        let c = self.c;
        let mut g = 0.0;
        for i in 0..obj.len() {
            let y = obj.class[i];
            let sy = self.scores[i * c + y];
            let mut sum = 0.0;
            for k in (0..c).filter(|&k| k != y) {
                let a = obj.sigma * t * self.norm[y * c + k];
                sum += perspective(obj.loss, a, 1.0 - t * (sy - self.scores[i * c + k]));
            }
            g += obj.weight(i) * sum;
        }
        g
    }

    /// `G(W)` at the point of [`Work::set_point`] (Ginodi eq. (5.14)).
    pub(crate) fn value(&self, obj: &MulticlassObjective<'_>) -> f64 {
        self.value_at_scale(obj, 1.0)
    }

    /// `G(W)` and `∇G(W)` into `grad` at the point of [`Work::set_point`]; keeps `u`, `p = f̃'(u)`
    /// and `1 − p` per term and `P = Σ c p`. Per term the gradient of `g` in `Δ` is
    /// `c(−f̃'(u) x + σ r(u) Δ̂)` (the corrected Ch. 5 gradient of the notes), added to `w_y`
    /// and subtracted from `w_k`; at `Δ = 0` its limit `−x [b > 0]`.
    pub(crate) fn gradient(&mut self, obj: &MulticlassObjective<'_>, grad: &mut [f64]) -> f64 {
        let (c, d) = (self.c, self.d);
        let (sigma, loss) = (obj.sigma, obj.loss);
        grad.fill(0.0);
        self.acc.fill(0.0);
        let (mut g, mut psum) = (0.0, 0.0);
        for i in 0..obj.len() {
            let y = obj.class[i];
            let cw = obj.weight(i);
            let sy = self.scores[i * c + y];
            let mut xy = 0.0;
            for k in 0..c {
                if k == y {
                    continue;
                }
                let t = i * c + k;
                let b = 1.0 - (sy - self.scores[t]);
                let a = sigma * self.norm[y * c + k];
                g += cw * perspective(loss, a, b);
                let (p, q, r) = if a > 0.0 {
                    let z = b / a;
                    self.u[t] = z;
                    (loss.d1(z), loss.d1_complement(z), loss.scale_derivative(z))
                } else {
                    self.u[t] = if b > 0.0 {
                        f64::INFINITY
                    } else {
                        f64::NEG_INFINITY
                    };
                    if b > 0.0 {
                        (1.0, 0.0, 0.0)
                    } else {
                        (0.0, 1.0, 0.0)
                    }
                };
                self.p[t] = p;
                self.q[t] = q;
                psum += cw * p;
                self.acc[y * c + k] += cw * r;
                self.xcoef[t] = cw * p;
                xy -= cw * p;
            }
            self.xcoef[i * c + y] = xy;
        }
        obj.add_rows_into(&self.xcoef, grad);
        for y in 0..c {
            for k in (0..c).filter(|&k| k != y) {
                let s = sigma * self.acc[y * c + k];
                if s == 0.0 {
                    continue;
                }
                let hat = &self.hat[(y * c + k) * d..(y * c + k + 1) * d];
                for j in 0..d {
                    grad[y * d + j] += s * hat[j];
                    grad[k * d + j] -= s * hat[j];
                }
            }
        }
        self.psum = psum;
        g
    }

    /// The Hessian weights at the point of the last [`Work::gradient`] (terms with `Δ ≠ 0`):
    /// `kk = c f̃''(u)/a`, `tt = σ c r(u)/‖Δ‖`, and a Jacobi-like preconditioner, one value per
    /// feature shared by the classes, into `diag`.
    fn curvature(&mut self, obj: &MulticlassObjective<'_>, diag: &mut [f64]) {
        let c = self.c;
        let (sigma, loss) = (obj.sigma, obj.loss);
        self.tsum.fill(0.0);
        diag.fill(0.0);
        let mut iso = 0.0;
        for i in 0..obj.len() {
            let y = obj.class[i];
            let cw = obj.weight(i);
            let mut kx = 0.0;
            for k in (0..c).filter(|&k| k != y) {
                let t = i * c + k;
                let n = self.norm[y * c + k];
                if n > 0.0 {
                    let z = self.u[t];
                    self.kk[t] = cw * loss.d2(z) / (sigma * n);
                    self.tt[t] = sigma * cw * loss.scale_derivative(z) / n;
                } else {
                    self.kk[t] = 0.0;
                    self.tt[t] = 0.0;
                }
                self.tsum[y * c + k] += self.tt[t];
                iso += self.tt[t];
                kx += self.kk[t];
            }
            if kx > 0.0 {
                obj.add_squares(i, kx, diag);
            }
        }
        let dmax = diag.iter().fold(0.0_f64, |a, b| a.max(*b)) + iso;
        for v in diag.iter_mut() {
            *v = (*v + iso).max(1e-12 * dmax).max(1e-300);
        }
    }

    /// `out = ∇²G(W) p` at the point of the last [`Work::curvature`]: per term
    /// `kk q qᵀδ + tt (I − Δ̂Δ̂ᵀ) δ`, `δ = p_y − p_k`, `q = −x − uσΔ̂` (the binary Hessian of
    /// `objective.rs` on the pair's difference), added to class `y` and subtracted from `k`.
    fn hess_vec(&mut self, obj: &MulticlassObjective<'_>, p: &[f64], out: &mut [f64]) {
        let (c, d) = (self.c, self.d);
        let sigma = obj.sigma;
        for y in 0..c {
            for k in (0..c).filter(|&k| k != y) {
                let hat = &self.hat[(y * c + k) * d..(y * c + k + 1) * d];
                self.hd[y * c + k] = (0..d).map(|j| hat[j] * (p[y * d + j] - p[k * d + j])).sum();
            }
        }
        out.fill(0.0);
        self.acc.fill(0.0);
        obj.scores_into(p, &mut self.xp);
        for i in 0..obj.len() {
            let y = obj.class[i];
            let xp = &self.xp[i * c..(i + 1) * c];
            let mut xy = 0.0;
            for k in 0..c {
                let t = i * c + k;
                self.xcoef[t] = 0.0;
                if k == y {
                    continue;
                }
                let h = self.hd[y * c + k];
                if self.kk[t] != 0.0 {
                    let qd = -(xp[y] - xp[k]) - self.u[t] * sigma * h;
                    let kq = self.kk[t] * qd;
                    self.xcoef[t] = kq;
                    xy -= kq;
                    self.acc[y * c + k] -= kq * self.u[t] * sigma;
                }
                self.acc[y * c + k] -= self.tt[t] * h;
            }
            self.xcoef[i * c + y] = xy;
        }
        obj.add_rows_into(&self.xcoef, out);
        for y in 0..c {
            for k in (0..c).filter(|&k| k != y) {
                let (coef, ts) = (self.acc[y * c + k], self.tsum[y * c + k]);
                if coef == 0.0 && ts == 0.0 {
                    continue;
                }
                let hat = &self.hat[(y * c + k) * d..(y * c + k + 1) * d];
                for j in 0..d {
                    let v = coef * hat[j] + ts * (p[y * d + j] - p[k * d + j]);
                    out[y * d + j] += v;
                    out[k * d + j] -= v;
                }
            }
        }
    }

    /// The certificate (module notes) at the point of the last [`Work::gradient`], whose value
    /// `primal = G(W)` is given: a lower bound `κP` on `min G` and the relative gap it leaves.
    pub(crate) fn certificate(
        &mut self,
        obj: &MulticlassObjective<'_>,
        primal: f64,
    ) -> Certificate {
        let (c, d) = (self.c, self.d);
        let (sigma, loss) = (obj.sigma, obj.loss);
        // the divergences N_a = Σ_{y=a} c Σ_k p x − Σ_{k=a} c p x, and S per ordered pair
        self.nvec.fill(0.0);
        self.acc.fill(0.0);
        self.pairp.fill(0.0);
        for i in 0..obj.len() {
            let y = obj.class[i];
            let cw = obj.weight(i);
            let mut xy = 0.0;
            for k in 0..c {
                let t = i * c + k;
                self.xcoef[t] = 0.0;
                if k == y {
                    continue;
                }
                self.acc[y * c + k] += cw * loss.conjugate(self.p[t], self.q[t]);
                self.pairp[y * c + k] += cw * self.p[t];
                self.xcoef[t] = -cw * self.p[t];
                xy += cw * self.p[t];
            }
            self.xcoef[i * c + y] = xy;
        }
        obj.add_rows_into(&self.xcoef, &mut self.nvec);
        // capacities σS_ab (a < b) and the residual R = N − div(σ S Δ̂)
        self.cap.fill(0.0);
        self.rvec.copy_from_slice(&self.nvec);
        for a in 0..c {
            for b in a + 1..c {
                let s = self.acc[a * c + b] + self.acc[b * c + a];
                self.cap[a * c + b] = sigma * s;
                let hat = &self.hat[(a * c + b) * d..(a * c + b + 1) * d];
                for j in 0..d {
                    self.rvec[a * d + j] -= sigma * s * hat[j];
                    self.rvec[b * d + j] += sigma * s * hat[j];
                }
            }
        }
        // the least-squares flow: L φ = R with the Laplacian of the weights ω_ab = S_ab, or
        // P_ab (the pair's Σ c p) where S_ab is 0 (p = 1 everywhere: the κ scaling gives such a
        // pair capacity), 0 for a pair without dual mass — its terms add nothing to N or to
        // div(σSΔ̂), so over each connected component R sums to 0 (up to rounding) and no flow
        // needs to cross. No floor: at small σ the weights span hundreds of orders of magnitude,
        // and a floor above a pair's capacity makes it infeasible (κ = 0).
        self.lap.fill(0.0);
        for a in 0..c {
            for b in a + 1..c {
                let (s, pm) = (
                    self.cap[a * c + b] / sigma,
                    self.pairp[a * c + b] + self.pairp[b * c + a],
                );
                let w = if s > 0.0 { s } else { pm };
                self.lap[a * c + b] = w;
                self.lap[b * c + a] = w;
            }
        }
        self.wts.copy_from_slice(&self.lap);
        laplacian_potentials(
            &mut self.lap,
            c,
            d,
            &mut self.rvec,
            &mut self.phi,
            &mut self.col,
        );
        let omega = |lap: &[f64], a: usize, b: usize| -> f64 {
            let (lo, hi) = (a.min(b), a.max(b));
            lap[lo * c + hi]
        };
        // ‖U_ab‖, U_ab = σ S_ab Δ̂_ab + ω_ab (φ_a − φ_b), and the residual of the constraints
        let mut residual = f64::NEG_INFINITY;
        for a in 0..c {
            for b in a + 1..c {
                let w = omega(&self.wts, a, b);
                let cap = self.cap[a * c + b];
                let hat = &self.hat[(a * c + b) * d..(a * c + b + 1) * d];
                let n = (0..d)
                    .map(|j| {
                        let v = cap * hat[j] + w * (self.phi[a * d + j] - self.phi[b * d + j]);
                        v * v
                    })
                    .sum::<f64>()
                    .sqrt();
                self.unorm[a * c + b] = n;
                let r = if cap > 0.0 {
                    (n - cap) / cap
                } else if n > 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                };
                residual = residual.max(r);
            }
        }
        // the largest κ feasible for every pair: κ‖U_ab‖ ≤ σ S_ab(κp)
        let mut scale = 1.0_f64;
        for a in 0..c {
            for b in a + 1..c {
                if scale <= 0.0 {
                    break;
                }
                let ab = a * c + b;
                let n = self.unorm[ab];
                if n <= self.cap[ab] {
                    continue;
                }
                let terms = &self.terms[self.offsets[ab]..self.offsets[ab + 1]];
                let (pp, qq) = (&self.p, &self.q);
                let h = |kappa: f64| -> (f64, f64) {
                    let (mut value, mut slope) = (0.0, 0.0);
                    for &t in terms {
                        let p = pp[t];
                        if p == 0.0 {
                            continue;
                        }
                        let cw = obj.weight(t / c);
                        let (sv, z) =
                            loss.conjugate_and_argmin(kappa * p, (1.0 - kappa) + kappa * qq[t]);
                        value += cw * sv;
                        slope -= cw * p * z;
                    }
                    (sigma * value - kappa * n, sigma * slope - n)
                };
                scale = scale.min(largest_feasible_scale(h));
            }
        }
        Certificate::new(primal, scale * self.psum, scale, residual)
    }
}

/// The potentials `φ` of `L φ = R` for the weighted Laplacian of the `C` classes, weights `ω`
/// (symmetric row-major `C × C`, diagonal unused; overwritten), one column per feature (`rhs`
/// and `phi` class by class, `C·d`; `rhs` overwritten; `pivot` of length `C`). Gaussian
/// elimination in class order with every pivot computed as the sum of the remaining weights of
/// its class (a Schur complement of a Laplacian is a Laplacian: the Grassmann–Taksar–Heyman
/// form), so that only positive numbers are added and every weight keeps its relative accuracy
/// whatever their range. A class left without neighbours is the last of its connected component:
/// its potential is 0 and its remaining right-hand side (the component's total of `R`, zero up
/// to rounding) is dropped.
fn laplacian_potentials(
    omega: &mut [f64],
    c: usize,
    d: usize,
    rhs: &mut [f64],
    phi: &mut [f64],
    pivot: &mut [f64],
) {
    for k in 0..c {
        let pk: f64 = (k + 1..c).map(|j| omega[k * c + j]).sum();
        pivot[k] = pk;
        if !(pk > 0.0 && pk.is_finite()) {
            continue;
        }
        for i in k + 1..c {
            let f = omega[i * c + k] / pk;
            if f == 0.0 {
                continue;
            }
            for j in (k + 1..c).filter(|&j| j != i) {
                omega[i * c + j] += f * omega[k * c + j];
            }
            for col in 0..d {
                rhs[i * d + col] += f * rhs[k * d + col];
            }
        }
    }
    for k in (0..c).rev() {
        let pk = pivot[k];
        if !(pk > 0.0 && pk.is_finite()) {
            phi[k * d..(k + 1) * d].fill(0.0);
            continue;
        }
        for col in 0..d {
            let s: f64 = (k + 1..c)
                .map(|j| omega[k * c + j] * phi[j * d + col])
                .sum();
            phi[k * d + col] = (rhs[k * d + col] + s) / pk;
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Removes from `W` (class by class, `C·d`) its shift, the mean over the classes per feature
/// (which `G` does not see).
fn remove_shift(w: &mut [f64], c: usize, d: usize) {
    for j in 0..d {
        let mean = (0..c).map(|a| w[a * d + j]).sum::<f64>() / c as f64;
        for a in 0..c {
            w[a * d + j] -= mean;
        }
    }
}

/// The relative decrease of `G` for which a Newton iterate is moved to the minimum on its ray.
const RAY_GAIN: f64 = 1e-3;

/// Newton–CG on (5.14) to a certified relative gap `tolerance` (module notes), at most
/// `max_iter` Newton iterations. Every buffer is allocated before the first iteration.
///
/// `start` (class by class, `C·d`, finite and not a pure shift) is a warm start, e.g. the
/// optimum at a nearby `σ`: its direction, with the shifts removed, replaces the limit
/// gradient's on the same ray search, so the first iterate is `τ Ŵ₀` with `τ` minimising
/// `G(τ Ŵ₀)` — only the direction is trusted, as in the binary solver (its length at the old
/// `σ` is not the right one at the new: module notes of `batch.rs`).
pub(crate) fn solve(
    obj: &MulticlassObjective<'_>,
    tolerance: f64,
    max_iter: usize,
    start: Option<&[f64]>,
) -> Outcome {
    let (c, d) = (obj.classes, obj.dim());
    let dim = c * d;
    let mut work = Work::new(obj);
    let mut w = vec![0.0; dim];
    let mut w_trial = vec![0.0; dim];
    let mut grad = vec![0.0; dim];
    let mut dir = vec![0.0; dim];
    let mut cg = CgScratch::new(dim);
    let mut diag = vec![0.0; d];
    let mut passes = 0usize;

    // the limit gradient at W = 0 (every pair at the hinge's kink); start on its ray
    work.set_point(obj, &w);
    let mut value = work.gradient(obj, &mut grad);
    passes += 2;
    let gn = dot(&grad, &grad).sqrt();
    let done = |w: Vec<f64>, cert: Certificate, it: usize, cg: usize, passes: usize, why| Outcome {
        w,
        certificate: cert,
        iterations: it as u64,
        passes,
        converged: cert.relative_gap <= tolerance,
        stopped: why,
        solver: "newton-cg",
        count: ("cg_iterations", cg as f64),
    };
    if gn == 0.0 {
        // every directional derivative at 0 vanishes: W = 0 is optimal
        let cert = work.certificate(obj, value);
        let why = (cert.relative_gap > tolerance).then(|| "the certificate at W = 0".to_string());
        return done(w, cert, 0, 0, passes, why);
    }
    for (d, g) in dir.iter_mut().zip(&grad) {
        *d = -g / gn;
    }
    if let Some(s) = start.filter(|s| s.len() == dim) {
        w.copy_from_slice(s);
        remove_shift(&mut w, c, d);
        let sn = dot(&w, &w).sqrt();
        if sn > 0.0 && sn.is_finite() {
            for (d, w) in dir.iter_mut().zip(&w) {
                *d = w / sn;
            }
        }
    }
    work.set_point(obj, &dir);
    passes += 1;
    let smax = work.scores.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let t0 = minimise_on_ray(|t| work.value_at_scale(obj, t), 1.0 / smax.max(1e-300));
    for (w, d) in w.iter_mut().zip(&dir) {
        *w = t0 * d;
    }

    let (mut iterations, mut cg_total) = (0usize, 0usize);
    let mut g0 = f64::NAN;
    let mut stopped: Option<String> = None;
    loop {
        work.set_point(obj, &w);
        value = work.gradient(obj, &mut grad);
        passes += 2;
        let cert = work.certificate(obj, value);
        passes += 1;
        if cert.relative_gap <= tolerance {
            return done(w, cert, iterations, cg_total, passes, None);
        }
        if value <= UNDERFLOW {
            // the terms have underflowed: nothing smaller is distinguishable, stop here (the
            // fit reports it unconverged with the reason)
            stopped.get_or_insert_with(|| {
                format!("the objective underflows (G = {value:.1e}): the data are separated with a margin sigma cannot reach")
            });
        }
        if iterations >= max_iter {
            stopped.get_or_insert_with(|| format!("iteration limit {max_iter}"));
        }
        if stopped.is_some() {
            return done(w, cert, iterations, cg_total, passes, stopped);
        }
        iterations += 1;
        let gnorm = dot(&grad, &grad).sqrt();
        if g0.is_nan() {
            g0 = gnorm.max(1e-300);
        }

        // Newton direction by preconditioned CG on H d = −g
        work.curvature(obj, &mut diag);
        passes += 1;
        let forcing = (gnorm / g0).sqrt().min(0.5);
        let its = newton_direction(
            |p, hp| work.hess_vec(obj, p, hp),
            |j| diag[j % d],
            &grad,
            &mut dir,
            &mut cg,
            forcing * gnorm,
            dim.clamp(20, 500),
        );
        passes += its;
        cg_total += its;
        // G is flat along the shifts and CG's rounding grows a shift in the direction when the
        // Hessian is ill-conditioned (at small σ, to 1e13 of `W`'s differences); removed
        remove_shift(&mut dir, c, d);

        // Armijo backtracking
        let slope = dot(&grad, &dir);
        if slope >= 0.0 || !slope.is_finite() {
            stopped = Some("no descent direction (the precision floor)".into());
            continue;
        }
        let (accepted, tries) = armijo(&w, &dir, value, slope, &mut w_trial, |x| {
            work.set_point(obj, x);
            work.value(obj)
        });
        passes += tries;
        if !accepted {
            stopped = Some("line search made no progress (the precision floor)".into());
            continue;
        }
        std::mem::swap(&mut w, &mut w_trial);
        {
            // then to the minimum on the new point's ray: `G(τW)` from the scores the line
            // search's last evaluation left in `work` (no pass over the data). At small σ the
            // Newton steps lengthen `W` slowly (the optimum's norm grows like 1/σ² in the
            // Gaussian tail), and this step does it at once (docs/design/gaussian.md)
            let smax = work.scores.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            let here = work.value(obj);
            let t = minimise_on_ray(|t| work.value_at_scale(obj, t), 1.0 / smax.max(1e-300));
            // only for a real gain: the golden section finds `τ` to about √ε, which would
            // perturb a converged iterate's gradient (and its certificate) at first order
            if work.value_at_scale(obj, t) < (1.0 - RAY_GAIN) * here {
                for x in w.iter_mut() {
                    *x *= t;
                }
            }
        }
    }
}
