"""The duality gap of a linear SVM answer in exact rational arithmetic.

Floating-point data and answers are exact rationals; this module evaluates the C-form
(b unpenalized, bounds C_i, the conventions of :mod:`convexlearn.svm`) over them::

    P(w, b) = 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i (<w, x_i> + b))
    D(a)    = sum_i a_i - 1/2 ||X^T (y * a)||^2,   0 <= a_i <= C_i,  y^T a = 0

A float ``alpha`` is almost never exactly balanced, and D bounds the optimum only at a
dual-feasible point: ``alpha`` clipped to the box has its imbalance s = y^T a moved, exactly,
onto the coordinates with room in the needed direction, in proportion to that room. The
result is a rational dual-feasible a with P(w, b) - P* <= P(w, b) - D(a): the relative gap
(P - D) / P certifies the answer with no rounding at all. Slow (Python fractions): for
tests and audits of small problems.
"""

from __future__ import annotations

from typing import Any

from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["rational_duality_gap"]


def rational_duality_gap(X: ArrayLike, y: ArrayLike, C: float, w: Any, b: Any, alpha: Any,
                         intercept: bool = True) -> Fraction | None:
    """(P(w, b) - D(a)) / P(w, b) over the rationals (see the module docstring).

    Parameters
    ----------
    X : ndarray (n, d)
    y : ndarray of {-1, +1}
    C : float or ndarray (n,)
        Finite bounds (the soft margin).
    w, b, alpha : the answer.
    intercept : bool
        False: no balance constraint (and b must be 0).

    Returns
    -------
    Fraction or None
        None when no dual-feasible point is within the box's room (the answer is then not
        certified by its multipliers).
    """
    F = Fraction
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    Xq = [[F(float(v)) for v in row] for row in X]
    wq, bq = [F(float(v)) for v in w], F(float(b))
    yq = [F(int(v)) for v in y]
    Cq = [F(float(c)) for c in np.broadcast_to(np.asarray(C, dtype=float), (n,))]
    a = [min(max(F(float(v)), F(0)), c) for v, c in zip(alpha, Cq)]
    s = sum(yi * ai for yi, ai in zip(yq, a)) if intercept else F(0)
    if s:
        up = [-s * yi > 0 for yi in yq]          # raise a_i (else lower it) to cancel s
        room = [(c - ai) if u else ai for u, c, ai in zip(up, Cq, a)]
        total = sum(room)
        if total < abs(s):
            return None
        a = [ai + (1 if u else -1) * ri * abs(s) / total for u, ai, ri in zip(up, a, room)]
    hinge = sum(c * max(F(0), 1 - yi * (sum(x * v for x, v in zip(row, wq)) + bq))
                for row, yi, c in zip(Xq, yq, Cq))
    primal = sum(v * v for v in wq) / 2 + hinge
    v = [sum(a[i] * yq[i] * Xq[i][j] for i in range(n)) for j in range(d)]
    dual = sum(a) - sum(t * t for t in v) / 2
    return (primal - dual) / primal
