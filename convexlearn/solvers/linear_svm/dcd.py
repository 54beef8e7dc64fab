"""Dual coordinate descent (DCD) for the linear SVM, with an unpenalized intercept.

LIBLINEAR's method (Hsieh et al. 2008): one dual coordinate at a time, w = sum_i a_i y_i x_i
kept so that a step costs O(d)::

    min_a  1/2 a^T (Q + D) a - e^T a,   Q_ij = y_i y_j <x_i, x_j>,   0 <= a_i <= U

(hinge: D = 0, U = C; squared hinge: D = I / (2C), U = inf), with shrinking. LIBLINEAR
penalizes b; here b stays unpenalized (docs/conventions.md), so y^T a = 0 is enforced by
the method of multipliers, L(a, lam) = f(a) + lam y^T a + rho/2 (y^T a)^2 (f the objective
above), whose inner problems are again box problems solved by the same steps
(b = lam + rho y^T a). Face steps
(:mod:`.dcd_face`) finish where the coordinate steps converge sublinearly; the epoch is
compiled (:mod:`.dcd_kernel`). Why each piece is there, with the measurements:
docs/routes.md, "Design notes of the algorithms".
"""

from __future__ import annotations

from typing import Any, Callable

import math

import numpy as np
from numpy.typing import ArrayLike

from scipy import sparse
from scipy.linalg.blas import ddot

from ...data import check_choice, check_count, check_positive
from ...errors import NotApplicableError, ParameterError
from ...solution import History, Solution, Timer
from .dcd_face import face_walk
from .dcd_kernel import dcd_epochs
from .linear_certificate import row_sq_norms

__all__ = ["solve_svm", "dcd_linear", "LOSSES"]

LOSSES = ("hinge", "squared_hinge")

_INNER = 0.1      # inner accuracy after a multiplier step, relative to rho |y^T a|
_TOL_FLOOR = 1e-14    # the gap test cuts tol no further (projected gradients are O(1))
_FACE_COUNTS = ("face_steps", "face_tries", "face_pivots", "face_rounds")
_FACE_MAX = 3000      # face steps while d + 1 + |F| <= this (dense systems of that size)


def _objectives(X, y, C, loss, alpha, w, b):
    """Primal P(w, b), dual D(a) (the dual value is a bound only where y^T a = 0)."""
    m = y * (X @ w + b)
    slack = np.maximum(0.0, 1.0 - m)
    ww = float(w @ w)
    if loss == "hinge":
        return 0.5 * ww + C * float(slack.sum()), float(alpha.sum()) - 0.5 * ww
    return (0.5 * ww + C * float(slack @ slack),
            float(alpha.sum()) - 0.5 * ww - float(alpha @ alpha) / (4.0 * C))


def _as_rows(X):
    """(dense, Xd, indptr, indices, data) for the compiled epoch: C-contiguous float rows,
    or the arrays of a CSR matrix (another sparse format is converted to CSR, never densified).
    The CSR index arrays are passed as they are (int32 below 2^31 values: no copy, and half
    the bytes an epoch reads, against int64 copies); the dense case passes int32 placeholders
    so that both share one compiled specialization."""
    empty_i, empty_f = np.zeros(1, dtype=np.int32), np.zeros(1)
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=float)
        X.sort_indices()
        index = np.int32 if X.indptr.dtype == np.int32 else np.int64
        return (False, np.zeros((1, 1)), X.indptr.astype(index, copy=False),
                X.indices.astype(index, copy=False), np.asarray(X.data, dtype=float))
    return True, np.ascontiguousarray(X, dtype=float), empty_i, empty_i, empty_f


