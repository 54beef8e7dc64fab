"""The L2-loss (squared hinge) SVM: cl.SVM(X, y, C, loss="squared_hinge")."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError
from convexlearn.svm_l2 import SquaredHingeSVM


def _data(n=120, d=4, seed=0, shift=2.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + shift
    y = np.where((X - shift) @ rng.standard_normal(d) + 0.6 * rng.standard_normal(n) > 0,
                 "b", "a")
    return X, y


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


MODES = [True, False, "penalized"]


def test_loss_builds_the_l2_problem_and_hinge_is_unchanged():
    X, y = _data()
    assert type(cl.SVM(X, y)) is cl.SVM
    assert type(cl.SVM(X, y, loss="hinge")) is cl.SVM
    p = cl.SVM(X, y, C=0.5, loss="squared_hinge")
    assert isinstance(p, SquaredHingeSVM) and p.mode == "unpenalized"
    assert "L2-loss" in repr(p)


@pytest.mark.parametrize("intercept", MODES)
def test_exact_linear_route_matches_the_cvxpy_primal_and_dual(intercept):
    X, y = _data()
    p = cl.SVM(X, y, C=0.7, loss="squared_hinge", intercept=intercept)
    s = p.solve()
    assert s.status == "optimal" and s.provenance["route"] == "exact-linear"
    assert s.report.relative_gap <= 1e-9 and s.report.gap_tol == 1e-9
    f = p.decision_function(s)
    for method in ("exact-primal", "exact-dual"):
        t = p.solve(method)
        assert t.status == "optimal"
        assert _rel(p.decision_function(t), f) <= 1e-6
    # the multipliers of the optimum are a_i = 2 C xi_i (the dual's, read off the margins)
    d = p.solve("exact-dual")
    xi = np.maximum(0.0, 1.0 - p.y * f)
    assert np.max(np.abs(d.alpha - 2 * 0.7 * xi)) <= 1e-5 * max(1.0, np.max(d.alpha))
    # the primal value and the dual value at the optimum agree with the cvxpy problems
    assert abs(p.primal().solve() - s.report.primal_objective) <= 1e-6 * s.report.primal_objective
    assert abs(p.dual_objective(s.alpha) - s.report.primal_objective) <= 1e-9 * s.objective


@pytest.mark.parametrize("intercept", MODES)
def test_kernel_form_smo_on_the_shifted_dual_matches_cvxpy(intercept):
    X, y = _data(n=80)
    p = cl.SVM(X, y, C=2.0, loss="squared_hinge", kernel="rbf", gamma=0.3, intercept=intercept)
    s = p.solve()
    assert s.status == "optimal" and s.provenance["route"] == "exact-smo"
    assert s.report.relative_gap <= 1e-9
    t = p.solve("exact-dual")
    assert _rel(p.decision_function(t), p.decision_function(s)) <= 1e-6
    Xt = X[:7] + 0.1
    assert _rel(p.decision_function(t, Xt), p.decision_function(s, Xt)) <= 1e-6
    # the linear problem through the SMO route is the Newton route's answer
    q = cl.SVM(X, y, C=2.0, loss="squared_hinge", intercept=intercept)
    a, b = q.solve("exact-smo"), q.solve("exact-linear")
    assert _rel(q.decision_function(a), q.decision_function(b)) <= 1e-9


@pytest.mark.parametrize("intercept,fit_intercept", [("penalized", True), (False, False)])
def test_matches_linearsvc(intercept, fit_intercept):
    """LinearSVC(loss="squared_hinge") penalizes its intercept (intercept_scaling=1):
    cl's intercept="penalized"; fit_intercept=False is intercept=False."""
    from sklearn.svm import LinearSVC
    X, y = _data(n=300, d=6, seed=3)
    p = cl.SVM(X, y, C=0.3, loss="squared_hinge", intercept=intercept)
    s = p.solve()
    m = LinearSVC(C=0.3, loss="squared_hinge", fit_intercept=fit_intercept, tol=1e-12,
                  max_iter=200000).fit(X, y)
    assert _rel(m.decision_function(X), p.decision_function(s)) <= 1e-6
    assert np.array_equal(m.predict(X), p.predict(s))


def test_unpenalized_intercept_differs_from_linearsvc_s_problem():
    X, y = _data(n=200, d=3, seed=5, shift=4.0)
    a = cl.SVM(X, y, C=1.0, loss="squared_hinge").solve()
    b = cl.SVM(X, y, C=1.0, loss="squared_hinge", intercept="penalized").solve()
    assert abs(a.b - b.b) > 1e-3       # a different problem, not a rounding


def test_certificate_fails_on_a_perturbed_answer():
    X, y = _data()
    p = cl.SVM(X, y, C=0.7, loss="squared_hinge")
    s = p.solve()
    assert p.certificate(s).passed
    bad = p.solve()
    bad.w = bad.w * (1 + 1e-3)
    bad.alpha = None
    r = p.certificate(bad)
    assert r.relative_gap > 1e-8
    assert not p.certificate(bad, tol=1e-9).passed
    worse = p.solve()
    worse.b += 0.05
    worse.alpha = None
    assert not p.certificate(worse).passed


def test_integer_sample_weights_are_copies():
    X, y = _data(n=60)
    w = np.arange(60) % 3
    p = cl.SVM(X, y, C=0.4, loss="squared_hinge", sample_weight=w)
    rep = np.repeat(np.arange(60), w)
    q = cl.SVM(X[rep], y[rep], C=0.4, loss="squared_hinge")
    a, b = p.solve(), q.solve()
    assert a.status == b.status == "optimal"
    assert _rel(p.decision_function(a), q.decision_function(b, X)) <= 1e-8


def test_dcd_iterative_method():
    X, y = _data()
    p = cl.SVM(X, y, C=0.7, loss="squared_hinge")
    s = p.solve("dcd", tol=1e-8, max_iter=5000)
    e = p.solve()
    assert s.method == "dcd"
    assert _rel(p.decision_function(s), p.decision_function(e)) <= 1e-5


def test_bad_input():
    X, y = _data()
    with pytest.raises(ParameterError, match="'hinge', 'squared_hinge'"):
        cl.SVM(X, y, loss="logistic")
    with pytest.raises(ParameterError, match="C must be > 0"):
        cl.SVM(X, y, C=0.0, loss="squared_hinge")
    with pytest.raises(ParameterError, match="finite C"):
        cl.SVM(X, y, C=None, loss="squared_hinge")
    with pytest.raises(ParameterError, match="penalized"):
        cl.SVM(X, y, loss="squared_hinge", intercept="yes")
    with pytest.raises(DataError, match="3 classes"):
        cl.SVM(X, np.arange(X.shape[0]) % 3, loss="squared_hinge")
    with pytest.raises(ParameterError, match="unknown method"):
        cl.SVM(X, y, loss="squared_hinge").solve("smo")
