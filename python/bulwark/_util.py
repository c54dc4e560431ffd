"""Shared helpers of the pure-Python modules."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .exceptions import InputError, ParameterError


def final_estimator(estimator, X):
    """The Bulwark estimator at the end of ``estimator`` (itself, or the last step of a
    ``Pipeline``) and ``X`` transformed by the steps before it: the model's input space, where
    the adversary deletes (sets to 0) features."""
    from sklearn.pipeline import Pipeline

    from ._estimators import BulwarkClassifier

    if isinstance(estimator, Pipeline):
        if len(estimator.steps) > 1:
            X = estimator[:-1].transform(X)
        estimator = estimator.steps[-1][1]
    if not isinstance(estimator, BulwarkClassifier):
        raise ParameterError(
            f"invalid parameter `estimator` = {type(estimator).__name__}: a bulwark estimator "
            "(or a Pipeline ending in one)"
        )
    check_is_fitted(estimator)
    return estimator, X


def encode_labels(estimator, y):
    """``y`` as indices into ``estimator.classes_`` (a label it was not trained on is an
    error naming it)."""
    y = np.asarray(y)
    index = {c: k for k, c in enumerate(estimator.classes_.tolist())}
    try:
        return np.fromiter((index[v] for v in y.tolist()), dtype=np.int64, count=len(y))
    except KeyError as e:
        raise InputError(
            f"y: label {e.args[0]!r} is not a class of the model ({list(index)})"
        ) from None


def features_from_native(f):
    """The features ``_native`` returns: an array, or a CSR matrix from its arrays."""
    if isinstance(f, tuple):
        data, indices, indptr, rows, cols = f
        return sp.csr_matrix((data, indices, indptr), shape=(rows, cols))
    return f
