"""Consensus ADMM for ERM on row-chunked data (the scheme of dask-glm; Boyd et al. 2011,
"Distributed optimization and statistical learning via ADMM", sections 7.1 and 8.2).

F(x) = sum_k f_k(x) + lam R(w), f_k(x) = (1/n) sum_{i in block k} loss(y_i, a_i^T x), is
split into one copy x_k per block and a consensus variable z = (z_w, z_b)::

    x_k <- argmin_x f_k(x) + rho/2 ||x - z + u_k||^2          (on the worker holding block k)
    z   <- (prox_{lam R / (K rho)}(mean_k(x_k + u_k)_w), mean_k(x_k + u_k)_b)
    u_k <- u_k + x_k - z

The local problems are smooth and strongly convex (rho > 0), solved by L-BFGS (scipy)
warm-started from the previous x_k. Only x_k, u_k and z travel (K + 1 vectors of length
dim). Stopping rule (Boyd 3.3.1): r = sqrt(sum_k ||x_k - z||^2) <= sqrt(K dim) tol_abs +
tol * max(sqrt(sum ||x_k||^2), sqrt(K) ||z||) and s = rho sqrt(K) ||z - z_prev|| <=
sqrt(K dim) tol_abs + tol sqrt(sum ||rho u_k||^2), tol_abs = tol / 100; rho is
re-balanced (times or divided by 2) when one residual exceeds ten times the other
(Boyd 3.4.1), u rescaled accordingly. ADMM reaches moderate accuracy quickly and high
accuracy slowly: its point is judged by the chunk-wise certificate like any other.
"""

from __future__ import annotations

from typing import Any, Callable

import math

import numpy as np
from scipy.optimize import minimize

from ..losses import make_loss
from ..solution import History, Timer
from .oracle import DaskERMOracle

__all__ = ["admm"]


def _block_local(X, y, offset, x0, target, rho, loss, intercept, n, weight=None):
    """argmin_x (1/n) sum_i v_i loss(y_i, a_i^T x) + rho/2 ||x - target||^2 on one block
    (v = 1 without weights)."""
    loss = make_loss(loss)
    d = X.shape[1]

    def fun(x):
        f = X @ x[:d] + (x[d] if intercept else 0.0)
        g = loss.derivative(y, f)
        values = loss.value(y, f)
        if weight is not None:
            g, values = g * weight, values * weight
        grad = X.T @ g
        if intercept:
            grad = np.append(grad, g.sum())
        diff = x - target
        return (float(np.sum(values)) / n + 0.5 * rho * float(diff @ diff),
                grad / n + rho * diff)

    res = minimize(fun, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 500, "ftol": 1e-15, "gtol": 1e-12})
    return res.x


def admm(oracle: DaskERMOracle, x0: np.ndarray | None = None, *, tol: float = 1e-6,
         max_iter: int = 500, rho: float | None = None,
         callback: Callable[..., Any] | None = None) -> Any:
    """Consensus ADMM; returns a Solution at z (history: objective, primal_residual,
    dual_residual, rho, time).

    Parameters
    ----------
    oracle : DaskERMOracle
    x0 : ndarray, optional
        Starting consensus point (default 0).
    tol : float
        Relative tolerance of both residuals (see the module docstring).
    rho : float, optional
        Penalty parameter; default the mean curvature of a block's loss, curvature *
        trace(G) / (dim K) (1/K of it for the logistic loss's 1/4), adapted by residual
        balancing.
    """
    oracle.require("admm", differentiable_loss=True, prox=True)
    data, dim = oracle.data, oracle.dim
    K = data.n_chunks
    timer, history = Timer(), History()
    z = oracle.zeros() if x0 is None else np.array(x0, dtype=float)
    if rho is None:
        curv = oracle.loss.curvature or 1.0
        rho = max(curv * float(np.trace(oracle.gram)) / dim / K, oracle.lam / K, 1e-12)
    xs = np.tile(z, (K, 1))
    us = np.zeros((K, dim))
    status, it = "max_iter", 0
    token = oracle._token
    tol_abs = tol / 100.0
    for it in range(1, max_iter + 1):
        targets = z - us
        xs = np.array(_local_steps(data, xs, targets, rho, token, oracle.intercept,
                                   oracle.n))
        z_prev = z
        avg = (xs + us).mean(axis=0)
        z = avg.copy()
        if oracle.lam > 0:
            z[:oracle.d] = oracle.penalty.prox(avg[:oracle.d], oracle.lam / (K * rho))
        us = us + xs - z
        r = float(np.linalg.norm(xs - z))
        s = rho * math.sqrt(K) * float(np.linalg.norm(z - z_prev))
        eps_pri = math.sqrt(K * dim) * tol_abs + tol * max(float(np.linalg.norm(xs)),
                                                          math.sqrt(K) * np.linalg.norm(z))
        eps_dual = math.sqrt(K * dim) * tol_abs + tol * rho * float(np.linalg.norm(us))
        history.record(primal_residual=r, dual_residual=s, rho=rho, time=timer())
        if callback is not None and callback(it, z, None) is False:
            status = "stopped"
            break
        if r <= eps_pri and s <= eps_dual:
            status = "converged"
            break
        if r > 10.0 * s:
            rho, us = 2.0 * rho, us / 2.0
        elif s > 10.0 * r:
            rho, us = rho / 2.0, us * 2.0
    return oracle.solution(z, "admm", status, it, history, timer(), tol=tol,
                           max_iter=max_iter, rho=rho, n_chunks=K)


def _local_steps(data, xs, targets, rho, token, intercept, n):
    """The K local solves, one task per block, each with its own start and target."""
    tasks = data.tasks(_block_local, [(xs[k].copy(), targets[k].copy(), rho, token,
                                       intercept, n) for k in range(data.n_chunks)])
    return data.compute(*tasks) if len(tasks) > 1 else [data.compute(*tasks)]
