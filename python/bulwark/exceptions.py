"""The exceptions of ``bulwark``: each carries the library's message and subclasses the
built-in exception scikit-learn's conventions expect (``ValueError`` for bad data and
parameter values, ``TypeError`` for parameters of the wrong type, ``OSError`` for files)."""

from __future__ import annotations

__all__ = [
    "BulwarkError",
    "InputError",
    "ParameterError",
    "ParameterTypeError",
    "ShapeError",
    "NonFiniteError",
    "SingleClassError",
    "UnknownDatasetError",
    "NotFoundError",
    "FileError",
    "TooLargeError",
    "NumericalError",
]


class BulwarkError(Exception):
    """Base class of every error the library raises."""


class InputError(BulwarkError, ValueError):
    """Malformed or invalid input data (arrays, files, label vectors)."""


class ParameterError(BulwarkError, ValueError):
    """A hyper-parameter or argument out of its domain."""


class ParameterTypeError(BulwarkError, TypeError):
    """A hyper-parameter of the wrong type."""


class ShapeError(BulwarkError, ValueError):
    """Two sizes that must agree do not (e.g. the model's and the data's feature counts)."""


class NonFiniteError(BulwarkError, ValueError):
    """A value that must be finite is NaN or infinite."""


class SingleClassError(BulwarkError, ValueError):
    """A binary task needs both classes present."""


class UnknownDatasetError(BulwarkError, ValueError):
    """A data set name that is neither built in nor a file."""


class NotFoundError(BulwarkError, FileNotFoundError):
    """A file or data set that should exist does not."""


class FileError(BulwarkError, OSError):
    """An I/O failure on a file."""


class TooLargeError(BulwarkError, MemoryError):
    """An allocation sized by the input would exceed the memory limit."""


class NumericalError(BulwarkError, RuntimeError):
    """An iterative method failed numerically or did not converge."""
