"""Proximal gradient: ISTA and FISTA, for a smooth loss plus a penalty with a prox.

Split F = L + lam R with L the (differentiable) data term. One step from a point y::

    z = prox_{t lam R}(y - t grad L(y)),  accepted when
    L(z) <= L(y) + <grad L(y), z - y> + ||z - y||^2 / (2 t)        (else t <- t/2)

ISTA: x_{k+1} = z at y = x_k; the trial step doubles after each acceptance. FISTA
(Beck & Teboulle 2009): y_k = x_k + (s_{k-1} - 1)/s_k (x_k - x_{k-1}),
s_k = (1 + sqrt(1 + 4 s_{k-1}^2)) / 2, with a non-increasing step and the function-value
restart of O'Donoghue & Candes (s <- 1 when F increases), which keeps the linear rate on
strongly convex problems. Proxes: l1 (soft threshold), elastic net, l2, lp (p = 2 block
shrinkage, other p through the exact projection on the dual-norm ball), none.

Stopping rule: the gradient mapping ||G_t(y)|| = ||y - z|| / t <= tol; it bounds the
distance of 0 to dF(z) by (1 + t Lip) ||G_t(y)||.
"""

from __future__ import annotations

from typing import Any, Callable

import math

import numpy as np

from ...solution import History, Timer
from .oracle import ERMOracle

__all__ = ["ista", "fista"]


def _prox_step(oracle, y, Ly, gy, t, max_backtracks=60):
    for _ in range(max_backtracks):
        z = oracle.prox(y - t * gy, t)
        diff = z - y
        Lz = oracle.loss_value(z)
        if Lz <= Ly + float(gy @ diff) + float(diff @ diff) / (2.0 * t) + 1e-15 * abs(Ly):
            return z, Lz, t
        t *= 0.5
    return z, Lz, t


def _run(oracle: ERMOracle, x0, accelerated: bool, tol: float, max_iter: int, callback):
    method = "fista" if accelerated else "ista"
    oracle.require(method, differentiable_loss=True, prox=True)
    timer, history = Timer(), History()
    x = oracle.zeros() if x0 is None else np.array(x0, dtype=float)
    L = oracle.lipschitz()
    t = 1.0 / L if L else 1.0
    x_prev, s = x.copy(), 1.0
    F = oracle.value(x)
    status, k = "max_iter", 0
    for k in range(1, max_iter + 1):
        if accelerated:
            s_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * s * s))
            y = x + ((s - 1.0) / s_next) * (x - x_prev)
        else:
            y = x
        Ly, gy = oracle.loss_value_grad(y)
        z, _, t = _prox_step(oracle, y, Ly, gy, t)
        mapping = float(np.linalg.norm(y - z)) / t
        F_new = oracle.value(z)
        history.record(objective=F_new, gradient_mapping=mapping, step=t, time=timer())
        # Restart on an increase beyond round-off (restarting on noise would reduce FISTA
        # to ISTA near the optimum).
        if accelerated and F_new > F + 1e-15 * max(1.0, abs(F)):
            # Restart: drop the momentum and take a plain step from x instead.
            s, x_prev = 1.0, x.copy()
            continue
        x_prev, x, F = x, z, F_new
        if accelerated:
            s = s_next
        else:
            t *= 2.0
        if callback is not None and callback(k, x, F) is False:
            status = "stopped"
            break
        if mapping <= tol:
            status = "converged"
            break
    return oracle.solution(x, method, status, k, history, timer(), tol=tol, max_iter=max_iter)


def ista(oracle: ERMOracle, x0: Any = None, *, tol: float = 1e-8, max_iter: int = 50000,
         callback: Callable[..., Any] | None = None) -> Any:
    """Proximal gradient descent (ISTA) with backtracking; returns a Solution."""
    return _run(oracle, x0, False, tol, max_iter, callback)


def fista(oracle: ERMOracle, x0: Any = None, *, tol: float = 1e-8, max_iter: int = 20000,
          callback: Callable[..., Any] | None = None) -> Any:
    """Accelerated proximal gradient (FISTA) with backtracking and restart; returns a
    Solution (history: objective, gradient_mapping, step, time)."""
    return _run(oracle, x0, True, tol, max_iter, callback)
