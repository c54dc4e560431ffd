"""Fit from Python vs the CLI's solver time on the same data (issue 64: a 4000 x 100 dense LP,
at most 15 % more). Usage: python fit_overhead.py path/to/bulwark [repeats]

Writes the data set once as CSV, trains with `bulwark train --algo lp --json` (the solver's
`seconds`) and with `bulwark.LP().fit` (wall clock of the whole call: validation, the copy into
the library's data set, the fit, the model file's records), at one thread and at the default."""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import bulwark


def main():
    cli = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rng = np.random.default_rng(64)
    m, n = 4000, 100
    X = rng.normal(size=(m, n))
    w = rng.normal(size=n)
    y = np.where(X @ w + 2.0 * rng.normal(size=m) > 0, "pos", "neg")
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "lp-4000x100.csv"
        with csv.open("w") as f:
            f.write("label," + ",".join(f"x{j}" for j in range(n)) + "\n")
            for row, label in zip(X, y):
                f.write(label + "," + ",".join(repr(float(v)) for v in row) + "\n")
        for threads in (1, None):
            cli_s, py_s, py_solver = [], [], []
            for _ in range(repeats):
                args = [cli, "train", "-q", "--json", "--algo", "lp", "--data", str(csv), "--out", f"{d}/m.bin"]
                if threads:
                    args += ["--threads", str(threads)]
                out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
                cli_s.append(json.loads(out)["seconds"])
                t = time.perf_counter()
                est = bulwark.LP(threads=threads).fit(X, y)
                py_s.append(time.perf_counter() - t)
                py_solver.append(est.fit_report_["seconds"])
            c, p = statistics.median(cli_s), statistics.median(py_s)
            print(
                f"threads={threads or 'default'}: CLI solver {c:.3f} s, Python fit (wall) {p:.3f} s "
                f"(its solver {statistics.median(py_solver):.3f} s): {100 * (p / c - 1):+.1f} %"
            )


if __name__ == "__main__":
    main()
