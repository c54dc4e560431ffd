"""The LIBLINEAR peer of `cargo xtask bench guru`: scikit-learn's LinearSVC on the task that
`crates/gaussian/examples/guru_bench.rs` wrote (same rows, same scaling), one thread.
Appends one flat JSON object per tolerance to OUT.jsonl.

usage: liblinear_svc.py DATA.bin M N OUT.jsonl LABEL
"""
import json
import sys
import time

import numpy as np
import sklearn
from sklearn.svm import LinearSVC


def main():
    path, m, n, out, label = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    raw = np.fromfile(path, dtype="<f8")
    x = raw[: m * n].reshape(m, n)
    y = raw[m * n :]
    # LIBLINEAR's dual coordinate descent (hinge loss, L2, bias as a constant feature), C = 1,
    # at its default tolerance 1e-4 and at 1e-6; the median of 3 runs each
    with open(out, "a") as f:
        for tol in (1e-4, 1e-6):
            times = []
            for _ in range(3):
                clf = LinearSVC(C=1.0, loss="hinge", dual=True, tol=tol, max_iter=100000)
                t = time.perf_counter()
                clf.fit(x, y)
                times.append(time.perf_counter() - t)
            times.sort()
            err = float(np.mean(np.sign(clf.decision_function(x)) != y))
            row = {
                "data": label,
                "solver": "liblinear",
                "version": "scikit-learn " + sklearn.__version__,
                "tol": tol,
                "seconds": times[1],
                "iterations": int(np.max(clf.n_iter_)),
                # LIBLINEAR stops silently (a warning) at max_iter: say so in the table
                "converged": bool(np.max(clf.n_iter_) < 100000),
                "training_error": err,
            }
            f.write(json.dumps(row) + "\n")
            print(json.dumps(row))


if __name__ == "__main__":
    main()
