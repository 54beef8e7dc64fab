"""The duality-gap certificate of a linear SVM answer (w, b, alpha), recomputed from the data.

The C-form P(w, b) = 1/2 ||w||^2 + sum_i C_i max(0, 1 - m_i), m_i = y_i (<w, x_i> + b), and
its dual D(a) = sum_i a_i - 1/2 ||X^T (y * a)||^2 over 0 <= a_i <= C_i, y^T a = 0. Weak
duality P(w, b) >= P* >= D(a) for every primal point and every dual-feasible a, so the
relative gap (P - D) / max(|P|, |D|) bounds how far (w, b) is from the optimum, whatever
produced it. Used by :mod:`convexlearn.solvers.linear_svm.linear_exact` (every stage's answer) and
by the tests.

X may be dense or scipy.sparse (CSR/CSC): every figure is computed from products X w,
X^T (y a) and row norms, in float64 and, where the rounding bound asks for it, in extended
precision by blocks of rows (O(nnz of a block) extra memory, never a dense copy of X).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

from ...data import row_sq_norms
from ...solution import Solution

__all__ = ["certificate", "GAP_TOL", "row_sq_norms", "feasible_hard", "nudged_onto_margins",
           "certified_solution"]

#: Relative duality gap at which an answer is certified.
GAP_TOL = 1e-9

def _balanced(alpha: np.ndarray, y: np.ndarray, C: np.ndarray) -> np.ndarray | None:
    """alpha moved onto y^T a = 0 within the box: the imbalance spread over the
    coordinates with room in the needed direction, in proportion to their room."""
    s = float(y @ alpha)
    if s == 0.0:
        return alpha
    # s > 0: lower a_i with y_i = +1 or raise a_i with y_i = -1 (and the reverse)
    direction = -np.sign(s) * y
    room = np.where(direction > 0, C - alpha, alpha)
    room = np.where(np.isfinite(room), room, np.where(alpha > 0, alpha, 0.0) + 1.0)
    total = float(np.sum(room))
    if not total > abs(s):
        return None
    return np.clip(alpha + direction * room * (abs(s) / total), 0.0, C)


_WIDE = np.longdouble      # 64-bit significand on x86-64 Linux (2^11 x float64's precision)
_ROWS = 4096               # rows per block of the wide products (no wide copy of X)


def _wide_csr_block(Xb) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns, values in extended precision) of a CSR block."""
    rows = np.repeat(np.arange(Xb.shape[0]), np.diff(Xb.indptr))
    return rows, Xb.indices, np.asarray(Xb.data, dtype=_WIDE)


