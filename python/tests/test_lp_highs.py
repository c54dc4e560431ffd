"""LP (4) on text-shaped data (more features than examples, under 1 % non-zeros): the structured
IPM's objective, by each method of its normal equations, against HiGHS (SciPy's `linprog`) on
the same LP written out here (issue 61)."""

import bulwark
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog


def lp4_highs(X, y, budget, C):
    """LP (4) of Dekel, Shamir & Xiao with uniform values, every feature of every example kept
    (the reduction to the stored entries does not change the optimum), solved by HiGHS.

    Variables w (box [-C, C]), b (free), alpha_ij, lambda_i, xi_i (>= 0); P = n - N; rows
        a_i : P lambda_i - sum_j alpha_ij + y_i b + xi_i >= 0
        b_ij: y_i x_ij w_j - lambda_i + alpha_ij >= 1/P
    and objective (1/m) sum_i xi_i."""
    m, n = X.shape
    P = n - budget
    X = np.asarray(X.todense())
    nv = n + 1 + m * n + 2 * m
    alpha = lambda i, j: n + 1 + i * n + j
    lam = lambda i: n + 1 + m * n + i
    xi = lambda i: n + 1 + m * n + m + i
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for i in range(m):
        # a_i, as -(...) <= 0
        rows += [r] * (n + 3)
        cols += [lam(i)] + [alpha(i, j) for j in range(n)] + [n, xi(i)]
        vals += [-P] + [1.0] * n + [-y[i], -1.0]
        rhs.append(0.0)
        r += 1
        for j in range(n):
            rows += [r, r, r]
            cols += [j, lam(i), alpha(i, j)]
            vals += [-y[i] * X[i, j], 1.0, -1.0]
            rhs.append(-1.0 / P)
            r += 1
    A = sp.csr_matrix((vals, (rows, cols)), shape=(r, nv))
    c = np.zeros(nv)
    c[n + 1 + m * n + m :] = 1.0 / m
    bounds = [(-C, C)] * n + [(None, None)] + [(0, None)] * (m * n + 2 * m)
    res = linprog(c, A_ub=A, b_ub=np.array(rhs), bounds=bounds, method="highs-ipm",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10,
                           "ipm_optimality_tolerance": 1e-12})
    assert res.status == 0, res.message
    return res.fun


def text_shaped(seed, m, n, density):
    rng = np.random.default_rng(seed)
    # Zipf-like word frequencies: a few frequent words, many rare ones
    p = 1.0 / np.arange(1, n + 1)
    p /= p.sum()
    nnz_per_row = max(1, int(density * n))
    rows, cols = [], []
    for i in range(m):
        words = rng.choice(n, size=nnz_per_row, replace=False, p=p)
        rows += [i] * nnz_per_row
        cols += list(words)
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, n))
    w = rng.standard_normal(n)
    y = np.where(X @ w + 0.3 * rng.standard_normal(m) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("method", ["feature-space", "example-space", "sparse-ldl"])
def test_text_shaped_objective_equals_highs(seed, method):
    X, y = text_shaped(seed, m=40, n=600, density=0.008)
    assert X.shape[1] > X.shape[0] and X.nnz / np.prod(X.shape) < 0.01
    budget, C = 2.0, 1.0
    est = bulwark.LP(C=C, budget=budget, normal_equations=method, no_screening=True).fit(X, y)
    report = est.fit_report_
    # that solver answered: the structured IPM (with the method forced), certified, no fallback
    assert report["solver"] == "dsx-ipm", report
    assert report["fallbacks"] == [], report
    assert report["normal_equations"] == method, report
    assert report["converged"] is True, report
    ref = lp4_highs(X, y, budget, C)
    assert abs(report["objective"] - ref) <= 1e-6 * max(1.0, abs(ref)), (report["objective"], ref)
