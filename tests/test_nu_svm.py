"""cl.NuSVM and cl.NuSVR: certified answers, the cvxpy formulations, scikit-learn's
NuSVC / NuSVR through the conversions of docs/conventions.md, and bad input."""

import copy

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import NuSVC, NuSVR

import convexlearn as cl
from convexlearn.errors import DataError, ParameterError


def _data(seed=0, n=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, "yes", "no")
    z = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, y, z


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b)))


def _full(ref, n):
    out = np.zeros(n)
    out[ref.support_] = ref.dual_coef_[0]
    return out


# LIBSVM caches Q in float32 (Qfloat): its answer moves by ~cond x 6e-8. The comparisons
# on kernels computed from X use parameters where that stays below 1e-6 (nu-SVC with
# C = 1 / r of a few units); at nu = 0.25 on these data (C = 1 / r ~ 1500) NuSVC's decision
# values move by 2e-4 while the same problem on a float32-exact Gram matrix agrees to
# 1e-6 (test_dual_coef_matches_libsvm_where_its_float32_cache_is_exact).
@pytest.mark.parametrize("nu", [0.5, 0.7])
def test_nu_svm_is_certified_and_matches_nusvc(nu):
    X, y, _ = _data()
    problem = cl.NuSVM(X, y, nu=nu, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9
    assert sol.provenance["route"] == "exact-smo"
    ref = NuSVC(nu=nu, kernel="rbf", gamma=0.5, tol=1e-12).fit(X, y)
    assert _rel(problem.decision_function(sol, X), ref.decision_function(X)) <= 1e-6
    assert abs(sol.b - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))
    np.testing.assert_array_equal(problem.predict(sol, X), ref.predict(X))
    # new samples
    Xt = np.random.default_rng(9).normal(size=(20, 2))
    assert _rel(problem.decision_function(sol, Xt), ref.decision_function(Xt)) <= 1e-6


@pytest.mark.parametrize("nu", [0.25, 0.5])
def test_dual_coef_matches_libsvm_where_its_float32_cache_is_exact(nu):
    X, y, z = _data(0)
    K = (rbf_kernel(X, gamma=0.5) + 0.01 * np.eye(len(X))).astype(np.float32).astype(float)
    sol = cl.NuSVM(K, y, nu=nu, kernel="precomputed").solve()
    ref = NuSVC(nu=nu, kernel="precomputed", tol=1e-12).fit(K, y)
    assert _rel(sol.dual_coef, _full(ref, len(y))) <= 1e-6
    assert abs(sol.b - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))
    reg = cl.NuSVR(K, z, C=2.0, nu=0.3, kernel="precomputed").solve()
    ref = NuSVR(C=2.0, nu=0.3, kernel="precomputed", tol=1e-12).fit(K, z)
    assert _rel(reg.dual_coef, _full(ref, len(z))) <= 1e-6
    assert abs(reg.b - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))


