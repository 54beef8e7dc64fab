"""A run of the active-set polish's ratio steps at O(|F|^2) each: the ratio walk.

The polish (:func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion`) solves the
face's bordered system [K_FF E; E^T 0] [u; b] = [target_F - rest_F; total] (rest_F =
K_{F,R} beta_R, the fixed multipliers' part of the margins), and when u leaves the box it
steps from beta towards u until the first free multiplier reaches its bound, fixes it,
and solves again. On a very local kernel (rbf gamma = 10 on 2-D blobs: ~1000 free
multipliers, cond(K_FF) ~ 1e12, ~250 of them end at 0) that is ~600 steps in a row, and
each re-solve is what costs.

The walk makes those steps from one Cholesky factor K_0 = R^T R of the block F_0 it
starts on. With G the positions fixed since then and B = [E_0, e_G]:

* u = K_0^{-1} r, r = target_{F_0} - K_{F_0,R} beta_R: fixing j (value beta_j) moves it
  from F to R, r loses K_0 e_j beta_j and u loses beta_j e_j - O(1), no solve;
* W = K_0^{-1} B gains the column w_j = K_0^{-1} e_j (one pair of triangular solves,
  the step's only O(|F_0|^2) work) and S = B^T W, symmetric positive definite, a row
  and column, kept as its Cholesky factor (bordered: O(|G|^2));
* the face's solution is x = u - W z, z = S^{-1} (B^T u - [t; 0]) (t: the balance rows'
  totals over F), zero on G.

A step costs one pair of triangular solves of order |F_0| and O(|F_0| |G|), instead of
the kept-factor steering's three products and two pairs of solves per step. The walk
only steers: it stops when x is in the box (the caller then solves the smaller face from
a fresh factorization, which decides), after ``limit`` fixed multipliers, or when S
loses definiteness in floating point.

With ``release_tol`` a solution in the box is not the end: the fixed multipliers whose
gradient (K_0 x + rest + E_0 b - target, from K_0's rows: no kernel evaluation) points
into the box leave G again (their columns struck from W, S's factor formed again) and
the walk goes on (:func:`_release`), so that it ends at the optimum of the box QP on F_0
with the rest fixed. Measured on rbf gamma = 10, make_blobs(2000) (the polish joins the
margin violators 64 at a time, and most of the joiners a walk fixes want back in after
the next rounds): the polish's rounds 14 -> 8 (random_state 0) and 15 -> 8 (1), the
route's CPU time 0.44 -> 0.33 s and 0.56 -> 0.44 s (best of 3, alternating).

The steps run in numpy (:func:`_numpy_steps`, the reference) or in one compiled call
(:mod:`~convexlearn.solvers.kernel_svm.polish_walk_kernels`, loaded on the first walk that
takes it: :data:`COMPILED_FROM`), which returns to Python only to solve for columns of
K_0^{-1} (the same batches, :class:`_Columns`) and to form the inverse: each step's
~0.6 ms of numpy/LAPACK calls becomes a few microseconds of loops.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy.linalg import lapack

__all__ = ["ratio_walk"]

#: After this many steps a walk forms K_0^{-1} (LAPACK's dpotri, ~2/3 |F_0|^3 flops, the
#: price of ~30 pairs of triangular solves at |F_0| = 1000, which are memory-bound) and
#: reads W's new columns from it.
INVERSE_AFTER = 24
#: ... and only when at least this many free multipliers would leave the box before the
#: current direction's end (room < 1: a forecast of the steps still to come), else the
#: walk asks again INVERSE_AFTER steps later. Measured on rbf gamma = 10,
#: make_blobs(2000) at step 24: the first walks (324 and 283 steps) 539 and 466 such
#: multipliers, the second walks (39 and 27 steps) 18 and 3, where the inverse (~25 ms
#: at |F_0| = 784) cost more than the column batches it saved.
INVERSE_REMAINING = 64
#: A walk whose first direction sends at least this many free multipliers out of the box
#: forms K_0^{-1} before its first step (the column batches of its first INVERSE_AFTER
#: steps would be wasted: rbf gamma = 10, make_blobs(2000), the first walks of 324 and
#: 283 steps).
INVERSE_AT_ONCE = 256
#: Steps of iterative refinement of the walk's last solution before it is judged.
REFINE = 2
#: At most this many times a walk frees again fixed multipliers (``release_tol``) and
#: walks on: a guard against cycling (the polish's margins and the certificate decide).
RELEASES = 6
#: Columns of K_0^{-1} solved for with each needed one (:class:`_Columns`).
PREFETCH = 8
#: Walks on at least this many free multipliers take the compiled loop while it is not
#: loaded. Loading it from numba's cache costs ~20-30 ms CPU in a process where numba
#: already runs compiled code (the SMO loop), ~0.15 s in one where it is the first (numba's
#: runtime: convexlearn.compiled); compiling it with an empty cache ~7.5 s. A walk on 250
#: free multipliers (241 steps) takes ~70 ms in numpy, ~10 ms compiled.
COMPILED_FROM = 200


def _ratio(beta: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray
           ) -> tuple[float, np.ndarray, np.ndarray]:
    """The longest t with lo <= beta + t d <= hi, the entries that reach a bound at t, and
    each entry's room (the t at which it reaches its bound)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d < 0.0, (beta - lo) / -d, np.where(d > 0.0, (hi - beta) / d, np.inf))
    room = np.maximum(room, 0.0)
    t = float(np.min(room)) if room.size else np.inf
    return t, np.flatnonzero(room <= t + 1e-15), room


