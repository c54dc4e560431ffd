//! The kernel SVM by SMO against clarabel's QP solve of the same dual, for each kernel; its
//! invariances (weights = duplicated rows, shrinking, cache size) and its typed errors.

mod common;

use bulwark_core::{Classifier, Dataset, DecisionFunction, DenseMatrix, Fit, Kernel, Sign};
use bulwark_online::{KernelSvmParams, SvmParams};
use common::{clarabel_svm_dual, gaussian_data};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

fn kernels() -> [Kernel; 4] {
    [
        Kernel::Linear,
        Kernel::Polynomial {
            degree: 2,
            gamma: 1.0,
            coef0: 1.0,
        },
        Kernel::Polynomial {
            degree: 3,
            gamma: 0.2,
            coef0: 1.0,
        },
        Kernel::Rbf { gamma: 0.3 },
    ]
}

fn gram(data: &Dataset, k: Kernel) -> Vec<Vec<f64>> {
    let x = data.features().to_dense();
    (0..data.len())
        .map(|i| {
            (0..data.len())
                .map(|j| k.eval_dense(x.row(i), x.row(j)))
                .collect()
        })
        .collect()
}

fn labels(data: &Dataset) -> Vec<f64> {
    data.binary_labels()
        .unwrap()
        .iter()
        .map(|s| s.as_f64())
        .collect()
}

#[test]
fn smo_dual_matches_clarabel_for_every_kernel() {
    for (seed, (m, n, c, shift)) in [
        (40, 5, 1.0, 0.5),
        (60, 4, 10.0, 0.3),
        (50, 3, 0.1, 1.0),
        (35, 8, 100.0, 0.8),
    ]
    .into_iter()
    .enumerate()
    {
        let data = gaussian_data(m, n, shift, 300 + seed as u64);
        let y = labels(&data);
        for kernel in kernels() {
            let fitted = KernelSvmParams::new()
                .kernel(kernel)
                .c(c)
                .tolerance(1e-10)
                .fit(&data)
                .unwrap();
            let r = &fitted.report;
            assert_eq!(r.solver, "smo");
            assert!(r.converged, "{r:?}");
            let ours = r.details["dual_objective"];
            let qp = clarabel_svm_dual(&gram(&data, kernel), &y, &vec![c; m]);
            assert!(
                rel(ours, qp) < 1e-6,
                "seed {seed} {kernel:?} C={c}: SMO {ours} vs clarabel {qp}"
            );
            // primal ≥ dual, and the gap closes with the tolerance
            let gap = r.details["relative_gap"];
            assert!((-1e-9..1e-5).contains(&gap), "{kernel:?}: gap {gap}");
            // the model's decision values are the primal's: recompute the primal from them
            let model = &fitted.model;
            let coef = model.coefficients();
            let s = model.support_vectors();
            let mut quad = 0.0;
            for a in 0..s.rows() {
                for b in 0..s.rows() {
                    quad += coef[a] * coef[b] * kernel.eval_dense(s.row(a), s.row(b));
                }
            }
            let hinge: f64 = (0..m)
                .map(|i| (1.0 - y[i] * model.decision(data.row(i))).max(0.0))
                .sum();
            let primal = 0.5 * quad + c * hinge;
            assert!(
                rel(primal, r.objective.unwrap()) < 1e-8,
                "{kernel:?}: primal from the model {primal} vs reported {:?}",
                r.objective
            );
        }
    }
}

#[test]
fn linear_kernel_smo_equals_the_linear_svm() {
    let data = gaussian_data(80, 6, 0.4, 7);
    for c in [0.1, 1.0, 10.0] {
        let smo = KernelSvmParams::new()
            .kernel(Kernel::Linear)
            .c(c)
            .tolerance(1e-10)
            .fit(&data)
            .unwrap();
        let dcd = SvmParams::new().c(c).tolerance(1e-10).fit(&data).unwrap();
        let (a, b) = (smo.report.objective.unwrap(), dcd.report.objective.unwrap());
        assert!(rel(a, b) < 1e-7, "C={c}: SMO {a} vs dual CD {b}");
        for i in 0..data.len() {
            assert_eq!(
                smo.model.predict_class(data.row(i)),
                dcd.model.predict_class(data.row(i)),
                "C={c}, row {i}"
            );
        }
    }
}

