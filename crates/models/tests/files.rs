//! Model files: both encodings carry the same model, damage is a typed error naming the file,
//! files written by bulwark 0.1.0 (format version 2) still load and predict as they did.

use std::path::{Path, PathBuf};

use bulwark_core::{
    AnyModel, Classifier, DecisionFunction, DenseMatrix, Ensemble, FitReport, HyperParams, Kernel,
    KernelModel, LinearModel, MulticlassLinearModel, ParamValue, Scores,
};
use bulwark_data::{BinaryTask, binary_task, load};
use bulwark_models::file::ModelKind;
use bulwark_models::{Encoding, FORMAT_VERSION, ModelFile, Training, fingerprint};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn training(n: usize, classes: usize) -> Training {
    Training {
        data: "x.csv".into(),
        task: "x".into(),
        pair: None,
        positive: None,
        rows: 4,
        feature_names: (0..n).map(|j| format!("f{j}")).collect(),
        classes: (0..classes).map(|k| format!("c{k}")).collect(),
        scale: None,
        training_error: 0.25,
        fingerprint: "sha256:00".into(),
    }
}

fn report() -> FitReport {
    let mut r = FitReport::new("lp", "dsx-ipm");
    r.objective = Some(0.1 + 0.2);
    r.iterations = Some(7);
    r.converged = true;
    r.tolerance = Some(1e-8);
    r.reached = Some(3e-9);
    r.fallbacks = vec!["dsx-ipm: numerical_error: test".into()];
    r.details.insert("gap".into(), 1e-9);
    r.details.insert("bad".into(), f64::NAN);
    r
}

fn params() -> HyperParams {
    HyperParams::new()
        .with("C", ParamValue::Float(1.0))
        .with("budget", ParamValue::Float(2.0))
        .with("values", ParamValue::Text("uniform".into()))
        .with("feature_values", ParamValue::Floats(vec![1.0; 3]))
        .with("chunks", ParamValue::Count(3))
        .with("intercept", ParamValue::Bool(false))
}

fn models() -> Vec<AnyModel> {
    let sv = DenseMatrix::from_rows(&[vec![1.0, 0.5, -1.0], vec![0.0, 2.0, 1.0]]).unwrap();
    vec![
        AnyModel::Linear(LinearModel::try_new(vec![0.5, -1.25, 1e-300], 0.1).unwrap()),
        AnyModel::MulticlassLinear(
            MulticlassLinearModel::try_new(
                DenseMatrix::from_rows(&[
                    vec![1.0, 0.0, 0.0],
                    vec![0.0, 1.0, 0.0],
                    vec![0.0, 0.0, 1.0],
                ])
                .unwrap(),
                vec![0.0, 0.1, 0.2],
            )
            .unwrap(),
        ),
        AnyModel::Kernel(
            KernelModel::try_new(Kernel::Rbf { gamma: 0.5 }, sv, vec![1.0, -0.5], 0.25).unwrap(),
        ),
        AnyModel::Ensemble(
            Ensemble::try_new(
                vec![
                    LinearModel::try_new(vec![1.0, 0.0, 0.0], 0.0).unwrap(),
                    LinearModel::try_new(vec![0.0, -1.0, 0.5], 0.1).unwrap(),
                ],
                vec![0.7, 0.3],
            )
            .unwrap(),
        ),
    ]
}

