"""The exact C-path's ordinary breakpoints, many in one compiled call (:mod:`.svm_path`).

An *ordinary* breakpoint is one the Python loop would run as: its segment comes from the
last breakpoint's scan (the maintained direction d passed its check and no sample sat on
a boundary), its event is one join or one leave that needs neither larger buffers, nor a
fresh sum of qL = Q_L 1, nor a fresh inverse, and what follows is quiet
(:func:`.svm_path_run.quiet_tail`: no refinement step, no snap); its margins are
predicted, or summed afresh where that is due (every ``fresh_every`` breakpoints and once
lambda has halved since the last sum, as :meth:`.svm_path._PathState.advance` decides).
:func:`quiet_run` runs such breakpoints one after the other, each exactly as the Python
loop does (the same compiled steps in the same order:
:func:`.svm_path_run.quiet_head`, the bound's ``moved`` and ``update_qL``,
:func:`.svm_path_run.join_elbow` / :func:`.svm_path_run.leave_elbow`, the inverse's
change count, :func:`.svm_path_run.quiet_tail`), writes each one's record row
(alpha = a / lambda, C = 1 / lambda, b = a_0 / lambda, the bounded KKT figures, the event)
and returns a code when the next one is not ordinary:

* :data:`BOUNDARY`: before a breakpoint, nothing of it done (the Python loop runs it);
* :data:`AFTER_EVENT`: its step and event applied, the change of the elbow not yet
  counted (a fresh inverse is due, or none, or the elbow is empty);
* :data:`AFTER_CHANGE`: the change counted, the rest not done but a due fresh sum of g
  (a refinement step or a snap is due);
* :data:`INCONSISTENT`: done, and its KKT check failed (the Python loop re-anchors).

The Python side (:func:`run_quiet`) moves the state in and out; tests run the path with
and without it and compare bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .svm_path_bound import moved_bound, qL_update_bound
from .svm_path_inverse import lazy_apply
from .svm_path_kernels import EVENT_KINDS
from .svm_path_run import DONE, fresh_due, join_elbow, leave_elbow, quiet_head, quiet_tail

__all__ = ["AFTER_CHANGE", "AFTER_EVENT", "BOUNDARY", "INCONSISTENT", "quiet_run",
           "run_quiet"]

BOUNDARY, AFTER_EVENT, AFTER_CHANGE, INCONSISTENT = 0, 1, 2, 3
#: Record rows a call of quiet_run writes at most (its figures' buffers; run_quiet calls
#: again after a full batch).
_BATCH = 64
# ist: integer state;  fst: float state (the indices below)
_M, _P, _INV, _CHANGES, _LCH, _NL, _SINCE, _KIND, _WHO, _XOK, _FR = range(11)
_A0, _LAM, _LAMF, _ERR, _N, _SSC, _SERR, _EQL, _BEST, _LAMP = range(10)


@njit(cache=True, error_model="numpy")
def quiet_run(Q: Any, y: Any, E: Any, L: Any, qL: Any, idx: Any, pos: Any, cols: Any,
              abuf: Any, N0: Any, V: Any, w: Any, g: Any, a: Any, s: Any, x: Any, ist: Any,
              fst: Any, consts: Any, alphas: Any, rec_f: Any, rec_b: Any, rec_e: Any,
              k_max: int) -> Any:
    """Ordinary breakpoints from the state (module docstring) until one is not; the
    record's rows 0, 1, ... of ``alphas`` (and of ``rec_f`` = (C, b), ``rec_b`` = the
    bounds, ``rec_e`` = (kind, sample)), at most ``k_max``. ``consts`` = (qabs, qmax,
    lam_end, kkt_tol, event_rtol, snap, fresh_every, refresh, cap). Returns (code, rows
    written, a, s of the last scan, x); ``ist`` and ``fst`` updated in place."""
    qabs, qmax, lam_end, kkt_tol, rtol, snap = consts[0], consts[1], consts[2], consts[3], \
        consts[4], consts[5]
    fresh_every, refresh, cap = int(consts[6]), int(consts[7]), int(consts[8])
    k = 0
    rhs = np.ones(cap + 2)
    rhs[0] = 0.0
    while fst[_LAM] > lam_end and k < k_max:
        m, kind, i = ist[_M], ist[_KIND], ist[_WHO]
        best = fst[_BEST]
        # the checks before anything is done (BOUNDARY: the Python loop runs it)
        if kind >= 2 and (m == cap or (L[i] and ist[_LCH] + 1 > ist[_NL] - 1)):
            return BOUNDARY, k, a, s, x
        if kind == 1 and ist[_LCH] + 1 > ist[_NL] + 1:
            return BOUNDARY, k, a, s, x
        lam = fst[_LAM]
        fst[_LAMP] = lam
        # a fresh sum of the margins is due (as _PathState.advance decides): no prediction
        fresh = fresh_due(ist[_SINCE] + 1, fresh_every, best, fst[_LAMF])
        ist[_FR] = 1 if fresh else 0
        a_new, a0, fst[_SSC], fst[_SERR], fst[_ERR], fst[_N] = quiet_head(
            a, fst[_A0], lam, idx[:m], x[1:m + 1], x[0], best, g, s, E, qabs, fst[_ERR],
            fst[_N], not fresh)
        a = a_new
        lam = best
        fst[_A0], fst[_LAM] = a0, lam
        ist[_SINCE] += 1
        has_inv = ist[_INV] != 0
        if kind == 0 or kind == 1:
            bound = float(kind)
            fst[_ERR], fst[_N] = moved_bound(fst[_ERR], fst[_N], qabs, abs(a[i] - bound))
            a[i] = bound
            E[i] = False
            L[i] = kind == 1
            if kind == 1:
                ist[_NL] += 1
                ist[_LCH] += 1
                for j in range(qL.size):
                    qL[j] += 1.0 * Q[i, j]
                fst[_EQL] = qL_update_bound(fst[_EQL], qabs, ist[_NL])
            want_x = has_inv and ist[_XOK] != 0
            dropped, ist[_P], x_new = leave_elbow(i, m, idx, pos, cols, abuf, N0, V, w,
                                                  ist[_P], has_inv, x, want_x)
            if not dropped:
                has_inv = False
            elif want_x:
                x = x_new
            m -= 1
        elif kind >= 2:
            if L[i]:
                L[i] = False
                ist[_NL] -= 1
                ist[_LCH] += 1
                for j in range(qL.size):
                    qL[j] += -1.0 * Q[i, j]
                fst[_EQL] = qL_update_bound(fst[_EQL], qabs, ist[_NL])
            E[i] = True
            want_x = has_inv and ist[_XOK] != 0       # (s_x: the last scan's s)
            schur, ist[_P], x_new = join_elbow(i, m, Q, y, idx, pos, cols, abuf, N0, V, w,
                                               ist[_P], has_inv, x, s, want_x)
            if has_inv:
                if schur == 0.0:
                    has_inv = False
                if want_x and schur != 0.0:
                    x = x_new
                else:
                    ist[_XOK] = 0
            m += 1
        ist[_M] = m
        ist[_INV] = 1 if has_inv else 0
        if kind >= 0:                   # the change of the elbow counted (_changed)
            if not has_inv or m == 0 or ist[_CHANGES] + 1 >= max(refresh, 4 * m):
                return AFTER_EVENT, k, a, s, x      # (the Python loop counts it)
            ist[_CHANGES] += 1
        if ist[_XOK] == 0:                           # svm_path_elbow.candidate
            x = np.empty(m + 1)
            lazy_apply(N0, V, w, ist[_P], m + 1, rhs, x)
            ist[_XOK] = 1
        s_new = np.empty(y.size)
        out = quiet_tail(y, a, a0, lam, g, idx[:m], cols, qL, qmax, x, True, s_new, E, L,
                         fst[_ERR], fst[_N], qabs, kkt_tol, lam_end, lam * (1 - rtol), snap,
                         fresh, fst[_EQL])
        if fresh:                   # (g summed afresh whatever the code)
            fst[_ERR], fst[_N] = out[11], out[12]
            ist[_SINCE], ist[_FR] = 0, 0
            fst[_LAMF] = lam
        if out[0] != DONE:
            return AFTER_CHANGE, k, a, s, x
        s = s_new
        found, ok, bounds = out[1], out[2], out[3]
        if not ok:
            return INCONSISTENT, k, a, s, x
        alphas[k, :] = a / lam
        rec_f[k, 0], rec_f[k, 1] = 1.0 / lam, a0 / lam
        rec_b[k, :] = bounds
        rec_e[k, 0], rec_e[k, 1] = kind, i
        k += 1
        clear = found and max(out[4], out[5], out[6], out[7]) < 0
        if not (found and clear):
            ist[_KIND] = -2 if not found else -3     # (no usable scan: BOUNDARY below)
            fst[_BEST] = out[8]
            return BOUNDARY, k, a, s, x
        fst[_BEST], ist[_KIND], ist[_WHO] = out[8], out[9], out[10]
    return BOUNDARY, k, a, s, x


def run_quiet(state: Any, record: Any, lam_end: float, kkt_tol: float, max_breakpoints: int,
              settings: tuple) -> Any:
    """Ordinary breakpoints from ``state`` by :func:`quiet_run`, recorded in ``record``;
    ``settings`` = (fresh_every, refresh, event_rtol, snap) of :mod:`.svm_path`. Returns
    None when the state stands at a breakpoint (the Python loop runs the next), or
    (consistent, event, lambda of the breakpoint before) for a breakpoint it has finished
    the general way (``state.settle``) or whose KKT check failed (code
    :data:`INCONSISTENT`), which the Python loop then records or re-anchors. A call that
    fills its batch of rows (:data:`_BATCH`, or the end of the record's chunk) is followed by the
    next at once, not by a breakpoint of the Python loop's."""
    found, scan, inv, bound = state.found, state.scan, state._inv, state.bound
    if (state.m == 0 or found is None or scan is None or scan[1] is None
            or bound.asym != 0.0 or state.x is None or found[1].base is not state.x
            or state.s_x is not found[2] or not state.has_inv):
        return None
    best, kind, who = scan[1]
    ist = np.array([state.m, inv.p, 1, state.changes, state.l_changes, state.n_L,
                    state.since_fresh, kind, who, 1, 0], dtype=np.int64)
    fst = np.array([state.a0, state.lam, state.lam_fresh, bound.err, bound.N, bound.s_scale,
                    bound.s_err, bound.e_qL, best, state.lam])
    fresh_every, refresh, rtol, snap = settings
    consts = np.array([bound.qabs, state.qmax, lam_end, kkt_tol, rtol, snap, fresh_every,
                       refresh, state._idx.size], dtype=float)
    a, s, x = state.a, found[2], state.x
    done = 0
    while True:     # batches of rows; a full one stops where the next may go on at once
        rows = record.free_rows()[:min(_BATCH, max_breakpoints - record.k)]
        rec_f, rec_b = np.empty((rows.shape[0], 2)), np.empty((rows.shape[0], 8))
        rec_e = np.empty((rows.shape[0], 2), dtype=np.int64)
        code, k, a, s, x = quiet_run(state.Q, state.y, state.E, state.L, state.qL,
                                     state._idx, state._pos, state._cols, state._abuf,
                                     inv.N0, inv.V, inv.w, state.g, a, s, x, ist, fst,
                                     consts, rows, rec_f, rec_b, rec_e, rows.shape[0])
        record.written(k, rec_f[:k, 0].tolist(), rec_f[:k, 1].tolist(),
                       [f"{EVENT_KINDS[e]} {i}" if e >= 0 else "end"
                        for e, i in rec_e[:k].tolist()],
                       list(rec_b[:k]))
        if k:
            last_bounds = rec_b[k - 1]
        done += k
        # (a full batch goes on where the last breakpoint's scan left a usable event)
        if (code != BOUNDARY or k < rows.shape[0] or record.k >= max_breakpoints
                or ist[_KIND] < -1):
            break
    if code == BOUNDARY and done == 0:
        return None                     # (nothing done)
    state.a = a
    (state.a0, state.lam, state.lam_fresh, bound.err, bound.N, bound.s_scale, bound.s_err,
     bound.e_qL) = fst[:8].tolist()
    (state.m, inv.p, has_inv, state.changes, state.l_changes, state.n_L, state.since_fresh,
     kind, who, x_ok, fresh) = ist.tolist()
    state.has_inv = bool(has_inv)
    state.x = x if x_ok else None
    state.s = None
    if code == BOUNDARY:                # the last breakpoint's scan, as _scanned keeps it
        state.found = (float(x[0]), x[1:], s) if kind != -2 else None
        state.s_x = s if kind != -2 else None
        state.scan = (last_bounds, (float(fst[8]), kind, who) if kind >= -1 else None)
        return None
    state.found = state.scan = None
    event = None if kind < 0 else (EVENT_KINDS[kind], who)
    if code == INCONSISTENT:
        return False, event, fst[9]
    if code == AFTER_EVENT:
        state._changed()
    else:
        state.s_x = None                # (what _changed clears)
    return state.settle(bool(fresh), (lam_end, kkt_tol)), event, fst[9]


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
