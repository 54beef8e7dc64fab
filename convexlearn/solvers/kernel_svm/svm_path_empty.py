"""The exact C-path's step while no sample is on the margin (:mod:`.svm_path`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["EVENT_RTOL", "empty_elbow"]

#: Candidate breakpoints within this relative distance below the current lambda are the
#: event just applied, seen again through round-off.
EVENT_RTOL = 1e-12


def empty_elbow(state: Any, lam: float, lam_end: float
                ) -> tuple[float, np.ndarray, float, tuple[str, Any] | None]:
    """No sample on the margin: a is fixed, a_0 lies in an interval [lo(l), hi(l)] that
    shrinks as lambda falls; the next breakpoint is where it closes, and the samples that
    close it join E.

    With g_i = q_i + y_i a_0 (q = Q a), lambda y_i f_i = g_i is <= lambda on L and >=
    lambda on R::

        L, y=+1: a_0 <= l - q_i      L, y=-1: a_0 >= q_i - l
        R, y=+1: a_0 >= l - q_i      R, y=-1: a_0 <= q_i - l

    so hi(l) = min(l + min_{L+} -q, -l + min_{R-} q) and lo(l) = max(-l + max_{L-} q,
    l + max_{R+} -q): two lines each, and the interval closes where a rising line of hi
    meets a falling line of lo or the reverse (O(n), the extreme samples binding)."""
    y, a, L = state.y, state.a, state.L
    q = state.Q @ a           # (rare: the start of a path)
    pos, neg = y > 0, y < 0
    groups = [(np.flatnonzero(L & pos), -q), (np.flatnonzero(~L & neg), q),    # hi: +l, -l
              (np.flatnonzero(L & neg), q), (np.flatnonzero(~L & pos), -q)]    # lo: -l, +l
    ends = []     # (sample, intercept): the binding sample of each line and its offset
    for k, (members, c) in enumerate(groups):
        if members.size == 0:
            ends.append((-1, math.inf if k < 2 else -math.inf))
            continue
        j = members[np.argmin(c[members]) if k < 2 else np.argmax(c[members])]
        ends.append((int(j), float(c[j])))

    def hi(l):
        return min(l + ends[0][1], -l + ends[1][1])

    def lo(l):
        return max(-l + ends[2][1], l + ends[3][1])

    best, pair = lam_end, None
    # hi's +l line meets lo's -l line; hi's -l line meets lo's +l line
    for u, d, cross in ((0, 2, 0.5 * (ends[2][1] - ends[0][1])),
                        (1, 3, 0.5 * (ends[1][1] - ends[3][1]))):
        if (math.isfinite(cross) and best < cross < lam * (1 - EVENT_RTOL)
                and abs(hi(cross) - lo(cross)) <= 1e-12 * max(1.0, abs(hi(cross)))):
            best, pair = cross, (ends[u][0], ends[d][0])
    if pair is None:
        return best, a.copy(), 0.5 * (hi(best) + lo(best)), None
    return best, a.copy(), hi(best), ("pair->E", pair)
