//! The per-example passes: four blocks of consecutive examples, fixed by the data, and where
//! they run. Every partial sum is combined in block order, so the iterates are the same bits
//! for any thread count.

use rayon::prelude::*;

use crate::layout::Lp4;

/// Example blocks of the data-parallel passes. They are fixed by the data (balanced by
/// non-zeros), not by the thread count, and every partial sum is combined in block order, so
/// one thread and many give the same bits.
pub(super) const PARTS: usize = 4;

/// Boundaries of the [`PARTS`] example blocks in each family of arrays (all relative: rows,
/// tail variables `(α, λ, ξ)` from index `n + 1`, support non-zeros, examples).
#[derive(Debug, Clone, Copy)]
pub(super) struct Parts {
    pub(super) ex: [usize; PARTS + 1],
    pub(super) rows: [usize; PARTS + 1],
    pub(super) tail: [usize; PARTS + 1],
    pub(super) nz: [usize; PARTS + 1],
}

impl Parts {
    pub(super) fn new(lp: &Lp4<'_>) -> Self {
        let m = lp.m();
        // weight of example i: its rows and tail variables, |S_i| + 2
        let total = lp.nnz() + 2 * m;
        let mut ex = [m; PARTS + 1];
        ex[0] = 0;
        let mut i = 0;
        for (k, e) in ex.iter_mut().enumerate().take(PARTS).skip(1) {
            let target = total * k / PARTS;
            while i < m && lp.indptr[i] + 2 * i < target {
                i += 1;
            }
            *e = i;
        }
        let t0 = lp.n() + 1;
        Self {
            ex,
            rows: ex.map(|i| lp.row_offset(i)),
            tail: ex.map(|i| lp.var_offset(i) - t0),
            nz: ex.map(|i| lp.indptr[i]),
        }
    }
}

impl Parts {
    /// Example `i`'s first row and first tail variable, relative to block `k`'s slices.
    #[inline]
    pub(super) fn local(&self, lp: &Lp4<'_>, k: usize, i: usize) -> (usize, usize) {
        let t0 = lp.n() + 1;
        (
            lp.row_offset(i) - self.rows[k],
            lp.var_offset(i) - t0 - self.tail[k],
        )
    }
}

/// `v` cut at the block boundaries `b` (`b[0] = 0`, `b[PARTS] = v.len()`).
pub(super) fn parts_mut<'a, T>(mut v: &'a mut [T], b: &[usize; PARTS + 1]) -> [&'a mut [T]; PARTS] {
    let mut out: [&'a mut [T]; PARTS] = Default::default();
    for (k, o) in out.iter_mut().enumerate() {
        let (a, rest) = std::mem::take(&mut v).split_at_mut(b[k + 1] - b[k]);
        *o = a;
        v = rest;
    }
    out
}

/// Shared-reference version of [`parts_mut`].
pub(super) fn parts<'a, T>(mut v: &'a [T], b: &[usize; PARTS + 1]) -> [&'a [T]; PARTS] {
    let mut out: [&'a [T]; PARTS] = [&[]; PARTS];
    for (k, o) in out.iter_mut().enumerate() {
        let (a, rest) = v.split_at(b[k + 1] - b[k]);
        *o = a;
        v = rest;
    }
    out
}

/// `v` cut into [`PARTS`] consecutive pieces of length `len` (per-block scratch).
pub(super) fn chunks<T>(v: &mut [T], len: usize) -> [&mut [T]; PARTS] {
    parts_mut(&mut v[..PARTS * len], &std::array::from_fn(|k| k * len))
}

/// Where the per-block jobs run.
#[derive(Debug)]
pub(super) struct Exec {
    /// Run the blocks concurrently (LPs of at least [`super::DsxIpmSettings::parallel_min_vars`]
    /// variables, more than one thread).
    pub(super) par: bool,
    /// A dedicated pool (`threads` given and different from the current pool's size).
    pub(super) pool: Option<rayon::ThreadPool>,
}

impl Exec {
    /// Runs `f` on every block's job: concurrently when `par`, else in block order.
    pub(super) fn run<J: Send>(&self, jobs: [J; PARTS], f: impl Fn(J) + Sync + Send) {
        if !self.par {
            jobs.into_iter().for_each(f);
        } else if let Some(pool) = &self.pool {
            pool.install(|| jobs.into_par_iter().for_each(f));
        } else {
            jobs.into_par_iter().for_each(f);
        }
    }

    /// Runs `f` in the dedicated pool when there is one (so `bulwark-linalg`'s two-thread
    /// factorisation and solves, which use rayon, get the requested workers), else here.
    pub(super) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

/// Builds `[J; PARTS]` from per-block pieces (`next` is called `PARTS` times, in order).
pub(super) fn jobs<J>(next: impl FnMut(usize) -> J) -> [J; PARTS] {
    std::array::from_fn(next)
}
