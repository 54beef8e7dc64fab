"""SMO for the nu-problems: the dual QP with one equality row per sign (LIBSVM's Solver_NU).

The QP of :mod:`~convexlearn.solvers.kernel_svm.qp` with the rows

    sum_{s_t = +1} a_t = Delta_+,    sum_{s_t = -1} a_t = Delta_-,    0 <= a <= u

(nu-SVC: s = y, p = 0, u = 1, Delta_+- = nu n / 2; nu-SVR: a = (a+, a-), s = (+1, -1),
p = (-z, z), u = C, Delta_+- = C nu n / 2). A working pair has two variables of the same
sign, so that a_i += s_i t, a_j -= s_j t keeps both sums. With v = target - g (target =
-s * p, g = K (s * a)) a feasible a is optimal iff for each sign c

    m_c = max {v_t : t in I_up, s_t = c}  <=  M_c = min {v_t : t in I_low, s_t = c}

(the sets I_up, I_low of :mod:`~convexlearn.solvers.kernel_svm.smo`); SMO stops when the
maximal violation max(m_+ - M_+, m_- - M_-) <= ``tol`` and, with ``gap_tol``, the relative
duality gap of the QP at the two multipliers (:func:`nu_relative_gap`) is at most
``gap_tol`` (the violation target is cut tenfold while it is not, as in
:func:`~convexlearn.solvers.kernel_svm.smo.smo`).

Working set (Fan, Chen and Lin 2005, as LIBSVM's ``Solver_NU::select_working_set``): for
each sign the i_c maximizing v over I_up; j maximizes the second-order gain b^2 / a over I_low
(both signs), b = m_{s_j} - v_j > 0, a = K_{i i} + K_{j j} - 2 K_{i j} (floored at tau)
with i = i_{s_j}, which is then the pair's i. Shrinking: a bounded variable that cannot be
in a violating pair of its own sign leaves the active set (I_up only and v_t < M_{s_t}, or
I_low only and v_t > m_{s_t}); one full re-check near the end, and on all variables before
stopping.

The multipliers of the two rows are read as intercepts per sign: free variables of sign c
satisfy g_t + b_c = target_t (LIBSVM's calculate_rho: r1 = -b_+, r2 = b_-), so that
rho = -(b_+ + b_-) / 2 and r = (b_- - b_+) / 2.

:func:`smo_nu` is the numpy reference (and the loop with a ``callback``); the compiled loop
(:mod:`~convexlearn.solvers.kernel_svm.smo_nu_kernels`) takes the same iterates.
"""

from __future__ import annotations

from typing import Any, Callable

import math

import numpy as np

from ...certify.kkt import dual_qp_objectives, relative_gap
from ...errors import ParameterError
from ...gram import KernelColumns, KernelSpec
from ...solution import History, Timer
from .polish import intercepts_by_sign
from .qp import DualQP, curvature_floor
from .smo import SMOResult, rebuild_v, smo_qp

__all__ = ["smo_nu", "smo_nu_compiled", "smo_nu_qp", "smo_any_qp", "nu_relative_gap",
           "sample_spec"]



def nu_relative_gap(y: np.ndarray, C: Any, alpha: np.ndarray, v: np.ndarray,
                    target: np.ndarray, deltas: tuple[float, float]) -> float:
    """The relative duality gap |P - D| / max(|P|, |D|) of the two-row QP at alpha, with
    v = target - g and the intercepts per sign of
    :func:`~convexlearn.solvers.kernel_svm.polish.intercepts_by_sign`."""
    g = target - v
    b, _ = intercepts_by_sign(y, C, alpha, g, target)
    return relative_gap(*dual_qp_objectives(y, target, C, alpha, g, b, deltas))


def _start(y, C, alpha0, deltas, n):
    alpha = np.array(alpha0, dtype=float)
    if alpha.shape != (n,):
        raise ParameterError(f"alpha0 must have shape ({n},); got {alpha.shape}")
    return alpha, np.broadcast_to(np.asarray(C, dtype=float), (n,))