def ratio_walk(K0: np.ndarray, factor: np.ndarray, E0: np.ndarray, beta: np.ndarray,
               rest: np.ndarray, target: np.ndarray, totals: np.ndarray, lo: np.ndarray,
               hi: np.ndarray, direction: np.ndarray, limit: int = 1024,
               compiled: bool | None = None, release_tol: float | None = None,
               norm: float | None = None
               ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray | None]:
    """Ratio steps on the face F_0 until its steered solution is in the box (module
    docstring).

    Parameters
    ----------
    K0 : ndarray (k, k)
        K_{F_0 F_0}.
    factor : ndarray (k, k)
        Its upper Cholesky factor R (K_0 = R^T R, LAPACK's dpotrf).
    E0 : ndarray (k, m)
        The border: one column per balance row (m = 0 without intercept).
    beta : ndarray (k,)
        The current point on F_0 (expansion coordinates), lo <= beta <= hi, E0^T beta =
        ``totals``.
    rest, target : ndarray (k,)
        K_{F_0,R} beta_R and the target on F_0.
    totals : ndarray (m,)
        The balance rows' totals over F_0.
    lo, hi : ndarray (k,)
        The box of beta.
    direction : ndarray (k,)
        The first step's direction (towards the face's solution from a fresh solve,
        which leaves the box: the walk takes that step first).
    limit : int
        At most this many multipliers are fixed.
    compiled : bool or None
        The steps in the compiled loop (:mod:`~convexlearn.solvers.kernel_svm.
        polish_walk_kernels`) or in numpy (the reference); None: compiled from
        :data:`COMPILED_FROM` free multipliers on, or when the loop is loaded.
    release_tol : float or None
        When given, a solution in the box frees again the multipliers the walk fixed
        whose gradient K_0 x + rest + E_0 b - target points into the box by more than
        ``release_tol`` (margin units: beta_j = lo_j with gradient < -release_tol, beta_j
        = hi_j with gradient > release_tol) and walks on (:func:`_release`), at most
        :data:`RELEASES` times: the walk then ends at the optimum of the box QP on F_0
        with the rest fixed, not only on the last face it met.
    norm : float or None
        ||K_0||_inf + 1 when the caller knows it (a carried block's, computed for its
        condition test), else computed here (one pass over K_0).

    Returns
    -------
    beta, free, steps, b
        The point reached (the fixed entries exactly on their bound), the mask of F_0's
        multipliers still free, the number of ratio steps taken, and the intercepts of
        the face's solution when the point is that solution (None otherwise).
    """
    k, m = E0.shape
    beta = beta.copy()
    free = np.ones(k, dtype=bool)
    # u and K_0^{-1} E_0 in one solve (the factor read once)
    both, info = lapack.dpotrs(factor, np.column_stack([target - rest, E0]), lower=False)
    if info != 0:
        return beta, free, 0, None
    u, WE = both[:, 0].copy(), both[:, 1:]
    limit = min(limit, k)
    W = np.empty((k, m + limit), order="F")
    W[:, :m] = WE.reshape(k, m)
    # S's lower Cholesky factor: only its rows 0..m + |G| - 1 (their lower triangle) are
    # written and read (np.zeros was a memset of (m + limit)^2 doubles, ~1 ms a walk)
    L = np.empty((m + limit, m + limit))
    if m:
        S0 = E0.T @ WE.reshape(k, m)
        L0, info = lapack.dpotrf(S0, lower=True, clean=True)
        if info != 0:
            return beta, free, 0, None
        L[:m, :m] = L0
    totals = np.array(totals, dtype=float).reshape(m)
    use = _use_compiled(k) if compiled is None else compiled
    steps_fn = _compiled_steps if use else _numpy_steps
    leaving = int(np.count_nonzero(_ratio(beta, direction, lo, hi)[2] < 1.0))
    inverse = _inverse(factor) if leaving >= INVERSE_AT_ONCE else None
    # one column cache for the whole walk: after a release the walk fixes again many of
    # the multipliers it fixed before (their columns already solved for)
    columns = _Columns(factor, PREFETCH)
    x, z, G, steps, inverse = steps_fn(factor, E0, beta, free, u, totals, lo, hi,
                                       direction, W, L, limit, inverse, columns=columns)
    for _ in range(RELEASES if release_tol is not None else 0):
        if x is None or not free.any():
            break
        released = _release(E0, beta, free, u, totals, lo, hi, z, W, L,
                            np.asarray(G, dtype=np.intp), release_tol)
        if released is None:
            break
        G, x, z, d = released
        if _ratio(beta, d, lo, hi)[0] < 1.0:         # (else x is in the box: judged)
            x, z, G, more, inverse = steps_fn(factor, E0, beta, free, u, totals, lo, hi,
                                              d, W, L, limit, inverse, G,
                                              columns=columns)
            steps += more
    if x is None or not free.any():
        return beta, free, steps, None
    # the steered solution is in the box: it is the face's solution when it solves the
    # system to a backward-stable solve's residual after at most REFINE steps of
    # iterative refinement by the same steering (else the caller solves afresh)
    b = z[:m].copy()
    r_free = (target - rest)[free]
    norm = _norm(K0) + 1.0 if norm is None else norm
    # K_0 beta over the fixed entries from the rows of those with beta != 0 (K_0 symmetric):
    # the walk fixes mostly at alpha = 0 (rbf gamma = 10, make_blobs(2000), C = 1: all
    # of them in each of the solve's 8 walks), where the whole product read K_0 (~1 ms)
    nz = np.flatnonzero(~free & (beta != 0.0))
    fixed_part = (K0[nz].T @ beta[nz])[free] if nz.size else np.zeros(int(free.sum()))
    rhs_size = max(float(np.max(np.abs(r_free - fixed_part))),
                   float(np.max(np.abs(totals), initial=0.0)))
    for refinement in range(REFINE + 1):
        point = np.where(free, x, beta)
        residual = np.concatenate([
            (K0 @ np.where(free, x, 0.0))[free] + fixed_part + E0[free] @ b - r_free,
            E0[free].T @ x[free] - totals])
        size = max(float(np.max(np.abs(x[free]))), float(np.max(np.abs(b), initial=0.0)))
        bound = residual.size * np.finfo(float).eps * (norm * size + rhs_size)
        if not np.all(np.isfinite(residual)):
            break
        if np.max(np.abs(residual)) <= bound:
            return point, free, steps, b
        if refinement == REFINE:
            break
        padded = np.zeros(k)
        padded[free] = -residual[:np.count_nonzero(free)]
        if inverse is not None:
            du = inverse @ padded
        else:
            du, info = lapack.dpotrs(factor, padded, lower=False)
            if info != 0:
                break
        dx, dz = _face_solution(du, W, L, E0, G, -residual[np.count_nonzero(free):], m)
        x = x + np.where(free, dx, 0.0)
        b = b + dz[:m]
    return beta, free, steps, None


