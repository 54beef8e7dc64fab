"""Regularized empirical risk minimization: one problem, exact and iterative solutions.

Lambda-form (docs/conventions.md)::

    F(w, b) = (1/n) sum_i loss(y_i, <w, x_i> + b) + lam * R(w),    b unpenalized

Conversions to other conventions (tested in tests/test_erm_sklearn.py):

* soft-margin SVM, hinge + l2: lam = 1/(n C) and F_SVM = n C * F_ERM;
* scikit-learn ``Lasso(alpha)`` minimizes 1/(2n) ||y - X w - b||^2 + alpha ||w||_1:
  with the squared loss (y - f)^2 and R = ||w||_1, F = 2 * F_Lasso when lam = 2 alpha;
  ``ElasticNet(alpha, l1_ratio)`` likewise with R = elastic_net(l1_ratio), lam = 2 alpha;
* ``Ridge(alpha)`` minimizes ||y - X w - b||^2 + alpha ||w||^2: with R = 1/2 ||w||^2,
  F = F_Ridge / n when lam = 2 alpha / n;
* ``LogisticRegression(C)`` (penalty l2, unpenalized intercept) minimizes
  C sum_i log(1 + exp(-m_i)) + 1/2 ||w||^2: F = F_LR / (n C) when lam = 1/(n C).

Labels: a classification loss maps any two labels to {-1, +1} (sorted, classes[0] -> -1);
a regression loss takes real targets.
"""

from __future__ import annotations

from typing import Any

import math


import numpy as np
from numpy.typing import ArrayLike

from .certify.optimality import (OptimalityReport, column_rms, certificate, null_scale,
                                 recession_direction)
from .data import (as_binary_labels, as_features, as_sample_weight, as_targets, backend_class,
                   check_bool, check_nonnegative, check_solve_options, check_solver,
                   check_tol, dense_or_refuse, is_sparse)
from .errors import NotApplicableError, ParameterError, SolverError, UnboundedError
from .fingerprints import DataDigest, Deferred, problem_fingerprint
from .formulations.erm import erm_problem
from .losses import loss_parameters, make_loss
from .path import Path
from .penalties import make_penalty
from .logs import logged_solve
from .routes import erm as routes
from .routes import erm_path
from .solution import Solution, check_same_problem
from .solvers.erm.oracle import ERMOracle

__all__ = ["ERM", "ITERATIVE_METHODS", "METHODS"]

ITERATIVE_METHODS = routes.ITERATIVE_METHODS
METHODS = routes.METHODS
ITERATIVE_TOL = routes.ITERATIVE_TOL


