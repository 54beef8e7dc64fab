"""Step-size rules and the generic (full-batch) subgradient loop.

One implementation shared by every subgradient method (ERM, linear and kernel SVM).

Rules, for iteration t = 1, 2, ...:

=================  ==========================================  ==============================
rule               step eta_t                                  guarantee (best iterate)
=================  ==========================================  ==============================
"constant"         eta_t = a                                   F_best - F* <= RG... + a G^2/2
"sqrt"             eta_t = a / sqrt(t)                         O(log t / sqrt t)
"1/t"              eta_t = 1 / (mu (t + t0))  (mu: strong      O(log t / t)
                   convexity; t0 >= 0 caps the first steps)
"polyak"           eta_t = (F(x_t) - F*) / ||g_t||^2           O(1 / sqrt t), needs F*
=================  ==========================================  ==============================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..data import check_nonnegative, check_positive
from ..errors import ParameterError
from ..solution import History, Timer

__all__ = ["StepRule", "make_step_rule", "run_subgradient", "STEP_RULES", "SubgradientResult"]

STEP_RULES = ("constant", "sqrt", "1/t", "polyak")


@dataclass(frozen=True)
class StepRule:
    """A step-size rule ``eta_t``; call as ``rule(t, value=F(x_t), grad_norm2=||g_t||^2)``.

    Attributes
    ----------
    name : str
        One of :data:`STEP_RULES`.
    scale : float
        ``a`` for "constant" and "sqrt"; the strong-convexity modulus ``mu`` for "1/t".
    f_star : float or None
        The known optimal value, required by "polyak".
    offset : float
        ``t0`` of the "1/t" rule.
    """

    name: str
    scale: float = 1.0
    f_star: float | None = None
    offset: float = 0.0

    def __call__(self, t: int, value: float | None = None,
                 grad_norm2: float | None = None) -> float:
        if self.name == "constant":
            return self.scale
        if self.name == "sqrt":
            return self.scale / math.sqrt(t)
        if self.name == "1/t":
            return 1.0 / (self.scale * (t + self.offset))
        # Polyak: the distance to the optimum shrinks for any step in (0, 2 (F - F*)/||g||^2).
        if grad_norm2 is None or grad_norm2 <= 0.0:
            return 0.0
        return max(value - self.f_star, 0.0) / grad_norm2


def make_step_rule(step: Any = "sqrt", scale: float = 1.0, mu: float | None = None,
                   f_star: float | None = None, offset: float = 0.0) -> StepRule:
    """Build a :class:`StepRule` from a name (or pass a StepRule through).

    Parameters
    ----------
    step : str or StepRule
        "constant", "sqrt", "1/t" or "polyak".
    scale : float
        ``a`` of the constant and 1/sqrt(t) rules.
    mu : float, optional
        Strong-convexity modulus, required by "1/t" (for l2-regularized problems,
        mu = lambda; for the SVM C-form, mu = 1).
    f_star : float, optional
        Optimal value, required by "polyak".
    offset : float
        ``t0`` of "1/t": eta_t = 1 / (mu (t + t0)). With t0 = L / mu (L the Lipschitz
        constant of a smooth part) the first step is at most 1 / (mu + L), so a smooth
        loss with a small mu is not thrown far away at t = 1; the O(log t / t) rate is
        unchanged.
    """
    if isinstance(step, StepRule):
        return step
    if step not in STEP_RULES:
        raise ParameterError(f"unknown step rule {step!r}; valid: {', '.join(map(repr, STEP_RULES))}")
    if step == "1/t":
        if mu is None:
            raise ParameterError("step='1/t' needs the strong-convexity modulus mu "
                                 "(the problem is not strongly convex without an l2 term)")
        return StepRule("1/t", scale=check_positive("mu", mu),
                        offset=check_nonnegative("offset", offset))
    if step == "polyak":
        if f_star is None or not math.isfinite(f_star):
            raise ParameterError("step='polyak' needs the optimal value f_star (e.g. from the "
                                 "exact solver)")
        return StepRule("polyak", f_star=float(f_star))
    return StepRule(step, scale=check_positive("scale", scale))


@dataclass
class SubgradientResult:
    """What :func:`run_subgradient` returns: the best iterate and its record."""

    x_best: np.ndarray
    f_best: float
    n_iter: int
    status: str
    history: History


def run_subgradient(oracle: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray,
                    rule: StepRule, max_iter: int = 1000, tol: float = 0.0,
                    callback: Callable | None = None,
                    project: Callable[[np.ndarray], np.ndarray] | None = None,
                    f_star: float | None = None,
                    norm2: Callable[[np.ndarray], float] | None = None) -> SubgradientResult:
    """Projected subgradient descent ``x_{t+1} = P(x_t - eta_t g_t)``, keeping the best iterate.

    The method is not a descent method, so the best value seen is returned.

    Parameters
    ----------
    oracle : callable
        ``x -> (F(x), g)`` with ``g`` a subgradient of F at x.
    x0 : ndarray
        Starting point (copied).
    rule : StepRule
    max_iter : int
    tol : float
        Stop when ``F_best - f_star <= tol * max(1, |f_star|)`` (only when ``f_star`` is
        known) or when the subgradient is exactly zero.
    callback : callable, optional
        ``callback(t, x, value)``; returning ``False`` stops the loop (status "stopped").
    project : callable, optional
        Projection applied after each step.
    f_star : float, optional
        Known optimal value, for the stopping rule and the history's ``suboptimality``.
    norm2 : callable, optional
        ``g -> ||g||^2`` in the norm of the space the method steps in (default the
        Euclidean norm of the coordinates; a kernel expansion beta uses beta^T K beta).
        Used by the Polyak step and the zero-subgradient stop.

    Returns
    -------
    SubgradientResult
        Status "converged", "max_iter", "stopped" (callback) or "diverged" (a non-finite
        value or subgradient: the step rule is too large for this problem). History
        columns: ``objective`` (F(x_t)), ``best`` (best so far), ``step``, ``time``, and
        ``suboptimality`` (best - f_star) when f_star is known.
    """
    timer = Timer()
    history = History()
    x = np.array(x0, dtype=float, copy=True)
    x_best, f_best = x.copy(), math.inf
    status = "max_iter"
    t = 0
    for t in range(1, max_iter + 1):
        value, g = oracle(x)
        if not (math.isfinite(value) and np.all(np.isfinite(g))):
            # A step rule too large for this loss (e.g. 1/(mu t) with a tiny mu on exp):
            # report it rather than iterate on nan; the best finite iterate is kept.
            status = "diverged"
            history.record(objective=value, best=f_best, time=timer())
            break
        if value < f_best:
            f_best, x_best = value, x.copy()
        row = dict(objective=value, best=f_best, time=timer())
        if f_star is not None:
            row["suboptimality"] = f_best - f_star
        gn2 = float(g @ g) if norm2 is None else float(norm2(g))
        eta = rule(t, value=value, grad_norm2=gn2)
        row["step"] = eta
        history.record(**row)
        if callback is not None and callback(t, x, value) is False:
            status = "stopped"
            break
        if gn2 == 0.0:
            status = "converged"
            break
        if f_star is not None and tol > 0 and f_best - f_star <= tol * max(1.0, abs(f_star)):
            status = "converged"
            break
        x = x - eta * g
        if project is not None:
            x = project(x)
    return SubgradientResult(x_best, f_best, t, status, history)
