//! SMO against LIBSVM (scikit-learn's `SVC`) on real data: the dual objective to 1e-4 relative
//! and the support-vector count within 1 %, at the same kernel, C and tolerance (1e-3) on the
//! same min-max-scaled rows. The LIBSVM figures are in `fixtures/libsvm_reference.json`,
//! written by `cargo xtask bench smo` (which also times both).

mod common;

use bulwark_core::Fit;
use bulwark_online::KernelSvmParams;
use common::smo_cases::{CASES, load_case};

#[test]
fn smo_matches_libsvm_on_ionosphere_and_usps() {
    let text = include_str!("fixtures/libsvm_reference.json");
    let reference: serde_json::Value = serde_json::from_str(text).unwrap();
    let mut checked = 0;
    for &(name, source, task, kernel, c) in CASES {
        let Some(r) = reference.get(name) else {
            continue;
        };
        let data = load_case(source, task).unwrap();
        let fit = KernelSvmParams::new()
            .kernel(kernel)
            .c(c)
            .tolerance(1e-3)
            .fit(&data)
            .unwrap();
        assert_eq!(fit.report.solver, "smo");
        assert!(fit.report.converged, "{name}: {:?}", fit.report);
        let ours = fit.report.details["dual_objective"];
        let theirs = r["dual_objective"].as_f64().unwrap();
        assert!(
            (ours - theirs).abs() <= 1e-4 * theirs.abs(),
            "{name}: SMO {ours} vs LIBSVM {theirs}"
        );
        let (sv, sv_ref) = (
            fit.report.details["support_vectors"],
            r["support_vectors"].as_f64().unwrap(),
        );
        assert!(
            (sv - sv_ref).abs() <= 0.01 * sv_ref,
            "{name}: {sv} support vectors vs LIBSVM's {sv_ref}"
        );
        checked += 1;
    }
    assert!(checked >= 4, "the fixture covers {checked} cases");
}
