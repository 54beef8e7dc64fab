"""Coordinate descent takes any loss and penalty with the capabilities it declares
(cd.LOSS_NEEDS, cd.PENALTY_NEEDS) and refuses the others naming what is missing."""

import math

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import NotApplicableError
from convexlearn.losses import LOSSES, make_loss
from convexlearn.penalties import make_penalty
from convexlearn.solution import Solution
from convexlearn.solvers.erm import cd as cdmod


def _classes(seed=3, n=200, d=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0, 1, -1)


def test_the_losses_cd_takes_are_those_with_its_capabilities():
    taken = {name for name, loss in LOSSES.items() if cdmod.applies(loss, make_penalty("l1"))}
    assert taken == {"squared", "squared_classification", "logistic", "logistic_log2"}
    for name in taken:
        loss = LOSSES[name]
        assert loss.has("least_squares") or loss.has("hessian", "twice_differentiable",
                                                      "curvature")


@pytest.mark.parametrize("penalty, params", [("l1", {}), ("elastic_net", {"l1_ratio": 0.5})])
def test_a_loss_cd_gained_by_its_capabilities_is_solved_and_certified(penalty, params):
    # logistic_log2 was refused by name before; its capabilities are the logistic's
    X, y = _classes()
    erm = cl.ERM(X, y, loss="logistic_log2", penalty=penalty, lam=0.02, **params)
    w, b, _ = cdmod.coordinate_descent(X, y, erm.loss, erm.penalty, erm.lam)
    report = erm.certificate(Solution(w=w, b=b, objective=math.nan, status="converged",
                                      method="cd"))
    assert report.passed, report
    ref = erm.reference()
    assert report.objective <= ref.objective + 1e-8 * abs(ref.objective)


@pytest.mark.parametrize("loss, penalty, params, missing", [
    ("hinge", "l1", {}, "'hessian'"), ("exponential", "l1", {}, "'curvature'"),
    ("squared", "lp", {"p": 1.5}, "'split'")])
def test_cd_refuses_naming_the_method_the_problem_and_the_capability(loss, penalty, params,
                                                                     missing):
    X, y = _classes()
    with pytest.raises(NotApplicableError) as info:
        cdmod.coordinate_descent(X, y, make_loss(loss), make_penalty(penalty, **params), 0.1)
    text = str(info.value)
    assert "coordinate descent" in text and loss in text and penalty in text
    assert missing in text
