//! A Newton direction (DSX eqs. (13)–(15)): the right-hand side `Gᵀq + e − r_d` of the
//! normal equations, one solve, and the recovery of `Δs, Δy, Δz, Δz_l, Δz_u` with the largest
//! primal and dual step lengths, each a fused pass over the examples.

use super::kernels::{dot, sum};
use super::parallel::{PARTS, chunks, jobs, parts, parts_mut};
use super::step::{max_neg_ratio, max_neg_ratio_div, mx_ratio};
use super::{Dir, DsxIpm, ExampleRp, rd_alpha, second_order};
use crate::error::Result;

impl DsxIpm<'_> {
    /// Newton direction for the current residuals and complementarity right-hand sides
    /// `rs, rt, rl, ru` (see the module docs), written into `d`.
    pub(super) fn direction<const AFF: bool>(
        &mut self,
        which_aff: bool,
        tol: f64,
    ) -> Result<(f64, f64, [f64; 2])> {
        // (the stored right-hand sides' form, `so_target`: only the corrector reads them; a
        // pending Gondzio correction, `centrality`, is added to them in the right-hand side's
        // pass, which leaves them in full)
        let so = !AFF && self.so_target.is_some();
        let g = !AFF && self.centrality.is_some();
        match (self.rp_zero, so, g) {
            (true, true, true) => self.newton_rhs::<AFF, true, true, true>(),
            (true, true, false) => self.newton_rhs::<AFF, true, true, false>(),
            (true, false, true) => self.newton_rhs::<AFF, true, false, true>(),
            (true, false, false) => self.newton_rhs::<AFF, true, false, false>(),
            (false, true, true) => self.newton_rhs::<AFF, false, true, true>(),
            (false, true, false) => self.newton_rhs::<AFF, false, true, false>(),
            (false, false, true) => self.newton_rhs::<AFF, false, false, true>(),
            (false, false, false) => self.newton_rhs::<AFF, false, false, false>(),
        }
        if g {
            (self.so_target, self.centrality) = (None, None);
        }
        let so = so && !g;
        let mut d = if which_aff {
            std::mem::replace(&mut self.aff, Dir::new(0, 0, 0, 0))
        } else {
            std::mem::replace(&mut self.dir, Dir::new(0, 0, 0, 0))
        };
        let r = self
            .solve_h(&mut d, tol)
            .map(|()| match (self.rp_zero, so) {
                (true, true) => self.recover::<AFF, true, true>(&mut d),
                (true, false) => self.recover::<AFF, true, false>(&mut d),
                (false, true) => self.recover::<AFF, false, true>(&mut d),
                (false, false) => self.recover::<AFF, false, false>(&mut d),
            });
        if which_aff {
            self.aff = d;
        } else {
            self.dir = d;
        }
        r
    }

    /// `rhs = Gᵀq + e − r_d` with `q = (r_s − y∘r_p)/s` (module docs), fused into one pass over
    /// the examples (`G`'s structure as in [`bulwark_linalg::DsxSystem::rows_apply_transpose`], DSX eq. (4)),
    /// block by block; the `(w, b)` part is summed per block, then over the blocks in order.
    /// `SO`: `rs`, `rt` hold the second-order products (`so_target`). `G`: Gondzio's
    /// correction (`centrality`, along `self.dir`) is first added to each example's `rs`, `rt`,
    /// which then hold the right-hand sides in full.
    fn newton_rhs<const AFF: bool, const RP0: bool, const SO: bool, const G: bool>(&mut self) {
        let lp = self.lp;
        let (n, t0) = (self.n, self.t0());
        let p = self.parts;
        let target = self.so_target.unwrap_or(0.0);
        let cen = self.centrality.unwrap_or_default();
        // (with `G` the stored form is read once, where the correction is added)
        let so_read = SO && !G;
        let y = parts(&self.y, &p.rows);
        let mut rs = parts_mut(&mut self.rs, &p.rows);
        let (rp_a, sv) = (parts(&self.rp_a, &p.ex), parts(&self.s, &p.rows));
        let (u_w, u_t) = self.u.split_at(t0);
        let mut rt = parts_mut(&mut self.rt[t0..], &p.tail);
        let uv = parts(u_t, &p.tail);
        let zt = parts(&self.z[t0..], &p.tail);
        let dd = &self.dir;
        let (dd_s, dd_y) = (parts(&dd.s, &p.rows), parts(&dd.y, &p.rows));
        let (dd_u, dd_z) = (parts(&dd.u[t0..], &p.tail), parts(&dd.z[t0..], &p.tail));
        let rd = (parts(&self.rd_lam, &p.ex), parts(&self.rd_xi, &p.ex));
        let rows_b = super::rows_b!(self);
        let (rhs_w, rhs_t) = self.rhs.split_at_mut(n + 1);
        let mut out = parts_mut(rhs_t, &p.tail);
        let mut wacc = chunks(&mut self.wacc, n);
        let mut qbuf = chunks(&mut self.qbufs, n);
        let mut rb = [0.0f64; PARTS];
        let mut rb_slots = chunks(&mut rb, 1);
        // the system's values, and s: its rows are s·x (`s x_ij` computed where read)
        let (xs_all, cx) = (self.sys.values(), self.sys.scale());
        let work = jobs(|k| {
            (
                k,
                // (the rows' and the tail's entries of `self.dir`: `G`)
                (
                    std::mem::take(&mut rs[k]),
                    y[k],
                    rp_a[k],
                    sv[k],
                    (dd_s[k], dd_y[k]),
                ),
                (
                    std::mem::take(&mut rt[k]),
                    uv[k],
                    (rd.0[k], rd.1[k]),
                    zt[k],
                    (dd_u[k], dd_z[k]),
                ),
                std::mem::take(&mut out[k]),
                std::mem::take(&mut wacc[k]),
                std::mem::take(&mut qbuf[k]),
                std::mem::take(&mut rb_slots[k]),
            )
        });
        self.exec.run(work, |(k, rows, tail, out, acc, qbuf, rb)| {
            let (rs, y, rp_a, sv, (dd_s, dd_y)) = rows;
            let (rt, uv, (rd_lam, rd_xi), zt, (dd_u, dd_z)) = tail;
            let e0 = p.ex[k];
            acc.fill(0.0);
            let mut rbk = 0.0;
            for i in e0..p.ex[k + 1] {
                let (r0, a0) = p.local(lp, k, i);
                let kk = lp.support_len(i);
                let nz = lp.indptr[i]..lp.indptr[i + 1];
                // `y_i s x_ij` as `y_i` times the system's `s x_ij` (the same bits: `y_i = ±1`)
                let (cols, xs, yi) = (lp.cols(i), &xs_all[nz], lp.y[i]);
                let rr = r0..r0 + kk + 1;
                let vr = a0..a0 + kk + 2;
                if G {
                    // Gondzio's correction at the trial point along `self.dir` (`centring`)
                    cen.add_to::<SO>(target, rr.clone(), rs, [sv, dd_s, y, dd_y]);
                    cen.add_to::<SO>(target, vr.clone(), rt, [uv, dd_u, zt, dd_z]);
                }
                let (rs, y, sv) = (&rs[rr.clone()], &y[rr.clone()], &sv[rr]);
                let (rt, uv) = (&rt[vr.clone()], &uv[vr.clone()]);
                let zt = &zt[vr.clone()];
                let out = &mut out[vr];
                // q = (r_s − y∘r_p)/s and r_t/u; for the predictor (`AFF`: r_s = −s∘y,
                // r_t = −u∘z) in closed form, without the stored right-hand sides
                // (`RP0`: r_p is at rounding level and taken as zero, without reading it)
                // (`1/s`, `1/u` computed where read, as `factor` computes the scalings)
                // (`qrow`'s `rp`: r_p of the row `t`, `rp_a` for a_i, `ExampleRp::at` for b_ij)
                // (`SO`: r_s = σμ − s∘y − Δs∘Δy and r_t = σμ − u∘z − Δu∘Δz from the stored
                // products, `so_target`)
                let rp = ExampleRp::new(rows_b, yi, (xs, cx), u_w, uv, sv);
                let rsv = |t: usize| {
                    if so_read {
                        second_order(target, sv[t], y[t], rs[t])
                    } else {
                        rs[t]
                    }
                };
                let qrow = |t: usize, rp: f64| match (AFF, RP0) {
                    (true, true) => -y[t],
                    (true, false) => -y[t] * (1.0 + rp * (1.0 / sv[t])),
                    (false, true) => rsv(t) * (1.0 / sv[t]),
                    (false, false) => (rsv(t) - y[t] * rp) * (1.0 / sv[t]),
                };
                let rtv = |t: usize| {
                    if so_read {
                        second_order(target, uv[t], zt[t], rt[t])
                    } else {
                        rt[t]
                    }
                };
                let rtu = |t: usize| if AFF { -zt[t] } else { rtv(t) * (1.0 / uv[t]) };
                let qa = qrow(0, if RP0 { 0.0 } else { rp_a[i - e0] });
                rbk += lp.y[i] * qa;
                let mut lam = self.lam_p[i] * qa;
                if lp.dense {
                    // every feature in the support (j = t): data-parallel loops, then the
                    // reduction
                    let q = &mut qbuf[..kk];
                    for (t, qb) in q.iter_mut().enumerate() {
                        *qb = qrow(t + 1, rp.at::<RP0>(t, t));
                    }
                    for ((w, &a), &qb) in acc[..kk].iter_mut().zip(xs).zip(q.iter()) {
                        *w += yi * (cx * a) * qb;
                    }
                    lam -= dot(&self.lam_v[..kk], q);
                    for (t, o) in out[..kk].iter_mut().enumerate() {
                        *o = (q[t] - qa) + rtu(t) - rd_alpha(y[0], y[t + 1], zt[t]);
                    }
                } else {
                    for t in 0..kk {
                        let j = cols[t];
                        let qb = qrow(t + 1, rp.at::<RP0>(t, j));
                        acc[j] += yi * (cx * xs[t]) * qb;
                        lam -= self.lam_v[j] * qb;
                        out[t] = (qb - qa) + rtu(t) - rd_alpha(y[0], y[t + 1], zt[t]);
                    }
                }
                out[kk] = lam + rtu(kk) - rd_lam[i - e0];
                out[kk + 1] = qa + rtu(kk + 1) - rd_xi[i - e0];
            }
            rb[0] = rbk;
        });
        rhs_w.fill(0.0);
        for acc in self.wacc.chunks_exact(n) {
            for (o, a) in rhs_w[..n].iter_mut().zip(acc) {
                *o += a;
            }
        }
        for j in 0..n {
            rhs_w[j] += self.rl[j] / self.pl[j] - self.ru[j] / self.pu[j] - self.rd_w[j];
        }
        rhs_w[n] = rb.iter().sum::<f64>() - self.rd_w[n];
        // the caps' bound terms on λ: −r_c/(Λ − λ) (the box's `−r_u/p_u`)
        for &i in &self.capped {
            let l = self.lam_index(i);
            self.rhs[l] -= self.rc[i] / (self.cap[i] - self.u[l]);
        }
    }

    /// Recovers `Δs = GΔu + r_p`, `Δy = (r_s − y∘Δs)/s`, the bound-dual steps, and the largest
    /// primal and dual step lengths (before `η`), in one pass over the examples (block by
    /// block; the step lengths are maxima, exact in any order). The predictor (`AFF`) stores
    /// not its `Δs`, `Δy`, `Δz` but the corrector's second-order products `Δs∘Δy`, `Δu∘Δz` in
    /// `rs`, `rt` (`so_target`), which is all the corrector reads of them; `SO`: `rs`, `rt` hold
    /// those products.
    fn recover<const AFF: bool, const RP0: bool, const SO: bool>(
        &mut self,
        d: &mut Dir,
    ) -> (f64, f64, [f64; 2]) {
        let lp = self.lp;
        let (n, t0) = (self.n, self.t0());
        let p = self.parts;
        let target = self.so_target.unwrap_or(0.0);
        let y = parts(&self.y, &p.rows);
        let mut rs = parts_mut(&mut self.rs, &p.rows);
        let (rp_a, sv) = (parts(&self.rp_a, &p.ex), parts(&self.s, &p.rows));
        let u_w = &self.u[..t0];
        let rows_b = super::rows_b!(self);
        let mut rt = parts_mut(&mut self.rt[t0..], &p.tail);
        let z = parts(&self.z[t0..], &p.tail);
        let uv = parts(&self.u[t0..], &p.tail);
        let Dir {
            u: du,
            s: ds,
            y: dy,
            z: dz,
            zl: dzl,
            zu: dzu,
            zc: dzc,
        } = d;
        let db = du[n];
        let (du_w, du_tail) = du.split_at(n + 1);
        let du_t = parts(du_tail, &p.tail);
        let mut ds = parts_mut(ds, &p.rows);
        let mut dy = parts_mut(dy, &p.rows);
        let mut dz = parts_mut(&mut dz[t0..], &p.tail);
        // largest −Δv/v over primal (s, u_t) and dual (y, z) components: the step is 1/max
        // per block: [primal max, dual max, Σ (y∘Δs + z∘Δu), Σ (Δs∘Δy + Δu∘Δz)] (the sums only
        // for the predictor, `AFF`)
        let mut maxima = [[0.0f64; 4]; PARTS];
        let mut slots = chunks(&mut maxima, 1);
        let mut qbuf = chunks(&mut self.qbufs, n);
        let mut abuf = chunks(&mut self.abufs, 3 * (n + 2));
        #[inline(always)]
        fn mx(a: f64, b: f64) -> f64 {
            if b > a { b } else { a }
        }
        let (xs_all, cx) = (self.sys.values(), self.sys.scale());
        let work = jobs(|k| {
            (
                k,
                (std::mem::take(&mut rs[k]), y[k], rp_a[k], sv[k]),
                (std::mem::take(&mut rt[k]), z[k], uv[k], du_t[k]),
                (
                    std::mem::take(&mut ds[k]),
                    std::mem::take(&mut dy[k]),
                    std::mem::take(&mut dz[k]),
                ),
                std::mem::take(&mut slots[k]),
                (std::mem::take(&mut qbuf[k]), std::mem::take(&mut abuf[k])),
            )
        });
        self.exec.run(work, |(k, rows, tail, outs, slot, bufs)| {
            let (inv, abuf) = bufs;
            let (rs, y, rp_a, sv) = rows;
            let (rt, z, uv, du) = tail;
            let (ds_blk, dy_blk, dz_blk) = outs;
            let e0 = p.ex[k];
            let (mut pm, mut dm) = (0.0f64, 0.0f64);
            let (mut s1, mut s2) = (0.0f64, 0.0f64);
            for i in e0..p.ex[k + 1] {
                let (r0, a0) = p.local(lp, k, i);
                let kk = lp.support_len(i);
                let nz = lp.indptr[i]..lp.indptr[i + 1];
                // `y_i s x_ij` as `y_i` times the system's `s x_ij` (the same bits: `y_i = ±1`)
                let (cols, xs, yi) = (lp.cols(i), &xs_all[nz], lp.y[i]);
                // Δy = (r_s − y∘Δs)/s, Δz = (r_t − z∘Δu)/u; for the predictor (`AFF`) with
                // r_s = −s∘y, r_t = −u∘z in closed form
                // (`is = 1/s`, `iu = 1/u`: computed once per entry, as `factor` computes the
                // scalings, and shared with the ratio tests)
                // (`SO`: r_s, r_t from the stored second-order products, `so_target`)
                let dyv = |t: usize, sb: f64, is: f64| {
                    if AFF {
                        -y[t] * (1.0 + sb * is)
                    } else if SO {
                        (second_order(target, sv[t], y[t], rs[t]) - y[t] * sb) * is
                    } else {
                        (rs[t] - y[t] * sb) * is
                    }
                };
                let dzv = |t: usize, da: f64, iu: f64| {
                    if AFF {
                        -z[t] * (1.0 + da * iu)
                    } else if SO {
                        (second_order(target, uv[t], z[t], rt[t]) - z[t] * da) * iu
                    } else {
                        (rt[t] - z[t] * da) * iu
                    }
                };
                // this example's rows (a_i, then b_ij) and tail variables (α_i, λ_i, ξ_i);
                // the predictor's `Δs`, `Δy`, `Δz` in the block's scratch
                let rr = r0..r0 + kk + 1;
                let vr = a0..a0 + kk + 2;
                let (y, sv) = (&y[rr.clone()], &sv[rr.clone()]);
                let (ds, dy, dz) = if AFF {
                    let (ds, rest) = abuf.split_at_mut(kk + 1);
                    let (dy, rest) = rest.split_at_mut(kk + 1);
                    (ds, dy, &mut rest[..kk + 2])
                } else {
                    (
                        &mut ds_blk[rr.clone()],
                        &mut dy_blk[rr.clone()],
                        &mut dz_blk[vr.clone()],
                    )
                };
                let (z, uv) = (&z[vr.clone()], &uv[vr.clone()]);
                let du = &du[vr.clone()];
                let (dl, dx) = (du[kk], du[kk + 1]);
                let rp = ExampleRp::new(rows_b, yi, (xs, cx), u_w, uv, sv);
                let mut act = self.lam_p[i] * dl + lp.y[i] * db + dx;
                if lp.dense {
                    // every feature in the support (j = t): data-parallel loops, then reductions
                    // (`inv`: the block's scratch, 1/s of the rows b_ij, then 1/u of the α_ij)
                    let inv = &mut inv[..kk];
                    for (o, s) in inv.iter_mut().zip(&sv[1..]) {
                        *o = 1.0 / s;
                    }
                    let (ds_b, dy_b) = (&mut ds[1..], &mut dy[1..]);
                    for (t, (sb, yb)) in ds_b.iter_mut().zip(dy_b.iter_mut()).enumerate() {
                        let rpt = rp.at::<RP0>(t, t);
                        let s_new = yi * (cx * xs[t]) * du_w[t] - self.lam_v[t] * dl + du[t] + rpt;
                        *sb = s_new;
                        *yb = dyv(r0 + t + 1, s_new, inv[t]);
                    }
                    pm = mx(pm, max_neg_ratio(&ds[1..], inv));
                    for (o, u) in inv.iter_mut().zip(&uv[..kk]) {
                        *o = 1.0 / u;
                    }
                    for (t, (dzb, &da)) in dz[..kk].iter_mut().zip(&du[..kk]).enumerate() {
                        *dzb = dzv(a0 + t, da, inv[t]);
                    }
                    pm = mx(pm, max_neg_ratio(&du[..kk], inv));
                    dm = mx(dm, max_neg_ratio_div(&dy[1..], &y[1..]));
                    dm = mx(dm, max_neg_ratio_div(&dz[..kk], &z[..kk]));
                } else {
                    let mut pa = 0.0f64;
                    for t in 0..kk {
                        let j = cols[t];
                        let da = du[t];
                        let rpt = rp.at::<RP0>(t, j);
                        let sb = yi * (cx * xs[t]) * du_w[j] - self.lam_v[j] * dl + da + rpt;
                        let (is, iu) = (1.0 / sv[t + 1], 1.0 / uv[t]);
                        let yb = dyv(r0 + t + 1, sb, is);
                        let zb = dzv(a0 + t, da, iu);
                        ds[t + 1] = sb;
                        dy[t + 1] = yb;
                        dz[t] = zb;
                        pa = mx(mx(pa, -sb * is), -da * iu);
                        dm = mx_ratio(mx_ratio(dm, yb, y[t + 1]), zb, z[t]);
                    }
                    pm = mx(pm, pa);
                }
                // the sums and the α maximum in vectorised passes over the example's entries, hot
                // in L1 (single accumulators in the loops above are latency-bound chains)
                act -= sum(&du[..kk]);
                if AFF {
                    s1 += dot(&y[1..], &ds[1..]) + dot(&z[..kk], &du[..kk]);
                    s2 += dot(&ds[1..], &dy[1..]) + dot(&du[..kk], &dz[..kk]);
                }
                let sa = act + if RP0 { 0.0 } else { rp_a[i - e0] };
                let (is_a, iu_l, iu_x) = (1.0 / sv[0], 1.0 / uv[kk], 1.0 / uv[kk + 1]);
                let ya = dyv(r0, sa, is_a);
                ds[0] = sa;
                dy[0] = ya;
                let zl = dzv(a0 + kk, dl, iu_l);
                let zx = dzv(a0 + kk + 1, dx, iu_x);
                if AFF {
                    s1 += y[0] * sa + z[kk] * dl + z[kk + 1] * dx;
                    s2 += sa * ya + dl * zl + dx * zx;
                }
                dz[kk] = zl;
                dz[kk + 1] = zx;
                pm = mx(mx(mx(pm, -sa * is_a), -dl * iu_l), -dx * iu_x);
                dm = mx_ratio(mx_ratio(mx_ratio(dm, ya, y[0]), zl, z[kk]), zx, z[kk + 1]);
                if AFF {
                    // the corrector's second-order products (Mehrotra's term)
                    for (o, (a, b)) in rs[rr].iter_mut().zip(ds.iter().zip(dy.iter())) {
                        *o = a * b;
                    }
                    for (o, (a, b)) in rt[vr].iter_mut().zip(du.iter().zip(dz.iter())) {
                        *o = a * b;
                    }
                }
            }
            slot[0] = [pm, dm, s1, s2];
        });
        let (mut pm, mut dm) = (0.0f64, 0.0f64);
        let mut sums = [0.0f64; 2];
        for [a, b, c1, c2] in maxima {
            pm = mx(pm, a);
            dm = mx(dm, b);
            sums[0] += c1;
            sums[1] += c2;
        }
        let du = du_w;
        if pm.is_nan() || dm.is_nan() {
            return (f64::NAN, f64::NAN, sums);
        }
        for j in 0..n {
            let dw = du[j];
            dzl[j] = (self.rl[j] - self.zl[j] * dw) / self.pl[j];
            dzu[j] = (self.ru[j] + self.zu[j] * dw) / self.pu[j];
        }
        // the caps: Δz_c = (r_c + z_c Δλ)/(Λ − λ) (the box's upper side)
        for &i in &self.capped {
            let l = self.lam_index(i);
            dzc[i] = (self.rc[i] + self.zc[i] * du_tail[l - t0]) / (self.cap[i] - self.u[l]);
        }
        let (ap, ad) = self.box_steps((1.0 / pm, 1.0 / dm), &du[..n], dzl, dzu);
        let (ap, ad) = self.cap_steps((ap, ad), |l| du_tail[l - t0], dzc);
        (ap, ad, sums)
    }
}
