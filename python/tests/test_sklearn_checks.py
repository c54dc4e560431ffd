"""scikit-learn's estimator checks for every estimator, with at most three expected failures
each (``bulwark.expected_failed_checks``, every one with its reason)."""

import bulwark
from bulwark._checks import CHECK_PARAMS, checked_instances
from sklearn.utils.estimator_checks import parametrize_with_checks


def test_every_estimator_is_checked_with_few_expected_failures():
    instances = checked_instances()
    assert [e._algo for e in instances] == [n for n, _ in bulwark.all_estimators()]
    for est in instances:
        failing = bulwark.expected_failed_checks(est)
        assert len(failing) <= 3, (est, failing)
        assert all(isinstance(r, str) and len(r) > 20 for r in failing.values())
    # the checking parameters are parameters of the estimator, each with a reason
    for name, (params, reason) in CHECK_PARAMS.items():
        assert set(params) <= set(bulwark.estimator_for(name)().get_params()), name
        assert len(reason) > 20


@parametrize_with_checks(checked_instances(), expected_failed_checks=bulwark.expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
