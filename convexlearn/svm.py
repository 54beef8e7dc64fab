"""The support vector machine: one problem, exact formulations and iterative methods.

C-form (docs/conventions.md)::

    min_{w, b}  1/2 ||w||^2 + C sum_i max(0, 1 - y_i (<w, phi(x_i)> + b))

hard margin (``C=None`` or ``inf``): ``min 1/2 ||w||^2  s.t.  y_i f(x_i) >= 1``.
Decision function f(x) = <w, x> + b, or f(x) = sum_i alpha_i y_i k(x_i, x) + b.
Labels: sorted classes, ``classes[0] -> -1``, ``classes[1] -> +1``.
"""

from __future__ import annotations

from typing import Any

import copy
import math

import numpy as np
from numpy.typing import ArrayLike

from .certify.kkt import KKTReport, gram_factor, kkt_report
from .data import (LabelMap, as_binary_labels, as_features, as_sample_weight, backend_class,
                   check_bool, check_C, check_nonnegative, check_positive,
                   check_solve_options, check_solver)
from .deprecation import renamed
from .errors import DataError, NotApplicableError, ParameterError
from .formulations.svm import svm_dual, svm_primal
from .gram import Gram
from .kernels import DEFAULT_PSD_TOL, Kernel, PSDCheck, check_gram, make_kernel
from .logs import logged_solve
from .routes import svm as routes
from .routes.halfspace import SeparabilityResult
from .path import Path
from .routes.svm_warm_path import svm_warm_path
from .fingerprints import DataDigest, Deferred, Provenance
from .solution import Solution, check_same_problem, check_solution_shapes, problem_fingerprint
from .solvers.kernel_svm.c_svc import c_svc_solution

__all__ = ["SVM", "EXACT_METHODS", "ITERATIVE_METHODS", "SVM_LOSSES", "checked_svm"]

#: The binary SVM problem of each ``loss`` of ``cl.SVM(..., loss=...)``: "hinge" (this
#: module's SVM) and the problems that register themselves ("squared_hinge":
#: :class:`convexlearn.svm_l2.SquaredHingeSVM`).
SVM_LOSSES: dict[str, type] = {}

EXACT_METHODS = routes.EXACT_METHODS
ITERATIVE_METHODS = routes.ITERATIVE_METHODS


