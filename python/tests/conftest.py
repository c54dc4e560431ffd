import warnings

import numpy as np
import pytest


@pytest.fixture
def blobs():
    """A separable binary problem with string labels."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(1.5, 1.0, (60, 4)), rng.normal(-1.5, 1.0, (60, 4))])
    y = np.array(["spam"] * 60 + ["ham"] * 60)
    return X, y


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield
