"""Epsilon-SVR (cl.SVR): the certified answer against scikit-learn's SVR and LinearSVR
(LIBSVM, LIBLINEAR at tol=1e-12), the cvxpy formulations, the tube's KKT conditions per
sample, and bad input."""

import numpy as np
import pytest
from sklearn.svm import SVR as SkSVR, LinearSVR

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError


def _data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, 2.0 * np.sin(X[:, 0]) + X[:, 1] + 0.2 * rng.normal(size=n)


def assert_matches_libsvm(problem, sol, ref, X_new):
    """Decision values to 1e-6 relative, on the training and new samples, unless LIBSVM's
    own point is the inaccurate one: LIBSVM caches kernel columns in float32 (Qfloat), and
    where its answer at tol=1e-12 is 1e-6..1e-5 off (large C, entries far from 1), its
    point must fail our certificate with a primal objective above the certified one, and
    agree to the float32 level (1e-4)."""
    n = problem.n_samples
    coef = np.zeros(n)
    coef[ref.support_] = ref.dual_coef_[0]
    theirs = cl.Solution(w=None, b=float(ref.intercept_[0]), dual_coef=coef)
    f, f_ref = problem.decision_function(sol), ref.predict(problem.X)
    g, g_ref = problem.decision_function(sol, X_new), ref.predict(X_new)
    scale = max(np.max(np.abs(f_ref)), np.max(np.abs(g_ref)))
    error = max(np.max(np.abs(f - f_ref)), np.max(np.abs(g - g_ref))) / scale
    if error > 1e-6:
        assert problem.primal_objective(theirs) > sol.objective
        assert not problem.certificate(theirs).passed
        assert error <= 1e-4
    return error


@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.5}), ("linear", {}),
                                            ("poly", {"gamma": 0.3, "degree": 2, "coef0": 1.0}),
                                            ("rbf", {"gamma": "scale"})])
@pytest.mark.parametrize("C, epsilon", [(1.0, 0.1), (10.0, 0.5), (0.1, 0.0)])
def test_matches_libsvm(kernel, params, C, epsilon):
    X, y = _data()
    problem = cl.SVR(X, y, C=C, epsilon=epsilon, kernel=kernel, **params)
    sol = problem.solve()
    assert sol.status == "optimal", sol.report.summary()
    ref = SkSVR(kernel=kernel, C=C, epsilon=epsilon, tol=1e-12, **params).fit(X, y)
    error = assert_matches_libsvm(problem, sol, ref, _data(seed=5)[0][:20])
    if kernel == "rbf" and C <= 1.0:      # where LIBSVM is accurate, so is the comparison
        assert error <= 1e-6
    if kernel == "linear" and error <= 1e-6:
        np.testing.assert_allclose(sol.w, ref.coef_[0], rtol=0,
                                   atol=1e-6 * np.max(np.abs(ref.coef_)))
    dual = problem.solve("exact-dual")
    assert dual.status == "optimal"
    f = problem.decision_function(sol)
    np.testing.assert_allclose(problem.decision_function(dual), f, rtol=0,
                               atol=1e-7 * np.max(np.abs(f)))


def test_the_tube_conditions_hold_per_sample_and_fail_on_a_moved_intercept():
    X, y = _data()
    problem = cl.SVR(X, y, C=2.0, epsilon=0.3, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    view = problem.tube(sol)
    assert np.max(view["violation"]) == 0.0
    assert view["inside"].size and view["outside"].size
    assert view["upper_edge"].size + view["lower_edge"].size == sol.report.free.size
    np.testing.assert_array_equal(sol.dual_coef[view["inside"]], 0.0)
    r = y - problem.decision_function(sol)
    np.testing.assert_array_equal(sol.dual_coef[view["outside"]],
                                  2.0 * np.sign(r[view["outside"]]))
    moved = cl.Solution(w=None, b=sol.b + 0.05, dual_coef=sol.dual_coef)
    assert np.max(problem.tube(moved)["violation"]) > 0
    # a solution with dual_coef only: the certificate rebuilds (a+, a-) from it
    assert problem.certificate(cl.Solution(w=None, b=sol.b, dual_coef=sol.dual_coef)).passed


def test_primal_objective_and_the_cvxpy_primal_agree():
    X, y = _data(n=60)
    problem = cl.SVR(X, y, C=3.0, epsilon=0.2, kernel="linear")
    sol = problem.solve()
    assert abs(problem.primal_objective(sol) - sol.objective) <= 1e-10 * sol.objective
    form = problem.primal_formulation()
    form.problem.solve(solver="CLARABEL")
    np.testing.assert_allclose(form.variables["w"].value, sol.w, atol=1e-6)
    assert abs(form.variables["b"].value - sol.b) <= 1e-6


def test_liblinear_penalized_bias_is_the_problem_without_intercept_on_x_and_s():
    # LinearSVR: min 1/2 (||w||^2 + w_b^2) + C sum max(0, |y - X w - s w_b| - eps),
    # intercept_ = s w_b: cl.SVR without intercept on [X, s], linear kernel
    X, y = _data(n=80)
    s = 2.0
    ref = LinearSVR(C=1.0, epsilon=0.1, loss="epsilon_insensitive", intercept_scaling=s,
                    tol=1e-12, max_iter=10**6, dual=True).fit(X, y)
    mine = cl.SVR(np.c_[X, np.full(len(y), s)], y, C=1.0, epsilon=0.1, kernel="linear",
                  intercept=False)
    sol = mine.solve()
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.w[:-1], ref.coef_, rtol=0, atol=1e-6)
    assert abs(s * sol.w[-1] - ref.intercept_[0]) <= 1e-6


