//! The MPI communicator: `MPI_COMM_WORLD` through rsmpi.

use std::cell::RefCell;
use std::fmt;

use bulwark_core::comm::{Communicator, max_in_rank_order, sum_in_rank_order};
use bulwark_core::{Error, Result};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives as _};

/// `MPI_COMM_WORLD`, initialised by [`World::init`] and finalised when dropped.
///
/// Reductions gather every rank's partial (`MPI_Allgather`) and add them in rank order on every
/// rank, rather than `MPI_Allreduce`, whose summation order the MPI standard leaves to the
/// implementation (and may differ between ranks): every rank gets the same bits, and a run is
/// reproducible. Each rank receives `K` times the buffer, which for the vectors of a linear
/// learner (a few thousand `f64`s) and a few ranks costs the same latency as an allreduce.
pub struct World {
    // declared before `universe`: dropped (freed) before MPI is finalised
    world: SimpleCommunicator,
    /// Receives the `K` partials of a reduction (reused: grown, never shrunk).
    gathered: RefCell<Vec<f64>>,
    _universe: Universe,
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .finish()
    }
}

impl World {
    /// Initialises MPI (once per process) and returns its world communicator.
    pub fn init() -> Result<Self> {
        let universe = mpi::initialize().ok_or_else(|| Error::Distributed {
            ranks: 0,
            message: "MPI was already initialised in this process".into(),
        })?;
        Ok(Self {
            world: universe.world(),
            gathered: RefCell::new(Vec::new()),
            _universe: universe,
        })
    }

    /// Ends every rank at once (`MPI_Abort`) with `code`: for a failure the other ranks cannot
    /// learn of through a collective.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// Gathers every rank's `buf` into the reused buffer, then combines the partials into `buf`
    /// (no allocation once the buffer has grown to the largest reduction).
    fn gather(&self, buf: &mut [f64], combine: fn(&[f64], &mut [f64])) {
        let mut parts = self.gathered.borrow_mut();
        parts.resize(buf.len() * self.size(), 0.0);
        self.world.all_gather_into(&*buf, &mut parts[..]);
        combine(&parts, buf);
    }
}

impl Communicator for World {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn allreduce_sum(&self, buf: &mut [f64]) {
        self.gather(buf, sum_in_rank_order);
    }
    fn allreduce_max(&self, buf: &mut [f64]) {
        self.gather(buf, max_in_rank_order);
    }
}