#[test]
fn json_and_binary_carry_the_same_model_of_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    for (k, model) in models().into_iter().enumerate() {
        let file = ModelFile::new(
            "lp",
            &model,
            None,
            params(),
            training(3, model.n_classes()),
            report(),
        );
        let json = dir.path().join(format!("m{k}.json"));
        let bin = dir.path().join(format!("m{k}.bin"));
        file.write(&json).unwrap();
        file.write(&bin).unwrap();
        let (a, ma) = ModelFile::read(&json).unwrap();
        let (b, mb) = ModelFile::read(&bin).unwrap();
        assert_eq!(a, b, "kind {k}");
        assert_eq!(ma, model);
        assert_eq!(mb, model);
        assert_eq!(a.format_version, FORMAT_VERSION);
        assert!(!a.report.details.contains_key("bad"));
        assert_eq!(a.report.solver, "dsx-ipm");
        assert_eq!(a.report.fallbacks.len(), 1);
        assert_eq!(a.hyper_parameters, params());
        let x = DenseMatrix::from_rows(&[vec![0.3, -0.7, 1.1]])
            .unwrap()
            .into();
        assert_eq!(ma.scores(&x).unwrap(), model.scores(&x).unwrap());
        let jlen = std::fs::metadata(&json).unwrap().len();
        let blen = std::fs::metadata(&bin).unwrap().len();
        assert!(blen < jlen, "{blen} vs {jlen}");
    }
    // linear models keep the top-level weights and bias in JSON
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("m0.json")).unwrap()).unwrap();
    assert_eq!(v["weights"][1], -1.25);
    assert_eq!(v["bias"], 0.1);
    assert_eq!(v["hyper_parameters"]["C"], 1.0);
    assert_eq!(v["model"], "linear-binary");
    assert_eq!(
        ModelFile::read(&dir.path().join("m0.json"))
            .unwrap()
            .1
            .as_linear()
            .unwrap()
            .weights()[2]
            .to_bits(),
        1e-300f64.to_bits()
    );
}

#[test]
fn binary_damage_is_a_typed_error_naming_the_file() {
    let model = &models()[0];
    let bin = ModelFile::new("lp", model, None, params(), training(3, 2), report())
        .encode(Encoding::Binary)
        .unwrap();
    let p = Path::new("m.bin");
    for cut in [0, 5, 12, bin.len() / 2, bin.len() - 1] {
        let e = ModelFile::decode(&bin[..cut], p).unwrap_err().to_string();
        assert!(e.starts_with("m.bin"), "{e}");
        assert!(e.contains("truncated"), "{cut}: {e}");
    }
    let mut v = bin.clone();
    v[8..12].copy_from_slice(&999u32.to_le_bytes());
    let e = ModelFile::decode(&v, p).unwrap_err().to_string();
    assert!(e.contains("version 999 is not supported"), "{e}");
    let mut v = bin.clone();
    v[8..12].copy_from_slice(&1u32.to_le_bytes());
    let e = ModelFile::decode(&v, p).unwrap_err().to_string();
    assert!(e.contains("retrain the model"), "{e}");
    let mut v = bin;
    v.push(0);
    let e = ModelFile::decode(&v, p).unwrap_err().to_string();
    assert!(e.contains("1 unexpected bytes"), "{e}");
}

#[test]
fn inconsistent_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = &models()[0];
    let mut f = ModelFile::new("lp", model, None, params(), training(3, 2), report());
    f.algorithm = "nope".into();
    let p = dir.path().join("a.json");
    f.write(&p).unwrap();
    let e = ModelFile::read(&p).unwrap_err().to_string();
    assert!(e.contains("unknown algorithm `nope`"), "{e}");
    let mut f = ModelFile::new("lp", model, None, params(), training(3, 2), report());
    f.training.classes.pop();
    f.write(&p).unwrap();
    let e = ModelFile::read(&p).unwrap_err().to_string();
    assert!(e.contains("class names"), "{e}");
    let mut f = ModelFile::new("lp", model, None, params(), training(3, 2), report());
    f.hyper_parameters
        .set("feature_values", ParamValue::Floats(vec![1.0]));
    f.write(&p).unwrap();
    let e = ModelFile::read(&p).unwrap_err().to_string();
    assert!(e.contains("feature_values has 1 entries"), "{e}");
    let mut f = ModelFile::new("lp", model, None, params(), training(3, 2), report());
    f.weights[0] = f64::MAX;
    f.bias = f64::INFINITY;
    f.write(&dir.path().join("b.bin")).unwrap();
    assert!(ModelFile::read(&dir.path().join("b.bin")).is_err());
    assert!(
        Encoding::for_output(Path::new("m.txt"))
            .unwrap_err()
            .to_string()
            .contains("not .txt")
    );
    assert_eq!(
        Encoding::for_output(Path::new("a/m.json")).unwrap(),
        Encoding::Json
    );
}

