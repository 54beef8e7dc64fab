"""The loss catalogue: values, derivatives, curvature, cvxpy expressions, kinks."""

import math

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, strategies as st

from convexlearn.errors import NotApplicableError, ParameterError
from convexlearn.losses import LOSSES, make_loss

F = np.linspace(-3, 3, 25)
Y = np.where(np.arange(25) % 2 == 0, 1.0, -1.0)
DIFF = [n for n, l in LOSSES.items() if l.differentiable]
CONVEX = [n for n, l in LOSSES.items() if l.convex]


def test_values_follow_the_definitions():
    m = Y * F
    expected = {
        "hinge": np.maximum(0, 1 - m), "squared_hinge": np.maximum(0, 1 - m) ** 2,
        "logistic": np.log(1 + np.exp(-m)), "logistic_log2": np.log2(1 + np.exp(-m)),
        "exponential": np.exp(-m), "perceptron": np.maximum(0, -m),
        "squared_classification": (Y - F) ** 2, "squared": (Y - F) ** 2,
        "zero_one": (np.where(F >= 0, 1, -1) != Y).astype(float),
        # the robust regression losses at their defaults (quantile 0.5, epsilon 0.1, delta 1)
        "absolute": np.abs(Y - F), "quantile": 0.5 * np.abs(Y - F),
        "epsilon_insensitive": np.maximum(np.abs(Y - F) - 0.1, 0.0),
        "huber": np.where(np.abs(Y - F) <= 1, 0.5 * (Y - F) ** 2, np.abs(Y - F) - 0.5),
    }
    assert set(expected) == set(LOSSES)
    for name, value in expected.items():
        np.testing.assert_allclose(LOSSES[name].value(Y, F), value, rtol=1e-13, err_msg=name)


