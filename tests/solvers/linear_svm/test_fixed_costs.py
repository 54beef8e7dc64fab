"""The per-solve fixed costs cut from the linear exact route, each without changing a
result or weakening the certificate:

* (triangular and Cholesky solves through LAPACK straight: tests/solvers/test_lapack.py);
* the BLAS limit is the shared controller of convexlearn.threads (threadpoolctl's
  threadpool_limits inspected every loaded library on each call);
* DCD without a history (the warm starts') runs the same iterates;
* the polish from DCD's sets gives up on a set larger than ``max_free``;
* on a small problem the interior point comes before DCD's free vectors, and the answer
  is still certified at the route's 1e-9 relative gap.
"""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import convexlearn as cl
from convexlearn import threads
from convexlearn.solvers.linear_svm import linear_active_set, linear_exact
from convexlearn.solvers.linear_svm.dcd import dcd_linear


def test_the_route_limits_blas_through_the_shared_controller():
    assert linear_active_set.one_blas_thread is threads.one_blas_thread


@pytest.mark.parametrize("gap_tol", [None, 1e-6])
def test_dcd_without_history_runs_the_same_iterates(gap_tol):
    rng = np.random.default_rng(0)
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    X = rng.standard_normal((300, 6)) + 0.7 * y[:, None]
    kw = dict(tol=1e-3, max_iter=500, seed=4, gap_tol=gap_tol)
    a1, w1, b1, e1, s1, h1 = dcd_linear(X, y, 1.0, **kw)
    a2, w2, b2, e2, s2, h2 = dcd_linear(X, y, 1.0, record=False, **kw)
    assert np.array_equal(a1, a2) and np.array_equal(w1, w2) and b1 == b2
    assert (e1, s1) == (e2, s2) and len(h1) == e1 and len(h2) == 0


def _bc(C):
    X, y = load_breast_cancer(return_X_y=True)
    return cl.SVM((X - X.mean(0)) / X.std(0), y, C=C)


def test_the_polish_gives_up_on_a_free_set_beyond_max_free():
    svm = _bc(1.0)
    X, y = svm.X, svm.y
    Zy = y[:, None] * np.column_stack([X, np.ones(len(y))])
    C = np.ones(len(y))
    alpha = np.full(len(y), 0.5)         # every multiplier inside its box: all free
    assert linear_exact.polish_w(Zy, C, alpha, True, 1.0, max_free=Zy.shape[1]) is None


def test_small_problem_tries_the_interior_point_before_dcd_free_vectors(monkeypatch):
    # breast cancer at C = 2.29 (ERM hinge + l2 at lam = 1e-3 lam_max): DCD stops at its
    # budget; n p^2 = 569 * 31^2 is below _FREE_VECTORS_FIRST. Its sets polished before
    # the two-phase DCD run only by chance of the trajectory: the polish of DCD's sets is
    # made to fail here (and the active set on DCD's candidates, .linear_reduced), so
    # that the order of the stages after them is what is tested
    svm = _bc(2.29)
    calls = []
    monkeypatch.setattr(linear_exact, "polish_w", lambda *a, **k: None)
    monkeypatch.setattr(linear_exact, "reduced_active_set", lambda *a, **k: None)
    real_ipm, real_as = linear_exact._ipm_start, linear_exact.active_set
    monkeypatch.setattr(linear_exact, "_ipm_start",
                        lambda *a, **k: calls.append("ipm") or real_ipm(*a, **k))
    monkeypatch.setattr(linear_exact, "active_set",
                        lambda *a, **k: calls.append("as") or real_as(*a, **k))
    sol = linear_exact.solve_linear_exact(svm)
    assert svm.X.shape[0] * 31 ** 2 < linear_exact._FREE_VECTORS_FIRST
    assert calls[0] == "ipm" and sol.provenance["polish"] == "interior point, active set"
    cert = sol.extra["certificate"]
    assert sol.status == "optimal" and cert["passed"] and abs(cert["relative_gap"]) <= 1e-9
    ref = svm.solve("exact-dual")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)


def test_features_1e8_apart_in_scale_certify_with_the_small_columns_unscaled():
    # breast cancer standardized, columns alternately x 1e4 and x 1e-4, C from ERM's
    # hinge + l2 at lam = lam_max / 2: the scaled null-space method's penalty block spans
    # 1e16 and every other w-space stage missed the certificate (1.8 s, then cvxpy)
    from fractions import Fraction
    from convexlearn.certify.rational_gap import rational_duality_gap
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0) * np.where(np.arange(30) % 2 == 0, 1e4, 1e-4)
    svm = cl.SVM(X, y, C=4.642841163387466e-07)
    sol = linear_exact.solve_linear_exact(svm)
    assert sol.status == "optimal"
    assert sol.provenance["polish"] == "interior point, active set (small columns unscaled)"
    gap = rational_duality_gap(X, svm.y, np.full(len(y), svm.C), sol.w, sol.b, sol.alpha)
    assert gap is not None and gap <= Fraction(1, 10**9)
