"""The polish of coordinate descent (:mod:`convexlearn.solvers.erm.cd`): on the active set A
with the signs s of w_A fixed, F is smooth, L(w_A, b) + lam1 s^T w_A + lam2/2 ||w_A||^2;
its minimizer (one linear solve for the squared loss, here; the logistic's active-set
Newton in :mod:`convexlearn.solvers.erm.face_newton`) is kept when the signs hold and
every zero coordinate satisfies |grad_j| <= lam1.

Duplicated or collinear active columns make the face's Hessian singular: its minimizers
are an affine set, and a min-norm least-squares correction from the current point (not
an LU solve, which returns a huge, sign-breaking vector) finds the nearest of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from ...compiled import load_without_refresh
from .face_newton import active_set_newton

__all__ = ["duplicate_groups", "even_split", "column_hashes_reference", "polish_face",
           "active_cycles", "readmit", "polish_with_copies", "zeros_stay_zero", "loss_grad_w",
           "weighted", "squared_newton_finish", "polish_or_newton"]


def duplicate_groups(X: Any) -> list[np.ndarray]:
    """The index groups of identical columns of a dense X (none searched in a sparse X).

    One pass over X: a 64-bit hash of each column's values (:func:`_column_hashes`; -0.0
    counts as 0.0), then the columns that share a hash are compared exactly (np.unique of
    rows on d columns of length n sorted whole rows: 1.6 s at 50000 x 200)."""
    if sp.issparse(X):
        return []
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] < 2 or X.shape[0] == 0:
        return []
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    hashes = _column_hashes(X.view(np.uint64), X.flags.f_contiguous)
    order = np.argsort(hashes, kind="stable")
    cuts = np.flatnonzero(np.diff(hashes[order]) != 0) + 1
    groups = []
    for run in np.split(order, cuts):
        while run.size > 1:     # exact comparison within a run (a collision splits it)
            same = np.array([np.array_equal(X[:, run[0]], X[:, k]) for k in run])
            if same.sum() > 1:
                groups.append(np.sort(run[same]))
            run = run[~same]
    return sorted(groups, key=lambda g: int(g[0]))


_MINUS_ZERO = np.uint64(0x8000000000000000)


@njit(cache=True)
def _column_hashes(bits, fortran):
    """FNV-1a over the 64-bit words of each column (bits: X viewed as uint64), -0.0 read as
    0.0; the loop follows the memory order."""
    n, d = bits.shape
    h = np.full(d, np.uint64(14695981039346656037))
    prime = np.uint64(1099511628211)
    zero = np.uint64(0)
    if fortran:
        for j in range(d):
            acc = h[j]
            for i in range(n):
                b = bits[i, j]
                acc = (acc ^ (zero if b == _MINUS_ZERO else b)) * prime
            h[j] = acc
    else:
        for i in range(n):
            for j in range(d):
                b = bits[i, j]
                h[j] = (h[j] ^ (zero if b == _MINUS_ZERO else b)) * prime
    return h


def column_hashes_reference(X: np.ndarray) -> np.ndarray:
    """Pure-numpy :func:`_column_hashes` (tests)."""
    bits = np.asarray(X, dtype=float).view(np.uint64).copy()
    bits[bits == _MINUS_ZERO] = 0
    h = np.full(bits.shape[1], np.uint64(14695981039346656037))
    with np.errstate(over="ignore"):
        for row in bits:
            h = (h ^ row) * np.uint64(1099511628211)
    return h


def even_split(w: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """w with the coefficients of each group of identical columns replaced by their mean.

    The scores X w are unchanged and both penalty terms do not increase (|sum_g w_j| <=
    sum_g |w_j|; (sum_g w_j)^2 / k <= sum_g w_j^2), so the result is at least as good; it
    also gives the copies one sign, which the sign-fixed polish needs (coordinate descent
    can leave copies with opposite signs, whose face has no stationary point, for
    thousands of sweeps at small lam)."""
    if not groups:
        return w
    w = w.copy()
    for g in groups:
        w[g] = w[g].mean()
    return w


def weighted(v: np.ndarray | None, a: np.ndarray) -> np.ndarray:
    """v * a (the normalized sample weights; a itself without weights)."""
    return a if v is None else v * a


def loss_grad_w(X: Any, loss: Any, y: np.ndarray, f: np.ndarray, n: float,
                v: np.ndarray | None = None) -> np.ndarray:
    """The loss part of the gradient in w: X^T (v * dloss/df) / n."""
    return np.asarray(X.T @ weighted(v, loss.derivative(y, f))).ravel() / n


def polish_face(GA: np.ndarray, rhs: np.ndarray, wA: np.ndarray, lam1: float,
                lam2: float) -> np.ndarray | None:
    """The minimizer of 1/2 x^T GA x - rhs^T x + lam1 s^T x + lam2/2 ||x||^2 (the squared
    loss on the active set A with the signs s of w_A fixed; GA = (2/n) Xc_A^T Xc_A, rhs =
    (2/n) Xc_A^T yc): one linear solve; None if a sign changes."""
    if wA.size == 0:
        return wA.copy()
    s = np.sign(wA)
    M, r = GA + lam2 * np.eye(wA.size), rhs - lam1 * s
    try:
        x = np.linalg.solve(M, r)
    except np.linalg.LinAlgError:
        x = np.full(wA.size, np.nan)
    if np.any(np.sign(x) != s):
        # duplicated / collinear active columns: M singular, the face's minimizers an affine
        # set; the one nearest w_A (a min-norm correction) keeps w_A's signs if any does
        x = wA + np.linalg.lstsq(M, r - M @ wA, rcond=None)[0]
        # r outside M's range (copies of opposite signs): no stationary point on this face
        if np.linalg.norm(M @ x - r) > 1e-10 * (np.abs(M).sum() * np.abs(x).max()
                                                + np.linalg.norm(r)):
            return None
    if np.any(np.sign(x) != s):
        return None
    return x


def active_cycles(sweep: Any, w: np.ndarray, keep: np.ndarray, stop: Any,
                  max_sweeps: int) -> int:
    """Full sweep over ``keep``, then sweeps over the nonzero coordinates of w until they
    stop moving (largest decrease <= stop()), until a full sweep changes nothing; returns
    the number of sweeps."""
    every = np.flatnonzero(keep).astype(np.int64)
    sweeps = 0
    while sweeps < max_sweeps:
        worst = sweep(every)
        sweeps += 1
        if worst <= stop():
            break
        active = np.flatnonzero(w).astype(np.int64)
        while sweeps < max_sweeps:
            sweeps += 1
            if sweep(active) <= stop():
                break
    return sweeps


def readmit(keep: np.ndarray, grad: np.ndarray, w: np.ndarray,
            lam1: float) -> tuple[np.ndarray, int]:
    """Coordinates a screen left out that violate |grad_j| <= lam1: back in."""
    if keep.all():
        return keep, 0
    bad = (~keep) & (np.abs(grad) > lam1)
    if bad.any():
        keep = keep | bad
    return keep, int(bad.sum())


def polish_with_copies(cache: dict, X: Any, w: np.ndarray, polish: Any,
                       within: np.ndarray | None = None) -> Any:
    """``polish(w)``; when it fails (None) and some active column has identical copies
    (among the columns ``within``, default all), ``polish`` again from w with each group of
    copies sharing its sum evenly (CD can leave copies with opposite signs, a face without
    a stationary point). The copies are searched only then (one pass over X, kept in
    ``cache``): most problems have none and polish at once."""
    out = polish(w)
    if out is not None:
        return out
    if "duplicates" not in cache:
        cache["duplicates"] = duplicate_groups(X)
    groups = cache["duplicates"]
    if within is not None:
        groups = [g[np.isin(g, within)] for g in groups]
    groups = [g for g in groups if g.size > 1 and np.any(w[g] != 0)]
    return polish(even_split(w, groups)) if groups else None


def squared_newton_finish(prob: Any, w: np.ndarray,
                          within: np.ndarray | None = None) -> np.ndarray | None:
    """The squared loss's finish when the sign-fixed solve fails (:func:`polish_face`
    None): :func:`~convexlearn.solvers.erm.face_newton.active_set_newton` on the raw
    problem ``prob`` (a cd._Problem) from w and its best b = mean_v(y - X w). Its null
    moves drop the active columns beyond the rank of [X_A, 1] (with lam2 = 0 such a face
    has no minimizer when s is not orthogonal to its null space: make_classification's
    redundant features, clf 1000 x 50 of rank 40, where CD creeps along that null space and
    lam = 1e-4 lam_max fell back to the homotopy); its projected Newton settles a tiny
    lam2's ill-conditioned face (1e-5 lam_max fell back to cvxpy). Once per sign pattern
    of w (``prob.tried``: one solve's); the minimizer's w when its support lies in ``within``
    (the working set; None: any), else None (coordinate descent goes on)."""
    support = np.packbits(w > 0).tobytes() + np.packbits(w < 0).tobytes()   # (-0.0 is 0)
    if support in prob.tried:
        return None
    prob.tried.add(support)
    b = float(np.average(prob.y - prob.X @ w, weights=prob.v)) if prob.intercept else 0.0
    out = active_set_newton(prob.X, prob.y, prob.loss, w, b, prob.lam1, prob.lam2,
                            prob.intercept, prob.v)
    if out is None or (within is not None and np.any(np.delete(out[0], within))):
        return None
    return out[0]


def polish_or_newton(prob: Any, polish: Any, within: np.ndarray) -> Any:
    """The polish of a working set ``within`` as a function of the full w: ``polish(w[within])``,
    else :func:`squared_newton_finish`'s w[within] (None when both fail)."""
    def finish(w):
        out = polish(w[within])
        if out is None:
            new = squared_newton_finish(prob, w, within)
            out = None if new is None else new[within]
        return out
    return finish


def zeros_stay_zero(Xc: Any, yc: np.ndarray, w: np.ndarray, lam1: float, G: Any,
                    c: Any) -> bool:
    """Every zero coordinate satisfies |grad_j| <= lam1 at w, up to the rounding of grad_j
    (64 eps times the sum of its terms' sizes: a zero column duplicating an active one has
    |grad_j| = lam1 exactly, computed ~1e-11 lam1 above it at small lam1). The gradient is
    G w - c when G is given (Xc, yc unused), else (2/n) Xc^T (Xc w - yc)."""
    zero, eps = w == 0, 64 * np.finfo(float).eps
    if G is not None:
        grad, size = G @ w - c, np.abs(G) @ np.abs(w) + np.abs(c)
    else:
        n = Xc.shape[0]
        grad = Xc.T @ (2.0 * (Xc @ w - yc)) / n
        size = np.abs(Xc).T @ (2.0 * (np.abs(Xc) @ np.abs(w) + np.abs(yc))) / n
    return bool(np.all(np.abs(grad[zero]) <= lam1 * (1 + 1e-12) + eps * size[zero]))

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
