"""The base of the QP problems (convexlearn.qp_problem): the certified route, the fallback,
the certificate recomputed from the data, the solution file, on epsilon-SVR and the
one-class SVM."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import ParameterError


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


PROBLEMS = {
    "svr": lambda: cl.SVR(*_data(), C=2.0, epsilon=0.1, kernel="rbf", gamma=0.5),
    "one-class": lambda: cl.OneClassSVM(_data()[0], nu=0.3, kernel="rbf", gamma=0.5),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_exact_routes_agree_and_are_certified(name):
    problem = PROBLEMS[name]()
    smo = problem.solve()
    assert smo.status == "optimal" and smo.provenance["route"] == "exact-smo"
    assert smo.report.passed and smo.report.relative_gap <= 1e-9 and smo.report.tol == 1e-9
    dual = problem.solve("exact-dual")
    assert dual.status == "optimal" and dual.provenance["route"] == "exact-dual"
    scale = np.max(np.abs(problem.decision_function(smo)))
    np.testing.assert_allclose(problem.decision_function(dual),
                               problem.decision_function(smo), rtol=0, atol=1e-7 * scale)
    assert abs(smo.objective - dual.objective) <= 1e-9 * abs(smo.objective)


@pytest.mark.parametrize("name", PROBLEMS)
def test_the_cvxpy_primal_and_dual_reach_the_certified_objective(name):
    problem = PROBLEMS[name]()
    sol = problem.solve()
    primal, dual = problem.primal(), problem.dual()
    primal.solve(solver="CLARABEL")
    dual.solve(solver="CLARABEL")
    P = sol.report.primal_objective
    assert abs(primal.value - P) <= 1e-6 * abs(P)
    assert abs(dual.value - sol.report.dual_objective) <= 1e-6 * abs(P)


@pytest.mark.parametrize("name", PROBLEMS)
def test_the_certificate_fails_on_a_perturbed_answer(name):
    problem = PROBLEMS[name]()
    sol = problem.solve()
    free = sol.report.free
    assert free.size >= 2
    moved = cl.Solution(w=None, alpha=sol.alpha.copy(), b=sol.b)
    moved.alpha[free[0]] += 1e-4        # breaks the row and the free variable's balance
    assert not problem.certificate(moved).passed
    shifted = cl.Solution(w=None, alpha=sol.alpha, b=sol.b + 1e-5, dual_coef=sol.dual_coef)
    report = problem.certificate(shifted)
    assert not report.passed and report.worst()["complementarity"] > 1e-9
    coef = cl.Solution(w=None, alpha=sol.alpha, b=sol.b, dual_coef=sol.dual_coef + 1e-6)
    report = problem.certificate(coef)
    assert not report.passed and report.worst()["expansion"] > 1e-9
    assert "NOT CERTIFIED" in report.summary() and "expansion" in report.summary()


@pytest.mark.parametrize("name", PROBLEMS)
def test_a_saved_solution_certifies_after_load_and_another_problem_refuses_it(name, tmp_path):
    problem = PROBLEMS[name]()
    sol = problem.solve()
    loaded = cl.load(sol.save(tmp_path / "sol.json"))
    assert problem.certificate(loaded).passed
    np.testing.assert_array_equal(problem.decision_function(loaded),
                                  problem.decision_function(sol))
    X, y = _data(seed=1)
    other = (cl.SVR(X, y, C=2.0, epsilon=0.1, kernel="rbf", gamma=0.5) if name == "svr"
             else cl.OneClassSVM(X, nu=0.3, kernel="rbf", gamma=0.5))
    with pytest.raises(ParameterError, match="another problem"):
        other.certificate(sol)


def test_smo_alone_is_libsvm_like_and_certified_at_its_own_tolerance():
    problem = PROBLEMS["svr"]()
    sol = problem.solve("smo", tol=1e-3)
    assert sol.method == "smo" and sol.report.tol == 1e-3
    assert sol.status in ("optimal", "inaccurate")
    exact = problem.solve()
    gap = abs(sol.report.primal_objective - exact.objective) / exact.objective
    assert gap <= 1e-2
    with pytest.raises(ParameterError, match="unknown method"):
        problem.solve("dcd")


def test_repr_and_new_samples():
    problem = PROBLEMS["one-class"]()
    assert repr(problem).startswith("<one-class SVM (nu=0.3")
    sol = problem.solve()
    X_new = np.random.default_rng(3).normal(size=(5, 3))
    f = problem.decision_function(sol, X_new)
    K = problem.kernel(X_new, problem.X)
    np.testing.assert_allclose(f, K @ sol.dual_coef + sol.b, rtol=1e-12, atol=1e-12)
