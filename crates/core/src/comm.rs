//! The communicator seam: how a learner's pass over its examples combines partial sums when the
//! examples are split over several processes (ranks).
//!
//! A learner whose cost is a sum over examples computes, on each rank, the partial sums over the
//! rows that rank holds and hands them to [`Communicator::allreduce_sum`]; everything else it does
//! (a Newton step, a line search, a stopping test) is repeated identically on every rank. On one
//! process the communicator is [`Single`], whose reductions do nothing, so the single-process
//! learner *is* the distributed one with `K = 1`. The MPI communicator lives in the `bulwark-mpi`
//! crate (its `mpi` feature); nothing here depends on MPI.
//!
//! Determinism: every implementation adds the ranks' partials in rank order `0, 1, …, K−1`, so
//! all ranks receive the same bits and a run is reproducible for a given `K`. Runs with different
//! `K` differ only by the rounding of the partial sums (the summation order changes).

use std::cell::Cell;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Barrier, Mutex, PoisonError};

use crate::dataset::{Dataset, Sign};
use crate::error::{Error, Result};

/// Collective reductions over the ranks taking part in one computation. Every rank must make the
/// same calls in the same order with buffers of the same length (a collective).
pub trait Communicator: fmt::Debug {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// How many ranks take part (1 on one process).
    fn size(&self) -> usize;
    /// Replaces `buf` by the element-wise sum of every rank's `buf`, added in rank order: every
    /// rank receives the same bits.
    fn allreduce_sum(&self, buf: &mut [f64]);
    /// Replaces `buf` by the element-wise maximum over the ranks.
    fn allreduce_max(&self, buf: &mut [f64]);

    /// Whether this is rank 0 (the rank that writes files and output).
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
    /// The contiguous block of `0..m` (rows) this rank holds: rank `r` of `K` gets
    /// `⌊r·m/K⌋..⌊(r+1)·m/K⌋`, so the blocks are in rank order and differ in length by at most 1.
    fn share(&self, m: usize) -> Range<usize> {
        let (r, k) = (self.rank() as u128, self.size().max(1) as u128);
        let at = |r: u128| (r * m as u128 / k) as usize;
        at(r)..at(r + 1)
    }
}

/// Makes one rank's failure every rank's: each rank passes the result of a local step (a check,
/// a read); if any rank failed, every rank returns an error (its own, or one naming the lowest
/// failing rank), so no rank waits in a collective the others never reach.
pub fn agree<T, E: From<Error>>(
    comm: &dyn Communicator,
    local: std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let k = comm.size();
    if k == 1 {
        return local;
    }
    let failed = local.is_err();
    // the lowest failing rank r is the largest K − r
    let mut flags = [
        f64::from(u8::from(failed)),
        if failed {
            (k - comm.rank()) as f64
        } else {
            0.0
        },
    ];
    comm.allreduce_max(&mut flags);
    match local {
        Err(e) => Err(e),
        Ok(_) if flags[0] > 0.0 => Err(Error::Distributed {
            ranks: k,
            message: format!(
                "rank {} failed (its error is printed by that rank)",
                k - flags[1] as usize
            ),
        }
        .into()),
        Ok(v) => Ok(v),
    }
}

/// Checks that every rank holds the same `value` (a fingerprint of the input, a count); the
/// error names `what` and is returned on every rank.
pub fn check_same(comm: &dyn Communicator, what: &str, value: u64) -> Result<()> {
    if comm.size() == 1 {
        return Ok(());
    }
    // f64 holds 32-bit halves exactly; max(x) == −max(−x) iff every rank has the same x
    let (hi, lo) = ((value >> 32) as f64, (value & 0xffff_ffff) as f64);
    let mut v = [hi, lo, -hi, -lo];
    comm.allreduce_max(&mut v);
    if v[0] == -v[2] && v[1] == -v[3] {
        Ok(())
    } else {
        Err(Error::Distributed {
            ranks: comm.size(),
            message: format!(
                "the ranks disagree on {what}: every rank must be started with the same input and arguments"
            ),
        })
    }
}

