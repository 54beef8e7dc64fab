"""Units do not change a verdict of the SVM certificate, and its repr is a few lines.

X -> c X with C -> C / c^2 is the same problem (alpha -> alpha / c^2, w -> w / c, b
unchanged); K -> s K with C -> C / s likewise for a kernel expansion. The stationarity
residual subtracts two sums of n terms that cancel, so its round-off is relative to
those terms: it is scaled by them (certify/kkt.py), not by max(1, ||w||), which passed
1e5 X at C = 1 and failed X at C = 1e10 (residual 4.9e-6 with a gap of 1.4e-16).
"""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.solution import Solution


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    n, d = 400, 5
    X = np.vstack([rng.normal(size=(n // 2, d)) + 1.0, rng.normal(size=(n // 2, d)) - 1.0])
    y = np.r_[np.ones(n // 2), -np.ones(n // 2)]
    return X, y


def _rescaled(sol: Solution, alpha_factor: float, w_factor: float) -> Solution:
    return Solution(w=None if sol.w is None else sol.w * w_factor, b=sol.b,
                    alpha=sol.alpha * alpha_factor,
                    dual_coef=None if sol.dual_coef is None else sol.dual_coef * alpha_factor)


def test_the_verdict_of_a_linear_svm_does_not_depend_on_units(blobs):
    X, y = blobs
    c = 1e5
    small = cl.SVM(c * X, y, C=1.0)
    sol = small.solve()
    assert sol.status == "optimal"
    large = cl.SVM(X, y, C=1.0 * c**2)            # the same problem in other units
    mapped = _rescaled(sol, c**2, c)
    before, after = small.kkt(sol), large.kkt(mapped)
    assert before.passed and after.passed
    for name, value in before.worst().items():
        assert after.worst()[name] == pytest.approx(value, rel=1e-6, abs=1e-14), name
    # solved in these units directly, it is certified too (it was "inaccurate")
    assert large.solve().status == "optimal"


def test_the_verdict_of_a_kernel_expansion_does_not_depend_on_units(blobs):
    X, y = blobs
    K = cl.SVM(X, y, kernel="rbf", gamma=0.2).gram
    s = 1e10
    unit = cl.SVM(K, y, C=1e3, kernel="precomputed")
    sol = unit.solve()
    scaled = cl.SVM(s * K, y, C=1e3 / s, kernel="precomputed")
    before, after = unit.kkt(sol), scaled.kkt(_rescaled(sol, 1.0 / s, 1.0))
    assert before.passed == after.passed
    assert after.worst()["stationarity"] == pytest.approx(before.worst()["stationarity"],
                                                          rel=1e-3, abs=1e-15)


def test_a_wrong_w_still_fails_the_certificate(blobs):
    # At C = 1e10 the sums that cancel in stationarity are 1e11 times ||w||: that row can
    # only see w to the round-off of those sums. A w off by 1e-5 is caught by the rows that
    # recompute margins from it (complementary slackness, the duality gap).
    X, y = blobs
    svm = cl.SVM(X, y, C=1e10)
    sol = svm.solve()
    wrong = svm.kkt(Solution(w=sol.w * (1 + 1e-5), b=sol.b, alpha=sol.alpha))
    assert not wrong.passed
    assert {name for name, *_ in wrong.violations()} == {"complementary_margin",
                                                         "duality_gap"}
    # at C = 1 (a few hundred ||w|| in the sums), multipliers that do not explain w to
    # 1e-3 fail stationarity itself
    unit = cl.SVM(X, y, C=1.0)
    sol = unit.solve()
    off = Solution(w=sol.w, b=sol.b, alpha=sol.alpha * (1 + 1e-3))
    assert unit.kkt(off).worst()["stationarity"] > 1e-6


def test_the_report_repr_is_a_few_lines():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    report = svm.solve().report
    text = repr(report)
    assert len(text) < 300 and text.count("\n") == 0
    assert "passed" in text and "max violation" in text
    assert report.margins.shape == (60,)             # the arrays stay there to inspect
