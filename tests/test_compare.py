"""cl.compare: objective gap, ||w - w*||, decision-function difference, support sets."""

import numpy as np
import pytest
from helpers import binary_dataset

import convexlearn as cl


@pytest.fixture(scope="module")
def linear():
    X, y = binary_dataset("wine", (0, 1))
    svm = cl.SVM(X, y, C=1.0)
    return svm, svm.solve()


def test_identical_solutions_compare_equal(linear):
    svm, exact = linear
    cmp = cl.compare(exact, exact, svm)
    assert cmp.objective_gap == 0.0 and cmp.relative_gap == 0.0
    assert cmp.w_distance == 0.0 and cmp.decision_difference == 0.0
    assert cmp.same_support and cmp.support_difference == 0


def test_perturbed_solution_is_measured(linear):
    svm, exact = linear
    delta = np.zeros_like(exact.w)
    delta[0] = 0.3
    other = cl.Solution(w=exact.w + delta, b=exact.b - 0.2, method="perturbed")
    other.objective = svm.primal_objective(other)
    other.report = svm.kkt(other, tol=1e-6)
    cmp = cl.compare(exact, other, svm)
    # relative to the larger of the two objectives (never to an absolute 1)
    assert cmp.objective_gap > 0 and cmp.relative_gap == pytest.approx(
        (other.objective - exact.objective) / max(exact.objective, other.objective))
    assert cmp.w_distance == pytest.approx(0.3) and cmp.b_difference == pytest.approx(0.2)
    f_diff = np.abs(svm.X @ delta - 0.2)
    assert cmp.decision_difference == pytest.approx(f_diff.max())
    assert not cmp.same_support
    assert cmp.support_difference == cmp.only_in_reference.size + cmp.only_in_other.size > 0
    assert "perturbed vs" in cmp.summary()


def test_kernel_solutions_compare_by_decision_function():
    X, y = binary_dataset("iris", (1, 2))
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    exact = svm.solve()
    smo = svm.solve(method="smo", tol=1e-3)
    cmp = cl.compare(exact, smo, svm)
    assert cmp.w_distance is None
    f = svm.decision_function(smo) - svm.decision_function(exact)
    assert cmp.decision_difference == pytest.approx(np.abs(f).max())
    assert 0 < cmp.decision_difference < 0.05      # tol 1e-3 is close, not exact


def test_missing_reports_without_problem(linear):
    svm, exact = linear
    bare = cl.Solution(w=exact.w, b=exact.b, objective=exact.objective, method="bare")
    cmp = cl.compare(exact, bare)
    assert cmp.same_support is None and cmp.decision_difference is None
    assert any("no KKT report" in n for n in cmp.notes)
    # with the problem, the missing report is computed
    assert cl.compare(exact, bare, svm).same_support is not None


def test_objectives_compared_are_primal_even_for_an_unpolished_dual():
    # The exact-dual solution's own objective is the dual value D(alpha) <= P*: comparing
    # it with a primal value gave a negative "gap" (the dual solution looked better).
    X, y = binary_dataset("wine", (0, 1))
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    dual = svm.solve("exact-dual", polish=False)
    primal = svm.solve("exact-primal")
    assert dual.objective == pytest.approx(dual.report.dual_objective, rel=1e-15)
    assert dual.report.primal_objective != dual.objective
    cmp = cl.compare(primal, dual, svm)
    assert cmp.objective_other == dual.report.primal_objective
    assert cmp.objective_reference == primal.report.primal_objective
    assert cmp.relative_gap <= 1e-8


def test_a_dual_value_without_report_is_named_in_the_notes():
    X, y = binary_dataset("wine", (0, 1))
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    smo = svm.solve("smo")
    bare = svm.solve("exact-dual", polish=False)
    bare.report = None
    cmp = cl.compare(smo, bare)                        # no problem: P cannot be computed
    assert cmp.objective_other == bare.objective
    assert any("dual value D(alpha)" in n for n in cmp.notes)
    assert not any("dual value" in n for n in cl.compare(smo, bare, svm).notes)


def test_erm_comparison_says_why_support_sets_are_absent():
    X, y = binary_dataset("wine", (0, 1))
    erm = cl.ERM(X, y, loss="logistic", penalty="l2", lam=0.1)
    cmp = cl.compare(erm.solve("exact"), erm.solve("newton"), erm)
    assert cmp.relative_gap <= 1e-9
    assert any("no KKT report (support vectors are an SVM notion)" in n for n in cmp.notes)