/// [`Dataset::binary_training_labels`] over the ranks of `comm`, `local` being this rank's share
/// of the rows: the checks a share can pass alone (finite values, at least one feature, binary
/// labels) on every rank, agreed ([`agree`]); the same number of features on every rank; and,
/// over every rank together, at least one example and both classes. Returns this rank's labels
/// and the number of examples over every rank. With one rank this is
/// [`Dataset::binary_training_labels`].
pub fn binary_training_labels<'d>(
    local: &'d Dataset,
    comm: &dyn Communicator,
) -> Result<(&'d [Sign], usize)> {
    if comm.size() == 1 {
        return Ok((local.binary_training_labels()?, local.len()));
    }
    let y = agree(comm, share_checks(local))?;
    check_same(comm, "the number of features", local.n_features() as u64)?;
    let positives = y.iter().filter(|s| **s == Sign::Pos).count();
    let mut counts = [local.len() as f64, positives as f64];
    comm.allreduce_sum(&mut counts);
    let (m, positives) = (counts[0] as usize, counts[1] as usize);
    if m == 0 {
        return Err(Error::param("data", "empty", "at least one example"));
    }
    if positives == 0 || positives == m {
        let class = local.class_names().get(usize::from(positives > 0));
        return Err(Error::SingleClass {
            context: format!("{} (over {} ranks)", local.name(), comm.size()),
            class: class.cloned().unwrap_or_default(),
            count: m,
        });
    }
    Ok((y, m))
}

/// The checks of [`Dataset::binary_training_labels`] that one rank's share can pass or fail alone.
fn share_checks(local: &Dataset) -> Result<&[Sign]> {
    local.check_finite()?;
    if local.n_features() == 0 {
        return Err(Error::param("data", "0 features", "at least one feature"));
    }
    local.binary_labels()
}

/// The communicator of a single process: rank 0 of 1, every reduction a no-op.
#[derive(Debug, Clone, Copy, Default)]
pub struct Single;

impl Communicator for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn allreduce_sum(&self, _: &mut [f64]) {}
    fn allreduce_max(&self, _: &mut [f64]) {}
}

/// A communicator that counts what passes through another one: reductions and the `f64` values
/// they carry (per rank, in each direction), for a learner's report.
#[derive(Debug)]
pub struct Counted<'a> {
    inner: &'a dyn Communicator,
    calls: Cell<u64>,
    values: Cell<u64>,
}

impl<'a> Counted<'a> {
    /// Counts the reductions made through `inner`.
    pub fn new(inner: &'a dyn Communicator) -> Self {
        Self {
            inner,
            calls: Cell::new(0),
            values: Cell::new(0),
        }
    }
    /// Reductions made so far.
    pub fn calls(&self) -> u64 {
        self.calls.get()
    }
    /// `f64` values reduced so far (each rank contributes this many and receives this many).
    pub fn values(&self) -> u64 {
        self.values.get()
    }
    /// Over several ranks, adds `ranks`, `allreduce_calls` and `allreduce_values` to a fit
    /// report's `details` (nothing on one process).
    pub fn record(&self, details: &mut std::collections::BTreeMap<String, f64>) {
        if self.size() > 1 {
            details.insert("ranks".into(), self.size() as f64);
            details.insert("allreduce_calls".into(), self.calls() as f64);
            details.insert("allreduce_values".into(), self.values() as f64);
        }
    }
    fn count(&self, n: usize) {
        self.calls.set(self.calls.get() + 1);
        self.values.set(self.values.get() + n as u64);
    }
}

impl Communicator for Counted<'_> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn allreduce_sum(&self, buf: &mut [f64]) {
        self.count(buf.len());
        self.inner.allreduce_sum(buf);
    }
    fn allreduce_max(&self, buf: &mut [f64]) {
        self.count(buf.len());
        self.inner.allreduce_max(buf);
    }
}

