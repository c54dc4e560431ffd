"""Scoring under attack, for ``GridSearchCV`` and ``cross_val_score``."""

from __future__ import annotations

import numpy as np

from .attacks import ATTACKS
from .attacks import attack as _attack
from .certify import certify

__all__ = ["make_robust_scorer", "robust_accuracy"]


def robust_accuracy(estimator, X, y, *, attack="greedy-delete", budget=1.0, seed=0, values=None):
    """Accuracy of ``estimator`` (or a Pipeline ending in a bulwark estimator) on ``(X, y)``
    attacked by ``attack`` with ``budget``; ``attack="certified"`` is the certified accuracy
    (1 - the certificate's upper bound: records proven robust)."""
    from ._util import final_estimator

    est, Xt = final_estimator(estimator, X)
    if attack == "certified":
        return 1.0 - certify(est, Xt, y, budget, values=values).upper
    Xa = _attack(est, Xt, y, attack, budget, seed=seed, values=values)
    return float(np.mean(est.predict(Xa) == np.asarray(y)))



class _RobustScorer:
    def __init__(self, attack, budget, seed, values):
        self.attack, self.budget, self.seed, self.values = attack, budget, seed, values

    def __call__(self, estimator, X, y, sample_weight=None):
        return robust_accuracy(
            estimator, X, y, attack=self.attack, budget=self.budget, seed=self.seed, values=self.values
        )

    def __repr__(self):
        return f"make_robust_scorer(attack={self.attack!r}, budget={self.budget!r})"


def make_robust_scorer(attack="greedy-delete", budget=1.0, *, seed=0, values=None):
    """A scorer ``(estimator, X, y) -> accuracy under attack`` (greater is better), usable as
    ``scoring=`` of ``GridSearchCV`` / ``cross_val_score``. The attack runs in the final
    estimator's input space (after a Pipeline's transformers), where deletion means 0.
    ``attack``: one of ``bulwark.attacks.ATTACKS`` or ``"certified"``."""
    if attack not in ATTACKS and attack != "certified":
        from .exceptions import ParameterError

        raise ParameterError(
            f"invalid parameter `attack` = {attack}: one of {', '.join(ATTACKS)}, certified"
        )
    return _RobustScorer(attack, budget, seed, values)
