"""The library's training-set contamination simulators (KLS 2009 malicious and label noise,
RoLR outliers, outliers aimed at a reference model): each returns the contaminated
``(X, y)`` and the indices of the corrupted examples, reproducibly from ``seed``."""

from __future__ import annotations

import json

import numpy as np
from sklearn.utils.validation import check_X_y

from . import _native
from ._util import features_from_native
from .exceptions import InputError

__all__ = [
    "label_noise",
    "malicious_noise",
    "rolr_outliers",
    "norm_matched_outliers",
    "aimed_outliers",
]


def _run(kind, spec, X, y, seed):
    X, y = check_X_y(X, y, accept_sparse=["csr"], dtype=np.float64, ensure_all_finite="allow-nan")
    classes, idx = np.unique(y, return_inverse=True)
    if len(classes) != 2:
        raise InputError(f"y: {len(classes)} classes; contamination simulators are binary")
    from ._estimators import _x_native

    Xc, yc, corrupted = _native.contaminate(
        kind,
        json.dumps(spec),
        _x_native(X),
        np.ascontiguousarray(idx, dtype=np.int64),
        [str(c) for c in classes],
        seed=seed,
    )
    return features_from_native(Xc), classes[yc], np.asarray(corrupted, dtype=np.int64)


def _vec(v):
    return None if v is None else [float(x) for x in v]


def label_noise(X, y, eta, *, mode="random", target=None, seed=0):
    """Flips labels at rate ``eta``: ``random`` (each independently), or adversarially
    ``far-from-boundary``, ``near-boundary``, ``halfspace`` relative to the direction
    ``target`` (estimated from the data when None). ``y``'s second class is +1."""
    return _run("label-noise", {"eta": float(eta), "mode": mode, "target": _vec(target)}, X, y, seed)


def malicious_noise(X, y, eta, *, adversary="flipped-labels", target=None, seed=0):
    """KLS malicious noise: each example replaced with probability ``eta`` by the adversary's
    point: ``flipped-labels``, ``random-points``, ``{"coordinated-pull": {"angle": a,
    "radius": r}}`` or ``{"evasive-pull": {"threshold": t, "directions": k}}``."""
    spec = {"eta": float(eta), "adversary": adversary, "target": _vec(target)}
    return _run("malicious", spec, X, y, seed)


def rolr_outliers(X, y, n_outliers, beta, *, scale=10.0, seed=0):
    """Feng et al. 2014: ``n_outliers`` points with i.i.d. ``U[-scale, scale]`` features and
    labels ``sign(<-beta, x>)``, appended after the clean examples."""
    spec = {"n_outliers": int(n_outliers), "beta": _vec(beta), "scale": float(scale)}
    return _run("rolr-outliers", spec, X, y, seed)


def norm_matched_outliers(X, y, n_outliers, estimate, *, jitter=0.0, seed=0):
    """Outliers of inlier norm whose correlation with ``estimate`` is the most negative an
    inlier-sized point can have (a trimmed estimator keeps them)."""
    spec = {"n_outliers": int(n_outliers), "estimate": _vec(estimate), "jitter": float(jitter)}
    return _run("norm-matched-outliers", spec, X, y, seed)


def aimed_outliers(X, y, n_outliers, estimate, bias, radius, *, jitter=0.0, seed=0):
    """Outliers of norm ``radius`` aimed against the reference model ``(estimate, bias)``."""
    spec = {
        "n_outliers": int(n_outliers),
        "estimate": _vec(estimate),
        "bias": float(bias),
        "radius": float(radius),
        "jitter": float(jitter),
    }
    return _run("aimed-outliers", spec, X, y, seed)
