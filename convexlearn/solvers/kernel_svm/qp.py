"""The dual QP of the SVM family: one representation for SMO, the polish and the certificate.

As LIBSVM's ``Solver``, every problem of the family is::

    min_a  F(a) = 1/2 a^T Q a + p^T a
    s.t.   r_k^T a = Delta_k  (k = 1..m, m <= 2)        l <= a <= u

with ``Q_ij = s_i s_j K(x_{idx_i}, x_{idx_j})``: the signs s, and the Gram operator of
the samples ``idx`` (:meth:`convexlearn.gram.Gram.take`; repeats allowed, so that
epsilon-SVR's 2n variables on n samples read n samples' kernel). The C-SVC
(:mod:`~convexlearn.solvers.kernel_svm.c_svc`) has s = y, p = -1, u = C s_i (inf: hard
margin), l = 0 and one row y^T a = 0 (none without intercept).

In the expansion g = K (s * a) the gradient is ``grad F = s * g + p = -s * (target - g)``
with ``target = -s * p`` (the C-SVC's target is y): SMO keeps ``v = target - g``, the
polish puts free variables on ``g + b = target``, and the certificate measures
``G = grad F + b s = s (g + b - target)`` (for the C-SVC, G_i = m_i - 1, the margin
error). With G the Lagrangian duality gap of a feasible a is

    gap(a, b) = sum_i a_i G_i + sum_i u_i max(0, -G_i)   (>= 0, 0 iff a, b are optimal)

which for the C-SVC is P(w, b) - D(a) (:func:`convexlearn.certify.kkt.dual_qp_gap`).

The solvers here take one equality row equal to the signs (r = s) or none, and l = 0
(LIBSVM's ``Solver``; a nonzero l is moved to 0 by a = l + a', :meth:`DualQP.shifted`),
or the nu-problems' two rows, one per sign (r_+ = [s = +1], r_- = [s = -1]: LIBSVM's
``Solver_NU``, working pairs of equal sign, :mod:`~convexlearn.solvers.kernel_svm.smo_nu`).
There each sign has its multiplier, read as an intercept per sign (g + b_c = target on the
free variables of sign c), and G = s (g + b_s - target).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import NotApplicableError, ParameterError
from ...gram import Gram
from .intercepts import intercept_from_alpha, intercepts_by_sign
from .polish import polish_expansion

__all__ = ["DualQP", "TAU", "curvature_floor"]

#: SMO's curvature floor relative to max_i K_ii (LIBSVM's TAU).
TAU = 1e-12


def curvature_floor(k_max: float) -> float:
    """The floor tau of a pair's curvature K_ii + K_jj - 2 K_ij in SMO's step: TAU * k_max
    (k_max = max_i K_ii, the kernel's scale), TAU itself when k_max <= 0."""
    return TAU * k_max if k_max > 0 else TAU


@dataclass
class DualQP:
    """min 1/2 a^T Q a + p^T a s.t. equality rows, l <= a <= u (module docstring).

    Attributes
    ----------
    gram : Gram
        K over the variables (already indexed: ``base.take(index)``).
    signs : ndarray of {-1, +1}, shape (l,)
    linear : ndarray of shape (l,)
        p.
    upper : ndarray of shape (l,)
        u (inf: no upper bound).
    lower : ndarray of shape (l,)
        l (zeros for every problem of the family).
    equality : tuple of (ndarray, float)
        The rows (r_k, Delta_k); SMO and the polish take () or ((signs, Delta),).
    index : ndarray of int or None
        The sample of each variable (None: variable i is sample i).
    """

    gram: Gram
    signs: np.ndarray
    linear: np.ndarray
    upper: np.ndarray
    lower: np.ndarray = None
    equality: tuple = ()
    index: np.ndarray | None = None
    name: str = field(default="dual QP")

    def __post_init__(self):
        n = self.signs.shape[0]
        self.signs = np.asarray(self.signs, dtype=float)
        self.linear = np.broadcast_to(np.asarray(self.linear, dtype=float), (n,)).copy()
        self.upper = np.broadcast_to(np.asarray(self.upper, dtype=float), (n,)).copy()
        self.lower = (np.zeros(n) if self.lower is None else
                      np.broadcast_to(np.asarray(self.lower, dtype=float), (n,)).copy())
        if self.gram.n != n:
            raise ParameterError(f"{self.name}: the Gram operator has {self.gram.n} "
                                 f"variables, the signs {n}")
        if np.any(self.lower > self.upper):
            raise ParameterError(f"{self.name}: a lower bound exceeds its upper bound")

    @classmethod
    def on_samples(cls, gram: Gram, signs: Any, linear: Any, upper: Any,
                   equality: tuple = (), index: Any = None, name: str = "dual QP") -> "DualQP":
        """The QP with Q_ij = s_i s_j K(x_{index_i}, x_{index_j}) on the samples of ``gram``
        (``index`` None: one variable per sample)."""
        index = None if index is None else np.asarray(index, dtype=np.intp)
        view = gram if index is None else gram.take(index)
        return cls(view, np.asarray(signs, dtype=float), linear, upper, None, tuple(equality),
                   index, name)

    # ------------------------------------------------------------------ facts
    @property
    def n(self) -> int:
        """Number of variables."""
        return self.signs.shape[0]

    @property
    def target(self) -> np.ndarray:
        """-s * p: free variables satisfy g + b = target at the optimum (g = K (s * a))."""
        return -self.signs * self.linear

    @property
    def hard(self) -> bool:
        """True when no variable has an upper bound (the hard-margin C-SVC)."""
        return bool(np.all(np.isinf(self.upper)))

    @property
    def has_equality(self) -> bool:
        """True with the one row s^T a = Delta (an intercept)."""
        return len(self.equality) > 0

    @property
    def delta(self) -> float:
        """Delta of the row s^T a = Delta (0 without a row)."""
        return float(self.equality[0][1]) if self.equality else 0.0

    @property
    def is_nu_form(self) -> bool:
        """True with two rows, one per sign: sum_{s = +1} a = Delta_+, sum_{s = -1} a =
        Delta_- (LIBSVM's Solver_NU)."""
        if len(self.equality) != 2:
            return False
        (r1, _), (r2, _) = self.equality
        return (np.array_equal(np.asarray(r1, dtype=float), (self.signs > 0).astype(float))
                and np.array_equal(np.asarray(r2, dtype=float), (self.signs < 0).astype(float)))

    @property
    def deltas(self) -> tuple[float, float]:
        """(Delta_+, Delta_-) of the two rows per sign."""
        return float(self.equality[0][1]), float(self.equality[1][1])

    def nu_start(self) -> np.ndarray:
        """LIBSVM's feasible start of the rows per sign: in index order, a_t = min(u_t,
        what is left of Delta_{s_t}).

        Raises
        ------
        ParameterError
            A sign whose upper bounds sum to less than its Delta (the rows are infeasible).
        """
        alpha = np.zeros(self.n)
        for sign, mask, total in zip("+-", (self.signs > 0, self.signs < 0), self.deltas):
            idx = np.flatnonzero(mask)
            room = float(self.upper[idx].sum())
            if total < 0 or total > room * (1 + 1e-12):
                raise ParameterError(f"{self.name}: the row of sign {sign}1 needs a sum of "
                                     f"{total:g} in [0, {room:g}] (the sum of its bounds)")
            before = np.concatenate(([0.0], np.cumsum(self.upper[idx])[:-1]))
            alpha[idx] = np.clip(total - before, 0.0, self.upper[idx])
        return alpha

    def check_smo_form(self) -> None:
        """Raise NotApplicableError unless the QP has the form of LIBSVM's ``Solver`` (l =
        0 and no equality row or one row equal to the signs) or ``Solver_NU`` (l = 0 and
        one row per sign)."""
        if np.any(self.lower != 0.0):
            raise NotApplicableError(f"{self.name}: SMO needs lower bounds 0; use shifted()")
        if len(self.equality) > 1 and not self.is_nu_form:
            raise NotApplicableError(f"{self.name}: two equality rows must be one per sign "
                                     f"(sum over s = +1 and over s = -1) for SMO")
        if len(self.equality) == 1 and not np.array_equal(self.equality[0][0], self.signs):
            raise NotApplicableError(f"{self.name}: SMO's equality row must be the signs")

    def shifted(self) -> "DualQP":
        """The same problem in a' = a - l (lower bounds 0): p' = p + Q l, u' = u - l,
        Delta_k' = Delta_k - r_k^T l."""
        if not np.any(self.lower):
            return self
        l = self.lower
        p = self.linear + self.signs * self.gram.products(self.signs * l)
        rows = tuple((r, float(d - r @ l)) for r, d in self.equality)
        return DualQP(self.gram, self.signs, p, self.upper - l, None, rows, self.index,
                      self.name)

    def sample_spec(self) -> tuple[Any, np.ndarray | None]:
        """(the compiled loops' kernel spec of the QP's samples, the sample of each
        variable): the base of an indexed Gram operator (epsilon- and nu-SVR's 2n
        variables on n samples: columns of n entries, each sample's computed once, as
        LIBSVM's SVR_Q), else the QP's own spec and None."""
        base = getattr(self.gram, "base", None)
        if base is not None and self.index is not None:
            return base.spec(), self.index
        return self.gram.spec(), None

    # ---------------------------------------------------------------- values
    def expansion_products(self, alpha: np.ndarray) -> np.ndarray:
        """g = K (s * alpha), by blocks (the Gram operator's products)."""
        return self.gram.products(self.signs * alpha)

    def objective(self, alpha: np.ndarray, g: np.ndarray | None = None) -> float:
        """F(alpha) = 1/2 a^T Q a + p^T a (g = K (s * a) when known)."""
        g = self.expansion_products(alpha) if g is None else g
        return float(0.5 * (self.signs * alpha) @ g + self.linear @ alpha)

    def bounds_violation(self, alpha: np.ndarray) -> float:
        """max(0, l - a, a - u) over the variables."""
        return float(np.max(np.maximum(self.lower - alpha, alpha - self.upper), initial=0.0))

    # ------------------------------------------------------- on the active set
    def polish(self, alpha: np.ndarray, g: np.ndarray, *, kernel: Any = None, **options: Any
               ) -> tuple[np.ndarray, float | None, np.ndarray] | None:
        """The active-set polish of ``alpha`` (g = K (s * alpha)) on this QP:
        :func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion` with the signs, the
        upper bounds, the target, the equality row, and the blocks and products of
        ``kernel`` (default the Gram operator; any object with the same ``block`` and
        ``products``, e.g. one reading SMO's column cache). Returns (alpha, b or None, g)
        or None."""
        self.check_smo_form()
        kernel = self.gram if kernel is None else kernel
        if self.is_nu_form:
            return polish_expansion(self.signs, self.upper, alpha, g, True, kernel.block,
                                    kernel.products, target=self.target,
                                    delta=self.deltas, by_sign=True, **options)
        return polish_expansion(self.signs, self.upper, alpha, g, self.has_equality,
                                kernel.block, kernel.products, target=self.target,
                                delta=self.delta, **options)

    def intercept(self, alpha: np.ndarray, g: np.ndarray) -> tuple[Any, str]:
        """b from the free variables (g + b = target on them), else the midpoint of the
        interval the bounded ones allow; 0 without an equality row; the pair (b_+, b_-)
        with one row per sign."""
        if self.is_nu_form:
            return intercepts_by_sign(self.signs, self.upper, alpha, g, self.target)
        if not self.has_equality:
            return 0.0, "no intercept"
        return intercept_from_alpha(self.signs, self.upper, alpha, g, target=self.target)
