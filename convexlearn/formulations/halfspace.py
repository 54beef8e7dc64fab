"""The halfspace (linear separability) problems as declarative cvxpy LPs.

Consistency LP (docs/conventions.md; the lectures' Theorem 9.6)::

    find  w in R^d, b in R   s.t.   y_i (<w, x_i> + b) >= 1,   i = 1..n

(homogeneous: b = 0). Any strictly separating hyperplane can be rescaled to meet the
constraints, so the LP is feasible iff the data are linearly separable.

Certificate LP (its Farkas alternative)::

    find  lambda in R^n   s.t.  lambda >= 0,  sum_i lambda_i y_i x_i = 0,
                                sum_{y_i=+1} lambda_i = sum_{y_i=-1} lambda_i = 1

feasible iff the convex hulls of the two classes meet (at ``sum_{y=+1} lambda_i x_i``).
Homogeneous: the two class sums are replaced by ``sum_i lambda_i = 1`` (lambda != 0),
i.e. the convex cones of the classes, y_i x_i, contain a common non-trivial
combination summing to zero. Exactly one of the two LPs is feasible.

Minimum-total-slack LP::

    min_{w, b, xi}  sum_i xi_i   s.t.  y_i (<w, x_i> + b) >= 1 - xi_i,   xi >= 0

always feasible; its value is 0 iff the data are separable. Its dual is
``max sum_i lambda_i  s.t.  0 <= lambda <= 1, sum_i lambda_i y_i x_i = 0,
sum_i lambda_i y_i = 0`` (the last only with an intercept): a dual point with positive
value is, after scaling, a certificate of the form above.

All three are LPs (``kind="lp"``), solved by HiGHS through
:func:`~convexlearn.formulations.base.solve_formulation`. :func:`lp_data` writes the same
three LPs as matrices for ``scipy.optimize.linprog`` (HiGHS without cvxpy's compilation,
which dominates at n = 20000, d = 50: see benchmarks/bench_separability.py);
:func:`solve_lp_data` solves them and returns the same named values.
:func:`solve_consistency_highspy` solves the consistency LP through highspy directly and,
when it is infeasible, reads HiGHS's *dual ray*: a Farkas certificate y of
``{z : A z >= 1}`` with ``A^T y = 0``, ``y >= 0``, ``1^T y > 0`` (rows
``A_i = y_i [x_i, 1]``), i.e. up to scale exactly the lambda of the certificate LP. One LP
then answers both ways.
"""

from __future__ import annotations

import time
from importlib.metadata import version

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..errors import SolverError
from .base import Formulation, silence_highs_banner

__all__ = ["consistency_lp", "certificate_lp", "min_slack_lp", "lp_data", "solve_lp_data",
           "solve_consistency_highspy", "highspy_provenance", "LP_BUILDERS"]


def _scores(X: np.ndarray, homogeneous: bool):
    import cvxpy as cp
    w = cp.Variable(X.shape[1], name="w")
    variables = {"w": w}
    scores = X @ w
    if not homogeneous:
        b = cp.Variable(name="b")
        variables["b"] = b
        scores = scores + b
    return variables, scores


def consistency_lp(X: np.ndarray, y: np.ndarray, homogeneous: bool = False) -> Formulation:
    """The consistency LP: find (w, b) with ``y_i (<w, x_i> + b) >= 1`` for all i.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,), values in {-1, +1}
    homogeneous : bool
        Drop the intercept (b = 0).

    Returns
    -------
    Formulation
        Variables ``w`` (and ``b``); constraint ``margin``; objective 0 (a
        feasibility problem).
    """
    import cvxpy as cp
    variables, scores = _scores(X, homogeneous)
    margin = cp.multiply(y, scores) >= 1
    problem = cp.Problem(cp.Minimize(0), [margin])
    name = ("homogeneous" if homogeneous else "affine") + " halfspace consistency LP"
    return Formulation(problem, variables, {"margin": margin}, name=name, kind="lp")


