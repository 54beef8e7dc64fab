"""Full-batch subgradient descent for any convex ERM problem.

    x_{t+1} = x_t - eta_t g_t,   g_t = (1/n) A^T l'(f_t) + lam (r_t, 0),  r_t in dR(w_t)

with the shared loop and step rules of :mod:`convexlearn.solvers.steps` (constant,
1/sqrt(t), 1/(mu t), Polyak); the best iterate is returned (the method is not a descent
method). Default rule: Polyak when the optimal value ``f_star`` is given, else
1/(mu (t + t0)) when F is strongly convex in w (mu = lam * strong_convexity(R): lam for
l2, lam (1 - l1_ratio) for the elastic net; t0 = L / mu for a smooth loss, L the
Lipschitz constant of its gradient or, for the exponential loss, its curvature at the
start), else 1/sqrt(t).

Rates of the best iterate: O(1/sqrt(t)) (sqrt, Polyak), O(log t / t) for 1/(mu t) on
strongly convex problems; Polyak is linear on sharp (polyhedral) problems.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...solution import Timer
from .oracle import ERMOracle
from ..steps import make_step_rule, run_subgradient

__all__ = ["subgradient"]


def subgradient(oracle: ERMOracle, x0: Any = None, *, step: float | None = None,
                step_scale: float = 1.0,
                f_star: float | None = None, tol: float = 0.0, max_iter: int = 5000,
                callback: Callable[..., Any] | None = None) -> Any:
    """Minimize F by subgradient descent; returns a Solution whose history has columns
    objective, best, step, time (and suboptimality when ``f_star`` is known).

    Parameters
    ----------
    step : str or StepRule, optional
        "constant", "sqrt", "1/t", "polyak" (see the module docstring for the default).
    step_scale : float
        ``a`` of the constant and 1/sqrt(t) rules.
    f_star : float, optional
        Optimal value: enables "polyak", the stopping rule (F_best - f_star <= tol
        max(1, |f_star|)) and the suboptimality column.
    """
    oracle.require("subgradient", subgradient=True)
    mu = oracle.lam * oracle.penalty.strong_convexity
    if step is None:
        step = "polyak" if f_star is not None else ("1/t" if mu > 0 else "sqrt")
    x = oracle.zeros() if x0 is None else np.array(x0, dtype=float)
    offset = 0.0
    if step == "1/t" and oracle.loss.differentiable:
        # Smooth loss: start the 1/(mu t) schedule at t0 = L / mu, so eta_1 <= 1 / (mu + L);
        # L is the global bound where the curvature is bounded, else (exponential) the
        # curvature at the starting point.
        L = oracle.lipschitz()
        if L is None and oracle.loss.twice_differentiable:
            L = float(np.linalg.norm(oracle.hessian(x, penalty=False), 2))
        offset = (L or 0.0) / mu
    rule = make_step_rule(step, scale=step_scale, mu=mu if mu > 0 else None, f_star=f_star,
                          offset=offset)
    timer = Timer()
    res = run_subgradient(oracle.value_subgradient, x, rule, max_iter=max_iter, tol=tol,
                          callback=callback, f_star=f_star)
    return oracle.solution(res.x_best, "subgradient", res.status, res.n_iter, res.history,
                           timer(), step=rule.name, step_scale=rule.scale, f_star=f_star,
                           max_iter=max_iter)