def _numpy_steps(factor: np.ndarray, E0: np.ndarray, beta: np.ndarray, free: np.ndarray,
                 u: np.ndarray, totals: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 d: np.ndarray, W: np.ndarray, L: np.ndarray, limit: int,
                 inverse: np.ndarray | None = None, G0: np.ndarray | None = None,
                 columns: "_Columns | None" = None) -> tuple:
    """The walk's steps in numpy (the reference): beta, free, u, totals, W and L updated in
    place; returns x (None unless the last step solved the face), z, G, the number of
    steps and K_0^{-1} (``inverse`` when given, else None unless formed). ``G0``: the
    positions already fixed (W's and L's first m + |G0| columns theirs)."""
    k, m = E0.shape
    G: list[int] = [] if G0 is None else [int(j) for j in G0]
    steps = 0
    columns = _Columns(factor, PREFETCH) if columns is None else columns
    positions = np.arange(k)
    x = z = None
    after = INVERSE_AFTER
    while True:
        # (d is 0 on the fixed entries: their room is infinite)
        t, hit, room = _ratio(beta, d, lo, hi)
        if not t < 1.0:
            break
        steps += 1
        columns.nearest = (positions, room)
        beta += t * d
        beta[hit] = np.where(d[hit] > 0.0, hi[hit], lo[hit])
        if inverse is None and steps > after:
            if _inverse_wanted(room):
                inverse = _inverse(factor)
            else:               # (asked again as the compiled loop does)
                after = steps - 1 + INVERSE_AFTER
        free[hit] = False
        u[hit] -= beta[hit]
        totals -= E0[hit].T @ beta[hit]
        x = None
        # (fixed all the same when they cannot join G; the walk then ends before
        # steering with them)
        stop = len(G) + hit.size > limit or not _add(hit, columns, W, L, E0, G, inverse)
        if stop or not free.any():
            break
        x, z = _face_solution(u, W, L, E0, G, totals, m)
        # each row's balance exactly, whatever the steering's round-off
        for c in range(m):
            on = free & (E0[:, c] > 0)
            x[on] -= (float(x[on].sum()) - totals[c]) / max(1, np.count_nonzero(on))
        d = x - beta
        d[~free] = 0.0
    return x, z, G, steps, inverse