/// `K` ranks as threads of one process, for testing a learner's distributed form without MPI:
/// [`ThreadRanks::run`] runs a closure on every rank, each in its own thread
/// ([`ThreadRanks::split`] gives the communicators themselves). Reductions gather every rank's partial and add them in rank
/// order, as the MPI communicator does, so a run gives the same bits as one under `mpirun`
/// with the same `K`. Like any collective, a rank that stops calling while the others go on
/// leaves them waiting: the learners agree on failures first ([`agree`]).
#[derive(Debug)]
pub struct ThreadRanks {
    rank: usize,
    size: usize,
    shared: Arc<ThreadShared>,
}

#[derive(Debug)]
struct ThreadShared {
    /// Each rank's contribution to the collective under way.
    slots: Mutex<Vec<Vec<f64>>>,
    barrier: Barrier,
}

impl ThreadRanks {
    /// The communicators of ranks `0..k` (`k ≥ 1`).
    pub fn split(k: usize) -> Vec<Self> {
        let k = k.max(1);
        let shared = Arc::new(ThreadShared {
            slots: Mutex::new(vec![Vec::new(); k]),
            barrier: Barrier::new(k),
        });
        (0..k)
            .map(|rank| Self {
                rank,
                size: k,
                shared: shared.clone(),
            })
            .collect()
    }

