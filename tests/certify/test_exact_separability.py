"""Exact separability verdicts: touching hulls under float affine maps, iris [1, 3].

Before the exact simplex (convexlearn.certify.exact_lp) 112 of these 200 cases and the
iris case came back verified=False. All 200 run in the suite (about 5 s).
"""

from fractions import Fraction

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.certify import exact_lp
from convexlearn.certify.exact_lp import exact_verdict

# Base configurations whose hulls meet in exactly one point (exact small rationals).
TOUCHING = [
    # segments in a T: B's end point (1, 0) is inside A's segment
    (np.array([[0, 0], [2, 0.]]), np.array([[1, 0], [1, 1.]])),
    # triangles sharing a vertex
    (np.array([[0, 0], [1, 0], [0, 1.]]), np.array([[0, 0], [-1, -0.5], [-0.5, -1.]])),
    # a vertex of B on an edge of A
    (np.array([[0, 0], [1, 0], [0, 1.]]), np.array([[0.5, 0.5], [1, 1], [2, 0.5]])),
    # tetrahedron and a triangle touching at a face's centroid-like point (3-D)
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.]]),
     np.array([[0.25, 0.25, 0.5], [1, 1, 1], [2, 1, 1.5]])),
]


def touching_case(rng):
    """Two hulls meeting in one point, mapped by a random float affine map (the float
    data are the exact rationals they are: the map's rounding decides the truth)."""
    A, B = TOUCHING[rng.integers(len(TOUCHING))]
    d = A.shape[1]
    M = rng.normal(size=(d, d)) * 10 ** rng.uniform(-3, 3)
    t = rng.normal(size=d) * 10 ** rng.uniform(-3, 3)
    X = np.vstack([A, B]) @ M.T + t
    y = np.r_[np.ones(len(A)), -np.ones(len(B))]
    return X, y


def exact_margins(X, y, w, b):
    return [Fraction(int(s)) * (sum(Fraction(float(xj)) * wj for xj, wj in zip(x, w)) + b)
            for x, s in zip(X, y)]


def test_touching_hulls_all_proven():
    rng = np.random.default_rng(2026)
    verdicts = []
    for _ in range(200):
        X, y = touching_case(rng)
        res = cl.Halfspace(X, y).check(margin=False, slack=False)
        assert res.verified, res.summary()
        proof = [c for c in res.checks if c.arithmetic == "exact" and c.passed]
        assert proof, res.summary()
        verdicts.append(res.separable)
    # Both verdicts occur: the float maps break the touching point either way.
    assert 0 < sum(verdicts) < 200


def test_iris_versicolor_virginica_proven():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    keep = y > 0
    res = cl.Halfspace(X[keep][:, [1, 3]], y[keep]).check(margin=False)
    assert not res.separable and res.verified
    lam = res.checks[-1].exact
    # Independent exact recheck of the certificate, in Fractions.
    Xs, ys = X[keep][:, [1, 3]], np.where(y[keep] == 2, 1, -1)
    assert all(v >= 0 for v in lam)
    assert sum(v for v, s in zip(lam, ys) if s > 0) == 1 == sum(v for v, s in zip(lam, ys) if s < 0)
    for j in range(2):
        assert sum(v * s * Fraction(float(x)) for v, s, x in zip(lam, ys, Xs[:, j])) == 0


@pytest.mark.parametrize("seed", range(20))
def test_exact_verdict_agrees_with_fraction_recheck(seed):
    rng = np.random.default_rng(seed)
    X, y = touching_case(rng)
    hom = bool(seed % 2)
    v = exact_verdict(X, y, homogeneous=hom)
    assert v.check.passed
    if v.separable:
        b = Fraction(0) if hom else v.b
        assert min(exact_margins(X, y, v.w, b)) >= 1
    else:
        assert all(c >= 0 for c in v.lam) and any(c > 0 for c in v.lam)


def test_exact_verdict_from_a_wrong_hint_still_decides():
    # A hint far from the optimal basis: the single artificial makes it feasible.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    cold = exact_verdict(X, y)
    warm = exact_verdict(X, y, hint=[0, 1, 2, 3, 4])
    assert cold.separable and warm.separable and cold.check.passed and warm.check.passed


def test_beyond_the_size_limit_the_verdict_is_unproven(monkeypatch):
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    keep = y > 0
    monkeypatch.setattr(exact_lp, "EXACT_LP_MAX_ENTRIES", 5)
    res = cl.Halfspace(X[keep][:, [1, 3]], y[keep]).check(margin=False, slack=False)
    assert not res.verified      # the float lambda fails its exact check
    assert any("UNPROVEN" in note for note in res.notes)
    assert "NOT PROVEN" in res.summary()
