"""The penalty (regularizer) catalogue of regularized ERM.

=============  ============================================  =========================
name           R(w)                                          prox of t R
=============  ============================================  =========================
none           0                                             identity
l1             ||w||_1                                       soft threshold at t
l2             1/2 ||w||_2^2                                 v / (1 + t)
lp (p >= 1)    ||w||_p  (not raised to the power p)          p = 1: l1; p = 2: block
                                                             shrinkage; else numerical
elastic_net    r ||w||_1 + (1 - r)/2 ||w||_2^2, r=l1_ratio    soft(v, t r) / (1 + t (1 - r))
l0             #{j : w_j != 0}   (evaluation only)           -
=============  ============================================  =========================

The elastic-net convention is scikit-learn's (``ElasticNet(alpha, l1_ratio)`` penalizes
``alpha * R(w)`` with this R), so with the squared loss our lam = 2 alpha.

Each penalty also describes its subdifferential, for the optimality certificate:
``subdifferential(w, tol)`` returns a box ``{c + r : lo <= r <= hi}`` (coordinates with
|w_j| <= tol count as zero), or for ||w||_p (p > 1) at w = 0 the dual-norm ball
``{r : ||r||_q <= 1}``, 1/p + 1/q = 1.

What solvers and certificates may use of a penalty is its set of capabilities
(:meth:`Penalty.capabilities`, the vocabulary in :data:`Penalty.VOCABULARY`), the same
pattern as the losses': derived from the methods a class provides (``hessian_diag``,
``prox``, ``conjugate``, ``split``, ``smooth_piece``), its ``shape`` and its declared
facts. ``split(lam)`` writes lam R(w) = lam1 ||w||_1 + lam2/2 ||w||_2^2; the conjugates
are: l2 R^* = 1/2 ||v||^2; l1 the indicator of ||v||_inf <= 1; elastic net
sum_j max(|v_j| - r, 0)^2 / (2 (1 - r)) (r < 1).

Adding a penalty touches this file only: subclass :class:`Penalty` and register it with
:func:`register_penalty` (or in :data:`PENALTIES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import math
import numbers
from abc import ABC, abstractmethod

import numpy as np

from .capabilities import Capable
from .data import check_choice
from .errors import NotApplicableError, ParameterError

if TYPE_CHECKING:   # the cvxpy methods import cvxpy (slow to import) when called
    import cvxpy as cp

__all__ = ["Penalty", "PENALTIES", "make_penalty", "register_penalty", "soft_threshold"]


def soft_threshold(v: np.ndarray, t: float) -> np.ndarray:
    """sign(v) max(|v| - t, 0), the prox of t ||.||_1."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


