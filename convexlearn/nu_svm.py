"""nu-SVC and nu-SVR (LIBSVM's ``-s 1`` and ``-s 4``; scikit-learn's NuSVC and NuSVR) on
the dual QP with one row per sign (:mod:`convexlearn.solvers.kernel_svm.nu`).

Both are :class:`~convexlearn.qp_problem.QPProblem` subclasses; a solution is in
scikit-learn's terms (docs/conventions.md):

* nu-SVC: ``alpha`` the QP's a (0 <= a <= 1, each class summing to nu n / 2),
  ``dual_coef`` = y a / r and ``b`` = ``intercept_`` = (b_+ + b_-) / (2 r), so that the
  decision function K dual_coef + b is NuSVC's; r = (b_- - b_+) / 2 (LIBSVM's ``r``, the
  margin rho times n; 1 / r is the C of the C-SVC with the same answer) is
  ``extra["r"]``, and follows from the answer alone: sum_{y_i = +1} dual_coef_i =
  nu n / (2 r).
* nu-SVR: ``alpha`` = (a+, a-), ``dual_coef`` = a+ - a-, ``b`` = ``intercept_`` =
  (b_+ + b_-) / 2, the tube's half-width eps = (b_+ - b_-) / 2 in ``extra["epsilon"]``.

The multipliers of the QP's two rows, which the certificate needs, are (b_+, -b_-) with
b_+- = r (b -+ 1) (nu-SVC) or b +- eps (nu-SVR).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .certify.qp_kkt import tube_kkt
from .data import as_binary_labels, check_positive
from .errors import DataError, ParameterError
from .kernels import DEFAULT_PSD_TOL
from .one_class import check_nu
from .qp_problem import QPProblem
from .solution import Solution
from .solvers.kernel_svm.nu import nu_svc_qp, nu_svc_read, nu_svr_qp, nu_svr_read
from .solvers.kernel_svm.qp import DualQP
from .svr import regression_targets

__all__ = ["NuSVM", "NuSVR", "check_nu_fraction"]


def check_nu_fraction(nu: Any) -> float:
    """nu in (0, 1], else a ParameterError naming the bound."""
    if np.ndim(nu) > 0:
        raise ParameterError(f"nu must be a number in (0, 1]; got an array of shape "
                             f"{np.shape(nu)}")
    return check_nu(nu, "nu-SVM")


class _NuBase(QPProblem):
    """What the two nu-problems share: the start, the solution from the QP's answer."""

    def feasible_start(self) -> np.ndarray:
        """LIBSVM's start: each sign's variables filled in index order up to its row."""
        return self.dual_qp().nu_start()

    def intercepts(self, alpha: np.ndarray, g: np.ndarray | None = None
                   ) -> tuple[float, float]:
        """(b_+, b_-) that the QP's variables imply (free variables of each sign, else
        the midpoint of its interval)."""
        qp = self.dual_qp()
        g = qp.expansion_products(alpha) if g is None else g
        return qp.intercept(alpha, g)[0]

    def solution_from_qp(self, alpha: np.ndarray, g: np.ndarray, b: Any = None) -> Solution:
        """The answer in scikit-learn's terms from a and (b_+, b_-) (the polish's, else
        from the free variables)."""
        alpha = np.asarray(alpha, dtype=float)
        rule = "active-set polish" if b is not None else "free variables of each sign"
        pair = self.intercepts(alpha, g) if b is None else tuple(float(x) for x in b)
        sol = self.read_answer(alpha, pair)
        if self.kernel.is_linear and self.X is not None:
            sol.w = self.X.T @ sol.dual_coef
        sol.extra["intercept_rule"] = rule
        sol.extra["row_intercepts"] = pair
        return sol

    def read_answer(self, alpha: np.ndarray, pair: tuple[float, float]) -> Solution:
        raise NotImplementedError

    def primal_data(self) -> dict:
        """The primal's data: X for the linear kernel (variable w), else the Gram matrix."""
        return ({"X": self.X} if self.kernel.is_linear and self.X is not None
                else {"K": self.gram})


