"""The estimators against the registry and the library's conventions."""

import inspect
import pickle
import threading
import time

import bulwark
import numpy as np
import pytest
import scipy.sparse as sp
from bulwark import _native
from bulwark.exceptions import BulwarkError, ParameterError, ParameterTypeError
from sklearn.base import clone


def test_one_estimator_per_registered_learner_with_its_parameters():
    reg = _native.learners()
    pairs = bulwark.all_estimators()
    assert [n for n, _ in pairs] == [l["name"] for l in reg]
    assert len(reg) >= 13
    for spec, (name, cls) in zip(reg, pairs):
        sig = inspect.signature(cls.__init__)
        names = [p for p in sig.parameters if p != "self"]
        assert names == [p["name"] for p in spec["params"]] + ["threads"], name
        assert getattr(bulwark, cls.__name__) is cls
        assert bulwark.estimator_for(name) is cls
        # the registry's defaults, typed
        for p in spec["params"]:
            d = sig.parameters[p["name"]].default
            if p["default"] is None:
                assert d is None
            elif p["kind"] == "float":
                assert d == float(p["default"]) and isinstance(d, float)
            elif p["kind"] == "count":
                assert d == int(p["default"]) and isinstance(d, int)
    with pytest.raises(ParameterError, match="one of lp"):
        bulwark.estimator_for("nope")


def test_labels_of_any_type_and_score(blobs):
    X, y = blobs
    est = bulwark.LP().fit(X, y)
    assert list(est.classes_) == ["ham", "spam"]
    assert set(est.predict(X)) <= {"ham", "spam"}
    assert est.score(X, y) > 0.95
    d = est.decision_function(X)
    assert d.shape == (len(X),)
    # positive scores predict classes_[1], and the linear model is w.x + b
    np.testing.assert_array_equal(est.predict(X) == "spam", d > 0)
    np.testing.assert_allclose(d, X @ est.coef_[0] + est.intercept_[0], rtol=1e-12)
    assert est.n_features_in_ == 4
    assert est.fit_report_["solver"]


def test_pandas_feature_names(blobs):
    pd = pytest.importorskip("pandas")
    X, y = blobs
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est = bulwark.SVM().fit(df, y)
    assert list(est.feature_names_in_) == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(est.predict(df), est.predict(X))


def test_nan_is_a_deleted_feature_where_the_tags_say_so(blobs):
    X, y = blobs
    Xn = X.copy()
    Xn[::7, 1] = np.nan
    for cls in (bulwark.LP, bulwark.O2B, bulwark.FDROP):
        assert cls().__sklearn_tags__().input_tags.allow_nan
        est = cls().fit(Xn, y)
        # a missing cell scores as that feature deleted (0 without scaling)
        X0 = np.where(np.isnan(Xn), 0.0, Xn)
        np.testing.assert_array_equal(est.decision_function(Xn), est.decision_function(X0))
        assert est.fit_report_["details"]["missing_deleted_cells"] == np.isnan(Xn).sum()
    assert not bulwark.SVM().__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match="NaN"):
        bulwark.SVM().fit(Xn, y)


def test_sparse_input_equals_dense(blobs):
    X, y = blobs
    X = np.where(np.abs(X) < 0.8, 0.0, X)
    for cls in (bulwark.LP, bulwark.SVM, bulwark.LR):
        dense = cls().fit(X, y)
        for fmt in (sp.csr_matrix, sp.csc_matrix):
            est = cls().fit(fmt(X), y)
            np.testing.assert_allclose(est.coef_, dense.coef_, rtol=1e-7, atol=1e-9)
            np.testing.assert_allclose(
                est.decision_function(fmt(X)), dense.decision_function(X), rtol=1e-7, atol=1e-9
            )


def test_multiclass_learners(blobs):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    for cls in (bulwark.SVM, bulwark.MGURU):
        assert cls().__sklearn_tags__().classifier_tags.multi_class
        est = cls().fit(X, y)
        d = est.decision_function(X)
        assert d.shape == (150, 3)
        np.testing.assert_array_equal(est.predict(X), est.classes_[d.argmax(axis=1)])
    assert not bulwark.LP().__sklearn_tags__().classifier_tags.multi_class
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        bulwark.LP().fit(X, y)


