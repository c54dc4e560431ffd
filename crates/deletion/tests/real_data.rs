//! The structured IPM on real images (MNIST, from the repository's data folder): the final
//! phase, where the normal equations' solves are least accurate.

use bulwark_core::{Dataset, Fit};
use bulwark_data::{BinaryTask, load};
use bulwark_deletion::{DsxIpmSettings, DsxLpParams, FeatureValues};

#[path = "common/pairs.rs"]
mod pairs;

/// The first `per_class` examples of each digit of a pair of the MNIST test set, min-max scaled.
fn mnist_pair(a: &str, b: &str, per_class: usize) -> Dataset {
    let (raw, _) = load("mnist10k", None).expect("mnist10k in the repository's data folder");
    pairs::first_per_class(&raw, &BinaryTask::Pair(a.into(), b.into()), Some(per_class))
}

fn params(refine: bool) -> DsxLpParams {
    DsxLpParams::new()
        .budget(50.0)
        .c(1.0)
        .values(FeatureValues::Uniform)
        .fallback(false)
        .ipm_settings(
            DsxIpmSettings::builder()
                .dual_refinement(refine)
                .build()
                .unwrap(),
        )
}

/// MNIST 4 vs 9, 300 of each: near the optimum the solves reach a relative residual of only
/// about 1e-7, all of it in the dual equation, and without refinement the dual residual grows
/// from 5e-10 to 7e-6 in two steps ("dual residual diverging at the optimum", then a fallback
/// solver). Refined on the dual equations, the structured IPM itself converges.
#[test]
fn final_phase_refinement_keeps_the_dual_residual_converging() {
    let data = mnist_pair("4", "9", 300);
    assert_eq!((data.len(), data.n_features()), (600, 784));
    let e = params(false).fit(&data).unwrap_err().to_string();
    assert!(e.contains("dual residual diverging"), "{e}");
    let f = params(true).fit(&data).unwrap();
    let r = &f.report;
    assert_eq!(r.solver, "dsx-ipm", "{}", r.summary());
    assert!(r.converged && r.fallbacks.is_empty(), "{}", r.summary());
    assert!(r.details["refinements"] >= 1.0, "{:?}", r.details);
    assert!(r.iterations.unwrap() <= 40, "{}", r.summary());
    let (obj, closed) = (r.objective.unwrap(), r.details["closed_form_objective"]);
    assert!(
        (obj - closed).abs() <= 1e-6 * (1.0 + obj),
        "{obj} vs {closed}"
    );
}
