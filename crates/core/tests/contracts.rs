//! The model and data contracts: views, multi-output scores, kernel models, ensembles,
//! transforms, example weights and model invariants — each against a direct computation.

use bulwark_core::{
    AnyModel, Classifier, Dataset, DatasetView, DecisionFunction, DenseMatrix, Ensemble, Error,
    Features, Filtered, FilteredRows, Fit, FitReport, FitTransform, FitView, Fitted, Kernel,
    KernelModel, LinearModel, MulticlassLinearModel, Pipeline, RowFilter, RowView, Scores, Sign,
    Transform,
};

fn toy() -> Dataset {
    let x = DenseMatrix::from_rows(&[
        vec![1.0, 2.0],
        vec![-1.0, 0.5],
        vec![3.0, -1.0],
        vec![0.0, 0.0],
        vec![-2.0, -2.0],
    ])
    .unwrap();
    let y = vec![Sign::Pos, Sign::Neg, Sign::Pos, Sign::Neg, Sign::Neg];
    Dataset::binary("toy", x, y).unwrap()
}

#[test]
fn views_compose_without_copying_and_follow_labels_and_weights() {
    let d = toy().with_weights(vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let v = DatasetView::rows(&d, vec![4, 2, 0, 2]).unwrap();
    assert_eq!(v.len(), 4);
    let w = v.select(&[1, 3, 0]).unwrap();
    assert_eq!(w.indices(), Some(&[2, 2, 4][..]));
    assert_eq!(w.weight(2), 5.0);
    assert_eq!(w.label(0).unwrap(), Sign::Pos);
    assert_eq!(w.class_index(2), 0);
    // the view's rows borrow the data set's storage
    let Features::Dense(m) = d.features() else {
        panic!("dense")
    };
    let RowView::Dense(r) = w.row(0) else {
        panic!("dense row")
    };
    assert!(std::ptr::eq(r.as_ptr(), m.row(2).as_ptr()));
    assert_eq!(w.to_dataset(), d.select(&[2, 2, 4]));
    assert!(matches!(
        v.select(&[4]),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(DatasetView::rows(&d, vec![5]).is_err());
}

#[test]
fn weighted_error_rate_and_zero_score_is_a_mistake() {
    let d = toy();
    // w = 0, b = 0 scores 0 everywhere: every example is a mistake (DSX eq. (1)), whatever
    // its label — also on the negative ones, which sign(0) = −1 would call correct
    let zero = LinearModel::zeros(2);
    assert_eq!(zero.error_rate(&d).unwrap(), 1.0);
    let m = LinearModel::try_new(vec![1.0, 0.0], -0.5).unwrap();
    // scores 0.5, -1.5, 2.5, -0.5, -2.5: all correct
    assert_eq!(m.error_rate(&d).unwrap(), 0.0);
    let flipped = LinearModel::try_new(vec![-1.0, 0.0], 0.5).unwrap();
    let weighted = d
        .clone()
        .with_weights(vec![1.0, 0.0, 0.0, 0.0, 3.0])
        .unwrap();
    assert_eq!(flipped.error_rate(&weighted).unwrap(), 1.0);
    let weighted = d.with_weights(vec![1.0, 1.0, 0.0, 0.0, 2.0]).unwrap();
    assert_eq!(flipped.error_rate(&weighted).unwrap(), 1.0);
    assert!(weighted.reject_weights("lp").is_err());
}

#[test]
fn scores_binary_and_multiclass() {
    let d = toy();
    let m = LinearModel::try_new(vec![1.0, 2.0], 0.25).unwrap();
    let s = m.scores(d.features()).unwrap();
    assert_eq!((s.rows(), s.cols()), (5, 1));
    for i in 0..5 {
        assert_eq!(s.get(i, 0), m.decision(d.row(i)));
    }
    let w = DenseMatrix::from_rows(&[vec![1.0, 0.0], vec![0.0, 1.0], vec![-1.0, -1.0]]).unwrap();
    let mc = MulticlassLinearModel::try_new(w, vec![0.0, 0.1, -0.5]).unwrap();
    let s = mc.scores(d.features()).unwrap();
    assert_eq!(s.cols(), 3);
    // row 0 = (1, 2): scores 1, 2.1, -3.5 → class 1
    assert_eq!(s.row(0), &[1.0, 2.1, -3.5]);
    assert_eq!(mc.predict_class(d.row(0)), 1);
    assert!(MulticlassLinearModel::try_new(DenseMatrix::zeros(3, 2), vec![0.0; 2]).is_err());
    assert!(MulticlassLinearModel::try_new(DenseMatrix::zeros(1, 2), vec![0.0]).is_err());
}

#[test]
fn kernel_models_match_the_sum_over_support_vectors() {
    let d = toy();
    let sv = DenseMatrix::from_rows(&[vec![1.0, 1.0], vec![-1.0, 0.0]]).unwrap();
    for kernel in [
        Kernel::Linear,
        Kernel::Polynomial {
            degree: 3,
            gamma: 0.5,
            coef0: 1.0,
        },
        Kernel::Rbf { gamma: 0.7 },
    ] {
        let m = KernelModel::try_new(kernel, sv.clone(), vec![0.5, -2.0], 0.1).unwrap();
        for i in 0..d.len() {
            let RowView::Dense(x) = d.row(i) else {
                panic!()
            };
            let k = |s: &[f64]| -> f64 {
                let dot: f64 = x.iter().zip(s).map(|(a, b)| a * b).sum();
                match kernel {
                    Kernel::Linear => dot,
                    Kernel::Polynomial { .. } => (0.5 * dot + 1.0).powi(3),
                    Kernel::Rbf { .. } => {
                        (-0.7 * x.iter().zip(s).map(|(a, b)| (a - b) * (a - b)).sum::<f64>()).exp()
                    }
                }
            };
            let direct = 0.5 * k(sv.row(0)) - 2.0 * k(sv.row(1)) + 0.1;
            assert!((m.decision(d.row(i)) - direct).abs() < 1e-12, "{kernel:?}");
        }
        let json = serde_json::to_string(&m).unwrap();
        let back: KernelModel = serde_json::from_str(&json).unwrap();
        assert_eq!(back.decision(d.row(2)), m.decision(d.row(2)));
    }
    assert!(Kernel::Rbf { gamma: 0.0 }.validate().is_err());
    assert!(
        Kernel::Polynomial {
            degree: 0,
            gamma: 1.0,
            coef0: 1.0
        }
        .validate()
        .is_err()
    );
    assert!(KernelModel::try_new(Kernel::Linear, sv, vec![1.0], 0.0).is_err());
}

#[test]
fn ensembles_vote_with_clipped_members() {
    let d = toy();
    let h1 = LinearModel::try_new(vec![10.0, 0.0], 0.0).unwrap();
    let h2 = LinearModel::try_new(vec![0.0, 0.1], 0.0).unwrap();
    let e = Ensemble::try_new(vec![h1.clone(), h2.clone()], vec![0.5, 2.0]).unwrap();
    for i in 0..d.len() {
        let x = d.row(i);
        let direct = 0.5 * h1.decision(x).clamp(-1.0, 1.0) + 2.0 * h2.decision(x).clamp(-1.0, 1.0);
        assert_eq!(e.decision(x), direct);
    }
    assert!(Ensemble::try_new(vec![h1.clone()], vec![-1.0]).is_err());
    assert!(Ensemble::try_new(vec![h1.clone()], vec![0.0]).is_err());
    assert!(Ensemble::try_new(vec![h1, LinearModel::zeros(3)], vec![1.0, 1.0]).is_err());
    assert!(Ensemble::<LinearModel>::try_new(vec![], vec![]).is_err());
    // deserialisation checks the invariants too
    assert!(
        serde_json::from_str::<Ensemble<LinearModel>>(
            r#"{"members":[{"weights":[1.0],"bias":0.0}],"alphas":[-1.0]}"#
        )
        .is_err()
    );
    assert!(serde_json::from_str::<LinearModel>(r#"{"weights":[1.0, 2.0],"bias":0.5}"#).is_ok());
}

/// Centres each feature on its training mean.
struct Centre;
struct Centred(Vec<f64>);

impl Transform for Centred {
    fn n_inputs(&self) -> usize {
        self.0.len()
    }
    fn n_outputs(&self) -> usize {
        self.0.len()
    }
    fn transform_row(&self, x: RowView<'_>, out: &mut [f64]) {
        x.to_dense_into(out);
        out.iter_mut().zip(&self.0).for_each(|(o, m)| *o -= m);
    }
}

impl FitTransform for Centre {
    type Fitted = Centred;
    fn fit_transform(&self, train: &DatasetView<'_>) -> bulwark_core::Result<Centred> {
        let mut mean = vec![0.0; train.n_features()];
        for i in 0..train.len() {
            train.row(i).axpy_into(1.0 / train.len() as f64, &mut mean);
        }
        Ok(Centred(mean))
    }
}

/// Class-mean difference direction (the "averaging" learner), on views.
struct Average;

impl FitView for Average {
    type Model = LinearModel;
    type Error = Error;
    fn fit_view(&self, data: &DatasetView<'_>) -> bulwark_core::Result<Fitted<LinearModel>> {
        let mut w = vec![0.0; data.n_features()];
        for i in 0..data.len() {
            data.row(i)
                .axpy_into(data.label(i)?.as_f64() / data.len() as f64, &mut w);
        }
        let mut report = FitReport::new("average", "closed-form");
        report.converged = true;
        Ok(Fitted {
            model: LinearModel::try_new(w, 0.0)?,
            report,
        })
    }
}

impl Fit for Average {
    type Model = LinearModel;
    type Error = Error;
    fn fit(&self, data: &Dataset) -> bulwark_core::Result<Fitted<LinearModel>> {
        self.fit_view(&data.view())
    }
}

/// Drops rows of norm above a threshold.
struct NormFilter(f64);

impl RowFilter for NormFilter {
    fn name(&self) -> &str {
        "norm-filter"
    }
    fn filter<'a>(&self, train: &DatasetView<'a>) -> bulwark_core::Result<FilteredRows<'a>> {
        let (keep, removed): (Vec<usize>, Vec<usize>) = (0..train.len()).partition(|&i| {
            train
                .row(i)
                .nonzeros()
                .map(|(_, v)| v * v)
                .sum::<f64>()
                .sqrt()
                <= self.0
        });
        Ok(FilteredRows {
            kept: train.select(&keep)?,
            removed,
        })
    }
}

#[test]
fn pipelines_apply_the_fitted_map_at_training_and_prediction() {
    let d = toy();
    let fitted = Pipeline {
        transform: Centre,
        learner: Average,
    }
    .fit(&d)
    .unwrap();
    let m = fitted.model;
    // the same model by hand: centre with the training mean, then average
    let mean = [0.2, -0.1];
    let centred = Centred(mean.to_vec()).transform(&d).unwrap();
    let direct = Average.fit(&centred).unwrap().model;
    for i in 0..d.len() {
        assert!((m.decision(d.row(i)) - direct.decision(centred.row(i))).abs() < 1e-12);
    }
    assert_eq!(
        m.predict(d.features()).unwrap(),
        direct.predict(centred.features()).unwrap()
    );
}

#[test]
fn row_filters_hand_a_view_to_the_learner_and_count_what_they_removed() {
    let d = toy();
    let fitted = Filtered {
        filter: NormFilter(2.5),
        learner: Average,
    }
    .fit(&d)
    .unwrap();
    // rows 2 (norm √10) and 4 (norm √8) are removed
    assert_eq!(fitted.report.details["removed"], 2.0);
    let direct = Average.fit(&d.select(&[0, 1, 3])).unwrap().model;
    assert_eq!(fitted.model, direct);
}

#[test]
fn any_model_dispatches_and_says_what_needs_weights() {
    let d = toy();
    let lin = LinearModel::try_new(vec![1.0, -1.0], 0.0).unwrap();
    let any = AnyModel::from(lin.clone());
    assert_eq!(any.error_rate(&d).unwrap(), lin.error_rate(&d).unwrap());
    assert_eq!(any.n_outputs(), 1);
    assert!(any.as_linear().is_some());
    let k = AnyModel::Kernel(
        KernelModel::try_new(Kernel::Linear, DenseMatrix::zeros(1, 2), vec![1.0], 0.0).unwrap(),
    );
    let e = k.require_linear("the greedy deletion attack").unwrap_err();
    assert!(e.to_string().contains("greedy deletion attack"), "{e}");
    let json = serde_json::to_string(&k).unwrap();
    assert_eq!(serde_json::from_str::<AnyModel>(&json).unwrap(), k);
}

#[test]
fn model_invariants_are_checked_once_at_construction() {
    assert!(LinearModel::try_new(vec![1.0, f64::NAN], 0.0).is_err());
    assert!(LinearModel::try_new(vec![1.0], f64::INFINITY).is_err());
    assert!(serde_json::from_str::<LinearModel>(r#"{"weights":[1e999],"bias":0.0}"#).is_err());
}
