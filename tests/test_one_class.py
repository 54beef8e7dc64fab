"""The one-class SVM (cl.OneClassSVM): the certified answer against scikit-learn's
OneClassSVM (LIBSVM at tol=1e-12) in LIBSVM's scaling, Schoelkopf's scaling, the cvxpy
formulations, and bad input."""

import numpy as np
import pytest
from sklearn.svm import OneClassSVM as SkOneClass

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError


def _X(n=150, seed=0):
    rng = np.random.default_rng(seed)
    return np.r_[rng.normal(size=(n - 10, 2)), rng.uniform(-4, 4, size=(10, 2))]


@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.5}), ("rbf", {"gamma": "scale"}),
                                            ("linear", {}),
                                            ("poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0})])
# (nu n not an integer below 1: with nu n = k integer, and no free variable, rho is only
# bounded to an interval [g_(k), g_(k+1)] of equally optimal values, and LIBSVM and the
# polish may stop at different ends of it: test_degenerate_rho_is_an_interval)
@pytest.mark.parametrize("nu", [0.05, 0.31, 0.77, 0.99])
def test_matches_libsvm_and_its_conventions(kernel, params, nu):
    # (the linear kernel on data around the origin has its optimum at w = 0, where
    # LIBSVM at tol=1e-12 cycles for 10^9 iterations: shifted away from the origin)
    X = _X() + (3.0 if kernel == "linear" else 0.0)
    problem = cl.OneClassSVM(X, nu=nu, kernel=kernel, **params)
    sol = problem.solve()
    assert sol.status == "optimal", sol.report.summary()
    ref = SkOneClass(nu=nu, kernel=kernel, tol=1e-12, **params).fit(X)
    X_new = _X(seed=3)[:30] + (3.0 if kernel == "linear" else 0.0)
    f, f_ref = problem.decision_function(sol, X_new), ref.decision_function(X_new)
    scale = max(np.max(np.abs(f_ref)), abs(ref.offset_[0]))
    error = np.max(np.abs(f - f_ref)) / scale
    # scikit-learn: decision_function = sum_j dual_coef_j k(x_j, x) + intercept_,
    # intercept_ = -rho, offset_ = rho = score_samples - decision_function
    assert abs(problem.rho(sol) - ref.offset_[0]) <= 1e-6 * scale or error > 1e-6
    assert ref.intercept_[0] == -ref.offset_[0]
    if error > 1e-6:      # LIBSVM's float32 kernel cache (tests/test_svr.py): its point
        coef = np.zeros(X.shape[0])           # is the inaccurate one
        coef[ref.support_] = ref.dual_coef_[0]
        theirs = cl.Solution(w=None, b=float(ref.intercept_[0]), dual_coef=coef)
        assert not problem.certificate(theirs).passed and error <= 1e-4
    if kernel == "rbf":
        assert error <= 1e-6
    np.testing.assert_array_equal(problem.predict(sol, X_new)[np.abs(f_ref) > 1e-4 * scale],
                                  ref.predict(X_new)[np.abs(f_ref) > 1e-4 * scale])
    # the row and the box: sum a = nu n, 0 <= a <= 1; nu bounds the fractions
    assert abs(sol.alpha.sum() - nu * X.shape[0]) <= 1e-9 * X.shape[0]
    outside = np.mean(problem.decision_function(sol) < -1e-9 * scale)
    assert outside <= nu + 1e-12 and sol.report.support.size >= nu * X.shape[0] - 1e-9


def test_schoelkopf_scaling_is_libsvm_divided_by_nu_n():
    # Schoelkopf: max -1/2 a^T K a, 0 <= a <= 1 / (nu n), sum a = 1, whose optimum is
    # LIBSVM's a / (nu n); its rho is LIBSVM's rho / (nu n)
    import cvxpy as cp
    from convexlearn.formulations.base import CLARABEL_OPTIONS
    X = _X(n=60)
    nu, n = 0.2, 60
    problem = cl.OneClassSVM(X, nu=nu, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    a = cp.Variable(n)
    K = problem.gram
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(K))),
               [a >= 0, a <= 1 / (nu * n), cp.sum(a) == 1]).solve(solver="CLARABEL",
                                                                   **CLARABEL_OPTIONS)
    f_sch = K @ a.value
    np.testing.assert_allclose(f_sch * nu * n, problem.decision_function(sol) + problem.rho(sol),
                               atol=1e-6 * problem.rho(sol))


