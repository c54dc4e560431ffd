"""Bulwark: robust linear classification under feature deletion, corruption and
training-set contamination, as scikit-learn estimators on a Rust library.

Every learner of the library's registry is a classifier class here (``bulwark.LP``,
``bulwark.SVM``, ...; see :func:`all_estimators`). Model files are exactly the CLI's
(:func:`load`, ``est.save(path)``).
"""

from __future__ import annotations

import numpy as np

from . import _native, exceptions
from . import attacks, certify, contamination, datasets, metrics
from ._estimators import BulwarkClassifier, all_estimators, estimator_for
from ._checks import expected_failed_checks

__version__ = _native.__version__

for _name, _cls in all_estimators():
    globals()[_cls.__name__] = _cls
del _name, _cls


def _from_model(model):
    """An estimator around a ``_native.Model`` (read from a file or bytes)."""
    cls = estimator_for(model.algorithm)
    hp = model.hyper_parameters
    kwargs = {}
    for p in cls._spec["params"]:
        if p["name"] in hp:
            v = hp[p["name"]]
            if p["kind"] == "feature_values" and v == "given":
                v = list(hp.get("feature_values", []))
            kwargs[p["name"]] = v
    est = cls(**kwargs)
    est._model = model
    est.classes_ = np.array(model.classes)
    est.n_features_in_ = model.n_features
    names = model.feature_names
    if names is not None:
        est.feature_names_in_ = np.array(names, dtype=object)
    est._set_fitted_attributes()
    return est


def load(path):
    """Reads a model file written by ``bulwark train`` or ``est.save`` (``.json`` or ``.bin``)
    and returns the fitted estimator. Its ``classes_`` are the file's class names (strings);
    a model file with a stored scaling (``bulwark train --scale``) applies it before scoring."""
    return _from_model(_native.Model.load(str(path)))


def from_bytes(data):
    """The fitted estimator of a model file's bytes (either encoding)."""
    return _from_model(_native.Model.from_bytes(bytes(data)))


__all__ = [
    "BulwarkClassifier",
    "all_estimators",
    "estimator_for",
    "expected_failed_checks",
    "exceptions",
    "attacks",
    "certify",
    "contamination",
    "datasets",
    "metrics",
    "load",
    "from_bytes",
] + [cls.__name__ for _, cls in all_estimators()]