def test_predict_proba_only_for_probabilistic_models(blobs):
    X, y = blobs
    est = bulwark.LR().fit(X, y)
    p = est.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[p.argmax(axis=1)], est.predict(X))
    for cls in (bulwark.LP, bulwark.SVM, bulwark.RoLR):
        assert not hasattr(cls(), "predict_proba")


def test_errors_are_typed_with_the_library_message(blobs):
    X, y = blobs
    with pytest.raises(ParameterError, match=r"invalid parameter `C` = -1"):
        bulwark.LP(C=-1.0).fit(X, y)
    with pytest.raises(ParameterTypeError, match="`epochs`"):
        bulwark.O2B(epochs="three").fit(X, y)
    with pytest.raises(TypeError):
        bulwark.O2B(epochs=1.5).fit(X, y)
    with pytest.raises(ValueError, match="`backend`"):
        bulwark.LP(backend="nope").fit(X, y)
    with pytest.raises(ValueError, match="non-negative integer"):
        bulwark.O2B(epochs=-2).fit(X, y)
    lp = bulwark.LP().fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        lp.decision_function(X[:, :3])  # scikit-learn's check
    with pytest.raises(ValueError, match="feature count"):
        lp._model.decision_function(np.ascontiguousarray(X[:, :3]))  # the library's
    with pytest.raises(ValueError, match="example weights are not supported"):
        bulwark.LP()._fit(X, y, np.ones(len(y)))
    with pytest.raises(BulwarkError):
        bulwark.LP(budget=10.0).fit(X, y)  # N >= total feature value
    with pytest.raises(ValueError, match="threads"):
        bulwark.LP(threads=0).fit(X, y)


def test_feature_values_as_an_array(blobs):
    X, y = blobs
    v = [1.0, 2.0, 0.5, 1.0]
    est = bulwark.LP(values=v).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    assert est._model.hyper_parameters["feature_values"] == v
    assert clone(est).get_params()["values"] == v


def test_seeds_and_threads_are_honoured(blobs):
    X, y = blobs
    a = bulwark.O2B(seed=3).fit(X, y).coef_
    b = bulwark.O2B(seed=3).fit(X, y).coef_
    c = bulwark.O2B(seed=4).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    one = bulwark.LP(threads=1).fit(X, y).coef_
    two = bulwark.LP(threads=2).fit(X, y).coef_
    np.testing.assert_array_equal(one, two)


def test_the_gil_is_released_during_a_fit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 60))
    y = (X[:, 0] + 0.5 * rng.normal(size=1500) > 0).astype(int)
    ticks = []
    done = threading.Event()

    def fit():
        bulwark.LP(threads=1).fit(X, y)
        done.set()

    t = threading.Thread(target=fit)
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    # the main thread kept running Python while the fit ran: a GIL held by the fit would
    # allow a tick or two (at its start and end); a loaded machine still allows many
    assert elapsed > 0.05, elapsed
    assert len(ticks) >= max(10, 0.1 * elapsed / 0.001), (len(ticks), elapsed)


def test_the_native_module_refuses_malformed_input(blobs):
    X, y = blobs
    model = bulwark.LP().fit(X, y)._model
    data, indices = np.array([1.0, 2.0]), np.array([0, 1], dtype=np.int64)
    for indptr in ([0, 2, 1], [1, 1, 2], [0, 1, 3]):
        bad = (data, indices, np.array(indptr, dtype=np.int64), 2, 4)
        with pytest.raises(ValueError, match="inconsistent CSR arrays"):
            model.decision_function(bad)
    with pytest.raises(ValueError, match="column index 7"):
        model.decision_function((data, np.array([0, 7], dtype=np.int64), np.array([0, 1, 2], dtype=np.int64), 2, 4))
    with pytest.raises(TypeError):
        model.decision_function([[1.0, 2.0]])
    with pytest.raises(ValueError, match="class indices"):
        _native.fit("lp", X, np.full(len(y), 5, dtype=np.int64), ["a", "b"], {})
    with pytest.raises(ValueError, match="non-finite|NaN"):
        Xn = X.copy()
        Xn[0, 0] = np.inf
        _native.fit("lp", Xn, np.zeros(len(y), dtype=np.int64) + (np.arange(len(y)) % 2), ["a", "b"], {})
