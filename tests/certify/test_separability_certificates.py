"""The independent verifier: true certificates pass (float and exact), tampered ones fail."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import convexlearn as cl
from convexlearn.certify.separability import (verify, verify_certificate,
                                              verify_certificate_exact, verify_hyperplane,
                                              verify_hyperplane_exact, verify_result)
from convexlearn.errors import DataError
from helpers import binary_dataset

XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([1.0, 1.0, -1.0, -1.0])


def iris_pair(classes):
    X, y = binary_dataset("iris", classes, standardized=False)
    res = cl.Halfspace(X, y).check(margin=False, slack=False)
    return X, res.label_map.to_signed(y), res


def test_true_hyperplane_passes_and_exact_rescales_to_margins_ge_1():
    X, y, res = iris_pair((0, 1))
    assert verify_hyperplane(X, y, res.w, res.b).passed
    exact = verify_hyperplane_exact(X, y, res.w, res.b)
    assert exact.passed
    w, b = exact.exact
    margins = [int(y[i]) * (sum(Fraction(float(X[i, j])) * w[j] for j in range(X.shape[1])) + b)
               for i in range(X.shape[0])]
    assert min(margins) == 1          # rescaled by the smallest exact margin


@pytest.mark.parametrize("target", [-1.0, 0.5])
def test_tampered_hyperplane_fails(target):
    X, y, res = iris_pair((0, 1))
    i = int(np.argmin(y * (X @ res.w + res.b)))
    b = target * y[i] - X[i] @ res.w          # sample i now has margin `target` < 1
    float_check = verify_hyperplane(X, y, res.w, b)
    assert not float_check.passed and "functional margin" in float_check.message
    exact = verify_hyperplane_exact(X, y, res.w, b)
    if target < 0:      # wrong side: no rescaling can save it
        assert not exact.passed and "does not separate" in exact.message
    else:               # still separates strictly: the exact check proves separability after
        assert exact.passed   # rescaling, though (w, b) itself breaks the margin-1 contract


def test_hyperplane_with_wrong_length_fails_cleanly():
    X, y, res = iris_pair((0, 1))
    check = verify_hyperplane(X, y, res.w[:-1], res.b)
    assert not check.passed and "length" in check.message


def test_true_certificate_passes_float_and_exact():
    X, y, res = iris_pair((1, 2))
    assert verify_certificate(X, y, res.certificate).passed
    exact = verify_certificate_exact(X, y, res.certificate)
    assert exact.passed, exact.message
    lam = exact.exact
    assert all(v >= 0 for v in lam)
    for j in range(X.shape[1]):
        assert sum(lam[i] * int(y[i]) * Fraction(float(X[i, j])) for i in range(len(y))) == 0


def test_noisy_certificate_is_projected_back_exactly():
    rng = np.random.default_rng(0)
    X, y, res = iris_pair((1, 2))
    noisy = res.certificate * (1 + 1e-9 * rng.standard_normal(len(y)))
    assert verify_certificate(X, y, noisy).passed
    assert verify_certificate_exact(X, y, noisy).passed


@pytest.mark.parametrize("tamper", ["scale", "move", "negative", "zero"])
def test_tampered_certificate_fails(tamper):
    X, y, res = iris_pair((1, 2))
    lam = res.certificate.copy()
    support = np.flatnonzero(lam > 0)
    if tamper == "scale":             # class sums no longer 1
        lam[support[0]] *= 1.5
        expected = "normalization"
    elif tamper == "move":            # weight moved to another sample of the same class
        i = support[0]
        j = next(k for k in range(len(y)) if y[k] == y[i] and k not in support)
        lam[j], lam[i] = lam[i], 0.0
        expected = "balance"
    elif tamper == "negative":
        lam[support[0]] = -lam[support[0]]
        j = next(k for k in range(len(y)) if y[k] == y[support[0]] and k not in support)
        lam[j] = 2 * abs(lam[support[0]])
        expected = "sign"
    else:
        lam[:] = 0.0
        expected = None
    check = verify_certificate(X, y, lam)
    assert not check.passed
    if expected:
        assert check.residuals[expected] > check.tol, check
    assert not verify_certificate_exact(X, y, lam).passed


def test_float_check_is_approximate_exact_check_is_a_proof():
    # The -1 point sits 1e-12 below the segment of the +1 points: separable, but the
    # lambda that pretends the hulls meet is within float tolerance. (The 4th point gives
    # the second column a spread of 1: the float check measures the balance on centred
    # data, so without it a column of spread 2^-40 would expose the fake at once.)
    X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, -2.0 ** -40], [0.0, 1.0]])
    y = np.array([1.0, 1.0, -1.0, 1.0])
    fake = np.array([0.5, 0.5, 1.0, 0.0])
    float_check = verify_certificate(X, y, fake)
    assert float_check.passed and float_check.margin_bound < 1e-11
    assert not verify_certificate_exact(X, y, fake).passed
    # HiGHS's verdict (within its 1e-7 tolerances) is "not separable": the exact check
    # catches it, and the result says the verdict is unproven instead of claiming it.
    res = cl.Halfspace(X, y).check(margin=False)
    if not res.separable:
        assert not res.verified
        assert [c.passed for c in res.checks] == [True, False]
        assert "NOT PROVEN" in res.summary()
    else:
        assert res.verified


def test_homogeneous_certificate():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, 1.0, -1.0])
    lam = np.array([3.0, 3.0, 0.0])          # any positive scale: checked after normalizing
    assert verify_certificate(X, y, lam, homogeneous=True).passed
    exact = verify_certificate_exact(X, y, lam, homogeneous=True)
    assert exact.passed and exact.exact == [Fraction(1, 2), Fraction(1, 2), 0]
    assert not verify_certificate(X, y, lam, homogeneous=False).passed  # class sums 2 and 0
    assert not verify_certificate(X, y, np.zeros(3), homogeneous=True).passed


def test_verify_dispatch_and_errors():
    checks = verify(XOR_X, XOR_Y, lam=np.full(4, 0.5))
    assert [c.arithmetic for c in checks] == ["float", "exact"] and all(c.passed for c in checks)
    assert [c.arithmetic for c in verify(XOR_X, XOR_Y, lam=np.full(4, 0.5), exact=False)] == ["float"]
    with pytest.raises(DataError, match="exactly one certificate"):
        verify(XOR_X, XOR_Y)
    with pytest.raises(DataError, match=r"\{-1, \+1\}"):
        verify(XOR_X, [0, 1, 0, 1], lam=np.full(4, 0.5))
    with pytest.raises(DataError, match="b = 0"):
        verify(XOR_X, XOR_Y, w=[1.0, 1.0], b=1.0, homogeneous=True)
    assert "FAILED" in str(verify_certificate(XOR_X, XOR_Y, np.ones(4)))


@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(3, 14), st.booleans(),
       st.sampled_from(["cvxpy", "highspy"]))
def test_every_returned_certificate_passes_float_and_exact(seed, d, n, homogeneous, backend):
    rng = np.random.default_rng(seed)
    X = rng.integers(-4, 5, size=(n, d)).astype(float) / 4 + rng.standard_normal((n, d))
    y = rng.choice([-1.0, 1.0], size=n)
    y[:2] = [1.0, -1.0]
    res = cl.Halfspace(X, y, intercept=not homogeneous).check(margin=False, slack=False,
                                                            backend=backend)
    assert res.verified, res.summary()
    checks = verify_result(X, y, res, exact=True)
    assert [c.arithmetic for c in checks] == ["float", "exact"]
    assert all(c.passed for c in checks), "\n".join(map(str, checks))
    # ...and tampering with the returned certificate breaks it
    if res.separable:
        i = int(np.argmin(y * (X @ res.w + res.b)))
        w_bad = res.w - 3 * y[i] * X[i] / max(X[i] @ X[i], 1e-12)
        b_bad = res.b - (0.0 if homogeneous else 3 * y[i])
        assert not verify_hyperplane(X, y, w_bad, b_bad).passed
    else:
        lam = res.certificate.copy()
        lam[np.argmax(lam)] *= 0.5
        assert not verify_certificate(X, y, lam, homogeneous=homogeneous).passed
        assert not verify_certificate_exact(X, y, lam, homogeneous=homogeneous).passed


def test_one_balance_serves_float_and_exact_arithmetic():
    # sum_i lambda_i y_i x_i and the class sums: the same routine in floats and, on the
    # dyadic integers of the same numbers, exactly (the exact checks' arithmetic)
    from convexlearn.certify.separability import balance, class_sums, dyadic
    rng = np.random.default_rng(7)
    X, lam = rng.standard_normal((9, 3)), rng.random(9)
    y = np.where(rng.random(9) > 0.5, 1.0, -1.0)
    NX, EX = dyadic(X)
    NL, EL = dyadic(lam)
    exact = balance(NL, y, NX)
    assert exact.dtype == object and all(isinstance(v, int) for v in exact)
    as_float = np.array([float(Fraction(int(v), 1 << (EX + EL))) for v in exact])
    np.testing.assert_allclose(balance(lam, y, X), as_float, rtol=1e-12, atol=1e-15)
    sums = class_sums(NL, y, homogeneous=False)
    assert [Fraction(int(v), 1 << EL) for v in sums] == [
        sum(Fraction(v) for v, s in zip(lam, y) if s > 0),
        sum(Fraction(v) for v, s in zip(lam, y) if s < 0)]
    assert class_sums(lam, y, homogeneous=True)[0] == pytest.approx(lam.sum())
