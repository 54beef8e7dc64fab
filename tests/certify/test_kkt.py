"""The KKT report: passes on exact solutions, fails (naming condition and samples) on perturbed ones."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import convexlearn as cl
from convexlearn.certify.kkt import CONDITIONS
from helpers import binary_dataset


def _problem(kernel="linear", C=1.0, intercept=True, **params):
    X, y = binary_dataset("iris", (1, 2))
    return cl.SVM(X, y, C=C, kernel=kernel, intercept=intercept, **params)


@pytest.fixture(scope="module")
def linear_case():
    svm = _problem()
    return svm, svm.solve()


def test_exact_solution_passes_with_small_gap(linear_case):
    svm, sol = linear_case
    report = svm.kkt(sol)
    assert report.passed and report.max_violation <= 1e-6
    assert report.relative_gap <= 1e-6
    assert set(report.residuals) <= set(CONDITIONS)
    assert report.disagreements.size == 0
    assert np.array_equal(np.union1d(report.free, report.bounded), report.support)


def test_report_lists_every_condition_that_applies():
    soft = _problem().solve().report
    assert set(soft.residuals) == set(CONDITIONS)
    homogeneous = _problem(intercept=False).solve().report
    assert "balance" not in homogeneous.residuals
    X, y = binary_dataset("iris", (0, 1))
    hard = cl.SVM(X, y, C=None).solve().report
    assert "complementary_slack" not in hard.residuals and "slack_nonnegativity" not in hard.residuals
    assert hard.bounded.size == 0


def test_moving_a_non_support_multiplier_breaks_complementary_slackness(linear_case):
    svm, sol = linear_case
    report = svm.kkt(sol)
    outside = int(np.flatnonzero(report.margins > 1.5)[0])
    alpha = sol.alpha.copy()
    alpha[outside] = 0.5 * svm.C
    bad = dataclasses.replace(sol, alpha=alpha)
    broken = svm.kkt(bad)
    assert not broken.passed
    violated = {name: samples for name, _, samples in broken.violations()}
    assert outside in violated["complementary_margin"]
    assert "stationarity" in violated                      # w no longer equals sum alpha y x
    assert outside in broken.disagreements
    assert "complementary_margin violated at samples" in broken.summary()


def test_shifting_b_breaks_the_margin_conditions(linear_case):
    svm, sol = linear_case
    broken = svm.kkt(dataclasses.replace(sol, b=sol.b + 0.05))
    names = [name for name, _, _ in broken.violations()]
    assert not broken.passed and "complementary_margin" in names


def test_scaling_w_breaks_stationarity_and_the_gap(linear_case):
    svm, sol = linear_case
    broken = svm.kkt(dataclasses.replace(sol, w=1.01 * sol.w))
    names = [name for name, _, _ in broken.violations()]
    assert "stationarity" in names and "duality_gap" in names


def test_alpha_above_C_is_dual_infeasible(linear_case):
    svm, sol = linear_case
    alpha = sol.alpha.copy()
    i = int(sol.report.bounded[0])
    alpha[i] = 1.5 * svm.C
    violated = {name: s for name, _, s in svm.kkt(dataclasses.replace(sol, alpha=alpha)).violations()}
    assert i in violated["dual_feasibility"]


def test_kernel_perturbation_fails():
    svm = _problem("rbf", C=1.0, gamma=0.5)
    sol = svm.solve()
    assert sol.report.passed
    beta = sol.dual_coef.copy()
    beta[sol.report.free[0]] *= 1.2
    broken = svm.kkt(dataclasses.replace(sol, dual_coef=beta))
    assert not broken.passed
    assert "stationarity" in [name for name, _, _ in broken.violations()]



@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("field", ["b", "xi"])
def test_a_nan_intercept_or_slack_fails_the_report(kernel, field):
    # Python's max() skips a NaN that comes after a number: a NaN b (every margin NaN)
    # passed the report with max_violation ~1e-16 (found in review)
    svm = _problem(kernel, C=1.0)
    sol = svm.solve()
    assert sol.report.passed
    if field == "b":
        broken = dataclasses.replace(sol, b=float("nan"))
    else:
        xi = sol.xi.copy()
        xi[0] = np.nan
        broken = dataclasses.replace(sol, xi=xi)
    report = svm.kkt(broken)
    assert not report.passed
    assert np.isnan(report.max_violation)


@pytest.mark.parametrize("make", [
    lambda X, y: cl.SVM(X, y, C=1.0, loss="squared_hinge"),
    lambda X, y: cl.SVR(X, X[:, 0], C=1.0, epsilon=0.1, kernel="rbf")],
    ids=["squared-hinge", "svr-qp"])
def test_a_nan_intercept_fails_the_other_reports(make):
    # the same max() over residuals in certify/squared_hinge.py and certify/qp_kkt.py
    X, y = binary_dataset("iris", (1, 2))
    problem = make(X, y)
    sol = problem.solve(method="exact")
    assert sol.report.passed
    broken = dataclasses.replace(sol, b=float("nan"))
    report = (problem.kkt if hasattr(problem, "kkt") else problem.certificate)(broken)
    assert not report.passed

def test_primal_only_solution_gets_reconstructed_multipliers(linear_case):
    svm, sol = linear_case
    primal_only = cl.Solution(w=sol.w, b=sol.b)
    report = svm.kkt(primal_only)
    assert report.passed, report.summary()
    assert any("reconstructed" in note for note in report.notes)
    np.testing.assert_allclose(report.alpha, sol.alpha, atol=1e-5)
    worse = svm.kkt(cl.Solution(w=0.9 * sol.w, b=sol.b))
    assert not worse.passed


def test_kernel_hinge_form_without_multipliers_is_certified():
    svm = _problem("poly", C=1.0, gamma=0.5, coef0=1.0, degree=2)
    sol = svm.solve("exact-primal-hinge")
    assert sol.status == "optimal", sol.report.summary()


def _random_problem(seed, n=24, d=3):
    rng = np.random.default_rng(seed)
    y = np.repeat([-1.0, 1.0], n // 2)
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None]
    return X, y


@given(seed=st.integers(0, 10_000), C=st.sampled_from([0.1, 1.0, 10.0]))
def test_property_permutation_invariance(seed, C):
    X, y = _random_problem(seed)
    perm = np.random.default_rng(seed + 1).permutation(len(y))
    a = cl.SVM(X, y, C=C).solve()
    b = cl.SVM(X[perm], y[perm], C=C).solve()
    assert b.objective == pytest.approx(a.objective, rel=1e-8)
    np.testing.assert_allclose(b.w, a.w, atol=1e-6)
    if a.report.free.size:          # b is unique only when a multiplier is free
        assert b.b == pytest.approx(a.b, abs=1e-6)
    else:                           # otherwise any b of the interval is optimal: both pass
        assert a.report.passed and b.report.passed


@given(seed=st.integers(0, 10_000), C=st.sampled_from([0.1, 1.0, 10.0]))
def test_property_label_flip_negates_the_hyperplane(seed, C):
    X, y = _random_problem(seed)
    a = cl.SVM(X, y, C=C).solve()
    b = cl.SVM(X, -y, C=C).solve()
    assert b.objective == pytest.approx(a.objective, rel=1e-8)
    np.testing.assert_allclose(b.w, -a.w, atol=1e-6)
    assert b.b == pytest.approx(-a.b, abs=1e-6)


@given(seed=st.integers(0, 10_000), C=st.sampled_from([0.1, 1.0, 10.0]),
       kernel=st.sampled_from(["linear", "rbf"]))
def test_property_strong_duality_and_stationarity(seed, C, kernel):
    X, y = _random_problem(seed)
    svm = cl.SVM(X, y, C=C, kernel=kernel, gamma=0.5)
    primal, dual = svm.solve("exact-primal", polish=False), svm.solve("exact-dual", polish=False)
    assert primal.objective == pytest.approx(dual.objective, rel=1e-7)
    # P(w(alpha), b) = D(alpha) wherever the point is certified. An uncertified interior point
    # can miss it (seed=1000, C=0.1: an alpha at C(1 - 1e-5) counted free shifts b by 2e-5,
    # and its report fails at 1.7e-5); the polished reference must always meet it.
    if dual.report.passed:
        assert svm.dual_objective(dual.alpha) == pytest.approx(svm.primal_objective(dual),
                                                               rel=1e-6)
    reference = svm.solve()
    assert reference.report.passed
    assert svm.dual_objective(reference.alpha) == pytest.approx(
        svm.primal_objective(reference), rel=1e-9)
    if kernel == "linear":
        np.testing.assert_allclose(dual.w, X.T @ (y * dual.alpha), atol=1e-12)
        np.testing.assert_allclose(primal.w, X.T @ (y * primal.alpha), atol=1e-6)


@given(seed=st.integers(0, 10_000), t=st.sampled_from([0.25, 4.0, 9.0]))
def test_property_C_scaling_law(seed, t):
    # P*(X / sqrt(t), C) = t P*(X, C / t) and alpha*(X / sqrt(t), C) = t alpha*(X, C / t):
    # substitute w = sqrt(t) u in 1/2 ||w||^2 + C sum hinge(<w, x>/sqrt(t) + b).
    X, y = _random_problem(seed)
    C = 2.0
    scaled = cl.SVM(X / np.sqrt(t), y, C=C).solve()
    base = cl.SVM(X, y, C=C / t).solve()
    assert scaled.objective == pytest.approx(t * base.objective, rel=1e-7)
    np.testing.assert_allclose(scaled.alpha, t * base.alpha, atol=1e-6 * C)


def test_one_product_when_the_expansion_is_y_alpha_gives_the_two_column_report():
    """kkt_report forms K beta once when beta == y * alpha (the dual solvers' expansion);
    the report equals the one from the two-column product, and a perturbed answer fails."""
    from convexlearn.certify.kkt import kkt_report
    X, y = binary_dataset("wine", classes=(1, 2))
    svm = cl.SVM(X, y, C=2.0, kernel="rbf")
    sol = svm.solve()
    assert np.array_equal(sol.dual_coef, svm.y * sol.alpha)
    one = kkt_report(svm, sol, tol=1e-6)
    beta = np.asarray(sol.dual_coef, float)
    two = kkt_report(svm, sol, tol=1e-6,
                     products=svm.gram_products(np.column_stack([beta, svm.y * sol.alpha])))
    assert one.passed and two.passed
    assert one.residuals["stationarity"] == 0.0
    assert one.relative_gap == pytest.approx(two.relative_gap, abs=1e-15)
    np.testing.assert_allclose(one.margins, two.margins, rtol=1e-13, atol=1e-13)
    bad = dataclasses.replace(sol, dual_coef=beta * (1 + 1e-3), report=None)
    worse = kkt_report(svm, bad, tol=1e-6)       # beta != y alpha: both columns again
    assert not worse.passed and worse.residuals["stationarity"] > 1e-4
