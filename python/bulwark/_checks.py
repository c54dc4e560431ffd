"""What scikit-learn's ``check_estimator`` needs to know about the estimators: the checks
each one fails, with the reason, and the parameters the checks run some learners with."""

from __future__ import annotations

_ONE_FEATURE = (
    "the default deletion budget N = 1 needs a total feature value above 1 (N < sum of v_j): "
    "a one-feature data set is refused with the library's message, which names the budget, "
    "not the feature count"
)
_WEIGHTED_SGD = (
    "stochastic gradient steps drawn by example weight: weights of 2 and repeated examples "
    "give the same expected step, not the same iterates"
)

_FAR = (
    "the check's data lie at distance 100 from the origin; a learner without a bias for data "
    "around the origin (KLS 2009) refuses them with a typed error: "
)
_AMU_FAR = _FAR + "the outlier removal along the top eigenvector removes every point"

#: registry name -> {check name: reason}
_EXPECTED: dict[str, dict[str, str]] = {
    "lp": {"check_fit2d_1feature": _ONE_FEATURE},
    "o2b": {"check_fit2d_1feature": _ONE_FEATURE},
    "ken-guru": {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHTED_SGD,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHTED_SGD,
    },
    "rolr": {
        "check_non_transformer_estimators_n_iter": "without outliers to trim (outliers = 0) the "
        "optimum is in closed form: 0 solver iterations, so n_iter_ = 0 (the check asks >= 1)",
    },
    "kls-amu": {
        "check_fit_idempotent": _AMU_FAR,
        "check_fit_check_is_fitted": _AMU_FAR,
        "check_n_features_in": _AMU_FAR,
    },
    "kls-boost": {
        "check_n_features_in": _FAR + "no averaging hypothesis reaches the advantage gamma",
    },
    "m-guru": {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHTED_SGD,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHTED_SGD,
    },
}

#: registry name -> (parameters, reason): the learners whose defaults follow a paper's setting
#: that scikit-learn's small generic data sets are outside of, checked with these instead.
CHECK_PARAMS: dict[str, tuple[dict, str]] = {
    "rolr": (
        {"threshold": "none"},
        "the paper's outlier threshold 4 sigma_x sqrt(log p + log n), sigma_x a MAD, removes "
        "every sample of the checks' tiny or sparse data sets (sigma_x = 0)",
    ),
    "kls-amu": (
        {"no_ball_filter": True, "amu_constant": 30.0},
        "the proof assumes points in the unit ball and drops the others (every point of the "
        "checks' data sets), and its constant c = 10 removes every point of their random-label "
        "data along the top eigenvector",
    ),
    "kls-boost": (
        {"weak": "average", "gamma": 0.01},
        "the filtered weak learner (Thm 2) keeps only points inside its norm filter (none of "
        "the checks' data sets), and no averaging hypothesis reaches the advantage 0.1 on "
        "their random-label data",
    ),
}


def expected_failed_checks(estimator):
    """``{check name: reason}`` of the ``check_estimator`` checks ``estimator`` fails (at most
    three), for ``sklearn.utils.estimator_checks.parametrize_with_checks`` and
    ``check_estimator(expected_failed_checks=...)``."""
    return dict(_EXPECTED.get(getattr(estimator, "_algo", ""), {}))


def checked_instances():
    """One instance per estimator as the test suite checks it: the defaults, or
    ``CHECK_PARAMS`` (with its reason) for the learners listed there."""
    from ._estimators import all_estimators

    return [cls(**CHECK_PARAMS.get(name, ({}, ""))[0]) for name, cls in all_estimators()]
