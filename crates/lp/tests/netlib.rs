//! Netlib acceptance problems, read from `lp/` in the data directory (the repository's `data/lp/`
//! unless `--data-dir`/`BULWARK_DATA` name another; see `bulwark_data::resolve_data_dir`).
#![allow(clippy::print_stderr)]

use bulwark_lp::{BackendChoice, IpmSettings, Status, read_mps, solve};

fn data_file(name: &str) -> std::path::PathBuf {
    bulwark_data::data_file(&format!("lp/{name}"), None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn afiro() {
    let path = data_file("afiro.mps");
    let lp = read_mps(&path).unwrap();
    for backend in [BackendChoice::SparseLdl, BackendChoice::Dense] {
        let s = IpmSettings::builder().backend(backend).build().unwrap();
        let sol = solve(&lp, &s).unwrap();
        assert_eq!(sol.status, Status::Optimal, "{backend:?}");
        let rel = (sol.objective - -464.7531428571).abs() / 464.7531428571;
        assert!(
            rel <= 1e-8,
            "{backend:?}: objective {} (rel err {rel:e})",
            sol.objective
        );
        assert!(sol.primal_residual <= 1e-8 && sol.dual_residual <= 1e-8 && sol.gap <= 1e-8);
    }
}

/// greenbea is hard and degenerate: the solver must either reach the reference optimum
/// or report an honest non-optimal status — never a wrong optimum.
#[test]
fn greenbea_is_optimal_and_right_or_honest() {
    let path = data_file("greenbea.mps");
    let lp = read_mps(&path).unwrap();
    let sol = solve(&lp, &IpmSettings::default()).unwrap();
    eprintln!(
        "greenbea: status {}, objective {:.11e}, iterations {}, {:.2}s",
        sol.status, sol.objective, sol.iterations, sol.seconds
    );
    if sol.status == Status::Optimal {
        let rel = (sol.objective - -72555248.12985).abs() / 72555248.12985;
        assert!(
            rel <= 1e-6,
            "wrong optimum {} (rel err {rel:e})",
            sol.objective
        );
    } else {
        assert!(
            !sol.status.is_infeasible(),
            "greenbea is feasible and bounded, got {}",
            sol.status
        );
    }
}
