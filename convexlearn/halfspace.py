"""Linear separability with a proof either way: ``Halfspace(X, y).check()``.

The two classes are linearly separable iff the consistency LP (DESIGN.md section 1)::

    find (w, b)  s.t.  y_i (<w, x_i> + b) >= 1   for all i

is feasible; otherwise its Farkas alternative, lambda >= 0 with
``sum_{y=+1} lambda_i = sum_{y=-1} lambda_i = 1`` and ``sum_i lambda_i y_i x_i = 0``, is
feasible: the convex hulls of the classes meet at ``p = sum_{y=+1} lambda_i x_i``.
Homogeneous (b = 0): lambda >= 0, lambda != 0 with ``sum_i lambda_i y_i x_i = 0``.

:meth:`Halfspace.check` solves the LPs of :mod:`convexlearn.formulations.halfspace`
with HiGHS and returns whichever certificate applies, *verified independently* by
:mod:`convexlearn.certify.separability` (floating point with scaled tolerance, and
exactly over Q when the problem is small). Where separable it also reports the maximal
geometric margin ``1 / ||w*||`` of the hard-margin SVM; where not, the minimum total
slack ``min sum_i xi_i`` s.t. ``y_i f(x_i) >= 1 - xi_i``, ``xi >= 0``.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from .certify.separability import DEFAULT_TOL, CertificateCheck, midrange, verify
from .data import LabelMap, as_binary_labels, as_features, check_choice
from .errors import ConvexLearnError, DataError, InfeasibleError, SolverError
from .formulations.base import solve_formulation
from .formulations.halfspace import (LP_BUILDERS, highspy_provenance, lp_data,
                                     solve_consistency_highspy, solve_lp_data)
from .solution import Timer

__all__ = ["Halfspace", "SeparabilityResult", "AUTO_DIRECT_ENTRIES"]

#: ``check(backend="auto")`` calls HiGHS directly from this many entries of X on (cvxpy's
#: compilation of the dense LP is then a large fraction of HiGHS's own time).
AUTO_DIRECT_ENTRIES = 100_000


@dataclass
class SeparabilityResult:
    """The answer of :meth:`Halfspace.check`, with its proof.

    Attributes
    ----------
    separable : bool
    w, b : ndarray, float
        Where separable: a hyperplane with functional margins ``y_i (<w, x_i> + b) >= 1``
        (b = 0 when homogeneous). None / nan where not.
    margin : float or None
        Where separable and requested: the maximal geometric margin ``1 / ||w*||`` of the
        hard-margin SVM (w* its solution).
    certificate : ndarray or None
        Where not separable: lambda (see the module docstring).
    meeting_point : ndarray or None
        Where not separable: ``p = sum_{y=+1} lambda_i x_i = sum_{y=-1} lambda_i x_i``,
        a point of both convex hulls (homogeneous: of both convex cones).
    min_total_slack : float
        ``min sum_i xi_i`` s.t. ``y_i f(x_i) >= 1 - xi_i``, ``xi >= 0`` (0 where separable;
        nan when not computed).
    slack_samples : ndarray of int or None
        Samples with positive slack (xi_i > 1e-9) at the LP's optimal solution.
    verified : bool
        Every independent check of the returned certificate passed.
    checks : list of CertificateCheck
        Those checks (float, and exact over Q where the problem is small).
    homogeneous : bool
    label_map : LabelMap
        Which input label is -1 and which +1 (``y_i`` above).
    time_s : float
    provenance : dict
        Solver, versions and the LPs solved.
    notes : list of str
        What could not be computed and why (e.g. the margin when the hard-margin SVM
        failed); the verdict and its certificate are unaffected.
    """

    separable: bool
    w: np.ndarray | None
    b: float
    margin: float | None
    certificate: np.ndarray | None
    meeting_point: np.ndarray | None
    min_total_slack: float
    slack_samples: np.ndarray | None
    verified: bool
    checks: list[CertificateCheck] = field(default_factory=list)
    homogeneous: bool = False
    label_map: LabelMap | None = None
    time_s: float = 0.0
    provenance: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for people: the verdict, the proof and how it was checked."""
        kind = "homogeneous" if self.homogeneous else "affine"
        classes = f" (labels {self.label_map.describe()})" if self.label_map is not None else ""
        lines = []
        if self.separable:
            lines.append(f"SEPARABLE by an {kind} hyperplane{classes}.")
            lines.append(f"  hyperplane: ||w|| = {np.linalg.norm(self.w):.6g}, b = {self.b:.6g}; "
                         f"all functional margins >= 1")
            if self.margin is not None:
                lines.append(f"  maximal geometric margin (hard-margin SVM): {self.margin:.6g}")
        else:
            support = np.flatnonzero(self.certificate > 0)
            lines.append(f"NOT SEPARABLE by an {kind} hyperplane{classes}.")
            hulls = "convex cones" if self.homogeneous else "convex hulls"
            lines.append(f"  the {hulls} of the two classes meet: lambda on {support.size} samples "
                         f"{support[:10].tolist()}{' ...' if support.size > 10 else ''}")
            lines.append(f"  meeting point: {np.array2string(self.meeting_point, precision=4, threshold=8)}")
            if np.isfinite(self.min_total_slack):
                lines.append(f"  minimum total slack: {self.min_total_slack:.6g} "
                             f"({self.slack_samples.size} sample(s) need slack)")
        lines.append(f"  independently verified: {'yes' if self.verified else 'NO'}")
        if not self.verified:
            lines.append("  WARNING: the verdict is NOT PROVEN - its certificate failed the "
                         "independent check below (nearly degenerate data: the floating-point "
                         "LP verdict cannot be trusted; try exact or rescaled data)")
        lines.extend(f"    {check}" for check in self.checks)
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


