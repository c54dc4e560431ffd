"""The compiled core (`crates/python`, PyO3). X is a 2-D float64 array or CSR arrays
`(data, indices, indptr, rows, cols)` with int64 indices; y is int64 class indices."""

from os import PathLike
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

__version__: str
MODEL_FORMAT_VERSION: int

_X = NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64], int, int]

def learners() -> list[dict[str, Any]]: ...
def fit(
    algo: str,
    x: _X,
    y: NDArray[np.int64],
    classes: Sequence[str],
    params: dict[str, Any],
    sample_weight: NDArray[np.float64] | None = ...,
    feature_names: Sequence[str] | None = ...,
    threads: int | None = ...,
    allow_missing: bool = ...,
) -> Model: ...

class Model:
    algorithm: str
    n_features: int
    classes: list[str]
    feature_names: list[str] | None
    kind: str
    n_outputs: int
    scaled: bool
    hyper_parameters: dict[str, Any]
    linear: tuple[list[float], float] | None
    budget: float | None
    normal_equations: str | None
    stopped: str | None
    def to_json(self) -> str: ...
    def decision_function(self, x: _X) -> NDArray[np.float64]: ...
    def predict_index(self, x: _X) -> NDArray[np.int64]: ...
    def to_bytes(self, encoding: str) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes, name: str = ...) -> Model: ...
    def save(self, path: str | PathLike[str]) -> None: ...
    @staticmethod
    def load(path: str | PathLike[str]) -> Model: ...

def attack(model: Model, x: _X, y: NDArray[np.int64], kind: str, budget: float, seed: int = ..., values: Sequence[float] | None = ..., node_limit: int | None = ...) -> tuple[Any, int, int]: ...
def certify(model: Model, x: _X, y: NDArray[np.int64], budget: float, values: Sequence[float] | None = ..., exact: bool = ..., node_limit: int | None = ...) -> str: ...
def contaminate(kind: str, spec: str, x: _X, y: NDArray[np.int64], classes: Sequence[str], seed: int = ...) -> tuple[Any, NDArray[np.int64], list[int]]: ...
def load_dataset(name: str, data_dir: str | None = ...) -> tuple[Any, NDArray[np.int64], list[str], list[str] | None]: ...
