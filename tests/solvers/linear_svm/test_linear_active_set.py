"""The w-space active-set method of the exact linear route, and the units cases it fixed.

* the null-space KKT step equals a dense solve of the same system, and refuses a
  rank-deficient working set;
* the long-step line search returns the minimizer of the piecewise quadratic along the ray;
* the active-set method agrees with the cvxpy dual (soft, hard, no intercept, sample
  weights), from any start;
* breast cancer raw (hard margin) and x 1e5 (C=1): certified by the duality gap recomputed
  here from the data (and in exact rational arithmetic for the soft margin), two different
  paths agree, objective no worse than SVC's, and a perturbed answer fails;
* random SVMs with feature scales 1e-4..1e6 and C in 1e-3..1e3: every one certified.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.certify.rational_gap import rational_duality_gap
from convexlearn.solvers.linear_svm.linear_active_set import (_line_search, active_set, column_scaling,
                                                   feasible_start, kkt_step)
from convexlearn.solvers.linear_svm.linear_exact import certificate, solve_linear_exact


def _rows(n=40, d=4, seed=0, sep=0.8, intercept=True):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, d)) + sep * y[:, None]
    R = y[:, None] * (np.column_stack([X, np.ones(n)]) if intercept else X)
    return X, y, R


@pytest.mark.parametrize("intercept", [True, False])
def test_kkt_step_equals_the_dense_solve(intercept):
    X, y, R = _rows(intercept=intercept)
    p = R.shape[1]
    d = p - 1 if intercept else p
    rng = np.random.default_rng(1)
    R = R * 10.0 ** rng.uniform(-3, 3, size=p)          # badly scaled columns
    for k in range(0 if not intercept else 1, p + 1):
        W = rng.choice(R.shape[0], size=k, replace=False)
        c, t = rng.normal(size=p), 1.0 + rng.random(k)
        u, a = kkt_step(R[W], c, t, d, column_scaling(R))
        A = np.zeros((p + k, p + k))
        A[:d, :d] = np.eye(d)
        A[:p, p:] = -R[W].T
        A[p:, :p] = R[W]
        ref = np.linalg.solve(A, np.concatenate([c, t]))
        np.testing.assert_allclose(np.concatenate([u, a]), ref, rtol=1e-7, atol=1e-9)
    W = [0, 1, 0]                                       # a repeated row: rank deficient
    assert kkt_step(R[W], np.zeros(p), np.ones(3), d, column_scaling(R)) is None


def test_line_search_minimizes_along_the_ray():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, d = 30, 3
        w, dw = rng.normal(size=d), rng.normal(size=d)
        m, Rp = rng.normal(1.0, 1.0, size=n), rng.normal(size=n)
        C = np.full(n, 10.0 ** rng.uniform(-1, 1))
        below, inW = m < 1.0, np.zeros(n, dtype=bool)

        def phi(a):
            return 0.5 * np.sum((w + a * dw) ** 2) + C @ np.maximum(0.0, 1.0 - m - a * Rp)
        slope = w @ dw - C[below] @ Rp[below]
        a_star, crossed, joins = _line_search(w, dw, slope, m, Rp, below, inW, C, np.zeros(n))
        grid = np.linspace(0.0, 1.0, 2001)
        best = min(phi(a) for a in grid)
        assert phi(a_star) <= best + 1e-12 * max(1.0, abs(best))
        # the crossed samples are exactly those whose margin passed 1 before a_star
        passed = np.flatnonzero((below & (m + a_star * Rp > 1.0 + 1e-12))
                                | (~below & (m + a_star * Rp < 1.0 - 1e-12)))
        assert set(passed) <= set(crossed.tolist()) | {joins}


@pytest.mark.parametrize("kind", ["soft", "hard", "no intercept", "weights"])
def test_active_set_matches_the_cvxpy_dual_from_any_start(kind):
    X, y, _ = _rows(n=50, d=3, seed=4, sep=2.5 if kind == "hard" else 0.8)
    weights = np.random.default_rng(5).uniform(0.2, 3.0, size=50) if kind == "weights" else None
    svm = cl.SVM(X, y, C=None if kind == "hard" else 0.7, intercept=kind != "no intercept",
                 sample_weight=weights)
    ref = svm.solve(method="exact-dual")
    R = svm.y[:, None] * (np.column_stack([X, np.ones(50)]) if svm.intercept else X)
    p = R.shape[1]
    d = p - 1 if svm.intercept else p
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), (50,))
    starts = [feasible_start(R, column_scaling(R))] if kind == "hard" else \
        [np.zeros(p), np.random.default_rng(6).normal(size=p) * 5]
    for u0 in starts:
        u, alpha, _ = active_set(R, C, d, u0)
        cert = certificate(X, svm.y, C, svm.intercept, u[:d], u[d] if svm.intercept else 0.0,
                           alpha)
        assert cert["relative_gap"] <= 1e-9 or kind == "hard", (kind, cert)
        assert np.all(alpha >= 0) and np.all(alpha <= C)
        assert cert["dual"] == pytest.approx(ref.objective, rel=1e-9), kind


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    return X, np.where(y > 0, 1.0, -1.0)


def _gap_from_scratch(X, y, C, w, b, alpha):
    """(P - D) / P with P at (w, b) (inf if a hard margin is violated) and D at alpha
    moved onto y^T alpha = 0 by the coordinate of most room (here, not the route's code)."""
    a = np.clip(alpha.astype(float), 0.0, C)
    s = float(y @ a)
    room = np.where(-np.sign(s) * y > 0, C - a, a)
    i = int(np.argmax(np.where(np.isfinite(room), room, a + 1.0)))
    a[i] -= np.sign(s) * y[i] * abs(s)
    assert 0.0 <= a[i] <= C[i]
    m = y * (X @ w + b)
    hinge = np.maximum(0.0, 1.0 - m)
    if np.all(np.isinf(C)):
        primal = 0.5 * w @ w if m.min() >= 1.0 else math.inf
    else:
        primal = 0.5 * w @ w + C @ hinge
    v = X.T @ (y * a)
    dual = a.sum() - 0.5 * v @ v
    return (primal - dual) / primal


def _svc_objective(svm, X, y, C):
    from sklearn.svm import SVC
    with warnings.catch_warnings():         # SVC stops at its budget on these units
        warnings.simplefilter("ignore")
        svc = SVC(kernel="linear", C=C, max_iter=10**5).fit(X, y)
    return svm.primal_objective(cl.Solution(w=svc.coef_.ravel(), b=float(svc.intercept_[0])))


def test_raw_breast_cancer_hard_margin_and_x1e5_are_certified():
    X, y = _breast_cancer()
    n = X.shape[0]
    hard = cl.SVM(X, y, C=None).solve()
    soft = cl.SVM(X * 1e5, y, C=1.0).solve()
    for sol, data, C in ((hard, X, np.full(n, np.inf)), (soft, X * 1e5, np.ones(n))):
        assert sol.provenance["route"] == "exact-linear" and sol.status == "optimal"
        assert _gap_from_scratch(data, y, C, sol.w, sol.b, sol.alpha) <= 1e-9
        # a perturbed answer fails
        cert = certificate(data, y, C, True, sol.w * (1 - 1e-6), sol.b, sol.alpha)
        assert not cert["passed"]
    assert np.min(y * (X @ hard.w + hard.b)) >= 1.0
    exact = rational_duality_gap(X * 1e5, y, 1.0, soft.w, soft.b, soft.alpha)
    assert 0 <= exact <= Fraction(1, 10**9) * Fraction(soft.objective)
    # X * 1e5 with C = 1 is X with C = 1e10; its multipliers stay below C, so it is the
    # hard margin: two paths (consistency LP + active set, DCD + active set) agree
    assert np.max(soft.alpha) < 1.0
    assert hard.objective == pytest.approx(1e10 * soft.objective, rel=1e-9)
    assert soft.objective <= _svc_objective(cl.SVM(X * 1e5, y, C=1.0), X * 1e5, y, 1.0) * \
        (1 + 1e-9)


def test_every_random_svm_across_feature_scales_is_certified():
    """The units sweep of benchmarks/bench_svm_linear.py (same generator, all 60 cases)."""
    rng = np.random.default_rng(0)
    for k in range(60):
        n, d = 60, 5
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        X = (rng.normal(size=(n, d)) + 0.7 * y[:, None]) * 10.0 ** rng.uniform(-4, 6, size=d)
        C = float(10.0 ** rng.uniform(-3, 3))
        svm = cl.SVM(X, y, C=C)
        sol = solve_linear_exact(svm)
        assert sol.status == "optimal", (k, sol.extra["certificate"])
        gap = rational_duality_gap(X, svm.y, C, sol.w, sol.b, sol.alpha)
        assert gap is not None and gap <= Fraction(1, 10**9), (k, float(gap))
        assert sol.objective <= _svc_objective(svm, X, y, C) * (1 + 1e-9), k


@pytest.mark.parametrize("weights", [False, True])
def test_interior_point_then_crash_start_reach_the_optimum(weights):
    from convexlearn.solvers.linear_svm.linear_ipm import ipm_w
    X, y, R = _rows(n=200, d=5, seed=8, sep=0.4)
    w = np.random.default_rng(9).uniform(0.0, 2.0, size=200) if weights else None
    if weights:
        w[:5] = 0.0                                     # absent samples
    svm = cl.SVM(X, y, C=1.3, sample_weight=w)
    ref = svm.solve(method="exact-dual")
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), (200,))
    u, a, iterations = ipm_w(R, C, 5, tol=1e-8)
    assert iterations < 60 and np.all(a >= 0) and np.all(a <= C * (1 + 1e-12))
    P = svm.primal_objective(cl.Solution(w=u[:5], b=float(u[5])))
    assert P == pytest.approx(ref.objective, rel=1e-6)  # an interior point: close, not exact
    g = np.abs(R @ u - 1.0)
    start = np.flatnonzero(g < 1e-3)
    u2, alpha, steps = active_set(R, C, 5, u, start_set=start)
    cert = certificate(X, svm.y, C, True, u2[:5], float(u2[5]), alpha)
    assert cert["passed"] and cert["primal"] == pytest.approx(ref.objective, rel=1e-9)
    assert steps <= 20                                  # the crash start leaves few steps


def test_heavy_overlap_goes_through_an_active_set_stage_and_matches_cvxpy():
    # DCD's free set is small here (<= 2p): an active set from its free vectors (over
    # every row, or on its candidates: .linear_reduced) answers before the interior point
    # (ipm_w is tested on its own above); or DCD, which converged, goes on to tighter
    # tolerances whose sets the w-space polish certifies (dcd (tol ...), pdas)
    from sklearn.datasets import make_classification
    X, y = make_classification(300, 5, flip_y=0.2, random_state=1)   # redundant features
    svm = cl.SVM(X, y, C=1.0)
    sol = svm.solve()
    assert sol.provenance["route"] == "exact-linear" and sol.status == "optimal"
    assert sol.provenance["polish"] in ("active set", "interior point, active set",
                                        "reduced active set") \
        or sol.provenance["warm_start"].startswith("dcd (tol"), sol.provenance
    assert _gap_from_scratch(X, svm.y, np.ones(300), sol.w, sol.b, sol.alpha) <= 1e-9
    for method in ("exact-dual", "exact-primal"):
        ref = svm.solve(method=method)
        assert sol.objective <= ref.objective * (1 + 1e-9), method
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9), method
