"""Test-time attacks of the library on a fitted estimator (or a ``Pipeline`` ending in one):
the attacked data, in the space ``X`` was given in.

The deletion attacks set features to 0 in the model's input space (DSX §2) and spend the
budget ``N`` by feature value (the model's training values unless ``values`` is given); a
NaN cell is an already-deleted feature that counts against the budget."""

from __future__ import annotations

from . import _native
from ._util import encode_labels, features_from_native, final_estimator

__all__ = [
    "ATTACKS",
    "attack",
    "greedy_delete",
    "exact_delete",
    "random_delete",
    "greedy_corrupt",
    "uniform_noise",
]

#: The attacks by their CLI names (``bulwark eval --attack``).
ATTACKS = (
    "none",
    "greedy-delete",
    "greedy-corrupt",
    "random-delete",
    "exact-delete",
    "uniform-noise",
)


def attack(estimator, X, y, kind="greedy-delete", budget=1.0, *, seed=0, values=None, node_limit=None):
    """Runs the attack ``kind`` with budget ``budget`` against ``estimator`` on ``(X, y)``
    and returns the attacked ``X`` (same shape; the features of the last step's input when
    ``estimator`` is a Pipeline).

    ``greedy-delete``, ``exact-delete`` and ``greedy-corrupt`` read a binary linear model's
    weights; ``random-delete`` (budget: a feature count) and ``uniform-noise`` (budget: the
    half-width ``a``) apply to any model. ``seed`` makes random attacks reproducible.
    ``node_limit`` bounds the exact search per example."""
    est, X = final_estimator(estimator, X)
    X = est._validate_X(X, reset=False)
    from ._estimators import _x_native

    out, _touched, _incomplete = _native.attack(
        est._model,
        _x_native(X),
        encode_labels(est, y),
        kind,
        float(budget),
        seed=seed,
        values=None if values is None else [float(v) for v in values],
        node_limit=node_limit,
    )
    return features_from_native(out)


def greedy_delete(estimator, X, y, budget=1.0, *, values=None):
    """DSX's greedy deletion: per example, the features whose deletion lowers the margin most
    per unit of value, within the budget."""
    return attack(estimator, X, y, "greedy-delete", budget, values=values)


def exact_delete(estimator, X, y, budget=1.0, *, values=None, node_limit=None):
    """The worst deletion within the budget, by exact search (a knapsack; ``node_limit`` per
    example, the best set found is used when it is hit)."""
    return attack(estimator, X, y, "exact-delete", budget, values=values, node_limit=node_limit)


def random_delete(estimator, X, y, budget=1, *, seed=0):
    """``budget`` features deleted at random per example (reproducible by ``seed``)."""
    return attack(estimator, X, y, "random-delete", budget, seed=seed)


def greedy_corrupt(estimator, X, y, budget=1.0, *, seed=0, values=None):
    """DSX §4's corruption: the greedy deletion's features replaced by draws from the training
    moments (stored with the model)."""
    return attack(estimator, X, y, "greedy-corrupt", budget, seed=seed, values=values)


def uniform_noise(estimator, X, y, a=0.1, *, seed=0):
    """I.i.d. ``U(-a, a)`` noise on every feature (Ginodi Figs. 2.5, 2.7)."""
    return attack(estimator, X, y, "uniform-noise", a, seed=seed)