class Halfspace:
    """The linear separability problem of a labeled data set.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
        Two distinct labels; sorted, ``classes[0] -> -1``, ``classes[1] -> +1``.
    homogeneous : bool
        Hyperplanes through the origin (b = 0): ``y_i <w, x_i> >= 1``.

    Raises
    ------
    DataError
        Bad X or y (empty, NaN/inf, one class, ...), or ``homogeneous=True`` with a
        sample equal to the zero vector: every hyperplane through the origin contains it
        (``y_i <w, 0> = 0 < 1``), so no homogeneous halfspace can classify it and the
        question has a trivial answer. Drop that sample or use ``homogeneous=False``.
    """

    def __init__(self, X, y, homogeneous: bool = False):
        self.X = as_features(X)
        self.y, self.label_map = as_binary_labels(y, n=self.X.shape[0])
        self.homogeneous = bool(homogeneous)
        if self.homogeneous:
            zero = np.flatnonzero(~np.any(self.X != 0, axis=1))
            if zero.size:
                raise DataError(
                    f"homogeneous=True but sample(s) {zero[:8].tolist()} are the zero vector: "
                    f"every hyperplane through the origin contains 0, so y_i <w, 0> = 0 < 1 for "
                    f"every w and no homogeneous halfspace can classify it (the consistency LP "
                    f"is trivially infeasible). Remove the sample(s) or use homogeneous=False")

    @property
    def classes(self) -> np.ndarray:
        """The two original labels, sorted (classes[0] -> -1, classes[1] -> +1)."""
        return self.label_map.classes

    def problem(self, which: str = "consistency"):
        """The declarative cvxpy problem: "consistency", "certificate" or "min_slack"."""
        check_choice("which", which, LP_BUILDERS)
        return LP_BUILDERS[which](self.X, self.y, self.homogeneous).problem

    def __repr__(self) -> str:
        kind = "homogeneous" if self.homogeneous else "affine"
        return f"<Halfspace ({kind}, n={self.X.shape[0]}, d={self.X.shape[1]})>"

    # ------------------------------------------------------------------ check
    def check(self, *, margin: bool = True, slack: bool = True, exact="auto",
              tol: float = DEFAULT_TOL, backend: str = "auto",
              solver: str | None = None) -> SeparabilityResult:
        """Decide linear separability and return the verified certificate.

        Solves the consistency LP; if it is infeasible, the certificate LP (see
        :mod:`convexlearn.formulations.halfspace`). The certificate is then checked by
        :func:`~convexlearn.certify.separability.verify` from the data alone.

        The LPs are solved on centred, column-scaled data ``(X - c) D^{-1}``, ``c`` the
        column midrange (0 for homogeneous problems), ``D = diag(s)``,
        ``s_j = max_i |x_ij - c_j|`` (1 for a zero column), because HiGHS's tolerances are
        absolute: affine separability is invariant under both (``(w, b)`` separates
        ``(X - c) D^{-1}`` iff ``(D^{-1} w, b - <D^{-1} w, c>)`` separates X; lambda
        certificates and the minimum total slack are unchanged), so tiny or huge features
        and data far from the origin do not change the verdict. The hyperplane is mapped
        back, and every certificate is verified on the original X.

        Parameters
        ----------
        margin : bool
            Where separable, also solve the hard-margin SVM for the maximal margin.
        slack : bool
            Where not separable, also solve the minimum-total-slack LP.
        exact : "auto", bool
            Add the exact rational check ("auto": when the problem is small).
        tol : float
            Tolerance of the floating-point checks (scaled; see
            :mod:`convexlearn.certify.separability`).
        backend : {"auto", "cvxpy", "highspy"}
            "cvxpy": the declarative problems (:meth:`problem`) through cvxpy and
            HiGHS. "highspy": the same LPs as matrices, straight to HiGHS: the
            consistency LP through highspy, whose dual ray is the certificate when it is
            infeasible (one LP either way; if no ray is available or it fails the float
            check, the certificate LP is solved), the other LPs through
            ``scipy.optimize.linprog(method="highs")``. "auto" picks highspy when
            ``n * d >= AUTO_DIRECT_ENTRIES``.
        solver : str, optional
            cvxpy LP solver of the cvxpy backend (default HiGHS).

        Returns
        -------
        SeparabilityResult

        Raises
        ------
        SolverError
            When the solver's answers contradict each other (both LPs infeasible).
        """
        check_choice("backend", backend, ("auto", "cvxpy", "highspy"))
        if backend == "auto":
            backend = "highspy" if self.X.size >= AUTO_DIRECT_ENTRIES else "cvxpy"
        timer = Timer()
        shift = self._shift()
        scale = _column_scale(self.X - shift)
        log = _Log((self.X - shift) / scale, self.y, self.homogeneous, backend, solver)
        log.notes["column_scale"] = ("LPs solved on X / max_i |x_ij| per column" if
                                     self.homogeneous else "LPs solved on (X - c) / max_i "
                                     "|x_ij - c_j| per column, c the column midrange")
        values = log.solve("consistency")
        if values is not None:
            result = self._separable(values, shift, scale, margin, exact, tol, log)
        else:
            result = self._not_separable(slack, exact, tol, log)
        result.provenance = log.provenance()
        result.time_s = timer()
        return result

    def _shift(self) -> np.ndarray:
        """c = the column midrange (affine problems), 0 (homogeneous): the LPs run on X - c.

        Affine separability is translation invariant ((w, b) separates X - c iff
        (w, b - <w, c>) separates X), and far from the origin (x ~ 1e9, spread ~ 1) the
        absolute LP tolerances would otherwise swallow the spread (found in review: a
        separable set reported not separable).
        """
        if self.homogeneous:
            return np.zeros(self.X.shape[1])
        return midrange(self.X)

    def _separable(self, values: dict, shift: np.ndarray, scale: np.ndarray, margin: bool,
                   exact, tol: float, log: "_Log") -> SeparabilityResult:
        X, y = self.X, self.y
        w = np.asarray(values["w"], dtype=float) / scale    # back to the original columns
        b = 0.0 if self.homogeneous else float(values["b"]) - float(w @ shift)
        with log.timed("verification"):
            checks = verify(X, y, w=w, b=b, homogeneous=self.homogeneous, exact=exact, tol=tol)
        notes: list[str] = []
        geometric = self._margin(log, notes) if margin else None
        return SeparabilityResult(True, w, b, geometric, None, None, 0.0, np.array([], dtype=int),
                                  all(c.passed for c in checks), checks, self.homogeneous,
                                  self.label_map, notes=notes)

    def _margin(self, log: "_Log", notes: list[str]) -> float | None:
        """The maximal geometric margin ``1 / ||w*||``, or None (with a note) if unavailable.

        The hard-margin SVM is solved on ``(X - c) / m``, ``m = max_ij |x_ij - c_j|`` (c as
        in :meth:`_shift`): its solution is ``m w*``, so ``margin(X) = m margin((X - c) / m)`` (the SVM's solvers, like the LPs, have
        absolute tolerances). Only an SVM solution with status "optimal" is reported: the
        verdict is already proven, and a failure here must not lose it.
        """
        from .svm import SVM

        Xc = self.X - self._shift()     # the margin is translation invariant (affine case)
        m = float(np.max(np.abs(Xc)))   # > 0: separable data have two distinct points
        with log.timed("margin_svm"):
            try:
                sol = SVM(Xc / m, self.y, C=None, intercept=not self.homogeneous).solve()
            except ConvexLearnError as exc:
                notes.append(f"margin not computed: the hard-margin SVM failed "
                             f"({type(exc).__name__}: {exc})")
                return None
        log.notes["margin_svm_status"] = sol.status
        norm = float(np.linalg.norm(sol.w)) if sol.w is not None else 0.0
        if sol.status != "optimal" or not np.isfinite(norm) or norm <= 0.0:
            notes.append(f"margin not computed: the hard-margin SVM returned status "
                         f"{sol.status!r} with ||w|| = {norm:.3g} (not a trustworthy optimum)")
            return None
        return m / norm

    def _not_separable(self, slack: bool, exact, tol: float, log: "_Log") -> SeparabilityResult:
        X, y, hom = self.X, self.y, self.homogeneous
        checks = None
        if log.ray is not None and log.ray.max() > 0:
            lam = _normalized(log.ray, y, hom)
            with log.timed("verification"):
                checks = verify(X, y, lam=lam, homogeneous=hom, exact=exact, tol=tol)
            log.notes["certificate_source"] = "dual ray of the consistency LP"
            if not all(c.passed for c in checks):   # fall back to the certificate LP
                checks = None
        if checks is None:
            values = log.solve("certificate")
            if values is None:
                raise SolverError(
                    "the certificate LP and the consistency LP were both reported infeasible, "
                    "which is impossible in exact arithmetic: the data are too ill-conditioned "
                    "for a floating-point verdict (try rescaling X)")
            lam = _normalized(values["lambda"], y, hom)
            with log.timed("verification"):
                checks = verify(X, y, lam=lam, homogeneous=hom, exact=exact, tol=tol)
            log.notes["certificate_source"] = "certificate LP"
        meeting = X[y > 0].T @ lam[y > 0]
        total, needing = float("nan"), None
        if slack:
            slack_values = log.solve("min_slack")
            total = slack_values["value"]
            needing = np.flatnonzero(np.asarray(slack_values["xi"]) > 1e-9)
        return SeparabilityResult(False, None, float("nan"), None, lam, meeting, total, needing,
                                  all(c.passed for c in checks), checks, hom, self.label_map)