class ERM:
    """A regularized ERM problem F(w, b) = (1/n) sum_i loss(y_i, f(x_i)) + lam R(w).

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
        Two class labels for a classification loss, real targets for "squared".
    loss : str or Loss
        See :mod:`convexlearn.losses`.
    penalty : str or Penalty
        See :mod:`convexlearn.penalties`.
    lam : float >= 0
    intercept : bool
        Fit an unpenalized b (else b = 0).
    sample_weight : array_like (n,), optional
        s_i >= 0: the loss term is (1/sum s) sum_i s_i loss_i (integer weights are copies
        of samples; lam keeps its meaning). A weight of 0 removes the sample.
    **params
        Of the loss (``quantile``, ``epsilon``, ``delta``) or the penalty (``p``, ``l1_ratio``).
    """

    def __new__(cls, X=None, *args, **kwargs):
        # a registered array kind (dask: data.ARRAY_BACKENDS) builds its subclass first
        return super().__new__(backend_class("ERM", X, ERM) if cls is ERM else cls)

    def __init__(self, X: ArrayLike, y: ArrayLike, loss: Any = "logistic", penalty: Any = "l2",
                 lam: float = 0.1, intercept: bool = True, *, sample_weight: Any = None,
                 **penalty_params: Any):
        self.loss = _loss_with_params(loss, penalty_params)
        self.penalty = make_penalty(penalty, **penalty_params)
        # scipy.sparse X stays sparse: the iterative methods use products only; the cvxpy
        # route, the closed forms and the certificate densify it below a limit (data.py)
        self.X = as_features(X, sparse="keep")
        n = self.X.shape[0]
        if self.loss.task == "classification":
            self.y, self.label_map = as_binary_labels(y, n=n)
        else:
            self.y, self.label_map = as_targets(y, n=n), None
        self.intercept = check_bool("intercept", intercept)
        self.sample_weight = as_sample_weight(sample_weight, n)
        self._lam = check_nonnegative("lam", lam)
        self._formulation = self._recession = self._last_report = None
        self._references: dict[float, Solution] = {}
        self._work: dict = {}

    # ------------------------------------------------------------------ basics
    @property
    def lam(self) -> float:
        """The regularization weight lam >= 0 (settable; validated on assignment)."""
        return self._lam

    @lam.setter
    def lam(self, value: Any) -> None:
        self._lam = check_nonnegative("lam", value)

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.X.shape[0]

    @property
    def classes(self) -> Any:
        """The two original labels, sorted (classes[0] -> -1); None for a regression loss."""
        return None if self.label_map is None else self.label_map.classes

    def describe(self) -> str:
        """One line: loss, penalty, lam, intercept, n and d (also the repr)."""
        return (f"ERM ({self.loss.describe()} loss, {self.penalty.describe()} penalty, "
                f"lam={self.lam:g}, {'with' if self.intercept else 'without'} intercept, "
                f"n={self.n_samples}, d={self.X.shape[1]})")

    __repr__ = describe

    def _dense(self, purpose: str) -> np.ndarray:
        """X dense: itself, or a sparse X densified below data.DENSIFY_LIMIT_BYTES (else a
        DataError giving the dense size); the dense copy is kept for later routes."""
        if is_sparse(self.X):
            if getattr(self, "_X_dense", None) is None:
                self._X_dense = dense_or_refuse(self.X, purpose)
            return self._X_dense
        return self.X

    def oracle(self) -> ERMOracle:
        """Values and derivatives of F at the current lam, for the iterative solvers."""
        return ERMOracle(self.X, self.y, self.loss, self.penalty, self.lam, self.intercept,
                         sample_weight=self.sample_weight)

    def objective(self, w: Any, b: float = 0.0) -> float:
        """F(w, b) recomputed from the data (the loss term weighted by sample_weight)."""
        w = np.asarray(w, dtype=float)
        f = self.X @ w + (b if self.intercept else 0.0)
        reg = self.lam * self.penalty.value(w) if self.lam > 0 else 0.0
        return float(np.average(self.loss.value(self.y, f), weights=self.sample_weight)) + reg

    def decision_function(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """f(x) = <w, x> + b on the training samples (``X=None``) or new ones."""
        X = self.X if X is None else as_features(X, sparse="keep")
        if X.shape[1] != self.X.shape[1]:
            raise ParameterError(f"X has {X.shape[1]} features; the model was built with "
                                 f"{self.X.shape[1]}")
        return X @ self._checked_w(solution.w) + solution.b

    def _checked_w(self, w) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if w.shape != (self.X.shape[1],):
            raise ParameterError(f"w has shape {w.shape}; this problem has "
                                 f"{self.X.shape[1]} features")
        return w

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """Labels (classification, sign(0) = +1) or real predictions (regression)."""
        f = self.decision_function(solution, X)
        return f if self.label_map is None else self.label_map.to_labels(f)

    # ------------------------------------------------------------- exact form
    def formulation(self) -> Any:
        """The cvxpy Formulation (built once; its ``lam`` Parameter tracks ``self.lam``)."""
        self._require_convex("exact")
        if self._formulation is None:
            self._formulation = erm_problem(self._dense("the exact ERM route (cvxpy)"), self.y,
                                            self.loss, self.penalty, self.lam,
                                            self.intercept, self.sample_weight)
        if "lam" in self._formulation.parameters:
            self._formulation.parameters["lam"].value = self.lam
        return self._formulation

    def problem(self) -> Any:
        """F as a ``cvxpy.Problem`` (DPP in the Parameter ``lam``)."""
        return self.formulation().problem

    # ----------------------------------------------------------------- checks
    def _require_convex(self, method: str) -> None:
        for part, name in ((self.loss, "loss"), (self.penalty, "penalty")):
            if not part.convex:
                raise NotApplicableError(
                    f"method {method!r} cannot solve {self.describe()}: the {part.name} {name} "
                    f"({part.formula}) is not convex; it is for evaluation only "
                    f"(ERM.objective evaluates it)")

    def _require_finite_minimizer(self) -> None:
        """Unregularized logistic/exponential loss: refuse separable data (no minimizer)."""
        _require_finite_minimizer(self)

    # ---------------------------------------------------------------- solving
    @logged_solve
    def solve(self, method: str = "exact", *, tol: float = 1e-8, certify: bool = True,
              cert_tol: float | None = None, solver: str | None = None, warm_start: Any = None,
              **options) -> Solution:
        """Solve the problem; its status rests on the relative certificate.

        Parameters
        ----------
        method : str
            "exact" (the fastest certified route, see :mod:`convexlearn.routes.erm`;
            ``provenance["route"]`` says which), "exact-primal" (the cvxpy problem),
            "closed-form" (squared loss with none/l2), "gd", "newton" (alias "irls"),
            "prox" (alias "ista"), "fista", "cd", "subgradient".
        tol : float
            Stopping tolerance of the iterative methods (see each solver).
        certify : bool
            Attach the certificate (:meth:`certificate`: relative distance of 0 to dF and
            relative duality gap; no reference optimum is computed). Always on for exact.
        cert_tol : float, optional
            Tolerance of the certificate that decides the status "optimal" (relative, see
            :class:`~convexlearn.certify.optimality.OptimalityReport`): default 1e-9 for
            the exact methods (``routes.erm.EXACT_TOL``), 1e-6 for the iterative ones.
        solver : str, optional
            cvxpy solver; given, the exact solve takes the cvxpy route only.
        warm_start : Solution, optional
            Starting point of an iterative method, or of the exact Newton / CD routes.
        verbose : bool or int
            Log this call on stderr through the ``convexlearn`` logger: True/1 at INFO (method,
            route, status, objective, time), 2 at DEBUG (with the optimality report).
        **options
            Passed to the iterative method (max_iter, callback, step, f_star, ...), or as
            cvxpy solver options to the exact cvxpy route.

        Raises
        ------
        NotApplicableError
            The method does not apply (the message names what it needs).
        UnboundedError
            No finite minimizer (unregularized logistic/exponential on separable data).
        """
        tol = check_tol("tol", tol)
        cert_tol = None if cert_tol is None else check_tol("cert_tol", cert_tol)
        certify, solver = check_bool("certify", certify), check_solver(solver)
        options = check_solve_options(options)     # seed, callback, max_iter, ... at the edge
        if warm_start is not None:
            check_same_problem(warm_start, None, "ERM.solve", "warm_start")
        return routes.solve(self, method, tol=tol, certify=certify, cert_tol=cert_tol,
                            solver=solver, warm_start=warm_start, options=options)

    def fingerprint(self) -> str:
        """sha256 of the data (X, y, sample weights) and the parameters (loss, penalty, lam,
        intercept), recorded in ``provenance["fingerprint"]`` by :meth:`solve`; compare
        refuses solutions of different problems."""
        return problem_fingerprint(_digest_box(self)(), _fingerprint_params(self))

    def deferred_fingerprint(self) -> Deferred:
        """:meth:`fingerprint` at the current parameters, hashed when first read (what
        :meth:`solve` records: a solve does not pay a pass over the data for it)."""
        digest, params = _digest_box(self), _fingerprint_params(self)
        return Deferred(lambda: problem_fingerprint(digest(), params))

    def reference(self) -> Solution:
        """The exact solution at the current lam (the fastest certified route; cached)."""
        if self.lam not in self._references:
            self.solve("exact")
        return self._references[self.lam]

    def path(self, lams: Any, method: str = "exact", *, exact: bool = False, **options) -> Path:
        """Solutions along ``lams`` (a :class:`~convexlearn.path.Path`, every point
        certified; ``self.lam`` is restored afterwards).

        ``exact=False``: each lam in the order given (the lasso: read off its exact homotopy
        path; else warm-started from the previous point, l1 / elastic net screened).
        ``exact=True`` (squared loss + l1, the lasso): the piecewise-linear path by homotopy
        from lam_max down to min(lams); ``values`` are its breakpoints, each certified, and
        ``Path.at(lam)`` interpolates exactly. See :mod:`convexlearn.routes.erm_path`.
        """
        return erm_path.path(self, lams, method=method, exact=check_bool("exact", exact),
                             options=options)

    def as_svm(self) -> Any:
        """Hinge + l2 as the SVM C = 1/(N lam), N = n or sum s (costs C s_i), F = F_SVM/(N C)."""
        from .svm import SVM
        N = self.n_samples if self.sample_weight is None else float(np.sum(self.sample_weight))
        return SVM(self.X, self.y, C=1.0 / (N * self.lam), kernel="linear",
                   intercept=self.intercept, sample_weight=self.sample_weight)

    def work_cache(self, name: str) -> dict:
        """A dict a route may keep data-only work in (X, y and intercept never change;
        lam does): e.g. coordinate descent's Gram matrix, reused along a path."""
        return self._work.setdefault(name, {})

    # ---------------------------------------------------------------- certify
    def certificate(self, solution: Solution, tol: float = 1e-9,
                    kink_tol: float = 1e-6, scores: Any = None, XTg: Any = None
                    ) -> OptimalityReport:
        """The relative certificate of a point (:func:`convexlearn.certify.optimality.
        certificate`): ``passed`` = relative distance of 0 to dF <= tol and relative duality
        gap <= tol (where defined). Remembered for the last point asked. ``scores``, ``XTg``
        and a route's multipliers: :func:`~.certify.optimality.subgradient_distance`."""
        w = self._checked_w(solution.w)
        b = float(solution.b) if self.intercept else 0.0
        key = (self.lam, float(tol), float(kink_tol), b, w.tobytes())
        if self._last_report is None or self._last_report[0] != key:
            if "col_sums" not in self._work:     # units, X^T 1 (from CD's pass over X, or here)
                rms, sums = self._work.get("cd", {}).get("column_stats") or (
                    column_rms(self.X), np.asarray(self.X.sum(axis=0)).ravel())
                self._work.update(units=np.where(rms > 0, rms, 1.0), col_sums=sums,
                                  null_scale=null_scale(self.loss, self.y, self.intercept))
            scores, XTg = (scores, XTg) if self.sample_weight is None else (None, None)
            self._last_report = (key, certificate(self.X, self.y, self.loss, self.penalty,
                                                  self.lam, self.intercept, w, b, tol,
                                                  kink_tol, self._work["units"],
                                                  self._work["col_sums"], scores, XTg,
                                                  self.sample_weight,
                                                  _solver_multipliers(self, solution),
                                                  self._work["null_scale"]))
        rep = self._last_report[1]
        return OptimalityReport(**{**rep.__dict__, "details": dict(rep.details)})

    def optimality(self, solution: Solution, tol: float = 1e-6, kink_tol: float = 1e-6,
                   reference: Any = None, suboptimality: bool = False) -> OptimalityReport:
        """The certificate at ``tol`` (relative; see :meth:`certificate`), and F - F* when
        asked (``suboptimality=True`` or a ``reference``).

        Parameters
        ----------
        solution : Solution
        tol : float
            ``passed`` = relative distance and relative gap <= tol (F - F* does not count).
        kink_tol : float
            Margins within kink_tol of a loss kink, and |w_j| <= kink_tol for l1 terms,
            count as on the kink (see :mod:`convexlearn.certify.optimality`).
        reference : Solution or float, optional, F* (or a solution: F at its (w, b), as F(x)).
        suboptimality : bool
            Compute F - F* against the exact optimum at this lam (the fastest certified
            route, solved once per lam and cached).
        """
        self._require_convex("optimality")
        self._require_finite_minimizer()
        tol, kink_tol = check_tol("tol", tol), check_nonnegative("kink_tol", kink_tol)
        check_same_problem(solution, None, "ERM.optimality")     # a Solution at all
        rep = self.certificate(solution, tol, kink_tol)
        if reference is None and suboptimality:
            try:
                reference = self.reference()
            except SolverError as exc:
                rep.details["reference_failed"] = str(exc)
                reference = math.nan
        if reference is not None:
            w = getattr(reference, "w", None)
            rep.optimal_objective = (float(getattr(reference, "objective", reference))
                                     if w is None else self.objective(w, reference.b))
            rep.suboptimality = rep.objective - rep.optimal_objective
        return rep


def _loss_with_params(loss: Any, params: dict) -> Any:
    """make_loss with the loss's own parameters taken out of ``params`` (the rest are the
    penalty's)."""
    named = loss_parameters(loss)
    return make_loss(loss, **{k: params.pop(k) for k in list(params) if k in named})


def _require_finite_minimizer(erm) -> None:
    """Unregularized logistic/exponential loss: refuse separable data (no minimizer)."""
    if not erm.loss.zero_only_at_infinity:
        return
    if not erm.penalty.has("zero") and erm.lam > 0:
        return
    if erm._recession is None:
        rows = (slice(None) if erm.sample_weight is None
                else erm.sample_weight > 0)      # weight 0: not in the problem
        erm._recession = recession_direction(
            erm._dense("the unboundedness check (separability LP)")[rows], erm.y[rows],
            erm.intercept)
    found, v, c, k = erm._recession
    if found:
        raise UnboundedError(
            f"{erm.describe()} has no finite minimizer: the data are linearly separable "
            f"(a direction (v, c) with y_i (<v, x_i> + c) >= 0 for all samples and > 0 for "
            f"{k} of them, found by the separability LP), so F decreases forever along "
            f"it. Use a penalty with lam > 0.")


def _fingerprint_params(erm: ERM) -> dict:
    return {"problem": "erm", "loss": erm.loss.describe(), "penalty": erm.penalty.describe(),
            "lam": erm.lam, "intercept": erm.intercept}


def _digest_box(erm: ERM) -> DataDigest:
    """The data digest, hashed once (every byte) for the problem and its solutions (not the
    problem itself: a solution keeps only the arrays alive until hashed); the weights
    count only when given (an unweighted fingerprint is unchanged)."""
    if erm.__dict__.get("_digest") is None:
        arrays = (erm.X, erm.y) + (() if erm.sample_weight is None else (erm.sample_weight,))
        erm._digest = DataDigest(*arrays)
    return erm._digest


def _solver_multipliers(erm: ERM, solution: Solution) -> Any:
    """The loss multipliers a route attached (the SVM route's), when they belong to this
    problem: n of them, and the solution's fingerprint (where it has one) is this
    problem's (a point certified on other data, e.g. duplicated samples, has none)."""
    g = solution.extra.get("loss_multipliers")
    if g is None or np.shape(g) != (erm.n_samples,):
        return None
    mark = solution.provenance.get("fingerprint")
    return g if mark is None or mark == erm.fingerprint() else None
