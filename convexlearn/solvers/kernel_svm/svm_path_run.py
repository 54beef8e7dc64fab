"""The exact C-path's ordinary breakpoint in one compiled call (:mod:`.svm_path`).

Most breakpoints of the path are quiet: the margins g are predicted along the segment
(not summed afresh), the elbow system's residual at the new breakpoint is already at
round-off, so that the refinement makes no step, and no elbow fraction sits within the
snap of 0 or 1. What :meth:`.svm_path._PathState.advance` then does after the event is a
fixed sequence of compiled loops; :func:`quiet_tail` runs that sequence in one call (one
dispatch, not five, and no numpy temporaries between them):

    r = [-(y . a), lam - g_E],   stop unless max|r| <= 1e-15 (qmax ||a||_1 + |a_0| + lam),
    stop if the snap would move any a_E (a_E within ``snap`` of 0 or 1 but not on it,
    or outside [0, 1]),
    s = y d_0 + Q_E d_E                         (:func:`.svm_path_pass.elbow_pass`),
    (found, consistent, bounds, event)          (:func:`.svm_path_kernels.breakpoint_scan`).

"Stop" returns before anything is written (code :data:`REFINE`): the Python loop then
runs the breakpoint its general way, which begins with the same residual and snap, so
that both give the same path bit for bit (tests run the path with and without the
compiled call and compare).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...compiled import load_without_refresh
from .svm_path_kernels import breakpoint_scan, elbow_residual
from .svm_path_pass import G_NONE, elbow_pass

__all__ = ["DONE", "REFINE", "quiet_tail"]

#: Codes of :func:`quiet_tail`: the breakpoint is done; the general way must run it.
DONE, REFINE = 0, 1


@njit(cache=True)
def _snapped(v: float, snap: float) -> float:
    """:func:`.svm_path_kernels.snap_elbow`'s rule for one fraction."""
    if abs(v) <= snap:
        v = 0.0
    elif abs(v - 1.0) <= snap:
        v = 1.0
    return min(max(v, 0.0), 1.0)


@njit(cache=True, error_model="numpy")
def quiet_tail(y: Any, a: Any, a0: float, lam: float, g: Any, idx: Any, cols: Any,
               qL: Any, qmax: float, x: Any, with_x: bool, s: Any, E: Any, L: Any,
               err: float, qabs: float, kkt_tol: float, lam_end: float, ceiling: float,
               snap: float) -> Any:
    """The rest of a quiet breakpoint (module docstring), s formed in place: returns
    ``(code, found, consistent, bounds, to_r, to_l, from_r, from_l, best, kind, who)``
    (:func:`.svm_path_kernels.breakpoint_scan`'s figures; only ``code`` when it is
    :data:`REFINE`, the others then placeholders computed on nothing)."""
    m = idx.size
    gE = g[idx]
    r, worst, scale = elbow_residual(y, a, a0, lam, gE, qmax)
    quiet = worst <= 1e-15 * scale
    for k in range(m):
        if _snapped(a[idx[k]], snap) != a[idx[k]]:
            quiet = False
    if not quiet:
        return DONE + REFINE, False, False, np.empty(8), -1, -1, -1, -1, lam_end, -1, -1
    for k in range(m):          # (a no-op but for the sign of a zero, as snap_elbow)
        a[idx[k]] = _snapped(a[idx[k]], snap)
    if with_x:
        elbow_pass(cols, m, x[1:], qL, 0.0, y, x[1:], x[0], g, s, G_NONE, True)
    found, ok, bounds, to_r, to_l, from_r, from_l, best, kind, who = breakpoint_scan(
        y, a, a0, lam, g, err, qabs, kkt_tol, x, with_x, s, idx, E, L, qmax, lam_end,
        ceiling)
    return DONE, found, ok, bounds, to_r, to_l, from_r, from_l, best, kind, who


load_without_refresh(globals())   # cached kernels load without numba's compiler contexts
