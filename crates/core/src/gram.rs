//! A Gram-row cache with a memory cap: rows of an `l × l` kernel matrix (or of `Q_ij = y_i y_j
//! K_ij`), kept in least-recently-used order within a byte budget the user sets.
//!
//! The design is LIBSVM's (Chang & Lin, `Cache` in `svm.cpp`) with one change that removes every
//! allocation after construction: the budget is split into fixed slots of `l` entries, allocated
//! once; a row holds a slot and a *valid prefix* `[0, len)` (solvers with shrinking ask only for
//! the entries of their active examples, which come first). Positions can be swapped
//! ([`GramCache::swap`]), as a shrinking solver permutes its examples; every cached row keeps its
//! entries consistent (a row long enough to hold only the smaller position is cut back to it).
//!
//! Memory is `slots · l · 8` bytes with `slots = max(2, min(l, cap / (8 l)))`: never more than the
//! cap, except that two rows are always kept (a working pair needs both at once);
//! [`GramCache::capacity_rows`] and [`GramCache::bytes`] say what was allocated.

use std::ops::Range;

use crate::error::{Error, Result};

const NONE: usize = usize::MAX;

/// The cache; rows are filled by the caller's closure `fill(row, range, out)`, which writes the
/// entries `range` of `row` into `out` (of length `range.len()`).
#[derive(Debug, Clone)]
pub struct GramCache {
    l: usize,
    slots: usize,
    buf: Vec<f64>,
    slot_of: Vec<usize>,
    row_of: Vec<usize>,
    valid: Vec<usize>,
    // LRU list over slots; index `slots` is the sentinel (next = least recently used)
    prev: Vec<usize>,
    next: Vec<usize>,
    handed_out: usize,
    hits: u64,
    misses: u64,
    computed: u64,
}

impl GramCache {
    /// A cache for an `l × l` matrix within `cap_bytes` (at least two rows are kept; see the
    /// module notes). A cap of 0 is a typed error naming `cache_size`.
    pub fn new(l: usize, cap_bytes: usize) -> Result<Self> {
        if cap_bytes == 0 {
            return Err(Error::param("cache_size", 0, "a positive number of bytes"));
        }
        let row_bytes = l.max(1) * std::mem::size_of::<f64>();
        // at least two rows (one when the matrix has a single row), at most `l`
        let slots = (cap_bytes / row_bytes).min(l).max(l.clamp(1, 2));
        let mut prev = vec![0; slots + 1];
        let mut next = vec![0; slots + 1];
        prev[slots] = slots;
        next[slots] = slots;
        Ok(Self {
            l,
            slots,
            buf: vec![0.0; slots * l],
            slot_of: vec![NONE; l],
            row_of: vec![NONE; slots],
            valid: vec![0; slots],
            prev,
            next,
            handed_out: 0,
            hits: 0,
            misses: 0,
            computed: 0,
        })
    }

    /// Rows the cache can hold at once.
    pub fn capacity_rows(&self) -> usize {
        self.slots
    }

    /// Bytes allocated for rows.
    pub fn bytes(&self) -> usize {
        self.buf.len() * std::mem::size_of::<f64>()
    }

    /// Requests answered from the cache, requests that computed entries, and the number of
    /// entries computed.
    pub fn stats(&self) -> (u64, u64, u64) {
        (self.hits, self.misses, self.computed)
    }

    fn unlink(&mut self, s: usize) {
        let (p, n) = (self.prev[s], self.next[s]);
        self.next[p] = n;
        self.prev[n] = p;
    }

    // most recently used goes before the sentinel (the sentinel's `next` is the oldest)
    fn push_back(&mut self, s: usize) {
        let last = self.prev[self.slots];
        self.next[last] = s;
        self.prev[s] = last;
        self.next[s] = self.slots;
        self.prev[self.slots] = s;
    }

    /// The slot of `row`, valid on `[0, len)`, never evicting the slot `keep`.
    fn ensure(
        &mut self,
        row: usize,
        len: usize,
        keep: usize,
        fill: &mut impl FnMut(usize, Range<usize>, &mut [f64]),
    ) -> usize {
        debug_assert!(len <= self.l);
        let mut s = self.slot_of[row];
        if s == NONE {
            s = if self.handed_out < self.slots {
                self.handed_out += 1;
                self.handed_out - 1
            } else {
                // the least recently used slot other than `keep`
                let mut victim = self.next[self.slots];
                if victim == keep {
                    victim = self.next[victim];
                }
                debug_assert!(victim != self.slots);
                self.unlink(victim);
                self.slot_of[self.row_of[victim]] = NONE;
                victim
            };
            self.slot_of[row] = s;
            self.row_of[s] = row;
            self.valid[s] = 0;
        } else {
            self.unlink(s);
        }
        self.push_back(s);
        let have = self.valid[s];
        if have < len {
            self.misses += 1;
            self.computed += (len - have) as u64;
            let base = s * self.l;
            fill(row, have..len, &mut self.buf[base + have..base + len]);
            self.valid[s] = len;
        } else {
            self.hits += 1;
        }
        s
    }

