"""nu-SVC and nu-SVR as declarative cvxpy problems, in LIBSVM's scaling.

nu-SVC (Schoelkopf's problem times n^2, with w, b, rho and xi times n; f = K beta + b,
||w||^2 = beta^T K beta)::

    primal  min_{beta, b, rho}  1/2 beta^T K beta - nu n rho + sum_i max(0, rho - y_i f_i)
    dual    max_a  -1/2 (y a)^T K (y a)
            s.t.   sum_{y_i = +1} a_i = sum_{y_i = -1} a_i = nu n / 2,   0 <= a <= 1

(the dual's two rows are y^T a = 0 and 1^T a = nu n; scikit-learn's answer is this one
divided by rho: ``dual_coef_`` = y a / rho, ``intercept_`` = b / rho; docs/conventions.md).

nu-SVR (scikit-learn's C; Schoelkopf's C is C n; eps is a variable)::

    primal  min_{beta, b, eps}  1/2 beta^T K beta + C (nu n eps
                                + sum_i max(0, |z_i - f_i| - eps))
    dual    max  -1/2 (a+ - a-)^T K (a+ - a-) + z^T (a+ - a-)
            s.t. sum a+ = sum a- = C nu n / 2,   0 <= a+, a- <= C

The Gram matrix K is the problem's (the linear kernel's X X^T). cvxpy is imported inside
the functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["nu_svc_primal", "nu_svc_dual", "nu_svr_primal", "nu_svr_dual"]


def _half_norm(K: np.ndarray, coef: Any) -> Any:
    """1/2 coef^T K coef, K declared PSD (checked by the Gram operator)."""
    import cvxpy as cp
    return 0.5 * cp.quad_form(coef, cp.psd_wrap(K))


def _function(n: int, K: np.ndarray | None, X: np.ndarray | None) -> tuple[Any, Any, dict]:
    """(the values f - b at the samples, 1/2 ||w||^2, the variables): w for the linear
    kernel given ``X`` (a well-posed primal when K has low rank), else beta."""
    import cvxpy as cp
    if X is not None:
        w = cp.Variable(X.shape[1], name="w")
        return X @ w, 0.5 * cp.sum_squares(w), {"w": w}
    beta = cp.Variable(n, name="beta")
    return K @ beta, _half_norm(K, beta), {"beta": beta}


def nu_svc_primal(y: np.ndarray, nu: float, K: np.ndarray | None = None,
                  X: np.ndarray | None = None) -> Any:
    """The nu-SVC primal in LIBSVM's scaling (variables ``beta`` or, with ``X`` for the
    linear kernel, ``w``; ``b``, ``rho``)."""
    import cvxpy as cp
    from .base import Formulation
    n = y.shape[0]
    values, half, variables = _function(n, K, X)
    b, rho = cp.Variable(name="b"), cp.Variable(name="rho")
    margins = cp.multiply(y, values + b)
    objective = half - nu * n * rho + cp.sum(cp.pos(rho - margins))
    return Formulation(cp.Problem(cp.Minimize(objective)), {**variables, "b": b, "rho": rho},
                       {}, {}, name="nu-SVC primal", kind="qp")


def nu_svc_dual(y: np.ndarray, nu: float, K: np.ndarray) -> Any:
    """The nu-SVC dual in LIBSVM's scaling (variable ``alpha``; constraints ``positive``
    and ``negative``, the rows of the two classes)."""
    import cvxpy as cp
    from .base import Formulation
    n = y.shape[0]
    alpha = cp.Variable(n, name="alpha")
    pos, neg = (y > 0).astype(float), (y < 0).astype(float)
    constraints = {"lower": alpha >= 0, "upper": alpha <= 1,
                   "positive": pos @ alpha == nu * n / 2, "negative": neg @ alpha == nu * n / 2}
    problem = cp.Problem(cp.Maximize(-_half_norm(K, cp.multiply(y, alpha))),
                         list(constraints.values()))
    return Formulation(problem, {"alpha": alpha}, constraints, {}, name="nu-SVC dual",
                       kind="qp")


def nu_svr_primal(z: np.ndarray, C: float, nu: float, K: np.ndarray | None = None,
                  X: np.ndarray | None = None) -> Any:
    """The nu-SVR primal (variables ``beta`` or ``w`` with ``X``; ``b``, ``epsilon``)."""
    import cvxpy as cp
    from .base import Formulation
    n = z.shape[0]
    values, half, variables = _function(n, K, X)
    b, eps = cp.Variable(name="b"), cp.Variable(name="epsilon")
    outside = cp.sum(cp.pos(cp.abs(z - values - b) - eps))
    objective = half + C * (nu * n * eps + outside)
    return Formulation(cp.Problem(cp.Minimize(objective)),
                       {**variables, "b": b, "epsilon": eps}, {}, {}, name="nu-SVR primal",
                       kind="qp")


def nu_svr_dual(z: np.ndarray, C: float, nu: float, K: np.ndarray) -> Any:
    """The nu-SVR dual in (a+, a-) (variables ``alpha_plus``, ``alpha_minus``)."""
    import cvxpy as cp
    from .base import Formulation
    n = z.shape[0]
    ap, am = cp.Variable(n, name="alpha_plus"), cp.Variable(n, name="alpha_minus")
    half = C * nu * n / 2
    constraints = {"lower": [ap >= 0, am >= 0], "upper": [ap <= C, am <= C],
                   "positive": cp.sum(ap) == half, "negative": cp.sum(am) == half}
    flat = (constraints["lower"] + constraints["upper"]
            + [constraints["positive"], constraints["negative"]])
    objective = -_half_norm(K, ap - am) + z @ (ap - am)
    return Formulation(cp.Problem(cp.Maximize(objective), flat),
                       {"alpha_plus": ap, "alpha_minus": am}, constraints, {},
                       name="nu-SVR dual", kind="qp")
