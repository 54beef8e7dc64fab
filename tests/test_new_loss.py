"""A loss defined here, registered through the catalogue's public way, is solved and
certified by the ERM machinery with no other file touched: its capabilities carry it.

The loss is log cosh of the residual r = f - y (a robust regression loss):

    psi(r) = log cosh r,  psi'(r) = tanh r,  psi''(r) = 1 - tanh^2 r in (0, 1],
    psi^*(u) = (1 + u)/2 log(1 + u) + (1 - u)/2 log(1 - u) on |u| <= 1,

written for cvxpy as logistic(2 r) - r - log 2 (= log(e^r + e^-r) - log 2).
"""

import math

import cvxpy as cp
import numpy as np
import pytest

import convexlearn as cl
from convexlearn.errors import NotApplicableError
from convexlearn.losses import LOSSES, Loss, make_loss, register_loss
from convexlearn.penalties import make_penalty
from convexlearn.solvers.erm import cd as cdmod

_LOG2 = math.log(2.0)


def _xlogx(x):
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _log_cosh(r):
    a = np.abs(r)
    return a + np.log1p(np.exp(-2.0 * a)) - _LOG2     # no overflow for large |r|


def _log_cosh_conj(u):
    out = 0.5 * (_xlogx(1.0 + np.clip(u, -1, 1)) + _xlogx(1.0 - np.clip(u, -1, 1)))
    return np.where(np.abs(u) > 1.0, np.inf, out)


LOG_COSH = Loss("log_cosh_test", "regression", "log cosh(f - y)", True, True, True, 1.0, None,
                _log_cosh, _dphi=np.tanh, _d2phi=lambda r: 1.0 - np.tanh(r) ** 2,
                _cvx=lambda r: cp.logistic(2 * r) - r - _LOG2, lipschitz=1.0,
                _conj=_log_cosh_conj)


@pytest.fixture
def log_cosh():
    register_loss(LOG_COSH)
    try:
        yield LOG_COSH
    finally:
        del LOSSES[LOG_COSH.name]


def _data(seed=0, n=120, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.3
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_t(2, n) + 1.0   # heavy tails
    return X, y


def test_registration_is_public_and_refuses_a_second_loss_of_the_same_name(log_cosh):
    assert make_loss("log_cosh_test") is log_cosh
    assert register_loss(log_cosh) is log_cosh             # the same object again: fine
    other = Loss(log_cosh.name, "regression", "r^2", True, True, True, 2.0, None,
                 lambda r: r ** 2)
    with pytest.raises(cl.errors.ParameterError, match="already registered"):
        register_loss(other)


def test_its_capabilities_follow_from_what_it_provides(log_cosh):
    assert log_cosh.has("gradient", "hessian", "curvature", "lipschitz", "conjugate", "cvxpy")
    assert not log_cosh.has("kink") and not log_cosh.has("least_squares")


@pytest.mark.parametrize("penalty, params", [("l2", {}), ("elastic_net", {"l1_ratio": 0.5}),
                                             ("l1", {})])
def test_the_erm_chain_solves_and_certifies_it(log_cosh, penalty, params):
    X, y = _data()
    erm = cl.ERM(X, y, loss="log_cosh_test", penalty=penalty, lam=0.05, **params)
    sol = erm.solve()
    assert sol.status == "optimal", sol.report
    # the certificate used the loss's conjugate: a finite Fenchel gap, near zero
    assert math.isfinite(sol.report.duality_gap)
    assert sol.report.relative_gap <= 1e-9
    # and the independent cvxpy reference (the loss's cvxpy expression) agrees on F
    ref = erm.reference()
    assert sol.objective <= ref.objective + 1e-7 * max(1.0, abs(ref.objective))


def test_coordinate_descent_takes_it_because_it_has_what_cd_declares(log_cosh):
    X, y = _data(1)
    pen = make_penalty("l1")
    assert cdmod.applies(log_cosh, pen)
    w, b, _ = cdmod.coordinate_descent(X, y, log_cosh, pen, 0.05)
    erm = cl.ERM(X, y, loss="log_cosh_test", penalty="l1", lam=0.05)
    report = erm.certificate(cl.solution.Solution(w=w, b=b, objective=math.nan,
                                                  status="converged", method="cd"))
    assert report.passed, report


def test_a_missing_capability_is_named_with_the_method_and_the_problem():
    bare = Loss("bare_test", "regression", "|f - y|", True, False, False, None, None,
                np.abs)
    with pytest.raises(NotApplicableError) as info:
        cdmod.require(bare, make_penalty("l1"), "ERM with the bare_test loss")
    text = str(info.value)
    assert "coordinate descent" in text and "bare_test" in text and "'least_squares'" in text
    with pytest.raises(NotApplicableError, match="capability 'split'.*lp"):
        cdmod.require(make_loss("squared"), make_penalty("lp", p=1.5), "a problem")


def test_the_estimator_takes_it_by_its_registered_name(log_cosh):
    from convexlearn.estimators import ERMRegressor
    X, y = _data(2)
    model = ERMRegressor(loss="log_cosh_test", penalty="l2", lam=0.05).fit(X, y)
    sol = cl.ERM(X, y, loss="log_cosh_test", penalty="l2", lam=0.05).solve()
    np.testing.assert_allclose(model.coef_, sol.w, rtol=1e-9, atol=1e-12)