class NuSVM(_NuBase):
    """A binary nu-SVC problem (module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d), or (n, n) Gram matrix when ``kernel="precomputed"``
    y : array_like of shape (n,)
        Two classes (sorted: the first is -1, the second +1).
    nu : float
        In (0, 1], at most 2 min(n+, n-) / n: an upper bound on the fraction of margin
        errors and a lower bound on the fraction of support vectors.
    kernel : str or callable
        "rbf" (default, as NuSVC), "linear", "poly", "sigmoid", "precomputed", or
        ``k(A, B)``.
    gamma, degree, coef0, repair_psd, psd_tol :
        As for :class:`convexlearn.SVM`.

    Raises
    ------
    ParameterError
        nu outside (0, 1], or above 2 min(n+, n-) / n (the rows cannot be met).
    DataError
        Labels that are not two classes.
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, nu: float = 0.5, kernel: Any = "rbf", *,
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0,
                 repair_psd: bool = False, psd_tol: float = DEFAULT_PSD_TOL):
        self.nu = check_nu_fraction(nu)
        n = np.shape(y)[0] if np.ndim(y) >= 1 else None
        self.init_samples(X, n, kernel, gamma, degree, coef0, repair_psd, psd_tol)
        self.y, self.label_map = as_binary_labels(y, n=self.n_samples)
        n_pos, n_neg = int(np.sum(self.y > 0)), int(np.sum(self.y < 0))
        bound = 2.0 * min(n_pos, n_neg) / self.n_samples
        if self.nu > bound * (1 + 1e-12):
            raise ParameterError(
                f"nu={self.nu:g} is infeasible for this class balance: nu-SVC needs "
                f"nu <= 2 min(n+, n-) / n = {bound:.6g} (n+ = {n_pos}, n- = {n_neg})")

    def describe(self) -> str:
        return (f"nu-SVC (nu={self.nu:g}, kernel={self.kernel.describe()}, "
                f"n={self.n_samples})")

    def fingerprint_params(self) -> dict:
        return {"y": self.y, "nu": self.nu}

    def build_qp(self) -> DualQP:
        """s = y, p = 0, u = 1, rows sum_{y = +-1} a = nu n / 2."""
        return nu_svc_qp(self._gram, self.y, self.nu)

    def read_answer(self, alpha: np.ndarray, pair: tuple[float, float]) -> Solution:
        out = nu_svc_read(self.y, alpha, pair)
        sol = Solution(w=None, b=float(out["intercept"]), alpha=alpha,
                       dual_coef=out["dual_coef"])
        sol.extra.update(r=float(out["r"]), C_equivalent=1.0 / float(out["r"]))
        return sol

    def r_of(self, solution: Solution) -> float:
        """r from the answer: sum_{y_i = +1} dual_coef_i = nu n / (2 r)."""
        return self.nu * self.n_samples / (2.0 * float(np.sum(self.expansion(solution)[
            self.y > 0])))

    def expansion_from_qp(self, alpha: np.ndarray) -> np.ndarray:
        """dual_coef = y a / r, r from the intercepts the variables imply."""
        b_pos, b_neg = self.intercepts(alpha)
        return self.y * alpha / ((b_neg - b_pos) / 2.0)

    def expansion_at(self, solution: Solution, alpha: np.ndarray) -> np.ndarray:
        """y a / r with the solution's r (:meth:`r_of`)."""
        return self.y * alpha / self.r_of(solution)

    def multipliers(self, solution: Solution) -> np.ndarray:
        """a: the solution's ``alpha``, else r y dual_coef."""
        if solution.alpha is None and solution.dual_coef is not None:
            return self.r_of(solution) * self.y * np.asarray(solution.dual_coef, float)
        return super().multipliers(solution)

    def row_multipliers(self, solution: Solution) -> tuple:
        r = self.r_of(solution)
        b = float(solution.b)
        return (r * (b - 1.0), -r * (b + 1.0))

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """Labels in the original classes (decision >= 0: the second class)."""
        return self.label_map.to_labels(self.decision_function(solution, X))

    def primal_formulation(self) -> Any:
        from .formulations.nu import nu_svc_primal
        return nu_svc_primal(self.y, self.nu, **self.primal_data())

    def dual_formulation(self) -> Any:
        from .formulations.nu import nu_svc_dual
        return nu_svc_dual(self.y, self.nu, self.gram)