def test_the_cvxpy_primal_gives_rho():
    X = _X(n=60) + 3.0
    problem = cl.OneClassSVM(X, nu=0.4, kernel="linear")
    sol = problem.solve()
    form = problem.primal_formulation()
    form.problem.solve(solver="CLARABEL")
    assert abs(form.variables["rho"].value - problem.rho(sol)) <= 1e-6 * abs(problem.rho(sol))
    np.testing.assert_allclose(form.variables["w"].value, sol.w, atol=1e-6)
    assert abs(form.problem.value - sol.objective) <= 1e-7 * abs(sol.objective)


@pytest.mark.parametrize("nu", [0.0, -0.1, 1.01, np.inf, np.nan])
def test_nu_outside_the_interval_is_refused(nu):
    with pytest.raises(ParameterError, match="nu"):
        cl.OneClassSVM(_X(n=10), nu=nu)


def test_labels_are_refused():
    X = _X(n=10)
    with pytest.raises(DataError, match="takes no labels"):
        cl.OneClassSVM(X, np.arange(10) % 2)
    with pytest.raises(TypeError):
        cl.OneClassSVM(X, y=np.ones(10))


def test_an_optimum_at_w_zero_is_certified_through_the_floors():
    # the linear kernel on data around the origin: w = 0, rho = 0, P = D = 0 up to
    # round-off; the floors of certify/qp_kkt.py certify it, a moved rho still fails
    X = _X()
    problem = cl.OneClassSVM(X, nu=0.05, kernel="linear")
    sol = problem.solve()
    assert sol.status == "optimal"
    assert np.max(np.abs(sol.w)) <= 1e-12 and abs(problem.rho(sol)) <= 1e-12
    moved = cl.Solution(w=None, alpha=sol.alpha, b=sol.b - 1e-6)
    assert not problem.certificate(moved).passed


def test_degenerate_rho_is_an_interval():
    # nu n = 45 on the linear kernel: a = 1 on 45 samples, 0 elsewhere, no free variable;
    # every rho between the 45th and 46th smallest g is optimal and certified
    X = _X() + 3.0
    problem = cl.OneClassSVM(X, nu=0.3, kernel="linear")
    sol = problem.solve()
    assert sol.status == "optimal" and sol.report.free.size == 0
    g = np.sort(X @ sol.w)
    assert g[44] < problem.rho(sol) < g[45]
    for rho in (g[44], g[45]):
        assert problem.certificate(cl.Solution(w=None, alpha=sol.alpha, b=-rho)).passed
    beyond = cl.Solution(w=None, alpha=sol.alpha, b=-(g[45] + 1e-3))
    assert not problem.certificate(beyond).passed


def test_nu_one_takes_the_finite_end_where_libsvm_returns_inf():
    # nu = 1: a = 1 for every sample, every rho >= max_i g_i is optimal; LIBSVM's midpoint
    # of [max g, inf) is inf (scikit-learn raises "not finite"), here rho = max_i g_i,
    # the finite end
    X = _X()
    problem = cl.OneClassSVM(X, nu=1.0, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    assert sol.status == "optimal"
    np.testing.assert_array_equal(sol.alpha, 1.0)
    g = problem.gram_products(sol.alpha)
    assert problem.rho(sol) == pytest.approx(np.max(g), rel=1e-12)
    # every sample a margin error (a_i = 1): outside the boundary, f < 0, as LIBSVM's
    # rho = inf makes them all; the sample of the largest g sits on it
    assert np.all(problem.predict(sol)[g < np.max(g)] == -1)
    with pytest.raises(ValueError, match="not finite"):
        SkOneClass(nu=1.0, kernel="rbf", gamma=0.5).fit(X)
