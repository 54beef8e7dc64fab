"""Pegasos: stochastic subgradient descent for the linear SVM (Shalev-Shwartz et al. 2011).

Pegasos works on the lambda-form of the SVM (docs/conventions.md), lam = 1 / (n C)::

    F_lam(w, b) = lam/2 ||w||^2 + (1/n) sum_i max(0, 1 - y_i (<w, x_i> + b)) = F_SVM / (n C)

Iteration t draws a mini-batch A_t of k samples (without replacement within the batch)
from a seeded ``numpy.random.Generator``, takes the step eta_t = 1 / (lam t) and, with
A_t^+ = {i in A_t : y_i f(x_i) < 1} (the violators of the batch),

    w <- (1 - eta_t lam) w + (eta_t / k) sum_{i in A_t^+} y_i x_i
    w <- min(1, (1/sqrt(lam)) / ||w||) w         (projection onto the ball of radius 1/sqrt(lam))

The ball contains the optimum: by strong duality ||w*||^2 = sum_i a_i - C sum_i xi_i
<= n C = 1/lam (this holds with or without intercept).

**The intercept.** Pegasos' analysis is for the homogeneous problem (b = 0, used when
``intercept=False``). With ``intercept=True`` b stays unpenalized (docs/conventions.md) and is updated
by its own stochastic subgradient step

    b <- b + eta_b,t (1/k) sum_{i in A_t^+} y_i,     eta_b,t = b_scale / sqrt(t)

(F is not strongly convex in b, so the 1/(lam t) step would be far too long for it: at
t = 1 it is n C). The O(log T / (lam T)) guarantee of Pegasos then no longer applies to b;
convergence is that of a stochastic subgradient method, O(1/sqrt T), in b.

The full objective costs O(nd), so it is evaluated every ``eval_every`` iterations
(default: once per pass over the data, n/k iterations); the best evaluated iterate is
returned. Same seed, same result.
"""

from __future__ import annotations

from typing import Any, Callable

import math

import numpy as np

from ...data import check_nonnegative, check_positive
from ...errors import NotApplicableError, ParameterError
from ...solution import History, Solution, Timer
from ..steps import make_step_rule

__all__ = ["solve_svm", "pegasos"]

_PREFETCH = 4096


