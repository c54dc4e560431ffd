//! Which communicator this process trains with: one process ([`Single`]), or one rank of
//! several under `mpirun` (the `mpi` feature; `bulwark_mpi::World`).

use bulwark_core::{Communicator, Single};

/// The communicator for this process: MPI's world when a process manager started it (and the
/// binary has the `mpi` feature), else [`Single`]. Fails when started as one of several ranks by
/// a binary without the feature: each rank would redo the whole work and write the same files.
pub fn communicator() -> bulwark_core::Result<Box<dyn Communicator>> {
    bulwark_mpi::check_launch("bulwark")?;
    #[cfg(feature = "mpi")]
    if bulwark_mpi::launched_ranks().is_some() {
        return Ok(Box::new(bulwark_mpi::World::init()?));
    }
    Ok(Box::new(Single))
}
