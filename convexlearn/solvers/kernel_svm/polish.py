"""Active-set polishing of SVM multipliers (the last digits an interior-point method leaves).

An interior-point solution is accurate to its tolerance but never exactly on the
faces of the box 0 <= alpha <= C, so free support vectors miss the margin by ~1e-7 and
the intercept inherits that noise. Once the active set is known, the optimum solves a
linear system. With F the free set and B the bounded set (alpha_B = C), the KKT
conditions say that every free support vector lies on the margin:

    sum_j Q_ij alpha_j + y_i b = 1        (i in F)
    sum_j y_j alpha_j = 0                 (with intercept)

i.e. with Q = (y y^T) * K::

    [ Q_FF   y_F ] [alpha_F]   [ 1 - Q_FB alpha_B ]
    [ y_F^T   0  ] [   b   ] = [ -y_B^T alpha_B   ]

solved by least squares (the system is singular when the free set is degenerate; the
minimum-norm solution is then one of the optimal solutions). The polished point is
kept only if it stays inside the box; the caller compares the KKT reports of both points
and keeps the better one, so polishing can never make an answer worse.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .intercepts import intercept_from_alpha, intercepts_by_sign, is_balanced
from .polish_carry import arrange
from .polish_face import Face
from .polish_ray import ray_walk
from .polish_walk import ratio_walk

__all__ = ["polish_alpha", "polish_expansion", "intercept_from_alpha", "intercepts_by_sign",
           "is_balanced", "pick_joiners", "worst_of", "MAX_FREE"]

#: Above this many free support vectors the dense solve is not worth it; skip.
MAX_FREE = 4000
#: Whether the steps along the rays of a singular face without solution run as one walk
#: (:func:`~convexlearn.solvers.kernel_svm.polish_ray.ray_walk`); False: one fresh
#: least-squares round per step, as before it (tests/solvers/kernel_svm/test_polish_ray.py
#: compares the two).
RAY_WALK = True
#: At most this many of the worst margin violators join the free set per round once the
#: ray walk has run (a face of low rank: poly on 2-D data, a linear Gram), without the
#: JOIN_APART rule: there the walk fixes the surplus at O(|F| rank^2) a step, and the
#: rule's premise (near-duplicate points of a local kernel) fails - most pairs of a
#: linear kernel in 2-D have |cos| > JOIN_APART - so it let ~5-10 of 100-200 violators
#: join per round and the polish took 30-60 rounds of ~1 ms. Measured on 8 low-rank cases
#: of the kernel sweep at n = 400 (C = 100 and 1e4, data seed 13; CPU in all, best of
#: 3): with the rule 387 ms, 64 per round 359 ms, 128 259 ms, 400 281 ms.
LOW_RANK_JOIN = 128
#: ... only when the walk found the face's rank clearly low: rank + 1 < LOW_RANK_SHARE |F|
#: (a singular face of an rbf kernel - duplicated samples - runs the walk too, at a rank
#: near |F|, where JOIN_APART's premise holds).
LOW_RANK_SHARE = 0.5
#: At most this many samples join the free set per round (the worst violators): a
#: wholesale join of a misread set makes K_FF large and singular, and since the ratio
#: walk fixes the ones that must leave again cheaply (polish_walk), small joins cost
#: least (rbf gamma = 10 on 2-D blobs: 64 per round, polish 1.1 s of CPU; |F| per
#: round, 2.0 s).
MAX_JOIN = 64
#: Kernel entries below this (in absolute value, relative to the block's largest) enter
#: the polish's blocks as 0: a very local kernel's far pairs (rbf gamma = 10 on 2-D
#: blobs: exp(-10 d^2) down to 1e-300) make subnormal products in the Cholesky
#: factorization, the walk's products and solves, ~40x slower each (make_blobs(2000,
#: random_state=1), C = 0.1: the Cholesky of K_FF, |F| = 576, 171 ms -> 4 ms). The
#: change, <= 1e-150 max |K| an entry, is far below a backward-stable solve's
#: perturbation (eps ||K_FF||), and the polish only steers: the certificate recomputes
#: every residual from the data.
FLUSH = 1e-150
#: Blocks of at least this many entries are flushed by the compiled passes (loaded with
#: the carried factor's kernels); smaller ones in numpy.
FLUSH_FROM = 40_000
#: When more than MAX_JOIN samples violate their margin, two whose kernel columns are
#: this close (normalized kernel |K_ij| / sqrt(K_ii K_jj) above it: near-duplicate points
#: of a local kernel) do not join in the same round: the face needs one of them at most,
#: the pair makes K_FF nearly singular, and the walk fixes one again (rbf gamma = 10,
#: make_blobs(2000), random_state 1: of the 64 joiners of each of the first rounds the
#: walk fixed 28-36 again, with this rule 18-23). Fewer violators all join (a low-rank
#: kernel's few: poly degree 2 on 2-D circles, C = 0.01, took an SMO rerun with the rule).
JOIN_APART = 0.9
#: ... judged among at most this many MAX_JOIN of the worst violators.
JOIN_POOL = 4


def solve_on_active_set(y: np.ndarray, C: Any, intercept: bool, kernel_block: Callable,
                        free_idx: np.ndarray, bound_idx: np.ndarray
                        ) -> tuple[np.ndarray, float]:
    """Solve the KKT system above for (alpha_F, b) given the free and bounded sets.

    ``C`` is the vector of per-sample bounds.
    """
    yF, yB = y[free_idx], y[bound_idx]
    C = C[bound_idx]
    Q_FF = (yF[:, None] * yF[None, :]) * kernel_block(free_idx, free_idx)
    rhs = np.ones(free_idx.size)
    if bound_idx.size:
        rhs -= yF * (kernel_block(free_idx, bound_idx) @ (yB * C))
    if not intercept:
        return np.linalg.lstsq(Q_FF, rhs, rcond=None)[0], 0.0
    k = free_idx.size
    A = np.zeros((k + 1, k + 1))
    A[:k, :k] = Q_FF
    A[:k, k] = yF
    A[k, :k] = yF
    rhs = np.append(rhs, -float(yB @ C))
    sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return sol[:k], float(sol[k])


def polish_alpha(y: np.ndarray, C: float, alpha: np.ndarray, intercept: bool,
                 kernel_block: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 threshold: float = 1e-6, max_rounds: int = 50, margin_tol: float = 1e-7
                 ) -> tuple[np.ndarray, float | None] | None:
    """Refine ``alpha`` (and b) by solving the KKT system on its active set.

    The active set is first read off ``alpha`` (relative ``threshold``), then corrected
    for up to ``max_rounds`` rounds, one sample per round (a primal-dual active-set
    method): a free multiplier that leaves the box moves to the bound it crossed (0 or C);
    a sample at alpha = 0 with margin m_i < 1 - margin_tol, or at alpha = C with
    m_i > 1 + margin_tol, joins the free set. The refined point is returned only if it is
    inside the box and no margin contradicts its set; the caller judges it by its KKT
    report.

    Parameters
    ----------
    y : ndarray of {-1, +1}
    C : float or ndarray
        ``inf`` for the hard margin; per-sample bounds C_i for weighted samples.
    alpha : ndarray
        Multipliers from a solver (feasible up to its tolerance).
    intercept : bool
    kernel_block : callable
        ``kernel_block(rows, cols)`` -> K[rows][:, cols].
    threshold : float
        Relative size (of max C_i, or of max alpha for the hard margin) below which
        alpha_i is taken as 0, and within which of C_i it is taken as bounded.
    max_rounds : int
    margin_tol : float
        Margin violation tolerated before a sample changes set (margins are unitless).

    Returns
    -------
    (alpha, b) or None
        ``b`` is None when there is no free support vector (the caller then takes the
        midpoint of the feasible interval); None when no consistent active set was found
        or the free set is too large.
    """
    C = np.broadcast_to(np.asarray(C, dtype=float), alpha.shape)
    hard = bool(np.all(np.isinf(C)))
    scale = max(1.0, float(np.max(alpha))) if hard else float(np.max(C))
    cut = threshold * scale
    support = alpha > cut
    bounded = support & (alpha >= C - cut) if not hard else np.zeros_like(support)
    free = support & ~bounded
    for _ in range(max_rounds):
        free_idx, bound_idx = np.flatnonzero(free), np.flatnonzero(bounded)
        if free_idx.size > MAX_FREE:
            return None
        new = np.zeros_like(alpha)
        new[bound_idx] = C[bound_idx]
        if free_idx.size == 0:
            return new, None
        alpha_F, b = solve_on_active_set(y, C, intercept, kernel_block, free_idx, bound_idx)
        upper = C[free_idx]
        excess = np.maximum(-alpha_F, alpha_F - upper)
        if np.any(excess > 0):
            # Dual infeasible: move the worst offender to the bound it crossed (one at a
            # time; several at once can overshoot the true set).
            k = int(np.argmax(excess))
            moved = free_idx[k]
            free[moved] = False
            bounded[moved] = support[moved] = bool(alpha_F[k] > upper[k])
            continue
        new[free_idx] = alpha_F
        # Primal infeasible: a sample at alpha = 0 inside the margin, or at alpha = C
        # outside it, belongs to the free set; bring back the worst one and re-solve.
        active = np.concatenate([free_idx, bound_idx])
        m = y * (kernel_block(np.arange(y.size), active) @ (y[active] * new[active]) + b)
        wrong = np.where(~support, np.maximum(1.0 - m, 0.0), 0.0)
        wrong = np.where(bounded, np.maximum(m - 1.0, 0.0), wrong)
        worst = int(np.argmax(wrong))
        if wrong[worst] <= margin_tol:
            return new, b
        support[worst], bounded[worst], free[worst] = True, False, True
    return None


def flushed(kernel_block: Callable[[np.ndarray, np.ndarray], np.ndarray]
            ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``kernel_block`` with the entries |K_ij| < :data:`FLUSH` max |K| set to 0 (relative
    to the block's largest entry: a Gram matrix of tiny scale keeps its entries; in a
    copy; compiled passes: numpy's masks cost ~5 passes and three k^2 temporaries, ~25 ms
    a block at |F| = 1044)."""
    def block(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        K = np.asarray(kernel_block(rows, cols), dtype=float)
        if K.size < FLUSH_FROM:
            magnitude = np.abs(K)
            small = magnitude < FLUSH * float(np.max(magnitude, initial=0.0))
            if small.any():
                K = K.copy(order="K")
                K[small] = 0.0
            return K
        from .polish_carry_kernels import count_small, max_abs, zero_small
        # (the passes run down columns: a C-ordered block is read as its transpose)
        limit = FLUSH * max_abs(K.T if K.flags.c_contiguous else K)
        if count_small(K.T if K.flags.c_contiguous else K, limit):
            K = K.copy(order="K")
            zero_small(K.T if K.flags.c_contiguous else K, limit)
        return K
    return block


def _of(y: np.ndarray, c: float | None) -> np.ndarray:
    """The variables of sign c (all of them for c None)."""
    return np.ones(y.shape, dtype=bool) if c is None else y * c > 0


def polish_expansion(y: np.ndarray, C: float, alpha: np.ndarray, g: np.ndarray, intercept: bool,
                     kernel_block: Callable[[np.ndarray, np.ndarray], np.ndarray],
                     products: Callable[[np.ndarray], np.ndarray],
                     threshold: float = 1e-10, max_rounds: int = 100,
                     margin_tol: float = 1e-9, target: np.ndarray | None = None,
                     delta: Any = 0.0, by_sign: bool = False,
                     progress: Callable[[np.ndarray, np.ndarray], bool] | None = None
                     ) -> tuple[np.ndarray, Any, np.ndarray] | None:
    """:func:`polish_alpha` without the Gram matrix, for a large kernel problem.

    In the expansion beta = y * alpha (f = K beta + b), the free set F solves

        K_FF beta_F + b 1 = y_F - K_{F,R} beta_R,    1^T beta_F = -1^T beta_R

    (R: the fixed multipliers, 0 or C_i; without intercept no b and no second row). On
    the dual QP of :mod:`~convexlearn.solvers.kernel_svm.qp` (signs y, upper bounds C),
    y_F is ``target``_F = -s_F p_F and the second row's right side has ``delta`` (s^T a =
    delta); the margin error m_i - 1 is y_i (g_i + b - target_i). Only
    the |F| x |F| block of K is formed (``kernel_block``); g = K beta, given for the
    starting point (e.g. SMO's gradient), is kept up to date by ``products(delta)`` =
    K @ delta, which touches only the columns where delta is not zero (the free set and
    the samples that changed set), by blocks of rows. Each round: solve for the free set
    (the solution nearest the current point when K_FF is singular; when the singular
    system has no solution the face is unbounded and its null-space ray is the
    direction: :func:`~convexlearn.solvers.kernel_svm.polish_face.kkt_solve`); when that solution leaves the box (or along the
    ray), step from the current point towards it until the first free multiplier
    reaches its bound, and fix it there (a primal active-set step: the point stays feasible
    and balanced; after a fresh factorization the run of such steps is
    :func:`~convexlearn.solvers.kernel_svm.polish_walk.ratio_walk`, steered by that factor
    at one pair of triangular solves per step, freeing again the multipliers it fixed whose
    margin contradicts their bound (``margin_tol``: the walk ends at the optimum on the
    factorized block, the joiners it pushes out included), its last solution kept when it
    solves its face to a backward-stable residual); otherwise, the samples whose margin
    contradicts their set (alpha = 0 with m_i < 1 - margin_tol, alpha = C_i with m_i > 1 +
    margin_tol) join the free set, the worst MAX_JOIN of them per round (LOW_RANK_JOIN
    once a face was found of low rank). Margins are unitless;
    ``threshold`` is relative to max C_i (max alpha for the hard margin); a free
    sample's margin error at a least-squares solution above ``margin_tol`` marks the
    system as having none.

    Returns
    -------
    (alpha, b, g) or None
        ``b`` None when no multiplier is free (the caller takes the midpoint of the
        feasible interval); ``g = K (y * alpha)`` at the returned point; None when the
        free set exceeds :data:`MAX_FREE` or no consistent set was found in
        ``max_rounds`` rounds that factorize K_FF afresh or evaluate kernel products
        (the ratio steps steered by a kept factorization, :class:`~convexlearn.solvers.kernel_svm.polish_face.Face`, count apart, at
        most 4 MAX_FREE).

    ``by_sign`` (the nu-problems): one row per sign, sum_{y_i = +1} a_i = delta_+ and
    sum_{y_i = -1} a_i = delta_- (``delta`` a pair), one intercept per sign (g_i + b_{y_i}
    = target_i on the free set): the bordered system has one column per sign of F, and a
    sign without free variables takes the midpoint of the interval its bounded variables
    allow (:func:`intercept_from_alpha`); the returned b is the pair (b_+, b_-), never None.

    ``progress(join, wrong)``, when given, is called at each round that computes the
    margins and finds violators (``join`` their indices, ``wrong`` the margin errors
    max(0, 1 - m_i) at 0, max(0, m_i - 1) at C_i, 0 on F); False ends the polish with
    None (the caller's judgement, from the rounds so far, that this run will not certify).
    """
    C = np.broadcast_to(np.asarray(C, dtype=float), alpha.shape)
    kernel_block = flushed(kernel_block)
    hard = bool(np.all(np.isinf(C)))
    scale = max(1.0, float(np.max(alpha))) if hard else float(np.max(C))
    cut = threshold * scale
    beta = y * np.where(alpha > cut, np.where(alpha >= C - cut, C, alpha), 0.0)
    snap = beta - y * alpha
    if snap.any():       # snapping changed few entries (SMO's ends none): cheap columns
        g = g + products(snap)
    free = (np.abs(beta) > 0) & (np.abs(beta) < C)
    target = y if target is None else target
    intercept = intercept or by_sign
    # the rows in beta = y * a: sum over a sign c of beta = c delta_c
    signs = (1.0, -1.0) if by_sign else (None,)
    deltas = (np.asarray(delta, dtype=float) * np.array([1.0, -1.0])) if by_sign else (delta,)
    face = Face(intercept, y if by_sign else None, bool(np.all(np.isfinite(C))))
    # g is exact at the last synchronisation; the steps since then are in ``pending``
    # and only the free entries are kept current (through K_FF) until the margins are
    # needed: a ratio step then costs O(|F|^2), not n |F| kernel evaluations.
    pending = np.zeros_like(beta)
    g_free = g.copy()
    # ``max_rounds`` counts the rounds that factorize or evaluate kernel products; the
    # ratio steps steered by a kept factorization (O(|F|^2) each) count apart
    costly, cheap = 0, 0
    low_rank = False                   # has the ray walk found a face of low rank?
    while costly < max_rounds and cheap < 4 * MAX_FREE:
        # (in the face's block order: a factor carried from the last round stays valid)
        F = arrange(face.F0, free) if face.signs is None else np.flatnonzero(free)
        if F.size > MAX_FREE:
            return None
        if F.size == 0:
            g = g + products(pending)
            # No free multiplier: the point is only a candidate when it still balances.
            if intercept and not all(is_balanced(beta[_of(y, c)], scale, d)
                                     for c, d in zip(signs, deltas)):
                return None
            if by_sign:
                b_pair, _ = intercepts_by_sign(y, C, y * beta, g, target)
                return y * beta, b_pair, g
            return y * beta, None, g
        face.focus(F, kernel_block)
        if not face.steering:
            costly += 1
        else:
            cheap += 1
        # K_{F,R} beta_R = g_F - K_FF beta_F at the current point
        rest = g_free[F] - face.product(beta[F])
        total = None
        if intercept:
            present = [c is None or bool(np.any(_of(y[F], c))) for c in signs]
            # a sign without free variables must balance by its bounded ones
            if not all(p or is_balanced(beta[_of(y, c)], scale, d)
                       for p, c, d in zip(present, signs, deltas)):
                return None
            total = np.array([d - float(beta[_of(y, c) & ~free].sum())
                              for p, c, d in zip(present, signs, deltas) if p])
            if not by_sign:
                total = float(total[0])
        rhs = target[F] - rest
        u, b, ray = face.solve(rhs, total, beta[F], margin_tol, fresh=False)
        if (ray is None and not face.last_fresh
                and _ratio_step(y[F] * beta[F], y[F] * (u - beta[F]), C[F]) is None):
            # in the box by the steering: kept when it solves the face's system to the
            # round-off of a fresh solve, else confirmed by a fresh factorization
            if not face.accurate():
                costly += 1
                u, b, ray = face.solve(rhs, total, beta[F], margin_tol, fresh=True)
        direction = u - beta[F] if ray is None else ray
        step = _ratio_step(y[F] * beta[F], y[F] * direction, C[F],
                           1.0 if ray is None else math.inf)
        if step is None and ray is not None:
            return None                  # unbounded on the face: no bound to stop at
        walk = None
        if (RAY_WALK and step is not None and ray is not None and not by_sign
                and np.all(np.isfinite(C[F]))):
            lo = np.where(y[F] > 0, 0.0, -C[F])
            walk = ray_walk(face.KFF, target[F] - g_free[F], beta[F], lo, lo + C[F], ray,
                            margin_tol, intercept, 4 * MAX_FREE - cheap)
        if walk is not None and walk[2] > 0:
            # a singular face without solution of low rank (a low-rank kernel: rank K_FF
            # << |F|): the run of ray steps from one factorization of K_FF (polish_ray),
            # not one fresh least-squares round per fixed multiplier
            walked, still, steps, rank = walk
            cheap += steps
            low_rank = low_rank or rank_is_low(rank, F.size)
            delta_F = walked - beta[F]
            beta[F] = walked
            pending[F] += delta_F
            g_free[F] += face.product(delta_F)
            free[F[~still]] = False
            continue
        if step is not None:
            # The face's optimum leaves the box: walk towards it until the first free
            # multiplier reaches its bound (the dual objective does not decrease on the
            # way, and the balance stays), fix that one and solve again. Snapping every
            # violator at once instead broke the balance on ill-conditioned free sets.
            # (Along a ray of an unbounded face, the same up to the first bound.)
            t, blocking = step
            factor = (face.cholesky() if ray is None and not by_sign and face.last_fresh
                      and np.all(np.isfinite(C[F])) else None)
            if factor is not None:
                # the run of ratio steps from the fresh factor (polish_walk): one pair
                # of triangular solves per step; its last solution is kept when
                # accurate, else the smaller face is solved afresh
                lo = np.where(y[F] > 0, 0.0, -C[F])
                walked, still, steps, b_walk = ratio_walk(
                    face.K0, factor, np.ones((F.size, int(intercept))),
                    beta[F], rest, target[F], np.atleast_1d(total if intercept else []),
                    lo, lo + C[F], direction, release_tol=margin_tol, norm=face.norm)
                cheap += steps
                delta_F = walked - beta[F]
                beta[F] = walked
                pending[F] += delta_F
                free[F[~still]] = False
                if b_walk is None:
                    g_free[F] += face.product(delta_F)
                    continue
                # the face's solution on the smaller set: on to the margins
                F, u, b = F[still], walked[still], float(b_walk[0]) if intercept else 0.0
                step = None
        if step is not None:
            if ray is None:
                face.prepare_downdates()
            delta_F = t * direction
            hit = blocking                   # snapped onto the bound each approached
            towards_upper = y[F[hit]] * direction[hit] > 0.0
            delta_F[hit] = y[F[hit]] * np.where(towards_upper, C[F[hit]], 0.0) - beta[F[hit]]
            beta[F] += delta_F
            pending[F] += delta_F
            g_free[F] += face.product(delta_F)
            free[F[hit]] = False
            continue
        costly += 1
        delta_F = u - beta[F]
        beta[F] = u
        pending[F] += delta_F
        g = g + products(pending)
        pending[:] = 0.0
        g_free = g.copy()
        if by_sign:
            b = _pair(b, present, y, C, y * beta, g, target)
            err = y * (g + np.where(y > 0, b[0], b[1]) - target)
        else:
            err = y * (g + b - target)          # m - 1 for the C-SVC
        a = y * beta
        wrong = np.where(a <= 0.0, np.maximum(-err, 0.0), 0.0)
        wrong = np.where(a >= C, np.maximum(err, 0.0), wrong)
        wrong[F] = 0.0
        wrong[C <= 0.0] = 0.0           # weight-0 samples are absent from the problem
        join = np.flatnonzero(wrong > margin_tol)
        if join.size == 0:
            return y * beta, b, g
        if progress is not None and not progress(join, wrong):
            return None
        # the worst violators first, at most MAX_JOIN of them, no two near-duplicates;
        # on a face the ray walk found of low rank, the worst LOW_RANK_JOIN of them
        join = (worst_of(join, wrong, LOW_RANK_JOIN) if low_rank
                else pick_joiners(join, wrong, kernel_block))
        free[join] = True
    return None


def pick_joiners(join: np.ndarray, wrong: np.ndarray,
                 kernel_block: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """The samples that join the free set this round.

    When at most MAX_JOIN samples violate their margin, all of them. Otherwise, among the
    :data:`JOIN_POOL` MAX_JOIN worst (their block of K: at most (JOIN_POOL MAX_JOIN)^2
    kernel entries), worst first, each one that is not close to one taken before it,

        |K_ij| <= JOIN_APART sqrt(K_ii K_jj)    (i taken, j considered),

    until MAX_JOIN are taken (the others wait for the next round's margins).

    Parameters
    ----------
    join : ndarray of int
        The violators' indices.
    wrong : ndarray
        Each sample's margin violation (indexed by sample).
    kernel_block : callable
        ``kernel_block(rows, cols)`` -> K[rows][:, cols].

    Returns
    -------
    ndarray of int
        The joiners (``join`` itself when it has at most MAX_JOIN entries).
    """
    if join.size <= MAX_JOIN:
        return join
    if join.size > JOIN_POOL * MAX_JOIN:
        join = join[np.argpartition(wrong[join], -JOIN_POOL * MAX_JOIN)
                    [-JOIN_POOL * MAX_JOIN:]]
    order = join[np.argsort(-wrong[join], kind="stable")]
    K = np.abs(np.asarray(kernel_block(order, order), dtype=float))
    scale = np.sqrt(np.diag(K))
    with np.errstate(divide="ignore", invalid="ignore"):
        close = K > JOIN_APART * np.outer(scale, scale)
    taken = np.zeros(order.size, dtype=bool)
    blocked = np.zeros(order.size, dtype=bool)
    count = 0
    for a in range(order.size):
        if blocked[a]:
            continue
        taken[a] = True
        blocked |= close[a]
        count += 1
        if count == MAX_JOIN:
            break
    return order[taken]


def rank_is_low(rank: int, size: int) -> bool:
    """Whether a face of ``size`` free samples whose K_FF has numerical ``rank`` is of
    low rank for the joins (:data:`LOW_RANK_JOIN`): rank + 1 < LOW_RANK_SHARE size (the
    1: the intercept's row)."""
    return rank + 1 < LOW_RANK_SHARE * size


def worst_of(join: np.ndarray, wrong: np.ndarray, most: int) -> np.ndarray:
    """The at most ``most`` entries of ``join`` with the largest ``wrong`` (all of them
    when there are no more)."""
    if join.size <= most:
        return join
    return join[np.argpartition(wrong[join], -most)[-most:]]


def _pair(b: np.ndarray, present: list, y: np.ndarray, C: np.ndarray, alpha: np.ndarray,
          g: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """(b_+, b_-) from the solved intercepts of the signs present in the free set, the
    midpoint rule of :func:`intercepts_by_sign` for a sign with no free variable."""
    fallback, _ = (intercepts_by_sign(y, C, alpha, g, target) if not all(present)
                   else ((0.0, 0.0), ""))
    solved = iter(np.atleast_1d(b).tolist())
    return tuple(next(solved) if p else fallback[k] for k, p in enumerate(present))


def _ratio_step(a: np.ndarray, d: np.ndarray, upper: np.ndarray, t_max: float = 1.0
                ) -> tuple[float, np.ndarray] | None:
    """The longest step t in [0, t_max) of a + t d that stays in [0, upper], and the
    multipliers that reach their bound at it; None when a + t_max d is in the box
    (``t_max`` = inf: a ray, None when no bound stops it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d < 0.0, a / -d, np.where(d > 0.0, (upper - a) / d, np.inf))
    room = np.maximum(room, 0.0)
    t = float(np.min(room)) if room.size else math.inf
    if not t < t_max:
        return None
    blocking = np.flatnonzero(room <= t + 1e-15)
    return t, blocking