def _use_compiled(k: int) -> bool:
    """Whether a walk on k free multipliers takes the compiled loop: from
    :data:`COMPILED_FROM` on (its cache load is then a small part of the walk), or when
    the loop is already loaded (a small walk then pays nothing for it)."""
    if k >= COMPILED_FROM:
        return True
    kernels = sys.modules.get(f"{__package__}.polish_walk_kernels")
    return kernels is not None and bool(kernels.walk_loop.signatures)


def _compiled_steps(factor: np.ndarray, E0: np.ndarray, beta: np.ndarray,
                    free: np.ndarray, u: np.ndarray, totals: np.ndarray, lo: np.ndarray,
                    hi: np.ndarray, d: np.ndarray, W: np.ndarray, L: np.ndarray,
                    limit: int, inverse: np.ndarray | None = None,
                    G0: np.ndarray | None = None, columns: "_Columns | None" = None
                    ) -> tuple:
    """:func:`_numpy_steps` in the compiled loop (loaded here, on the first walk that
    takes it: ``import convexlearn`` and walks in numpy pay nothing for it)."""
    from .polish_walk_kernels import NEED_COLUMNS, NEED_INVERSE, walk_loop
    k, m = E0.shape
    G = np.zeros(max(limit, 1), dtype=np.int64)
    state = np.zeros(4, dtype=np.int64)
    if G0 is not None:
        G[:len(G0)] = G0
        state[1] = len(G0)
    x, z, room, hit = np.empty(k), np.zeros(W.shape[1]), np.empty(k), np.empty(k, np.int64)
    d = np.array(d, dtype=float)
    lo, hi = np.ascontiguousarray(lo, dtype=float), np.ascontiguousarray(hi, dtype=float)
    E0 = np.ascontiguousarray(E0, dtype=float)
    columns = _Columns(factor, PREFETCH) if columns is None else columns
    positions = np.arange(k)
    none = np.empty((0, k))
    after = INVERSE_AFTER
    while True:
        status = walk_loop(beta, d, lo, hi, free, u, totals, E0, W, L, G, state,
                           none if inverse is None else inverse, columns.data,
                           columns.slot, room, hit, x, z, int(limit), after)
        if status == NEED_COLUMNS:
            columns.nearest = (positions, room)
            if columns.get(hit[:state[3]]) is None:
                state[2] = 0                # the step not taken: no solution to judge
                break
        elif status == NEED_INVERSE:
            if not _inverse_wanted(room):
                after = int(state[0]) + INVERSE_AFTER
                continue
            inverse = _inverse(factor)
            if inverse is None:             # LAPACK failed: on with the column cache
                after = np.iinfo(np.int64).max
        else:
            break
    nG = int(state[1])
    return (x if state[2] else None), z[:m + nG], G[:nG], int(state[0]), inverse


