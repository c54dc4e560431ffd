"""The LIBSVM peer of `cargo xtask bench smo`: scikit-learn's SVC on the task that
`crates/online/examples/smo_bench.rs` wrote (same rows, same scaling), one thread, with the
case's kernel, C and tolerance, a 200 MB kernel cache and shrinking (LIBSVM's defaults).
Appends one flat JSON object to OUT.jsonl: the median time of REPEATS fits, the dual objective
D = sum|y a| - 1/2 (y a)' K (y a) recomputed from the support vectors, and their count.

usage: libsvm_svc.py DATA.bin M N OUT.jsonl CASE KERNEL GAMMA DEGREE COEF0 C TOL REPEATS
"""
import json
import sys
import time

import numpy as np
import sklearn
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC


def main():
    (path, m, n, out, case, kernel, gamma, degree, coef0, c, tol, repeats) = sys.argv[1:13]
    m, n, degree, repeats = int(m), int(n), int(degree), int(repeats)
    gamma, coef0, c, tol = float(gamma), float(coef0), float(c), float(tol)
    raw = np.fromfile(path, dtype="<f8")
    x = raw[: m * n].reshape(m, n)
    y = raw[m * n :]
    if kernel == "rbf":
        make = lambda: SVC(C=c, kernel="rbf", gamma=gamma, tol=tol, cache_size=200)
    else:
        make = lambda: SVC(
            C=c, kernel="poly", gamma=gamma, degree=degree, coef0=coef0, tol=tol, cache_size=200
        )
    times = []
    for _ in range(max(repeats, 1)):
        clf = make()
        t = time.perf_counter()
        clf.fit(x, y)
        times.append(time.perf_counter() - t)
    times.sort()
    sv = clf.support_vectors_
    dc = clf.dual_coef_[0]
    if kernel == "rbf":
        k = rbf_kernel(sv, sv, gamma=gamma)
    else:
        k = polynomial_kernel(sv, sv, degree=degree, gamma=gamma, coef0=coef0)
    dual = float(np.abs(dc).sum() - 0.5 * dc @ k @ dc)
    err = float(np.mean(clf.predict(x) != y))
    bounded = int(np.sum(np.abs(np.abs(dc) - c) <= 1e-12 * c))
    row = {
        "case": case,
        "solver": "libsvm",
        "version": "scikit-learn " + sklearn.__version__,
        "seconds": times[len(times) // 2],
        "repeats": max(repeats, 1),
        "iterations": int(np.sum(clf.n_iter_)),
        "dual_objective": dual,
        "support_vectors": int(sv.shape[0]),
        "bounded_support_vectors": bounded,
        "training_error": err,
        "bias": float(clf.intercept_[0]),
    }
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
