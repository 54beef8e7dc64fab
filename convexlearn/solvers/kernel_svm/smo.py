"""Sequential minimal optimization (SMO) for the SVM dual, as in LIBSVM.

The dual (docs/conventions.md) written as a minimization::

    min_a  F(a) = 1/2 a^T Q a - e^T a,   Q_ij = y_i y_j k(x_i, x_j)
    s.t.   0 <= a_i <= C   (a_i >= 0 only, hard margin),   y^T a = 0   (with intercept)

The method keeps ``v_t = -y_t grad_t F(a) = y_t - g_t`` with ``g_t = sum_j a_j y_j k(x_j, x_t)``
(so the decision value is f_t = g_t + b), and the index sets

    I_up  = {t : a_t < C, y_t = +1  or  a_t > 0, y_t = -1}   (a_t can move by +y_t)
    I_low = {t : a_t < C, y_t = -1  or  a_t > 0, y_t = +1}   (a_t can move by -y_t)

a is optimal iff m(a) = max_{I_up} v_t <= M(a) = min_{I_low} v_t; the method stops when the
maximal KKT violation m(a) - M(a) <= tol (LIBSVM's ``-e``) and, when ``gap_tol`` is given,
the relative duality gap |P - D| / max(|P|, |D|) <= gap_tol. The violation bounds how far
margins are from 1, not the gap: P - D contains C sum_i xi_i, so at large C a violation
of 1e-6 leaves a gap of ~C n_SV 1e-6. Where the gap is too large the violation target is
cut tenfold and the iterations go on (the gap is what the KKT report checks). Each iteration moves a pair
(i, j) along a_i += y_i t, a_j -= y_j t (which keeps y^T a), with

* i = argmax_{I_up} v_t, and j chosen by second-order working-set selection (Fan, Chen and
  Lin 2005, "WSS 2"): among t in I_low with b_t = v_i - v_t > 0, the largest guaranteed
  decrease b_t^2 / a_t, a_t = K_ii + K_tt - 2 K_it (floored at tau > 0);
* the step t = min(b_j / a_j, room of a_i, room of a_j) (rooms are infinite in the hard
  margin), which decreases F by t b_j - t^2 a_j / 2.

Without intercept there is no equality constraint: i has the largest exact decrease of F
along its coordinate, j the largest Newton decrease on the pair, and the pair's box QP is
solved exactly (:mod:`~convexlearn.solvers.kernel_svm.smo_box_kernels`), stopping when
the largest projected-gradient magnitude is <= tol.

Hard margin on non-separable data: the dual is unbounded and alpha grows without limit.
The test for it is scale-invariant. For separable data every iterate from a = 0
(D(a) >= D(0) = 0) satisfies ``sum_i a_i <= <w_a, w*> <= ||w_a|| ||w*||`` (as
``y_i f*(x_i) >= 1`` and ``y^T a = 0``) and ``||w_a||^2 <= 2 sum_i a_i``, hence
``a_i <= sum_i a_i <= 2 ||w*||^2 = 2 / rho^2`` (rho: the geometric margin). With
``s^2`` the squared spread of the data in feature space (with intercept, the running
maximum of the pair distances ``K_ii + K_tt - 2 K_it`` seen in working-set selection,
which are translation invariant; without, ``max_i K_ii``), ``a_i s^2 <= 2 (s / rho)^2``.
So ``a_i s^2 > 1e12`` means a margin below ~1.4e-6 of the data's extent: SMO stops with
status "diverged", and :func:`solve_svm` then *decides* separability with
:class:`~convexlearn.halfspace.Halfspace` before calling the problem infeasible. The
curvature floor tau is relative too (``1e-12 max_i K_ii``), so tiny data take the same
steps as rescaled data.

Shrinking (LIBSVM): every min(n, 1000) iterations, bounded variables that cannot be part
of a violating pair at the current (m, M) are removed from the active set; the gradient of
the removed ones is rebuilt, and optimality checked on all variables, before stopping.
Kernel columns come from :class:`~convexlearn.gram.KernelColumns`, an LRU
cache bounded by ``cache_size`` megabytes.

The same iteration solves every dual QP of :mod:`~convexlearn.solvers.kernel_svm.qp` with
lower bounds 0 and one equality row s^T a = Delta, or none (:func:`smo_qp`): ``y`` are the
signs s, ``C`` the upper bounds u (per variable), and the linear term p enters as
``target = -s * p`` in place of y, v = target - g (the C-SVC above has p = -1: target = y).

Two implementations of the same iteration: :func:`smo`, in numpy (the reference, and the
path for a per-iteration ``callback``), and :func:`smo_compiled`, compiled by numba
(``smo_compact_kernels``; ``smo_kernels`` with an index map; ``smo_box_kernels`` without
intercept: entries from X, a column cache, ``gbar``). Tests hold them to the same iterates.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn

import math
from dataclasses import dataclass

import numpy as np

from ...certify.kkt import dual_qp_objectives, relative_gap
from ...data import check_positive
from ...errors import ConvexLearnError, DataError, InfeasibleError, ParameterError, SolverError
from ...solution import History, Solution, Timer
from ...gram import KernelColumns, KernelSpec
from .cache_pool import reuse_buffer
from .c_svc import c_svc_qp, c_svc_solution
from .polish import intercept_from_alpha
from .qp import DualQP, curvature_floor

__all__ = ["solve_svm", "smo", "smo_compiled", "smo_qp", "SMOResult", "rebuild_v"]

_BLOCK = 256           # columns per block when rebuilding the gradient
_DIVERGENCE = 1e12     # hard margin: alpha_i s^2 beyond this = diverging (module docstring)


@dataclass
class SMOResult:
    """Raw output of :func:`smo`.

    ``v = y - g`` with g_t = sum_j alpha_j y_j k(x_j, x_t) (so f = g + b); ``violation`` is
    the last maximal KKT violation; ``n_shrink`` counts the shrinking steps. ``status`` is
    "converged", "inaccurate" (the duality gap ``gap_tol`` not met even at a violation
    target of 1e-15 times the scale of v), "max_iter", "stopped" (callback) or "diverged"
    (hard margin, alpha growing without bound: see the module docstring; ``diverged_at``
    is the variable).
    ``gap_checks`` lists (iteration, violation target, relative gap) of each stop the
    duality gap refused (``gap_tol``).
    """

    alpha: np.ndarray
    v: np.ndarray
    n_iter: int
    status: str
    history: History
    violation: float
    n_shrink: int
    diverged_at: int | None = None
    gap_checks: list = None
    cache: dict | None = None
    columns: Any = None        # the compiled loop's column cache (ColumnArrays), kept after it


def rebuild_v(cols: KernelColumns, y: np.ndarray, alpha: np.ndarray,
               idx: np.ndarray, target: np.ndarray) -> np.ndarray:
    """v_t = target_t - sum_j a_j y_j K_jt for t in idx, from the columns of the support."""
    v = target[idx].astype(float, copy=True)
    sv = np.flatnonzero(alpha)
    for start in range(0, sv.size, _BLOCK):
        chunk = sv[start:start + _BLOCK]
        v -= (alpha[chunk] * y[chunk]) @ cols.columns(chunk)[:, idx]
    return v


def smo(cols: KernelColumns, y: np.ndarray, C: Any, intercept: bool = True, tol: float = 1e-3,
        max_iter: int | None = None, shrinking: bool = True, alpha0: np.ndarray | None = None,
        callback: Callable[..., Any] | None = None, gap_tol: float | None = None,
        target: np.ndarray | None = None) -> SMOResult:
    """Run SMO on the dual of the SVM with kernel columns ``cols`` (see the module docstring).

    Parameters
    ----------
    cols : KernelColumns
    y : ndarray of {-1, +1}
        The signs s of the dual QP (:mod:`~convexlearn.solvers.kernel_svm.qp`).
    C : float or ndarray
        Upper bounds u (scalar or per variable; ``inf`` for the hard margin).
    intercept : bool
        False: no equality constraint, single-variable updates.
    tol : float
        Stop when the maximal KKT violation (m - M, or max |projected gradient|) <= tol.
    max_iter : int, optional
        Default max(100 000, 100 n).
    shrinking : bool
    alpha0 : ndarray, optional
        Feasible starting point (warm start).
    callback : callable, optional
        ``callback(t, alpha, dual_objective)`` each iteration (``alpha`` is live: copy it
        to keep it); returning False stops.
    gap_tol : float, optional
        Also require the relative duality gap ``|P - D| / max(|P|, |D|) <= gap_tol`` (P at
        the intercept of :func:`~convexlearn.solvers.kernel_svm.polish.intercept_from_alpha`); while
        it fails, the violation target is cut tenfold, down to 1e-15 times the scale of v;
        a gap still too large there ends with status "inaccurate".
    target : ndarray, optional
        -s * p for the linear term p of the QP (default y: the C-SVC's p = -1); then
        v = target - g.

    Returns
    -------
    SMOResult
        Status "diverged" when the hard-margin dual looks unbounded (the caller decides
        whether the data are really not separable). History columns: ``objective``
        (the dual objective D(a) = e^T a - 1/2 a^T Q a),
        ``violation`` (on the active set), ``time``.
    """
    from .smo_box_kernels import box_step
    from .smo_kernels import clip_pair as compiled_clip
    clip_pair = compiled_clip.py_func      # the compiled loop's step, in Python
    timer = Timer()
    n = y.shape[0]
    max_iter = max(100_000, 100 * n) if max_iter is None else int(max_iter)
    alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=float)
    target = y.astype(float) if target is None else np.asarray(target, dtype=float)
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    v = (rebuild_v(cols, y, alpha, np.arange(n), target) if alpha.any()
         else target.copy())
    dual = 0.5 * float(alpha @ (y * target + y * v))   # -F(a), with g = target - v
    history = History()
    hard = bool(np.all(np.isinf(C)))
    # Scale of the kernel: the curvature floor and the divergence test are relative to it.
    k_max = float(np.max(cols.diagonal)) if n else 0.0
    tau = curvature_floor(k_max)
    spread = 0.0 if intercept else k_max     # s^2 of the module docstring
    diverged_at = None

    active = np.arange(n)
    full = True
    yA, vA, dA = y.copy(), v.copy(), cols.diagonal.copy()
    shrink_every = min(n, 1000)
    counter = shrink_every
    unshrunk_once = False
    status, it, violation, n_shrink = "max_iter", 0, math.inf, 0
    floor = 1e-15 * max(1.0, float(np.max(np.abs(v)))) if n else 0.0
    gap_checks = []       # (iteration, violation target, relative gap) where the gap failed

    def masks():
        aA = alpha[active]
        at_upper = aA >= C[active]
        at_lower = aA <= 0.0
        up = np.where(yA > 0, ~at_upper, ~at_lower)
        low = np.where(yA > 0, ~at_lower, ~at_upper)
        return up, low

    def unshrink():
        nonlocal active, full, yA, vA, dA
        v[active] = vA
        inactive = np.setdiff1d(np.arange(n), active, assume_unique=True)
        if inactive.size:
            v[inactive] = rebuild_v(cols, y, alpha, inactive, target)
        active, full = np.arange(n), True
        yA, vA, dA = y.copy(), v.copy(), cols.diagonal.copy()

    up, low = masks()
    scratch = np.empty(n)
    while it < max_iter:
        # ---------------------------------------------------------------- selection
        if intercept:
            i_loc = int(np.argmax(np.where(up, vA, -np.inf)))
            m_val = vA[i_loc] if up[i_loc] else -math.inf
            M_val = float(np.min(np.where(low, vA, np.inf)))
            violation = m_val - M_val
        else:
            # gradient of F is -y v; projected gradient vanishes at a bound pointing out.
            grad = -yA * vA
            aA = alpha[active] if not full else alpha
            pg = np.where((aA <= 0.0) & (grad > 0), 0.0, grad)
            CA = C if full else C[active]
            pg = np.where((aA >= CA) & (pg < 0), 0.0, pg)
            violation = float(np.max(np.abs(pg))) if pg.size else 0.0

        if violation <= tol:
            if not full:                       # optimal on the active set: check them all
                unshrink()
                up, low = masks()
                continue
            status = "converged"
            if gap_tol is not None:
                gap = _relative_gap(y, C, alpha, vA, intercept, target)
                if gap > gap_tol:              # margins still too far from 1 for this C
                    gap_checks.append((it, float(tol), float(gap)))
                    if tol > floor:
                        tol = max(min(tol, float(violation)) / 10.0, floor)
                        continue
                    status = "inaccurate"      # the gap cannot be met in floating point
            break

        if shrinking:
            counter -= 1
            if counter <= 0:
                counter = shrink_every
                if not unshrunk_once and violation <= 10 * tol:
                    unshrunk_once = True       # LIBSVM: one full re-check near the end
                    unshrink()
                    up, low = masks()
                    continue
                if intercept:
                    drop = (up & ~low & (vA < M_val)) | (low & ~up & (vA > m_val))
                else:
                    drop = ((aA <= 0.0) & (grad > violation)) | ((aA >= CA) & (grad < -violation))
                if drop.any() and not drop.all():
                    keep = ~drop
                    v[active] = vA
                    active = active[keep]
                    full = False
                    yA, vA, dA = y[active], vA[keep], cols.diagonal[active]
                    up, low = up[keep], low[keep]
                    n_shrink += 1
                    continue

        it += 1
        # ---------------------------------------------------------------------- step
        if intercept:
            i = int(active[i_loc])
            Ki = cols.column(i)
            KiA = Ki if full else Ki[active]
            if scratch.size != vA.size:
                scratch = np.empty(vA.size)
            # second-order selection of j: maximal b^2 / a over I_low with b > 0
            curv = np.subtract(dA, KiA, out=scratch)
            curv -= KiA
            curv += dA[i_loc]
            if hard:
                spread = max(spread, float(curv.max()))
            np.maximum(curv, tau, out=curv)
            gain = m_val - vA
            cand = low & (gain > 0)
            score = np.where(cand, gain * gain / curv, -np.inf)
            j_loc = int(np.argmax(score))
            j = int(active[j_loc])
            Kj = cols.column(j)
            KjA = Kj if full else Kj[active]
            a_ij = curv[j_loc]
            b_ij = m_val - vA[j_loc]
            t = clip_pair(i, j, b_ij / a_ij, y, C, alpha)   # (snapped onto a limiting bound)
            vA += t * (KjA - KiA)
            dual += t * b_ij - 0.5 * t * t * a_ij
            for loc, glob in ((i_loc, i), (j_loc, j)):
                a = alpha[glob]
                up[loc] = (a < C[glob]) if yA[loc] > 0 else (a > 0.0)
                low[loc] = (a > 0.0) if yA[loc] > 0 else (a < C[glob])
        else:       # a pair without the row (smo_box_kernels.box_step)
            i, gain = box_step(cols, y, C, alpha, active, full, vA, dA, tau)
            dual += gain

        # (spread 0: every point coincides in feature space; fall back to its norm)
        if hard and alpha[i] * (spread or k_max or 1.0) > _DIVERGENCE:
            status, diverged_at = "diverged", i
            history.record(objective=dual, violation=violation, time=timer())
            break
        history.record(objective=dual, violation=violation, time=timer())
        if callback is not None and callback(it, alpha, dual) is False:
            status = "stopped"
            break

    if not full:
        unshrink()
    else:
        v[:] = vA
    return SMOResult(alpha, v, it, status, history, violation, n_shrink, diverged_at, gap_checks)


def smo_compiled(spec: KernelSpec, y: np.ndarray, C: Any, tol: float = 1e-3,
                 max_iter: int | None = None, shrinking: bool = True,
                 alpha0: np.ndarray | None = None, gap_tol: float | None = None,
                 cache_mb: float = 200.0, record: bool = True,
                 target: np.ndarray | None = None, g0: np.ndarray | None = None,
                 index: np.ndarray | None = None, intercept: bool = True) -> SMOResult:
    """:func:`smo` in a compiled loop: :mod:`~convexlearn.solvers.kernel_svm.smo_kernels`
    with the intercept, :mod:`~convexlearn.solvers.kernel_svm.smo_box_kernels` without
    (same iterates; kernel entries from X, column cache bounded by ``cache_mb`` MB).

    ``C`` may be a vector of per-sample bounds C_i; ``target`` = -s * p carries the linear
    term of the QP (default y, the C-SVC's p = -1). History: ``objective`` and
    ``violation`` per iteration, ``time`` at the last of each pass of the loop (NaN
    elsewhere); ``record=False`` leaves it empty (saves a Python loop over iterations).
    ``g0`` = K (y * alpha0), when the caller has it (a certificate's product): the start's
    gradient costs the columns of the free or the bounded multipliers, the fewer (gbar).
    ``index``: the sample of each variable, ``spec`` then the samples' kernel (SVR_Q).
    """
    from .smo_kernels import CONVERGED, DIVERGED, smo_loop
    if not intercept:                                   # (loaded only where needed)
        from .smo_box_kernels import smo_box_loop as smo_loop
    elif index is None:
        # the same iterates on a contiguous active set (LIBSVM's layout under shrinking)
        from .smo_compact_kernels import compact_loop

        def smo_loop(*args):
            return compact_loop(*args[:-1])
    timer = Timer()
    n = y.shape[0]
    max_iter = max(100_000, 100 * n) if max_iter is None else int(max_iter)
    Cv = np.array(np.broadcast_to(np.asarray(C, dtype=float), (n,)))   # (writeable: one signature)
    hard = bool(np.all(np.isinf(Cv)))
    alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=float)
    target = np.ascontiguousarray(y if target is None else target, dtype=float)
    cache = reuse_buffer(spec.column_arrays(cache_mb))     # (cache_pool: no fresh pages)
    index, diag, products = spec.on_variables(index)
    # the gradient of the start: from the support's columns (none from alpha = 0)
    v, gbar = target.copy(), np.zeros(n)
    if alpha.any() and g0 is not None:
        v -= g0
        free, upper = (alpha > 0.0) & (alpha < Cv), alpha >= Cv     # (the fewer columns)
        gbar = (products(np.where(upper, y * Cv, 0.0)) if upper.sum() < free.sum() else
                np.asarray(g0, dtype=float) - products(np.where(free, y * alpha, 0.0)))
    elif alpha.any():
        # g and gbar in one pass over the support (the bounded columns are part of it)
        at_upper = alpha >= Cv
        both = products(np.column_stack([y * alpha, np.where(at_upper, y * Cv, 0.0)]))
        v -= both[:, 0]
        gbar = np.ascontiguousarray(both[:, 1])
    dual = 0.5 * float(alpha @ (y * target + y * v))     # -F(a), with g = target - v
    k_max = float(np.max(diag)) if n else 0.0
    tau = curvature_floor(k_max)
    floor = 1e-15 * max(1.0, float(np.max(np.abs(v)))) if n else 0.0
    hist_obj, hist_viol = np.empty(max_iter), np.empty(max_iter)
    it, unshrunk_once, n_shrink, gap_checks = 0, False, 0, []
    spread = 0.0 if intercept else k_max       # s^2 of the module docstring
    time_at = {}
    while True:
        (code, it, violation, dual, spread, shrunk, unshrunk_once, div_at) = smo_loop(
            spec.code, spec.X, spec.K, spec.gamma, spec.coef0, spec.degree, diag, y,
            target, Cv, alpha, v, gbar, float(tol), it, max_iter, bool(shrinking), tau, hard,
            _DIVERGENCE, spread, dual, unshrunk_once, *cache.arrays(), hist_obj, hist_viol,
            index)
        n_shrink += shrunk
        time_at[it] = timer()
        status = {CONVERGED: "converged", DIVERGED: "diverged"}.get(code, "max_iter")
        if status != "converged" or gap_tol is None:
            break
        gap = _relative_gap(y, Cv, alpha, v, intercept, target)
        if gap <= gap_tol:
            break
        gap_checks.append((it, float(tol), float(gap)))
        if tol <= floor:
            status = "inaccurate"          # the gap cannot be met in floating point
            break
        tol = max(min(tol, float(violation)) / 10.0, floor)
    history = History()
    for t in range(it if record else 0):
        history.record(objective=float(hist_obj[t]), violation=float(hist_viol[t]),
                       time=time_at.get(t + 1, math.nan))
    res = SMOResult(alpha, v, it, status, history, float(violation), n_shrink,
                    None if div_at < 0 else int(div_at), gap_checks)
    res.cache, res.columns = cache.stats(), cache
    return res


def _primal_at(y, C, alpha, v, intercept, target=None):
    """The point implied by alpha, with v = target - g (all samples): b (from
    :func:`~convexlearn.solvers.kernel_svm.polish.intercept_from_alpha`), its rule, g, and
    the objectives P and D = -F(a) (:func:`~convexlearn.certify.kkt.dual_qp_objectives`;
    for the C-SVC, P(w, b) and D(a))."""
    target = y if target is None else target
    g = target - v
    b, rule = (intercept_from_alpha(y, C, alpha, g, target=target) if intercept
               else (0.0, "no intercept"))
    primal, dual = dual_qp_objectives(y, target, C, alpha, g, b)
    return b, rule, g, primal, dual


def _relative_gap(y, C, alpha, v, intercept, target=None) -> float:
    """The relative duality gap (:func:`~convexlearn.certify.kkt.relative_gap`) at alpha,
    with v = target - g (all samples) and b from alpha."""
    *_, primal, dual = _primal_at(y, C, alpha, v, intercept, target)
    return relative_gap(primal, dual)


def smo_qp(qp: DualQP, *, tol: float = 1e-3, max_iter: int | None = None,
           shrinking: bool = True, alpha0: np.ndarray | None = None,
           gap_tol: float | None = None, cache_size: float = 200.0,
           callback: Callable[..., Any] | None = None,
           record: bool = True, g0: np.ndarray | None = None) -> tuple[SMOResult, dict, str]:
    """SMO on a dual QP (:mod:`~convexlearn.solvers.kernel_svm.qp`): a compiled loop (with
    or without the equality row), the numpy reference with a ``callback``. ``g0`` =
    K (s * alpha0) when the caller knows it (read by the compiled loop only).

    Returns
    -------
    (SMOResult, cache statistics, the loop's name)

    Raises
    ------
    NotApplicableError
        A QP outside SMO's form (:meth:`DualQP.check_smo_form`).
    ParameterError
        Delta != 0 without a feasible start ``alpha0`` (a = 0 is feasible only for 0).
    """
    qp.check_smo_form()
    if alpha0 is None and qp.delta != 0.0:
        raise ParameterError(f"{qp.name}: s^T a = {qp.delta:g} needs a feasible alpha0")
    if callback is None:
        spec, index = qp.sample_spec()
        res = smo_compiled(spec, qp.signs, qp.upper, tol, max_iter, shrinking,
                           alpha0, gap_tol, cache_size, record, target=qp.target,
                           g0=None if alpha0 is None else g0, index=index,
                           intercept=qp.has_equality)
        return res, res.cache, "compiled (numba)"
    cols = qp.gram.columns(cache_size)
    res = smo(cols, qp.signs, qp.upper, qp.has_equality, tol, max_iter, shrinking, alpha0,
              callback, gap_tol=gap_tol, target=qp.target)
    return res, cols.stats(), "numpy reference"


def _warm_alpha(warm_start, svm) -> np.ndarray | None:
    if warm_start is None:
        return None
    alpha = warm_start.alpha if isinstance(warm_start, Solution) else warm_start
    if alpha is None:
        raise ParameterError("warm_start: the solution has no multipliers alpha to start SMO from")
    alpha = np.asarray(alpha, dtype=float)
    if alpha.shape != (svm.n_samples,):
        raise ParameterError(f"warm_start: alpha must have shape ({svm.n_samples},); "
                             f"got {alpha.shape}")
    alpha = np.clip(alpha, 0.0, svm.C_bounds)
    scale = max(1.0, float(alpha.max())) if svm.hard_margin else float(np.max(svm.C_bounds))
    if svm.intercept and abs(float(alpha @ svm.y)) > 1e-8 * scale * svm.n_samples:
        raise ParameterError(f"warm_start: alpha violates y^T alpha = 0 "
                             f"(y^T alpha = {float(alpha @ svm.y):.3g}); SMO keeps the "
                             f"equality, so it must start feasible")
    return alpha


def raise_diverged(svm: Any, res: SMOResult) -> NoReturn:
    """SMO's hard-margin dual diverged: decide separability, then raise the right error.

    Linear kernel: :class:`~convexlearn.halfspace.Halfspace` on X. Other kernels: on the
    Gram matrix, since ``f(x_i) = sum_j beta_j K_ji + b`` is linear in beta, so the data
    are separable in feature space iff ``Halfspace(K, y)`` is separable.

    Raises
    ------
    InfeasibleError
        Not separable (the hard-margin SVM has no solution).
    SolverError
        Separable after all (SMO failed numerically), or separability undecided.
    """
    i = res.diverged_at
    what = (f"SMO: alpha_{i} = {res.alpha[i]:.3g} after {res.n_iter} iterations (the "
            f"hard-margin dual looks unbounded)")
    linear = svm.kernel.is_linear and svm.X is not None
    space = "input space" if linear else "the kernel's feature space (Gram-matrix LP)"
    try:
        check = svm.feature_space_separability()
    except DataError as exc:     # homogeneous with a zero vector: trivially not separable
        raise InfeasibleError(f"{what}: the classes are not separable ({exc}); use a finite C"
                              ) from None
    except ConvexLearnError as exc:
        raise SolverError(f"{what}, and deciding separability failed ({exc}); use a finite C "
                          f"or the exact solver") from None
    if check.separable:
        raise SolverError(
            f"{what}, but the classes ARE linearly separable in {space} (verified: "
            f"{check.verified}): SMO failed numerically; try the exact solver "
            f"(method='exact-dual') or rescale the data")
    if not check.verified:
        raise SolverError(
            f"{what}, and the separability LP says 'not separable' in {space}, but its "
            f"certificate did not verify: not proven either way; use a finite C or the "
            f"exact solver")
    raise InfeasibleError(
        f"{what}: the classes are not linearly separable in {space} (verified certificate "
        f"from Halfspace.check); use a finite C, or cl.Halfspace(X, y).check() for the "
        f"certificate")


def solve_svm(svm: Any, tol: float = 1e-3, max_iter: int | None = None, shrinking: bool = True,
              cache_size: float = 200.0, callback: Callable[..., Any] | None = None,
              warm_start: Any = None,
              gap_tol: float | None = None) -> Solution:
    """SMO on ``svm`` (any kernel, hard or soft margin, with or without intercept).

    Parameters
    ----------
    svm : convexlearn.SVM
    tol : float
        Maximal KKT violation m(a) - M(a) at which to stop (LIBSVM's ``-e``, default 1e-3).
    max_iter : int, optional
        Iteration budget (default max(100 000, 100 n)); status "max_iter" when reached.
    shrinking : bool
    cache_size : float
        Kernel column cache, in MB.
    callback : callable, optional
        ``callback(t, alpha, dual_objective)``; returning False stops (status "stopped").
        Runs the numpy loop :func:`smo`, else a compiled one (``provenance["loop"]``).
    warm_start : Solution or ndarray, optional
        Starting multipliers (feasible).
    gap_tol : float, optional
        Relative duality gap required as well before stopping (default: ``tol``, so that
        "converged" means what the KKT report checks; ``math.inf``: the violation alone,
        as LIBSVM stops). See :func:`smo`.

    Returns
    -------
    Solution
        ``alpha``, ``b`` (mean of y_i - g_i over free support vectors, else the midpoint
        of the interval the KKT conditions allow), ``dual_coef = y * alpha``, ``w`` for the
        linear kernel, ``objective`` = the primal objective P(w, b) of the returned point,
        ``n_iter``, and ``extra`` with the final violation, shrink count and cache stats.
    """
    tol = check_positive("tol", tol)
    gap_tol = tol if gap_tol is None else check_positive("gap_tol", gap_tol, allow_inf=True)
    timer = Timer()
    alpha0 = _warm_alpha(warm_start, svm)
    gap = None if math.isinf(gap_tol) else gap_tol
    qp = c_svc_qp(svm)
    res, cache_stats, loop = smo_qp(qp, tol=tol, max_iter=max_iter, shrinking=shrinking,
                                    alpha0=alpha0, gap_tol=gap, cache_size=cache_size,
                                    callback=callback)
    if res.status == "diverged":
        raise_diverged(svm, res)
    if res.status == "max_iter" and svm.hard_margin:
        # alpha can grow linearly, below the divergence test, for the whole budget (found
        # in review: 4 points of XOR, alpha = 2e5 after 100 000 iterations). Ask the LP.
        try:
            verdict = svm.feature_space_separability()
        except ConvexLearnError:
            verdict = None
        if verdict is not None and verdict.verified and not verdict.separable:
            linear = svm.kernel.is_linear and svm.X is not None
            raise InfeasibleError(
                f"SMO reached max_iter={res.n_iter} on the hard margin with alpha up to "
                f"{float(res.alpha.max()):.3g}: the classes are not linearly separable in "
                f"{'input space' if linear else 'the kernel feature space'} (verified "
                f"certificate from Halfspace.check); use a finite C")
    b, rule, g, primal, _ = _primal_at(qp.signs, qp.upper, res.alpha, res.v,
                                             svm.intercept)
    sol = c_svc_solution(svm, res.alpha, g, b)
    sol.extra["intercept_rule"] = rule
    sol.objective, sol.status, sol.method = primal, res.status, "smo"
    sol.n_iter, sol.history, sol.time_s = res.n_iter, res.history, timer()
    sol.provenance = {"solver": "convexlearn.smo", "tol": tol, "gap_tol": gap_tol,
                      "working_set": "second order (WSS2)", "shrinking": shrinking,
                      "loop": loop}
    sol.extra.update(violation=res.violation, n_shrink=res.n_shrink,
                     cache=cache_stats, gap_checks=res.gap_checks)
    return sol
