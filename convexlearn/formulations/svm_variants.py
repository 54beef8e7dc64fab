"""The L2-loss SVM and the Crammer-Singer multiclass SVM as declarative cvxpy problems.

cvxpy is imported inside the functions: loading this module costs nothing.

L2-loss (squared hinge) SVM, per-sample costs C_i, intercept mode "none" (b = 0),
"unpenalized" (the C-form) or "penalized" (LIBLINEAR's bias: + 1/2 b^2)::

    primal  min_{w, b}  1/2 ||w||^2 [+ 1/2 b^2] + sum_i C_i max(0, 1 - y_i (<w, x_i> + b))^2
    dual    max_{a >= 0}  sum_i a_i - 1/2 (y a)^T K (y a) [- 1/2 (y^T a)^2]
                          - sum_i a_i^2 / (4 C_i),      y^T a = 0 (unpenalized only)

Crammer-Singer (no intercept, as LIBLINEAR ``-s 4``), classes 0..k-1, W of shape (k, d)::

    primal  min_W  1/2 sum_m ||w_m||^2 + sum_i C_i max_m (e_im + <w_m - w_{y_i}, x_i>)
    dual    max_A  -1/2 ||A^T X||_F^2 - sum_{i,m} e_im A_im
            s.t.   sum_m A_im = 0,  A_im <= C_i [m = y_i]

with e_im = 1 - [m = y_i] and W = A^T X at the optimum (LIBLINEAR's Solver_MCSVM_CS
minimizes the negative of this dual).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["squared_hinge_primal", "squared_hinge_dual", "crammer_singer_primal",
           "crammer_singer_dual"]


def squared_hinge_primal(y: np.ndarray, C: Any, mode: str, *, X: np.ndarray | None = None,
                         K: np.ndarray | None = None) -> Any:
    """The primal above; ``X`` for the linear kernel (variables w, b), else the Gram matrix
    ``K`` (variables beta, b with f = K beta + b, ||w||^2 = beta^T K beta)."""
    import cvxpy as cp
    from .base import Formulation
    n = y.shape[0]
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    variables = {}
    if X is not None:
        w = variables["w"] = cp.Variable(X.shape[1], name="w")
        scores, reg = X @ w, 0.5 * cp.sum_squares(w)
    else:
        beta = variables["beta"] = cp.Variable(n, name="beta")
        scores, reg = K @ beta, 0.5 * cp.quad_form(beta, cp.psd_wrap(K))
    if mode != "none":
        b = variables["b"] = cp.Variable(name="b")
        scores = scores + b
        if mode == "penalized":
            reg = reg + 0.5 * cp.square(b)
    slack = cp.pos(1 - cp.multiply(y, scores))
    problem = cp.Problem(cp.Minimize(reg + cp.sum(cp.multiply(C, cp.square(slack)))))
    return Formulation(problem, variables, {}, {}, name=f"L2-loss SVM primal ({mode} "
                       f"intercept)", kind="qp")


def squared_hinge_dual(y: np.ndarray, C: Any, mode: str, *, X: np.ndarray | None = None,
                       K: np.ndarray | None = None) -> Any:
    """The dual above (variable ``alpha``; constraint ``balance`` y^T a = 0 for the
    unpenalized intercept). A sample with C_i = 0 has a_i = 0."""
    import cvxpy as cp
    from .base import Formulation
    n = y.shape[0]
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    alpha = cp.Variable(n, name="alpha")
    ya = cp.multiply(y, alpha)
    quad = (cp.sum_squares(X.T @ ya) if X is not None
            else cp.quad_form(ya, cp.psd_wrap(K)))
    pos = C > 0
    ridge = cp.sum(cp.multiply(1.0 / (4.0 * C[pos]), cp.square(alpha[pos])))
    objective = cp.sum(alpha) - 0.5 * quad - ridge
    if mode == "penalized":
        objective = objective - 0.5 * cp.square(cp.sum(ya))
    constraints = {"lower": alpha >= 0}
    if not pos.all():
        constraints["zero"] = alpha[~pos] == 0
    if mode == "unpenalized":
        constraints["balance"] = y @ alpha == 0
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return Formulation(problem, {"alpha": alpha}, constraints, {},
                       name=f"L2-loss SVM dual ({mode} intercept)", kind="qp")


def _cs_costs(n: int, k: int, codes: np.ndarray, C: Any) -> tuple[np.ndarray, np.ndarray]:
    """(C_i broadcast to n, E with e_im = 1 - [m = y_i])."""
    E = np.ones((n, k))
    E[np.arange(n), codes] = 0.0
    return np.broadcast_to(np.asarray(C, dtype=float), (n,)), E


def crammer_singer_primal(X: np.ndarray, codes: np.ndarray, k: int, C: Any) -> Any:
    """The Crammer-Singer primal (variable ``W`` (k, d)); ``codes`` the class indices."""
    import cvxpy as cp
    from .base import Formulation
    n, d = X.shape
    C, E = _cs_costs(n, k, codes, C)
    W = cp.Variable((k, d), name="W")
    S = X @ W.T                                            # (n, k) scores
    Y = np.zeros((n, k))
    Y[np.arange(n), codes] = 1.0
    own = cp.sum(cp.multiply(Y, S), axis=1)                # w_{y_i} . x_i
    worst = cp.max(E + S - cp.reshape(own, (n, 1), order="C") @ np.ones((1, k)), axis=1)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + C @ worst))
    return Formulation(problem, {"W": W}, {}, {}, name="Crammer-Singer primal", kind="qp")


def crammer_singer_dual(X: np.ndarray, codes: np.ndarray, k: int, C: Any) -> Any:
    """The Crammer-Singer dual (variable ``A`` (n, k), W = A^T X)."""
    import cvxpy as cp
    from .base import Formulation
    n, d = X.shape
    C, E = _cs_costs(n, k, codes, C)
    A = cp.Variable((n, k), name="A")
    U = np.zeros((n, k))
    U[np.arange(n), codes] = C
    constraints = {"sum": cp.sum(A, axis=1) == 0, "upper": A <= U}
    objective = -0.5 * cp.sum_squares(A.T @ X) - cp.sum(cp.multiply(E, A))
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return Formulation(problem, {"A": A}, constraints, {}, name="Crammer-Singer dual",
                       kind="qp")
