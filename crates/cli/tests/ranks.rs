//! Launch under a process manager, without MPI: a binary built without the `mpi` feature and
//! started as one of several ranks refuses to run; on one process `--json` reports one rank.
//! (The runs under `mpirun` are `scripts/test-mpi.sh`: they need MPI.)

mod common;
use common::*;

#[cfg(not(feature = "mpi"))]
#[test]
fn several_ranks_without_the_feature_are_refused() {
    use std::process::Command;
    for var in ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"] {
        let out = tmp("refused.json");
        let o = Command::new(env!("CARGO_BIN_EXE_bulwark"))
            .args(["train", "--algo", "logreg", "--data", "wdbc", "--out"])
            .arg(&out)
            .env(var, "2")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{var}: {err}");
        assert!(err.contains("without the `mpi` feature"), "{var}: {err}");
        assert!(!out.exists(), "{var}: a model was written");
    }
}

#[test]
fn one_process_reports_one_rank() {
    let m = tmp("one.json");
    let t = ok_json(&[
        "train",
        "--algo",
        "logreg",
        "--data",
        "wdbc",
        "--out",
        m.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(t["ranks"], 1);
    // the per-rank counters are reported only over several ranks
    assert!(t.get("allreduce_values").is_none());
}