    /// Runs `f` once per rank of `k`, each in its own thread with that rank's communicator, and
    /// returns the results in rank order. (A rank that panics leaves the others waiting in
    /// their next collective.)
    pub fn run<T: Send>(k: usize, f: impl Fn(&ThreadRanks) -> T + Sync) -> Vec<T> {
        let ranks = Self::split(k);
        let f = &f;
        std::thread::scope(|s| {
            let handles: Vec<_> = ranks.iter().map(|c| s.spawn(move || f(c))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }

    fn reduce(&self, buf: &mut [f64], combine: fn(&[f64], &mut [f64])) {
        let sh = &*self.shared;
        let lock = || sh.slots.lock().unwrap_or_else(PoisonError::into_inner);
        {
            let mut slots = lock();
            slots[self.rank].clear();
            slots[self.rank].extend_from_slice(buf);
        }
        sh.barrier.wait();
        {
            let slots = lock();
            let parts: Vec<f64> = slots.iter().flatten().copied().collect();
            combine(&parts, buf);
        }
        // nobody writes the next collective's partial before every rank has read this one's
        sh.barrier.wait();
    }
}

impl Communicator for ThreadRanks {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn allreduce_sum(&self, buf: &mut [f64]) {
        self.reduce(buf, sum_in_rank_order);
    }
    fn allreduce_max(&self, buf: &mut [f64]) {
        self.reduce(buf, max_in_rank_order);
    }
}

/// Adds `K` partials laid out rank after rank (`parts[r·len..(r+1)·len]`) into `out`, in rank
/// order: the reduction every [`Communicator`] implementation uses for its sums.
pub fn sum_in_rank_order(parts: &[f64], out: &mut [f64]) {
    fold_in_rank_order(parts, out, |o, p| o + p);
}

/// The element-wise maximum of `K` partials laid out rank after rank, into `out`.
pub fn max_in_rank_order(parts: &[f64], out: &mut [f64]) {
    fold_in_rank_order(parts, out, f64::max);
}

/// `out = op(…op(op(part_0, part_1), part_2)…, part_{K−1})` element-wise, the partials laid out
/// rank after rank in `parts`.
fn fold_in_rank_order(parts: &[f64], out: &mut [f64], op: impl Fn(f64, f64) -> f64) {
    let len = out.len();
    if len == 0 {
        return;
    }
    debug_assert_eq!(parts.len() % len, 0);
    out.copy_from_slice(&parts[..len]);
    for part in parts[len..].chunks_exact(len) {
        for (o, p) in out.iter_mut().zip(part) {
            *o = op(*o, *p);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    #[test]
    fn shares_cover_the_rows_in_rank_order() {
        #[derive(Debug)]
        struct Fake(usize, usize);
        impl Communicator for Fake {
            fn rank(&self) -> usize {
                self.0
            }
            fn size(&self) -> usize {
                self.1
            }
            fn allreduce_sum(&self, _: &mut [f64]) {}
            fn allreduce_max(&self, _: &mut [f64]) {}
        }
        for k in 1..6 {
            for m in [0, 1, 7, 100] {
                let mut next = 0;
                for r in 0..k {
                    let s = Fake(r, k).share(m);
                    assert_eq!(s.start, next);
                    assert!(s.len() <= m / k + 1);
                    next = s.end;
                }
                assert_eq!(next, m);
            }
        }
        assert_eq!(Single.share(5), 0..5);
    }

    #[test]
    fn rank_order_sums_and_maxima() {
        let parts = [1.0, 2.0, 10.0, -5.0, 100.0, 0.5];
        let mut out = [0.0; 2];
        sum_in_rank_order(&parts, &mut out);
        assert_eq!(out, [111.0, -2.5]);
        max_in_rank_order(&parts, &mut out);
        assert_eq!(out, [100.0, 2.0]);
    }

    /// `K` ranks simulated in one thread: each collective is played once every rank has called
    /// it (ranks are called in rank order, the last one completes the collective).
    #[derive(Debug)]
    struct Sim {
        rank: usize,
        size: usize,
        pending: Rc<RefCell<Vec<Vec<f64>>>>,
    }

    impl Communicator for Sim {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }
        fn allreduce_sum(&self, _: &mut [f64]) {
            unreachable!()
        }
        fn allreduce_max(&self, buf: &mut [f64]) {
            // the other rank's contribution is already pending
            for other in self.pending.borrow().iter() {
                for (b, o) in buf.iter_mut().zip(other) {
                    *b = b.max(*o);
                }
            }
        }
    }

    #[test]
    fn one_rank_failing_fails_every_rank() {
        // two "ranks" with a shared max: rank 1 fails, rank 0 is told so
        let pending = Rc::new(RefCell::new(Vec::new()));
        let r0 = Sim {
            rank: 0,
            size: 2,
            pending: pending.clone(),
        };
        // rank 1 failed: it contributes [1, K − 1]
        pending.borrow_mut().push(vec![1.0, 1.0]);
        let e = agree(&r0, Ok::<(), Error>(())).unwrap_err();
        assert!(e.to_string().contains("rank 1 failed"), "{e}");
        // the same value on every rank passes; a different one is named
        pending.borrow_mut().clear();
        let v = 0x1234_5678_9abc_def0u64;
        let contribution = |v: u64| {
            let (hi, lo) = ((v >> 32) as f64, (v & 0xffff_ffff) as f64);
            vec![hi, lo, -hi, -lo]
        };
        pending.borrow_mut().push(contribution(v));
        check_same(&r0, "the data", v).unwrap();
        pending.borrow_mut().clear();
        pending.borrow_mut().push(contribution(v + 1));
        let e = check_same(&r0, "the data", v).unwrap_err();
        assert!(e.to_string().contains("disagree on the data"), "{e}");
    }

    #[test]
    fn thread_ranks_sum_in_rank_order() {
        let out = ThreadRanks::run(3, |c| {
            let r = c.rank() as f64;
            let mut a = [1.0 + r, -r];
            c.allreduce_sum(&mut a);
            let mut b = [r, 10.0 - r];
            c.allreduce_max(&mut b);
            vec![a[0], a[1], b[0], b[1], c.size() as f64]
        });
        assert_eq!(out.len(), 3);
        for o in out {
            assert_eq!(o, [6.0, -3.0, 2.0, 10.0, 3.0]);
        }
    }

    #[test]
    fn counted_counts_values() {
        let c = Counted::new(&Single);
        let mut b = [1.0, 2.0, 3.0];
        c.allreduce_sum(&mut b);
        c.allreduce_max(&mut b[..1]);
        assert_eq!((c.calls(), c.values()), (2, 4));
        assert_eq!(b, [1.0, 2.0, 3.0]);
    }
}