def test_logistic_is_stable_at_extreme_margins():
    y, f = np.array([1.0, -1.0, 1.0]), np.array([-1000.0, -1000.0, 1000.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        v = LOSSES["logistic"].value(y, f)
        d = LOSSES["logistic"].derivative(y, f)
    np.testing.assert_allclose(v, [1000.0, 0.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(d, [-1.0, 0.0, -0.0], atol=1e-300)


def test_logistic_fast_forms_equal_logaddexp_and_expit():
    # value, derivative and curvature use exp(-|m|) once each (vectorized ufuncs); they must
    # equal the textbook stable forms to round-off on every scale, infinities included.
    from scipy.special import expit
    m = np.concatenate([-np.geomspace(1e-300, 1e300, 301)[::-1], [0.0],
                        np.geomspace(1e-300, 1e300, 301), [-np.inf, np.inf]])
    y, loss = np.ones_like(m), LOSSES["logistic"]
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        v, d, h = loss.value(y, m), loss.derivative(y, m), loss.hessian(y, m)
    np.testing.assert_allclose(v, np.logaddexp(0.0, -m), rtol=4e-16, atol=0)
    # The derivative flushes sigma(-m) < 2.3e-308 (m > 709.78: subnormal) to exactly 0.
    np.testing.assert_allclose(d, -expit(-m), rtol=4e-16, atol=2.3e-308)
    assert np.all(d[m > 709.79] == 0.0)
    finite = np.isfinite(m)
    np.testing.assert_allclose(h[finite], (expit(m) * expit(-m))[finite], rtol=1e-15, atol=0)
    assert np.all(h[~finite] == 0.0)


@pytest.mark.parametrize("name", DIFF)
def test_derivatives_match_finite_differences(name):
    loss, h = LOSSES[name], 1e-6
    f = F + 0.013     # off the kinks
    fd = (loss.value(Y, f + h) - loss.value(Y, f - h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(Y, f), fd, rtol=1e-6, atol=1e-7)
    if loss.has_hessian:
        fd2 = (loss.derivative(Y, f + h) - loss.derivative(Y, f - h)) / (2 * h)
        np.testing.assert_allclose(loss.hessian(Y, f), fd2, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", [n for n in DIFF if LOSSES[n].curvature is not None])
def test_curvature_bounds_the_second_derivative(name):
    loss = LOSSES[name]
    f = np.linspace(-20, 20, 2001)
    for y in (1.0, -1.0):
        d = loss.derivative(np.full_like(f, y), f)
        slopes = np.abs(np.diff(d) / np.diff(f))
        assert slopes.max() <= loss.curvature * (1 + 1e-9)
        assert slopes.max() >= 0.99 * loss.curvature      # and it is tight


@pytest.mark.parametrize("name", CONVEX)
def test_cvxpy_expression_equals_the_numpy_value(name):
    loss = LOSSES[name]
    f = cp.Constant(F)
    np.testing.assert_allclose(loss.cvxpy(Y, f).value, loss.value(Y, F), rtol=1e-10)
    assert loss.cvxpy(Y, cp.Variable(25)).is_convex()


@given(st.floats(-5, 5), st.floats(-5, 5), st.sampled_from([1.0, -1.0]),
       st.sampled_from(CONVEX))
def test_subgradient_inequality(f0, f1, y, name):
    loss = LOSSES[name]
    y_, a, b = np.array([y]), np.array([f0]), np.array([f1])
    g = loss.derivative(y_, a)
    assert loss.value(y_, b)[0] >= loss.value(y_, a)[0] + g[0] * (f1 - f0) - 1e-9


def test_subdifferential_at_the_kinks():
    hinge, perc = LOSSES["hinge"], LOSSES["perceptron"]
    y = np.array([1.0, -1.0, 1.0])
    lo, hi = hinge.subdifferential(y, np.array([1.0, -1.0 + 1e-9, 3.0]), kink_tol=1e-6)
    np.testing.assert_array_equal(lo, [-1.0, 0.0, 0.0])
    np.testing.assert_array_equal(hi, [0.0, 1.0, 0.0])
    lo, hi = perc.subdifferential(y, np.array([0.0, 0.0, -1.0]))
    np.testing.assert_array_equal(lo, [-1.0, 0.0, -1.0])
    np.testing.assert_array_equal(hi, [0.0, 1.0, -1.0])


def test_variants_and_conventions():
    np.testing.assert_allclose(LOSSES["logistic_log2"].value(Y, F),
                               LOSSES["logistic"].value(Y, F) / math.log(2))
    assert LOSSES["logistic_log2"].value(np.array([1.0]), np.array([0.0]))[0] == 1.0
    # sign(0) = +1 for the zero-one loss.
    np.testing.assert_array_equal(LOSSES["zero_one"].value(np.array([1.0, -1.0]), np.zeros(2)),
                                  [0.0, 1.0])
    assert LOSSES["squared"].task == "regression"


def test_unknown_and_evaluation_only_losses():
    with pytest.raises(ParameterError, match=r"unknown loss 'tukey'; valid: 'hinge'"):
        make_loss("tukey")
    with pytest.raises(NotApplicableError, match="zero_one.*not convex"):
        LOSSES["zero_one"].cvxpy(Y, cp.Variable(25))
    with pytest.raises(NotApplicableError, match="hinge.*second derivative.*m = 1"):
        LOSSES["hinge"].hessian(Y, F)
    assert make_loss(LOSSES["hinge"]) is LOSSES["hinge"]


# ------------------------------------------------------------------ capabilities
@pytest.mark.parametrize("name", [n for n, l in LOSSES.items() if l.has("conjugate")])
def test_conjugate_is_the_supremum_that_defines_it(name):
    # l^*(u) = sup_f u f - l(y, f), by a fine grid on f (the sup is attained inside it for
    # u inside the domain; outside, the grid value grows without bound and ours is inf)
    loss = LOSSES[name]
    f = np.linspace(-60, 60, 240001)
    for y in (1.0, -1.0) if loss.margin_based else (0.7, -2.0):
        for u in (-0.9, -0.4, -0.05, 0.3):
            ours = float(loss.conjugate(np.array([y]), np.array([u]))[0])
            grid = np.max(u * f - loss.value(np.full_like(f, y), f))
            if math.isinf(ours):        # unbounded: u f - l grows along one direction
                far = np.array([-1e4, 1e4])
                assert np.max(u * far - loss.value(np.full(2, y), far)) > 100.0, (name, y, u)
            else:
                assert ours == pytest.approx(grid, abs=1e-6), (name, y, u)


def test_capabilities_match_what_the_loss_can_do():
    for name, loss in LOSSES.items():
        for capability, call in [("subgradient", loss.derivative), ("hessian", loss.hessian),
                                 ("conjugate", loss.conjugate)]:
            if loss.has(capability):
                assert np.all(np.isfinite(call(Y, 0.5 * F))) or capability == "conjugate"
            else:
                with pytest.raises(NotApplicableError):
                    call(Y, F)
        assert loss.has("kink") == (loss.kink is not None)
        assert loss.has("gradient") == loss.differentiable
    with pytest.raises(ValueError, match="unknown loss capability"):
        LOSSES["hinge"].has("hesian")


def test_shapes_and_facts_are_true_of_the_values():
    m = np.linspace(-4, 4, 81)
    y = np.ones_like(m)
    for name, loss in LOSSES.items():
        if loss.has("least_squares"):
            np.testing.assert_allclose(loss.value(y, m), (y - m) ** 2, rtol=1e-14)
        if loss.has("hinge_form"):
            np.testing.assert_allclose(loss.value(y, m), np.maximum(0.0, loss.kink - m))
        if loss.has("minimal_at_zero"):
            assert np.all(loss.value(y, m) >= loss.value(y, 0 * m))
        if loss.has("lipschitz"):
            assert np.max(np.abs(loss.derivative(y, m))) <= loss.lipschitz * (1 + 1e-12)
        if loss.has("curvature"):
            assert np.max(loss.hessian(y, m)) <= loss.curvature * (1 + 1e-12)
        if loss.has("piecewise_linear"):
            # the kinks in f at y = 1: the margin itself, or the residual f - 1
            at = [k + (0.0 if loss.margin_based else 1.0) for k, _, _ in loss.kinks()]
            off = np.all([np.abs(m[1:-1] - k) > 0.2 for k in at], axis=0)
            assert np.allclose(np.diff(loss.value(y, m), 2)[off], 0.0, atol=1e-12)