@pytest.mark.parametrize("C,nu", [(1.0, 0.5), (0.5, 0.2)])
def test_nu_svr_is_certified_and_matches_nusvr(C, nu):
    X, _, z = _data(2)
    problem = cl.NuSVR(X, z, C=C, nu=nu, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9
    ref = NuSVR(C=C, nu=nu, kernel="rbf", gamma=0.5, tol=1e-12).fit(X, z)
    assert _rel(problem.predict(sol, X), ref.predict(X)) <= 1e-6
    assert abs(sol.b - ref.intercept_[0]) <= 1e-6 * max(1.0, abs(ref.intercept_[0]))
    # per sample, in the tube's terms, with the tube's own width
    tube = problem.tube(sol)
    assert tube["violation"].max() <= 1e-9 and tube["upper_edge"].size > 0
    outside = tube["outside"].size
    assert outside <= nu * len(z) + 1e-9        # nu bounds the fraction outside the tube


def test_the_formulations_agree_with_the_exact_answers():
    X, y, z = _data(3, n=40)
    problem = cl.NuSVM(X, y, nu=0.4, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    # (CLARABEL: cvxpy's default for a QP, OSQP, stops at ~1e-4 here)
    assert abs(problem.primal().solve(solver="CLARABEL") - sol.objective) <= 1e-6 * abs(
        sol.objective)
    assert abs(problem.dual().solve(solver="CLARABEL") - sol.report.dual_objective) <= 1e-6 * abs(
        sol.objective)
    via_dual = problem.solve("exact-dual")
    assert via_dual.status == "optimal"
    np.testing.assert_allclose(via_dual.dual_coef, sol.dual_coef, atol=1e-8)
    reg = cl.NuSVR(X, z, C=2.0, nu=0.4, kernel="linear")
    s = reg.solve()
    assert abs(reg.primal().solve(solver="CLARABEL") - s.objective) <= 1e-6 * abs(s.objective)
    assert abs(reg.dual().solve(solver="CLARABEL") - s.report.dual_objective) <= 1e-6 * abs(
        s.objective)
    np.testing.assert_allclose(s.w, X.T @ s.dual_coef)


def test_the_conversions_name_the_equal_c_svc_and_epsilon_svr():
    # nu-SVC's answer is the C-SVC's with C = 1 / r; nu-SVR's the epsilon-SVR's with the
    # epsilon it found (docs/conventions.md)
    X, y, z = _data(4, n=60)
    sol = cl.NuSVM(X, y, nu=0.5, kernel="rbf", gamma=0.5).solve()
    svc = cl.SVM(X, y, C=sol.extra["C_equivalent"], kernel="rbf", gamma=0.5).solve()
    np.testing.assert_allclose(svc.dual_coef, sol.dual_coef, atol=1e-7 * sol.extra["C_equivalent"])
    assert abs(svc.b - sol.b) <= 1e-7
    reg = cl.NuSVR(X, z, C=1.5, nu=0.5, kernel="rbf", gamma=0.5).solve()
    eps = cl.SVR(X, z, C=1.5, epsilon=reg.extra["epsilon"], kernel="rbf", gamma=0.5).solve()
    np.testing.assert_allclose(eps.dual_coef, reg.dual_coef, atol=1e-7)
    assert abs(eps.b - reg.b) <= 1e-7


def test_a_perturbed_answer_fails_the_certificate():
    X, y, z = _data(5, n=60)
    problem = cl.NuSVM(X, y, nu=0.5, kernel="rbf", gamma=0.5)
    sol = problem.solve()
    assert problem.certificate(sol).passed
    moved = copy.deepcopy(sol)
    moved.b += 1e-5
    assert not problem.certificate(moved).passed
    scaled = copy.deepcopy(sol)
    scaled.dual_coef = scaled.dual_coef * (1 + 1e-6)
    assert not problem.certificate(scaled).passed
    reg = cl.NuSVR(X, z, C=1.0, nu=0.5, kernel="rbf", gamma=0.5)
    s = reg.solve()
    assert reg.certificate(s).passed
    wider = copy.deepcopy(s)
    wider.extra["epsilon"] += 1e-5
    assert not reg.certificate(wider).passed


@pytest.mark.parametrize("nu", [0.0, -0.1, 1.0000001, 2, float("nan"), [0.5]])
def test_nu_outside_its_interval_is_refused(nu):
    X, y, z = _data(6, n=20)
    with pytest.raises(ParameterError, match=r"nu"):
        cl.NuSVM(X, y, nu=nu)
    with pytest.raises(ParameterError, match=r"nu"):
        cl.NuSVR(X, z, nu=nu)


def test_nu_beyond_the_class_balance_names_the_bound():
    X, _, _ = _data(7, n=20)
    y = np.r_[np.ones(5), -np.ones(15)]          # 2 min(n+, n-) / n = 0.5
    cl.NuSVM(X, y, nu=0.5)
    with pytest.raises(ParameterError, match=r"2 min\(n\+, n-\) / n = 0\.5"):
        cl.NuSVM(X, y, nu=0.51)
    with pytest.raises(ValueError, match="infeasible"):           # the anchor agrees
        NuSVC(nu=0.51).fit(X, y)


def test_labels_that_are_not_two_classes_and_targets_that_are_labels():
    X, _, z = _data(8, n=30)
    with pytest.raises(DataError, match="3 classes"):
        cl.NuSVM(X, np.arange(30) % 3, nu=0.2)
    with pytest.raises(DataError, match="one class"):
        cl.NuSVM(X, np.ones(30), nu=0.2)
    with pytest.raises(DataError, match="regressor"):
        cl.NuSVR(X, np.where(z > 0, "up", "down"))
    with pytest.raises(ParameterError, match="C"):
        cl.NuSVR(X, z, C=0.0)
