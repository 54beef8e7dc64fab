"""Full-batch subgradient descent on the hinge form of the SVM, linear and kernel.

Hinge form (docs/conventions.md), with margins m_i = y_i f(x_i)::

    F(w, b) = 1/2 ||w||^2 + C sum_i max(0, 1 - m_i)

A subgradient, with L' = {i : m_i < 1} the *margin violators*::

    g_w = w - C sum_{i in L'} y_i x_i,        g_b = -C sum_{i in L'} y_i

(at m_i = 1 the hinge has the subdifferential [-1, 0] times y_i x_i, and 0 is a valid
choice). The sum runs over L' only: the lecture's eq. (9) sums over the whole sample L,
which is the gradient of 1/2 ||w||^2 - C sum_i m_i, not of the hinge - wrong wherever some
m_i > 1. Step: w <- w - eta_t g_w (here w - eta w + eta C sum_{L'} y_i x_i).

Kernel form: f(x) = sum_i a_i y_i k(x_i, x) + b, kept as beta = y * a (f = K beta + b).
The step is taken in the feature space (the RKHS): w = sum_i beta_i phi(x_i) has the
subgradient g_w = sum_i (beta_i - C y_i [i in L']) phi(x_i), i.e. the coefficients

    g_beta = beta - C y * 1[L'],     ||g_w||^2 = g_beta^T K g_beta

so with the linear kernel the iterates are exactly those of the linear method (w = X^T beta)
and the same guarantees hold. The Polyak rule gets this feature-space norm.

Step rules and the loop are :mod:`convexlearn.solvers.steps` (shared with ERM). Default:
Polyak when ``f_star`` is given; else 1/(mu t) with mu = 1 without intercept (F is
1-strongly convex in w); else a / sqrt(t) (F is not strongly convex in the unpenalized b).
Rates of the best iterate: O(1/sqrt t) for 1/sqrt(t) and Polyak, O(log t / t) for 1/t.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...data import check_nonnegative
from ...errors import NotApplicableError, ParameterError
from ...solution import Solution, Timer
from ..steps import make_step_rule, run_subgradient

__all__ = ["solve_svm", "svm_oracle"]


def svm_oracle(svm: Any) -> Any:
    """``x -> (F(x), g)`` for the hinge form; x = (w[, b]) or (beta[, b]) for kernels.

    Also returns ``sq_norm(g)``, the squared norm of g in feature space (Euclidean for
    the linear kernel, g_beta^T K g_beta + g_b^2 for kernels).
    """
    y, C, icpt = svm.y, svm.C, svm.intercept
    linear = svm.kernel.is_linear and svm.X is not None
    A = svm.X if linear else svm.gram
    p = A.shape[1]

    def split(x):
        return x[:p], (x[p] if icpt else 0.0)

    def oracle(x):
        v, b = split(x)
        Av = A @ v
        m = y * (Av + b)
        viol = m < 1.0                                   # L', the margin violators
        reg = float(v @ v) if linear else float(v @ Av)  # ||w||^2 (= beta^T K beta)
        value = 0.5 * reg + C * float(np.sum(1.0 - m[viol]))
        yv = np.where(viol, y, 0.0)
        g_v = v - C * (A.T @ yv) if linear else v - C * yv
        g = np.append(g_v, -C * yv.sum()) if icpt else g_v
        return value, g

    def sq_norm(g):
        gv, gb = split(g)
        return float(gv @ gv if linear else gv @ (A @ gv)) + gb * gb

    return oracle, sq_norm, p


def solve_svm(svm: Any, tol: float = 0.0, max_iter: int = 5000, step: float | None = None,
              step_scale: float = 1.0,
              f_star: float | None = None, callback: Callable[..., Any] | None = None,
              warm_start: Any = None) -> Solution:
    """Subgradient descent on the hinge form of ``svm`` (soft margin, any kernel).

    Parameters
    ----------
    svm : convexlearn.SVM
        Finite C (the hard margin has no hinge form).
    tol : float
        With ``f_star``: stop when F_best - f_star <= tol * max(1, |f_star|). Otherwise
        the method runs ``max_iter`` iterations (a subgradient method has no computable
        stopping rule).
    max_iter : int
    step : str or StepRule, optional
        "constant", "sqrt", "1/t" (mu = 1; needs intercept=False), "polyak" (needs
        f_star). Default: see the module docstring.
    step_scale : float
        ``a`` of the constant and a/sqrt(t) rules.
    f_star : float, optional
        The optimal value (e.g. from ``svm.solve()``).
    callback : callable, optional
        ``callback(t, x, value)``; returning False stops.
    warm_start : Solution or ndarray, optional
        A starting point: a Solution (w, b or dual_coef, b) or the vector x.

    Returns
    -------
    Solution
        The best iterate: ``w`` (linear) or ``dual_coef`` = beta (kernels), ``b``,
        ``objective`` = F of the best iterate; ``alpha`` is None (primal method).
        History: objective, best, step, time (and suboptimality with f_star).
    """
    if svm.hard_margin:
        raise NotApplicableError(
            "method 'subgradient' minimizes the hinge form 1/2 ||w||^2 + C sum hinge, which "
            "needs a finite C; the hard-margin SVM is constrained (use 'smo' or 'exact')")
    tol = check_nonnegative("tol", tol)
    timer = Timer()
    oracle, sq_norm, p = svm_oracle(svm)
    if step is None:
        step = "polyak" if f_star is not None else ("1/t" if not svm.intercept else "sqrt")
    if step == "1/t" and svm.intercept:
        raise ParameterError("step='1/t' needs a strongly convex objective; with an "
                             "unpenalized intercept F is not strongly convex in b: use "
                             "intercept=False, or step='sqrt' / 'polyak'")
    rule = make_step_rule(step, scale=step_scale, mu=1.0, f_star=f_star)
    x0 = _start(svm, warm_start, p)
    linear = svm.kernel.is_linear and svm.X is not None
    # A kernel expansion steps in feature space: its Polyak step and zero-subgradient
    # stop need g_beta^T K g_beta, not the coordinates' norm.
    res = run_subgradient(oracle, x0, rule, max_iter=max_iter, tol=tol, callback=callback,
                          f_star=f_star, norm2=None if linear else sq_norm)
    v = res.x_best[:p]
    b = float(res.x_best[p]) if svm.intercept else 0.0
    sol = Solution(w=v.copy() if linear else None, b=b, objective=res.f_best,
                   status=res.status, method="subgradient", n_iter=res.n_iter,
                   history=res.history, time_s=timer(),
                   provenance={"solver": "convexlearn.subgradient", "step": rule.name,
                               "step_scale": rule.scale, "f_star": f_star, "tol": tol,
                               "max_iter": max_iter},
                   dual_coef=None if linear else v.copy())
    return sol


def _start(svm, warm_start, p: int) -> np.ndarray:
    size = p + (1 if svm.intercept else 0)
    if warm_start is None:
        return np.zeros(size)
    if isinstance(warm_start, Solution):
        linear = svm.kernel.is_linear and svm.X is not None
        v = warm_start.w if linear else warm_start.dual_coef
        if v is None and warm_start.alpha is not None:
            beta = svm.y * np.asarray(warm_start.alpha, float)
            v = svm.X.T @ beta if linear else beta
        if v is None:
            raise ParameterError("warm_start: the solution has neither w nor a kernel expansion")
        x = np.append(np.asarray(v, float), warm_start.b) if svm.intercept else np.asarray(v, float)
    else:
        x = np.asarray(warm_start, dtype=float)
    if x.shape != (size,):
        raise ParameterError(f"warm_start must have shape ({size},) for this problem; "
                             f"got {x.shape}")
    return x.copy()
