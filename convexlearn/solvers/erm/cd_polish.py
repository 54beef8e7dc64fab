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
from scipy.linalg.lapack import dpotrf as _potrf, dpotrs as _potrs   # (no wrappers' checks)
from numba import njit

from ...compiled import load_without_refresh
from .face_newton import active_set_newton, zero_excess

__all__ = ["duplicate_groups", "even_split", "column_hashes_reference", "polish_face",
           "active_cycles", "readmit", "polish_with_copies", "zeros_stay_zero", "loss_grad_w",
           "weighted", "squared_newton_finish", "polish_or_newton", "polish_face_wide",
           "stop_levels", "PolishGate", "polish_levels", "weighted_means", "EARLY_LEVELS",
           "SQUARED_POLISH_WORK", "TRY_OVERHEAD", "SEARCH_WORK", "UNIQUE_FACE_RATIO"]

#: The squared loss's polish is first tried when the sweeps stop at these tolerances (each
#: coordinate's decrease of F in units of |F|), above the caller's own (1e-12): the support
#: settles long before (reg 200 x 300, lam = 0.01 lam_max: 324 sweeps to 1e-12, 11 ms of
#: the 15; a polish after 76 certifies). Early tries are the sign-fixed solve alone (a
#: failed one: a Cholesky), the Newton finish only from the caller's tol on
EARLY_LEVELS = (1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
#: ... an early try while the tries' work so far (flops of the face's products and
#: solves, and n k^2 a Hessian of the Newton finish) is at most SQUARED_POLISH_WORK times
#: the sweeps' (2 n or |K| a coordinate): BLAS-3 against CD's scalar loops, as
#: cd.POLISH_WORK
SQUARED_POLISH_WORK = 10.0
#: ... a try's fixed cost in those units (~0.1 ms of Python and small calls, the sweeps'
#: flops ~1 ns each): on a small Gram block (reg 1000 x 50, 2 500 flops a sweep) early
#: tries cost more than the sweeps they save (0.94 -> 1.25 ms without it)
TRY_OVERHEAD = 1e6
#: polish_face's sign change is final (the face's minimizer unique) when the Cholesky
#: factor L of M = GA + lam2 I keeps its diagonal above this fraction of its largest. Not
#: face_newton's 1e-8 (applied there to the R of a QR of X_A, accurate to ~eps): L comes
#: from the Gram matrix, its entries accurate to ~sqrt(eps) (1.5e-8) times the condition,
#: so on exactly collinear columns (x3 = 2 x1 - x2, lam2 = 0) diag(L) ends at 3e-8..5e-8
#: of its largest (80 of 200 draws cleared 1e-8; in 23 the min-norm solve kept the signs).
#: 1e-6 keeps ~100x above that noise floor; a lam2 that matters (>= 1e-12 ||M||) clears it
UNIQUE_FACE_RATIO = 1e-6
#: ... and the copies' search (duplicate_groups: a hash of X's n d values, scalar) this
#: many a value
SEARCH_WORK = 10.0


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
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(hashes[order]) != 0) + 1, [order.size]])
    shared = np.flatnonzero(np.diff(cuts) > 1)     # runs of one hash, not each column's own
    groups = []
    for a, b in zip(cuts[shared], cuts[shared + 1]):
        run = order[a:b]
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


