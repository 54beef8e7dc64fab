"""Active-set Newton: the finish of coordinate descent for a smooth loss with l1 / elastic net.

Problem (as :mod:`convexlearn.solvers.erm.cd`)::

    F(w, b) = (1/n) sum_i v_i loss(y_i, <w, x_i> + b) + lam1 ||w||_1 + lam2/2 ||w||^2

On the face of an active set A with signs s (w_j = 0 off A, sign(w_A) = s), F is smooth::

    phi(x) = (1/n) sum_i v_i loss(y_i, (M x)_i) + lam1 s^T w_A + lam2/2 ||w_A||^2,
    M = [X_A, 1], x = (w_A, b)

and (w, b) is optimal iff x minimizes phi with the signs holding and every zero coordinate
satisfies |grad_j| <= lam1, grad_j = (1/n) sum_i v_i x_ij loss'(y_i, f_i). Three moves reach
such a point from coordinate descent's (near, but at a tiny lam1 slow to settle):

* support reduction: a direction d in the null space of M leaves the scores f = M x,
  hence the loss, unchanged; along it phi is the penalty alone. With lam2 = 0, when s has
  a component in that null space (more active columns than the rank of M: redundant
  features, copies) phi has no minimizer on the face; moving along d = -P_null (lam1 s, 0)
  until the first coordinate reaches 0 (ratio test) lowers F exactly and drops that
  coordinate; repeated until s is orthogonal to the null space (CD creeps along these
  directions at a rate ~lam1 per sweep: 56 000 sweeps on a 1000 x 50 set of rank 40).
  With lam2 > 0 the same, d = -P_null (lam1 s + lam2 w_A, 0), up to the minimum of the
  quadratic along d when no coordinate reaches 0 first (a tiny lam2: Newton's own step
  along these directions is ~lam1 / lam2 long and flips signs);
* projected Newton on phi (Bertsekas): coordinates a step would take across 0 are set
  to 0 (phi = F on the orthant of s), Armijo on the projected point; min-norm least-
  squares steps when the face keeps a null space with s orthogonal to it (lam2 = 0: the
  minimizers an affine set). Coordinates put at 0 leave A (a new face);
* the zero coordinates' check: violators (|grad_j| > lam1 beyond rounding) join A with
  s_j = -sign(grad_j), and the round repeats (after a joining coordinate left at once,
  one at a time: alone at a face's minimizer, Newton moves it along s_j).

Kept only when phi's gradient is at rounding level (each coordinate within ``GRAD_RTOL``
of the sum of its terms' sizes, or within ``STALL_RTOL`` where a Newton step no longer
halves it), its share of the duality gap within ``GAP_RTOL`` of F, and no zero coordinate
violates; else None (the caller resumes coordinate descent). The certificate of the
caller's route judges the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ...data import DENSIFY_LIMIT_BYTES

__all__ = ["active_set_newton", "zero_excess", "GRAD_RTOL", "STALL_RTOL", "GAP_RTOL",
           "MAX_ACTIVE", "ZERO_ROUNDING"]

#: A face gradient coordinate counts as zero below GRAD_RTOL times the sum of the sizes of
#: its terms ((1/n) |M_j|^T |v loss'| + lam1 + lam2 |x_j|): the certificate asks 1e-9 of
#: the ratio of the norms, this asks 1e-11 of every coordinate.
GRAD_RTOL = 1e-11
#: A gradient below STALL_RTOL (above GRAD_RTOL) that a Newton step no longer halves has
#: stalled at rounding: the try ends there (sparse 2000 x 500, 468 active: 2.1e-11)
STALL_RTOL = 1e-10
#: ... and sum_j |x_j| |grad_j| <= GAP_RTOL |phi| (also after a stall): the
#: certificate's relative gap asks 1e-9
GAP_RTOL = 1e-10
#: Above this many active columns, or when the dense face's three n x (k + 1) arrays would
#: pass data.DENSIFY_LIMIT_BYTES, the face (M, its SVD, the k x k Hessian) is not formed:
#: None (coordinate descent goes on).
MAX_ACTIVE = 1500
#: A singular value of M below NULL_RTOL * max(n, k) * eps * (its largest) spans the null
#: space (numpy's matrix_rank rule, times 10).
NULL_RTOL = 10.0
_EPS = np.finfo(float).eps
#: A zero coordinate's |grad_j| may pass lam1 by ZERO_ROUNDING * eps times the sum of its
#: terms' sizes (its rounding) and, in the polish's acceptance (not the joins), lam1 by
#: 1e-12 relative
ZERO_ROUNDING = 64.0


def zero_excess(grad: np.ndarray, size: np.ndarray, lam1: float,
                rel: float = 1e-12) -> np.ndarray:
    """How far each |grad_j| passes lam1 beyond its rounding,
    |grad_j| - lam1 (1 + rel) - ZERO_ROUNDING eps size_j (size_j the sum of the sizes of
    grad_j's terms): a zero coordinate with a positive excess violates |grad_j| <= lam1.
    The rounding allowance: a zero column duplicating an active one has |grad_j| = lam1
    exactly, computed ~1e-11 lam1 above it at a small lam1 (a few ulps of its terms).
    ``rel``: the polish's acceptance (cd_polish) allows lam1 1e-12 more; the active-set
    Newton's joins pass 0 (their rule before the two were shared)."""
    return np.abs(grad) - lam1 * (1 + rel) - ZERO_ROUNDING * _EPS * size


def _face(X: Any, A: np.ndarray, intercept: bool) -> np.ndarray:
    XA = X[:, A]
    XA = XA.toarray() if sp.issparse(XA) else np.asarray(XA, dtype=float)
    return np.column_stack([XA, np.ones(X.shape[0])]) if intercept else XA


def _null_basis(M: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """Orthonormal rows spanning the null space of M (restricted to the samples of
    nonzero weight: the others do not enter the loss)."""
    Mr = M if rows is None else M[rows]
    if Mr.shape[1] == 0:
        return np.zeros((0, 0))
    if Mr.shape[0] < Mr.shape[1]:
        # wide (more active columns than samples, an elastic net at d > n): with full row
        # rank (R's diagonal) the complete QR of M^T has the null space in Q's last columns,
        # 3-5x cheaper than the SVD (200 x 201: 1.2 ms against 6 ms)
        Q, R = np.linalg.qr(Mr.T, mode="complete")
        diag = np.abs(np.diag(R))
        if diag.size and diag.min() > 1e-8 * diag.max():
            return Q[:, Mr.shape[0]:].T
    # the R of a QR has M's singular values and right vectors: no n x n factor
    tall = Mr.shape[0] >= Mr.shape[1]
    R = np.linalg.qr(Mr, mode="r") if tall else Mr
    if tall:
        # a column in the span of those before it has R_jj ~ 0: none, full column rank,
        # no SVD (k^3, as much as the QR at 450 active)
        diag = np.abs(np.diag(R))
        if diag.min() > 1e-8 * diag.max():
            return np.zeros((0, Mr.shape[1]))
    _, S, Vt = np.linalg.svd(R, full_matrices=True)
    top = S[0] if S.size else 0.0
    rank = int(np.sum(S > NULL_RTOL * max(Mr.shape) * np.finfo(float).eps * top))
    return Vt[rank:]


def _drop_from_basis(N: np.ndarray, i: int) -> np.ndarray:
    """The null basis of the face without column i: {N^T a : a orthogonal to N[:, i]} as
    orthonormal rows (a Householder reflection sends N[:, i] to the first axis), column i
    removed."""
    u = N[:, i].copy()
    if N.shape[0] == 0 or not np.any(u):
        return np.delete(N, i, axis=1)
    alpha = -np.copysign(np.linalg.norm(u), u[0])
    u[0] -= alpha
    N = N - np.outer(u, (2.0 / float(u @ u)) * (u @ N))
    return np.delete(N[1:], i, axis=1)


def _reduce_support(x, s, N, lam1, lam2, k_w):
    """Null-space moves (module docstring): (kept positions of x, the null basis of the
    kept columns) after moving x along d = -P_null(lam1 s + lam2 w_A, 0) until that
    projection is 0 (lam2 > 0: phi is the quadratic -|d|^2 t + lam2/2 |d_w|^2 t^2 along d,
    minimal at t = |d|^2 / (lam2 |d_w|^2)) or a coordinate reaches 0 first (dropped); x
    changes in place."""
    keep = np.arange(x.size)
    lin = np.append(lam1 * s, np.zeros(x.size - k_w))
    ridge = np.append(np.full(k_w, lam2), np.zeros(x.size - k_w))
    for _ in range(k_w):
        if N.shape[0] == 0:
            break
        pull = lin + ridge * x[keep]
        c = N @ pull
        d = -(N.T @ c)
        if np.linalg.norm(c) <= 1e-12 * np.linalg.norm(pull):
            if lam2 > 0:
                break
            # s orthogonal to the null space: phi is constant along it (the face's
            # minimizers an affine set, copies of one sign); a null direction, either way,
            # to the first coordinate reaching 0 leaves F as it is and the face full rank
            d = N[0].copy()
            xw = x[keep[:s.size]]
            with np.errstate(divide="ignore", invalid="ignore"):
                r = -xw / d[:s.size]
            if np.min(r[r > 0], initial=np.inf) > np.min(-r[r < 0], initial=np.inf):
                d = -d
        dw, xw = d[:s.size], x[keep[:s.size]]
        toward = dw * s < 0
        ratios = np.full(s.size, np.inf)
        ratios[toward] = -xw[toward] / dw[toward]
        i = int(np.argmin(ratios)) if s.size else 0
        curv = float(d @ (ridge * d))
        t_min = float(-(pull @ d)) / curv if curv > 0 else np.inf
        if not ratios.size or t_min <= ratios[i]:
            if np.isfinite(t_min):
                x[keep] += t_min * d
            break
        x[keep] += ratios[i] * d
        x[keep[i]] = 0.0
        N = _drop_from_basis(N, i)
        keep, s, lin, ridge = (np.delete(keep, i), np.delete(s, i), np.delete(lin, i),
                               np.delete(ridge, i))
    return keep, N


def active_set_newton(X: Any, y: np.ndarray, loss: Any, w: np.ndarray, b: float, lam1: float,
                      lam2: float, intercept: bool, v: np.ndarray | None = None,
                      max_rounds: int = 8, max_newton: int = 40,
                      used: list | None = None) -> tuple[np.ndarray, float] | None:
    """Minimize F from (w, b) by the moves of the module docstring; the minimizer
    (w, b) (zeros exactly 0.0) or None when a round budget runs out or the face's gradient
    does not reach rounding level.

    Parameters
    ----------
    X : ndarray (n, d) or scipy.sparse matrix
    y : ndarray (n,)
    loss : Loss
        With ``value``, ``derivative``, ``hessian`` (a C^2 loss, e.g. logistic).
    w, b : the start (coordinate descent's point).
    lam1, lam2 : float
        F's l1 and l2 weights.
    intercept : bool
    v : ndarray (n,), optional
        Sample weights normalized to mean 1.
    max_rounds : int
        Rounds in which violators join A (None beyond).
    max_newton : int
        Newton iterations over every face (None beyond).
    used : list, optional
        The Newton iterations (Hessians formed) this call made are appended to it.
    """
    budget = [max_newton]        # Newton iterations left, over every face
    try:
        return _rounds(X, y, loss, w, b, lam1, lam2, intercept, v, max_rounds, budget)
    finally:
        if used is not None:
            used.append(max_newton - budget[0])


def _rounds(X, y, loss, w, b, lam1, lam2, intercept, v, max_rounds, budget):
    """:func:`active_set_newton`'s rounds (``budget``: [Newton iterations left])."""
    n, d = X.shape
    w = np.array(w, dtype=float)
    b = float(b) if intercept else 0.0
    rows = None if v is None else np.flatnonzero(v > 0)
    wv = np.ones(n) if v is None else v
    absX, single, entering = None, False, np.zeros(d, dtype=bool)
    joins = 0
    while budget[0] > 0:
        A = np.flatnonzero(w)
        # (the dense face M, |M| and M h: three n x (k + 1) arrays)
        if A.size > MAX_ACTIVE or 24 * n * (A.size + 1) > DENSIFY_LIMIT_BYTES:
            return None
        s = np.sign(w[A])
        M = _face(X, A, intercept)
        x = np.append(w[A], b) if intercept else w[A].copy()
        N = _null_basis(M, rows)
        if N.shape[0]:
            keep, N = _reduce_support(x, s, N, lam1, lam2, A.size)
            kw = int(np.sum(keep < A.size))
            A, s, M, x = A[keep[:kw]], s[keep[:kw]], M[:, keep], x[keep]
        out = _newton_on_face(M, y, loss, wv, x, s, lam1, lam2, A.size,
                              N.shape[0] > 0 and lam2 == 0.0, n, budget)
        if out is None:
            return None
        x, kept = out
        w = np.zeros(d)
        w[A[kept]] = x[:A.size][kept]
        b = float(x[-1]) if intercept else 0.0
        if not np.all(kept):
            # coordinates reached 0: a new face; an entering one that left at once
            # (several joined together, their Newton steps coupled) makes the next joins
            # one at a time (one alone at a face's minimizer moves along s_j)
            single |= bool(np.any(~kept & entering[A]))
            continue
        r = wv * loss.derivative(y, X @ w + b)
        grad = np.asarray(X.T @ r).ravel() / n
        if absX is None:
            absX = abs(X) if sp.issparse(X) else np.abs(X)
        size = np.asarray(absX.T @ np.abs(r)).ravel() / n
        excess = np.where(w == 0, zero_excess(grad, size, lam1, rel=0.0), 0.0)
        if not np.any(excess > 0):
            return w, b
        joins += 1
        if joins > max_rounds:
            return None
        entering = excess > 0
        if single:
            entering = np.zeros(d, dtype=bool)
            entering[np.argmax(excess / np.maximum(size, 1e-300))] = True
        w[entering] = -np.sign(grad[entering]) * 1e-300   # joins A, s_j = -sign(grad_j)
    return None


def _newton_on_face(M, y, loss, wv, x, s, lam1, lam2, k, singular, n, budget):
    """Projected Newton on phi (module docstring) from x: a step's coordinates that would
    cross 0 are set to 0 (phi = F on the orthant of s; Armijo on the projected point, as
    Bertsekas' projected Newton). Returns (x, kept), kept[j] False for the coordinates a
    step put at 0 (a new face), or None when the gradient does not reach rounding level
    within ``budget[0]`` iterations (decremented)."""
    lin = np.append(lam1 * s, np.zeros(x.size - k))
    ridge = np.append(np.full(k, lam2), np.zeros(x.size - k))
    x = x.copy()
    x[:k] = np.where(np.abs(x[:k]) < 1e-200, 0.0, x[:k])     # entering coordinates at 0

    def value_grad(x_):
        f_ = M @ x_
        r_ = wv * loss.derivative(y, f_)
        val = float(np.mean(wv * loss.value(y, f_))) + float(lin @ x_) \
            + 0.5 * float(ridge @ (x_ * x_))
        return val, M.T @ r_ / n + lin + ridge * x_, f_, r_

    val, grad, f, r = value_grad(x)
    if x.size == 0:
        return x, np.ones(k, dtype=bool)
    absM = np.abs(M)
    prev = np.inf
    while budget[0] > 0:
        budget[0] -= 1
        size = absM.T @ np.abs(r) / n + np.abs(lin) + ridge * np.abs(x)
        level = float(np.max(np.abs(grad) / np.maximum(size, 1e-300)))
        # the duality gap's share of the residual, sum_j |x_j| |grad_j| (in units of F):
        # at a tiny lam1 the terms' sizes dwarf lam1, and a gradient at GRAD_RTOL of them
        # left clf 1000 x 200 at 1e-5 lam_max a relative gap of 3.4e-9
        gap = float(np.abs(x) @ np.abs(grad)) / max(abs(val), 1e-300)
        if level <= GRAD_RTOL and gap <= GAP_RTOL:
            return x, np.ones(k, dtype=bool)
        if level <= STALL_RTOL and level > 0.5 * prev:
            # a Newton step that did not halve the gradient there: rounding level of an
            # ill-conditioned face; kept when the gap's share is small, else None at once
            # rather than the rest of the budget (1.4 s at 468 active)
            return (x, np.ones(k, dtype=bool)) if gap <= GAP_RTOL else None
        prev = level
        h = wv * loss.hessian(y, f)
        H = (M * h[:, None]).T @ M / n + np.diag(ridge)
        try:
            p = -(np.linalg.lstsq(H, grad, rcond=None)[0] if singular
                  else np.linalg.solve(H, grad))
        except np.linalg.LinAlgError:
            return None
        if not float(grad @ p) < 0.0:
            return None
        t = 1.0
        for _ in range(60):
            xn = x + t * p
            # off the orthant: to 0 (an entering coordinate, at 0, must move along s_j)
            flip = np.sign(xn[:k]) != s
            xn[:k][flip] = 0.0
            vn, gn, fn, rn = value_grad(xn)
            # Armijo, or (near the minimizer, where phi's decrease is below its
            # rounding and Armijo would halve every step) phi not above its rounding
            # and the gradient halved
            if vn <= val + 1e-4 * float(grad @ (xn - x)) or (
                    vn <= val + 16 * _EPS * abs(val)
                    and np.max(np.abs(gn) / np.maximum(size, 1e-300)) < 0.5 * level):
                break
            t *= 0.5
        else:
            return None
        if np.any(flip):
            return xn, ~flip
        x, val, grad, f, r = xn, vn, gn, fn, rn
    return None
