"""The dual QP's KKT report (certify/qp_kkt.py): the gap is the sum of the per-variable
terms, the verdict is free of units, it agrees with the C-SVC's own report, and the
epsilon-SVR tube view sorts the samples."""

import numpy as np

import convexlearn as cl
from convexlearn.certify.qp_kkt import qp_kkt_report, tube_kkt
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp


def _svr(c=1.0, seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return cl.SVR(X, c * y, C=c * 2.0, epsilon=c * 0.1, kernel="rbf", gamma=0.7)


def test_the_gap_is_the_sum_of_the_per_variable_terms_at_a_feasible_point():
    problem = _svr()
    qp = problem.dual_qp()
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 2.0, size=qp.n)
    a[qp.n // 2:] *= a[:qp.n // 2].sum() / a[qp.n // 2:].sum()     # s^T a = 0
    a = np.clip(a, 0, 2.0)
    g = qp.expansion_products(a)
    b = 0.3
    report = qp_kkt_report(qp.signs, qp.target, qp.upper, a, g, b, rows=qp.equality)
    terms = report.residuals["complementarity"] * report.scales["s_a"] * report.scales["s_G"]
    imbalance = float(qp.signs @ a)
    assert abs(report.duality_gap - (terms.sum() - b * imbalance)) <= 1e-10 * terms.sum()
    assert not report.passed and report.relative_gap > 1e-3


def test_the_verdict_is_free_of_units():
    # (y, eps, C) -> c (y, eps, C): the same problem, beta and b times c
    base, scaled = _svr(1.0), _svr(1e4)
    sol = base.solve()
    moved = cl.Solution(w=None, alpha=1e4 * sol.alpha, b=1e4 * sol.b)
    other = scaled.certificate(moved)
    mine = base.certificate(cl.Solution(w=None, alpha=sol.alpha, b=sol.b))
    assert other.passed and mine.passed
    assert abs(other.relative_gap - mine.relative_gap) <= 1e-12
    assert abs(other.max_violation - mine.max_violation) <= 1e-12
    np.testing.assert_array_equal(other.free, mine.free)


def test_on_the_c_svc_qp_it_agrees_with_the_svm_report():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=50) > 0, 1, -1)
    svm = cl.SVM(X, y, C=1.5, kernel="rbf", gamma=1.0)
    sol = svm.solve()
    qp = c_svc_qp(svm)
    g = qp.expansion_products(sol.alpha)
    report = qp_kkt_report(qp.signs, qp.target, qp.upper, sol.alpha, g, sol.b,
                           rows=qp.equality)
    assert report.passed
    assert abs(report.primal_objective - sol.report.primal_objective) <= 1e-9 * sol.objective
    np.testing.assert_array_equal(report.free, sol.report.free)
    assert not qp_kkt_report(qp.signs, qp.target, qp.upper, sol.alpha, g, sol.b + 1e-6,
                             rows=qp.equality).passed


def test_the_tube_view_sorts_samples_and_flags_wrong_coefficients():
    r = np.array([0.0, 0.1, -0.1, 0.5, -0.5])
    coef = np.array([0.0, 0.4, -1.0, 1.0, -1.0])
    view = tube_kkt(r, coef, 0.1, 1.0)
    assert view["inside"].tolist() == [0] and view["upper_edge"].tolist() == [1]
    assert view["lower_edge"].tolist() == [2] and view["outside"].tolist() == [3, 4]
    assert np.all(view["violation"] == 0)
    wrong = tube_kkt(r, np.array([0.2, -0.1, 0.3, 0.5, -1.0]), 0.1, 1.0)["violation"]
    np.testing.assert_allclose(wrong, [0.2, 0.1, 0.3, 0.5, 0.0])
    both = tube_kkt(np.array([0.0]), np.array([-0.7]), 0.0, 1.0)     # eps = 0: any sign
    assert both["violation"][0] == 0