def dcd_linear(X: ArrayLike, y: np.ndarray, C: float, loss: str = "hinge", intercept: bool = True,
               tol: float = 1e-4, max_iter: int = 1000, seed: Any = 0, shrinking: bool = True,
               rho: float | None = None, alpha0: np.ndarray | None = None,
               callback: Callable[..., Any] | None = None,
               b0: float = 0.0, gap_tol: float | None = None, center: bool | None = None,
               face_every: int = 0, record: bool = True, max_visits: int | None = None,
               counts: dict | None = None) -> Any:
    """Dual coordinate descent on arrays (see the module docstring).

    Parameters
    ----------
    X : ndarray (n, d) or scipy.sparse matrix
        Dense rows or CSR (other sparse formats are converted to CSR; never densified).
    y : ndarray of {-1, +1}
    C : float or ndarray of shape (n,)
        Upper bounds U_i of the multipliers (hinge loss); ``inf`` entries leave a_i
        unbounded above (the hard margin, reachable here for the exact route's warm start).
    loss : {"hinge", "squared_hinge"}
    intercept : bool
        True: unpenalized b via the augmented Lagrangian on y^T a = 0.
    tol : float
        Accuracy of the projected gradient (its max - min over the coordinates, as in
        LIBLINEAR; max |PG| without intercept) and of the intercept: margin units; the
        balance |y^T a| is held to tol max_i C_i (multiplier units, as the KKT report).
    max_iter : int
        Budget of epochs (passes over the active coordinates).
    seed : int or numpy.random.Generator
        For the random order of the coordinates.
    rho : float, optional
        Augmented-Lagrangian penalty, default mean_ij z_ij^2 over the centred data (the
        mean square of a feature; 1 for all-zero X): the constant feature sqrt(rho) is as
        large as a typical feature. That is LIBLINEAR's bias 1 on standardized data, and
        unlike a fixed 1 it makes the method equivariant under X -> s X. Measured (epochs
        to tol 1e-6, centred data): digits 3/8 544 (rho = 1: not converged in 3000, 1.7e-2
        off), iris 101 (130).
    alpha0 : ndarray, optional
        Warm start (clipped to the box).
    b0 : float
        Warm start of the intercept, for the original (uncentred) data.
    callback : callable, optional
        ``callback(epoch, alpha, dual_objective)`` after each epoch; False stops.
    gap_tol : float, optional
        Also require the relative gap |P - D| / max(|P|, |D|) <= gap_tol at the stop (P > 0
        for the soft margin, so no absolute floor is needed): while it fails, ``tol`` is
        cut tenfold (down to 1e-14); a gap still too large there ends with status
        "inaccurate".
    center : bool, optional
        Run on z_i = x_i - mu (default: with intercept). b is unpenalized, so this is the
        same problem with b shifted by <w, mu>; dense rows are centred in a copy, sparse
        ones implicitly (:mod:`.dcd_kernel`). The imbalance s = y^T a then shows in the
        decision values on X as s <mu, x_i - mu>, so the stop also needs
        |s| ||mu|| max_i ||x_i - mu|| <= tol.
    face_every : int
        Epochs between face steps (module docstring); 0: none, the default of this
        function (the exact linear route calls it for a warm start); :func:`solve_svm`
        takes 50.
    record : bool
        Keep the per-epoch history (below); False for a warm start whose history nobody
        reads: the history stays empty and the primal value (a product with X) is computed
        only where ``gap_tol`` needs it (~40 us an epoch on 569 x 30).
    max_visits : int, optional
        A budget in coordinate steps (visits, shrunk coordinates not counted) besides
        ``max_iter``: the run stops with status "max_iter" once its epochs have visited
        this many (a warm start's budget in work: with shrinking, hundreds of epochs on a
        few dozen coordinates cost what one full epoch does).
    counts : dict, optional
        Receives ``visits``, the coordinate steps of the run, and ``last_pass``, those of
        its last epoch (the active set's size).

    Returns
    -------
    alpha, w, b, n_epochs, status, history
        ``w = X^T (y * alpha)`` and ``b`` for the original data. History per epoch:
        ``objective`` (the dual objective D(a) = e^T a - 1/2 ||w||^2 - a^T D a / 2; a
        lower bound on the optimum only once y^T a = 0), ``violation`` (projected-gradient
        spread on the pass), ``balance`` (|y^T a|), ``active`` (coordinates visited),
        ``time``; after full passes also ``primal`` (P(w, b)) and ``gap`` (P - D); with
        face steps the running counts ``face_steps`` (kept), ``face_tries``,
        ``face_pivots``, ``face_rounds`` (face solves).
    """
    timer = Timer()
    n, d = X.shape
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    hinge = loss == "hinge"
    upper = (np.broadcast_to(np.asarray(C, dtype=float), (n,)).copy() if hinge
             else np.full(n, math.inf))
    C_vec = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    if not hinge and np.ndim(C):
        raise ParameterError("loss='squared_hinge' takes a scalar C (its dual adds "
                             f"a / (2C) to the diagonal); got an array of shape {np.shape(C)}")
    diag = 0.0 if hinge else 1.0 / (2.0 * float(C))
    center = intercept if center is None else center
    is_sparse = sparse.issparse(X)
    if is_sparse:
        X = sparse.csr_matrix(X, dtype=float)
    mu = np.asarray(X.mean(axis=0), dtype=float).ravel() if center else np.zeros(d)
    if center and not is_sparse:
        Z, xm, mm = X - mu, np.zeros(n), 0.0       # explicit: no cancellation
        mu_r = np.zeros(d)                          # the mean the rows still carry
    else:
        Z, xm, mm = X, np.asarray(X @ mu, dtype=float).ravel(), float(mu @ mu)
        mu_r = mu
    sq = row_sq_norms(Z) - 2.0 * xm + mm             # ||x_i - mu||^2
    if intercept:
        mean_sq = float(sq.mean()) / d if n and d else 0.0
        rho = (mean_sq if mean_sq > 0 else 1.0) if rho is None else check_positive("rho", rho)
    else:
        rho = 0.0
    shift_norm = (float(np.linalg.norm(mu)) * math.sqrt(max(float(sq.max()), 0.0))
                  if center else 0.0)
    # A zero row without intercept (hinge) has no curvature: its dual term is linear, and
    # the clipped step must go to the bound the gradient points at. A tiny curvature does
    # that through the clip (the step is +-huge), with no branch in the loop.
    curv = np.maximum(sq + diag + rho, 1e-300)
    alpha = np.zeros(n) if alpha0 is None else np.clip(np.array(alpha0, dtype=float), 0.0, upper)
    rows = _as_rows(Z)
    v = np.asarray(Z.T @ (y * alpha), dtype=float).ravel()
    s = float(y @ alpha)
    # the multiplier lam is the intercept of the centred problem minus rho s
    b_c = float(b0) + (float(np.asarray(X.T @ (y * alpha)).ravel() @ mu) if center else 0.0)
    lam = b_c - rho * s if intercept else 0.0
    state = np.array([s, float(mu_r @ v), float(alpha.sum()), float(alpha @ alpha)])
    yf = np.ascontiguousarray(y, dtype=float)
    history = History()
    # the active coordinates are order[:n_active]; the compiled driver shuffles, shrinks
    # and compacts them in place (its xorshift state drawn from ``rng``: one seed, one run)
    order, n_active = np.arange(n), n
    keep = np.ones(n, dtype=np.bool_)
    bounds = np.array([math.inf, -math.inf])        # LIBLINEAR's pg_max_old, pg_min_old
    rstate = np.array([int(rng.integers(1, 2 ** 63))], dtype=np.uint64)
    status, epoch = "max_iter", 0
    outer_tol = math.inf              # accuracy asked of the inner problem before lam moves
    face = dict(face_steps=0, face_tries=0, face_pivots=0, face_rounds=0)
    faces_apply = (face_every > 0 and intercept and hinge and not is_sparse
                   and bool(np.all(np.isfinite(upper))))
    next_face = face_every
    # one epoch a call where something happens after every epoch (history, callback, face
    # steps); else the driver runs until the inner tolerance, its budget or huge values
    single = record or callback is not None or faces_apply
    visits, budget = 0, (max_visits if max_visits is not None else 2 ** 62)
    while epoch < max_iter and visits < budget:
        if faces_apply and epoch + 1 >= next_face and _face_fits(alpha, upper, d):
            accepted = _try_face(Z, yf, upper, C_vec, alpha, v, state, lam, rho, face)
            # a step not kept doubles the wait for the next (each costs O(pivots |F| d))
            next_face = epoch + 1 + face_every * 2 ** (face["face_tries"] - face["face_steps"])
            if accepted is not None:
                lam = accepted - rho * state[0]     # b = the face's intercept
                # the step moved w: shrinking decisions are stale, revisit every coordinate
                order, n_active = np.arange(n), n
                bounds[:] = (math.inf, -math.inf)
        more, n_active, n_pass, pg_max, pg_min, violation, seen = dcd_epochs(
            *rows, yf, xm, mm, curv, upper, diag, rho, lam, alpha, v, state, order, n_active,
            keep, bounds, shrinking, intercept, max(tol, outer_tol),
            1 if single else max_iter - epoch, budget - visits, rstate)
        epoch += more
        visits += seen
        s = state[0]
        # (the violation: LIBLINEAR's spread max - min of the projected gradients; without
        # an intercept the box is the only constraint and optimality is every pg = 0:
        # max |pg| (the spread is 0 when all pg are equal, e.g. all -1 at the start; found
        # in review))
        w2 = _shifted_sq_norm(v, float(s), float(state[1]), mm)   # ||v - s mu||^2
        dual = float(state[2]) - 0.5 * w2 - 0.5 * diag * float(state[3])
        row = dict(objective=dual, violation=violation, balance=abs(s), active=n_pass,
                   violation_target=tol, **face) if record else {}
        if (n_pass == n and math.isfinite(dual)     # diverged: no finite primal either
                and (record or gap_tol is not None)):
            # the primal needs X w, O(nnz): only after full passes, which cost as much
            f = np.asarray(Z @ v, dtype=float).ravel() - s * xm - state[1] + s * mm
            primal = _primal_value(f + lam + rho * s, y, C_vec, loss, w2)
            row.update(primal=primal, gap=primal - dual)
        if record:
            history.record(**row, time=timer())
        if not math.isfinite(dual):     # hard margin (U = inf) on non-separable data
            status = "diverged"
            break
        if callback is not None and callback(epoch, alpha, dual) is False:
            status = "stopped"
            break
        if violation > max(tol, outer_tol):
            continue
        lever = max(rho, shift_norm) * abs(s)
        if intercept and (lever > tol or abs(s) > tol * _multiplier_scale(upper, alpha)):
            # multiplier step; ask the next inner problem for more accuracy
            outer_tol = max(tol, _INNER * lever)
            lam += rho * s
            # shrinking decisions were made for the old multiplier: revisit every coordinate
            order, n_active = np.arange(n), n
            bounds[:] = (math.inf, -math.inf)
            continue
        if violation > tol:        # the multiplier is accurate: now the coordinates must be
            outer_tol = tol
            continue
        if n_active < n:           # optimal on the active set: re-check every coordinate
            order, n_active = np.arange(n), n
            bounds[:] = (math.inf, -math.inf)
            continue
        if gap_tol is not None and "primal" in row:     # this pass was a full one
            rel_gap = abs(row["gap"]) / max(abs(row["primal"]), abs(dual), 1e-300)
            if rel_gap > gap_tol:
                if tol > _TOL_FLOOR:
                    tol = outer_tol = max(tol / 10.0, _TOL_FLOOR)
                    continue
                status = "inaccurate"
                break
        status = "converged"
        break
    if counts is not None:
        counts.update(visits=visits, last_pass=n_pass if epoch else n)
    s = float(y @ alpha)
    w = np.asarray(X.T @ (y * alpha), dtype=float).ravel()   # recomputed: no running drift
    # the returned w = X^T (y * a) differs from the run's w_c = w - s mu; b matches the run's
    # decision value at the mean, where the data are (not at the origin)
    b = lam + rho * state[0] - (float(w @ mu) if center else 0.0)
    return alpha, w, b, epoch, status, history


