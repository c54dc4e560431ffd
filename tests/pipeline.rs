//! Workspace-level integration: the data layer feeds the core's closed-form worst case
//! consistently across formats and tasks.

use bulwark::core::{Classifier, CsrMatrix, DeletionScratch, FeatureBudget, Features, LinearModel};
use bulwark::data::{
    BinaryTask, Scaler, ScalingKind, binary_task, load, mutual_information_values, train_test,
};

#[test]
fn dense_and_sparse_copies_give_the_same_worst_case_losses() {
    let (raw, _) = load("spambase", None).unwrap();
    let data = binary_task(&raw, &BinaryTask::Natural).unwrap();
    let split = train_test(&data, 0.5, true, 9).unwrap();
    let train = data.select(&split.train);
    let scaler = Scaler::fit(&train, ScalingKind::MinMax).unwrap();
    let train = scaler.transform(&train).unwrap();
    let v = mutual_information_values(&train).unwrap();
    let budget = FeatureBudget::try_new(v, 5.0).unwrap();
    let model = LinearModel::try_new(
        (0..57).map(|j| ((j * 7 % 11) as f64 - 5.0) / 5.0).collect(),
        0.1,
    )
    .unwrap();
    let sparse = train
        .with_features(Features::Sparse(CsrMatrix::from_dense(
            &train.features().to_dense(),
        )))
        .unwrap();
    let a = budget
        .mean_worst_case_loss(model.weights(), model.bias(), &train)
        .unwrap();
    let b = budget
        .mean_worst_case_loss(model.weights(), model.bias(), &sparse)
        .unwrap();
    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    assert_eq!(
        model.error_rate(&train).unwrap(),
        model.error_rate(&sparse).unwrap()
    );
    // the worst case never lowers the clean hinge: loss ≥ [V/P − y(w·x + b)]_+ with all kept
    let y = train.binary_labels().unwrap();
    let mut s = DeletionScratch::default();
    for i in 0..train.len() {
        let clean = (budget.total() / budget.p()
            - y[i].as_f64() * (train.row(i).dot(model.weights()) + model.bias()))
        .max(0.0);
        let wc =
            budget.worst_case_deletion(model.weights(), model.bias(), train.row(i), y[i], &mut s);
        assert!(wc.loss >= clean - 1e-12);
    }
}