def smo_nu(cols: KernelColumns, y: np.ndarray, C: Any, alpha0: np.ndarray,
           target: np.ndarray, tol: float = 1e-3, max_iter: int | None = None,
           shrinking: bool = True, callback: Callable[..., Any] | None = None,
           gap_tol: float | None = None, deltas: tuple[float, float] | None = None
           ) -> SMOResult:
    """Solver_NU in numpy from the feasible ``alpha0`` (module docstring).

    Parameters
    ----------
    cols : KernelColumns
    y : ndarray of {-1, +1}
        The signs s.
    C : float or ndarray
        Upper bounds u (finite).
    alpha0 : ndarray
        A feasible start (its sums per sign are the rows' right sides).
    target : ndarray
        -s * p.
    tol : float
        Maximal violation max_c (m_c - M_c) at which to stop (units of v).
    max_iter : int, optional
        Default max(100 000, 100 n).
    shrinking : bool
    callback : callable, optional
        ``callback(t, alpha, dual_objective)``; False stops (status "stopped").
    gap_tol : float, optional
        Also require the relative duality gap <= gap_tol (needs ``deltas``).
    deltas : (float, float), optional
        (Delta_+, Delta_-); default the sums of ``alpha0``.

    Returns
    -------
    SMOResult
        History columns ``objective`` (-F(a)), ``violation``, ``time``.
    """
    from .smo_kernels import clip_pair as compiled_clip
    clip_pair = compiled_clip.py_func
    timer = Timer()
    n = y.shape[0]
    alpha, C = _start(y, C, alpha0, deltas, n)
    deltas = _deltas(y, alpha) if deltas is None else deltas
    max_iter = max(100_000, 100 * n) if max_iter is None else int(max_iter)
    target = np.asarray(target, dtype=float)
    v = target.copy()
    for j in np.flatnonzero(alpha):       # column by column, as the compiled start
        v -= (alpha[j] * y[j]) * cols.column(j)
    dual = 0.5 * float(alpha @ (y * target + y * v))
    k_max = float(np.max(cols.diagonal)) if n else 0.0
    tau = curvature_floor(k_max)
    floor = 1e-15 * max(1.0, float(np.max(np.abs(v)))) if n else 0.0
    history, gap_checks = History(), []
    active = np.arange(n)
    shrink_every = min(n, 1000)
    counter, unshrunk_once = shrink_every, False
    status, it, violation, n_shrink = "max_iter", 0, math.inf, 0

    def sync():
        """v on the whole set (rebuilt on the shrunk variables), all active again."""
        nonlocal active
        rest = np.setdiff1d(np.arange(n), active, assume_unique=True)
        if rest.size:
            v[rest] = rebuild_v(cols, y, alpha, rest, target)
        active = np.arange(n)

    while it < max_iter:
        yA, vA, aA, CA = y[active], v[active], alpha[active], C[active]
        up = np.where(yA > 0, aA < CA, aA > 0.0)
        low = np.where(yA > 0, aA > 0.0, aA < CA)
        pos = yA > 0
        ends = {}
        for c, mask in ((1, pos), (-1, ~pos)):
            cand_up = np.where(up & mask, vA, -np.inf)
            i_loc = int(np.argmax(cand_up))
            ends[c] = (i_loc if cand_up[i_loc] > -np.inf else -1, float(cand_up[i_loc]),
                       float(np.min(np.where(low & mask, vA, np.inf))))
        violation = max(ends[1][1] - ends[1][2], ends[-1][1] - ends[-1][2])
        full = active.size == n
        if violation <= tol:
            if not full:
                sync()
                continue
            status = "converged"
            if gap_tol is not None:
                gap = nu_relative_gap(y, C, alpha, v, target, deltas)
                if gap > gap_tol:
                    gap_checks.append((it, float(tol), float(gap)))
                    if tol > floor:
                        tol = max(min(tol, violation) / 10.0, floor)
                        continue
                    status = "inaccurate"
            break
        if shrinking:
            counter -= 1
            if counter <= 0:
                counter = shrink_every
                if not unshrunk_once and violation <= 10 * tol:
                    unshrunk_once = True
                    sync()
                    continue
                hi = np.where(pos, ends[1][1], ends[-1][1])
                lo = np.where(pos, ends[1][2], ends[-1][2])
                drop = (up & ~low & (vA < lo)) | (low & ~up & (vA > hi))
                if drop.any() and not drop.all():
                    active = active[~drop]
                    n_shrink += 1
                    continue
        it += 1
        # second-order selection of j over both signs, each against its own i_c
        dA = cols.diagonal[active]
        score = np.full(active.size, -np.inf)
        curv_all = np.empty(active.size)
        columns = {}
        for c, mask in ((1, pos), (-1, ~pos)):
            i_loc, m_c, _ = ends[c]
            if i_loc < 0:
                continue
            i = int(active[i_loc])
            Ki = cols.column(i)
            columns[c] = Ki
            KiA = Ki[active]
            curv = np.subtract(dA, KiA)
            curv -= KiA
            curv += dA[i_loc]
            np.maximum(curv, tau, out=curv)
            gain = m_c - vA
            ok = mask & low & (gain > 0)
            score = np.where(ok, gain * gain / curv, score)
            curv_all = np.where(mask, curv, curv_all)
        j_loc = int(np.argmax(score))
        if not score[j_loc] > 0:
            status = "converged"       # no decreasing pair (cannot happen above tol)
            break
        j = int(active[j_loc])
        c = 1 if y[j] > 0 else -1
        i_loc, m_c, _ = ends[c]
        i = int(active[i_loc])
        Ki, Kj = columns[c], cols.column(j)
        a_ij = curv_all[j_loc]
        b_ij = m_c - vA[j_loc]
        t = clip_pair(i, j, b_ij / a_ij, y, C, alpha)     # (the compiled loop's step)
        v[active] = vA + t * (Kj[active] - Ki[active])
        dual += t * b_ij - 0.5 * t * t * a_ij
        history.record(objective=dual, violation=violation, time=timer())
        if callback is not None and callback(it, alpha, dual) is False:
            status = "stopped"
            break
    if active.size != n:
        sync()
    return SMOResult(alpha, v, it, status, history, violation, n_shrink, None, gap_checks)


