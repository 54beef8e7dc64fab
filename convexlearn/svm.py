"""The support vector machine: one problem, exact formulations and iterative methods.

C-form (DESIGN.md section 1)::

    min_{w, b}  1/2 ||w||^2 + C sum_i max(0, 1 - y_i (<w, phi(x_i)> + b))

hard margin (``C=None`` or ``inf``): ``min 1/2 ||w||^2  s.t.  y_i f(x_i) >= 1``.
Decision function f(x) = <w, x> + b, or f(x) = sum_i alpha_i y_i k(x_i, x) + b.
Labels: sorted classes, ``classes[0] -> -1``, ``classes[1] -> +1``.
"""

from __future__ import annotations

import importlib
import inspect
import math

import numpy as np

from .certify.kkt import KKTReport, gram_factor, kkt_report, solution_multipliers
from .data import (as_binary_labels, as_features, as_sample_weight, backend_class,
                   check_bool, check_C, check_count, check_nonnegative, check_positive)
from .errors import (DataError, InfeasibleError, NotApplicableError, ParameterError,
                     SolverError, UnboundedError)
from .formulations.base import solve_formulation
from .formulations.svm import svm_dual, svm_primal
from .kernels import DEFAULT_PSD_TOL, PSDCheck, check_gram, check_psd, make_kernel
from .solution import Solution, Timer
from .solvers.polish import intercept_from_alpha, polish_alpha

__all__ = ["SVM", "EXACT_METHODS", "ITERATIVE_METHODS"]

EXACT_METHODS = ("exact", "exact-primal", "exact-primal-hinge", "exact-dual")

#: Iterative methods: name -> "module:function" under convexlearn.solvers; each function
#: takes the SVM and keyword options and returns a Solution.
ITERATIVE_METHODS: dict[str, str] = {"subgradient": "svm_subgradient:solve_svm",
                                     "pegasos": "pegasos:solve_svm", "smo": "smo:solve_svm",
                                     "dcd": "dcd:solve_svm"}

_INFEASIBLE_HINT = ("the hard-margin SVM is infeasible: no hyperplane separates the two classes "
                    "with margin. cl.Halfspace(X, y).check() decides linear separability and "
                    "returns a certificate; use a finite C for the soft margin")


