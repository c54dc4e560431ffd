#![doc = include_str!("../README.md")]

pub mod launch;
#[cfg(feature = "mpi")]
mod world;

pub use launch::{check_launch, launched_ranks};
#[cfg(feature = "mpi")]
pub use world::World;

/// Whether this build has the MPI communicator (the `mpi` feature).
pub const HAS_MPI: bool = cfg!(feature = "mpi");
