use bulwark_core::{
    Classifier, CsrMatrix, Dataset, DenseMatrix, Error, LinearModel, MulticlassLinearModel, Sign,
};

#[test]
fn zero_score_is_a_mistake() {
    let x = DenseMatrix::from_rows(&[vec![1.0], vec![-1.0], vec![0.0]]).unwrap();
    let d = Dataset::binary("t", x, vec![Sign::Pos, Sign::Neg, Sign::Pos]).unwrap();
    let m = LinearModel::try_new(vec![1.0], 0.0).unwrap();
    assert!((m.error_rate(&d).unwrap() - 1.0 / 3.0).abs() < 1e-15);
    assert!(Sign::Neg.is_mistake(0.0) && Sign::Pos.is_mistake(0.0));
}

#[test]
fn csr_validation() {
    assert!(matches!(
        CsrMatrix::try_new(1, 3, vec![0, 2], vec![2, 1], vec![1.0, 1.0]),
        Err(Error::Input { .. })
    ));
    assert!(matches!(
        CsrMatrix::try_new(1, 3, vec![0, 2], vec![1, 1], vec![1.0, 1.0]),
        Err(Error::Input { .. })
    ));
    assert!(matches!(
        CsrMatrix::try_new(1, 3, vec![0, 1], vec![3], vec![1.0]),
        Err(Error::Input { .. })
    ));
    assert!(matches!(
        CsrMatrix::try_new(1, 3, vec![0, 1], vec![0], vec![f64::NAN]),
        Err(Error::NonFinite { .. })
    ));
    let m = CsrMatrix::try_new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
    assert_eq!(CsrMatrix::from_dense(&m.to_dense()), m);
}

#[test]
fn dense_rejects_non_finite_and_ragged() {
    assert!(matches!(
        DenseMatrix::try_new(1, 2, vec![1.0, f64::INFINITY]),
        Err(Error::NonFinite { .. })
    ));
    assert!(DenseMatrix::from_rows(&[vec![1.0, 2.0], vec![1.0]]).is_err());
    assert!(DenseMatrix::try_new(2, 2, vec![1.0; 3]).is_err());
}

#[test]
fn single_class_is_reported() {
    let x = DenseMatrix::from_rows(&[vec![1.0], vec![2.0]]).unwrap();
    let d = Dataset::binary("only-pos", x, vec![Sign::Pos, Sign::Pos]).unwrap();
    let e = d.require_two_classes().unwrap_err();
    assert!(matches!(e, Error::SingleClass { count: 2, .. }), "{e}");
}

#[test]
fn multiclass_prediction_and_counts() {
    let x = DenseMatrix::from_rows(&[vec![1.0, 0.0], vec![0.0, 1.0], vec![-1.0, -1.0]]).unwrap();
    let d = Dataset::multiclass(
        "m",
        x,
        vec![0, 1, 2],
        vec!["a".into(), "b".into(), "c".into()],
    )
    .unwrap();
    let m = MulticlassLinearModel::from_binary(&[
        LinearModel::try_new(vec![1.0, 0.0], 0.0).unwrap(),
        LinearModel::try_new(vec![0.0, 1.0], 0.0).unwrap(),
        LinearModel::try_new(vec![-1.0, -1.0], -0.5).unwrap(),
    ])
    .unwrap();
    assert_eq!(m.error_rate(&d).unwrap(), 0.0);
    assert_eq!(d.class_counts().get("b"), Some(&1));
    assert!(d.binary_labels().is_err());
    let sub = d.select(&[2, 0]);
    assert_eq!(sub.targets().class_index(0), 2);
    let wrong = LinearModel::zeros(3);
    assert!(matches!(
        wrong.error_rate(&sub),
        Err(Error::ShapeMismatch { .. })
    ));
}
