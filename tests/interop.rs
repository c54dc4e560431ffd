//! Sparse-matrix interop (`bulwark::core::interop`): round trips through sprs and faer, typed
//! errors on bad input, and a learner that sees the same data whichever way it was built.

use bulwark::core::{CsrMatrix, Dataset, DenseMatrix, Error, Features, Fit, Sign};
use bulwark::data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
use bulwark::online::{LogregParams, O2bParams};
use faer::sparse::{SparseColMat, SparseRowMat, SymbolicSparseRowMat, Triplet};

/// [[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, -4], [5, 0, 0, 0]]
fn example() -> (DenseMatrix, sprs::CsMat<f64>) {
    let dense = DenseMatrix::from_rows(&[
        vec![1.0, 0.0, 2.0, 0.0],
        vec![0.0, 0.0, 0.0, 0.0],
        vec![0.0, 3.0, 0.0, -4.0],
        vec![5.0, 0.0, 0.0, 0.0],
    ])
    .unwrap();
    let m = sprs::CsMat::new(
        (4, 4),
        vec![0, 2, 2, 4, 5],
        vec![0, 2, 1, 3, 0],
        vec![1.0, 2.0, 3.0, -4.0, 5.0],
    );
    (dense, m)
}

#[test]
fn sprs_round_trips() {
    let (dense, m) = example();
    let expected = CsrMatrix::from_dense(&dense);
    let (owned, values_at) = (m.clone(), m.data().as_ptr());
    let (owned_indices_at, owned_values_at) = (owned.indices().as_ptr(), owned.data().as_ptr());
    assert_ne!(owned_values_at, values_at);
    let csr = CsrMatrix::try_from(owned).unwrap();
    assert_eq!(csr, expected);
    // moved, not copied
    assert_eq!(csr.indices().as_ptr(), owned_indices_at);
    assert_eq!(csr.values().as_ptr(), owned_values_at);
    assert_eq!(sprs::CsMat::from(&csr), m);
    assert_eq!(csr.as_sprs(), m.view());
    // column-major input, owned and borrowed
    let csc = m.to_csc();
    assert!(csc.is_csc());
    assert_eq!(CsrMatrix::try_from(csc.view()).unwrap(), expected);
    assert_eq!(CsrMatrix::try_from(csc).unwrap(), expected);
    // a borrowed row slice
    let rows = CsrMatrix::try_from(m.slice_outer(2..4)).unwrap();
    assert_eq!(rows, expected.select_rows(&[2, 3]));
    let rows = CsrMatrix::try_from(m.slice_outer(2..4).to_owned()).unwrap();
    assert_eq!(rows, expected.select_rows(&[2, 3]));
    // empty
    let empty = sprs::CsMat::<f64>::zero((3, 2));
    let csr = CsrMatrix::try_from(empty.clone()).unwrap();
    assert_eq!((csr.rows(), csr.cols(), csr.nnz()), (3, 2, 0));
    assert_eq!(sprs::CsMat::from(&csr), empty);
}

#[test]
fn sprs_non_finite_values_are_typed_errors_naming_row_and_column() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let m = sprs::CsMat::new((2, 3), vec![0, 1, 3], vec![0, 0, 2], vec![1.0, 2.0, bad]);
        for e in [
            CsrMatrix::try_from(m.clone()).unwrap_err(),
            CsrMatrix::try_from(m.to_csc()).unwrap_err(),
            CsrMatrix::try_from(m.view()).unwrap_err(),
        ] {
            match e {
                Error::NonFinite { location, .. } => {
                    assert_eq!(
                        (location.line, location.column),
                        (Some(2), Some(3)),
                        "{location}"
                    );
                }
                other => panic!("expected NonFinite, got {other}"),
            }
        }
    }
}

fn faer_rows(m: &sprs::CsMat<f64>) -> SparseRowMat<usize, f64> {
    let triplets: Vec<Triplet<usize, usize, f64>> =
        m.iter().map(|(&v, (i, j))| Triplet::new(i, j, v)).collect();
    SparseRowMat::try_new_from_triplets(m.rows(), m.cols(), &triplets).unwrap()
}

