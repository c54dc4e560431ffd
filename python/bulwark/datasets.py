"""The library's data sets and data files, loaded as the CLI loads them."""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from . import _native
from ._util import features_from_native

__all__ = ["load"]


def load(name, *, data_dir=None):
    """Loads a built-in data set (``"wdbc"``, ``"usps"``, ...: the CLI's ``--data`` names,
    read from ``data_dir``, else ``$BULWARK_DATA``, else the repository's data folder; some
    are embedded) or a CSV / LIBSVM / IDX file. Returns a ``Bunch`` with ``data`` (array, or
    CSR for sparse data; missing cells NaN), ``target`` (class names), ``target_names`` and
    ``feature_names`` (None when the data have none)."""
    X, idx, classes, names = _native.load_dataset(str(name), None if data_dir is None else str(data_dir))
    classes = np.array(classes)
    return Bunch(
        data=features_from_native(X),
        target=classes[idx],
        target_names=classes,
        feature_names=None if names is None else np.array(names, dtype=object),
    )