def _release(E0: np.ndarray, beta: np.ndarray, free: np.ndarray, u: np.ndarray,
             totals: np.ndarray, lo: np.ndarray, hi: np.ndarray, z: np.ndarray,
             W: np.ndarray, L: np.ndarray, G: np.ndarray, tol: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Free again the fixed positions G whose gradient at the face's solution x (on the
    free entries; intercepts z[:m]) points into the box by more than ``tol``: g_j =
    (K_0 x)_j + rest_j + E_0[j] b - target_j < -tol at lo_j, > tol at hi_j. Their columns
    leave W (the others move up), S's factor L is formed again from W (S = B^T W, |G|^3
    / 3 flops) from the first released position on (its leading rows kept: rbf gamma =
    10, make_blobs(2000), C = 1: the first walk's six releases, which copied W's ~320
    columns twice each, ~3 ms less), and u, totals and free take them back (the fixing's
    updates undone).
    Returns (the remaining G, the larger face's solution x' and its z, the direction x' -
    beta, 0 on the fixed entries), or None when none is released or S is not positive
    definite in floating point (the arrays then unchanged).

    The gradient on G is -z_G, the multipliers of the constraints x_G = 0 (B = [E_0,
    e_G]): x = u - W z solves K_0 x + E_0 z_E + e_G z_G = r (r = target - rest - K_0
    beta_fixed, u = K_0^{-1} r), so at the point (x on the free entries, beta on G) row
    g in G of K_0 point + rest + E_0 b - target (b = z_E) is r_g - z_g + (K_0
    beta_fixed)_g + rest_g - target_g = -z_g: no product with K_0 (one was ~1 ms a release
    at |F_0| = 1000, ~30 releases a solve on rbf gamma = 10, make_blobs(2000)). It only
    steers which multipliers leave G; the walk's last solution is judged by its residual."""
    k, m = E0.shape
    if G.size == 0:
        return None
    grad = -z[m:m + G.size]
    wrong = np.where(beta[G] <= lo[G], -grad, np.where(beta[G] >= hi[G], grad, 0.0))
    back = (wrong > tol) & (lo[G] < hi[G])          # (lo = hi: C_i = 0, nowhere to go)
    if not back.any():
        return None
    keep = np.flatnonzero(~back)
    # G's positions before the first released one keep their columns of W and their rows
    # of L (a Cholesky factor's leading block is its leading block's factor): only the
    # columns after it move up and only S's trailing rows are factorized again
    h = m + int(np.flatnonzero(back)[0])
    p = m + keep.size
    Wt = W[:, m + keep[h - m:]]
    St = np.vstack([E0.T @ Wt, Wt[G[keep]]])    # S's columns h.., B'^T Wt (B' = [E_0, e_G'])
    L21 = np.zeros((0, p - h))
    if h:                                       # L_11 L_21^T = S_12
        L21, info = lapack.dtrtrs(L[:h, :h], St[:h], lower=1)
        if info != 0:
            return None
    L22, info = lapack.dpotrf(St[h:] - L21.T @ L21, lower=True, clean=True)
    if info != 0 or not (np.all(np.isfinite(L22)) and np.all(np.isfinite(L21))):
        return None
    W[:, h:p] = Wt
    L[h:p, :h] = L21.T
    L[h:p, h:p] = L22
    j = G[back]
    free[j] = True
    u[j] += beta[j]
    totals += E0[j].T @ beta[j]
    G = G[keep]
    x, z = _face_solution(u, W, L, E0, list(G), totals, m)
    for c in range(m):              # each row's balance exactly (as the steps do)
        on = free & (E0[:, c] > 0)
        x[on] -= (float(x[on].sum()) - totals[c]) / max(1, np.count_nonzero(on))
    d = x - beta
    d[~free] = 0.0
    return G, x, z, d


