"""The one-class SVM (LIBSVM's ``-s 2``, scikit-learn's OneClassSVM) on the dual QP.

LIBSVM's scaling (docs/conventions.md): Schoelkopf et al.'s problem

    min 1/2 ||w||^2 - rho + 1/(nu n) sum_i xi_i,  <w, phi(x_i)> >= rho - xi_i,  xi >= 0

times (nu n)^2, with w, rho and xi times nu n: the dual is the QP of
:mod:`convexlearn.solvers.kernel_svm.qp` with

    s = +1,  p = 0,  0 <= a <= 1,  1^T a = nu n

(Schoelkopf's multipliers are a / (nu n), his rho is rho / (nu n)). The decision function
f(x) = sum_j a_j k(x_j, x) - rho is scikit-learn's ``decision_function`` (``dual_coef_``
= a on the support, ``intercept_`` = -rho, ``offset_`` = rho); here b = -rho is the
multiplier of the row (g + b = 0 on the free variables).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .data import check_real
from .errors import DataError, ParameterError
from .kernels import DEFAULT_PSD_TOL
from .qp_problem import QPProblem
from .solution import Solution
from .solvers.kernel_svm.qp import DualQP

__all__ = ["OneClassSVM", "check_nu"]


def check_nu(nu: Any, what: str) -> float:
    """nu in (0, 1] (a ParameterError naming the bound); an array in its place is a
    DataError (labels given to a problem that takes none, where it does)."""
    if np.ndim(nu) > 0:
        raise DataError(f"{what} takes no labels: got an array where nu (a number in "
                        f"(0, 1]) goes; call it as {what.split()[0]}(X, nu=...)")
    nu = check_real("nu", nu)
    if not 0.0 < nu <= 1.0:
        raise ParameterError(f"nu must be in (0, 1]; got nu={nu!r}")
    return nu


class OneClassSVM(QPProblem):
    """A one-class SVM problem (module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d), or (n, n) Gram matrix when ``kernel="precomputed"``
    nu : float
        In (0, 1]: an upper bound on the fraction of training samples outside the
        boundary (at a_i = 1) and a lower bound on the fraction of support vectors.
    kernel : str or callable
        "rbf" (default, as scikit-learn's OneClassSVM), "linear", "poly", "sigmoid",
        "precomputed", or ``k(A, B)``.
    gamma, degree, coef0, repair_psd, psd_tol :
        As for :class:`convexlearn.SVM`.
    """

    def __init__(self, X: ArrayLike, nu: float = 0.5, kernel: Any = "rbf", *,
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0,
                 repair_psd: bool = False, psd_tol: float = DEFAULT_PSD_TOL):
        self.nu = check_nu(nu, "OneClassSVM")
        self.init_samples(X, None, kernel, gamma, degree, coef0, repair_psd, psd_tol)
        self.y = np.ones(self.n_samples)

    def describe(self) -> str:
        return (f"one-class SVM (nu={self.nu:g}, kernel={self.kernel.describe()}, "
                f"n={self.n_samples})")

    def fingerprint_params(self) -> dict:
        return {"nu": self.nu}

    # ---------------------------------------------------------------- the QP
    def build_qp(self) -> DualQP:
        """s = +1, p = 0, u = 1, one row 1^T a = nu n."""
        n = self.n_samples
        ones = np.ones(n)
        return DualQP.on_samples(self._gram, ones, 0.0, 1.0, ((ones, self.nu * n),),
                                 name="one-class SVM dual")

    def feasible_start(self) -> np.ndarray:
        """LIBSVM's start: a_i = 1 for the first floor(nu n) samples, the remainder on the
        next one."""
        n = self.n_samples
        total = self.nu * n
        alpha = np.zeros(n)
        k = min(int(math.floor(total)), n)
        alpha[:k] = 1.0
        if k < n:
            alpha[k] = total - k
        return alpha

    def expansion_from_qp(self, alpha: np.ndarray) -> np.ndarray:
        """beta = a."""
        return alpha

    def multipliers(self, solution: Solution) -> np.ndarray:
        """a of ``solution``: its ``alpha``, else its ``dual_coef`` (beta = a)."""
        if solution.alpha is None and solution.dual_coef is not None:
            return np.asarray(solution.dual_coef, dtype=float)
        return super().multipliers(solution)

    def rho(self, solution: Solution) -> float:
        """rho = -b (LIBSVM's rho; scikit-learn's ``offset_``).

        Where no variable is free, the KKT conditions only bound rho to an interval
        (max g over a_i = 1, min g over a_i = 0) and its midpoint is taken, as LIBSVM; at
        nu = 1 (every a_i = 1) the interval is [max_i g_i, inf) and rho = max_i g_i, where
        LIBSVM takes the midpoint inf (scikit-learn then raises)."""
        return -float(solution.b)

    # ---------------------------------------------------------- formulations
    def _data(self) -> dict:
        return {"X": self.X} if self.kernel.is_linear and self.X is not None else {"K": self.gram}

    def primal_formulation(self) -> Any:
        from .formulations.svr import one_class_primal
        return one_class_primal(self.nu, self.n_samples, **self._data())

    def dual_formulation(self) -> Any:
        from .formulations.svr import one_class_dual
        return one_class_dual(self.nu, self.n_samples, **self._data())

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """+1 where f(x) >= 0 (inside), -1 outside (scikit-learn's convention)."""
        return np.where(self.decision_function(solution, X) >= 0, 1, -1)
