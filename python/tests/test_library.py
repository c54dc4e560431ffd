"""Attacks, certificates, contamination, robust scoring and data sets."""

import bulwark
import numpy as np
import pytest
import scipy.sparse as sp
from bulwark import attacks, contamination, datasets
from bulwark.certify import certify
from bulwark.exceptions import NotFoundError, ParameterError, UnknownDatasetError
from bulwark.metrics import make_robust_scorer, robust_accuracy
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def test_greedy_and_exact_deletion(blobs):
    X, y = blobs
    est = bulwark.SVM().fit(X, y)
    w = est.coef_[0]
    Xa = attacks.greedy_delete(est, X, y, budget=1)
    assert Xa.shape == X.shape
    # one feature deleted (set to 0) per example at most, the one hurting the margin most
    changed = (Xa != X).sum(axis=1)
    assert changed.max() == 1
    s = np.where(y == est.classes_[1], 1.0, -1.0)
    contrib = s[:, None] * X * w
    i = int(np.argmax(changed))
    assert contrib[i, np.argmax(Xa[i] != X[i])] == contrib[i].max()
    # the exact attack is at least as strong, and both within a certificate's bounds
    acc = lambda Z: np.mean(est.predict(Z) == y)
    Xe = attacks.exact_delete(est, X, y, budget=2)
    assert acc(Xe) <= acc(attacks.greedy_delete(est, X, y, budget=2)) + 1e-12
    c = certify(est, X, y, budget=2)
    assert c.exact is not None and c.lower == c.upper == c.exact
    assert abs((1 - acc(Xe)) - c.exact) < 1e-12
    assert c.per_example["verdict"].shape == (len(y),)
    assert set(c.per_example["verdict"]) <= {"broken", "robust", "undecided"}


def test_random_attacks_are_reproducible_and_model_free(blobs):
    X, y = blobs
    est = bulwark.Averaging().fit(X, y)
    a = attacks.random_delete(est, X, y, 2, seed=1)
    assert np.array_equal(a, attacks.random_delete(est, X, y, 2, seed=1))
    assert not np.array_equal(a, attacks.random_delete(est, X, y, 2, seed=2))
    assert ((a == 0) & (X != 0)).sum(axis=1).max() == 2
    u = attacks.uniform_noise(est, X, y, 0.5, seed=3)
    assert np.abs(u - X).max() <= 0.5
    kern = bulwark.SVM(kernel="rbf").fit(X, y)
    with pytest.raises(ParameterError, match="needs no weights"):
        attacks.greedy_delete(kern, X, y, 1)


def test_attacks_on_a_cli_model_with_scaling_return_the_callers_space(tmp_path, blobs):
    X, y = blobs
    pipe = make_pipeline(StandardScaler(), bulwark.LP()).fit(X, y)
    Xa = attacks.greedy_delete(pipe, X, y, budget=1)  # in the scaled space (the LP's input)
    Xt = pipe[0].transform(X)
    assert ((Xa != Xt).sum(axis=1) <= 1).all()
    assert ((Xa == 0) | (Xa == Xt)).all()


def test_sparse_attack_and_certificate(blobs):
    X, y = blobs
    X = np.where(np.abs(X) < 0.5, 0.0, X)
    est = bulwark.LP().fit(X, y)
    dense = attacks.greedy_delete(est, X, y, 1)
    sparse = attacks.greedy_delete(est, sp.csr_matrix(X), y, 1)
    assert sp.issparse(sparse)
    np.testing.assert_array_equal(sparse.toarray(), dense)
    assert certify(est, sp.csr_matrix(X), y, 1).upper == certify(est, X, y, 1).upper


def test_robust_scorer_in_grid_search(blobs):
    X, y = blobs
    scorer = make_robust_scorer(attack="greedy-delete", budget=1)
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), bulwark.LP()),
        {"lp__C": [0.1, 1.0]},
        scoring=scorer,
        cv=3,
        error_score="raise",
    )
    grid.fit(X, y)
    assert grid.best_params_["lp__C"] in (0.1, 1.0)
    assert 0.5 < grid.best_score_ <= 1.0
    clean = cross_val_score(make_pipeline(StandardScaler(), bulwark.LP()), X, y, cv=3).mean()
    robust = cross_val_score(make_pipeline(StandardScaler(), bulwark.LP()), X, y, cv=3, scoring=scorer).mean()
    assert robust <= clean + 1e-12
    certified = robust_accuracy(grid.best_estimator_, X, y, attack="certified", budget=1)
    assert certified <= robust_accuracy(grid.best_estimator_, X, y, attack="exact-delete", budget=1) + 1e-12
    with pytest.raises(ParameterError):
        make_robust_scorer(attack="nope")


def test_contamination(blobs):
    X, y = blobs
    Xc, yc, bad = contamination.label_noise(X, y, 0.2, seed=4)
    assert Xc.shape == X.shape and set(yc) <= set(y)
    np.testing.assert_array_equal(np.flatnonzero(yc != y), np.sort(bad))
    again = contamination.label_noise(X, y, 0.2, seed=4)
    np.testing.assert_array_equal(again[1], yc)
    Xo, yo, out = contamination.rolr_outliers(X, y, 10, beta=np.ones(4), seed=1)
    assert Xo.shape == (len(X) + 10, 4)
    assert list(out) == list(range(len(X), len(X) + 10))
    assert np.abs(Xo[len(X):]).max() <= 10
    Xm, ym, _ = contamination.malicious_noise(X, y, 0.1, adversary="random-points", seed=2)
    assert Xm.shape == X.shape
    with pytest.raises(ValueError, match="adversary"):
        contamination.malicious_noise(X, y, 0.1, adversary="nope")


def test_datasets_load(tmp_path):
    usps = datasets.load("usps")  # the repository's data folder (or $BULWARK_DATA)
    assert usps.data.shape == (11000, 256) and len(usps.target_names) == 10
    wdbc = datasets.load("wdbc")
    assert wdbc.data.shape[0] == len(wdbc.target) == 569
    assert len(wdbc.target_names) == 2
    est = bulwark.LP().fit(StandardScaler().fit_transform(wdbc.data), wdbc.target)
    assert est.classes_.tolist() == sorted(wdbc.target_names.tolist())
    p = tmp_path / "d.csv"
    p.write_text("label,a,b\nx,1,2\ny,3,\nx,5,6\n")
    d = datasets.load(p)
    assert list(d.feature_names) == ["a", "b"] and np.isnan(d.data[1, 1])
    with pytest.raises((UnknownDatasetError, NotFoundError)):
        datasets.load("no-such-data-set")