def _deltas(y: np.ndarray, alpha: np.ndarray) -> tuple[float, float]:
    return float(alpha[y > 0].sum()), float(alpha[y < 0].sum())


def smo_nu_compiled(spec: KernelSpec, y: np.ndarray, C: Any, alpha0: np.ndarray,
                    target: np.ndarray, tol: float = 1e-3, max_iter: int | None = None,
                    shrinking: bool = True, gap_tol: float | None = None,
                    deltas: tuple[float, float] | None = None, cache_mb: float = 200.0,
                    record: bool = True, index: np.ndarray | None = None) -> SMOResult:
    """:func:`smo_nu` in the compiled loop of
    :mod:`~convexlearn.solvers.kernel_svm.smo_nu_kernels` (same iterates; column cache
    of the samples bounded by ``cache_mb`` megabytes; no callback). ``spec`` is the
    samples' kernel and ``index`` the sample of each variable (None: variable t is sample
    t). History as :func:`~convexlearn.solvers.kernel_svm.smo.smo_compiled`'s."""
    from .smo_nu_kernels import initial_gradient, smo_nu_loop
    from .smo_kernels import CONVERGED
    timer = Timer()
    n = y.shape[0]
    alpha, Cv = _start(y, C, alpha0, deltas, n)
    Cv = np.ascontiguousarray(Cv)
    deltas = _deltas(y, alpha) if deltas is None else deltas
    max_iter = max(100_000, 100 * n) if max_iter is None else int(max_iter)
    target = np.ascontiguousarray(target, dtype=float)
    y = np.ascontiguousarray(y, dtype=float)
    index = np.arange(n) if index is None else np.ascontiguousarray(index, dtype=np.int64)
    diag = np.ascontiguousarray(spec.diag[index])
    cache = spec.column_arrays(cache_mb)
    v, gbar = np.empty(n), np.empty(n)
    initial_gradient(spec.code, spec.X, spec.K, spec.gamma, spec.coef0, spec.degree, index, y,
                     target, Cv, alpha, v, gbar, *cache.arrays())
    dual = 0.5 * float(alpha @ (y * target + y * v))
    k_max = float(np.max(diag)) if n else 0.0
    tau = curvature_floor(k_max)
    floor = 1e-15 * max(1.0, float(np.max(np.abs(v)))) if n else 0.0
    hist_obj, hist_viol = np.empty(max_iter), np.empty(max_iter)
    it, unshrunk_once, n_shrink, gap_checks, time_at = 0, False, 0, [], {}
    while True:
        code, it, violation, dual, shrunk, unshrunk_once = smo_nu_loop(
            spec.code, spec.X, spec.K, spec.gamma, spec.coef0, spec.degree, diag, index, y,
            target, Cv, alpha, v, gbar, float(tol), it, max_iter, bool(shrinking), tau, dual,
            unshrunk_once, *cache.arrays(), hist_obj, hist_viol)
        n_shrink += shrunk
        time_at[it] = timer()
        status = "converged" if code == CONVERGED else "max_iter"
        if status != "converged" or gap_tol is None:
            break
        gap = nu_relative_gap(y, Cv, alpha, v, target, deltas)
        if gap <= gap_tol:
            break
        gap_checks.append((it, float(tol), float(gap)))
        if tol <= floor:
            status = "inaccurate"
            break
        tol = max(min(tol, float(violation)) / 10.0, floor)
    history = History()
    for t in range(it if record else 0):
        history.record(objective=float(hist_obj[t]), violation=float(hist_viol[t]),
                       time=time_at.get(t + 1, math.nan))
    res = SMOResult(alpha, v, it, status, history, float(violation), n_shrink, None,
                    gap_checks)
    res.cache, res.columns = cache.stats(), cache      # the polish reads the columns
    return res


