"""Active-set polishing: it repairs a wrong active set in both directions, and never lies."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.solvers.kernel_svm.polish import intercept_from_alpha, polish_alpha
from helpers import binary_dataset


@pytest.fixture(scope="module")
def problem():
    X, y = binary_dataset("wine", (0, 1))
    svm = cl.SVM(X, y, C=0.5, kernel="rbf", gamma=0.05)
    return svm, svm.solve("exact-dual")     # the interior point, which the polish refines


def _polished_report(svm, alpha):
    out = polish_alpha(svm.y, svm.C_bounds, alpha, svm.intercept, svm.kernel_block)
    assert out is not None
    return svm.kkt(svm.from_alpha(*out))


def test_polish_restores_a_free_support_vector_set_to_zero(problem):
    svm, sol = problem
    alpha = sol.alpha.copy()
    dropped = sol.report.free[:2]
    alpha[dropped] = 0.0                          # primal side: margins now violated
    assert not svm.kkt(svm.from_alpha(alpha)).passed
    report = _polished_report(svm, alpha)
    assert report.passed, report.summary()
    np.testing.assert_allclose(report.alpha, sol.alpha, atol=1e-8)


def test_polish_moves_a_wrongly_bounded_multiplier(problem):
    svm, sol = problem
    alpha = sol.alpha.copy()
    alpha[sol.report.free[0]] = svm.C             # dual side: a free SV pinned at C
    report = _polished_report(svm, alpha)
    assert report.passed, report.summary()


def test_solve_keeps_the_better_point_and_says_so(problem):
    svm, sol = problem
    assert sol.provenance["polished"] is True
    assert sol.report.max_violation <= sol.provenance["unpolished_max_violation"]
    raw = svm.solve("exact-dual", polish=False)
    assert raw.provenance["polished"] is False


def test_intercept_without_free_support_vectors_is_the_interval_midpoint():
    # No free support vector: the KKT conditions only bound b, from both sides.
    y = np.array([-1.0, 1.0, 1.0])
    alpha = np.array([0.0, 1.0, 0.0])
    g = np.array([0.5, -2.0, 3.0])
    b, rule = intercept_from_alpha(y, 1.0, alpha, g)
    # alpha_0 = 0, y=-1: b <= -1 - 0.5; alpha_1 = C, y=+1: b <= 1 + 2; alpha_2 = 0, y=+1: b >= 1 - 3
    assert rule == "midpoint of the feasible interval"
    assert b == pytest.approx(0.5 * (-2.0 + -1.5))