def _face_fits(alpha, upper, d) -> bool:
    """Face steps only while the dense systems stay small: d + 1 + |F| <= _FACE_MAX."""
    return d + 1 + int(np.count_nonzero((alpha > 0.0) & (alpha < upper))) <= _FACE_MAX


def _try_face(Z, y, upper, C_vec, alpha, v, state, lam, rho, face):
    """A face step (:mod:`.dcd_face`) from the current multipliers, kept when the walk
    ended on a face no margin contradicts and the primal P(w, b) at its point is <= P at
    the current one (w = Z^T (y a), b = lam + rho y^T a).
    Updates ``alpha``, ``v``, ``state``, ``face`` (counts) in place; returns the face's
    intercept when the step was taken, else None."""
    face["face_tries"] += 1
    new, b, info = face_walk(Z, y, upper, alpha)
    face["face_pivots"] += info["pivots"]
    face["face_rounds"] += info["rounds"]
    if not info["optimal"]:
        # a walk cut short leaves a point whose b belongs to an earlier face (measured: badly
        # scaled features, where the face systems lose digits, drove P up 6000-fold)
        return None
    w_new = Z.T @ (y * new)
    now = _primal_value(Z @ v + lam + rho * state[0], y, C_vec, "hinge", float(v @ v))
    if not _primal_value(Z @ w_new + b, y, C_vec, "hinge", float(w_new @ w_new)) <= now:
        return None
    alpha[:] = new
    v[:] = w_new
    state[:] = [float(y @ new), 0.0, float(new.sum()), float(new @ new)]
    face["face_steps"] += 1
    return b