#[test]
fn faer_round_trips() {
    let (dense, m) = example();
    let expected = CsrMatrix::from_dense(&dense);
    let rows = faer_rows(&m);
    assert_eq!(CsrMatrix::try_from(rows.as_ref()).unwrap(), expected);
    let values_at = rows.val().as_ptr();
    let csr = CsrMatrix::try_from(rows).unwrap();
    assert_eq!(csr, expected);
    assert_eq!(csr.values().as_ptr(), values_at, "moved, not copied");
    let triplets: Vec<Triplet<usize, usize, f64>> =
        m.iter().map(|(&v, (i, j))| Triplet::new(i, j, v)).collect();
    let cols = SparseColMat::try_new_from_triplets(4, 4, &triplets).unwrap();
    assert_eq!(CsrMatrix::try_from(cols.as_ref()).unwrap(), expected);
    // per-row non-zero counts (a non-compact matrix): row 0 keeps 1 of its 2 slots
    let symbolic =
        SymbolicSparseRowMat::new_checked(2, 3, vec![0, 2, 3], Some(vec![1, 1]), vec![1, 2, 0]);
    let sparse = SparseRowMat::new(symbolic, vec![7.0, 99.0, 8.0]);
    let expected = CsrMatrix::try_new(2, 3, vec![0, 1, 2], vec![1, 0], vec![7.0, 8.0]).unwrap();
    assert_eq!(CsrMatrix::try_from(sparse.as_ref()).unwrap(), expected);
    assert_eq!(CsrMatrix::try_from(sparse).unwrap(), expected);
}

#[test]
fn faer_unsorted_or_repeated_indices_are_typed_errors_naming_the_row() {
    for col_idx in [vec![0, 2, 1], vec![0, 1, 1]] {
        let symbolic =
            SymbolicSparseRowMat::new_unsorted_checked(2, 3, vec![0, 1, 3], None, col_idx);
        let m = SparseRowMat::new(symbolic, vec![1.0, 2.0, 3.0]);
        for e in [
            CsrMatrix::try_from(m.as_ref()).unwrap_err(),
            CsrMatrix::try_from(m.clone()).unwrap_err(),
        ] {
            match e {
                Error::Input { location, message } => {
                    assert_eq!(location.line, Some(2), "{location}");
                    assert!(message.contains("strictly increasing"), "{message}");
                }
                other => panic!("expected Input, got {other}"),
            }
        }
    }
    let symbolic = SymbolicSparseRowMat::new_checked(1, 2, vec![0, 1], None, vec![1]);
    let e = CsrMatrix::try_from(SparseRowMat::new(symbolic, vec![f64::NAN])).unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }), "{e}");
}

/// spambase (min-max scaled, 4601 × 57) as a dense `Dataset` and as a column-major sprs matrix.
fn spambase() -> (Dataset, sprs::CsMat<f64>) {
    let (raw, _) = load("spambase", None).unwrap();
    let data = binary_task(&raw, &BinaryTask::Natural).unwrap();
    let data = Scaler::fit(&data, ScalingKind::MinMax)
        .unwrap()
        .transform(&data)
        .unwrap();
    let dense = data.features().to_dense();
    let mut tri = sprs::TriMat::new((dense.rows(), dense.cols()));
    for i in 0..dense.rows() {
        for (j, &v) in dense.row(i).iter().enumerate() {
            if v != 0.0 {
                tri.add_triplet(i, j, v);
            }
        }
    }
    (data, tri.to_csc())
}

#[test]
fn learners_trained_on_sprs_data_match_the_dense_copy() {
    let (dense, csc) = spambase();
    let labels: Vec<Sign> = dense.binary_labels().unwrap().to_vec();
    let csr = CsrMatrix::try_from(csc).unwrap();
    assert!(csr.nnz() < dense.len() * dense.n_features());
    assert_eq!(csr, dense.features().to_csr());
    let sparse = Dataset::binary("spambase", Features::Sparse(csr), labels).unwrap();

    // O2B: bit-identical on sparse and dense rows
    let o2b = O2bParams::new()
        .c(1.0)
        .budget(3.0)
        .epochs(2)
        .shuffle_seed(Some(1));
    assert_eq!(
        o2b.fit(&sparse).unwrap().model,
        o2b.fit(&dense).unwrap().model
    );

    // logistic regression: the same optimum (dense rows sum their products in another order)
    let logreg = LogregParams::new().l2(1e-3).tolerance(1e-10);
    let (a, b) = (logreg.fit(&sparse).unwrap(), logreg.fit(&dense).unwrap());
    assert!(a.report.converged && b.report.converged);
    for (x, y) in a.model.weights().iter().zip(b.model.weights()) {
        assert!((x - y).abs() <= 1e-6 * (1.0 + y.abs()), "{x} vs {y}");
    }
    assert!((a.model.bias() - b.model.bias()).abs() <= 1e-6 * (1.0 + b.model.bias().abs()));
}