class KernelSamples:
    """Training samples seen through a kernel: the Gram operator, and the decision function.

    The part of a kernel problem that is about the data, not the objective. Kernel access
    goes through ``gram_operator`` (:class:`~convexlearn.gram.Gram`: columns, blocks,
    products by blocks, the diagonal, the compiled spec, the PSD check); the methods here
    are its names on the problem. Subclasses set ``X`` (None for a precomputed kernel),
    ``kernel``, ``y`` and ``_gram`` (the operator; None where there is none, dask).
    """

    X: np.ndarray | None
    kernel: Kernel

    @property
    def gram_operator(self) -> Gram:
        """The problem's Gram operator (:class:`~convexlearn.gram.Gram`)."""
        return self._gram

    @property
    def gram_formed(self) -> bool:
        """True when the n x n Gram matrix is in memory (precomputed, shared, or formed)."""
        return self._gram is not None and self._gram.formed

    @property
    def psd_check(self) -> PSDCheck | None:
        """The PSD check of the formed Gram matrix (None before it was formed)."""
        return None if self._gram is None else self._gram.psd_check

    @property
    def gram(self) -> np.ndarray:
        """The training Gram matrix K, PSD-checked (computed once)."""
        K = self._gram.matrix
        self.X = self._gram.X          # (densified to form it)
        return K

    def share_gram(self, K: np.ndarray) -> None:
        """Use K = kernel(X, X), computed by the caller, as this problem's Gram matrix
        (one Gram matrix of all samples shared by the problems of a multiclass fit):
        :meth:`convexlearn.gram.Gram.share`, which raises ParameterError for a matrix of
        the wrong shape, kernel or samples."""
        self._gram.share(K)

    def densify(self, purpose: str) -> None:
        """Replace a sparse X by its dense copy for a method that needs dense rows (only
        below data.DENSIFY_LIMIT_BYTES; beyond, a DataError gives the dense size)."""
        self._gram.densify(purpose)
        self.X = self._gram.X

    def samples_fingerprint(self, *arrays, **params) -> str:
        """sha256 of the samples (X or K) and ``arrays`` (digest cached: every byte is read
        once), with ``params`` and the kernel's parameters: a problem's fingerprint."""
        return self.deferred_samples_fingerprint(*arrays, **params).make()

    def fingerprint(self) -> str:
        """The problem's fingerprint (``provenance["fingerprint"]``): its
        ``deferred_fingerprint()``, hashed now."""
        return self.deferred_fingerprint().make()

    def deferred_samples_fingerprint(self, *arrays, **params) -> Deferred:
        """:meth:`samples_fingerprint` at the current parameters, hashed when first read
        (what ``solve`` records: a small problem's solve, e.g. one of the 45 pairs of a
        one-vs-one fit, does not pay a pass over its data for it). The digest box is the
        problem's, shared by its copies (``with_C``): the data are hashed at most once."""
        if getattr(self, "_digest", None) is None:
            self._digest = DataDigest(self._gram.source, *arrays)
        digest, k = self._digest, self.kernel
        params = {**params, "kernel": (k.name, k.gamma, k.degree, k.coef0, k.function)}
        return Deferred(lambda: problem_fingerprint(digest(), params))

    def gram_products(self, B: Any) -> np.ndarray:
        """``K @ B`` for the training Gram matrix K, B of shape (n,) or (n, k), by blocks
        (:meth:`convexlearn.gram.Gram.products`: no n x n matrix for a kernel PSD by
        construction)."""
        return self._gram.products(B)

    @property
    def gram_factor(self) -> np.ndarray:
        """Phi with Phi Phi^T = K (eigen-factor of the Gram matrix), computed once."""
        if self._gram_factor is None:
            self._gram_factor = gram_factor(self.gram)
        return self._gram_factor

    def kernel_block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K[rows][:, cols] (:meth:`convexlearn.gram.Gram.block`)."""
        return self._gram.block(rows, cols)

    def decision_function(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """f(x) for the training samples (``X=None``) or new samples.

        For ``kernel="precomputed"``, pass the (m, n) kernel between new and training
        samples.
        """
        if X is None:
            if self.kernel.is_linear and solution.w is not None:
                return self.X @ solution.w + solution.b
            return self.gram_products(self.expansion(solution)) + solution.b
        if self.kernel.name == "precomputed":
            K_new = as_features(X, name="K")
            if K_new.shape[1] != self.n_samples:
                raise ParameterError(f"a precomputed test kernel needs {self.n_samples} "
                                     f"columns; got shape {K_new.shape}")
            return K_new @ self.expansion(solution) + solution.b
        X = as_features(X, sparse="keep" if self.kernel.is_linear and solution.w is not None
                        else "densify")
        if X.shape[1] != self.X.shape[1]:
            raise ParameterError(f"X has {X.shape[1]} features; the model was built with "
                                 f"{self.X.shape[1]}")
        if self.kernel.is_linear and solution.w is not None:
            return X @ solution.w + solution.b
        return self.kernel(X, self.X) @ self.expansion(solution) + solution.b

    def expansion(self, solution: Solution) -> np.ndarray:
        """beta with f(x) = sum_i beta_i k(x_i, x) + b: ``dual_coef``, else y * alpha."""
        if solution.dual_coef is not None:
            return np.asarray(solution.dual_coef, float)
        if solution.alpha is not None:
            return self.y * np.asarray(solution.alpha, float)
        raise NotApplicableError("this solution has neither w nor a kernel expansion")


class SVM(KernelSamples):
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
    loss : "hinge", or "squared_hinge" (:class:`convexlearn.svm_l2.SquaredHingeSVM`)

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
        if cls is SVM and _problem_of(kwargs.get("loss", "hinge")) is not SVM:
            return _problem_of(kwargs["loss"])(X, *args, **kwargs)   # the L2-loss SVM
        # a registered array kind (dask: data.ARRAY_BACKENDS) builds its subclass first
        return super().__new__(backend_class("SVM", X, SVM) if cls is SVM else cls)

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, kernel: Any = "linear",
                 intercept: bool = True, *,
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0,
                 sample_weight: Any = None,
                 repair_psd: bool = False, psd_tol: float = DEFAULT_PSD_TOL, loss: str = "hinge"):
        precomputed = isinstance(kernel, str) and kernel == "precomputed"
        y_arr = np.asarray(y)
        n = y_arr.shape[0] if y_arr.ndim >= 1 else None
        if precomputed:
            K = check_gram(X, n=n)
            self.X = None
        else:
            # the linear kernel keeps a sparse X sparse (its iterative methods and the KKT
            # report use products); other kernels need dense rows (densified below a limit)
            linear = isinstance(kernel, str) and kernel == "linear"
            self.X = as_features(X, sparse="keep" if linear else "densify")
            K = None
        n_rows = (K if precomputed else self.X).shape[0]
        self.y, self.label_map = as_binary_labels(y, n=n_rows)
        self.C = check_C(C)
        self.sample_weight = _checked_weights(self, sample_weight)
        _assemble(self, K, make_kernel(kernel, self.X, gamma=gamma, degree=degree, coef0=coef0,
                                       sample_weight=self.sample_weight),
                  check_bool("intercept", intercept), check_bool("repair_psd", repair_psd),
                  check_nonnegative("psd_tol", psd_tol))

    # ------------------------------------------------------------------ basics
    @property
    def C_bounds(self) -> Any:
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

    def describe(self) -> str:
        """One line: C or hard margin (and "weighted"), kernel, intercept and n (in the repr)."""
        margin = "hard-margin" if self.hard_margin else f"C={self.C:g}"
        if self.sample_weight is not None:
            margin += ", weighted"
        return (f"SVM ({margin}, kernel={self.kernel.describe()}, "
                f"{'with' if self.intercept else 'without'} intercept, n={self.n_samples})")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    def deferred_fingerprint(self) -> Deferred:
        """sha256 of X or K, y, weights, C, intercept and kernel, hashed when first read."""
        return self.deferred_samples_fingerprint(self.y, self.sample_weight, svm=_key(self))

    def with_C(self, C: float) -> "SVM":
        """The same data and kernel with another C (the Gram matrix is shared, not copied)."""
        other = copy.copy(self)
        other.C = check_C(C)
        if other.sample_weight is not None and other.hard_margin:
            raise ParameterError("sample_weight needs a finite C")
        return other

    # ------------------------------------------------------------ formulations
    def check_primal_form(self, form: str) -> str:
        """Validate a primal form name: "slack", or "hinge" (which needs a finite C)."""
        if form not in ("slack", "hinge"):
            raise ParameterError(f"unknown primal form {form!r}; valid: 'slack', 'hinge'")
        if form == "hinge" and self.hard_margin:
            raise NotApplicableError(
                "the hinge form needs a finite C: the hard-margin SVM has no hinge penalty "
                "(it is the slack form with xi = 0); use form='slack' or the dual")
        return form

    def primal(self, form: str = "slack") -> Any:
        """The primal problem as a ``cvxpy.Problem`` (``form="slack"`` or ``"hinge"``).

        Linear kernel: variables w, b, xi. Other kernels: the expansion coefficients
        beta of f = K beta + b, with ||w||^2 = beta^T K beta.
        """
        data = {"X": self.X} if self.kernel.is_linear else {"K": self.gram}
        return svm_primal(self.y, self.C, self.intercept, self.check_primal_form(form),
                          weights=self.sample_weight, **data).problem

    def dual(self) -> Any:
        """The dual problem as a ``cvxpy.Problem`` (a QP in alpha)."""
        data = {"X": self.X} if self.kernel.is_linear else {"K": self.gram}
        return svm_dual(self.y, self.C, self.intercept, weights=self.sample_weight,
                        **data).problem

    # ----------------------------------------------------------------- solving
    @logged_solve
    def solve(self, method: str = "exact", *, solver: str | None = None, tol: float = 1e-6,
              cert_tol: float | None = None, polish: bool = True, **options) -> Solution:
        """Solve the problem and attach its KKT report.

        Parameters
        ----------
        method : str
            "exact": the routes of :func:`convexlearn.routes.svm.exact_chain`, fastest
            first, until one is certified (``provenance["route"]`` names it); a named
            route ("exact-dual", "exact-primal", "exact-primal-hinge", ...); or an
            iterative method ("subgradient", "pegasos", "smo", "dcd").
        solver : str, optional
            cvxpy solver for the exact methods (default Clarabel).
        tol : float
            Stopping tolerance of iterative methods.
        cert_tol : float, optional
            Tolerance of the KKT check (the certificate) that decides the status (default:
            1e-6 for the exact methods, whatever ``tol``; ``tol`` clipped to [1e-6, 1e-3]
            for the iterative ones, so that "optimal" never means a loose answer).
            ``kkt_tol``, its old name, works for one release (DeprecationWarning).
        polish : bool
            Exact methods only: refine the interior-point multipliers on their active set
            (:mod:`convexlearn.solvers.kernel_svm.polish`) and keep the refined point when its KKT
            report is no worse. ``provenance["polished"]`` says whether it was kept.
        verbose : bool or int
            Log this call on stderr through the ``convexlearn`` logger: True/1 at INFO (method,
            route, status, objective, time), 2 at DEBUG (with the optimality report).
        **options
            Passed to the solver (cvxpy options, or the iterative method's options); the
            exact SMO route reads ``cache_size`` (MB, 200) and ``shrinking`` (LIBSVM's -m, -h).

        Returns
        -------
        Solution
            ``status`` is "optimal" only when the solver says so *and* the KKT report
            passes; the report is in ``solution.report``.

        Raises
        ------
        InfeasibleError
            Hard margin on data that are proven not linearly separable.
        """
        cert_tol = renamed("SVM.solve", "kkt_tol", "cert_tol", options.pop("kkt_tol", None),
                           cert_tol, stacklevel=4)
        cert_tol = None if cert_tol is None else check_positive("cert_tol", cert_tol)
        options = check_solve_options(options)     # seed, callback, max_iter, ... at the edge
        # before solving: a route may densify a sparse X, and the fingerprint is of the
        # data as given (a fresh problem on the same file must match it)
        fingerprint = self.deferred_fingerprint()
        solution = routes.solve(self, method, solver=check_solver(solver), tol=tol,
                                kkt_tol=cert_tol, polish=polish, **options)
        solution.provenance = Provenance.of(solution.provenance, fingerprint=fingerprint)
        return solution

    def feature_space_separability(self) -> SeparabilityResult:
        """Are the data linearly separable in the kernel's feature space (hard margin
        feasible)? See :func:`convexlearn.routes.svm.feature_space_separability`."""
        return routes.feature_space_separability(self)

    def from_alpha(self, alpha: Any, b: float | None = None) -> Solution:
        """The solution (w or the expansion beta = y * alpha, b, xi) that multipliers imply.

        alpha is clipped to its box [0, C s_i]; b, when not given, is taken from the
        free multipliers (the midpoint of the feasible interval when none is free;
        :func:`~convexlearn.solvers.kernel_svm.c_svc.c_svc_solution`); ``extra["intercept_rule"]``
        says which. ``objective`` is the primal value P(w, b) (recomputed from the data, as
        :meth:`primal_objective`) and ``method`` is "from_alpha", so a saved copy compares
        (``convexlearn diff``) like any solved one.
        """
        alpha = np.clip(np.asarray(alpha, float), 0.0, self.C_bounds)
        beta = self.y * alpha
        g = self.X @ (self.X.T @ beta) if self.kernel.is_linear else self.gram_products(beta)
        sol = c_svc_solution(self, alpha, g, b)
        hinge = np.maximum(0.0, 1.0 - self.y * (g + sol.b))
        # P(w, b) from the products already formed (||w||^2 = beta^T K beta = beta^T g)
        if self.hard_margin:
            sol.objective = 0.5 * float(beta @ g) if hinge.max(initial=0.0) <= 1e-6 else math.inf
        else:
            sol.objective = 0.5 * float(beta @ g) + float(np.sum(self.C_bounds * hinge))
        sol.method = "from_alpha"
        return sol

    # ------------------------------------------------------------------ checks
    def path(self, Cs: Any, *, exact: bool = False, tol: float = 1e-3, cert_tol: float = 1e-9,
             **smo_options) -> Path:
        """Solutions along ``Cs`` (a :class:`~convexlearn.path.Path`; ``self.C`` unchanged).
        ``exact=False``: each C in the order given, the certified kernel route warm-started
        from the previous C, each point certified at ``cert_tol`` (1e-9; 1e-6 before)
        (:func:`convexlearn.routes.svm_warm_path.svm_warm_path`; options cache_size, max_iter).
        ``exact=True``: the piecewise-linear path in 1/C (:func:`~convexlearn.routes.svm.
        exact_c_path`): its breakpoints, each certified; ``Path.at(C)`` is exact between them."""
        kkt_tol = renamed("SVM.path", "kkt_tol", "cert_tol", smo_options.pop("kkt_tol", None),
                          cert_tol, default=1e-9)
        if check_bool("exact", exact):
            return routes.exact_path(self, Cs, kkt_tol=min(kkt_tol, 1e-9))
        values, sols, prov = svm_warm_path(self, Cs, tol=tol, kkt_tol=kkt_tol, **smo_options)
        return Path("C", np.asarray(values, dtype=float), sols, time_s=prov.pop("time_s"),
                    provenance=prov)

    def kkt(self, solution: Solution, tol: float = 1e-6) -> KKTReport:
        """Check a solution against the KKT conditions, recomputed from the data.

        Works for any solution: with w (linear kernel) or a kernel expansion
        (``dual_coef``), with or without multipliers. Missing multipliers are taken from
        the expansion (alpha = y beta) or, for a primal-only linear solution, rebuilt by
        bounded least squares (:func:`~convexlearn.certify.kkt.reconstruct_multipliers`);
        the report's ``notes`` say which. Tolerances: see :mod:`convexlearn.certify.kkt`.
        A solution of another problem (:meth:`fingerprint`, sizes) is a ParameterError.
        """
        check_same_problem(solution, recorded_fingerprint(self, solution), "SVM.kkt")
        check_solution_shapes(solution, self.n_samples, getattr(self.X, "shape", (0, None))[1],
                              "SVM.kkt")
        return kkt_report(self, solution, check_positive("tol", tol))

    def certificate(self, solution: Solution, tol: float = 1e-6) -> KKTReport:
        """The certificate of a solution: its KKT report (:meth:`kkt`, the SVM's name for it)."""
        return self.kkt(solution, tol)

    # -------------------------------------------------------------- evaluation
    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """Predicted labels in the original classes (sign(0) = +1)."""
        return self.label_map.to_labels(self.decision_function(solution, X))

    def primal_objective(self, solution: Solution) -> float:
        """P(w, b) = 1/2 ||w||^2 + sum_i C_i max(0, 1 - m_i), recomputed from the data.

        For the hard margin, 1/2 ||w||^2 (inf when a margin constraint is violated by
        more than 1e-6, the default tolerance of the KKT check).
        """
        f = self.decision_function(solution)
        if self.kernel.is_linear and solution.w is not None:
            w2 = float(solution.w @ solution.w)
        else:
            beta = self.expansion(solution)
            w2 = float(beta @ (f - solution.b))     # f - b = K beta: no second pass
        hinge = np.maximum(0.0, 1.0 - self.y * f)
        if self.hard_margin:
            return 0.5 * w2 if hinge.max() <= 1e-6 else math.inf
        return 0.5 * w2 + float(np.sum(self.C_bounds * hinge))

    def dual_objective(self, alpha: Any) -> float:
        """D(alpha) = sum_i alpha_i - 1/2 alpha^T Q alpha (no feasibility check)."""
        alpha = np.asarray(alpha, float)
        ya = self.y * alpha
        if self.kernel.is_linear:
            v = self.X.T @ ya
            return float(alpha.sum() - 0.5 * v @ v)
        return float(alpha.sum() - 0.5 * ya @ self.gram_products(ya))


SVM_LOSSES["hinge"] = SVM


def _assemble(svm: SVM, K: np.ndarray | None, kernel: Kernel, intercept: bool,
              repair_psd: bool, psd_tol: float) -> None:
    """The rest of an SVM whose X (or K), y, label_map, C and sample_weight are set."""
    svm.kernel, svm.intercept, svm.repair_psd, svm.psd_tol = kernel, intercept, repair_psd, psd_tol
    svm._gram = Gram(kernel, svm.X, K, psd_tol=psd_tol, repair_psd=repair_psd)
    svm._gram_factor = None


def checked_svm(X: np.ndarray, y: np.ndarray, C: float, kernel: Kernel, *,
                intercept: bool = True, sample_weight: np.ndarray | None = None,
                K: np.ndarray | None = None, repair_psd: bool = False,
                psd_tol: float = DEFAULT_PSD_TOL) -> SVM:
    """The hinge-loss SVM of parts its caller has validated, without validating them again.

    For the binary problems of an estimator's fit, whose data were checked once at its
    edge (the flags ``intercept`` and ``repair_psd`` are still checked here, with
    ``SVM``'s messages): ``SVM(...)`` re-checks X (float64, finite), the labels (two classes, mapped to
    +-1) and the kernel's parameters on every problem, ~0.1 ms each, a fixed cost of
    small fits and of the 45 problems of a 10-class one-vs-one fit. The solve and its
    certificate are those of ``SVM(X, y, C, kernel=kernel.name, ...)``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Dense float64, finite (as ``SVM`` would make it).
    y : ndarray of shape (n,)
        Labels in {-1.0, +1.0}, both present (``label_map`` is then -1 -> -1, +1 -> +1,
        as ``SVM`` maps them).
    C : float
        > 0, or inf (hard margin), as :func:`~convexlearn.data.check_C` returns it.
    kernel : Kernel
        Resolved (:func:`~convexlearn.kernels.make_kernel`, gamma a number).
    sample_weight : ndarray, optional
        Checked here as ``SVM`` does (only weighted problems pay for it).
    K : ndarray of shape (n, n), optional
        ``kernel(X, X)`` computed by the caller (a block of a
        :class:`~convexlearn.gram.SharedGram` of the same fit), for a kernel PSD by
        construction; unlike :meth:`KernelSamples.share_gram`, its rows are not
        recomputed from X to probe it.
    """
    if K is not None and not kernel.known_psd:
        raise ParameterError(f"checked_svm takes a Gram matrix only for a kernel PSD by "
                             f"construction; got {kernel.describe()}")
    svm = SVM.__new__(SVM, X)
    svm.X, svm.y, svm.C = X, y, C
    svm.label_map = LabelMap(classes=np.array([-1.0, 1.0]))
    svm.sample_weight = _checked_weights(svm, sample_weight)
    # the flags come from an estimator's parameters, unchecked until here (~0.1 us each)
    _assemble(svm, K, kernel, check_bool("intercept", intercept),
              check_bool("repair_psd", repair_psd), psd_tol)
    return svm


def _key(svm: SVM) -> tuple:
    """The SVM's own parameters in its fingerprint."""
    return (svm.C, svm.intercept)


def recorded_fingerprint(problem: Any, solution: Any) -> str | None:
    """``problem.fingerprint()`` when ``solution`` records one to compare it with, else None
    (a solution a solver function built, e.g. inside a route before its certificate:
    nothing to compare, and no pass over the data for it)."""
    recorded = getattr(solution, "provenance", None)
    return problem.fingerprint() if recorded is None or "fingerprint" in recorded else None


def _problem_of(loss: Any) -> type:
    """The problem class of ``cl.SVM(..., loss=loss)`` (:data:`SVM_LOSSES`)."""
    problem = SVM_LOSSES.get(loss) if isinstance(loss, str) else None
    if problem is None:
        raise ParameterError(f"unknown SVM loss {loss!r}; valid: "
                             f"{', '.join(map(repr, SVM_LOSSES))}")
    return problem


def _checked_weights(svm, sample_weight) -> np.ndarray | None:
    """Validated sample weights: nonnegative, finite, soft margin only, each class weighted."""
    if sample_weight is not None and svm.hard_margin:
        raise ParameterError("sample_weight needs a finite C: the hard-margin SVM has no "
                             "per-sample cost to weight")
    weights = as_sample_weight(sample_weight, svm.n_samples)
    if weights is not None:
        for label in (-1, 1):
            if not np.any(weights[svm.y == label] > 0):
                original = svm.label_map.to_labels(np.array([label]))[0]
                original = original.item() if hasattr(original, "item") else original
                raise DataError(f"every sample of class {original!r} has weight 0: with "
                                f"them removed one class is left, and there is nothing "
                                f"to separate")
    return weights