def weighted_means(prob: Any) -> tuple[np.ndarray, float, np.ndarray | None]:
    """(xbar, ybar, u) of a cd._Problem: the (v-weighted) means of X's columns and of y
    (zeros without an intercept), u = sqrt(v) (None without weights)."""
    X, y, v, n = prob.X, np.asarray(prob.y, dtype=float), prob.v, prob.n
    u = None if v is None else np.sqrt(v)
    if not prob.intercept:
        return np.zeros(prob.d), 0.0, u
    if v is None:
        sums = prob.cache.get("column_stats", (0, None))[1]
        return (np.asarray(X.sum(axis=0)).ravel() if sums is None else sums) / n, \
            float(y.mean()), u
    return np.asarray(X.T @ v).ravel() / n, float(v @ y) / n, u


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
    (2/n) Xc_A^T yc): one Cholesky solve; None if a sign changes. A sign change is final
    (no least-squares try: 2 ms at 135 active, most of a failed try) only when the factor
    proves the minimizer unique (:data:`UNIQUE_FACE_RATIO`); else the min-norm correction
    below may still keep the signs."""
    if wA.size == 0:
        return wA.copy()
    s = np.sign(wA)
    M, r = GA + lam2 * np.eye(wA.size), rhs - lam1 * s
    L, info = _potrf(M, lower=1)
    if info == 0:
        x = _potrs(L, r, lower=1)[0]
        diag = np.abs(np.diag(L))
        if diag.min() > UNIQUE_FACE_RATIO * diag.max():
            return x if np.all(np.sign(x) == s) else None
    else:
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


def polish_face_wide(XA: np.ndarray, rhs: np.ndarray, wA: np.ndarray, lam1: float,
                     lam2: float) -> np.ndarray | None:
    """:func:`polish_face` with GA = (2/n) XA^T XA on a wide face (k = |A| > n columns,
    lam2 > 0) by the n x n dual form (Woodbury; n^2 k flops, not k^2 n + k^3)::

        x = (r - (2/n) XA^T z) / lam2,   (lam2 I_n + (2/n) XA XA^T) z = XA r,
        r = rhs - lam1 s

    and one step of iterative refinement on the residual r - lam2 x - (2/n) XA^T XA x
    (x is a difference divided by lam2: a small lam2 loses digits). None if a sign changes
    or the n x n system is not positive definite."""
    n = XA.shape[0]
    s = np.sign(wA)
    r = rhs - lam1 * s
    K = XA @ XA.T                   # syrk
    K *= 2.0 / n
    K[np.diag_indices(n)] += lam2
    L, info = _potrf(K, lower=1)
    if info != 0:
        return None

    def solve(rr):
        z = _potrs(L, XA @ rr, lower=1)[0]
        return (rr - (2.0 / n) * (XA.T @ z)) / lam2

    x = solve(r)
    x += solve(r - lam2 * x - (2.0 / n) * (XA.T @ (XA @ x)))
    return x if np.all(np.sign(x) == s) else None


def stop_levels(tol: float, early: bool) -> list[float]:
    """The sweeps' stop tolerances, each followed by a polish try: ``EARLY_LEVELS`` above
    tol (``early``), then tol, tol 1e-2, ..., tol 1e-10 (the support not settled yet)."""
    head = [t for t in EARLY_LEVELS if t > tol] if early else []
    return head + [tol * 10.0 ** (-2 * attempt) for attempt in range(6)]


def polish_levels(face: Any, keep: np.ndarray, tol: float, max_sweeps: int, polish: bool,
                  gate: "PolishGate", info: dict, attempt: Any, prob: Any) -> bool:
    """Sweeps of ``face`` (cd_squared's working-set face: cycles, grad, w, G) on ``keep`` to
    each of :func:`stop_levels`, then (``polish``) a polish try ``attempt(late, search)``
    (late: from the caller's tol on, with the Newton finish; search: the copies' search)
    until one succeeds (face.w set to it: True). An early level runs while the gate could
    allow its try (its sweeps up to doubling those so far); the early levels and the first
    late one share ``max_sweeps``, that level's own budget before the early tries (a 40 x
    180 elastic net with 60 copies at 1e-5 lam_max: every early try fails and CD reaches
    no level's tol, 20 000 sweeps with a budget each, 10 000 now, 235 -> 120 ms), each
    later late level has its own; its try when the gate allows it, with the
    copies' search when the gate allows that pass over X too (SEARCH_WORK n d). ``info``'s
    sweeps and readmitted are counted."""
    try_work, left = np.inf, max_sweeps
    search_work = SEARCH_WORK * prob.n * prob.d
    for level, stop_tol in enumerate(stop_levels(tol, polish)):
        late = stop_tol <= tol
        if not late and (left <= 0 or level and not gate.allows(try_work, ahead=2.0)):
            continue        # no early try even if this level doubled the sweeps
        swept = face.cycles(keep, stop_tol, left)
        left = left - swept if not late else max_sweeps
        info["sweeps"] += swept
        sweep_work, try_work = PolishGate.work(prob.n, face.w, keep, face.G is not None)
        gate.sweeps(swept, sweep_work)
        keep, back = readmit(keep, face.grad(), face.w, prob.lam1)
        info["readmitted"] += back
        if back:
            continue
        if not polish:
            break
        if not (late or gate.allows(try_work)):
            continue        # early, and the tries would outweigh the sweeps
        search = late or "duplicates" in prob.cache or gate.allows(try_work + search_work)
        new = attempt(late, search)
        gate.charge(try_work + (search_work if search and not late else 0.0),
                    prob.n * float(np.count_nonzero(face.w) + 1) ** 2)
        if new is not None:
            face.w[:] = new
            return True
    return False


class PolishGate:
    """The work of the squared loss's sweeps and polish tries (flops, the estimates of
    ``SQUARED_POLISH_WORK``); an early try :meth:`allows` while the tries' stay within
    SQUARED_POLISH_WORK times the sweeps'. ``newton`` collects the Newton finish's Hessians
    (active_set_newton's used=), charged n k^2 each."""

    def __init__(self) -> None:
        self.swept, self.spent, self.newton = 0.0, 0.0, []

    def sweeps(self, count: int, work: float) -> None:
        self.swept += count * work

    @staticmethod
    def work(n: int, w: np.ndarray, keep: np.ndarray, gram: bool) -> tuple[float, float]:
        """(a sweep's flops on ``keep``, a polish try's) on a working set of m = w.size
        columns, k = nnz(w) active: on the Gram block (``gram``) m a coordinate and k^3/3 +
        2 m^2 (the solve, the zeros' check); else 2 n a coordinate and the face's product
        and solve (n k^2 + k^3/3, or the dual form's n^2 k + n^3/3 when k > n) + 4 n m;
        a try also TRY_OVERHEAD."""
        k, m = float(np.count_nonzero(w)), float(w.size)
        if gram:
            return m * np.count_nonzero(keep), k ** 3 / 3 + 2 * m * m + TRY_OVERHEAD
        face = n * n * k + n ** 3 / 3 if k > n else n * k * k + k ** 3 / 3
        return 2.0 * n * np.count_nonzero(keep), face + 4.0 * n * m + TRY_OVERHEAD

    def allows(self, cost: float, ahead: float = 1.0) -> bool:
        """The tries' work with ``cost`` within SQUARED_POLISH_WORK times the sweeps' (times
        ``ahead``: a level's sweeps yet to come, as a multiple of those so far)."""
        return self.spent + cost <= SQUARED_POLISH_WORK * self.swept * ahead

    def charge(self, cost: float, hessian: float) -> None:
        """A try of ``cost`` flops, and the Newton finish's Hessians of ``hessian`` each."""
        self.spent += cost + hessian * sum(self.newton)
        self.newton.clear()


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
                       within: np.ndarray | None = None, search: bool = True) -> Any:
    """``polish(w)``; when it fails (None) and some active column has identical copies
    (among the columns ``within``, default all), ``polish`` again from w with each group of
    copies sharing its sum evenly (CD can leave copies with opposite signs, a face without
    a stationary point). The copies are searched only then (one pass over X, kept in
    ``cache``; not without ``search``, an early try's: 0.5 ms at 5000 x 100): most
    problems have none and polish at once."""
    out = polish(w)
    if out is not None or not (search or "duplicates" in cache):
        return out
    if "duplicates" not in cache:
        cache["duplicates"] = duplicate_groups(X)
    groups = cache["duplicates"]
    if within is not None:
        groups = [g[np.isin(g, within)] for g in groups]
    groups = [g for g in groups if g.size > 1 and np.any(w[g] != 0)]
    return polish(even_split(w, groups)) if groups else None


