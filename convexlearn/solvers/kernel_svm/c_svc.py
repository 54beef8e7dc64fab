"""The C-SVC as a dual QP: the function that builds it from an SVM and the one that reads
its answer back.

The dual of the C-form SVM (docs/conventions.md) is the QP of
:mod:`~convexlearn.solvers.kernel_svm.qp` with

    Q_ij = y_i y_j K_ij,  p = -1,  0 <= a_i <= C s_i,  y^T a = 0 (with intercept)

on the problem's Gram operator. Its cases are fields of the QP: the hard margin is
u = inf, ``intercept=False`` has no equality row, sample weights make u per variable.
Reading back: beta = y * a, b from the polish or from the multipliers
(:func:`~convexlearn.solvers.kernel_svm.polish.intercept_from_alpha`), w = X^T beta for
the linear kernel, xi = max(0, 1 - y (g + b)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...solution import Solution
from .polish import intercept_from_alpha
from .qp import DualQP

__all__ = ["c_svc_qp", "c_svc_solution"]


def c_svc_qp(svm: Any) -> DualQP:
    """The dual QP of ``svm`` (a :class:`convexlearn.SVM`): s = y, p = -1, u = C_i."""
    y = svm.y
    upper = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), y.shape)
    rows = ((y, 0.0),) if svm.intercept else ()
    return DualQP.on_samples(svm.gram_operator, y, -1.0, upper, rows, name="C-SVC dual")


def c_svc_solution(svm: Any, alpha: np.ndarray, g: np.ndarray, b: float | None = None
                   ) -> Solution:
    """The SVM solution that multipliers ``alpha`` of the C-SVC's QP imply.

    Parameters
    ----------
    svm : convexlearn.SVM
    alpha : ndarray
    g : ndarray
        K (y * alpha) at the training samples (f = g + b).
    b : float, optional
        The intercept when a method found it (the active-set polish); otherwise taken from
        the free multipliers (the midpoint of the feasible interval when none is free);
        ``extra["intercept_rule"]`` says which.
    """
    y = svm.y
    if not svm.intercept:
        b, rule = 0.0, "no intercept"
    elif b is not None:
        rule = "active-set polish"
    else:
        b, rule = intercept_from_alpha(y, svm.C_bounds, alpha, g)
    beta = y * alpha
    w = svm.X.T @ beta if svm.kernel.is_linear and svm.X is not None else None
    xi = None if svm.hard_margin else np.maximum(0.0, 1.0 - y * (g + b))
    sol = Solution(w=w, b=float(b), alpha=alpha, xi=xi, dual_coef=beta)
    sol.extra["intercept_rule"] = rule
    return sol
