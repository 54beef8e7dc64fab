"""The compiled pass of the KKT report (certify/kkt_kernels.py) against its numpy
reference (certify/kkt.svm_kkt_rows): the same rows bit for bit, the same index sets, on
soft and hard margins, given and optimal slacks, NaN, and boundary cases of every set."""

from __future__ import annotations

import numpy as np
import pytest

from convexlearn.certify import kkt_kernels
from convexlearn.certify.kkt import svm_kkt, svm_kkt_rows
from convexlearn.certify.kkt_kernels import kkt_pass


def _case(seed: int, n: int, hard: bool, use_xi: bool, weighted: bool):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    C = (rng.uniform(0.5, 2.0, n) if weighted else np.full(n, 3.0)) if not hard \
        else np.full(n, np.inf)
    top = 5.0 if hard else C
    # a mix of exact zeros, exact bounds, free values, tiny negatives and overshoots
    kind = rng.integers(0, 5, n)
    alpha = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                      [0.0, np.where(np.isfinite(top), top, 5.0), rng.uniform(0, 1, n) * 2,
                       -1e-9], np.where(np.isfinite(top), top, 5.0) * (1 + 1e-7))
    m = np.select([kind == 0, kind == 1, kind == 2],
                  [1.0 + rng.uniform(-0.5, 2.0, n), rng.uniform(-1.0, 1.0, n),
                   1.0 + rng.normal(0, 1e-7, n)], 1.0)
    f = y * m
    xi = np.maximum(0.0, 1.0 - m) + (rng.normal(0, 1e-8, n) if use_xi else 0.0)
    s_a = max(1.0, float(np.max(alpha))) if hard else float(np.max(C))
    return y, C, alpha, f, xi, use_xi and not hard, hard, s_a


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("use_xi", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("tol", [1e-6, 1e-2])
def test_compiled_pass_equals_numpy_reference(hard, use_xi, weighted, tol):
    for seed in range(3):
        args = _case(seed, 257, hard, use_xi, weighted)
        got = kkt_pass(*args, tol)
        want = svm_kkt_rows(*args, tol)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_nan_propagates_as_numpy():
    args = list(_case(1, 40, False, False, False))
    args[3] = args[3].copy()
    args[3][7] = np.nan
    got, want = kkt_pass(*args, 1e-6), svm_kkt_rows(*args, 1e-6)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert np.isnan(got[3][0])


def test_report_same_either_way(monkeypatch):
    """The whole report (verdict, residuals, sets) is the same through either pass, and
    fails on a perturbed answer through either."""
    y, C, alpha, f, xi, use_xi, hard, _ = _case(4, 300, False, True, True)
    reports = []
    for ready in (False, True):
        monkeypatch.setattr(kkt_kernels, "_allowed", [ready])
        monkeypatch.setattr("convexlearn.certify.kkt.compiled_ready",
                            lambda ready=ready: ready)
        reports.append(svm_kkt(y, C, True, alpha, f, 4.0, 3.0, 1e-12, xi=xi, tol=1e-6))
    a, b = reports
    assert (a.passed, a.max_violation, a.relative_gap) == (b.passed, b.max_violation,
                                                           b.relative_gap)
    assert a.residuals.keys() == b.residuals.keys()
    for key in a.residuals:
        np.testing.assert_array_equal(a.residuals[key], b.residuals[key])
    for name in ("support", "free", "bounded", "margin_support", "disagreements", "margins"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not a.passed           # the case has overshoots and negatives: a failing report
