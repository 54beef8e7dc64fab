"""The base of the kernel problems of the SVM family solved as one dual QP.

Every problem of LIBSVM's family is the QP of :mod:`convexlearn.solvers.kernel_svm.qp`::

    min_a  1/2 a^T Q a + p^T a,   Q_ij = s_i s_j K(x_{idx_i}, x_{idx_j}),
    s.t.   s^T a = Delta,   0 <= a <= u

A problem class derives from :class:`QPProblem` and writes only what is its own:

* ``dual_qp()``: build the :class:`~convexlearn.solvers.kernel_svm.qp.DualQP` (signs,
  linear term, bounds, the row, the samples of the variables);
* ``expansion_from_qp(alpha)``: the coefficients beta of f(x) = sum_j beta_j k(x_j, x) + b
  (epsilon-SVR: a+ - a-; one-class: a);
* ``primal_formulation()`` and ``dual_formulation()`` (cvxpy, :mod:`convexlearn.formulations`)
  and ``qp_alpha(form)``, the QP's variables read from the solved dual;
* ``describe()`` and ``fingerprint_params()``; ``feasible_start()`` when Delta != 0.

The base gives the rest: ``solve()`` (the routes of :mod:`convexlearn.routes.qp`: SMO on
the core + active-set polish, certified at 1e-9 relative; the cvxpy dual as the fallback;
``provenance["route"]``), ``certificate()`` (the QP's KKT report per variable,
:mod:`convexlearn.certify.qp_kkt`), ``decision_function``, ``primal()``/``dual()``,
``fingerprint`` and the repr. A solution is a :class:`~convexlearn.solution.Solution`:
``alpha`` the QP's variables (l of them), ``dual_coef`` beta (n), ``b`` the multiplier of
the row (the intercept; -rho for the one-class SVM), ``w`` = X^T beta for the linear
kernel; ``save()`` and :func:`convexlearn.load` store and read it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .certify.qp_kkt import QPKKTReport, qp_kkt_report
from .data import (as_features, check_bool, check_nonnegative, check_positive,
                   check_solve_options, check_solver)
from .errors import ParameterError
from .gram import Gram
from .kernels import DEFAULT_PSD_TOL, check_gram, make_kernel
from .logs import logged_solve
from .routes.qp import solve_qp_problem
from .solution import Solution, check_same_problem
from .solvers.kernel_svm.qp import DualQP
from .svm import KernelSamples

__all__ = ["QPProblem"]


class QPProblem(KernelSamples):
    """A kernel problem solved as one dual QP (module docstring).

    Subclasses call :meth:`init_samples` in ``__init__`` (``X``, ``kernel``, the Gram
    operator of the n samples), then validate their own parameters.
    """

    _qp: DualQP | None = None

    def init_samples(self, X: Any, n: int | None, kernel: Any, gamma: Any = "scale",
                     degree: int = 3, coef0: float = 0.0, repair_psd: bool = False,
                     psd_tol: float = DEFAULT_PSD_TOL) -> None:
        """Set ``X``, ``kernel`` and the Gram operator as :class:`convexlearn.SVM` does (a
        sparse X kept for the linear kernel, densified below a limit otherwise; the (n, n)
        Gram matrix for ``kernel="precomputed"``)."""
        if isinstance(kernel, str) and kernel == "precomputed":
            K, self.X = check_gram(X, n=n), None
        else:
            linear = isinstance(kernel, str) and kernel == "linear"
            K, self.X = None, as_features(X, sparse="keep" if linear else "densify")
        self.kernel = make_kernel(kernel, self.X, gamma=gamma, degree=degree, coef0=coef0)
        self.repair_psd = check_bool("repair_psd", repair_psd)
        self.psd_tol = check_nonnegative("psd_tol", psd_tol)
        self._gram = Gram(self.kernel, self.X, K, psd_tol=self.psd_tol,
                          repair_psd=self.repair_psd)
        self._gram_factor = None
        self._qp = None

    # ------------------------------------------------------ written per problem
    def build_qp(self) -> DualQP:
        """The problem's dual QP (called once; :meth:`dual_qp` keeps it)."""
        raise NotImplementedError

    def expansion_from_qp(self, alpha: np.ndarray) -> np.ndarray:
        """beta (n,) with f(x) = sum_j beta_j k(x_j, x) + b, from the QP's variables."""
        raise NotImplementedError

    def primal_formulation(self) -> Any:
        """The primal as a :class:`~convexlearn.formulations.base.Formulation`."""
        raise NotImplementedError

    def dual_formulation(self) -> Any:
        """The dual as a Formulation whose variables give :meth:`qp_alpha`."""
        raise NotImplementedError

    def qp_alpha(self, form: Any) -> np.ndarray:
        """The QP's variables from the solved dual formulation (default: ``alpha``)."""
        return np.asarray(form.variables["alpha"].value, dtype=float)

    def fingerprint_params(self) -> dict:
        """The problem's parameters in its fingerprint (C, epsilon, nu, ...)."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line: the problem, its parameters, kernel and n."""
        raise NotImplementedError

    def feasible_start(self) -> np.ndarray | None:
        """A point of the box on the row s^T a = Delta (None: a = 0 is one)."""
        return None

    # ------------------------------------------------------------------ facts
    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self._gram.n

    def dual_qp(self) -> DualQP:
        """The problem's :class:`~convexlearn.solvers.kernel_svm.qp.DualQP` (built once)."""
        if self._qp is None:
            self._qp = self.build_qp()
        return self._qp

    def fingerprint(self) -> str:
        """sha256 of the samples, the problem's arrays and parameters, and the kernel."""
        params = self.fingerprint_params()
        arrays = [v for v in params.values() if isinstance(v, np.ndarray)]
        scalars = {k: v for k, v in params.items() if not isinstance(v, np.ndarray)}
        return self.samples_fingerprint(*arrays, **{type(self).__name__: scalars})

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    def expansion(self, solution: Solution) -> np.ndarray:
        """beta of ``solution``: its ``dual_coef``, else from its QP variables ``alpha``."""
        if solution.dual_coef is not None:
            return np.asarray(solution.dual_coef, dtype=float)
        if solution.alpha is None:
            raise ParameterError(f"{self.describe()}: the solution has neither dual_coef "
                                 f"nor alpha")
        return self.expansion_from_qp(np.asarray(solution.alpha, dtype=float))

    # ----------------------------------------------------------- formulations
    def primal(self) -> Any:
        """The primal problem as a ``cvxpy.Problem``."""
        return self.primal_formulation().problem

    def dual(self) -> Any:
        """The dual problem (the QP) as a ``cvxpy.Problem``."""
        return self.dual_formulation().problem

    # ---------------------------------------------------------------- answers
    def solution_from_qp(self, alpha: np.ndarray, g: np.ndarray, b: float | None = None
                         ) -> Solution:
        """The answer that the QP's variables ``alpha`` imply (g = K (s * alpha)): beta,
        w for the linear kernel, and b (given by the polish, else from the free variables:
        :meth:`DualQP.intercept`; ``extra["intercept_rule"]`` says which)."""
        qp = self.dual_qp()
        alpha = np.asarray(alpha, dtype=float)
        if b is None:
            b, rule = qp.intercept(alpha, g)
        else:
            rule = "active-set polish"
        beta = self.expansion_from_qp(alpha)
        w = self.X.T @ beta if self.kernel.is_linear and self.X is not None else None
        sol = Solution(w=w, b=float(b), alpha=alpha, dual_coef=beta)
        sol.extra["intercept_rule"] = rule
        return sol

    def multipliers(self, solution: Solution) -> np.ndarray:
        """The QP's variables of ``solution`` (its ``alpha``; a subclass may rebuild them
        from ``dual_coef``)."""
        if solution.alpha is None:
            raise ParameterError(f"{self.describe()}: the certificate needs the solution's "
                                 f"QP variables alpha")
        return np.asarray(solution.alpha, dtype=float)

    def expansion_at(self, solution: Solution, alpha: np.ndarray) -> np.ndarray:
        """beta that the QP's variables ``alpha`` imply, for the certificate of
        ``solution`` (default :meth:`expansion_from_qp`; nu-SVC's scale 1 / r is a
        multiplier of the solution's)."""
        return self.expansion_from_qp(alpha)

    def row_multipliers(self, solution: Solution) -> tuple:
        """The multipliers of the QP's rows at ``solution`` (one row: (b,), the intercept;
        a problem with two rows, the nu-problems, maps its b and rho to them)."""
        return (float(solution.b),) * len(self.dual_qp().equality)

    @logged_solve
    def solve(self, method: str = "exact", *, solver: str | None = None, tol: float = 1e-3,
              cert_tol: float | None = None, polish: bool = True, **options) -> Solution:
        """Solve the problem; the status is the certificate's verdict.

        Parameters
        ----------
        method : str
            "exact": SMO + active-set polish, then the cvxpy dual, until one answer is
            certified (``provenance["route"]``); "exact-smo" or "exact-dual" by name; "smo":
            SMO alone at ``tol`` (:mod:`convexlearn.routes.qp`).
        solver : str, optional
            cvxpy solver of the "exact-dual" route.
        tol : float
            SMO's stopping tolerance for ``method="smo"`` (maximal violation, units of the
            target; LIBSVM's ``-e``).
        cert_tol : float, optional
            Tolerance of the certificate (relative duality gap and scaled KKT residuals,
            :mod:`convexlearn.certify.qp_kkt`): default 1e-9 for the exact methods, ``tol``
            clipped to [1e-6, 1e-3] for "smo".
        polish : bool
            Refine multipliers on their active set (exact methods).
        **options
            ``cache_size`` (MB, SMO's column cache), ``max_iter`` ("smo"), or cvxpy options.
        """
        tol = check_positive("tol", tol)
        cert_tol = None if cert_tol is None else check_positive("cert_tol", cert_tol)
        options = check_solve_options(options)
        fingerprint = self.fingerprint()
        self.densify(f"{type(self).__name__}.solve")
        solution = solve_qp_problem(self, method if isinstance(method, str) else repr(method),
                                    solver=check_solver(solver), tol=tol, cert_tol=cert_tol,
                                    polish=check_bool("polish", polish), options=options)
        solution.provenance["fingerprint"] = fingerprint
        return solution

    def certificate(self, solution: Solution, tol: float = 1e-9) -> QPKKTReport:
        """The KKT report of ``solution``, recomputed from the data
        (:func:`~convexlearn.certify.qp_kkt.qp_kkt_report`: per variable, and the relative
        duality gap), with the residual ``expansion`` max_i |beta_i - beta(alpha)_i| / s_a
        (the solution's ``dual_coef`` is the one its decision function uses) and, with a
        linear ``w``, ``weights`` ||w - X^T beta|| / sum_i |beta_i| ||x_i||."""
        check_same_problem(solution, self.fingerprint(), f"{type(self).__name__}.certificate")
        tol = check_positive("tol", tol)
        qp = self.dual_qp()
        alpha = self.multipliers(solution)
        if alpha.shape != (qp.n,):
            raise ParameterError(f"{type(self).__name__}.certificate: alpha has shape "
                                 f"{alpha.shape}; this problem's QP has {qp.n} variables")
        g = qp.expansion_products(alpha)
        report = qp_kkt_report(qp.signs, qp.target, qp.upper, alpha, g,
                               self.row_multipliers(solution), rows=qp.equality,
                               norms=np.sqrt(np.maximum(qp.gram.diagonal, 0.0)), tol=tol)
        beta = self.expansion_at(solution, alpha)
        s_a = report.scales["s_a"]
        if solution.dual_coef is not None:
            coef = np.asarray(solution.dual_coef, dtype=float)
            if coef.shape != beta.shape:
                raise ParameterError(f"{type(self).__name__}.certificate: dual_coef has "
                                     f"shape {coef.shape}; expected {beta.shape}")
            report.add("expansion", float(np.max(np.abs(coef - beta), initial=0.0)) / s_a)
        if solution.w is not None and self.kernel.is_linear and self.X is not None:
            norms = np.sqrt(np.maximum(self._gram.diagonal, 0.0))
            scale = max(float(np.abs(beta) @ norms), 1e-300)
            report.add("weights", float(np.linalg.norm(np.asarray(solution.w, float)
                                                       - self.X.T @ beta)) / scale)
        return report
