"""The exact ERM route by Newton, stopped by its certificate (convexlearn.routes.erm_newton)."""

import numpy as np
import pytest
from helpers import sparse_rows

import convexlearn as cl
from convexlearn.routes import erm_newton
from convexlearn.routes.erm_newton import CHECK_BELOW, LAST_RESORT, newton_route
from convexlearn.solution import Solution
from convexlearn.solvers.erm.newton import newton


def _text_like(n=3000, d=800, per_row=12, seed=0):
    """CSR rows of ``per_row`` values, labels from a planted w with noise."""
    X, rng = sparse_rows(n, d, per_row, seed)
    s = X @ rng.standard_normal(d)
    y = np.where(s + 0.3 * np.std(s) * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("intercept", [False, True])
def test_the_route_stops_at_the_first_certified_iterate(intercept, monkeypatch):
    X, y = _text_like()
    erm = cl.ERM(X, y, "logistic", "l2", lam=1 / X.shape[0], intercept=intercept)
    seen = []

    def recording(oracle, x0, **options):
        return newton(oracle, x0, callback=lambda k, x, v: seen.append(x.copy()), **options)
    monkeypatch.setattr(erm_newton, "newton", recording)
    sol = newton_route(erm, tol=1e-9)
    assert erm.certificate(sol, tol=1e-9).passed
    d = X.shape[1]
    passed = [erm.certificate(Solution(w=x[:d].copy(), b=float(x[-1]) if intercept else 0.0,
                                       objective=np.nan, status="x", method="newton"),
                              tol=1e-9).passed for x in seen]
    assert passed[-1] and not any(passed[:-1])          # the first iterate that passes
    assert len(passed) >= 3
    np.testing.assert_array_equal(seen[-1][:d], sol.w)
    # it ended above Newton's own last resort (the certificate stopped it)
    assert sol.history["grad_norm"][-1] > LAST_RESORT * g0norm_of(erm)


def g0norm_of(erm):
    oracle = erm.oracle()
    return float(np.linalg.norm(oracle.value_grad(oracle.zeros())[1]))


def test_an_unreachable_certificate_leaves_newton_to_its_last_resort():
    # at tol = 0 no iterate can pass (a positive relative distance in floating point):
    # Newton goes on to ||grad|| <= LAST_RESORT ||grad F(0)||, never stopped early
    X, y = _text_like(n=1500, d=300)
    erm = cl.ERM(X, y, "logistic", "l2", lam=1e-3, intercept=False)
    tight = newton_route(erm, tol=0.0)
    loose = newton_route(erm, tol=1e-9)
    assert tight.history["grad_norm"][-1] <= LAST_RESORT * g0norm_of(erm)
    assert tight.n_iter > loose.n_iter


def test_solve_is_certified_and_matches_the_dense_answer():
    X, y = _text_like(n=2000, d=500)
    sparse = cl.ERM(X, y, "logistic", "l2", lam=1e-3).solve()
    dense = cl.ERM(X.toarray(), y, "logistic", "l2", lam=1e-3).solve()
    assert sparse.status == dense.status == "optimal"
    assert sparse.provenance["route"] == "newton"
    assert abs(sparse.objective - dense.objective) <= 1e-9 * abs(dense.objective)


def test_the_relative_forcing_term_takes_fewer_products():
    X, y = _text_like(n=4000, d=1500, per_row=20)
    erm = cl.ERM(X, y, "logistic", "l2", lam=1 / X.shape[0], intercept=False)
    counts = []
    for scale in (1.0, g0norm_of(erm)):
        oracle = erm.oracle()
        calls = [0]
        product = oracle.hessian_vector

        def counted(*a, **k):
            calls[0] += 1
            return product(*a, **k)
        oracle.hessian_vector = counted
        _, g0 = oracle.value_grad(oracle.zeros())
        sol = newton(oracle, tol=1e-10 * float(np.linalg.norm(g0)), forcing_scale=scale)
        assert sol.status == "converged"
        counts.append(calls[0])
    assert counts[1] < counts[0]


def test_last_loss_grad_is_of_the_point_asked():
    X, y = _text_like(n=500, d=100)
    oracle = cl.ERM(X, y, "logistic", "l2", lam=1e-2).oracle()
    x = np.full(oracle.dim, 0.01)
    assert oracle.last_loss_grad(x) is None
    _, grad = oracle.loss_value_grad(x)
    np.testing.assert_array_equal(oracle.last_loss_grad(x), grad)
    assert oracle.last_loss_grad(x + 1e-3) is None     # another point: nothing remembered
    # asked again at the same point: the remembered gradient (a copy), no product with X
    oracle.X = None                                      # any product would now fail
    again = oracle.loss_value_grad(x)[1]
    np.testing.assert_array_equal(again, grad)
    assert again is not grad


def test_check_below_is_a_fraction():
    assert 0 < LAST_RESORT < CHECK_BELOW < 1