def _wide_margins(X: np.ndarray, y: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    """y_i (<x_i, w> + b) accumulated in extended precision, block of rows by block."""
    wl, out = np.asarray(w, dtype=_WIDE), np.empty(y.shape[0], dtype=_WIDE)
    is_sparse = sparse.issparse(X)
    X = sparse.csr_matrix(X) if is_sparse else X
    for lo in range(0, y.shape[0], _ROWS):
        if is_sparse:
            rows, cols, vals = _wide_csr_block(X[lo:lo + _ROWS])
            block = np.zeros(min(_ROWS, y.shape[0] - lo), dtype=_WIDE)
            np.add.at(block, rows, vals * wl[cols])
            out[lo:lo + _ROWS] = block
        else:
            out[lo:lo + _ROWS] = np.asarray(X[lo:lo + _ROWS], dtype=_WIDE) @ wl
    return y * (out + _WIDE(b))


def _wide_expansion(X: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """X^T coef accumulated in extended precision, block of rows by block."""
    out = np.zeros(X.shape[1], dtype=_WIDE)
    is_sparse = sparse.issparse(X)
    X = sparse.csr_matrix(X) if is_sparse else X
    for lo in range(0, coef.shape[0], _ROWS):
        c = np.asarray(coef[lo:lo + _ROWS], dtype=_WIDE)
        if is_sparse:
            rows, cols, vals = _wide_csr_block(X[lo:lo + _ROWS])
            np.add.at(out, cols, vals * c[rows])
        else:
            out += c @ np.asarray(X[lo:lo + _ROWS], dtype=_WIDE)
    return out


def certificate(X: np.ndarray, y: np.ndarray, C: float, intercept: bool, w: np.ndarray, b: float,
                alpha: np.ndarray, gap_tol: float = GAP_TOL) -> dict:
    """The duality-gap certificate of (w, b, alpha), recomputed from the data.

    P(w, b) as in the module docstring (the hard margin requires every m_i >= 1, else P
    is inf); D at the multipliers clipped to the box and balanced (:func:`_balanced`);
    ``relative_gap`` = (P - D + |b| |y^T a|) / max(|P|, |D|) (P > 0 for every feasible
    point except w = 0; then the floor is the smallest positive float). The term
    |b| |y^T a| charges the balance left after rounding (D is a lower bound only at
    y^T a = 0; to first order the Lagrangian's b (y^T a) term). ``passed`` when
    -gap_tol <= relative gap <= ``gap_tol`` and D is the value of a dual-feasible point:
    a gap below -gap_tol breaks weak duality, so the evaluation itself is not to be trusted.

    **Rounding.** Evaluated in float64 first; when a bound on that evaluation's error
    (:func:`_rounding_bound`) exceeds a tenth of ``gap_tol`` (relative) and the verdict
    could change (:func:`_needs_wide`), the margins,
    X^T (y a) and the sums are accumulated again in extended precision
    (``numpy.longdouble``): with data far from the origin <x_i, w> and b cancel, and in
    float64 the recomputed gap of a point whose exact gap was 5e-9 came out -2e-10 (X
    shifted by 1e6, checked in rational arithmetic). Where longdouble is float64 (some
    platforms), the second evaluation is the first. The wide pass takes only the rows
    that can change a figure: margins within their float64 error bound of the hinge
    (m_i < 1 + err_i; the others are >= 1 exactly), and X^T (y a) over a_i != 0 (the
    other terms are exact zeros): at C = 1e3 on 5000 x 50 it was 3 x 15 ms of a 30 ms
    solve over every row, a few dozen rows now.
    """
    n = y.shape[0]
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    a = np.clip(np.asarray(alpha, dtype=float), 0.0, C)
    if intercept:
        a = _balanced(a, y, C)
    if a is None:
        primal = _evaluate(X, y, C, intercept, w, b, None, wide=False)[0]
        return dict(passed=False, primal=primal, dual=-math.inf, gap=math.inf,
                    relative_gap=math.inf, balance=float(y @ alpha))
    primal, dual, balance, m = _evaluate(X, y, C, intercept, w, b, a, wide=False)
    norms = np.sqrt(row_sq_norms(X))      # once for both bounds (a pass over X each)
    err_m = _margin_errors(X, w, b, norms)
    if _needs_wide(_rounding_bound(X, y, C, w, b, a, m, err_m, norms),
                   primal - dual + abs(float(b)) * balance, _scale(primal, dual), gap_tol):
        # float64 could be wrong at the level asked: evaluate again in extended precision,
        # the margins only where the hinge may be active within their error (elsewhere
        # m_i >= 1 holds exactly and the term is 0 in any precision)
        primal, dual, balance, m = _evaluate(X, y, C, intercept, w, b, a, wide=True,
                                             near=m < 1.0 + err_m, m=m)
    low = float(np.min(m))
    gap = primal - dual
    charged = gap + abs(float(b)) * balance
    rel = charged / _scale(primal, dual) if math.isfinite(gap) else math.inf
    return dict(passed=bool(-gap_tol <= rel <= gap_tol), primal=primal, dual=dual, gap=gap,
                relative_gap=rel, balance=float(y @ alpha), min_margin=low)


def _needs_wide(bound: float, charged: float, scale: float, gap_tol: float) -> bool:
    """Whether the float64 evaluation must be repeated in extended precision: its error
    ``bound`` exceeds a tenth of the tolerance (``gap_tol`` ``scale``) and the verdict
    could change, i.e. the charged gap is not beyond twice the tolerance plus its error
    bound (a gap that far out fails in any precision: the wide pass, ~0.4 s at
    n = 100000 x 70 values a row, bought nothing on the sparse route's failing faces)."""
    tol = gap_tol * scale
    if not bound > 0.1 * tol:
        return False
    return not (math.isfinite(charged) and abs(charged) - bound > 2.0 * tol)


def _scale(primal: float, dual: float) -> float:
    return max(abs(primal), abs(dual), np.finfo(float).tiny) if math.isfinite(primal) \
        else math.inf


def _evaluate(X, y, C, intercept, w, b, a, wide, near=None, m=None):
    """(P, D, |y^T a|, margins) in float64 or in extended precision; the wide pass
    recomputes the margins of the rows ``near`` only (the others keep the float64 ``m``)
    and X^T (y a) over the rows with a_i != 0."""
    if wide:
        if sparse.issparse(X) and X.format not in ("csr", "csc"):
            X = X.tocsr()                 # (rows are selected below: COO, DIA cannot)
        m = np.asarray(m, dtype=_WIDE)
        rows = np.flatnonzero(near)
        if rows.size:
            m[rows] = _wide_margins(X[rows], y[rows], w, b)
        ww = np.dot(np.asarray(w, dtype=_WIDE), np.asarray(w, dtype=_WIDE))
    else:
        m = y * np.asarray(X @ w + b).ravel()
        ww = float(w @ w)
    if bool(np.all(np.isinf(C))):
        primal = float(ww / 2) if float(np.min(m)) >= 1.0 else math.inf
    else:
        hit = m < 1
        primal = float(ww / 2 + np.sum(C[hit] * (1 - m[hit])))
    if a is None:
        return primal, -math.inf, math.inf, m
    if wide:
        support = np.flatnonzero(a)
        v = _wide_expansion(X[support], (y * a)[support])
        total = np.sum(np.asarray(a, dtype=_WIDE))
        balance = abs(np.sum(np.asarray(y * a, dtype=_WIDE))) if intercept else 0.0
    else:
        v = np.asarray(X.T @ (y * a)).ravel()
        total = float(a.sum())
        balance = abs(float(y @ a)) if intercept else 0.0
    dual = float(total - np.dot(v, v) / 2)
    return primal, dual, float(balance), m


def _margin_errors(X, w, b, norms=None) -> np.ndarray:
    """A bound on each float64 margin's error (standard dot-product bounds
    |fl(<x, w>) - <x, w>| <= d eps ||x|| ||w||, by Cauchy-Schwarz; d the row's terms)."""
    terms = X.shape[1]
    if sparse.issparse(X):
        terms = np.diff(sparse.csr_matrix(X).indptr)
    norms = np.sqrt(row_sq_norms(X)) if norms is None else norms
    return (terms + 2) * np.finfo(float).eps * (norms * float(np.linalg.norm(w))
                                                + abs(float(b)) + 1.0)


def _rounding_bound(X, y, C, w, b, a, m, err_m, norms=None) -> float:
    """A bound on the float64 evaluation's error in P - D: the margins' errors ``err_m``
    (:func:`_margin_errors`) weighted by C_i where the hinge is active (or the hard
    margin's feasibility at stake), ||v||'s error through X^T (y a), and the sums. Cheap:
    row norms, no second product."""
    n, d = X.shape
    eps = np.finfo(float).eps
    norms = np.sqrt(row_sq_norms(X)) if norms is None else norms
    # terms per column sum of X^T (y a): n, or the column's stored values for a sparse X
    col_terms = n
    if sparse.issparse(X):
        col_terms = int(np.bincount(sparse.csr_matrix(X).indices, minlength=d).max(initial=0))
    if bool(np.all(np.isinf(C))):
        # feasibility m_i >= 1 decided within the error: not certifiable in float64
        return math.inf if bool(np.any((m >= 1.0) & (m - err_m < 1.0))) else 0.0
    # the samples whose hinge may be active within the error of their margin
    near = m < 1.0 + err_m
    err_P = float(np.sum(np.where(np.isfinite(C), C, 0.0)[near] * err_m[near]))
    err_v = (col_terms + 2) * eps * float(np.sum(a * norms))
    v_norm = float(np.linalg.norm(w))
    err_D = 2.0 * v_norm * err_v + err_v * err_v + n * eps * float(np.sum(a))
    return err_P + err_D


_EPS = np.finfo(float).eps


def feasible_hard(X: Any, y: np.ndarray, w: np.ndarray, b: float
                  ) -> tuple[np.ndarray, float]:
    """(w, b) scaled by t >= 1 so that every margin is >= 1 with its rounding bound."""
    m = y * (X @ w + b)
    err = (X.shape[1] + 2) * _EPS * (np.abs(X) @ np.abs(w) + abs(b))
    low = float(np.min(m - err))
    if low >= 1.0 or low <= 0.0:
        return w, b
    t = (1.0 + 4 * _EPS) / low
    return w * t, b * t


def nudged_onto_margins(X: Any, y: np.ndarray, w: np.ndarray, b: float
                        ) -> tuple[np.ndarray, float]:
    """(w, b) scaled by t >= 1 so that the margins rounded just below 1 (by <= 1e-9) are
    >= 1: with a large C_i, C_i (1 - m_i) at m_i = 1 - 1e-15 is the whole duality gap
    (C sigma^2 = 3.5e9 made it 8e-10 relative); the cost is 2 (t - 1) P."""
    m = y * (X @ w + b)
    near = m[(m < 1.0) & (m >= 1.0 - 1e-9)]
    if near.size == 0:
        return w, b
    t = (1.0 + 4 * _EPS) / float(np.min(near))
    return w * t, b * t


def certified_solution(X: Any, y: np.ndarray, C: Any, intercept: bool, hard_margin: bool,
                       gap_tol: float, candidates: list, alpha: np.ndarray, timer: Any,
                       **provenance: Any) -> Solution:
    """The candidate (w, b) with the best certificate (:func:`certificate` at ``alpha``),
    each also made feasible (hard margin) or nudged onto its margins (soft), as a Solution
    in the user's units; X dense or sparse.

    The candidates are checked in order (each given one, then it nudged), and the
    first whose certificate passes with a relative gap within ``gap_tol`` / 100 ends the
    search (each check is a pass over X: ~0.4 ms on 569 x 30, four of them were a third of
    a small solve); else a certified one is kept, then the smallest |gap|.

    Parameters
    ----------
    X, y, C, intercept, gap_tol
        The problem as :func:`certificate` takes it.
    hard_margin : bool
        Candidates are scaled onto feasibility (:func:`feasible_hard`), else nudged onto
        their margins (:func:`nudged_onto_margins`) as second tries.
    candidates : list of (w, b)
    alpha : ndarray
        The multipliers whose dual value D(a) = sum_i a_i - 1/2 ||X^T (y a)||^2 bounds.
    timer : callable
        Its value is the Solution's ``time_s``.
    **provenance
        Added to the Solution's provenance.

    Returns
    -------
    Solution
        status "optimal" when the relative gap (P - D) / max(|P|, |D|) is within
        ``gap_tol``, else "inaccurate"; ``extra["certificate"]`` its figures.
    """
    if hard_margin:
        pending = [lambda c=c: feasible_hard(X, y, *c) for c in candidates]
    else:
        # each candidate, then at once its nudged self: with a large C the nudge is what
        # the first one lacks (wide_200x500 at C = 1e3: the polish's w 6.4e-10, w from
        # alpha 2.9e-9, the nudged polish's w 1.4e-14: three checks, ~2 ms each with the
        # extended-precision pass, where two do)
        pending = [f for c in candidates
                   for f in (lambda c=c: c, lambda c=c: nudged_onto_margins(X, y, *c))]
    checked = []
    for make in pending:
        ww, bb = make()
        cert = certificate(X, y, C, intercept, ww, bb, alpha, gap_tol)
        checked.append(((ww, bb), cert))
        if cert["passed"] and abs(cert["relative_gap"]) <= 1e-2 * gap_tol:
            break
    # a certified candidate first, then the smallest |gap| (a gap below -gap_tol is a
    # failed evaluation, not a better point)
    (w, b), cert = min(checked, key=lambda c: (not c[1]["passed"],
                                               abs(c[1]["relative_gap"])))
    xi = None if hard_margin else np.maximum(0.0, 1.0 - y * (X @ w + b))
    sol = Solution(w=w, b=b, alpha=alpha, xi=xi, objective=cert["primal"],
                   status="optimal" if cert["passed"] else "inaccurate",
                   method="exact-linear", time_s=timer(),
                   provenance={"solver": "convexlearn.linear_exact", **provenance,
                               "gap_tol": gap_tol},
                   dual_coef=y * alpha)
    sol.extra["certificate"] = cert
    return sol
