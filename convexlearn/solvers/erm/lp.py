"""The margin LP of hinge / perceptron ERM with an l1 penalty or none, built for HiGHS.

    min  sum_i c_i xi_i + lam1 sum_j (u_j + v_j)
    s.t. y_i (<u - v, x_i> + b) + xi_i >= kappa,   xi, u, v >= 0

(kappa = 1: hinge, kappa = 0: perceptron; c_i = 1/n, or s_i / sum s with sample weights;
without the l1 term w is one free block instead of u - v). The matrix is handed to HiGHS
column-wise as it is built (sparse X stays sparse): no modelling layer in between.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ...errors import SolverError
from ...formulations.base import silence_highs_banner

__all__ = ["margin_lp"]


def margin_lp(X: Any, y: np.ndarray, *, kappa: float, lam1: float, intercept: bool,
              sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, float, dict]:
    """Solve the margin LP above with HiGHS' simplex.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    y : ndarray of shape (n,), labels in {-1, +1}
    kappa : float
        The margin asked for (1 for the hinge loss, 0 for the perceptron).
    lam1 : float
        The l1 weight (0: no penalty, w free).
    intercept : bool
    sample_weight : ndarray of shape (n,), optional

    Returns
    -------
    w : ndarray of shape (d,)
    b : float
    info : dict
        ``iterations`` (simplex), ``status`` (HiGHS' word), ``solver_version``.

    Raises
    ------
    SolverError
        HiGHS did not end at an optimal vertex.
    """
    import highspy
    n, d = X.shape
    l1 = lam1 > 0
    YX = sp.diags(y) @ X if sp.issparse(X) else y[:, None] * X
    blocks = [YX, -YX] if l1 else [YX]
    if intercept:
        blocks.append(y[:, None])
    blocks.append(sp.identity(n, format="csc"))
    A = sp.hstack([blk if sp.issparse(blk) else sp.csc_matrix(blk) for blk in blocks],
                  format="csc")
    nw = 2 * d if l1 else d
    ncol = A.shape[1]
    cost = np.zeros(ncol)
    cost[-n:] = 1.0 / n if sample_weight is None else sample_weight / np.sum(sample_weight)
    lower = np.full(ncol, -highspy.kHighsInf)
    upper = np.full(ncol, highspy.kHighsInf)
    if l1:
        cost[:nw] = lam1
        lower[:nw] = 0.0
    lower[-n:] = 0.0
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = ncol, n
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = np.full(n, kappa), np.full(n, highspy.kHighsInf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = A.indptr, A.indices
    lp.a_matrix_.value_ = A.data
    silence_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
        h.setOptionValue(key, 1e-10)
    h.passModel(lp)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"HiGHS ended with status {status!r} on the ERM LP")
    x = np.asarray(h.getSolution().col_value)
    w = x[:d] - x[d:2 * d] if l1 else x[:d].copy()
    b = float(x[nw]) if intercept else 0.0
    return w, b, {"iterations": int(h.getInfo().simplex_iteration_count), "status": status,
                  "solver_version": getattr(highspy, "__version__", "?")}
