#!/usr/bin/env python3
"""Optional speed comparison of bulwark-online's SVM against LIBLINEAR (scikit-learn's
LinearSVC(dual=True, loss='hinge')). Not part of `cargo test`; needs numpy + scikit-learn.

    python3 crates/online/scripts/liblinear_compare.py [--m 5000] [--n 100] [--C 1]

It writes the data set to a temporary file, times LinearSVC at several `tol` values and the Rust
example `svm_compare` at several relative-gap tolerances, and evaluates every solution on the
*same* objective: the unregularised-bias primal ½‖w‖² + C Σ max(0, 1 − y(w·x + b)).
LIBLINEAR solves a different problem (its bias is an extra feature of value
`intercept_scaling`, so b is regularised); its objective on our problem is therefore ≥ ours.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def primal(w, b, X, y, C):
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * (X @ w + b)).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=5000)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(7)
    y = np.where(np.arange(args.m) % 2 == 0, 1.0, -1.0)
    X = rng.uniform(-1, 1, size=(args.m, args.n)) + 0.1 * y[:, None]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(f"{args.m} {args.n}\n")
        for i in range(args.m):
            f.write(" ".join([f"{y[i]:.0f}"] + ["%.17g" % v for v in X[i]]) + "\n")
        path = f.name
    results = []
    for scaling in [1.0, 10.0]:
        for tol in [1e-2, 1e-4, 1e-6]:
            best = float("inf")
            for _ in range(args.repeats):
                clf = LinearSVC(dual=True, loss="hinge", C=args.C, tol=tol, intercept_scaling=scaling, max_iter=1_000_000)
                t = time.perf_counter()
                clf.fit(X, y)
                best = min(best, time.perf_counter() - t)
            w, b = clf.coef_.ravel(), float(clf.intercept_[0])
            results.append({"solver": "liblinear", "intercept_scaling": scaling, "tol": tol, "seconds": best,
                            "objective_unreg_bias": primal(w, b, X, y, args.C), "iterations": int(np.max(clf.n_iter_))})
    root = os.path.dirname(os.path.abspath(__file__))
    for tol in [1e-2, 1e-4, 1e-6]:
        out = subprocess.run(["cargo", "run", "-q", "--release", "-p", "bulwark-online", "--example", "svm_compare", "--",
                              path, str(args.C), str(tol), str(args.repeats)], capture_output=True, text=True, cwd=root)
        if out.returncode != 0:
            sys.exit(f"svm_compare failed: {out.stderr}")
        runs = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
        r = min(runs, key=lambda r: r["seconds"])
        results.append({"solver": "bulwark-online", "relative_gap_tol": tol, "seconds": r["seconds"],
                        "objective_unreg_bias": r["objective"], "passes": r["passes"], "converged": r["converged"]})
    os.unlink(path)
    for r in results:
        print(json.dumps(r))


if __name__ == "__main__":
    sys.exit(main())