def pegasos(X: np.ndarray, y: np.ndarray, C: float, intercept: bool = True, max_iter: int = 10000,
            batch_size: int = 1, seed: Any = 0, b_scale: float = 1.0, eval_every: int | None = None,
            f_star: float | None = None, tol: float = 0.0,
            callback: Callable[..., Any] | None = None, w0: Any = None, b0: float = 0.0) -> Any:
    """Run Pegasos on arrays; returns (w_best, b_best, f_best, n_iter, status, history).

    ``f_best`` and the history's ``objective`` are in the SVM's C-form convention
    (F_SVM = n C F_lam). History rows at each evaluation: ``objective``, ``best``,
    ``iteration``, ``time`` (and ``suboptimality`` = best - f_star when known).
    """
    timer = Timer()
    n, d = X.shape
    k = int(batch_size)
    if not 1 <= k <= n:
        raise ParameterError(f"batch_size must be an integer in [1, n={n}]; got {batch_size!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    lam = 1.0 / (n * C)
    radius = 1.0 / math.sqrt(lam)
    # The shared rules: 1/(lam t) for w (F is lam-strongly convex in w), b_scale/sqrt(t) for b.
    step_w = make_step_rule("1/t", mu=lam)
    step_b = make_step_rule("sqrt", scale=b_scale) if intercept else None
    eval_every = max(1, n // k) if eval_every is None else int(eval_every)
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float)
    b = float(b0) if intercept else 0.0

    def full_objective(w, b):
        hinge = np.maximum(0.0, 1.0 - y * (X @ w + b))
        return 0.5 * float(w @ w) + C * float(hinge.sum())

    history = History()
    f_best, w_best, b_best = full_objective(w, b), w.copy(), b
    status, t = "max_iter", 0
    for t in range(1, max_iter + 1):
        if k > 1:
            idx = rng.choice(n, size=k, replace=False)
        else:
            if (t - 1) % _PREFETCH == 0:          # one draw per block: ~10x less overhead
                singles = rng.integers(n, size=(_PREFETCH, 1))
            idx = singles[(t - 1) % _PREFETCH]
        Xa, ya = X[idx], y[idx]
        viol = ya * (Xa @ w + b) < 1.0
        eta = step_w(t)
        w *= 1.0 - eta * lam
        if viol.any():
            yv = ya[viol]
            w += (eta / k) * (yv @ Xa[viol])
            if intercept:
                b += step_b(t) * float(yv.sum()) / k
        norm = math.sqrt(float(w @ w))
        if norm > radius:
            w *= radius / norm
        if t % eval_every == 0 or t == max_iter:
            value = full_objective(w, b)
            if value < f_best:
                f_best, w_best, b_best = value, w.copy(), b
            row = dict(objective=value, best=f_best, iteration=t, time=timer())
            if f_star is not None:
                row["suboptimality"] = f_best - f_star
            history.record(**row)
            if callback is not None and callback(t, w, value) is False:
                status = "stopped"
                break
            if f_star is not None and tol > 0 and f_best - f_star <= tol * max(1.0, abs(f_star)):
                status = "converged"
                break
    return w_best, b_best, f_best, t, status, history


def solve_svm(svm: Any, tol: float = 0.0, max_iter: int = 10000, batch_size: int = 1, seed: Any = 0,
              b_scale: float = 1.0, eval_every: int | None = None, f_star: float | None = None,
              callback: Callable[..., Any] | None = None, warm_start: Any = None) -> Solution:
    """Pegasos on a linear-kernel ``svm`` with finite C (see the module docstring).

    Parameters
    ----------
    svm : convexlearn.SVM
    tol : float
        With ``f_star``: stop at an evaluation where F_best - f_star <= tol max(1, |f_star|).
    max_iter : int
        Number of stochastic steps.
    batch_size : int
        Mini-batch size k (1 = the original Pegasos; n = deterministic subgradient with
        the 1/(lam t) step).
    seed : int or numpy.random.Generator
    b_scale : float
        Scale of the intercept's step b_scale / sqrt(t).
    eval_every : int, optional
        Iterations between evaluations of the full objective (default n / k).
    f_star : float, optional
        Optimal value, for the stopping rule and the ``suboptimality`` history column.
    callback : callable, optional
        ``callback(t, w, value)`` at each evaluation; returning False stops.
    warm_start : Solution, optional
        Starting (w, b).

    Returns
    -------
    Solution
        Best evaluated iterate (w, b); ``objective`` in the C-form; ``alpha`` None.
    """
    if not svm.kernel.is_linear or svm.X is None:
        raise NotApplicableError(
            f"method 'pegasos' here is the linear (primal) Pegasos and needs the linear "
            f"kernel; this problem is {svm.describe()}. Use 'subgradient' (kernel form) or "
            f"'smo'")
    if svm.hard_margin:
        raise NotApplicableError("method 'pegasos' needs a finite C (lambda = 1/(n C) > 0)")
    tol = check_nonnegative("tol", tol)
    b_scale = check_positive("b_scale", b_scale)
    timer = Timer()
    w0, b0 = None, 0.0
    if warm_start is not None:
        if not isinstance(warm_start, Solution) or warm_start.w is None:
            raise ParameterError("warm_start for 'pegasos' must be a Solution with w")
        w0, b0 = warm_start.w, warm_start.b
    w, b, f_best, n_iter, status, history = pegasos(
        svm.X, svm.y, svm.C, svm.intercept, int(max_iter), batch_size, seed, b_scale,
        eval_every, f_star, tol, callback, w0, b0)
    return Solution(w=w, b=float(b), objective=f_best, status=status, method="pegasos",
                    n_iter=n_iter, history=history, time_s=timer(),
                    provenance={"solver": "convexlearn.pegasos", "seed": seed,
                                "batch_size": batch_size, "lambda": 1.0 / (svm.n_samples * svm.C),
                                "intercept": "unpenalized, step b_scale/sqrt(t)"
                                if svm.intercept else "none"})