def _column_scale(X: np.ndarray) -> np.ndarray:
    """Per-column scale ``s_j = max_i |x_ij|``, 1 for an all-zero column."""
    s = np.max(np.abs(X), axis=0)
    return np.where(s > 0, s, 1.0)


def _normalized(lam, y: np.ndarray, homogeneous: bool) -> np.ndarray:
    """Clip simplex round-off and scale to class sums 1 (homogeneous: total 1)."""
    lam = np.maximum(np.asarray(lam, dtype=float), 0.0)
    lam[lam < 1e-13 * lam.max()] = 0.0      # round-off on non-basic entries
    return lam / (lam.sum() if homogeneous else (lam[y > 0].sum() + lam[y < 0].sum()) / 2)


class _Log:
    """Solves the LPs for :meth:`Halfspace.check` and records what ran and how long it took.

    ``timings`` (seconds): per LP the total (with cvxpy: compilation + solver) and the
    solver's own time (``<name>_lp_solver``), plus ``verification`` and ``margin_svm``.
    """

    def __init__(self, X, y, homogeneous: bool, backend: str, solver: str | None):
        self.X, self.y, self.homogeneous = X, y, homogeneous
        self.backend, self.solver = backend, solver
        self.lps: list[str] = []
        self.timings: dict[str, float] = {}
        self.notes: dict = {}
        self.solver_provenance: dict = {}
        self.ray: np.ndarray | None = None      # Farkas ray of an infeasible consistency LP

    def solve(self, which: str) -> dict | None:
        """Solve LP ``which``; None when it is infeasible (an answer, not a failure)."""
        timer = Timer()
        if self.backend == "highspy" and which == "consistency":
            name = "consistency LP"
            values, self.ray, solver_time = solve_consistency_highspy(self.X, self.y,
                                                                      self.homogeneous)
            self.solver_provenance = highspy_provenance()
        elif self.backend == "highspy":
            name = f"{which} LP"
            values, solver_time = solve_lp_data(lp_data(self.X, self.y, self.homogeneous, which),
                                                self.X.shape[1], name)
            if values is not None:
                self.solver_provenance = self.solver_provenance or values["provenance"]
        else:
            form = LP_BUILDERS[which](self.X, self.y, self.homogeneous)
            name = form.name
            try:
                info = solve_formulation(form, self.solver)
            except InfeasibleError:
                values = None
            else:
                values = {k: v.value for k, v in form.variables.items()}
                values["value"] = float(form.problem.value)
                self.solver_provenance = self.solver_provenance or info.provenance()
            stats = form.problem.solver_stats
            solver_time = getattr(stats, "solve_time", None) if stats is not None else None
        if solver_time is not None:
            self.timings[f"{which}_lp_solver"] = float(solver_time)
        self.timings[f"{which}_lp"] = timer()
        self.lps.append(f"{name}: {'infeasible' if values is None else 'solved'} ({self.backend})")
        return values

    @contextmanager
    def timed(self, key: str):
        timer = Timer()
        try:
            yield
        finally:
            self.timings[key] = timer()

    def provenance(self) -> dict:
        return {**self.solver_provenance, "backend": self.backend, "lps": self.lps,
                "timings": self.timings, **self.notes}