def smo_nu_qp(qp: DualQP, *, tol: float = 1e-3, max_iter: int | None = None,
              shrinking: bool = True, alpha0: np.ndarray | None = None,
              gap_tol: float | None = None, cache_size: float = 200.0,
              callback: Callable[..., Any] | None = None,
              record: bool = True) -> tuple[SMOResult, dict, str]:
    """Solver_NU on a dual QP with one row per sign (:meth:`DualQP.is_nu_form`): the
    compiled loop, or the numpy reference with a ``callback``. Without ``alpha0`` it
    starts from LIBSVM's feasible point (:meth:`DualQP.nu_start`).

    Returns
    -------
    (SMOResult, cache statistics, the loop's name)
    """
    qp.check_smo_form()
    if not qp.is_nu_form:
        raise ParameterError(f"{qp.name}: smo_nu_qp needs one equality row per sign")
    alpha0 = qp.nu_start() if alpha0 is None else np.asarray(alpha0, dtype=float)
    deltas = qp.deltas
    if callback is None:
        spec, index = sample_spec(qp)
        res = smo_nu_compiled(spec, qp.signs, qp.upper, alpha0, qp.target, tol, max_iter,
                              shrinking, gap_tol, deltas, cache_size, record, index=index)
        return res, res.cache, "compiled (numba)"
    cols = qp.gram.columns(cache_size)
    res = smo_nu(cols, qp.signs, qp.upper, alpha0, qp.target, tol, max_iter, shrinking,
                 callback, gap_tol, deltas)
    return res, cols.stats(), "numpy reference"


def sample_spec(qp: DualQP) -> tuple[KernelSpec, np.ndarray | None]:
    """(the kernel spec of the QP's samples, the sample of each variable): the base of an
    indexed Gram operator (nu-SVR's 2n variables on n samples), else the QP's own."""
    return qp.sample_spec()


def smo_any_qp(qp: DualQP, **options: Any) -> tuple[SMOResult, dict, str]:
    """SMO on a dual QP of either form: Solver_NU (:func:`smo_nu_qp`) for one row per sign,
    LIBSVM's Solver (:func:`~convexlearn.solvers.kernel_svm.smo.smo_qp`) otherwise."""
    if qp.is_nu_form:
        return smo_nu_qp(qp, **options)
    return smo_qp(qp, **options)