def _multiplier_scale(upper, alpha) -> float:
    """The scale s_a of the multipliers against which the KKT report measures the balance
    |y^T a| / s_a: the largest finite bound, max(1, max a) when every bound is infinite."""
    finite = upper[np.isfinite(upper)]
    return float(finite.max()) if finite.size else max(1.0, float(alpha.max()))


#: With ||v||^2, |s| and ||mu||^2 below this, every term of ||v - s mu||^2 is below 1e300:
#: the sum needs no rescaling (the usual epoch; the rescaled sum costs ~25 us more).
_DIRECT_SQ_NORM_MAX = 1e100


def _shifted_sq_norm(v: np.ndarray, s: float, mu_v: float, mm: float) -> float:
    """||v - s mu||^2 = ||v||^2 - 2 s mu.v + s^2 ||mu||^2 from v, s, mu.v and ||mu||^2,
    computed on the scale c = max(||v||_inf, |s| ||mu||) so that no intermediate
    overflows; the result is inf (a Python float, no floating-point warning) when the
    norm itself exceeds the float range, as on the hard margin when alpha diverges."""
    # BLAS's dot straight: an overflow (inf, which only sends us to the rescaled sum) raises
    # no floating-point warning there, where v @ v needed an np.errstate guard (~2 us of
    # ~3 an epoch)
    vv = float(ddot(v, v))
    if vv < _DIRECT_SQ_NORM_MAX and abs(s) < _DIRECT_SQ_NORM_MAX and mm < _DIRECT_SQ_NORM_MAX:
        return vv - 2.0 * s * mu_v + s * s * mm
    c = max(float(np.max(np.abs(v))) if v.size else 0.0, abs(s) * math.sqrt(mm))
    if c == 0.0:
        return 0.0
    if not math.isfinite(c):
        return math.inf
    u, t = v / c, s / c
    scaled = float(u @ u) - 2.0 * t * (mu_v / c) + t * t * mm
    return (c * c) * scaled if scaled != 0.0 else 0.0      # inf * 0 would be nan


