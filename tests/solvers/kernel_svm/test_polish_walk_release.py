"""The ratio walk's releases (polish_walk._release): a walk given ``release_tol`` frees
again the multipliers it fixed whose gradient points into the box, and ends at the
optimum of the box QP on its block (the rest fixed), which cuts the polish's rounds."""

import numpy as np
import pytest
from scipy.linalg import lapack
from test_polish_walk import _face, _problem

import convexlearn as cl
from convexlearn.solvers.kernel_svm import certified_smo, polish_walk
from convexlearn.solvers.kernel_svm.polish_walk import ratio_walk


def _block_kkt_violation(K, E, walked, free, b, rest, target, lo, hi):
    """The largest violation of the block's KKT conditions at (walked, b): |gradient| on
    the free entries, the gradient pointing into the box on the fixed ones (gradient =
    K beta + rest + E b - target, beta at lo wants it >= 0, at hi <= 0)."""
    grad = K @ walked + rest + E @ b - target
    at_lo, at_hi = ~free & (walked <= lo), ~free & (walked >= hi)
    assert np.all(at_lo | at_hi | free)
    return max(float(np.max(np.abs(grad[free]), initial=0.0)),
               float(np.max(-grad[at_lo], initial=0.0)), float(np.max(grad[at_hi], initial=0.0)))


def _walks(seed, compiled, release_tol):
    K, E, beta, rest, target, lo, hi = _problem(True, seed, k=60)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    factor, info = lapack.dpotrf(K, lower=False, clean=True)
    assert info == 0
    out = ratio_walk(K, factor, E, beta, rest, target, E.T @ beta, lo, hi, x0 - beta,
                     compiled=compiled, release_tol=release_tol)
    return (K, E, rest, target, lo, hi), out


@pytest.mark.parametrize("compiled", [False, True])
def test_a_walk_with_releases_ends_at_the_optimum_of_its_block(compiled):
    unreleased = 0
    for seed in range(6):
        (K, E, rest, target, lo, hi), (walked, free, steps, b) = _walks(seed, compiled, 1e-9)
        assert b is not None
        assert np.all((walked >= lo) & (walked <= hi))
        assert _block_kkt_violation(K, E, walked, free, b, rest, target, lo, hi) <= 1e-8
        # without releases the walk stops on the first face whose solution is in the box
        _, (w0, f0, _, b0) = _walks(seed, compiled, None)
        if b0 is not None and _block_kkt_violation(K, E, w0, f0, b0, rest, target, lo,
                                                   hi) > 1e-6:
            unreleased += 1
    assert unreleased >= 2          # the releases do something on these problems


def test_no_release_allowed_is_the_plain_walk(monkeypatch):
    monkeypatch.setattr(polish_walk, "RELEASES", 0)
    for seed in range(3):
        _, (w1, f1, s1, _) = _walks(seed, False, 1e-9)
        _, (w0, f0, s0, _) = _walks(seed, False, None)
        np.testing.assert_array_equal(f1, f0)
        np.testing.assert_array_equal(w1, w0)
        assert s1 == s0


def _rounds(monkeypatch, releases):
    """The polish's rounds (kernel products of the margin check) on rbf gamma = 10,
    make_blobs(2000, random_state=0), and the solution."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(2000, centers=2, random_state=0)
    monkeypatch.setattr(polish_walk, "RELEASES", releases)
    calls = []
    products = certified_smo.SMOColumns.products

    def counted(self, B):
        calls.append(1)
        return products(self, B)

    monkeypatch.setattr(certified_smo.SMOColumns, "products", counted)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=10.0)
    sol = svm.solve()
    monkeypatch.setattr(certified_smo.SMOColumns, "products", products)
    return len(calls), svm, sol


def test_releases_cut_the_polish_rounds_and_the_answer_certifies(monkeypatch):
    rounds, svm, sol = _rounds(monkeypatch, polish_walk.RELEASES)
    assert sol.status == "optimal" and sol.provenance["route"] == "exact-smo"
    assert sol.report.relative_gap <= 1e-9
    assert rounds <= 9                  # 14 without releases (below)
    # the certificate is recomputed from the data: a perturbed answer fails it
    alpha = sol.alpha.copy()
    free = np.flatnonzero((alpha > 0) & (alpha < 1.0))
    alpha[free[0]] += 1e-6 if alpha[free[0]] < 0.5 else -1e-6
    perturbed = svm.kkt(type(sol)(**{**sol.__dict__, "alpha": alpha}), tol=1e-9)
    assert not (perturbed.passed and perturbed.relative_gap <= 1e-9)
    plain, _, sol0 = _rounds(monkeypatch, 0)
    assert sol0.status == "optimal" and plain >= 12