def certificate_lp(X: np.ndarray, y: np.ndarray, homogeneous: bool = False) -> Formulation:
    """The certificate LP: lambda >= 0 with ``sum_i lambda_i y_i x_i = 0`` and normalization.

    Affine: ``sum_{y=+1} lambda_i = sum_{y=-1} lambda_i = 1`` (the hulls meet).
    Homogeneous: ``sum_i lambda_i = 1``. A simplex solver returns a basic solution, with
    at most d + 2 (homogeneous: d + 1) nonzero entries, which keeps the exact rational
    check of :mod:`convexlearn.certify.separability` small.

    Returns
    -------
    Formulation
        Variable ``lambda``; constraints ``balance`` (the d equations
        ``X^T (y * lambda) = 0``) and ``normalization``.
    """
    import cvxpy as cp
    n = X.shape[0]
    lam = cp.Variable(n, nonneg=True, name="lambda")
    balance = X.T @ cp.multiply(y, lam) == 0
    if homogeneous:
        normalization = cp.sum(lam) == 1
    else:
        # One row per class: [1{y=+1}; 1{y=-1}] lambda = [1; 1].
        classes = np.vstack([(y > 0), (y < 0)]).astype(float)
        normalization = classes @ lam == np.ones(2)
    problem = cp.Problem(cp.Minimize(0), [balance, normalization])
    name = ("homogeneous" if homogeneous else "affine") + " separability certificate LP"
    return Formulation(problem, {"lambda": lam},
                       {"balance": balance, "normalization": normalization},
                       name=name, kind="lp")


def min_slack_lp(X: np.ndarray, y: np.ndarray, homogeneous: bool = False) -> Formulation:
    """The minimum-total-slack LP: ``min sum_i xi_i`` s.t. ``y_i f(x_i) >= 1 - xi_i``, ``xi >= 0``.

    Returns
    -------
    Formulation
        Variables ``w`` (and ``b``), ``xi``; constraints ``margin`` (dual values: the
        lambda of the dual LP, in [0, 1]) and ``slack``.
    """
    import cvxpy as cp
    variables, scores = _scores(X, homogeneous)
    xi = cp.Variable(X.shape[0], name="xi")
    variables["xi"] = xi
    margin = cp.multiply(y, scores) >= 1 - xi
    slack = xi >= 0
    problem = cp.Problem(cp.Minimize(cp.sum(xi)), [margin, slack])
    name = ("homogeneous" if homogeneous else "affine") + " minimum-total-slack LP"
    return Formulation(problem, variables, {"margin": margin, "slack": slack},
                       name=name, kind="lp")


#: The three LPs by name.
LP_BUILDERS = {"consistency": consistency_lp, "certificate": certificate_lp,
               "min_slack": min_slack_lp}


def lp_data(X: np.ndarray, y: np.ndarray, homogeneous: bool, which: str) -> dict:
    """The LP ``which`` ("consistency", "certificate", "min_slack") as linprog matrices.

    Variables are stacked as ``(w, b)``, ``lambda`` or ``(w, b, xi)`` (no b when
    homogeneous); the constraints are those of the cvxpy builders above, with
    ``y_i (<w, x_i> + b) >= 1 - xi_i`` written as ``-y_i [x_i, 1] (w, b) - xi_i <= -1``.

    Returns
    -------
    dict
        linprog keyword arguments (``c``, ``A_ub``, ``b_ub``, ``A_eq``, ``b_eq``,
        ``bounds``) and ``"split"``: how to cut the solution vector into named values.
    """
    n, d = X.shape
    A = X if homogeneous else np.hstack([X, np.ones((n, 1))])
    p = A.shape[1]
    signed = -(y[:, None] * A)
    names = ["w"] if homogeneous else ["w", "b"]
    if which == "consistency":
        return {"c": np.zeros(p), "A_ub": signed, "b_ub": -np.ones(n), "bounds": (None, None),
                "split": names}
    if which == "certificate":
        rows = [np.ones(n)] if homogeneous else [(y > 0).astype(float), (y < 0).astype(float)]
        A_eq = np.vstack([(X * y[:, None]).T, *rows])
        b_eq = np.r_[np.zeros(d), np.ones(len(rows))]
        return {"c": np.zeros(n), "A_eq": A_eq, "b_eq": b_eq, "bounds": (0, None),
                "split": ["lambda"]}
    if which == "min_slack":
        A_ub = sp.hstack([sp.csr_matrix(signed), -sp.identity(n, format="csr")], format="csr")
        return {"c": np.r_[np.zeros(p), np.ones(n)], "A_ub": A_ub, "b_ub": -np.ones(n),
                "bounds": [(None, None)] * p + [(0, None)] * n, "split": names + ["xi"]}
    raise ValueError(f"unknown LP {which!r}")


