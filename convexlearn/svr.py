"""Epsilon-support vector regression (LIBSVM's ``-s 3``, scikit-learn's SVR) on the dual QP.

Primal (docs/conventions.md)::

    min_{w, b}  1/2 ||w||^2 + C sum_i max(0, |y_i - f(x_i)| - eps),   f = <w, phi(x)> + b

Dual, as the QP of :mod:`convexlearn.solvers.kernel_svm.qp` on 2n variables a = (a+, a-)
over the n samples (each sample's kernel read once: ``Gram.take``)::

    s = (+1, -1),  p = (eps - y, eps + y),  0 <= a <= C,  s^T a = 0

so that the target t = -s * p = (y - eps, y + eps). The answer: beta = a+ - a- (scikit-
learn's ``dual_coef_`` on its support), b from the free variables (g + b = t on them:
the tube's edges), f(x) = sum_j beta_j k(x_j, x) + b (scikit-learn's ``intercept_`` = b =
-rho of LIBSVM).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .certify.qp_kkt import tube_kkt
from .data import as_targets, check_bool, check_nonnegative, check_positive
from .errors import DataError
from .kernels import DEFAULT_PSD_TOL
from .qp_problem import QPProblem
from .solution import Solution
from .solvers.kernel_svm.qp import DualQP

__all__ = ["SVR"]


def regression_targets(y: ArrayLike, n: int, what: str) -> np.ndarray:
    """Real targets for a regressor: a DataError for labels that are not numbers (strings,
    booleans), which name a classifier's problem; numeric labels such as 0/1 are real
    targets and accepted."""
    arr = np.asarray(y)
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{what} is a regressor: y must hold real numbers; got dtype "
                        f"{arr.dtype} (class labels? use cl.SVM for classification)")
    return as_targets(arr, n=n, purpose=f" for {what}")


class SVR(QPProblem):
    """An epsilon-SVR problem (module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d), or (n, n) Gram matrix when ``kernel="precomputed"``
    y : array_like of shape (n,)
        Real targets.
    C : float
        Cost of a deviation beyond the tube (> 0, finite).
    epsilon : float
        Half-width of the insensitive tube (>= 0).
    kernel : str or callable
        "rbf" (default, as scikit-learn's SVR), "linear", "poly", "sigmoid",
        "precomputed", or ``k(A, B)``.
    intercept : bool
        False: b = 0 and no row s^T a = 0 (LIBLINEAR's problem on [X, s] is this one with
        the bias as a feature: docs/conventions.md).
    gamma, degree, coef0, repair_psd, psd_tol :
        As for :class:`convexlearn.SVM`.
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, epsilon: float = 0.1,
                 kernel: Any = "rbf", *, intercept: bool = True, gamma: Any = "scale",
                 degree: int = 3, coef0: float = 0.0, repair_psd: bool = False,
                 psd_tol: float = DEFAULT_PSD_TOL):
        n = np.shape(y)[0] if np.ndim(y) >= 1 else None
        self.init_samples(X, n, kernel, gamma, degree, coef0, repair_psd, psd_tol)
        self.y = regression_targets(y, self.n_samples, "epsilon-SVR")
        self.C = check_positive("C", C)
        self.epsilon = check_nonnegative("epsilon", epsilon)
        self.intercept = check_bool("intercept", intercept)

    def describe(self) -> str:
        return (f"epsilon-SVR (C={self.C:g}, epsilon={self.epsilon:g}, "
                f"kernel={self.kernel.describe()}, "
                f"{'with' if self.intercept else 'without'} intercept, n={self.n_samples})")

    def fingerprint_params(self) -> dict:
        return {"y": self.y, "C": self.C, "epsilon": self.epsilon, "intercept": self.intercept}

    # ---------------------------------------------------------------- the QP
    def build_qp(self) -> DualQP:
        """s = (+1, -1), p = (eps - y, eps + y), u = C, one row s^T a = 0 (with intercept),
        on the samples (0..n-1, 0..n-1)."""
        n, y = self.n_samples, self.y
        signs = np.r_[np.ones(n), -np.ones(n)]
        rows = ((signs, 0.0),) if self.intercept else ()
        return DualQP.on_samples(self._gram, signs, np.r_[self.epsilon - y, self.epsilon + y],
                                 self.C, rows, index=np.r_[np.arange(n), np.arange(n)],
                                 name="epsilon-SVR dual")

    def expansion_from_qp(self, alpha: np.ndarray) -> np.ndarray:
        """beta = a+ - a-."""
        n = self.n_samples
        return alpha[:n] - alpha[n:]

    def multipliers(self, solution: Solution) -> np.ndarray:
        """(a+, a-) of ``solution``: its ``alpha``, else (max(beta, 0), max(-beta, 0))
        from ``dual_coef`` (the optimum has a+_i a-_i = 0 for eps > 0)."""
        if solution.alpha is None and solution.dual_coef is not None:
            beta = np.asarray(solution.dual_coef, dtype=float)
            return np.r_[np.maximum(beta, 0.0), np.maximum(-beta, 0.0)]
        return super().multipliers(solution)

    # ---------------------------------------------------------- formulations
    def _data(self) -> dict:
        return {"X": self.X} if self.kernel.is_linear and self.X is not None else {"K": self.gram}

    def primal_formulation(self) -> Any:
        from .formulations.svr import svr_primal
        return svr_primal(self.y, self.C, self.epsilon, intercept=self.intercept,
                          **self._data())

    def dual_formulation(self) -> Any:
        from .formulations.svr import svr_dual
        return svr_dual(self.y, self.C, self.epsilon, intercept=self.intercept,
                        **self._data())

    def qp_alpha(self, form: Any) -> np.ndarray:
        return np.r_[form.variables["alpha_plus"].value, form.variables["alpha_minus"].value]

    # ------------------------------------------------------------ per sample
    def tube(self, solution: Solution, tol: float = 1e-9) -> dict[str, np.ndarray]:
        """The KKT conditions per sample in the tube's terms (inside: beta_i = 0; on an
        edge: free; outside: beta_i = +-C): :func:`convexlearn.certify.qp_kkt.tube_kkt`."""
        residual = self.y - self.decision_function(solution)
        return tube_kkt(residual, self.expansion(solution), self.epsilon, self.C,
                        check_positive("tol", tol))

    def primal_objective(self, solution: Solution) -> float:
        """1/2 beta^T K beta + C sum_i max(0, |y_i - f_i| - eps), recomputed from the data."""
        beta = self.expansion(solution)
        f = self.decision_function(solution)
        return (0.5 * float(beta @ (f - solution.b))
                + self.C * float(np.sum(np.maximum(0.0, np.abs(self.y - f) - self.epsilon))))