#: Entries of K_0 from which its norm is one compiled pass (below, numpy's is as cheap).
NORM_COMPILED_FROM = 40_000


def _norm(K0: np.ndarray) -> float:
    """||K_0||_inf (= ||K_0||_1, K_0 symmetric): one compiled pass over the contiguous
    axis, no k x k temporary (numpy's |K_0| and its sums, ~3-5 ms a walk at k = 1000),
    once the carried factor's kernels are loaded (numpy before that)."""
    kernels = sys.modules.get(f"{__package__}.polish_carry_kernels")
    if kernels is None or K0.size < NORM_COMPILED_FROM:
        return float(np.max(np.abs(K0).sum(axis=1), initial=0.0))
    return float(kernels.max_abs_column_sum(K0.T if K0.flags.c_contiguous else K0))


def _trsv(Lp: np.ndarray, v: np.ndarray, transposed: bool) -> np.ndarray:
    """L^{-1} v (L^{-T} v when ``transposed``), L lower triangular (LAPACK's dtrtrs: no
    argument checking, the walk calls it thousands of times)."""
    x, _ = lapack.dtrtrs(Lp, v, lower=1, trans=int(transposed))
    return x


def _inverse_wanted(room: np.ndarray) -> bool:
    """Whether the walk forms K_0^{-1} now: when at least :data:`INVERSE_REMAINING`
    free multipliers reach their bound before the current direction's end (``room``:
    each one's step to its bound, infinite on the fixed ones)."""
    return int(np.count_nonzero(room < 1.0)) >= INVERSE_REMAINING


def _inverse(factor: np.ndarray) -> np.ndarray | None:
    """K_0^{-1} (both triangles) from its Cholesky factor; None when LAPACK fails."""
    upper, info = lapack.dpotri(factor, lower=False)
    if info != 0:
        return None
    kernels = sys.modules.get(f"{__package__}.polish_walk_kernels")
    if kernels is not None and upper.flags.f_contiguous:
        # the lower triangle mirrored in place, in cache-sized tiles: numpy's triu, its
        # transpose and sum (three k x k temporaries) cost ~12 ms at k = 1044, a third of
        # the inverse; the transpose is C-ordered (its rows, W's columns, contiguous)
        inverse = upper.T
        kernels.mirror_lower(inverse)
        return inverse
    upper = np.triu(upper)
    return upper + np.triu(upper, 1).T