class SVM:
    """A binary SVM problem in C-form, with its exact and iterative solutions.

    Parameters
    ----------
    X : array_like of shape (n, d), or (n, n) Gram matrix when ``kernel="precomputed"``
    y : array_like of shape (n,)
        Any two distinct labels; mapped by sorting (classes[0] -> -1, classes[1] -> +1).
    C : float or None
        Cost of the slack; ``None`` or ``inf`` gives the hard margin.
    kernel : str or callable
        "linear", "poly", "rbf", "sigmoid", "precomputed", or ``k(A, B)``.
    intercept : bool
        False gives the homogeneous problem (b = 0, no constraint y^T alpha = 0).
    gamma, degree, coef0 :
        Kernel parameters (scikit-learn's SVC defaults: "scale", 3, 0).
    repair_psd : bool
        For kernels that are not PSD by construction (sigmoid, precomputed, callables):
        clip negative eigenvalues instead of refusing an indefinite Gram matrix; the
        repair is reported in ``psd_check`` and in each solution's ``extra``.
    sample_weight : array_like of shape (n,), optional
        Nonnegative weights s_i (soft margin only): sample i costs C s_i, i.e. the box of
        the dual becomes 0 <= alpha_i <= C s_i. Weight 0 removes a sample; an integer
        weight k equals k copies of it (``gamma="scale"`` uses the weighted variance, so
        this holds for it too).
    psd_tol : float
        Relative round-off tolerance of the PSD check (lambda_min >= -psd_tol ||K||_2).

    Attributes
    ----------
    X : ndarray or None
        Training features (None for a precomputed kernel).
    y : ndarray of {-1.0, +1.0}
    classes : ndarray
        The two original labels, sorted.
    label_map : LabelMap
    C : float
    kernel : Kernel
    """

    def __new__(cls, X=None, *args, **kwargs):
        # A dask array (or another registered kind) builds its subclass, before any
        # conversion to numpy (data.ARRAY_BACKENDS).
        if cls is SVM:
            cls = backend_class("SVM", X, SVM)
        return super().__new__(cls)

    def __init__(self, X, y, C=1.0, kernel="linear", intercept: bool = True, *,
                 gamma="scale", degree=3, coef0=0.0, sample_weight=None,
                 repair_psd: bool = False, psd_tol: float = DEFAULT_PSD_TOL):
        precomputed = isinstance(kernel, str) and kernel == "precomputed"
        y_arr = np.asarray(y)
        n = y_arr.shape[0] if y_arr.ndim >= 1 else None
        if precomputed:
            self._K = check_gram(X, n=n)
            self.X = None
        else:
            self.X = as_features(X)
            self._K = None
        n_rows = (self._K if precomputed else self.X).shape[0]
        self.y, self.label_map = as_binary_labels(y, n=n_rows)
        self.C = check_C(C)
        self.sample_weight = self._check_weights(sample_weight)
        self.kernel = make_kernel(kernel, self.X, gamma=gamma, degree=degree, coef0=coef0,
                                  sample_weight=self.sample_weight)
        self.intercept = check_bool("intercept", intercept)
        self.repair_psd = check_bool("repair_psd", repair_psd)
        self.psd_tol = check_nonnegative("psd_tol", psd_tol)
        self.psd_check: PSDCheck | None = None
        self._gram_factor: np.ndarray | None = None

    def _check_weights(self, sample_weight) -> np.ndarray | None:
        if sample_weight is not None and self.hard_margin:
            raise ParameterError("sample_weight needs a finite C: the hard-margin SVM has no "
                                 "per-sample cost to weight")
        weights = as_sample_weight(sample_weight, self.n_samples)
        if weights is not None:
            for label in (-1, 1):
                if not np.any(weights[self.y == label] > 0):
                    original = self.label_map.to_labels(np.array([label]))[0]
                    original = original.item() if hasattr(original, "item") else original
                    raise DataError(f"every sample of class {original!r} has weight 0: with "
                                    f"them removed one class is left, and there is nothing "
                                    f"to separate")
        return weights

    # ------------------------------------------------------------------ basics
    @property
    def C_bounds(self):
        """Upper bounds of the multipliers: C, or the vector C s_i with sample weights."""
        return self.C if self.sample_weight is None else self.C * self.sample_weight

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.y.shape[0]

    @property
    def classes(self) -> np.ndarray:
        """The two original labels, sorted (classes[0] -> -1, classes[1] -> +1)."""
        return self.label_map.classes

    @property
    def hard_margin(self) -> bool:
        """True when C is infinite (C=None or inf): the hard-margin problem
        min 1/2 ||w||^2 s.t. y_i f(x_i) >= 1.
        """
        return math.isinf(self.C)

    @property
    def gram(self) -> np.ndarray:
        """The training Gram matrix K, PSD-checked (computed once)."""
        if self._K is None:
            self._K = self.kernel(self.X)
        if self.psd_check is None:
            if self.kernel.known_psd:
                self.psd_check = PSDCheck(float("nan"), float("nan"), skipped=True)
            else:
                self._K, self.psd_check = check_psd(self._K, tol=self.psd_tol,
                                                    repair=self.repair_psd,
                                                    name=f"{self.kernel.describe()} Gram matrix")
        return self._K

    @property
    def gram_factor(self) -> np.ndarray:
        """Phi with Phi Phi^T = K (eigen-factor of the Gram matrix), computed once."""
        if self._gram_factor is None:
            self._gram_factor = gram_factor(self.gram)
        return self._gram_factor

    def describe(self) -> str:
        """One line: C or hard margin (and "weighted"), kernel, intercept and n (in the repr)."""
        margin = "hard-margin" if self.hard_margin else f"C={self.C:g}"
        if self.sample_weight is not None:
            margin += ", weighted"
        return (f"SVM ({margin}, kernel={self.kernel.describe()}, "
                f"{'with' if self.intercept else 'without'} intercept, n={self.n_samples})")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    # ------------------------------------------------------------ formulations
    def _data_args(self) -> dict:
        return {"X": self.X} if self.kernel.is_linear else {"K": self.gram}

    def _check_primal_form(self, form: str) -> str:
        if form not in ("slack", "hinge"):
            raise ParameterError(f"unknown primal form {form!r}; valid: 'slack', 'hinge'")
        if form == "hinge" and self.hard_margin:
            raise NotApplicableError(
                "the hinge form needs a finite C: the hard-margin SVM has no hinge penalty "
                "(it is the slack form with xi = 0); use form='slack' or the dual")
        return form

    def _primal_formulation(self, form: str):
        return svm_primal(self.y, self.C, self.intercept, self._check_primal_form(form),
                          weights=self.sample_weight, **self._data_args())

    def primal(self, form: str = "slack"):
        """The primal problem as a ``cvxpy.Problem`` (``form="slack"`` or ``"hinge"``).

        Linear kernel: variables w, b, xi. Other kernels: the expansion coefficients
        beta of f = K beta + b, with ||w||^2 = beta^T K beta.
        """
        return self._primal_formulation(form).problem

    def dual(self):
        """The dual problem as a ``cvxpy.Problem`` (a QP in alpha)."""
        return svm_dual(self.y, self.C, self.intercept, weights=self.sample_weight,
                        **self._data_args()).problem

    # ----------------------------------------------------------------- solving
    def default_exact_method(self) -> str:
        """The exact formulation used by ``solve()``: the dual, for every kernel and shape.

        Measured (benchmarks/bench_exact_svm.py, n=5000, d=50): the linear dual in factor
        form 1/2 ||X^T (y * alpha)||^2 solves 2x faster than the primal, with many or with
        few support vectors; nonlinear kernels have no cheaper primal (the expansion form
        carries the same n x n matrix, singular for low-rank kernels).
        """
        return "exact-dual"

    def solve(self, method: str = "exact", *, solver: str | None = None, tol: float = 1e-6,
              kkt_tol: float | None = None, polish: bool = True, **options) -> Solution:
        """Solve the problem and attach its KKT report.

        Parameters
        ----------
        method : str
            "exact" (the fastest exact formulation), "exact-primal", "exact-primal-hinge",
            "exact-dual", or an iterative method ("subgradient", "pegasos", "smo", "dcd").
        solver : str, optional
            cvxpy solver for the exact methods (default Clarabel).
        tol : float
            Stopping tolerance of iterative methods.
        kkt_tol : float, optional
            Tolerance of the KKT check that decides the status (default: 1e-6 for the exact
            methods, whatever ``tol``; ``tol`` clipped to [1e-6, 1e-3] for the iterative
            ones, so that "optimal" never means a loose answer).
        polish : bool
            Exact methods only: refine the interior-point multipliers on their active set
            (:mod:`convexlearn.solvers.polish`) and keep the refined point when its KKT
            report is no worse. ``provenance["polished"]`` says whether it was kept.
        **options
            Passed to the solver (cvxpy options, or the iterative method's options).

        Returns
        -------
        Solution
            ``status`` is "optimal" only when the solver says so *and* the KKT report
            passes; the report is in ``solution.report``.

        Raises
        ------
        InfeasibleError
            Hard margin on data that are not linearly separable.
        """
        if kkt_tol is None:     # capped: smo at tol=10 was "optimal" at alpha = 0
            kkt_tol = 1e-6 if method in EXACT_METHODS else min(max(tol, 1e-6), 1e-3)
        kkt_tol = check_positive("kkt_tol", kkt_tol)
        if method in EXACT_METHODS:
            solution = self._solve_exact(method, solver, polish=polish, kkt_tol=kkt_tol,
                                         **options)
        elif method in ITERATIVE_METHODS:
            if options.get("loss", "hinge") != "hinge":
                raise NotApplicableError(
                    f"SVM.solve solves the hinge-loss SVM; loss={options['loss']!r} is another "
                    f"problem, whose KKT conditions this report does not check. Use "
                    f"cl.ERM(X, y, loss={options['loss']!r}, penalty='l2') or call "
                    f"convexlearn.solvers.{ITERATIVE_METHODS[method].split(':')[0]} directly")
            if self.sample_weight is not None:
                raise NotApplicableError(
                    f"method {method!r} does not take sample weights; the exact methods do "
                    f"(per-sample cost C s_i)")
            module_name, func_name = ITERATIVE_METHODS[method].split(":")
            func = getattr(importlib.import_module(f"convexlearn.solvers.{module_name}"), func_name)
            accepted = set(inspect.signature(func).parameters) - {"svm", "tol"}
            unknown = sorted(set(options) - accepted)
            if unknown:
                raise ParameterError(f"method {method!r} has no option(s) {unknown}; valid: "
                                     f"{', '.join(sorted(accepted))}")
            if options.get("max_iter") is not None:
                options["max_iter"] = check_count("max_iter", options["max_iter"])
            solution = func(self, tol=tol, **options)
        else:
            valid = list(EXACT_METHODS) + list(ITERATIVE_METHODS)
            raise ParameterError(f"unknown SVM method {method!r}; valid: "
                                 f"{', '.join(map(repr, valid))}")
        report = solution.report
        if report is None or report.tol != kkt_tol:     # the polish already checked its point
            report = self.kkt(solution, tol=kkt_tol)
        solution.report = report
        if solution.status in ("optimal", "converged"):
            solution.status = "optimal" if report.passed else "inaccurate"
        return solution

    def _solve_exact(self, method: str, solver: str | None, polish: bool = True,
                     kkt_tol: float = 1e-6, **options) -> Solution:
        """Solve one exact formulation; on a failure or an infeasible/unbounded claim, the
        other one; a claim of infeasibility is raised only when both formulations make it
        and, for the hard margin, the separability LP does not contradict it."""
        timer = Timer()
        auto = method == "exact"
        if auto:
            method = self.default_exact_method()
        other = "exact-primal" if method == "exact-dual" else "exact-dual"
        failures = []
        for attempt in (method, other):
            try:
                solution = self._solve_formulation(attempt, solver, **options)
            except (InfeasibleError, UnboundedError, SolverError) as exc:
                failures.append((attempt, exc))
                continue
            if failures:
                solution.provenance["fallback_from"] = {m: str(e) for m, e in failures}
            break
        else:
            raise self._exact_failure(failures)
        if polish:
            solution = self._polished(solution, kkt_tol)
        if auto and not failures:
            solution = self._second_opinion(solution, other, solver, polish, kkt_tol, options)
        solution.time_s = timer()
        if self.psd_check is not None:
            solution.extra["psd_check"] = self.psd_check
        return solution

    def _second_opinion(self, solution: Solution, other: str, solver, polish: bool,
                        kkt_tol: float, options: dict) -> Solution:
        """method="exact": when the first formulation's point fails its KKT check, solve
        the other one too and keep the point with the better report (found in review: on
        iris scaled by 1e-4 the dual's point failed at 1.9e-4, the primal's passed)."""
        report = solution.report
        if report is None or report.tol != kkt_tol:
            report = solution.report = self.kkt(solution, tol=kkt_tol)
        if report.passed:
            return solution
        try:
            alt = self._solve_formulation(other, solver, **options)
        except (InfeasibleError, UnboundedError, SolverError):
            return solution
        if polish:
            alt = self._polished(alt, kkt_tol)
        alt_report = alt.report if alt.report is not None and alt.report.tol == kkt_tol \
            else self.kkt(alt, tol=kkt_tol)
        alt.report = alt_report
        if alt_report.max_violation < report.max_violation:
            alt.provenance["fallback_from"] = {
                solution.method: f"its point failed the KKT check (max violation "
                                 f"{report.max_violation:.3g} > {kkt_tol:g})"}
            return alt
        return solution

    def _solver_data(self) -> tuple[dict, float, np.ndarray | None]:
        """The data the exact solvers see: (X or K scaled, kappa, shift).

        kappa = mean_i k(x_i, x_i): the solvers see K / kappa and C kappa. The SVM is
        equivariant under this scaling (alpha -> kappa alpha, w -> sqrt(kappa) w in the
        scaled features, objective -> kappa objective: the C-scaling law), so the
        interior-point method works on unit-scale data whatever the units of X. With an
        intercept the linear SVM is also translation invariant (b absorbs <w, mu>), so the
        linear data are centred first (``shift`` = the mean): far-from-origin clouds stay
        well conditioned.
        """
        def safe(kappa: float) -> float:
            return kappa if math.isfinite(kappa) and kappa > 0 else 1.0
        if self.kernel.is_linear and self._K is None:
            shift = self.X.mean(axis=0) if self.intercept else None
            Xs = self.X - shift if shift is not None else self.X
            kappa = safe(float(np.mean(np.einsum("ij,ij->i", Xs, Xs))))
            return {"X": Xs / math.sqrt(kappa)}, kappa, shift
        kappa = safe(float(np.mean(np.diag(self.gram))))
        return {"K": self.gram / kappa}, kappa, None

    def _solve_formulation(self, method: str, solver: str | None, **options) -> Solution:
        data, kappa, shift = self._solver_data()
        C = self.C * kappa
        if method == "exact-dual":
            form = svm_dual(self.y, C, self.intercept, weights=self.sample_weight, **data)
        else:
            form_name = self._check_primal_form("hinge" if method.endswith("hinge") else "slack")
            form = svm_primal(self.y, C, self.intercept, form_name, weights=self.sample_weight,
                              **data)
        info = solve_formulation(form, solver, **options)
        if method == "exact-dual":
            # alpha is translation invariant on y^T alpha = 0; b is recomputed on X itself.
            solution = self._from_dual(np.asarray(form.variables["alpha"].value) / kappa)
        else:
            solution = self._from_primal(form, kappa)
            if shift is not None:
                solution.b -= float(solution.w @ shift)
        solution.method = method
        solution.status = info.status
        solution.n_iter = info.iterations
        solution.objective = float(form.problem.value) / kappa
        solution.provenance = {**info.provenance(), "formulation": form.name,
                               "normalization": kappa, "polished": False}
        return solution

    def _exact_failure(self, failures) -> Exception:
        """The error to raise when every exact formulation failed."""
        detail = "; ".join(f"{m}: {e}" for m, e in failures)
        claims = all(isinstance(e, (InfeasibleError, UnboundedError)) for _, e in failures)
        if not (self.hard_margin and claims):
            return SolverError(f"every exact formulation of the {self.describe()} failed "
                               f"({detail})")
        # Both formulations say "no separating hyperplane with margin": ask the LP.
        try:
            verdict = self.feature_space_separability()
        except DataError as exc:       # homogeneous with a zero vector: never separable
            return InfeasibleError(f"{_INFEASIBLE_HINT} ({exc})")
        if verdict.separable:
            return SolverError(
                f"the solvers reported the hard-margin SVM infeasible, but the data are "
                f"separable (verified: {verdict.verified}): a numerical failure ({detail})")
        if not verdict.verified:     # three floating-point claims, no proof: undecided
            return SolverError(
                f"the solvers reported the hard-margin SVM infeasible and the separability "
                f"LP says 'not separable', but its certificate did not verify: not proven "
                f"either way (margins this small are below floating-point resolution); use a "
                f"finite C, or cl.Halfspace(X, y).check(exact=True) ({detail})")
        return InfeasibleError(f"{_INFEASIBLE_HINT} (both formulations agree, and the "
                               f"separability LP returns a verified certificate)")

    def feature_space_separability(self):
        """Are the data linearly separable in the kernel's feature space?

        The separability LP (:class:`~convexlearn.halfspace.Halfspace`, homogeneous when the
        problem has no intercept) on X for the linear kernel, on the Gram matrix otherwise:
        f(x_i) = sum_j beta_j K_ji + b is linear in beta, so the hard-margin SVM is feasible
        iff ``Halfspace(K, y)`` is separable.

        Returns
        -------
        SeparabilityResult
            Without margin and slack (only the verdict and its verified certificate).
        """
        from .halfspace import Halfspace
        features = self.X if self.kernel.is_linear and self._K is None else self.gram
        return Halfspace(features, self.y, homogeneous=not self.intercept).check(
            margin=False, slack=False)

    def _kernel_block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if self._K is not None or not self.kernel.is_linear:
            return self.gram[np.ix_(rows, cols)]
        return self.X[rows] @ self.X[cols].T

    def _polished(self, solution: Solution, kkt_tol: float) -> Solution:
        """Return the active-set polished solution if its KKT report is no worse.

        Starting multipliers: the solver's (or the report's reconstruction); for a
        solution without multipliers (hinge form) also reconstructions with wider margin
        bands, since the interior point leaves margins ~1e-5 off. A polished point whose
        KKT report passes is certified by the data alone and gets status "optimal" even if
        the solver said optimal_inaccurate (kept in provenance["cvxpy_status"]).
        """
        before = self.kkt(solution, tol=kkt_tol)
        starts = [before.alpha]
        if solution.alpha is None:
            starts += [solution_multipliers(self, solution, band)[0]
                       for band in (1e-3, 1e-2, 1e-1)]
        best, best_report = None, before
        for alpha0 in starts:
            refined = polish_alpha(self.y, self.C_bounds, alpha0, self.intercept,
                                   self._kernel_block)
            if refined is None:
                continue
            candidate = self._from_dual(refined[0], b=refined[1])
            report = self.kkt(candidate, tol=kkt_tol)
            if report.max_violation <= best_report.max_violation:
                best, best_report = candidate, report
        if best is None:
            return solution
        best.method, best.n_iter, best.report = solution.method, solution.n_iter, best_report
        best.status = "optimal" if best_report.passed else solution.status
        best.objective = self.primal_objective(best)
        best.provenance = {**solution.provenance, "polished": True,
                           "unpolished_max_violation": before.max_violation,
                           "unpolished_objective": solution.objective}
        return best

    def _from_primal(self, form, kappa: float = 1.0) -> Solution:
        """Read (w or beta, b, xi, alpha) off a primal solved on data scaled by 1/kappa."""
        v = form.variables
        b = float(v["b"].value) if "b" in v else 0.0
        margin = form.constraints.get("margin")
        alpha = (None if margin is None
                 else np.maximum(np.asarray(margin.dual_value, float), 0.0) / kappa)
        xi = np.asarray(v["xi"].value, float) if "xi" in v else None
        if "w" in v:
            w = np.asarray(v["w"].value, float) / math.sqrt(kappa)
            return Solution(w=w, b=b, alpha=alpha, xi=xi)
        beta = np.asarray(v["beta"].value, float) / kappa
        return Solution(w=None, b=b, alpha=alpha, xi=xi, dual_coef=beta)

    def _from_dual(self, alpha, b: float | None = None) -> Solution:
        alpha = np.clip(np.asarray(alpha, float), 0.0, self.C_bounds)
        beta = self.y * alpha
        if self.kernel.is_linear:
            w = self.X.T @ beta
            g = self.X @ w
        else:
            w = None
            g = self.gram @ beta
        if not self.intercept:
            b, rule = 0.0, "no intercept"
        elif b is not None:
            rule = "active-set polish"
        else:
            b, rule = intercept_from_alpha(self.y, self.C_bounds, alpha, g)
        xi = None if self.hard_margin else np.maximum(0.0, 1.0 - self.y * (g + b))
        sol = Solution(w=w, b=b, alpha=alpha, xi=xi, dual_coef=beta)
        sol.extra["intercept_rule"] = rule
        return sol

    # ------------------------------------------------------------------ checks
    def kkt(self, solution: Solution, tol: float = 1e-6) -> KKTReport:
        """Check a solution against the KKT conditions, recomputed from the data.

        Works for any solution: with w (linear kernel) or a kernel expansion
        (``dual_coef``), with or without multipliers. Missing multipliers are taken from
        the expansion (alpha = y beta) or, for a primal-only linear solution, rebuilt by
        bounded least squares (:func:`~convexlearn.certify.kkt.reconstruct_multipliers`);
        the report's ``notes`` say which. Tolerances: see :mod:`convexlearn.certify.kkt`.
        """
        return kkt_report(self, solution, tol)

    # -------------------------------------------------------------- evaluation
    def decision_function(self, solution: Solution, X=None) -> np.ndarray:
        """f(x) for the training samples (``X=None``) or new samples.

        For ``kernel="precomputed"``, pass the (m, n) kernel between new and training
        samples.
        """
        if X is None:
            if self.kernel.is_linear and solution.w is not None:
                return self.X @ solution.w + solution.b
            return self.gram @ self._expansion(solution) + solution.b
        if self.kernel.name == "precomputed":
            K_new = as_features(X, name="K")
            if K_new.shape[1] != self.n_samples:
                raise ParameterError(f"a precomputed test kernel needs {self.n_samples} "
                                     f"columns; got shape {K_new.shape}")
            return K_new @ self._expansion(solution) + solution.b
        X = as_features(X)
        if X.shape[1] != self.X.shape[1]:
            raise ParameterError(f"X has {X.shape[1]} features; the model was built with "
                                 f"{self.X.shape[1]}")
        if self.kernel.is_linear and solution.w is not None:
            return X @ solution.w + solution.b
        return self.kernel(X, self.X) @ self._expansion(solution) + solution.b

    def predict(self, solution: Solution, X=None) -> np.ndarray:
        """Predicted labels in the original classes (sign(0) = +1)."""
        return self.label_map.to_labels(self.decision_function(solution, X))

    def _expansion(self, solution: Solution) -> np.ndarray:
        if solution.dual_coef is not None:
            return np.asarray(solution.dual_coef, float)
        if solution.alpha is not None:
            return self.y * np.asarray(solution.alpha, float)
        raise NotApplicableError("this solution has neither w nor a kernel expansion")

    def primal_objective(self, solution: Solution) -> float:
        """P(w, b) = 1/2 ||w||^2 + sum_i C_i max(0, 1 - m_i), recomputed from the data.

        For the hard margin, 1/2 ||w||^2 (inf when a margin constraint is violated by
        more than 1e-6, the default tolerance of the KKT check).
        """
        f = self.decision_function(solution)
        if self.kernel.is_linear and solution.w is not None:
            w2 = float(solution.w @ solution.w)
        else:
            beta = self._expansion(solution)
            w2 = float(beta @ (self.gram @ beta))
        hinge = np.maximum(0.0, 1.0 - self.y * f)
        if self.hard_margin:
            return 0.5 * w2 if hinge.max() <= 1e-6 else math.inf
        return 0.5 * w2 + float(np.sum(self.C_bounds * hinge))

    def dual_objective(self, alpha) -> float:
        """D(alpha) = sum_i alpha_i - 1/2 alpha^T Q alpha (no feasibility check)."""
        alpha = np.asarray(alpha, float)
        ya = self.y * alpha
        if self.kernel.is_linear:
            v = self.X.T @ ya
            return float(alpha.sum() - 0.5 * v @ v)
        return float(alpha.sum() - 0.5 * ya @ (self.gram @ ya))