class Penalty(Capable, ABC):
    """A regularizer R(w) with what solvers and the certificate need from it.

    Class attributes: ``name``, ``formula``, ``convex``, ``differentiable`` (everywhere),
    ``strong_convexity`` (mu such that R is mu-strongly convex), ``smoothness``
    (Lipschitz constant of the gradient, None when not differentiable), ``shape`` (see
    :data:`VOCABULARY`) and ``declared`` (facts no method shows: "sparse").
    """

    name = ""
    formula = ""
    convex = True
    differentiable = False
    strong_convexity = 0.0
    smoothness: float | None = None
    shape: str | None = None
    declared: frozenset = frozenset()

    params: dict = {}

    KIND = "penalty"
    VOCABULARY = {
        "value": "R(w)",
        "convex": "convex, with a subgradient, a subdifferential and a cvxpy expression",
        "gradient": "differentiable everywhere",
        "hessian": "a diagonal Hessian (Newton)",
        "curvature": "a Lipschitz gradient (step sizes)",
        "prox": "the proximal operator of t R",
        "conjugate": "its convex conjugate R^*, for the Fenchel duality gap",
        "split": "lam R = lam1 ||w||_1 + lam2/2 ||w||^2 (coordinate descent, LP, homotopy)",
        "smooth_piece": "gradient and Hessian on the piece with the zeros held (the polish)",
        "sparse": "an l1 part: exact zeros, held by the polish and snapped by the routes",
        "zero": "R = 0 (no penalty)",
        "piecewise_linear": "piecewise linear (an LP/QP writes it)",
        "quadratic": "quadratic (a QP writes it)",
        "piecewise_quadratic": "piecewise quadratic (a QP writes it)",
    }
    #: capability -> the method whose override provides it
    _PROVIDED_BY = {"hessian": "hessian_diag", "prox": "prox", "conjugate": "conjugate",
                    "split": "split", "smooth_piece": "smooth_piece"}

    def capabilities(self) -> frozenset[str]:
        """The capability names of this penalty (see :data:`VOCABULARY`), computed once."""
        cached = self.__dict__.get("_caps")
        if cached is not None:
            return cached
        cls = type(self)
        caps = {c for c, m in self._PROVIDED_BY.items()
                if getattr(cls, m) is not getattr(Penalty, m)}
        facts = {"value": True, "convex": self.convex, "gradient": self.differentiable,
                 "curvature": self.smoothness is not None}
        caps |= {c for c, ok in facts.items() if ok} | set(self.declared)
        if self.shape:
            caps.add(self.shape)
        self._caps = frozenset(caps)
        return self._caps

    def label(self) -> str:
        return self.describe()

    @property
    def has_prox(self) -> bool:
        """True when the prox is provided (kept for callers; ``has("prox")``)."""
        return self.has("prox")

    @abstractmethod
    def value(self, w: np.ndarray) -> float:
        """R(w), as a float."""

    @abstractmethod
    def subgradient(self, w: np.ndarray) -> np.ndarray:
        """One element of the subdifferential (the gradient where differentiable)."""

    def hessian_diag(self, w: np.ndarray) -> np.ndarray:
        """Diagonal of the Hessian (only for twice-differentiable separable penalties)."""
        raise NotApplicableError(f"the {self.name} penalty ({self.formula}) is not twice "
                                 f"differentiable: Newton needs penalty 'l2' or 'none'")

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        """argmin_w 1/2 ||w - v||^2 + t R(w)."""
        raise NotApplicableError(f"the {self.name} penalty ({self.formula}) has no prox")

    def subdifferential(self, w: np.ndarray, tol: float = 0.0) -> Any:
        """("box", c, lo, hi) with dR(w) = c + [lo, hi], or ("ball", q) for ||r||_q <= 1."""
        g = self.subgradient(w)
        return "box", g, np.zeros_like(w), np.zeros_like(w)

    def conjugate(self, v: np.ndarray) -> float:
        """R^*(v) = sup_w <v, w> - R(w) (inf outside its domain)."""
        raise NotApplicableError(f"the {self.describe()} penalty has no conjugate here")

    def split(self, lam: float) -> tuple[float, float]:
        """(lam1, lam2) with lam R(w) = lam1 ||w||_1 + lam2/2 ||w||_2^2."""
        raise NotApplicableError(f"the {self.describe()} penalty ({self.formula}) is not "
                                 f"a combination of ||w||_1 and ||w||_2^2")

    def smooth_piece(self, w: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and Hessian of lam R at w on its smooth piece (signs fixed, the zeros
        of an l1 part held by the caller)."""
        raise NotApplicableError(f"no smooth piece for penalty {self.describe()}")

    @abstractmethod
    def cvxpy(self, w: Any) -> cp.Expression:
        """R(w) as a convex cvxpy expression of the variable ``w``."""

    def describe(self) -> str:
        """The name with its parameters, e.g. ``elastic_net(l1_ratio=0.5)``; else the bare name."""
        extra = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        return self.name + (f"({extra})" if extra else "")

    def __repr__(self) -> str:
        return f"Penalty({self.describe()}: {self.formula})"


class NoPenalty(Penalty):
    name, formula, differentiable, smoothness, shape = "none", "0", True, 0.0, "zero"

    def split(self, lam: float) -> tuple[float, float]:
        return 0.0, 0.0

    def smooth_piece(self, w: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(w.size), np.zeros((w.size, w.size))

    def value(self, w: np.ndarray) -> float:
        return 0.0

    def subgradient(self, w: np.ndarray) -> np.ndarray:
        return np.zeros_like(w)

    def hessian_diag(self, w: np.ndarray) -> np.ndarray:
        return np.zeros_like(w)

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        return np.array(v, dtype=float, copy=True)

    def cvxpy(self, w: Any) -> cp.Expression:
        import cvxpy as cp
        return cp.Constant(0.0)


def _l1_indicator(v: np.ndarray) -> float:
    """The indicator of ||v||_inf <= 1 (to 1e-12), the conjugate of ||.||_1."""
    return 0.0 if np.max(np.abs(v), initial=0.0) <= 1.0 + 1e-12 else math.inf


def _l1_l2_piece(w: np.ndarray, lam: float, r: float) -> tuple[np.ndarray, np.ndarray]:
    """lam (r ||w||_1 + (1 - r)/2 ||w||^2) on its smooth piece: gradient
    lam (r sign(w) + (1 - r) w), Hessian lam (1 - r) I."""
    return lam * (r * np.sign(w) + (1 - r) * w), lam * (1 - r) * np.eye(w.size)


class L1(Penalty):
    name, formula, shape, declared = "l1", "||w||_1", "piecewise_linear", frozenset({"sparse"})

    def split(self, lam: float) -> tuple[float, float]:
        return lam, 0.0

    def conjugate(self, v: np.ndarray) -> float:
        return _l1_indicator(v)

    def smooth_piece(self, w: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        return _l1_l2_piece(w, lam, 1.0)

    def value(self, w: np.ndarray) -> float:
        return float(np.abs(w).sum())

    def subgradient(self, w: np.ndarray) -> np.ndarray:
        return np.sign(w)

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        return soft_threshold(v, t)

    def subdifferential(self, w: np.ndarray, tol: float = 0.0) -> Any:
        zero = np.abs(w) <= tol
        c = np.where(zero, 0.0, np.sign(w))
        return "box", c, np.where(zero, -1.0, 0.0), np.where(zero, 1.0, 0.0)

    def cvxpy(self, w: Any) -> cp.Expression:
        import cvxpy as cp
        return cp.norm1(w)


class L2(Penalty):
    name, formula, differentiable, shape = "l2", "1/2 ||w||_2^2", True, "quadratic"
    strong_convexity, smoothness = 1.0, 1.0

    def split(self, lam: float) -> tuple[float, float]:
        return 0.0, lam

    def conjugate(self, v: np.ndarray) -> float:
        return 0.5 * float(v @ v)

    def smooth_piece(self, w: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        return lam * w, lam * np.eye(w.size)

    def value(self, w: np.ndarray) -> float:
        return 0.5 * float(w @ w)

    def subgradient(self, w: np.ndarray) -> np.ndarray:
        return np.array(w, dtype=float, copy=True)

    def hessian_diag(self, w: np.ndarray) -> np.ndarray:
        return np.ones_like(w)

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        return v / (1.0 + t)

    def cvxpy(self, w: Any) -> cp.Expression:
        import cvxpy as cp
        return 0.5 * cp.sum_squares(w)


def _is_real(value) -> bool:
    """A real number, NumPy scalars included (np.float32 is no float subclass); not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class ElasticNet(Penalty):
    name, formula = "elastic_net", "l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||_2^2"
    shape, declared = "piecewise_quadratic", frozenset({"sparse"})

    def split(self, lam: float) -> tuple[float, float]:
        return lam * self.l1_ratio, lam * (1.0 - self.l1_ratio)

    def conjugate(self, v: np.ndarray) -> float:
        r = self.l1_ratio
        if r >= 1.0:
            return _l1_indicator(v)
        excess = np.maximum(np.abs(v) - r, 0.0)
        return float(excess @ excess) / (2.0 * (1.0 - r))

    def smooth_piece(self, w: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        return _l1_l2_piece(w, lam, self.l1_ratio)

    def __init__(self, l1_ratio: float = 0.5):
        if not _is_real(l1_ratio) or not 0.0 <= l1_ratio <= 1.0:
            raise ParameterError(f"l1_ratio must be a number in [0, 1]; got l1_ratio={l1_ratio!r}")
        self.l1_ratio = float(l1_ratio)
        self.params = {"l1_ratio": self.l1_ratio}
        self.strong_convexity = 1.0 - self.l1_ratio

    def value(self, w: np.ndarray) -> float:
        return self.l1_ratio * float(np.abs(w).sum()) + 0.5 * (1.0 - self.l1_ratio) * float(w @ w)

    def subgradient(self, w: np.ndarray) -> np.ndarray:
        return self.l1_ratio * np.sign(w) + (1.0 - self.l1_ratio) * w

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        return soft_threshold(v, t * self.l1_ratio) / (1.0 + t * (1.0 - self.l1_ratio))

    def subdifferential(self, w: np.ndarray, tol: float = 0.0) -> Any:
        zero = np.abs(w) <= tol
        r = self.l1_ratio
        c = np.where(zero, 0.0, r * np.sign(w)) + (1.0 - r) * w
        return "box", c, np.where(zero, -r, 0.0), np.where(zero, r, 0.0)

    def cvxpy(self, w: Any) -> cp.Expression:
        import cvxpy as cp
        return self.l1_ratio * cp.norm1(w) + 0.5 * (1.0 - self.l1_ratio) * cp.sum_squares(w)


class Lp(Penalty):
    """||w||_p for p >= 1 (the norm itself, not its p-th power).

    Gradient away from w = 0: ``sign(w_j) |w_j|^(p-1) / ||w||_p^(p-1)``; at w = 0 the
    subdifferential is the unit ball of the dual norm q = p / (p - 1).
    """

    name, formula = "lp", "||w||_p"

    def __init__(self, p: float = 2.0):
        if not _is_real(p) or not 1.0 <= p < math.inf:
            raise ParameterError(f"p must be a finite number >= 1 for the lp penalty; got p={p!r}")
        import cvxpy as cp
        # cvxpy's pnorm rounds p to a nearby fraction: the exact solver (and every
        # certificate's reference) would then solve another problem (p = 1.0001 -> 1).
        rounded = float(cp.pnorm(cp.Variable(1), float(p)).p) if p != 1.0 else 1.0
        if abs(rounded - float(p)) > 1e-12 * float(p):
            raise ParameterError(
                f"p={p!r} is represented by cvxpy's pnorm as p={rounded!r}: the exact "
                f"reference would solve another problem; use p={rounded!r} (1 is the l1 "
                f"norm)")
        self.p = float(p)
        self.params = {"p": self.p}
        self.formula = f"||w||_{self.p:g}"

    @property
    def q(self) -> float:
        return math.inf if self.p == 1.0 else self.p / (self.p - 1.0)

    def value(self, w: np.ndarray) -> float:
        return float(np.linalg.norm(w, ord=self.p))

    def subgradient(self, w: np.ndarray) -> np.ndarray:
        if self.p == 1.0:
            return np.sign(w)
        norm = np.linalg.norm(w, ord=self.p)
        if norm == 0.0:
            return np.zeros_like(w)
        a = np.abs(w) / norm         # scale first: |w_j|^(p-1) may overflow for large p
        return np.sign(w) * a ** (self.p - 1.0)

    def subdifferential(self, w: np.ndarray, tol: float = 0.0) -> Any:
        if self.p == 1.0:
            return L1().subdifferential(w, tol)
        if np.linalg.norm(w, ord=self.p) <= tol:
            return ("ball", self.q)
        return super().subdifferential(w, tol)

    def prox(self, v: np.ndarray, t: float) -> np.ndarray:
        # Moreau: prox_{t ||.||_p}(v) = v - t P_q(v / t), P_q the projection on the q-ball.
        if self.p == 1.0:
            return soft_threshold(v, t)
        if self.p == 2.0:
            norm = np.linalg.norm(v)
            return np.zeros_like(v) if norm <= t else (1.0 - t / norm) * v
        u, self._mu = _project_lq_ball(v / t, self.q, mu0=getattr(self, "_mu", 1.0))
        # the previous multiplier is only a starting point: the result must not depend on
        # it (found in review: p = 1.01 gave different, wrong proxes on repeated calls)
        return v - t * u

    def cvxpy(self, w: Any) -> cp.Expression:
        import cvxpy as cp
        return cp.pnorm(w, self.p)

    def smooth_piece(self, w: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """lam u and lam (p - 1)/N (diag(a^(p-2)) - u u^T), N = ||w||_p, a = |w| / N,
        u = sign(w) a^(p-1): every |w_j| > 0 and p > 1 needed."""
        p = self.p
        N = float(np.linalg.norm(w, ord=p))
        if N == 0.0 or p == 1.0 or np.any(w == 0):
            raise NotApplicableError("lp polish needs every |w_j| > 0 and p > 1")
        a = np.abs(w) / N
        u = np.sign(w) * a ** (p - 1)
        return lam * u, lam * (p - 1) / N * (np.diag(a ** (p - 2)) - np.outer(u, u))


def _solve_shrink(a: np.ndarray, c: float, q: float, iters: int = 100) -> np.ndarray:
    """Per coordinate, the root s in [0, a_j] of s + c s^(q-1) = a_j (c >= 0, q > 1).

    The left side increases in s, so the root is unique. Each term is <= a_j at the root,
    so it is <= min(a_j, (a_j / c)^(1/(q-1))); each is <= a_j / 2 below
    min(a_j / 2, (a_j / (2c))^(1/(q-1))), so the root is above that: Newton steps from the
    upper end are kept inside this bracket (bisection otherwise), vectorized. (A bracket [0, a_j] was not
    enough: for q ~ 100, p near 1, Newton crawled down c s^(q-1) by 1% a step and stopped
    far from the root - found in review.)
    """
    with np.errstate(divide="ignore", over="ignore"):
        cap = np.where(c > 0, (a / c) ** (1.0 / (q - 1.0)), np.inf)
    hi = np.minimum(a, cap)
    lo = np.minimum(0.5 * a, cap * 0.5 ** (1.0 / (q - 1.0)))
    s = hi.copy()
    for _ in range(iters):
        phi = s + c * s ** (q - 1.0) - a
        lo = np.where(phi < 0, s, lo)
        hi = np.where(phi > 0, s, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = phi / (1.0 + c * (q - 1.0) * s ** (q - 2.0))
        s_new = s - step
        # Outside the closed bracket only: a converged coordinate has s_new == s == hi (or
        # lo), and a strict test sent it to bisection, ~50 needless halvings per call that
        # made prox/FISTA with an lp penalty run for tens of minutes at max_iter.
        bad = ~np.isfinite(s_new) | (s_new < lo) | (s_new > hi)
        s_new = np.where(bad, 0.5 * (lo + hi), s_new)
        if np.all(np.abs(s_new - s) <= 4e-16 * np.maximum(a, 1e-300) + 1e-300):
            return s_new
        s = s_new
    return s


def _project_lq_ball(a: np.ndarray, q: float, iters: int = 100, mu0: float = 1.0):
    """Euclidean projection of ``a`` on {u : ||u||_q <= 1}, 1 < q < inf.

    KKT: u_j = sign(a_j) s_j with s_j + mu q s_j^(q-1) = |a_j| and sum_j s_j^q = 1
    (mu > 0 when a lies outside the ball). For fixed mu each s_j is a monotone scalar
    root (:func:`_solve_shrink`); h(mu) = sum_j s_j(mu)^q - 1 decreases in mu, with
    ds_j/dmu = -q s_j^(q-1) / (1 + mu q (q-1) s_j^(q-2)); its root is found by Newton's
    method kept inside a bracket (bisection otherwise), from ``mu0`` (the previous call's
    multiplier: proximal methods call this with slowly changing arguments). Both to
    machine precision.

    Returns
    -------
    u : ndarray
        The projection.
    mu : float
        The multiplier (mu0 when ``a`` is inside the ball).
    """
    if np.sum(np.abs(a) ** q) <= 1.0:
        return a.copy(), mu0
    abs_a = np.abs(a)
    lo, hi, mu = 0.0, math.inf, (mu0 if mu0 > 0 else 1.0)
    for _ in range(iters):
        s = _solve_shrink(abs_a, mu * q, q)
        h = float(np.sum(s ** q)) - 1.0
        if abs(h) <= 4 * np.finfo(float).eps:
            break
        if h > 0:
            lo = mu
        else:
            hi = mu
        with np.errstate(divide="ignore", invalid="ignore"):
            ds = -q * s ** (q - 1.0) / (1.0 + mu * q * (q - 1.0) * s ** (q - 2.0))
        dh = float(np.sum(np.where(s > 0, q * s ** (q - 1.0) * ds, 0.0)))
        mu_new = mu - h / dh if dh < 0 else math.nan
        if not (lo < mu_new < hi):
            # bisect in log scale: for q ~ 100 (p near 1) mu spans hundreds of decades,
            # where halving the bracket would not converge in ``iters`` steps
            if not math.isfinite(hi):
                mu_new = 4.0 * mu
            elif lo == 0.0:
                mu_new = 0.25 * mu if mu < hi else 0.25 * hi
            else:
                mu_new = math.sqrt(lo * hi)
        if abs(mu_new - mu) <= 1e-16 * mu:
            break
        mu = mu_new
    return np.sign(a) * _solve_shrink(abs_a, mu * q, q), mu


class L0(Penalty):
    name, formula, convex = "l0", "#{j : w_j != 0}", False

    def value(self, w: np.ndarray) -> float:
        return float(np.count_nonzero(w))

    def _refuse(self, what):
        raise NotApplicableError(f"the l0 penalty ({self.formula}) is for evaluation only: it is "
                                 f"not convex, so it has no {what}")

    def subgradient(self, w: np.ndarray) -> NoReturn:
        self._refuse("subgradient")

    def subdifferential(self, w: np.ndarray, tol: float = 0.0) -> NoReturn:
        self._refuse("subdifferential")

    def cvxpy(self, w: Any) -> NoReturn:
        self._refuse("convex cvxpy expression (the exact solver refuses it)")


PENALTIES: dict[str, type] = {cls.name: cls for cls in (NoPenalty, L1, L2, Lp, ElasticNet, L0)}
#: The parameters each penalty's constructor accepts (none when absent).
PENALTY_PARAMS: dict[str, set] = {"lp": {"p"}, "elastic_net": {"l1_ratio"}}


def register_penalty(cls: type, params: tuple = ()) -> type:
    """Add the :class:`Penalty` subclass ``cls`` to :data:`PENALTIES` under ``cls.name``,
    with the constructor parameters ``params`` that ``make_penalty`` may pass; returns it.

    Raises
    ------
    ParameterError
        Not a Penalty subclass, or another class holds that name.
    """
    if not (isinstance(cls, type) and issubclass(cls, Penalty)) or not cls.name:
        raise ParameterError(f"register_penalty takes a named Penalty subclass; got {cls!r}")
    if PENALTIES.get(cls.name, cls) is not cls:
        raise ParameterError(f"a penalty named {cls.name!r} is already registered")
    PENALTIES[cls.name] = cls
    PENALTY_PARAMS[cls.name] = set(params)
    return cls


def make_penalty(penalty: Any = "l2", **params) -> Penalty:
    """A :class:`Penalty` from its name and parameters (``p`` for lp, ``l1_ratio`` for
    elastic_net), or pass a Penalty through.

    Raises
    ------
    ParameterError
        Unknown name, unknown parameter for that penalty, or a parameter out of range.
    """
    if isinstance(penalty, Penalty):
        if params:
            raise ParameterError(f"penalty parameters {sorted(params)} given with a ready-made "
                                 f"{penalty.describe()} penalty")
        return penalty
    cls = PENALTIES[check_choice("penalty", penalty, PENALTIES)]
    accepted = PENALTY_PARAMS.get(penalty, set())
    unknown = set(params) - accepted
    if unknown:
        raise ParameterError(f"unknown parameter(s) {sorted(unknown)} for penalty {penalty!r}; "
                             f"it accepts {sorted(accepted) or 'none'}")
    return cls(**params)
