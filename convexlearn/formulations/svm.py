"""The SVM as declarative cvxpy problems (C-form, docs/conventions.md).

Primal, slack form (soft margin)::

    min_{w, b, xi}  1/2 ||w||^2 + C sum_i xi_i
    s.t.            y_i (<w, x_i> + b) >= 1 - xi_i,   xi_i >= 0

hard margin: no xi, ``y_i (<w, x_i> + b) >= 1``; hinge form: ``xi_i = max(0, 1 - m_i)``
substituted into the objective. For a nonlinear kernel the primal is written in the
expansion coefficients beta of ``f(x) = sum_j beta_j k(x_j, x) + b`` (representer
theorem), with ``||w||^2 = beta^T K beta``.

Dual::

    max_alpha  sum_i alpha_i - 1/2 alpha^T Q alpha,   Q_ij = y_i y_j k(x_i, x_j)
    s.t.       0 <= alpha_i <= C  (no upper bound for the hard margin),  y^T alpha = 0

The intercept b is never penalized; without intercept, b = 0 and the equality
constraint disappears. ``C`` is a cvxpy Parameter: re-solving for another C does not
recompile (DPP).

Speed (measured in benchmarks/): the kernel dual is a QP with ``quad_form`` of the
checked PSD matrix Q wrapped in ``psd_wrap``; a dense factor ``sum_squares(L^T a)`` is
~20x slower at n=1500. For the linear kernel the dual uses the factor X^T when d < n
(a d x n factor is cheap), else Q.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .base import Formulation

if TYPE_CHECKING:
    import cvxpy as cp

__all__ = ["svm_primal", "svm_dual"]


def _cost_parameter(C: float) -> cp.Parameter:
    import cvxpy as cp
    return cp.Parameter(nonneg=True, value=C, name="C")


def svm_primal(y: np.ndarray, C: float, intercept: bool, form: str = "slack", *,
               X: np.ndarray | None = None, K: np.ndarray | None = None,
               weights: np.ndarray | None = None) -> Formulation:
    """Build the primal SVM problem.

    Pass ``X`` for the linear kernel (variables w, b, xi) or the Gram matrix ``K`` for
    any kernel (variables beta, b, xi, with f = K beta + b).

    Variables: ``w`` or ``beta``, ``b`` (when ``intercept``), ``xi`` (soft margin,
    slack form). Constraints: ``margin`` (its dual values are alpha) and ``slack``
    (xi >= 0; dual values C - alpha). Parameter: ``C`` (soft margin). ``weights`` s_i
    give each sample its own cost C s_i (objective C sum_i s_i xi_i).
    """
    import cvxpy as cp
    hard = math.isinf(C)
    n = y.shape[0]
    variables, constraints, parameters = {}, {}, {}
    if X is not None:
        w = cp.Variable(X.shape[1], name="w")
        variables["w"] = w
        scores = X @ w
        regularizer = 0.5 * cp.sum_squares(w)
    else:
        beta = cp.Variable(n, name="beta")
        variables["beta"] = beta
        scores = K @ beta
        regularizer = 0.5 * cp.quad_form(beta, cp.psd_wrap(K))
    if intercept:
        b = cp.Variable(name="b")
        variables["b"] = b
        scores = scores + b
    margins = cp.multiply(y, scores)
    if hard:
        constraints["margin"] = margins >= 1
        objective = regularizer
        label = "hard-margin SVM primal"
    else:
        C_par = _cost_parameter(C)
        parameters["C"] = C_par
        if form == "slack":
            xi = cp.Variable(n, name="xi")
            variables["xi"] = xi
            constraints["margin"] = margins >= 1 - xi
            constraints["slack"] = xi >= 0
            slack = xi
        else:
            slack = cp.pos(1 - margins)
        total = cp.sum(slack) if weights is None else weights @ slack
        objective = regularizer + C_par * total
        label = f"soft-margin SVM primal ({form} form)"
        if weights is not None:
            label += " with per-sample costs C_i = C s_i"
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    return Formulation(problem, variables, constraints, parameters, name=label, kind="qp")


def svm_dual(y: np.ndarray, C: float, intercept: bool, *, X: np.ndarray | None = None,
             K: np.ndarray | None = None, weights: np.ndarray | None = None) -> Formulation:
    """Build the dual SVM problem (a QP in alpha).

    Pass ``X`` for the linear kernel (the factor form 1/2 ||X^T (y * alpha)||^2 is used
    when d < n) or the PSD Gram matrix ``K`` (``quad_form`` of ``Q = (y y^T) * K``
    wrapped in ``psd_wrap``: the caller must have checked K). Constraints: ``lower``
    (alpha >= 0), ``upper`` (alpha <= C, soft margin), ``balance`` (y^T alpha = 0, with
    intercept; its dual value is the intercept b up to sign). With ``weights`` s_i the
    box is 0 <= alpha_i <= C s_i.
    """
    import cvxpy as cp
    hard = math.isinf(C)
    n = y.shape[0]
    alpha = cp.Variable(n, name="alpha")
    if X is not None and X.shape[1] < n:
        quadratic = 0.5 * cp.sum_squares(X.T @ cp.multiply(y, alpha))
    else:
        G = X @ X.T if X is not None else K
        Q = (y[:, None] * y[None, :]) * G
        quadratic = 0.5 * cp.quad_form(alpha, cp.psd_wrap(Q))
    constraints, parameters = {"lower": alpha >= 0}, {}
    if not hard:
        C_par = _cost_parameter(C)
        parameters["C"] = C_par
        constraints["upper"] = alpha <= (C_par if weights is None else C_par * weights)
    if intercept:
        constraints["balance"] = y @ alpha == 0
    problem = cp.Problem(cp.Maximize(cp.sum(alpha) - quadratic), list(constraints.values()))
    label = ("hard" if hard else "soft") + "-margin SVM dual"
    if weights is not None:
        label += " with per-sample costs C_i = C s_i"
    return Formulation(problem, {"alpha": alpha}, constraints, parameters, name=label, kind="qp")
