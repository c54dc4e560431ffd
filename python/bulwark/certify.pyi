from dataclasses import dataclass
from typing import Any, Sequence

from numpy.typing import ArrayLike

@dataclass(frozen=True)
class Certificate:
    budget: float
    n_examples: int
    clean_error: float
    greedy_lower: float
    lower: float
    upper: float
    relaxation_upper: float
    exact: float | None
    n_broken: int
    n_robust: int
    n_undecided: int
    node_limit: int
    missing_records: int
    per_example: dict[str, Any]

def certify(estimator: Any, X: ArrayLike, y: ArrayLike, budget: float = ..., *, values: Sequence[float] | None = ..., exact: bool = ..., node_limit: int | None = ...) -> Certificate: ...
