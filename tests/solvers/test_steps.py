"""The shared step rules and subgradient loop (one implementation for every method)."""

import math

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.solvers.steps import make_step_rule, run_subgradient


def _abs_oracle(x):
    # F(x) = ||x||_1, F* = 0, a subgradient sign(x).
    return float(np.abs(x).sum()), np.sign(x)


@pytest.mark.parametrize("step, kwargs", [("constant", dict(scale=0.01)), ("sqrt", {}),
                                          ("1/t", dict(mu=1.0)), ("polyak", dict(f_star=0.0))])
def test_every_rule_decreases_the_best_value(step, kwargs):
    rule = make_step_rule(step, **kwargs)
    res = run_subgradient(_abs_oracle, np.array([3.0, -2.0]), rule, max_iter=300)
    assert res.f_best < 0.1 * 5.0
    assert np.all(np.diff(res.history["best"]) <= 0)          # best-so-far never increases


def test_rules_need_their_constants():
    with pytest.raises(cl.ParameterError, match="mu"):
        make_step_rule("1/t")
    with pytest.raises(cl.ParameterError, match="f_star"):
        make_step_rule("polyak")
    with pytest.raises(cl.ParameterError, match="unknown step rule 'fast'"):
        make_step_rule("fast")


def test_a_diverging_run_stops_with_its_own_status():
    # An oracle whose "subgradient" points uphill: F = exp(-x) grows along -g, overflows,
    # and the loop must stop with "diverged" instead of iterating on inf/nan.
    def uphill(x):
        with np.errstate(over="ignore"):
            v = float(np.exp(-x[0]))
        return v, np.array([v])
    res = run_subgradient(uphill, np.array([0.0]), make_step_rule("constant", scale=50.0),
                          max_iter=1000)
    assert res.status == "diverged" and res.n_iter < 1000
    assert math.isfinite(res.f_best) and res.f_best == pytest.approx(1.0)


def test_norm2_is_used_by_the_polyak_step():
    rule = make_step_rule("polyak", f_star=0.0)
    seen = []
    res = run_subgradient(_abs_oracle, np.array([1.0, 1.0]), rule, max_iter=3,
                          norm2=lambda g: seen.append(1) or 4.0 * float(g @ g))
    assert seen and res.history["step"][0] == pytest.approx(2.0 / (4.0 * 2.0))