class _Columns:
    """Columns K_0^{-1} e_j of the walk's block, solved for in batches.

    One pair of triangular solves with a single right-hand side reads the whole factor
    twice (memory-bound: ~1.5 ms at |F_0| = 800), one with a few more right-hand sides
    costs little more (BLAS 3), and the columns do not change during a walk: so each
    solve also takes the :data:`PREFETCH` free multipliers nearest their bound in the
    current direction (``nearest``: their positions and rooms, set by the walk), those
    most likely to be fixed next. Measured on rbf gamma = 10, make_blobs(2000): the
    walks' solves 235 -> 76 (random_state 1), 212 -> 64 (random_state 0)."""

    def __init__(self, factor: np.ndarray, prefetch: int = 8):
        self.factor, self.prefetch = factor, prefetch
        self.nearest: tuple[np.ndarray, np.ndarray] | None = None
        k = factor.shape[0]
        self.slot = np.full(k, -1, dtype=np.intp)
        self.data = np.empty((k, min(k, 64)), order="F")      # grown by doubling
        self.used = 0

    def _batch(self, missing: np.ndarray) -> np.ndarray:
        """``missing`` and the nearest multipliers not yet solved for."""
        if self.nearest is None or self.prefetch <= 0:
            return missing
        idx, dist = self.nearest
        count = min(self.prefetch, dist.size)
        near = idx[np.argpartition(dist, count - 1)[:count]] if count else idx[:0]
        extra = near[(self.slot[near] < 0) & ~np.isin(near, missing)]
        return np.concatenate([missing, extra])

    def _solve(self, batch: np.ndarray) -> np.ndarray | None:
        """K_0^{-1} e_j for j in ``batch`` (k x |batch|, Fortran order); None when LAPACK
        fails. R^T v = e_j (R^T lower triangular) leaves v zero above position j, so from
        p0 = min(batch) on the forward solve runs on the trailing block R[p0:, p0:] only:
        taken when p0 >= 3 k / 4 (measured at k = 812: from k / 2 the block's copy and the
        second call cost more than they save), as for the joiners, the
        block's last positions, that a walk fixes at its first steps (rbf gamma = 10,
        make_blobs(2000): ~30 of the ~100 columns a later walk solves for)."""
        k, size = self.factor.shape[0], batch.size
        p0 = int(batch.min())
        if 4 * p0 < 3 * k:
            units = np.zeros((k, size), order="F")
            units[batch, np.arange(size)] = 1.0
            solved, info = lapack.dpotrs(self.factor, units, lower=False)
            return solved if info == 0 else None
        tail = np.zeros((k - p0, size), order="F")
        tail[batch - p0, np.arange(size)] = 1.0
        v, info = lapack.dtrtrs(self.factor[p0:, p0:], tail, lower=0, trans=1)
        if info != 0:
            return None
        padded = np.zeros((k, size), order="F")
        padded[p0:] = v
        solved, info = lapack.dtrtrs(self.factor, padded, lower=0, trans=0)
        return solved if info == 0 else None

    def get(self, hit: np.ndarray) -> np.ndarray | None:
        """K_0^{-1} e_j for j in ``hit`` (k x |hit|); None when the solve fails."""
        missing = hit[self.slot[hit] < 0]
        if missing.size:
            batch = self._batch(missing)
            solved = self._solve(batch)
            if solved is None:
                return None
            if self.used + batch.size > self.data.shape[1]:
                grown = np.empty((self.data.shape[0], max(2 * self.data.shape[1],
                                                          self.used + batch.size)), order="F")
                grown[:, :self.used] = self.data[:, :self.used]
                self.data = grown
            self.data[:, self.used:self.used + batch.size] = solved
            self.slot[batch] = self.used + np.arange(batch.size)
            self.used += batch.size
        return self.data[:, self.slot[hit]]


def _add(hit: np.ndarray, solver: _Columns, W: np.ndarray, L: np.ndarray,
         E0: np.ndarray, G: list, inverse: np.ndarray | None = None) -> bool:
    """Append the positions ``hit`` to G: W's columns K_0^{-1} e_j (from ``inverse`` when
    given, else from ``solver``) and S's rows, its Cholesky factor bordered one at a
    time; False when a solve fails or S loses definiteness (G then holds the positions
    added before)."""
    k, m = E0.shape
    # (the inverse is symmetric: its rows are contiguous)
    columns = inverse[hit].T if inverse is not None else solver.get(hit)
    if columns is None or not np.all(np.isfinite(columns)):
        return False
    for c, j in enumerate(hit):
        w = columns[:, c]
        p = m + len(G)
        s = np.concatenate([E0.T @ w, w[G]]) if p else np.zeros(0)
        ell = _trsv(L[:p, :p], s, False) if p else s
        pivot = float(w[j]) - float(ell @ ell)
        if not pivot > 1e-14 * abs(float(w[j])):
            return False
        W[:, p] = w
        L[p, :p] = ell
        L[p, p] = np.sqrt(pivot)
        G.append(int(j))
    return True


def _face_solution(u: np.ndarray, W: np.ndarray, L: np.ndarray, E0: np.ndarray,
                   G: list, totals: np.ndarray, m: int) -> np.ndarray:
    """x = u - W z, z = S^{-1} (B^T u - [totals; 0]), with x = 0 on G."""
    p = m + len(G)
    if p == 0:
        return u.copy(), np.zeros(0)
    rhs = np.concatenate([E0.T @ u - totals, u[G]])
    Lp = L[:p, :p]
    z = _trsv(Lp, _trsv(Lp, rhs, False), True)
    x = u - W[:, :p] @ z
    x[G] = 0.0
    return x, z
