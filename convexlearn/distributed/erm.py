"""Regularized ERM on dask arrays: the same problem and conventions as :class:`convexlearn.ERM`.

F(w, b) = (1/n) sum_i loss(y_i, <w, x_i> + b) + lam R(w), b unpenalized, with X a dask
array chunked by rows. ``cl.ERM(X, y, ...)`` builds a :class:`DaskERM` when X is a dask
array. Methods (every one runs on the cluster; the client gathers only vectors of length
dim = d (+1) and dim x dim matrices):

===========  ==================================================  =======================
method       algorithm                                           needs
===========  ==================================================  =======================
newton       damped Newton, H = sum_k A_k^T diag(l'') A_k / n     loss with l''; l2/none
gd           gradient descent, Armijo backtracking               differentiable; l2/none
prox, fista  FISTA with backtracking and restart                 differentiable loss
subgradient  full-batch subgradient (best iterate)               any convex loss
admm         consensus ADMM, L-BFGS on each block (dask-glm's)   differentiable loss
gram         the in-memory exact route on the moments A^T A,     least-squares loss,
             A^T y (one pass; :mod:`.moments`)                    d <= 4095, any penalty
exact        gram (least squares), newton (smooth loss,          see above
             l2/none), prox: the first whose certificate
             holds at ``cert_tol``
===========  ==================================================  =======================

Every solution carries the chunk-wise certificate (:mod:`.certificate`), the in-memory
certificate's figures computed chunk by chunk (the relative distance of 0 to dF and the
relative Fenchel duality gap); the status is "optimal" only when the method met its own
stopping rule *and* both are <= ``cert_tol``.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn


import numpy as np
from numpy.typing import ArrayLike

from ..certify.optimality import OptimalityReport
from ..data import (check_bool, check_method_options, check_nonnegative,
                    check_positive)
from ..erm import ERM
from ..errors import NotApplicableError, ParameterError
from ..losses import make_loss
from ..penalties import make_penalty
from ..routes.chain import Route, status_of, walk
from ..routes.erm import ITERATIVE_TOL
from ..solution import Solution, Timer
from ..solvers.erm.erm_subgradient import subgradient
from ..solvers.erm.gd import gradient_descent
from ..solvers.erm.newton import newton
from ..solvers.erm.prox import fista
from .admm import admm
from .certificate import chunked_optimality
from .chunks import ChunkedData
from .moments import MAX_MOMENT_DIM, least_squares_from_moments
from .oracle import DaskERMOracle, moments_of

__all__ = ["DaskERM", "DASK_ERM_METHODS"]

#: method -> function; each takes a (Dask)ERMOracle and x0.
DASK_ERM_METHODS: dict[str, Callable[..., Solution]] = {
    "newton": newton, "gd": gradient_descent, "prox": fista, "fista": fista,
    "subgradient": subgradient, "admm": admm, "gram": least_squares_from_moments,
}
#: Stopping tolerances of the exact route (raw gradient norm for Newton, gradient
#: mapping for FISTA): tight enough that the certificate at 1e-9 holds.
EXACT_TOLS = {"newton": 1e-12, "prox": 1e-11, "gram": 1e-9}


class DaskERM(ERM):
    """:class:`~convexlearn.ERM` on a dask array X (chunked by rows) and y alike.

    Parameters
    ----------
    X : dask.array.Array (n, d)
    y : dask.array.Array or array_like (n,)
    loss, penalty, lam, intercept, **penalty_params
        As for :class:`~convexlearn.ERM`.
    sample_weight : dask.array.Array or array_like (n,), optional
        As for :class:`~convexlearn.ERM`: the loss term is (1/sum s) sum_i s_i loss_i.
        Every method and the certificate take it; ``self.sample_weight`` holds the
        normalized weights v = s n / sum(s) as a dask array.
    client : dask.distributed.Client, optional
        Where the passes run (default: the current default scheduler).
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, loss: Any = "logistic", penalty: Any = "l2",
                 lam: float = 0.1,
                 intercept: bool = True, *, sample_weight: Any = None, client: Any = None,
                 **penalty_params):
        self.loss = make_loss(loss)
        self.penalty = make_penalty(penalty, **penalty_params)
        self.intercept = check_bool("intercept", intercept)
        self._lam = check_nonnegative("lam", lam)
        self.data = ChunkedData(X, y, self.loss.task, client, sample_weight=sample_weight)
        self.X, self.y, self.label_map = self.data.X, self.data.y, self.data.label_map
        self.sample_weight = self.data.weights
        self._moments = None
        self._references: dict[float, Solution] = {}

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.data.n

    def describe(self) -> str:
        """One line, as :meth:`ERM.describe`, with the chunking."""
        return super().describe()[:-1] + f", dask: {self.data.n_chunks} chunks)"

    __repr__ = describe

    def oracle(self) -> DaskERMOracle:
        """The chunk-wise oracle at the current lam (the moments A^T A, A^T y reduced
        once per problem)."""
        if self._moments is None:
            self._moments = moments_of(self.data, self.intercept)
        return DaskERMOracle(self.data, self.loss, self.penalty, self.lam, self.intercept,
                             moments=self._moments)

    def objective(self, w: Any, b: float = 0.0) -> float:
        """F(w, b), one pass over the chunks."""
        oracle = self.oracle()
        return oracle.value(oracle.join(self._checked_w(w), b))

    def decision_function(self, solution: Solution, X: ArrayLike | None = None) -> Any:
        """f = X w + b: a dask array for dask input (lazy), numpy for numpy input."""
        X = self.X if X is None else X
        if X.shape[1] != self.data.d:
            raise ParameterError(f"X has {X.shape[1]} features; the model was built with "
                                 f"{self.data.d}")
        return X @ self._checked_w(solution.w) + solution.b

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> Any:
        """Labels (lazy for dask input) or real predictions."""
        f = self.decision_function(solution, X)
        if self.label_map is None:
            return f
        if hasattr(f, "map_blocks"):
            return f.map_blocks(self.label_map.to_labels, dtype=self.label_map.classes.dtype)
        return self.label_map.to_labels(f)

    def _checked_w(self, w) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if w.shape != (self.data.d,):
            raise ParameterError(f"w has shape {w.shape}; this problem has {self.data.d} "
                                 f"features")
        return w

    def formulation(self) -> NoReturn:
        """Not available: the cvxpy problem would hold all of X in memory."""
        raise NotApplicableError(
            f"the cvxpy formulation of {self.describe()} would load the whole dask array "
            f"into memory; compute a subsample (X[:m].compute()) and use cl.ERM on it, or "
            f"solve here with one of {', '.join(map(repr, ('exact', *DASK_ERM_METHODS)))}")

    def _require_finite_minimizer(self) -> None:
        if self.loss.zero_only_at_infinity and (self.penalty.has("zero") or self.lam == 0):
            raise NotApplicableError(
                f"{self.describe()}: without a penalty the {self.loss.name} loss has no "
                f"minimizer on separable data, and deciding separability is an LP over all "
                f"samples (not chunk-wise); use lam > 0 on a dask array")

    # ---------------------------------------------------------------- solving
    def solve(self, method: str = "exact", *, tol: float | None = None,
              cert_tol: float | None = None, certify: bool = True, warm_start: Any = None,
              **options) -> Solution:
        """Solve on the cluster; attach the chunk-wise certificate.

        Parameters
        ----------
        method : str
            "exact" or one of :data:`DASK_ERM_METHODS` (see the module docstring).
        tol : float, optional
            The method's stopping tolerance (default: 1e-8; for "exact", the tolerances
            of :data:`EXACT_TOLS`).
        cert_tol : float, optional
            Certificate tolerance deciding "optimal": the relative distance of 0 to dF and
            the relative duality gap, as in memory (default 1e-9 for "exact", 1e-6 for
            the iterative methods).
        certify : bool
            Compute the certificate (one more pass).
        warm_start : Solution, optional
        **options
            The method's options (max_iter, callback, step, rho, ...).
        """
        return self._solve(method, tol=tol, cert_tol=cert_tol, certify=certify,
                           warm_start=warm_start, **options)

    def _solve(self, method="exact", *, tol=None, cert_tol=None, certify=True,
               warm_start=None, on_path=False, solver=None, **options) -> Solution:
        if method not in ("exact", *DASK_ERM_METHODS):
            raise NotApplicableError(
                f"method {method!r} does not run on a dask array; the distributed methods "
                f"are {', '.join(map(repr, ('exact', *DASK_ERM_METHODS)))}")
        if solver is not None:
            raise ParameterError("solver= names a cvxpy solver; there is none on a dask array")
        self._require_convex(method)
        self._require_finite_minimizer()
        if method == "exact":
            return self._solve_exact(cert_tol if cert_tol is not None else 1e-9, warm_start,
                                     **options)
        tol = 1e-8 if tol is None else check_nonnegative("tol", tol)
        cert_tol = ITERATIVE_TOL if cert_tol is None else check_positive("cert_tol", cert_tol)
        return self._run(method, tol, cert_tol, certify, warm_start, **options)

    def _run(self, method, tol, cert_tol, certify, warm_start, **options) -> Solution:
        run = DASK_ERM_METHODS[method]
        options = check_method_options(method, run, options, ("oracle", "x0", "tol"))
        timer = Timer()
        oracle = self.oracle()
        x0 = None if warm_start is None else oracle.join(self._checked_w(warm_start.w),
                                                         warm_start.b)
        sol = run(oracle, x0, tol=tol, **options)
        sol.method = method
        sol.extra.update(lam=self.lam, passes=oracle.passes, n_chunks=self.data.n_chunks)
        if certify:
            # the solver's oracle: its last pass may have been at the answer (see
            # DaskERMOracle.certificate_sums), saving the certificate's first pass
            sol.report = self._certify(oracle, sol, cert_tol)
            if sol.status in ("optimal", "converged"):
                sol.status = "optimal" if sol.report.passed else "inaccurate"
        elif sol.status == "optimal":
            sol.status = "converged"
        sol.time_s = timer()
        return sol

    def exact_routes(self) -> list[str]:
        """The certified routes of ``solve()``, in the order tried.

        Raises
        ------
        NotApplicableError
            A non-differentiable loss (hinge, perceptron): no distributed route certifies.
        """
        if not self.loss.differentiable:
            raise NotApplicableError(
                f"no distributed method certifies {self.describe()}: the {self.loss.name} "
                f"loss is not differentiable; method='subgradient' runs (uncertified), and "
                f"for hinge + l2 cl.SVM(X, y, C=1/(n lam)).solve() runs the cascade SVM")
        smooth = self.penalty.has("hessian") or self.lam == 0
        routes = ["newton", "prox"] if smooth and self.loss.has_hessian else ["prox"]
        if self.loss.has("least_squares") and self.data.d + self.intercept <= MAX_MOMENT_DIM:
            routes.insert(0, "gram")
        return routes

    def _solve_exact(self, cert_tol: float, warm_start, **options) -> Solution:
        """The chain of :meth:`exact_routes` on the walker of
        :mod:`convexlearn.routes.chain` (each route's certificate is the chunk-wise one,
        attached by :meth:`_run`); ``provenance["attempts"]``: (route, status, distance)."""
        timer, attempts = Timer(), []

        def route(name: str) -> Route:
            def run(problem):
                return problem._run(name, EXACT_TOLS[name], cert_tol, True, warm_start,
                                    **options)
            return Route(name, run)

        def certified(sol: Solution) -> Solution:
            attempts.append((sol.method, status_of(sol.report), sol.report.distance))
            return sol

        best = walk(self, [route(name) for name in self.exact_routes()], certify=certified,
                    violation=lambda report: report.distance, tol=cert_tol)
        best.provenance["attempts"] = attempts
        best.time_s = timer()
        self._references[self.lam] = best
        return best

    def reference(self) -> Solution:
        """The certified solution at the current lam (solved once, then cached)."""
        if self.lam not in self._references:
            self._solve_exact(1e-9, None)
        return self._references[self.lam]

    def certificate(self, solution: Solution, tol: float = 1e-9, kink_tol: float = 1e-6,
                    scores: Any = None, XTg: Any = None) -> OptimalityReport:
        """The chunk-wise certificate at the solution (:meth:`optimality` without F*).
        ``scores`` and ``XTg``, ERM's batch shortcuts along a path, are not used: the
        chunk-wise pass computes them."""
        return self.optimality(solution, tol, kink_tol)

    def optimality(self, solution: Solution, tol: float = 1e-6, kink_tol: float = 1e-6,
                   reference: Any = None) -> OptimalityReport:
        """The chunk-wise certificate at the solution (see :mod:`.certificate`); with
        ``reference`` (a Solution or F*), ``suboptimality`` is F - F* against it."""
        return self._certify(self.oracle(), solution, tol, kink_tol, reference)

    def _certify(self, oracle: DaskERMOracle, solution: Solution, tol: float,
                 kink_tol: float = 1e-6, reference: Any = None) -> OptimalityReport:
        x = oracle.join(self._checked_w(solution.w), solution.b if self.intercept else 0.0)
        report = chunked_optimality(oracle, x, tol=tol, kink_tol=kink_tol)
        if reference is not None:
            F_star = float(getattr(reference, "objective", reference))
            report.optimal_objective = F_star
            report.suboptimality = report.objective - F_star
        return report
