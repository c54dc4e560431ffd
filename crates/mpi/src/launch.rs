//! What a process can tell about its launch without MPI: whether `mpirun` (or another process
//! manager) started it as one of several ranks.

use bulwark_core::{Error, Result};

/// The environment variables through which process managers state the number of ranks:
/// OpenMPI's `mpirun` and MPICH's Hydra (and Slurm's PMI).
pub const SIZE_VARIABLES: [&str; 2] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

/// The number of ranks a process manager started, when this process is one of them.
pub fn launched_ranks() -> Option<usize> {
    launched_ranks_from(|name| std::env::var(name).ok())
}

/// [`launched_ranks`] reading the environment through `var`.
pub fn launched_ranks_from(var: impl Fn(&str) -> Option<String>) -> Option<usize> {
    SIZE_VARIABLES
        .iter()
        .find_map(|name| var(name)?.trim().parse().ok())
}

/// Refuses to run as one of several ranks in a build without the `mpi` feature: every rank
/// would redo the whole work and write the same files. `what` names the program in the error.
pub fn check_launch(what: &str) -> Result<()> {
    check_launch_with(what, launched_ranks(), crate::HAS_MPI)
}

fn check_launch_with(what: &str, ranks: Option<usize>, has_mpi: bool) -> Result<()> {
    match ranks {
        Some(k) if k > 1 && !has_mpi => Err(Error::Distributed {
            ranks: k,
            message: format!(
                "{what} was started as one of {k} MPI ranks but built without the `mpi` feature; \
                 run it as one process, or build it with `--features mpi` \
                 (scripts/install-mpi.sh installs MPI and libclang)"
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_read_from_either_process_manager() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(launched_ranks_from(env(&[])), None);
        assert_eq!(
            launched_ranks_from(env(&[("OMPI_COMM_WORLD_SIZE", "3")])),
            Some(3)
        );
        assert_eq!(launched_ranks_from(env(&[("PMI_SIZE", "2")])), Some(2));
        assert_eq!(launched_ranks_from(env(&[("PMI_SIZE", "x")])), None);
    }

    #[test]
    fn several_ranks_need_the_feature() {
        assert!(check_launch_with("bulwark", None, false).is_ok());
        assert!(check_launch_with("bulwark", Some(1), false).is_ok());
        assert!(check_launch_with("bulwark", Some(2), true).is_ok());
        let e = check_launch_with("bulwark", Some(2), false).unwrap_err();
        assert!(e.to_string().contains("without the `mpi` feature"), "{e}");
    }
}