def squared_newton_finish(prob: Any, w: np.ndarray, within: np.ndarray | None = None,
                          used: list | None = None) -> np.ndarray | None:
    """The squared loss's finish when the sign-fixed solve fails (:func:`polish_face`
    None): :func:`~convexlearn.solvers.erm.face_newton.active_set_newton` on the raw
    problem ``prob`` (a cd._Problem) from w and its best b = mean_v(y - X w). Its null
    moves drop the active columns beyond the rank of [X_A, 1] (with lam2 = 0 such a face
    has no minimizer when s is not orthogonal to its null space: make_classification's
    redundant features, clf 1000 x 50 of rank 40, where CD creeps along that null space and
    lam = 1e-4 lam_max fell back to the homotopy); its projected Newton settles a tiny
    lam2's ill-conditioned face (1e-5 lam_max fell back to cvxpy). Once per sign pattern
    of w (``prob.tried``: one solve's); the minimizer's w when its support lies in ``within``
    (the working set; None: any), else None (coordinate descent goes on). ``used``:
    active_set_newton's (the Hessians it formed are appended)."""
    support = np.packbits(w > 0).tobytes() + np.packbits(w < 0).tobytes()   # (-0.0 is 0)
    if support in prob.tried:
        return None
    prob.tried.add(support)
    b = float(np.average(prob.y - prob.X @ w, weights=prob.v)) if prob.intercept else 0.0
    out = active_set_newton(prob.X, prob.y, prob.loss, w, b, prob.lam1, prob.lam2,
                            prob.intercept, prob.v, used=used)
    if out is None or (within is not None and np.any(np.delete(out[0], within))):
        return None
    return out[0]


def polish_or_newton(prob: Any, polish: Any, within: np.ndarray, used: list | None = None,
                     newton: bool = True) -> Any:
    """The polish of a working set ``within`` as a function of the full w: ``polish(w[within])``,
    else (``newton``) :func:`squared_newton_finish`'s w[within] (None when both fail;
    ``used`` its)."""
    def finish(w):
        out = polish(w[within])
        if out is None and newton:
            new = squared_newton_finish(prob, w, within, used)
            out = None if new is None else new[within]
        return out
    return finish


def zeros_stay_zero(Xc: Any, yc: np.ndarray, w: np.ndarray, lam1: float, G: Any,
                    c: Any) -> bool:
    """Every zero coordinate satisfies |grad_j| <= lam1 at w up to the rounding of grad_j
    (:func:`~convexlearn.solvers.erm.face_newton.zero_excess`, size_j the sum of its terms'
    sizes). The gradient is G w - c when G is given (Xc, yc unused), else
    (2/n) Xc^T (Xc w - yc)."""
    zero = w == 0
    if G is not None:
        grad, size = G @ w - c, np.abs(G) @ np.abs(w) + np.abs(c)
    else:
        n = Xc.shape[0]
        grad = Xc.T @ (2.0 * (Xc @ w - yc)) / n
        size = np.abs(Xc).T @ (2.0 * (np.abs(Xc) @ np.abs(w) + np.abs(yc))) / n
    return not np.any(zero_excess(grad[zero], size[zero], lam1) > 0)

load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