/// The predictions file bulwark 0.1.0 wrote beside each fixture: `index,score,prediction,label`.
fn old_scores(name: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn version_2_files_of_the_previous_release_load_and_predict_the_same() {
    let (raw, _) = load("wdbc", None).unwrap();
    let task = binary_task(&raw, &BinaryTask::Natural).unwrap();
    for (name, predictions, algorithm) in [
        ("v2-lp.json", Some("v2-lp.predictions.csv"), "lp"),
        ("v2-lp.bin", Some("v2-lp.predictions.csv"), "lp"),
        ("v2-fdrop.bin", Some("v2-fdrop.predictions.csv"), "fdrop"),
        ("v2-logreg.json", None, "logreg"),
    ] {
        let (file, model) = ModelFile::read(&fixture(name)).unwrap();
        assert_eq!(file.format_version, 2, "{name}");
        assert_eq!(file.algorithm, algorithm);
        assert_eq!(file.model, ModelKind::LinearBinary);
        assert_eq!(file.training.fingerprint, fingerprint(&task), "{name}");
        let model = model.as_linear().unwrap().clone();
        if let Some(p) = predictions {
            let data = match &file.scaler {
                Some(s) => s.transform(&task).unwrap(),
                None => task.clone(),
            };
            let old = old_scores(p);
            assert_eq!(old.len(), data.len());
            for (i, s) in old.iter().enumerate() {
                let now = model.decision(data.row(i));
                assert!(
                    (now - s).abs() <= 1e-12 * (1.0 + s.abs()),
                    "{name} row {i}: {now} vs {s}"
                );
            }
        }
    }
    // the version-2 hyper-parameters arrive under the registry's names
    let (lp, _) = ModelFile::read(&fixture("v2-lp.json")).unwrap();
    assert_eq!(lp.hyper_parameters.float("budget").unwrap(), 2.0);
    assert_eq!(lp.hyper_parameters.text("values").unwrap(), "mi");
    assert_eq!(lp.feature_values().unwrap().len(), 30);
    let (fd, _) = ModelFile::read(&fixture("v2-fdrop.bin")).unwrap();
    assert_eq!(fd.hyper_parameters.count("k").unwrap(), 2);
    let (lr, _) = ModelFile::read(&fixture("v2-logreg.json")).unwrap();
    assert!(!lr.hyper_parameters.flag("intercept").unwrap());
    // and a version-2 file converts to the current version unchanged in substance
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lp3.bin");
    lp.write(&out).unwrap();
    let (again, _) = ModelFile::read(&out).unwrap();
    assert_eq!(again.weights, lp.weights);
}

/// A model trained on data without names of their own stores none (the defaults `x1, …, xn`
/// are read back), in both encodings.
#[test]
fn default_feature_names_are_stored_as_none() {
    let dir = tempfile::tempdir().unwrap();
    let model = AnyModel::Linear(LinearModel::try_new(vec![1.0, -1.0, 0.5], 0.0).unwrap());
    let mut t = training(3, 2);
    t.feature_names = bulwark_core::FeatureNames::Default(3).stored();
    assert!(t.feature_names.is_empty());
    let file = ModelFile::new("lp", &model, None, params(), t, report());
    for name in ["m.json", "m.bin"] {
        let path = dir.path().join(name);
        file.write(&path).unwrap();
        let (back, _) = ModelFile::read(&path).unwrap();
        assert_eq!(back.feature_names().to_vec(), ["x1", "x2", "x3"]);
    }
    // a non-empty list still has to have one name per feature
    let mut short = file.clone();
    short.training.feature_names = vec!["a".into()];
    let e = short.validate(Path::new("s.json")).unwrap_err().to_string();
    assert!(e.contains("training.feature_names has 1 entries"), "{e}");
}
