"""Gradient descent for smooth ERM, with a backtracking (Armijo) line search.

    x_{k+1} = x_k - t_k grad F(x_k),   F(x_{k+1}) <= F(x_k) - t_k/2 ||grad F(x_k)||^2

Needs a differentiable loss and penalty ("none", "l2"). The first trial step is 1/L with
L = curvature(loss) ||A||_2^2 / n + lam * smoothness(R) when the loss has bounded curvature
(then the Armijo test always accepts t <= 1/L), else 1; each accepted step is doubled as
the next trial so the method adapts to the local curvature. Where the Armijo decrease is
below the round-off of F (gradient norms ~1e-8), a step that keeps F within round-off and
shrinks the gradient is accepted. Stops when ||grad F|| <= tol.
Linear rate for strongly convex F (l2 penalty), O(1/k) otherwise.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...solution import History, Timer
from .oracle import ERMOracle

__all__ = ["gradient_descent"]


def roundoff_progress(value: float, value_new: float, gnorm2: float,
                      grad_new: np.ndarray) -> bool:
    """Near the optimum the Armijo decrease t ||g||^2 / 2 falls below the round-off of F;
    there a step is accepted when F is unchanged up to round-off and the gradient shrinks."""
    return (abs(value_new - value) <= 1e-14 * max(1.0, abs(value))
            and float(grad_new @ grad_new) < gnorm2)


def gradient_descent(oracle: ERMOracle, x0: np.ndarray | None = None, *, tol: float = 1e-8,
                     max_iter: int = 20000, callback: Callable[..., Any] | None = None,
                     max_backtracks: int = 60) -> Any:
    """Minimize F by gradient descent; returns a Solution (history: objective, grad_norm,
    step, time)."""
    oracle.require("gd", differentiable_loss=True, smooth_penalty=True)
    timer, history = Timer(), History()
    x = oracle.zeros() if x0 is None else np.array(x0, dtype=float)
    L = oracle.lipschitz()
    if L is not None:
        L += oracle.lam * (oracle.penalty.smoothness or 0.0)
    t = 1.0 / L if L else 1.0
    value, grad = oracle.value_grad(x)
    status, k = "max_iter", 0
    for k in range(1, max_iter + 1):
        gnorm2 = float(grad @ grad)
        history.record(objective=value, grad_norm=np.sqrt(gnorm2), step=t, time=timer())
        if callback is not None and callback(k, x, value) is False:
            status = "stopped"
            break
        if np.sqrt(gnorm2) <= tol:
            status = "converged"
            break
        for _ in range(max_backtracks):
            x_new = x - t * grad
            value_new, grad_new = oracle.value_grad(x_new)
            if value_new <= value - 0.5 * t * gnorm2 or \
                    roundoff_progress(value, value_new, gnorm2, grad_new):
                break
            t *= 0.5
        else:
            status = "stalled"   # no decrease at machine precision: report, do not loop
            break
        x, value, grad = x_new, value_new, grad_new
        t *= 2.0
    if status == "stalled":
        status = "converged" if np.linalg.norm(grad) <= max(tol, 1e-12) else "max_iter"
    return oracle.solution(x, "gd", status, k, history, timer(), tol=tol, max_iter=max_iter)
