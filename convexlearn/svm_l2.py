"""The L2-loss (squared hinge) SVM: ``cl.SVM(X, y, C, loss="squared_hinge")``.

::

    min_{w, b}  1/2 ||w||^2 + C sum_i s_i max(0, 1 - y_i (<w, phi(x_i)> + b))^2

with b unpenalized (``intercept=True``, the C-form), b = 0 (``intercept=False``), or b
penalized as LIBLINEAR and scikit-learn's LinearSVC do (``intercept="penalized"``: + 1/2 b^2,
b the weight of a constant feature 1, LinearSVC's ``intercept_scaling=1``). Its dual is the
C-SVC's QP with the diagonal shifted and no upper bound::

    min_a  1/2 a^T (Q + diag(1 / (2 C_i))) a - 1^T a,   a >= 0,   y^T a = 0 (unpenalized b)

(Q_ij = y_i y_j k(x_i, x_j), plus y_i y_j for the penalized bias); at the optimum
a_i = 2 C_i xi_i. Labels as :class:`convexlearn.SVM`'s (classes[0] -> -1). The hinge SVM
(the default ``loss="hinge"``) is :class:`convexlearn.SVM` itself; ``cl.SVM(...,
loss="squared_hinge")`` builds this class, which is not a subclass of it (none of the hinge
problem's methods would be right for it).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from numpy.typing import ArrayLike

from .certify.kkt import KKTReport
from .certify.squared_hinge import squared_hinge_report
from .data import (as_binary_labels, as_features, as_sample_weight, check_bool, check_C,
                   check_nonnegative, check_positive, check_solve_options, check_solver)
from .errors import DataError, ParameterError
from .formulations.svm_variants import squared_hinge_dual, squared_hinge_primal
from .gram import Gram
from .kernels import DEFAULT_PSD_TOL, check_gram, make_kernel
from .routes import svm_l2 as routes
from .solution import Solution, check_same_problem, check_solution_shapes
from .svm import SVM_LOSSES, KernelSamples

__all__ = ["SquaredHingeSVM", "intercept_mode", "best_intercept"]


def intercept_mode(intercept: Any) -> str:
    """"unpenalized" (True), "none" (False) or "penalized"; else a ParameterError."""
    if isinstance(intercept, str):
        if intercept == "penalized":
            return "penalized"
        raise ParameterError(f"intercept must be True, False or 'penalized'; got "
                             f"intercept={intercept!r}")
    return "unpenalized" if check_bool("intercept", intercept) else "none"


def best_intercept(y: np.ndarray, C: np.ndarray, g: np.ndarray) -> float:
    """argmin_b sum_i C_i max(0, 1 - y_i (g_i + b))^2: the root of the increasing, piecewise
    linear phi'(b) = -2 sum_i C_i y_i max(0, 1 - y_i (g_i + b)), by Newton steps on its
    pieces inside a shrinking bracket (bisection where a step leaves it)."""
    # at lo every g_i + b <= -1 (phi' < 0: a positive sample of cost > 0 exists), at hi >= 1
    lo, hi = -float(np.max(g)) - 1.0, -float(np.min(g)) + 1.0
    b = 0.5 * (lo + hi)
    for _ in range(200):
        r = 1.0 - y * (g + b)
        on = (r > 0) & (C > 0)
        slope = -2.0 * float(np.sum(C[on] * y[on] * r[on]))
        curv = 2.0 * float(np.sum(C[on]))
        if slope == 0.0:
            break
        if slope > 0:
            hi = b
        else:
            lo = b
        step = b - slope / curv if curv > 0 else 0.5 * (lo + hi)
        new = step if lo < step < hi else 0.5 * (lo + hi)
        if new == b:
            break
        b = new
    return float(b)


class SquaredHingeSVM(KernelSamples):
    """The binary L2-loss SVM (module docstring): ``cl.SVM(X, y, C, loss="squared_hinge")``.

    Parameters
    ----------
    X, y, kernel, gamma, degree, coef0, repair_psd, psd_tol :
        As :class:`convexlearn.SVM`.
    C : float
        Cost of the squared slack; finite and > 0 (the hard margin is the hinge SVM's).
    intercept : bool or "penalized"
        True: b unpenalized; False: b = 0; "penalized": + 1/2 b^2 (LIBLINEAR, LinearSVC).
    sample_weight : array_like, optional
        s_i >= 0: sample i costs C s_i (weight 0 removes it; integer k = k copies).
    """

    loss = "squared_hinge"

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, kernel: Any = "linear",
                 intercept: Any = True, *, gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, sample_weight: Any = None, repair_psd: bool = False,
                 psd_tol: float = DEFAULT_PSD_TOL, loss: str = "squared_hinge"):
        precomputed = isinstance(kernel, str) and kernel == "precomputed"
        y_arr = np.asarray(y)
        n = y_arr.shape[0] if y_arr.ndim >= 1 else None
        if precomputed:
            K, self.X = check_gram(X, n=n), None
        else:
            linear = isinstance(kernel, str) and kernel == "linear"
            self.X, K = as_features(X, sparse="keep" if linear else "densify"), None
        self.y, self.label_map = as_binary_labels(y, n=(K if precomputed else self.X).shape[0])
        self.C = check_C(C)
        if math.isinf(self.C):
            raise ParameterError("the L2-loss SVM needs a finite C > 0 (C=None/inf is the "
                                 "hard margin: the hinge SVM's, cl.SVM(X, y, C=None))")
        self.mode = intercept_mode(intercept)
        self.intercept = self.mode != "none"
        self.sample_weight = as_sample_weight(sample_weight, self.n_samples)
        if self.sample_weight is not None:
            for label in (-1, 1):
                if not np.any(self.sample_weight[self.y == label] > 0):
                    raise DataError(f"every sample of class "
                                    f"{self.label_map.to_labels(np.array([label]))[0]!r} has "
                                    f"weight 0: one class is left, nothing to separate")
        self.kernel = make_kernel(kernel, self.X, gamma=gamma, degree=degree, coef0=coef0,
                                  sample_weight=self.sample_weight)
        self.repair_psd = check_bool("repair_psd", repair_psd)
        self.psd_tol = check_nonnegative("psd_tol", psd_tol)
        self._gram = Gram(self.kernel, self.X, K, psd_tol=self.psd_tol,
                          repair_psd=self.repair_psd)
        self._gram_factor = None

    # ------------------------------------------------------------------ basics
    @property
    def C_bounds(self) -> np.ndarray:
        """The per-sample costs C_i = C s_i (an array, also without weights)."""
        s = 1.0 if self.sample_weight is None else self.sample_weight
        return np.broadcast_to(self.C * np.asarray(s, dtype=float), (self.n_samples,))

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.y.shape[0]

    @property
    def classes(self) -> np.ndarray:
        """The two original labels, sorted (classes[0] -> -1, classes[1] -> +1)."""
        return self.label_map.classes

    hard_margin = False

    def describe(self) -> str:
        """One line: the loss, C, kernel, intercept and n."""
        weighted = ", weighted" if self.sample_weight is not None else ""
        return (f"L2-loss SVM (C={self.C:g}{weighted}, kernel={self.kernel.describe()}, "
                f"{'without' if self.mode == 'none' else self.mode} intercept, "
                f"n={self.n_samples})")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"

    def fingerprint(self) -> str:
        """sha256 of X or K, y, weights, C, the intercept mode, the loss and the kernel."""
        return self.samples_fingerprint(self.y, self.sample_weight,
                                        svm=(self.C, self.mode, self.loss))

    def _data(self) -> dict:
        return {"X": self.X} if self.kernel.is_linear else {"K": self.gram}

    # ------------------------------------------------------------ formulations
    def primal(self) -> Any:
        """The primal as a ``cvxpy.Problem`` (w, b for the linear kernel; beta, b else)."""
        self.densify("the cvxpy primal")
        return squared_hinge_primal(self.y, self.C_bounds, self.mode, **self._data()).problem

    def dual(self) -> Any:
        """The dual as a ``cvxpy.Problem`` (a QP in alpha)."""
        self.densify("the cvxpy dual")
        return squared_hinge_dual(self.y, self.C_bounds, self.mode, **self._data()).problem

    # ----------------------------------------------------------------- solving
    def solve(self, method: str = "exact", *, solver: str | None = None, tol: float = 1e-6,
              cert_tol: float | None = None, **options) -> Solution:
        """Solve and attach the certificate (:meth:`kkt`).

        Parameters
        ----------
        method : str
            "exact": :func:`convexlearn.routes.svm_l2.exact_chain` (linear kernel: Newton
            in w-space; other kernels: SMO on the shifted dual QP and its polish; then
            the cvxpy dual and primal), certified at a relative duality gap of 1e-9
            (``report.gap_tol``); a route by name ("exact-linear", "exact-smo",
            "exact-dual", "exact-primal"); or "dcd" (LIBLINEAR's L2-loss dual coordinate
            descent, linear kernel, to ``tol``).
        solver : str, optional
            cvxpy solver of the cvxpy routes.
        tol : float
            Stopping tolerance of "dcd".
        cert_tol : float, optional
            Tolerance of the certificate's residuals (default 1e-6 for the exact methods,
            ``tol`` clipped to [1e-6, 1e-3] for "dcd").
        """
        cert_tol = None if cert_tol is None else check_positive("cert_tol", cert_tol)
        options = check_solve_options(options)
        fingerprint = self.fingerprint()
        solution = routes.solve(self, method, solver=check_solver(solver),
                                tol=check_positive("tol", tol), kkt_tol=cert_tol, **options)
        solution.provenance["fingerprint"] = fingerprint
        return solution

    def from_alpha(self, alpha: Any, b: float | None = None) -> Solution:
        """The solution that dual multipliers imply: w = sum_i a_i y_i x_i (beta = y a), and
        b given, or y^T a (penalized), or the b that minimizes P for this w
        (:func:`best_intercept`; exact whatever the multipliers' round-off)."""
        C = self.C_bounds
        a = np.where(C > 0, np.maximum(np.asarray(alpha, dtype=float), 0.0), 0.0)
        beta = self.y * a
        g = self.X @ (self.X.T @ beta) if self.kernel.is_linear else self.gram_products(beta)
        if b is None:
            if self.mode == "penalized":
                b = float(beta.sum())
            elif self.mode == "none":
                b = 0.0
            else:
                b = best_intercept(self.y, C, g)
        f = g + b
        w = self.X.T @ beta if self.kernel.is_linear else None
        sol = Solution(w=None if w is None else np.asarray(w, float).ravel(), b=float(b),
                       alpha=a, xi=np.maximum(0.0, 1.0 - self.y * f), dual_coef=beta,
                       method="from_alpha")
        sol.objective = self._primal_value(f, float(beta @ g), float(b))
        return sol

    # ------------------------------------------------------------------ checks
    def kkt(self, solution: Solution, tol: float = 1e-6) -> KKTReport:
        """The certificate of ``solution`` (:mod:`convexlearn.certify.squared_hinge`):
        stationarity, balance, a_i = 2 C_i xi_i per sample, and the relative duality gap,
        recomputed from the data."""
        check_same_problem(solution, self.fingerprint(), "SVM.kkt")
        check_solution_shapes(solution, self.n_samples,
                              getattr(self.X, "shape", (0, None))[1], "SVM.kkt")
        tol = check_positive("tol", tol)
        f = self.decision_function(solution)
        b = float(solution.b)
        norms = np.sqrt(np.maximum(self.gram_operator.diagonal, 0.0))
        if self.kernel.is_linear and solution.w is not None:
            X, w = self.X, np.asarray(solution.w, dtype=float)

            def quad(c):
                v = X.T @ c
                return float(v @ v)

            def w_minus(c):
                return float(np.linalg.norm(w - X.T @ c))
            w_norm2 = float(w @ w)
        else:
            beta = self.expansion(solution)
            Kb = f - b

            def quad(c):
                return float(c @ self.gram_products(c))

            def w_minus(c):
                diff = beta - c
                return math.sqrt(max(float(diff @ (Kb - self.gram_products(c))), 0.0))
            w_norm2 = float(beta @ Kb)
        return squared_hinge_report(self.y, self.C_bounds, self.mode, f, b, w_norm2, quad,
                                    w_minus, norms, alpha=solution.alpha, tol=tol)

    def certificate(self, solution: Solution, tol: float = 1e-6) -> KKTReport:
        """The certificate of a solution (:meth:`kkt`)."""
        return self.kkt(solution, tol)

    # -------------------------------------------------------------- evaluation
    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """Predicted labels in the original classes (sign(0) = +1)."""
        return self.label_map.to_labels(self.decision_function(solution, X))

    def _primal_value(self, f: np.ndarray, w_norm2: float, b: float) -> float:
        xi = np.maximum(0.0, 1.0 - self.y * f)
        pen = 0.5 * b * b if self.mode == "penalized" else 0.0
        return 0.5 * w_norm2 + pen + float(self.C_bounds @ (xi * xi))

    def primal_objective(self, solution: Solution) -> float:
        """P(w, b) = 1/2 ||w||^2 [+ 1/2 b^2] + sum_i C_i xi_i^2, recomputed from the data."""
        f = self.decision_function(solution)
        if self.kernel.is_linear and solution.w is not None:
            w2 = float(solution.w @ solution.w)
        else:
            w2 = float(self.expansion(solution) @ (f - solution.b))
        return self._primal_value(f, w2, float(solution.b))

    def dual_objective(self, alpha: Any) -> float:
        """D(a) = sum a - 1/2 a^T Q a [- 1/2 (y^T a)^2] - sum a_i^2 / (4 C_i) (no feasibility
        check; -inf where a sample of cost 0 has a_i != 0)."""
        a = np.asarray(alpha, dtype=float)
        C = self.C_bounds
        if np.any((C == 0) & (a != 0)):
            return -math.inf
        ya = self.y * a
        aQa = (float(np.sum((self.X.T @ ya) ** 2)) if self.kernel.is_linear
               else float(ya @ self.gram_products(ya)))
        ridge = np.divide(a * a, 4.0 * C, out=np.zeros_like(a), where=C > 0)
        pen = 0.5 * float(ya.sum()) ** 2 if self.mode == "penalized" else 0.0
        return float(a.sum()) - 0.5 * aQa - pen - float(ridge.sum())


SVM_LOSSES["squared_hinge"] = SquaredHingeSVM
