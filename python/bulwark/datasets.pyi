from os import PathLike

from sklearn.utils import Bunch

def load(name: str | PathLike[str], *, data_dir: str | PathLike[str] | None = ...) -> Bunch: ...