def solve_lp_data(data: dict, d: int, name: str) -> tuple[dict | None, float]:
    """Solve :func:`lp_data` with ``linprog(method="highs")``.

    Returns
    -------
    values : dict or None
        None when HiGHS reports the LP infeasible; otherwise the named values (``w``,
        ``b``, ``lambda``, ``xi``), ``"value"`` (objective) and ``"provenance"``.
    solver_time : float
        Seconds spent in linprog.

    Raises
    ------
    SolverError
        For any other status (iteration limit, numerical trouble, unbounded).
    """
    args = {k: v for k, v in data.items() if k != "split"}
    start = time.perf_counter()
    res = linprog(method="highs", **args)
    elapsed = time.perf_counter() - start
    if res.status == 2:
        return None, elapsed
    if res.status != 0:
        raise SolverError(f"HiGHS (scipy.optimize.linprog) returned status {res.status} on the "
                          f"{name}: {res.message}")
    x, out, pos = res.x, {}, 0
    for key in data["split"]:
        size = {"w": d, "b": 1}.get(key, x.size - pos if key in ("lambda", "xi") else 0)
        out[key] = float(x[pos]) if key == "b" else x[pos:pos + size]
        pos += size
    out["value"] = float(res.fun)
    out["provenance"] = {"solver": "HIGHS", "interface": "scipy.optimize.linprog",
                         "solver_version": f"scipy {version('scipy')}", "status": res.message}
    return out, elapsed


def highspy_provenance() -> dict:
    """Provenance of a direct highspy solve."""
    return {"solver": "HIGHS", "interface": "highspy", "solver_version": version("highspy")}


def solve_consistency_highspy(X: np.ndarray, y: np.ndarray,
                              homogeneous: bool) -> tuple[dict | None, np.ndarray | None, float]:
    """The consistency LP through highspy, with the Farkas ray when it is infeasible.

    Rows ``A_i = y_i [x_i, 1]`` (homogeneous: ``y_i x_i``) with bounds ``A_i z >= 1``,
    free columns ``z = (w, b)``, zero cost.

    Returns
    -------
    values : dict or None
        ``{"w", "b", "value", "provenance"}`` where feasible; None where infeasible.
    ray : ndarray or None
        Where infeasible and HiGHS provides one: the dual ray, sign-fixed so that it is
        >= 0 up to round-off (unnormalized; the caller normalizes and verifies it).
    solver_time : float

    Raises
    ------
    SolverError
        Any status other than optimal or infeasible.
    """
    import highspy

    silence_highs_banner()
    n, d = X.shape
    A = y[:, None] * (X if homogeneous else np.hstack([X, np.ones((n, 1))]))
    p = A.shape[1]
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = p, n
    lp.col_cost_ = np.zeros(p)
    lp.col_lower_, lp.col_upper_ = np.full(p, -inf), np.full(p, inf)
    lp.row_lower_, lp.row_upper_ = np.ones(n), np.full(n, inf)
    # Dense rows passed row-wise: no sparse conversion of the n x p matrix.
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.arange(0, n * p + 1, p, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(p, dtype=np.int32), n)
    lp.a_matrix_.value_ = A.ravel()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(lp)
    start = time.perf_counter()
    h.run()
    status = h.getModelStatus()
    ray = None
    if status == highspy.HighsModelStatus.kInfeasible:
        *_, exists, values = h.getDualRay()     # (status, exists, ray)
        if exists:
            ray = np.asarray(values, dtype=float)
            ray = -ray if ray.sum() < 0 else ray   # HiGHS's sign convention for >= rows
        return None, ray, time.perf_counter() - start
    elapsed = time.perf_counter() - start
    if status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"HiGHS (highspy) returned {h.modelStatusToString(status)!r} on the "
                          f"{'homogeneous' if homogeneous else 'affine'} halfspace consistency LP")
    z = np.asarray(h.getSolution().col_value, dtype=float)
    values = {"w": z[:d], "value": 0.0, "provenance": highspy_provenance()}
    if not homogeneous:
        values["b"] = float(z[d])
    return values, None, elapsed
