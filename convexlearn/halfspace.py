"""Linear separability with a proof either way: ``Halfspace(X, y).check()``.

The two classes are linearly separable iff the consistency LP::

    find (w, b)  s.t.  y_i (<w, x_i> + b) >= 1   for all i

is feasible; otherwise its Farkas alternative, lambda >= 0 with
``sum_{y=+1} lambda_i = sum_{y=-1} lambda_i = 1`` and ``sum_i lambda_i y_i x_i = 0``, is
feasible: the convex hulls of the classes meet at ``p = sum_{y=+1} lambda_i x_i``.
Without intercept (b = 0): lambda >= 0, lambda != 0 with ``sum_i lambda_i y_i x_i = 0``.

:meth:`Halfspace.check` solves the LPs of :mod:`convexlearn.formulations.halfspace`
with HiGHS (the route :mod:`convexlearn.routes.halfspace`) and returns whichever certificate applies, *verified independently* by
:mod:`convexlearn.certify.separability` (floating point with scaled tolerance, and
exactly over Q when the problem is small). Where separable it also reports the maximal
geometric margin ``1 / ||w*||`` of the hard-margin SVM; where not, the minimum total
slack ``min sum_i xi_i`` s.t. ``y_i f(x_i) >= 1 - xi_i``, ``xi >= 0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .certify.separability import DEFAULT_TOL, CertificateCheck, midrange, verify
from .data import (as_binary_labels, as_features, check_bool, check_choice, check_solver,
                   check_tol)
from .deprecation import renamed
from .errors import ConvexLearnError, DataError
from .formulations.halfspace import LP_BUILDERS
from .routes.halfspace import AUTO_DIRECT_ENTRIES, SeparabilityResult, decide_separability
from .solution import Timer
from .svm import SVM

__all__ = ["Halfspace", "SeparabilityResult", "AUTO_DIRECT_ENTRIES"]


class Halfspace:
    """The linear separability problem of a labeled data set.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
        Two distinct labels; sorted, ``classes[0] -> -1``, ``classes[1] -> +1``.
    intercept : bool
        False: hyperplanes through the origin (b = 0), ``y_i <w, x_i> >= 1`` (the word of
        SVM and ERM; ``homogeneous=True``, its deprecated name, means ``intercept=False``).

    Raises
    ------
    DataError
        Bad X or y (empty, NaN/inf, one class, ...), or ``intercept=False`` with a
        sample equal to the zero vector: every hyperplane through the origin contains it
        (``y_i <w, 0> = 0 < 1``), so no homogeneous halfspace can classify it and the
        question has a trivial answer. Drop that sample or use ``intercept=True``.
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, intercept: bool = True, *,
                 homogeneous: bool | None = None):
        self.X = as_features(X)
        self.y, self.label_map = as_binary_labels(y, n=self.X.shape[0])
        intercept = renamed("Halfspace", "homogeneous", "intercept", homogeneous, intercept,
                            default=True, convert=lambda h: not check_bool("homogeneous", h),
                            note=" (homogeneous=True is intercept=False)")
        self.intercept = check_bool("intercept", intercept)
        if self.homogeneous:
            zero = np.flatnonzero(~np.any(self.X != 0, axis=1))
            if zero.size:
                raise DataError(
                    f"intercept=False but sample(s) {zero[:8].tolist()} are the zero vector: "
                    f"every hyperplane through the origin contains 0, so y_i <w, 0> = 0 < 1 for "
                    f"every w and no homogeneous halfspace can classify it (the consistency LP "
                    f"is trivially infeasible). Remove the sample(s) or use intercept=True")

    @property
    def homogeneous(self) -> bool:
        """``not intercept``: hyperplanes through the origin (the LPs' word for it)."""
        return not self.intercept

    @property
    def classes(self) -> np.ndarray:
        """The two original labels, sorted (classes[0] -> -1, classes[1] -> +1)."""
        return self.label_map.classes

    def problem(self, which: str = "consistency") -> Any:
        """The declarative cvxpy problem: "consistency", "certificate" or "min_slack"."""
        check_choice("which", which, LP_BUILDERS)
        return LP_BUILDERS[which](self.X, self.y, self.homogeneous).problem

    def __repr__(self) -> str:
        kind = "affine" if self.intercept else "homogeneous"
        return f"<Halfspace ({kind}, n={self.X.shape[0]}, d={self.X.shape[1]})>"

    # ------------------------------------------------------------------ check
    def check(self, *, margin: bool = True, slack: bool = True, exact: Any = "auto",
              cert_tol: float = DEFAULT_TOL, backend: str = "auto",
              solver: str | None = None, tol: float | None = None) -> SeparabilityResult:
        """Decide linear separability and return the verified certificate.

        The LPs and the independent verification are those of
        :func:`convexlearn.routes.halfspace.decide_separability` (read there how the data
        are centred and column-scaled before HiGHS sees them, and what each backend does).

        Parameters
        ----------
        margin : bool
            Where separable, also solve the hard-margin SVM for the maximal margin.
        slack, exact, backend, solver :
            As in :func:`convexlearn.routes.halfspace.decide_separability` (the minimum
            total slack where not separable; the exact rational check; cvxpy or straight
            to HiGHS; the cvxpy LP solver).
        cert_tol : float
            Tolerance of the scaled float check of the certificate (``tol``, deprecated).

        Returns
        -------
        SeparabilityResult

        Raises
        ------
        SolverError
            When the solver's answers contradict each other (both LPs infeasible).
        """
        margin = check_bool("margin", margin)
        slack = check_bool("slack", slack)
        tol = renamed("Halfspace.check", "tol", "cert_tol", tol, cert_tol, default=DEFAULT_TOL)
        tol, solver = check_tol("cert_tol", tol), check_solver(solver)
        if exact != "auto":
            exact = check_bool("exact", exact) if not isinstance(exact, str) else \
                check_choice("exact", exact, ("auto",))
        result = decide_separability(self.X, self.y, self.homogeneous, slack=slack,
                                     exact=exact, tol=tol, backend=backend, solver=solver,
                                     label_map=self.label_map)
        if result.separable and margin:
            timer = Timer()
            result.margin = self._margin(result.notes, result.provenance)
            result.provenance.setdefault("timings", {})["margin_svm"] = timer()
            result.time_s += result.provenance["timings"]["margin_svm"]
        return result

    def certificate(self, result: SeparabilityResult, tol: float = DEFAULT_TOL, *,
                    exact: Any = "auto") -> list[CertificateCheck]:
        """The certificate of an answer, re-checked from X and y: the hyperplane where
        ``result.separable``, lambda otherwise (:func:`~convexlearn.certify.separability.verify`,
        float at ``tol``, then exact over Q where cheap or ``exact=True``). All must pass."""
        check_tol("tol", tol)
        if result.separable:
            return verify(self.X, self.y, w=result.w, b=result.b, homogeneous=self.homogeneous,
                          exact=exact, tol=tol)
        return verify(self.X, self.y, lam=result.certificate, homogeneous=self.homogeneous,
                      exact=exact, tol=tol)

    def _margin(self, notes: list[str], provenance: dict) -> float | None:
        """The maximal geometric margin ``1 / ||w*||``, or None (with a note) if unavailable.

        The hard-margin SVM is solved on ``(X - c) / m``, ``c`` the column midrange (0 when
        homogeneous), ``m = max_ij |x_ij - c_j|``: its solution is ``m w*``, so
        ``margin(X) = m margin((X - c) / m)`` (the SVM's solvers, like the LPs, have
        absolute tolerances). Only an SVM solution with status "optimal" is reported: the
        verdict is already proven, and a failure here must not lose it.
        """
        Xc = self.X if self.homogeneous else self.X - midrange(self.X)
        m = float(np.max(np.abs(Xc)))   # > 0: separable data have two distinct points
        try:
            sol = SVM(Xc / m, self.y, C=None, intercept=not self.homogeneous).solve()
        except ConvexLearnError as exc:
            notes.append(f"margin not computed: the hard-margin SVM failed "
                         f"({type(exc).__name__}: {exc})")
            return None
        provenance["margin_svm_status"] = sol.status
        norm = float(np.linalg.norm(sol.w)) if sol.w is not None else 0.0
        if sol.status != "optimal" or not np.isfinite(norm) or norm <= 0.0:
            notes.append(f"margin not computed: the hard-margin SVM returned status "
                         f"{sol.status!r} with ||w|| = {norm:.3g} (not a trustworthy optimum)")
            return None
        return m / norm
