"""Regressions found by benchmarks/sweep_exact_erm.py: the fast exact routes of ERM must
certify (no fallback to the cvxpy route) on sample weights, sparse X and duplicated columns."""

import numpy as np
import pytest
import scipy.sparse as sp

import convexlearn as cl


def _data(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.8 * rng.standard_normal(n) > 0, 1, -1)
    s = rng.integers(0, 4, n).astype(float)      # zeros included: removed samples
    return X, y, s


@pytest.mark.parametrize("loss,penalty,route", [
    ("squared", "l1", "cd"), ("squared", "elastic_net", "cd"), ("logistic", "l1", "cd"),
    ("logistic", "elastic_net", "cd"), ("hinge", "l2", "svm"), ("hinge", "l1", "lp")])
def test_weighted_fast_route_certifies(loss, penalty, route):
    # the routes ignored the weights: certificate failed (relative gap 1e-2..1), cvxpy answered
    X, y, s = _data()
    target = X[:, 0] - 2 * X[:, 1] + 0.1 * y if loss == "squared" else y
    erm = cl.ERM(X, target, loss=loss, penalty=penalty, lam=0.02, sample_weight=s)
    sol = erm.solve()
    assert sol.status == "optimal"
    assert sol.provenance["route"] == route
    assert "fallback_from" not in sol.provenance
    # integer weights are copies of samples: the same optimum as the repeated data
    rep = np.repeat(np.arange(len(y)), s.astype(int))
    ref = cl.ERM(X[rep], target[rep], loss=loss, penalty=penalty, lam=0.02).solve()
    assert abs(sol.objective - ref.objective) <= 1e-8 * max(1.0, abs(ref.objective))


def test_weighted_cd_method_certifies():
    X, y, s = _data()
    sol = cl.ERM(X, y, loss="logistic", penalty="l1", lam=0.02, sample_weight=s).solve("cd")
    assert sol.status == "optimal"


@pytest.mark.parametrize("loss", ["hinge", "perceptron"])
def test_lp_route_on_sparse_X(loss):
    # y[:, None] * X on a CSR matrix raised a ValueError inside the LP route
    X, y, _ = _data()
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    sol = cl.ERM(Xs, y, loss=loss, penalty="l1", lam=0.01).solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "lp"
