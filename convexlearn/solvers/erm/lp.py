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

__all__ = ["margin_lp", "piecewise_dual_lp"]


def _run_highs(A: Any, cost: np.ndarray, lower: np.ndarray, upper: np.ndarray,
               row_lower: np.ndarray, row_upper: np.ndarray, what: str,
               presolve: bool = True) -> Any:
    """min cost^T x s.t. row_lower <= A x <= row_upper, lower <= x <= upper (A CSC) by
    HiGHS at feasibility tolerances 1e-10; returns the solved Highs object and its status.

    Raises
    ------
    SolverError
        HiGHS did not end at an optimal vertex.
    """
    import highspy
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = row_lower, row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = A.indptr, A.indices
    lp.a_matrix_.value_ = A.data
    silence_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if not presolve:
        h.setOptionValue("presolve", "off")
    for key in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
        h.setOptionValue(key, 1e-10)
    h.passModel(lp)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"HiGHS ended with status {status!r} on {what}")
    return h, status


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
    h, status = _run_highs(A, cost, lower, upper, np.full(n, kappa),
                           np.full(n, highspy.kHighsInf), "the ERM LP")
    x = np.asarray(h.getSolution().col_value)
    w = x[:d] - x[d:2 * d] if l1 else x[:d].copy()
    b = float(x[nw]) if intercept else 0.0
    return w, b, {"iterations": int(h.getInfo().simplex_iteration_count), "status": status,
                  "solver_version": getattr(highspy, "__version__", "?")}


def piecewise_dual_lp(X: Any, y: np.ndarray, breakpoints: np.ndarray, slopes: np.ndarray, *,
                      lam1: float, intercept: bool,
                      sample_weight: np.ndarray | None = None
                      ) -> tuple[np.ndarray, float, dict]:
    """ERM with a piecewise-linear regression loss and an l1 penalty (or none) by its dual
    LP, solved by HiGHS' dual simplex; (w, b) are the LP's row duals.

    The primal, with r_i = <w, x_i> + b - y_i and psi of breakpoints r_1 < ... < r_K and
    slopes s_0 < ... < s_K (capability "pieces": absolute, quantile, epsilon-insensitive)::

        min_{w, b}  (1/n) sum_i v_i psi(r_i) + lam1 ||w||_1     (v_i = n s_i / sum s, or 1)

    Its Fenchel dual in the multipliers g_i = v_i a_i, a_i in dpsi(r_i) subset [s_0, s_K],
    written with one variable per slope interval (a_i = s_0 + sum_k u_ik / v_i,
    0 <= u_ik <= v_i (s_k - s_{k-1}); psi^* is linear with slope r_k on interval k)::

        min_u  sum_ik (y_i + r_k) u_ik
        s.t.   -n lam1 <= sum_i x_ij g_i <= n lam1  (= 0 without a penalty),  j = 1..d
               sum_i g_i = 0                                        (with an intercept)

    d (+1) rows and n K bounded columns: the simplex basis is (d + 1) square, where the
    primal LP (scikit-learn's QuantileRegressor) has n rows. Complementary slackness makes
    the row duals (w, b): a basic u_ik (strictly inside its bounds) has zero reduced cost,
    y_i + r_k = <w, x_i> + b, the sample on breakpoint k. The point is then put exactly on
    those equations by one least-squares solve on the basis (the LP's tolerances are on
    its scaled problem); the caller certifies it.

    Returns
    -------
    w : ndarray of shape (d,)
    b : float
    info : dict
        ``iterations`` (simplex), ``status``, ``solver_version``, ``on_breakpoint`` (the
        samples held by the basis).

    Raises
    ------
    SolverError
        HiGHS did not end at an optimal vertex.
    """
    import highspy
    n, d = X.shape
    bps, slopes = np.asarray(breakpoints, float), np.asarray(slopes, float)
    K = bps.size
    v = np.ones(n) if sample_weight is None else sample_weight * (n / np.sum(sample_weight))
    # columns (i, k), k-major: [x_i; 1]
    block = sp.csr_matrix(X).T if not sp.issparse(X) else X.T.tocsc()
    if intercept:
        block = sp.vstack([block, sp.csr_matrix(np.ones((1, n)))])
    A = sp.hstack([block] * K, format="csc")
    base = slopes[0] * np.asarray(X.T @ v).ravel()           # X^T (v s_0)
    lo_row = np.concatenate([-n * lam1 - base, [-slopes[0] * v.sum()]] if intercept
                            else [-n * lam1 - base])
    hi_row = np.concatenate([n * lam1 - base, [-slopes[0] * v.sum()]] if intercept
                            else [n * lam1 - base])
    # dense columns and ranged rows leave presolve nothing to remove (measured: 15-20%
    # of the time at n = 5000, d = 50, the same 464 simplex iterations)
    h, status = _run_highs(A, (y[None, :] + bps[:, None]).ravel(), np.zeros(n * K),
                           (np.diff(slopes)[:, None] * v[None, :]).ravel(), lo_row, hi_row,
                           "the dual LP of the piecewise-linear ERM", presolve=False)
    duals = np.asarray(h.getSolution().row_dual)
    w, b = duals[:d].copy(), (float(duals[d]) if intercept else 0.0)
    basis = h.getBasis()
    is_basic = np.vectorize(lambda s: s == highspy.HighsBasisStatus.kBasic, otypes=[bool])
    basic = is_basic(np.asarray(basis.col_status, dtype=object))
    free_rows = ~is_basic(np.asarray(basis.row_status, dtype=object))[:d]
    held = np.flatnonzero(basic)
    w, b = _onto_breakpoints(X, y, bps, held % n, held // n, w, b, free_rows, intercept)
    return w, b, {"iterations": int(h.getInfo().simplex_iteration_count), "status": status,
                  "solver_version": getattr(highspy, "__version__", "?"),
                  "on_breakpoint": held % n}


def _onto_breakpoints(X, y, bps, samples, pieces, w, b, free, intercept):
    """(w, b) solving <w, x_i> + b = y_i + r_k for the basis' samples, the coordinates of a
    basic row (|X^T g| below lam1: w_j = 0) held at 0: one least-squares solve that
    removes the LP's tolerance from the residuals; kept only when it moves (w, b) by less
    than the LP's own scale (else the LP's duals stand)."""
    if samples.size == 0:
        return w, b
    cols = np.flatnonzero(free)
    Xs = X[samples][:, cols]
    Xs = Xs.toarray() if sp.issparse(Xs) else np.asarray(Xs)
    M = np.column_stack([Xs, np.ones(samples.size)]) if intercept else Xs
    target = y[samples] + bps[pieces]
    sol, *_ = np.linalg.lstsq(M, target, rcond=None)
    w_new = np.zeros_like(w)
    w_new[cols] = sol[:cols.size]
    b_new = float(sol[cols.size]) if intercept else 0.0
    size = max(float(np.linalg.norm(w)) + abs(b), 1e-300)
    if np.linalg.norm(w_new - w) + abs(b_new - b) <= 1e-6 * size:
        return w_new, b_new
    return w, b