def test_precomputed_kernel_gives_the_same_answer():
    X, y = _data(n=60)
    rbf = cl.SVR(X, y, C=1.0, epsilon=0.1, kernel="rbf", gamma=0.5)
    K = rbf.kernel(X, X)
    pre = cl.SVR(K, y, C=1.0, epsilon=0.1, kernel="precomputed")
    a, b = rbf.solve(), pre.solve()
    np.testing.assert_allclose(pre.decision_function(b), rbf.decision_function(a), atol=1e-9)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"epsilon": -0.1}, ParameterError, "epsilon must be >= 0"),
    ({"C": 0.0}, ParameterError, "C must be a positive"),
    ({"C": -1.0}, ParameterError, "C must be a positive"),
    ({"C": np.inf}, ParameterError, "C must be a positive finite"),
])
def test_bad_parameters_are_refused(kwargs, error, match):
    X, y = _data(n=10)
    with pytest.raises(error, match=match):
        cl.SVR(X, y, **kwargs)


def test_class_labels_are_refused_but_numeric_labels_are_targets():
    X, _ = _data(n=10)
    with pytest.raises(DataError, match="regressor.*cl.SVM"):
        cl.SVR(X, np.array(["a", "b"] * 5))
    with pytest.raises(DataError, match="regressor"):
        cl.SVR(X, np.arange(10) % 2 == 0)
    assert cl.SVR(X, np.arange(10) % 2, kernel="linear").solve().status == "optimal"
    with pytest.raises(DataError, match="X has 10 samples"):
        cl.SVR(X, np.zeros(9))


@pytest.mark.parametrize("C, gamma", [(100.0, 5.0), (1.0, 0.5)])
def test_a_free_set_too_large_to_factorize_is_finished_by_smo(monkeypatch, C, gamma):
    # The route resumes SMO to cert_tol / 1000 instead of polishing when the factorization
    # of the free set is estimated to cost more than SMO's run (here: any free set, at a
    # flop rate of 1); the nearly interpolating fit (C=100, gamma=5: every support vector
    # free) then certifies on SMO's own point, the other one after the polish; both equal
    # the polished answer and LIBSVM's.
    import convexlearn.solvers.kernel_svm.certified_qp as route
    X, y = _data()
    monkeypatch.setattr(route, "_FACTOR_RATE", 1.0)
    problem = cl.SVR(X, y, C=C, epsilon=0.1, kernel="rbf", gamma=gamma)
    sol = problem.solve()
    assert sol.status == "optimal" and len(sol.provenance["smo_tol"]) >= 2
    assert sol.provenance["smo_tol"][1] <= 1e-11 * max(1.0, np.max(np.abs(y)) + 0.1)
    monkeypatch.setattr(route, "_FACTOR_RATE", np.inf)       # never: the polish as before
    polished = cl.SVR(X, y, C=C, epsilon=0.1, kernel="rbf", gamma=gamma).solve()
    assert polished.status == "optimal" and polished.provenance["polished"]
    assert len(polished.provenance["smo_tol"]) == 1
    f = problem.decision_function(sol)
    np.testing.assert_allclose(problem.decision_function(polished), f, rtol=0,
                               atol=1e-8 * np.max(np.abs(f)))
    ref = SkSVR(kernel="rbf", C=C, epsilon=0.1, gamma=gamma, tol=1e-12).fit(X, y)
    assert_matches_libsvm(problem, sol, ref, _data(seed=5)[0][:20])
    if C == 100.0:
        alpha = sol.alpha
        assert not sol.provenance["polished"] and np.all(alpha[alpha > 0] < C)
