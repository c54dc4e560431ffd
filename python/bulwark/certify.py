"""Deletion certificates of a binary linear model: per record, whether some deletion within
the budget breaks it (lower bound), none can (robust), or the search was cut short
(undecided); in total, the lower, upper and (when every record is decided) exact robust
error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from . import _native
from ._util import encode_labels, final_estimator

__all__ = ["Certificate", "certify"]


@dataclass(frozen=True)
class Certificate:
    """The certified robust error at one budget (fractions of the records)."""

    budget: float
    n_examples: int
    clean_error: float
    #: error under the greedy deletion (a lower bound)
    greedy_lower: float
    #: broken by the strongest deletion found: the lower bound of the robust error
    lower: float
    #: not proven robust (broken or undecided): the upper bound
    upper: float
    #: breakable by the fractional relaxation alone (a weaker upper bound)
    relaxation_upper: float
    #: the exact robust error, when every record was decided (else None)
    exact: float | None
    n_broken: int
    n_robust: int
    n_undecided: int
    node_limit: int
    missing_records: int
    #: per record: margin, budget, greedy_damage, best_damage, relaxation_damage (arrays),
    #: verdict and decided_by (arrays of str: broken / robust / undecided)
    per_example: dict = field(repr=False)


def certify(estimator, X, y, budget=1.0, *, values=None, exact=True, node_limit=None):
    """Certifies ``estimator`` (binary linear, or a Pipeline ending in one) on ``(X, y)``
    against every deletion of total value at most ``budget`` (values: the model's training
    values unless given). NaN cells are deleted already and spend the budget."""
    est, X = final_estimator(estimator, X)
    X = est._validate_X(X, reset=False)
    from ._estimators import _x_native

    doc = json.loads(
        _native.certify(
            est._model,
            _x_native(X),
            encode_labels(est, y),
            float(budget),
            values=None if values is None else [float(v) for v in values],
            exact=exact,
            node_limit=node_limit,
        )
    )
    rows = doc.pop("per_example")
    per = {}
    for key in ("margin", "budget", "greedy_damage", "best_damage", "relaxation_damage"):
        per[key] = np.array([r[key] for r in rows], dtype=np.float64)
    for key in ("verdict", "decided_by"):
        per[key] = np.array([r[key] for r in rows], dtype=object)
    return Certificate(per_example=per, **doc)