#[test]
fn weight_two_is_a_duplicated_row_and_settings_do_not_change_the_optimum() {
    let data = gaussian_data(40, 4, 0.5, 11);
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let base = KernelSvmParams::new()
        .kernel(kernel)
        .c(2.0)
        .tolerance(1e-10);
    let reference = base.fit(&data).unwrap().report.details["dual_objective"];
    // shrinking off, and a cache of two rows (every row recomputed, swaps under pressure)
    for params in [
        base.clone().shrinking(false),
        base.clone().cache_bytes(1),
        base.clone().cache_bytes(40 * 8 * 5),
    ] {
        let f = params.fit(&data).unwrap();
        let d = f.report.details["dual_objective"];
        assert!(rel(d, reference) < 1e-9, "{params:?}: {d} vs {reference}");
    }
    assert_eq!(
        base.clone()
            .cache_bytes(1)
            .fit(&data)
            .unwrap()
            .report
            .details["cache_rows"],
        2.0
    );
    // example 3 with weight 2 = example 3 twice
    let x = data.features().to_dense();
    let y = data.binary_labels().unwrap().to_vec();
    let mut rows: Vec<Vec<f64>> = (0..data.len()).map(|i| x.row(i).to_vec()).collect();
    let mut yy: Vec<Sign> = y.clone();
    rows.push(x.row(3).to_vec());
    yy.push(y[3]);
    let dup = Dataset::binary("dup", DenseMatrix::from_rows(&rows).unwrap(), yy).unwrap();
    let mut w = vec![1.0; data.len()];
    w[3] = 2.0;
    let weighted = data.clone().with_weights(w).unwrap();
    let a = base.fit(&dup).unwrap();
    let b = base.fit(&weighted).unwrap();
    let (da, db) = (
        a.report.details["dual_objective"],
        b.report.details["dual_objective"],
    );
    assert!(rel(da, db) < 1e-9, "duplicated {da} vs weighted {db}");
    for i in 0..data.len() {
        let (sa, sb) = (a.model.decision(data.row(i)), b.model.decision(data.row(i)));
        assert!((sa - sb).abs() < 1e-6, "row {i}: {sa} vs {sb}");
    }
}

#[test]
fn sparse_and_dense_inputs_give_the_same_fit() {
    let dense = gaussian_data(50, 6, 0.5, 21);
    let mut sparse = dense.clone();
    // zero out a third of the entries, then store as CSR
    sparse
        .features_mut()
        .map_in_place(|j, v| if j % 3 == 0 { 0.0 } else { v })
        .unwrap();
    let dense = sparse.clone();
    let csr = sparse.features().to_csr();
    *sparse.features_mut() = csr.into();
    let p = KernelSvmParams::new()
        .kernel(Kernel::Rbf { gamma: 0.2 })
        .tolerance(1e-10);
    let (a, b) = (p.fit(&dense).unwrap(), p.fit(&sparse).unwrap());
    let (da, db) = (
        a.report.details["dual_objective"],
        b.report.details["dual_objective"],
    );
    assert!(rel(da, db) < 1e-12, "{da} vs {db}");
}

#[test]
fn bad_parameters_are_typed_errors() {
    let data = gaussian_data(20, 3, 0.5, 1);
    let cases = [
        (
            KernelSvmParams::new().kernel(Kernel::Rbf { gamma: 0.0 }),
            "gamma",
        ),
        (
            KernelSvmParams::new().kernel(Kernel::Polynomial {
                degree: 0,
                gamma: 1.0,
                coef0: 1.0,
            }),
            "degree",
        ),
        (KernelSvmParams::new().cache_bytes(0), "cache_size"),
        (KernelSvmParams::new().c(-1.0), "C"),
        (KernelSvmParams::new().tolerance(f64::NAN), "tolerance"),
    ];
    for (p, name) in cases {
        let e = p.fit(&data).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
    }
}
