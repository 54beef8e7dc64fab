"""The Crammer-Singer multiclass SVM (linear): ``cl.CrammerSingerSVM(X, y, C=1.0)``.

::

    min_W  1/2 sum_m ||w_m||^2 + C sum_i s_i max_m (1[m != y_i] + <w_m, x_i> - <w_{y_i}, x_i>)

one weight vector per class, no intercept (as LIBLINEAR ``-s 4`` and scikit-learn's
``LinearSVC(multi_class="crammer_singer", fit_intercept=False)``; LinearSVC with
``fit_intercept=True`` adds a penalized constant feature instead: append a column of ones
to X for that problem). Classes are the sorted labels; ``decision_function`` is
X W^T of shape (n, K), ``predict`` the class of the largest value (ties to the first).
Dual and certificate: :mod:`convexlearn.formulations.svm_variants`,
:mod:`convexlearn.certify.crammer_singer`.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numpy.typing import ArrayLike

from .certify.crammer_singer import CrammerSingerReport, crammer_singer_certificate
from .data import (as_features, as_sample_weight, check_C, check_positive, check_solver)
from .errors import DataError, ParameterError
from .formulations.svm_variants import crammer_singer_dual, crammer_singer_primal
from .solution import Solution, Timer, check_same_problem, data_digest, problem_fingerprint
from .solvers.linear_svm.crammer_singer import (crammer_singer_exact, finish_sets,
                                                polish_dual, sets_from_scores)

__all__ = ["CrammerSingerSVM", "as_class_codes"]

METHODS = ("exact", "exact-cs", "exact-dual", "exact-primal")


def as_class_codes(y: ArrayLike, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(classes, codes): the sorted labels and each sample's index in them; a DataError for
    a wrong length, NaN labels, one class, or labels that look continuous."""
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise DataError(f"y must be a vector of {n} labels; got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise DataError("y has non-finite labels (NaN or inf)")
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError:
        raise DataError("y mixes label types that cannot be sorted") from None
    if classes.size < 2:
        raise DataError(f"y has one class only ({classes[0]!r}); a classifier needs two")
    if arr.dtype.kind == "f" and np.any(classes != np.round(classes)) and classes.size > n / 2:
        raise DataError(f"y looks continuous ({classes.size} distinct non-integer values); "
                        f"a classifier needs class labels")
    return classes, codes.astype(np.int64)


class CrammerSingerSVM:
    """The Crammer-Singer multiclass SVM (module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
        Two or more labels (sorted: class m is ``classes[m]``).
    C : float
        > 0 and finite.
    sample_weight : array_like, optional
        s_i >= 0: sample i costs C s_i (weight 0 removes it).
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, *,
                 sample_weight: Any = None):
        self.X = np.asarray(as_features(X, sparse="densify"), dtype=float)
        self.classes, self.codes = as_class_codes(y, self.X.shape[0])
        self.C = check_C(C)
        if math.isinf(self.C):
            raise ParameterError("the Crammer-Singer SVM needs a finite C > 0; got C=inf")
        self.sample_weight = as_sample_weight(sample_weight, self.n_samples)

    @property
    def n_samples(self) -> int:
        """n."""
        return self.X.shape[0]

    @property
    def n_classes(self) -> int:
        """K."""
        return self.classes.size

    @property
    def C_bounds(self) -> np.ndarray:
        """Per-sample costs C_i = C s_i."""
        s = 1.0 if self.sample_weight is None else self.sample_weight
        return np.broadcast_to(self.C * np.asarray(s, dtype=float), (self.n_samples,)).copy()

    def describe(self) -> str:
        """One line: C, K, n, d."""
        return (f"Crammer-Singer SVM (C={self.C:g}, {self.n_classes} classes, "
                f"n={self.n_samples}, d={self.X.shape[1]}, no intercept)")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    def fingerprint(self) -> str:
        """sha256 of X, y, the weights and C."""
        return problem_fingerprint(data_digest(self.X, self.codes, self.sample_weight),
                                   {"crammer_singer": self.C})

    def primal(self) -> Any:
        """The primal as a ``cvxpy.Problem`` (variable W of shape (K, d))."""
        return crammer_singer_primal(self.X, self.codes, self.n_classes, self.C_bounds).problem

    def dual(self) -> Any:
        """The dual as a ``cvxpy.Problem`` (variable A of shape (n, K), W = A^T X)."""
        return crammer_singer_dual(self.X, self.codes, self.n_classes, self.C_bounds).problem

    def solve(self, method: str = "exact", *, solver: str | None = None,
              cert_tol: float = 1e-6, seed: Any = 0, **options) -> Solution:
        """Solve and certify.

        ``method``: "exact" (the sequential dual method and its active-set finish,
        :func:`~convexlearn.solvers.linear_svm.crammer_singer.crammer_singer_exact`; the
        cvxpy dual as fallback when that is not certified), "exact-cs" (that route alone),
        "exact-dual" or "exact-primal" (cvxpy, ``solver`` and ``options`` passed on).
        Status "optimal" iff the certificate passes: every KKT residual <= ``cert_tol``
        and the relative duality gap <= 1e-9. ``solution.w`` is W (K, d), ``alpha`` is A
        (n, K) (absent for the primal), ``b`` = 0.
        """
        if not isinstance(method, str) or method not in METHODS:
            raise ParameterError(f"unknown method {method!r}; valid: "
                                 f"{', '.join(map(repr, METHODS))}")
        cert_tol = check_positive("cert_tol", cert_tol)
        timer = Timer()
        tried = {}
        chain = {"exact": ["exact-cs", "exact-dual"]}.get(method, [method])
        sol = None
        for route in chain:
            sol = self._run(route, check_solver(solver), cert_tol, seed, options)
            if sol.report.passed:
                break
            tried[route] = f"relative gap {sol.report.relative_gap:.3g}"
        sol.status = "optimal" if sol.report.passed else "inaccurate"
        sol.time_s = timer()
        sol.provenance["fingerprint"] = self.fingerprint()
        tried.pop(sol.provenance["route"], None)
        if tried:
            sol.provenance["fallback_from"] = tried
        return sol

    def _run(self, route, solver, cert_tol, seed, options) -> Solution:
        K, C = self.n_classes, self.C_bounds
        if route == "exact-cs":
            W, A, info = crammer_singer_exact(self.X, self.codes, K, C, tol=cert_tol, seed=seed)
            sol = Solution(w=W, b=0.0, alpha=A, method="exact", n_iter=info["epochs"],
                           provenance={"route": route, "epochs": info["epochs"],
                                       "rounds": info["rounds"]})
        else:
            from .formulations.base import solve_formulation     # loads cvxpy: on use only
            build = crammer_singer_dual if route == "exact-dual" else crammer_singer_primal
            form = build(self.X, self.codes, K, C)
            info = solve_formulation(form, solver, **options)
            if route == "exact-dual":
                A = np.asarray(form.variables["A"].value, dtype=float)
                W = A.T @ self.X
            else:
                W, A = np.asarray(form.variables["W"].value, dtype=float), None
            sol = Solution(w=W, b=0.0, alpha=A, method="exact", n_iter=info.iterations,
                           provenance={**info.provenance(), "route": route})
            if A is not None:       # the interior point's multipliers, finished exactly
                Wp, Ap, cert = polish_dual(self.X, self.codes, K, C, A, cert_tol)
                if cert["passed"]:
                    sol.w, sol.alpha = Wp, Ap
                    sol.provenance["polished"] = True
        sol.provenance["fingerprint"] = self.fingerprint()
        sol.report = self.certificate(sol, cert_tol)
        sol.objective = sol.report.primal_objective
        return sol

    def certificate(self, solution: Solution, tol: float = 1e-6,
                    gap_tol: float = 1e-9) -> CrammerSingerReport:
        """The certificate (:mod:`convexlearn.certify.crammer_singer`), recomputed from the
        data; without multipliers (a primal-only answer) the dual point is the
        active-set finish's on W's active classes (:meth:`_dual_for`)."""
        check_same_problem(solution, self.fingerprint(), "CrammerSingerSVM.certificate")
        W = np.asarray(solution.w, dtype=float)
        if W.shape != (self.n_classes, self.X.shape[1]):
            raise ParameterError(f"solution.w must have shape ({self.n_classes}, "
                                 f"{self.X.shape[1]}); got {W.shape}")
        A = solution.alpha
        if A is None:
            A = self._dual_for(W)
        return CrammerSingerReport(crammer_singer_certificate(
            self.X, self.codes, self.C_bounds, W, np.asarray(A, dtype=float),
            check_positive("tol", tol), check_positive("gap_tol", gap_tol)))

    def _dual_for(self, W: np.ndarray) -> np.ndarray:
        """Multipliers for a primal-only W: the active-set finish on the classes that attain
        each sample's max within 1e-6 (those an optimal dual puts mass on)."""
        sets = sets_from_scores(self.X, self.codes, W)
        return finish_sets(self.X, self.codes, self.n_classes, self.C_bounds, sets)[1]

    def decision_function(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """<w_m, x> for every class m: shape (n, K)."""
        Xn = self.X if X is None else np.asarray(as_features(X, sparse="densify"), float)
        if Xn.shape[1] != self.X.shape[1]:
            raise ParameterError(f"X has {Xn.shape[1]} features; the model was built with "
                                 f"{self.X.shape[1]}")
        return Xn @ np.asarray(solution.w, dtype=float).T

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """The class of the largest decision value (ties to the first class)."""
        return self.classes[np.argmax(self.decision_function(solution, X), axis=1)]

    def primal_objective(self, solution: Solution) -> float:
        """P(W), recomputed from the data."""
        W = np.asarray(solution.w, dtype=float)
        return crammer_singer_certificate(self.X, self.codes, self.C_bounds, W,
                                          np.zeros((self.n_samples, self.n_classes)))["primal"]
