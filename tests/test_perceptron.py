"""The Rosenblatt perceptron: the mistake bound T <= R^2 B^2, statuses, the update rule."""

from __future__ import annotations

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.certify.separability import verify_hyperplane_exact
from convexlearn.errors import DataError, ParameterError
from convexlearn.perceptron import mistake_bound, perceptron
from convexlearn.solvers.linear_svm.perceptron import perceptron_pass

XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([1, 1, -1, -1])


def separable_set(seed):
    """A random linearly separable set with a guaranteed gap around a random hyperplane."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(10, 80)), int(rng.integers(1, 6))
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0)
    w = rng.standard_normal(d)
    f = X @ w - np.median(X @ w) + 1e-9           # both classes present
    gap = rng.uniform(0.05, 0.5) * np.linalg.norm(w)
    X += (np.sign(f) * gap)[:, None] * w / (w @ w)      # push each point away from the plane
    return X, np.where(f >= 0, 1, -1)


def naive_perceptron(Xe, y, max_epochs):
    """Textbook loop, one sample at a time (reference for the blocked implementation)."""
    w, T = np.zeros(Xe.shape[1]), 0
    for _ in range(max_epochs):
        mistakes = 0
        for x, label in zip(Xe, y):
            if label * (w @ x) <= 0:
                w = w + label * x
                mistakes += 1
        T += mistakes
        if mistakes == 0:
            break
    return w, T


@pytest.mark.parametrize("seed", range(22))
def test_mistake_bound_holds_on_random_separable_sets(seed):
    X, y = separable_set(seed)
    sol = perceptron(X, y, max_epochs=10_000, shuffle=bool(seed % 2), seed=seed)
    assert sol.status == "converged"
    T, R, B = sol.extra["updates"], sol.extra["R"], sol.extra["B"]
    assert T >= 1 and T <= R ** 2 * B ** 2 and sol.extra["bound_holds"]
    # R and B recomputed independently: R from the data, 1/B = the homogeneous max margin
    Xe = np.hstack([np.ones((len(y), 1)), X])
    assert R == pytest.approx(np.linalg.norm(Xe, axis=1).max())
    hs = cl.Halfspace(Xe, y, intercept=False).check(slack=False)
    assert hs.separable and hs.verified
    assert B == pytest.approx(1 / hs.margin, rel=1e-6)
    # the returned hyperplane separates the training data (exactly, over Q)
    assert verify_hyperplane_exact(X, np.where(y > 0, 1.0, -1.0), sol.w, sol.b).passed


def test_blocked_updates_equal_the_textbook_loop():
    for seed in range(3):
        X, y = separable_set(100 + seed)
        X = np.vstack([X] * 6)            # longer than one block of 256 rows
        y = np.concatenate([y] * 6)
        sol = perceptron(X, y, max_epochs=10_000, bound=False, seed=seed)
        w_ref, T_ref = naive_perceptron(np.hstack([np.ones((len(y), 1)), X]), y, 10_000)
        assert sol.extra["updates"] == T_ref
        np.testing.assert_array_equal(np.r_[sol.b, sol.w], w_ref)


def test_perceptron_pass_updates_in_place():
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    w = np.zeros(2)
    assert perceptron_pass(Z, w, block=2) == 2     # rows 0 and 1 are mistakes, row 2 is not
    np.testing.assert_array_equal(w, [1.0, 1.0])


def test_non_separable_stops_with_clear_status():
    sol = perceptron(XOR_X, XOR_Y, max_epochs=37)
    assert sol.status == "not converged"
    assert sol.n_iter == 37 and len(sol.history) == 37
    assert np.all(sol.history["mistakes"] >= 1)
    assert "bound" not in sol.extra                 # no bound claimed without convergence


def test_homogeneous_variant_and_intercept_convention():
    X, y = separable_set(5)
    sol = perceptron(X, y, intercept=True)
    w_ref, _ = naive_perceptron(np.hstack([np.ones((len(y), 1)), X]), y, 1000)
    assert sol.b == w_ref[0]
    rng = np.random.default_rng(0)
    Xh = rng.standard_normal((30, 3))
    yh = np.where(Xh @ np.array([1.0, -2.0, 0.5]) >= 0, 1, -1)
    hom = perceptron(Xh, yh, intercept=False)
    assert hom.status == "converged" and hom.b == 0.0
    R, B = mistake_bound(Xh, yh, intercept=False)
    assert hom.extra["R"] == R and hom.extra["updates"] <= R * R * B * B


def test_callback_can_stop_and_sees_each_epoch():
    """callback(t, w, value), like every iterative method: epoch, weights, mistakes."""
    seen = []

    def cb(t, w, value):
        seen.append((t, w, value))
        w[:] = np.nan                     # a copy: the run must not see this
        return t < 3

    sol = perceptron(XOR_X, XOR_Y, max_epochs=100, callback=cb)
    assert sol.status == "stopped" and sol.n_iter == 3
    assert [t for t, _, _ in seen] == [1, 2, 3]
    assert [v for _, _, v in seen] == list(sol.history["mistakes"]) and seen[0][2] > 0
    assert np.all(np.isfinite(sol.w)) and seen[-1][1].shape == (3,)   # (b, w): intercept first
    # Stopping by return value only on False; a mistake-free epoch still converges.
    X, y = separable_set(5)
    quiet = perceptron(X, y, bound=False, callback=lambda t, w, v: None)
    ref = perceptron(X, y, bound=False)
    np.testing.assert_array_equal(quiet.w, ref.w)
    last = []
    done = perceptron(X, y, bound=False, callback=lambda t, w, v: last.append((t, w)) or False)
    assert done.n_iter == 1 and done.status == "stopped"     # w = 0: epoch 1 has mistakes
    np.testing.assert_array_equal(last[0][1], np.r_[done.b, done.w])


def test_shuffle_is_reproducible_with_seed():
    X, y = separable_set(11)
    a = perceptron(X, y, shuffle=True, seed=4, bound=False)
    b = perceptron(X, y, shuffle=True, seed=4, bound=False)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.extra["updates"] == b.extra["updates"]


def test_bad_input():
    with pytest.raises(ParameterError, match="max_epochs"):
        perceptron(XOR_X, XOR_Y, max_epochs=0)
    with pytest.raises(ParameterError, match="warm_start"):
        perceptron(XOR_X, XOR_Y, warm_start=[0.0, 0.0])
    with pytest.raises(DataError, match="one class"):
        perceptron(XOR_X, [1, 1, 1, 1])
    with pytest.raises(DataError, match="non-finite"):
        perceptron([[np.nan, 0.0], [1.0, 1.0]], [0, 1])
