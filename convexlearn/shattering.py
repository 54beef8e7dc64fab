"""Shattering by halfspaces and the VC dimension witnesses.

A set of m points is *shattered* by (affine or homogeneous) halfspaces when every one
of its 2^m labelings y is realized strictly: some (w, b) has ``y_i (<w, x_i> + b) > 0``
for all i, equivalently (rescaling) ``>= 1`` - the consistency LP of
:mod:`convexlearn.formulations.halfspace`.

Two independent deciders:

* ``method="lp"``: solve the consistency LP for every labeling. Since (w, b) realizes y
  iff (-w, -b) realizes -y, only the 2^(m-1) labelings with ``y_0 = +1`` are solved
  (limit: m <= :data:`MAX_LP_POINTS`).
* ``method="algebra"`` (the lectures' Lemmas 9.1/9.2): homogeneous halfspaces shatter
  the points iff they are linearly independent (``rank [x_1 .. x_m] = m``); affine
  halfspaces iff they are affinely independent (``rank [x_i, 1] = m``). If instead
  ``sum_i c_i x_i = 0`` (and ``sum_i c_i = 0`` in the affine case) with c != 0, the
  labeling ``y_i = sign(c_i)`` is not realizable: ``lambda = |c|`` certifies it.

Hence the VC dimension of homogeneous halfspaces in R^d is d (witness: e_1, ..., e_d)
and of affine halfspaces d + 1 (witness: 0, e_1, ..., e_d); no larger set is shattered.
"""

from __future__ import annotations

from typing import Any

import itertools

import numpy as np
import scipy.linalg

from .data import as_features, check_bool, check_choice
from .errors import ParameterError, SolverError
from .formulations.base import silence_highs_banner

__all__ = ["shatters", "unrealizable_labeling", "vc_dimension", "vc_witness", "MAX_LP_POINTS"]

#: Largest point set the LP method accepts (it solves 2^(m-1) LPs).
MAX_LP_POINTS = 12


def _points(points) -> np.ndarray:
    return as_features(points, name="points")


def _labeling_problem(P: np.ndarray, homogeneous: bool):
    """The consistency LP with the labels as a cvxpy Parameter (DPP: compiled once)."""
    import cvxpy as cp
    y = cp.Parameter(P.shape[0], name="y")
    w = cp.Variable(P.shape[1], name="w")
    scores = P @ w if homogeneous else P @ w + cp.Variable(name="b")
    return cp.Problem(cp.Minimize(0), [cp.multiply(y, scores) >= 1]), y


def _lp_witness(P: np.ndarray, homogeneous: bool, solver: str) -> np.ndarray | None:
    import cvxpy as cp
    m = P.shape[0]
    if m > MAX_LP_POINTS:
        raise ParameterError(
            f"method='lp' solves 2^(m-1) = {2 ** (m - 1)} LPs for m={m} points; it accepts at "
            f"most {MAX_LP_POINTS} points. Use method='algebra' (rank test), which has no limit")
    problem, y = _labeling_problem(P, homogeneous)
    if solver.upper() == "HIGHS":
        silence_highs_banner()
    for tail in itertools.product((1.0, -1.0), repeat=m - 1):
        labels = np.array((1.0,) + tail)
        y.value = labels
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError as exc:
            raise SolverError(f"{solver} failed on the labeling {labels.astype(int).tolist()}: "
                              f"{exc}") from None
        if problem.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return labels
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise SolverError(f"{solver} returned {problem.status!r} on the labeling "
                              f"{labels.astype(int).tolist()}")
    return None


def _algebra_witness(P: np.ndarray, homogeneous: bool) -> np.ndarray | None:
    # Rows of M^T c = 0 encode sum_i c_i x_i = 0 (and sum_i c_i = 0 when affine).
    M = P if homogeneous else np.hstack([P, np.ones((P.shape[0], 1))])
    if np.linalg.matrix_rank(M) == P.shape[0]:
        return None
    c = scipy.linalg.null_space(M.T)[:, 0]
    c[np.abs(c) <= 1e-12 * np.abs(c).max()] = 0.0
    return np.where(c < 0, -1.0, 1.0)


def unrealizable_labeling(points: Any, homogeneous: bool = False, method: str = "lp",
                          solver: str = "HIGHS") -> np.ndarray | None:
    """A labeling of ``points`` that no halfspace realizes, or None if they are shattered.

    Parameters
    ----------
    points : array_like of shape (m, d)
    homogeneous : bool
        Halfspaces through the origin (b = 0).
    method : {"lp", "algebra"}
        "lp": the consistency LP for each labeling (m <= 12); "algebra": the rank test
        (see the module docstring), whose witness is ``y_i = sign(c_i)`` for a linear
        (affine) dependency c.
    solver : str
        cvxpy LP solver of the "lp" method.

    Returns
    -------
    ndarray of {-1.0, +1.0} or None
    """
    P = _points(points)
    check_choice("method", method, ("lp", "algebra"))
    homogeneous = check_bool("homogeneous", homogeneous)
    if method == "lp":
        return _lp_witness(P, homogeneous, solver)
    return _algebra_witness(P, homogeneous)


def shatters(points: Any, homogeneous: bool = False, method: str = "lp",
             solver: str = "HIGHS") -> bool:
    """Whether (affine or homogeneous) halfspaces shatter ``points``.

    See :func:`unrealizable_labeling` for the parameters; True iff it returns None.

    Raises
    ------
    ParameterError
        ``method="lp"`` with more than :data:`MAX_LP_POINTS` points, or an unknown method.
    DataError
        Invalid points (empty, NaN, not 2-D).
    """
    return unrealizable_labeling(points, homogeneous, method, solver) is None


def vc_dimension(d: int, homogeneous: bool = False) -> int:
    """VC dimension of halfspaces in R^d: d (homogeneous) or d + 1 (affine)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ParameterError(f"d must be a positive integer; got d={d!r}")
    return int(d) if homogeneous else int(d) + 1


def vc_witness(d: int, homogeneous: bool = False) -> np.ndarray:
    """A point set of size :func:`vc_dimension` that halfspaces in R^d shatter.

    Homogeneous: the unit vectors e_1..e_d (linearly independent). Affine: 0, e_1..e_d
    (affinely independent).
    """
    size = vc_dimension(d, homogeneous)
    eye = np.eye(int(d))
    return eye if homogeneous else np.vstack([np.zeros((1, int(d))), eye])[:size]
