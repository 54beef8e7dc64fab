"""Epsilon-SVR and the one-class SVM as declarative cvxpy problems (LIBSVM's scaling).

epsilon-SVR, primal (f = <w, phi(x)> + b; for a kernel, f = K beta + b and ||w||^2 =
beta^T K beta)::

    min_{w, b}  1/2 ||w||^2 + C sum_i max(0, |y_i - f(x_i)| - eps)

dual (a+ the multipliers of y - f <= eps + xi, a- of f - y <= eps + xi*)::

    max  -1/2 (a+ - a-)^T K (a+ - a-) - eps 1^T (a+ + a-) + y^T (a+ - a-)
    s.t. 1^T (a+ - a-) = 0,   0 <= a+, a- <= C

one-class SVM (LIBSVM's form: Schoelkopf's problem times (nu n)^2, so that the box is
[0, 1] and the row sums to nu n; docs/conventions.md), primal and dual::

    min_{w, rho}  1/2 ||w||^2 - nu n rho + sum_i max(0, rho - <w, phi(x_i)>)
    max_a  -1/2 a^T K a   s.t.  1^T a = nu n,  0 <= a <= 1

f(x) = <w, phi(x)> - rho. cvxpy is imported inside the functions (``import convexlearn``
does not load it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["svr_primal", "svr_dual", "one_class_primal", "one_class_dual"]


def _scores(X: np.ndarray | None, K: np.ndarray | None, n: int) -> tuple[Any, Any, dict]:
    """(w^T x_i or K beta, 1/2 ||w||^2, variables) of the linear or kernel form."""
    import cvxpy as cp
    if X is not None:
        w = cp.Variable(X.shape[1], name="w")
        return X @ w, 0.5 * cp.sum_squares(w), {"w": w}
    beta = cp.Variable(n, name="beta")
    return K @ beta, 0.5 * cp.quad_form(beta, cp.psd_wrap(K)), {"beta": beta}


def _quadratic(coef: Any, X: np.ndarray | None, K: np.ndarray | None, n: int) -> Any:
    """1/2 coef^T K coef: the factor form ||X^T coef||^2 when d < n, else quad_form."""
    import cvxpy as cp
    if X is not None and X.shape[1] < n:
        return 0.5 * cp.sum_squares(X.T @ coef)
    G = X @ X.T if X is not None else K
    return 0.5 * cp.quad_form(coef, cp.psd_wrap(G))


def svr_primal(y: np.ndarray, C: float, epsilon: float, *, X: np.ndarray | None = None,
               K: np.ndarray | None = None, intercept: bool = True) -> Any:
    """The epsilon-SVR primal: ``X`` for the linear kernel (variables w, b), or the PSD
    Gram matrix ``K`` (beta, b); no b without ``intercept``."""
    import cvxpy as cp
    from .base import Formulation
    n = y.shape[0]
    scores, regularizer, variables = _scores(X, K, n)
    if intercept:
        variables["b"] = cp.Variable(name="b")
        scores = scores + variables["b"]
    loss = cp.sum(cp.pos(cp.abs(y - scores) - epsilon))
    problem = cp.Problem(cp.Minimize(regularizer + C * loss))
    return Formulation(problem, variables, {}, {}, name="epsilon-SVR primal", kind="qp")


def svr_dual(y: np.ndarray, C: float, epsilon: float, *, X: np.ndarray | None = None,
             K: np.ndarray | None = None, intercept: bool = True) -> Any:
    """The epsilon-SVR dual in (a+, a-) (variables ``alpha_plus``, ``alpha_minus``;
    constraint ``balance``, with intercept, whose dual value is the intercept up to
    sign)."""
    import cvxpy as cp
    from .base import Formulation
    n = y.shape[0]
    ap = cp.Variable(n, name="alpha_plus")
    am = cp.Variable(n, name="alpha_minus")
    coef = ap - am
    objective = -_quadratic(coef, X, K, n) - epsilon * cp.sum(ap + am) + y @ coef
    constraints = {"lower": [ap >= 0, am >= 0], "upper": [ap <= C, am <= C]}
    flat = constraints["lower"] + constraints["upper"]
    if intercept:
        constraints["balance"] = cp.sum(coef) == 0
        flat.append(constraints["balance"])
    problem = cp.Problem(cp.Maximize(objective), flat)
    return Formulation(problem, {"alpha_plus": ap, "alpha_minus": am}, constraints, {},
                       name="epsilon-SVR dual", kind="qp")


def one_class_primal(nu: float, n: int, *, X: np.ndarray | None = None,
                     K: np.ndarray | None = None) -> Any:
    """The one-class SVM primal in LIBSVM's scaling (variables w or beta, and rho)."""
    import cvxpy as cp
    from .base import Formulation
    scores, regularizer, variables = _scores(X, K, n)
    rho = cp.Variable(name="rho")
    variables["rho"] = rho
    objective = regularizer - nu * n * rho + cp.sum(cp.pos(rho - scores))
    return Formulation(cp.Problem(cp.Minimize(objective)), variables, {}, {},
                       name="one-class SVM primal", kind="qp")


def one_class_dual(nu: float, n: int, *, X: np.ndarray | None = None,
                   K: np.ndarray | None = None) -> Any:
    """The one-class SVM dual in LIBSVM's scaling (variable ``alpha``; constraint
    ``balance`` 1^T a = nu n, whose dual value is rho up to sign)."""
    import cvxpy as cp
    from .base import Formulation
    alpha = cp.Variable(n, name="alpha")
    constraints = {"lower": alpha >= 0, "upper": alpha <= 1,
                   "balance": cp.sum(alpha) == nu * n}
    problem = cp.Problem(cp.Maximize(-_quadratic(alpha, X, K, n)),
                         list(constraints.values()))
    return Formulation(problem, {"alpha": alpha}, constraints, {},
                       name="one-class SVM dual", kind="qp")