    /// Row `row`, entries `[0, len)`.
    pub fn row(
        &mut self,
        row: usize,
        len: usize,
        mut fill: impl FnMut(usize, Range<usize>, &mut [f64]),
    ) -> &[f64] {
        let s = self.ensure(row, len, NONE, &mut fill);
        &self.buf[s * self.l..s * self.l + len]
    }

    /// Rows `i` and `j` (entries `[0, len)`), both resident at once.
    pub fn pair(
        &mut self,
        i: usize,
        j: usize,
        len: usize,
        mut fill: impl FnMut(usize, Range<usize>, &mut [f64]),
    ) -> (&[f64], &[f64]) {
        let si = self.ensure(i, len, NONE, &mut fill);
        let sj = self.ensure(j, len, si, &mut fill);
        debug_assert!(self.slot_of[i] == si);
        (
            &self.buf[si * self.l..si * self.l + len],
            &self.buf[sj * self.l..sj * self.l + len],
        )
    }

    /// Swaps positions `i` and `j`: the rows' slots, and entries `i` and `j` in every cached
    /// row (a row valid past the smaller position but not the larger is cut back to the
    /// smaller, so that no entry is ever stale).
    pub fn swap(&mut self, i: usize, j: usize) {
        if i == j {
            return;
        }
        let (lo, hi) = (i.min(j), i.max(j));
        let (si, sj) = (self.slot_of[i], self.slot_of[j]);
        self.slot_of[i] = sj;
        self.slot_of[j] = si;
        if si != NONE {
            self.row_of[si] = j;
        }
        if sj != NONE {
            self.row_of[sj] = i;
        }
        for s in 0..self.handed_out {
            let len = self.valid[s];
            if len > hi {
                self.buf.swap(s * self.l + lo, s * self.l + hi);
            } else if len > lo {
                self.valid[s] = lo;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // entries of a synthetic matrix under a permutation `perm`
    fn filler(perm: &[usize]) -> impl FnMut(usize, Range<usize>, &mut [f64]) + '_ {
        move |r, range, out| {
            for (o, c) in out.iter_mut().zip(range) {
                *o = (perm[r] * 1000 + perm[c]) as f64;
            }
        }
    }

    #[test]
    fn zero_cap_is_a_typed_error() {
        let e = GramCache::new(10, 0).unwrap_err().to_string();
        assert!(e.contains("cache_size"), "{e}");
    }

    #[test]
    fn cap_bounds_the_allocation() {
        let c = GramCache::new(1000, 100 * 1000 * 8 + 7).unwrap();
        assert_eq!(c.capacity_rows(), 100);
        assert_eq!(c.bytes(), 100 * 1000 * 8);
        // below two rows: two rows, said by capacity_rows
        let c = GramCache::new(1000, 8).unwrap();
        assert_eq!(c.capacity_rows(), 2);
        // never more rows than the matrix has
        let c = GramCache::new(10, 1 << 30).unwrap();
        assert_eq!(c.capacity_rows(), 10);
    }

    #[test]
    fn rows_survive_eviction_pressure_and_swaps() {
        // a 3-row cache for 12 positions, random requests, swaps and prefix lengths, checked
        // entry by entry against the permuted synthetic matrix
        let l = 12;
        let mut perm: Vec<usize> = (0..l).collect();
        let mut cache = GramCache::new(l, 3 * l * 8).unwrap();
        let mut state = 12345u64;
        let mut rnd = |k: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % k
        };
        for _ in 0..5000 {
            match rnd(3) {
                0 => {
                    let (i, j) = (rnd(l), rnd(l));
                    cache.swap(i, j);
                    perm.swap(i, j);
                }
                1 => {
                    let (i, len) = (rnd(l), 1 + rnd(l));
                    let p = perm.clone();
                    let row = cache.row(i, len, filler(&p));
                    for (c, v) in row.iter().enumerate() {
                        assert_eq!(*v, (p[i] * 1000 + p[c]) as f64);
                    }
                }
                _ => {
                    let (i, j, len) = (rnd(l), rnd(l), 1 + rnd(l));
                    let p = perm.clone();
                    let (a, b) = cache.pair(i, j, len, filler(&p));
                    for c in 0..len {
                        assert_eq!(a[c], (p[i] * 1000 + p[c]) as f64);
                        assert_eq!(b[c], (p[j] * 1000 + p[c]) as f64);
                    }
                }
            }
        }
        let (hits, misses, _) = cache.stats();
        assert!(hits > 0 && misses > 0);
    }
}
