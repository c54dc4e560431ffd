"""One scikit-learn classifier per learner of the library's registry, generated from the
registry's name, parameter list and defaults (``bulwark._native.learners()``)."""

from __future__ import annotations

import json
import keyword
import re

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _native
from .exceptions import BulwarkError

__all__ = ["BulwarkClassifier", "all_estimators", "estimator_for", "LEARNERS"]

#: The learners whose score is a log-odds, so ``predict_proba`` is ``expit(decision_function)``.
PROBABILISTIC = {"logreg": "logistic regression: the score is the log-odds of class 1"}

#: The registry, as the compiled module reports it (name, title, about, parameters, …).
LEARNERS = _native.learners()


def _x_native(X):
    """``X`` (validated: float64 array or CSR/CSC matrix) as ``_native`` takes it: the array
    itself (read in place), or the CSR arrays in canonical form (sorted, no duplicates)."""
    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        rows, cols = X.shape
        return (
            np.ascontiguousarray(X.data, dtype=np.float64),
            X.indices.astype(np.int64),
            X.indptr.astype(np.int64),
            rows,
            cols,
        )
    return X


class BulwarkClassifier(ClassifierMixin, BaseEstimator):
    """Base of the generated classifiers: a registered learner of the Rust library behind the
    scikit-learn API. Subclasses set ``_algo`` (the registry name) and ``_spec``."""

    _algo: str = ""
    _spec: dict = {}

    # ------------------------------------------------------------------ parameters
    def _learner_params(self):
        return {p["name"]: getattr(self, p["name"]) for p in self._spec["params"]}

    def _allow_nan(self):
        return bool(self._spec["uses_budget"])

    def _validate_X(self, X, reset):
        return validate_data(
            self,
            X,
            reset=reset,
            accept_sparse=["csr", "csc"],
            dtype=np.float64,
            ensure_all_finite="allow-nan" if self._allow_nan() else True,
        )

    # ------------------------------------------------------------------ fit
    def _fit(self, X, y, sample_weight):
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=["csr", "csc"],
            dtype=np.float64,
            ensure_all_finite="allow-nan" if self._allow_nan() else True,
        )
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        names = getattr(self, "feature_names_in_", None)
        self._model = _native.fit(
            self._algo,
            _x_native(X),
            np.ascontiguousarray(y_idx, dtype=np.int64),
            [str(c) for c in self.classes_],
            self._learner_params(),
            sample_weight=sample_weight,
            feature_names=None if names is None else [str(n) for n in names],
            threads=self.threads,
            allow_missing=self._allow_nan(),
        )
        self._set_fitted_attributes()
        return self

    def _set_fitted_attributes(self):
        linear = self._model.linear
        if linear is not None:
            w, b = linear
            self.coef_ = np.asarray(w, dtype=np.float64).reshape(1, -1)
            self.intercept_ = np.array([b], dtype=np.float64)
        self.fit_report_ = json.loads(self._model.to_json())["report"]
        # what model files do not store, known right after a fit (as `bulwark train --json`)
        for key in ("normal_equations", "stopped"):
            value = getattr(self._model, key)
            if value is not None:
                self.fit_report_[key] = value
        if any(p["name"] == "max_iter" for p in self._spec["params"]):
            # iterations of the solver that answered (summed over attempts), as sklearn's n_iter_
            self.n_iter_ = int(self.fit_report_.get("iterations") or 0)

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Scores of the model: shape ``(n_samples,)`` for a binary model (positive means
        ``classes_[1]``), ``(n_samples, n_classes)`` for a multiclass one. NaN cells are
        deleted features (0 in the model's input space) for the learners that allow them."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        d = self._model.decision_function(_x_native(X))
        if d.ndim == 2 and d.shape[1] == 2:
            # a multiclass model of two classes: the margin of class 1 (> 0 iff it predicts it)
            d = d[:, 1] - d[:, 0]
        return d

    def predict(self, X):
        """Predicted labels (from ``classes_``); a binary score of exactly 0 predicts
        ``classes_[0]`` (DSX eq. (1): a zero score is a mistake)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self.classes_[self._model.predict_index(_x_native(X))]

    def _probabilistic(self):
        return self._algo in PROBABILISTIC

    @available_if(_probabilistic)
    def predict_proba(self, X):
        """Class probabilities ``[1 - p, p]`` with ``p = expit(decision_function(X))``."""
        from scipy.special import expit

        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    @available_if(_probabilistic)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        from scipy.special import log_expit

        d = self.decision_function(X)
        return np.column_stack([log_expit(-d), log_expit(d)])

    # ------------------------------------------------------------------ model files
    def save(self, path):
        """Writes the model file exactly as ``bulwark train`` does: ``.json`` (text) or
        ``.bin`` (binary), atomically."""
        check_is_fitted(self)
        self._model.save(str(path))

    def to_bytes(self, encoding="bin"):
        """The model file's bytes (``"json"`` or ``"bin"``)."""
        check_is_fitted(self)
        return self._model.to_bytes(encoding)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = super().__getstate__()
        if "_model" in state:
            state = dict(state)
            state["_model"] = state["_model"].to_bytes("bin")
        return state

    def __setstate__(self, state):
        if isinstance(state.get("_model"), bytes):
            state = dict(state)
            state["_model"] = _native.Model.from_bytes(state["_model"], "<pickle>")
        super().__setstate__(state)

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self._allow_nan()
        tags.classifier_tags.multi_class = bool(self._spec["multiclass"])
        return tags

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_model")


def _class_name(title):
    name = re.sub(r"[^0-9A-Za-z]+", "", title)
    name = name[:1].upper() + name[1:]
    if not name or name[0].isdigit() or keyword.iskeyword(name):
        name = "Bulwark" + name
    return name


def _default(p):
    d, kind = p["default"], p["kind"]
    if d is None:
        return None
    if kind == "float":
        return float(d)
    if kind == "count":
        return int(d)
    if kind == "switch":
        on = p["switch_value"]
        return {"": on, "true": on, "false": not on}[d]
    return d


_TYPES = {
    "float": "float",
    "count": "int",
    "text": "str",
    "switch": "bool",
    "feature_values": "str or array-like of shape (n_features,)",
}


def _docstring(spec):
    lines = [
        f"{spec['title']}: {spec['about']}.",
        "",
        f"The registered learner ``{spec['name']}`` of the Bulwark library (the CLI's "
        f"``bulwark train --algo {spec['name']}``).",
        "",
        "Parameters",
        "----------",
    ]
    for p in spec["params"]:
        d = _default(p)
        dflt = "None (derived by the learner, see below)" if d is None else repr(d)
        lines.append(f"{p['name']} : {_TYPES[p['kind']]}, default={dflt}")
        lines.append(f"    {p['help']}")
    lines += [
        "threads : int, default=None",
        "    Worker threads of the solvers (the CLI's ``--threads``); None: every core, or",
        "    ``RAYON_NUM_THREADS``. Results do not depend on it.",
        "",
        "Attributes",
        "----------",
        "classes_ : ndarray of shape (n_classes,)",
        "n_features_in_ : int",
        "feature_names_in_ : ndarray of shape (n_features_in_,)",
        "    Only when ``X`` had string column names (pandas).",
        "coef_ : ndarray of shape (1, n_features_in_)",
        "    Binary linear models only.",
        "intercept_ : ndarray of shape (1,)",
        "    Binary linear models only.",
        "fit_report_ : dict",
        "    What the solver reported (solver, convergence, objective, seconds, ...; after a fit",
        "    also ``normal_equations`` and ``stopped`` where the solver has them).",
    ]
    return "\n".join(lines)


def _probe_weights(spec):
    """Whether the learner honours example weights at its default parameters: a fit of four
    weighted points that the library refuses (with a typed error) while it fits them
    unweighted means it does not."""
    X = 0.3 * np.array([[1.0, 0.5], [2.0, -0.5], [-1.0, 0.5], [-2.0, -0.5]])
    y = np.array([1, 1, 0, 0], dtype=np.int64)
    w = np.array([1.0, 2.0, 1.0, 1.0])
    try:
        _native.fit(spec["name"], X, y, ["0", "1"], {}, sample_weight=w, threads=1)
        return True
    except BulwarkError:
        _native.fit(spec["name"], X, y, ["0", "1"], {}, threads=1)
        return False


def _make_class(spec):
    params = [(p["name"], _default(p)) for p in spec["params"]] + [("threads", None)]
    for n, _ in params:
        if not n.isidentifier() or keyword.iskeyword(n):
            raise RuntimeError(f"registry parameter {n!r} of {spec['name']} is not a Python name")
    args = ", ".join(f"{n}={d!r}" for n, d in params)
    body = "".join(f"    self.{n} = {n}\n" for n, _ in params)
    src = f"def __init__(self, *, {args}):\n{body}"
    weights = _probe_weights(spec)
    if weights:
        src += (
            "def fit(self, X, y, sample_weight=None):\n"
            "    return self._fit(X, y, sample_weight)\n"
        )
    else:
        src += "def fit(self, X, y):\n    return self._fit(X, y, None)\n"
    ns = {}
    exec(compile(src, f"<bulwark estimator {spec['name']}>", "exec"), ns)
    ns["fit"].__doc__ = (
        "Trains the learner on ``X`` (array, pandas frame, scipy.sparse CSR/CSC) and labels "
        "``y`` of any type"
        + (", with optional example weights ``sample_weight``" if weights else "")
        + ". The GIL is released during the fit; Ctrl-C stops it (``KeyboardInterrupt``)."
        + ("" if weights else " This learner does not honour example weights.")
    )
    name = _class_name(spec["title"])
    cls = type(
        name,
        (BulwarkClassifier,),
        {
            "__init__": ns["__init__"],
            "fit": ns["fit"],
            "__doc__": _docstring(spec),
            "__module__": "bulwark",
            "__qualname__": name,
            "_algo": spec["name"],
            "_spec": spec,
            "_accepts_weights": weights,
        },
    )
    return cls


_CLASSES = [(spec["name"], _make_class(spec)) for spec in LEARNERS]
_BY_NAME = dict(_CLASSES)


def all_estimators():
    """Every estimator: ``(registry name, class)`` pairs, in the registry's order."""
    return list(_CLASSES)


def estimator_for(name):
    """The estimator class of the registered learner ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        from .exceptions import ParameterError

        raise ParameterError(
            f"invalid parameter `algo` = {name}: one of {', '.join(_BY_NAME)}"
        ) from None