class NuSVR(_NuBase):
    """A nu-SVR problem (module docstring).

    Parameters
    ----------
    X : array_like of shape (n, d), or (n, n) Gram matrix when ``kernel="precomputed"``
    y : array_like of shape (n,)
        Real targets.
    C : float
        Cost of a deviation beyond the tube (> 0, finite; scikit-learn's C).
    nu : float
        In (0, 1]: an upper bound on the fraction of samples outside the tube and a lower
        bound on the fraction of support vectors; the tube's width is a variable.
    kernel, gamma, degree, coef0, repair_psd, psd_tol :
        As for :class:`NuSVM`.
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, nu: float = 0.5,
                 kernel: Any = "rbf", *, gamma: Any = "scale", degree: int = 3,
                 coef0: float = 0.0, repair_psd: bool = False,
                 psd_tol: float = DEFAULT_PSD_TOL):
        self.nu = check_nu_fraction(nu)
        self.C = check_positive("C", C)
        n = np.shape(y)[0] if np.ndim(y) >= 1 else None
        self.init_samples(X, n, kernel, gamma, degree, coef0, repair_psd, psd_tol)
        self.y = regression_targets(y, self.n_samples, "nu-SVR")
        if self.n_samples < 1:
            raise DataError("nu-SVR needs at least one sample")

    def describe(self) -> str:
        return (f"nu-SVR (C={self.C:g}, nu={self.nu:g}, kernel={self.kernel.describe()}, "
                f"n={self.n_samples})")

    def fingerprint_params(self) -> dict:
        return {"y": self.y, "C": self.C, "nu": self.nu}

    def build_qp(self) -> DualQP:
        """a = (a+, a-), s = (+1, -1), p = (-y, y), u = C, rows C nu n / 2."""
        return nu_svr_qp(self._gram, self.y, self.C, self.nu)

    def read_answer(self, alpha: np.ndarray, pair: tuple[float, float]) -> Solution:
        out = nu_svr_read(alpha, pair)
        sol = Solution(w=None, b=float(out["intercept"]), alpha=alpha,
                       dual_coef=out["dual_coef"])
        sol.extra["epsilon"] = float(out["epsilon"])
        return sol

    def expansion_from_qp(self, alpha: np.ndarray) -> np.ndarray:
        """beta = a+ - a-."""
        n = self.n_samples
        return alpha[:n] - alpha[n:]

    def epsilon(self, solution: Solution) -> float:
        """The tube's half-width: the solution's, else what its variables imply."""
        if "epsilon" in solution.extra:
            return float(solution.extra["epsilon"])
        b_pos, b_neg = self.intercepts(self.multipliers(solution))
        return (b_pos - b_neg) / 2.0

    def row_multipliers(self, solution: Solution) -> tuple:
        b, eps = float(solution.b), self.epsilon(solution)
        return (b + eps, -(b - eps))

    def tube(self, solution: Solution, tol: float = 1e-9) -> dict[str, np.ndarray]:
        """The KKT conditions per sample in the tube's terms, with the solution's eps
        (:func:`convexlearn.certify.qp_kkt.tube_kkt`)."""
        residual = self.y - self.decision_function(solution)
        return tube_kkt(residual, self.expansion(solution), self.epsilon(solution), self.C,
                        check_positive("tol", tol))

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> np.ndarray:
        """f(x)."""
        return self.decision_function(solution, X)

    def primal_formulation(self) -> Any:
        from .formulations.nu import nu_svr_primal
        return nu_svr_primal(self.y, self.C, self.nu, **self.primal_data())

    def dual_formulation(self) -> Any:
        from .formulations.nu import nu_svr_dual
        return nu_svr_dual(self.y, self.C, self.nu, self.gram)

    def qp_alpha(self, form: Any) -> np.ndarray:
        return np.r_[form.variables["alpha_plus"].value, form.variables["alpha_minus"].value]