def _primal_value(f, y, C, loss, w2) -> float:
    slack = np.maximum(0.0, 1.0 - y * f)
    term = slack if loss == "hinge" else slack * slack
    # C_i = inf (hard margin) costs inf only where the margin is violated
    hit = term > 0
    return 0.5 * w2 + float(np.sum(C[hit] * term[hit]))


def solve_svm(svm: Any, tol: float = 1e-4, max_iter: int = 1000, loss: str = "hinge", seed: Any = 0,
              shrinking: bool = True, rho: float | None = None,
              callback: Callable[..., Any] | None = None,
              warm_start: Any = None, gap_tol: float | None = None,
              face_every: int = 50) -> Solution:
    """Dual coordinate descent for a linear-kernel ``svm`` (soft margin), b unpenalized.

    Parameters
    ----------
    svm : convexlearn.SVM
        Linear kernel, finite C.
    tol : float
        Projected-gradient spread and intercept accuracy at which to stop.
    max_iter : int
        Budget of epochs.
    loss : {"hinge", "squared_hinge"}
        "squared_hinge" solves 1/2 ||w||^2 + C sum_i max(0, 1 - m_i)^2 - another problem
        than the SVM's hinge C-form, so ``svm.kkt`` (which checks the hinge problem) does
        not certify it; ``objective`` is then the squared-hinge primal value.
    seed : int or numpy.random.Generator
        Random order of the coordinates; the same seed gives the same result.
    shrinking : bool
    rho : float, optional
        Augmented-Lagrangian penalty of y^T a = 0 (default: the mean square of a centred
        feature, see :func:`dcd_linear`).
    callback : callable, optional
        ``callback(epoch, alpha, dual_objective)``; returning False stops.
    warm_start : Solution or ndarray, optional
        Starting multipliers (and, from a Solution, the intercept).
    gap_tol : float, optional
        Relative duality gap required as well (default ``tol``, so that "converged" means
        what the KKT report checks; ``math.inf``: LIBLINEAR's rule). See :func:`dcd_linear`.
    face_every : int
        Epochs between face steps (0: none); see :func:`dcd_linear`.

    Returns
    -------
    Solution
        ``w``, ``b`` (the multiplier of y^T a = 0), ``alpha``, ``objective`` = P(w, b),
        ``n_iter`` = epochs; history per epoch as in :func:`dcd_linear` (dual objective,
        violation, balance = |y^T a|, active, time; primal and gap after full passes).
    """
    timer = Timer()
    if not svm.kernel.is_linear or svm.X is None:
        raise NotApplicableError(
            f"method 'dcd' (dual coordinate descent) needs the linear kernel: it keeps "
            f"w = sum_i alpha_i y_i x_i explicitly; this problem is {svm.describe()}. "
            f"Use method='smo' for other kernels")
    if svm.hard_margin:
        raise NotApplicableError(
            "method 'dcd' needs a finite C (the coordinate steps are clipped to [0, C]); "
            "for the hard margin use method='smo' or the exact solver")
    loss = check_choice("loss", loss, LOSSES)
    tol = check_positive("tol", tol)
    gap_tol = tol if gap_tol is None else check_positive("gap_tol", gap_tol, allow_inf=True)
    alpha0, b0 = None, 0.0
    if warm_start is not None:
        alpha0 = warm_start.alpha if isinstance(warm_start, Solution) else warm_start
        b0 = float(warm_start.b) if isinstance(warm_start, Solution) else 0.0
        if alpha0 is None or np.shape(alpha0) != (svm.n_samples,):
            raise ParameterError(f"warm_start must carry alpha of shape ({svm.n_samples},)")
    alpha, w, b, epochs, status, history = dcd_linear(
        svm.X, svm.y, svm.C, loss, svm.intercept, tol, max_iter, seed, shrinking, rho,
        alpha0, callback, b0, gap_tol=None if math.isinf(gap_tol) else gap_tol,
        face_every=face_every if type(face_every) is int and face_every == 0
        else check_count("face_every", face_every))
    primal, dual = _objectives(svm.X, svm.y, svm.C, loss, alpha, w, b)
    xi = np.maximum(0.0, 1.0 - svm.y * (svm.X @ w + b))
    sol = Solution(w=w, b=float(b), alpha=alpha, xi=xi, objective=primal, status=status,
                   method="dcd", n_iter=epochs, history=history, time_s=timer(),
                   provenance={"solver": "convexlearn.dcd", "tol": tol, "seed": seed,
                               "loss": loss, "intercept": "unpenalized (augmented Lagrangian)"
                               if svm.intercept else "none",
                               **{k: int(history[k][-1]) for k in _FACE_COUNTS
                                  if len(history) and k in history}},
                   dual_coef=svm.y * alpha)
    sol.extra.update(loss=loss, dual_objective=dual, balance=float(svm.y @ alpha))
    return sol
