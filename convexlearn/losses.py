"""The loss catalogue of regularized ERM.

Classification losses are functions of the margin m = y f (labels y in {-1, +1},
decision value f = <w, x> + b); regression losses are functions of (y, f) with real
targets y (docs/conventions.md):

======================  ==============================  ==========  ==========  ===========
name                    loss                            task        smooth      curvature
======================  ==============================  ==========  ==========  ===========
hinge                   max(0, 1 - m)                   classif.    no (m = 1)  -
squared_hinge           max(0, 1 - m)^2                 classif.    C^1         2
logistic                log(1 + exp(-m))                classif.    C^inf       1/4
logistic_log2           log2(1 + exp(-m))               classif.    C^inf       1/(4 log 2)
exponential             exp(-m)                         classif.    C^inf       unbounded
perceptron              max(0, -m)                      classif.    no (m = 0)  -
squared_classification  (1 - m)^2 = (y - f)^2           classif.    C^inf       2
squared                 (y - f)^2                       regression  C^inf       2
zero_one                1[y != sign(f)], sign(0) = +1   classif.    not convex  -
======================  ==============================  ==========  ==========  ===========

"curvature" is sup_f d^2 loss / df^2, the Lipschitz constant of the derivative in f
(step sizes of first-order methods); the exponential loss has none, so its solvers
use a line search. The logistic loss log(1 + exp(-m)) is evaluated as
``max(-m, 0) + log1p(exp(-|m|))`` — the identity ``np.logaddexp(0, -m)`` uses, exact for
every m (never ``log1p(exp(-m))``, which overflows), written with numpy's vectorized
ufuncs, 3-4x faster than ``logaddexp`` — and as ``cp.logistic(-m)`` in cvxpy.
"logistic_log2" is the lectures' variant: the natural logistic divided by log 2.

What solvers and certificates may use of a loss is its set of capabilities
(:meth:`Loss.capabilities`, the vocabulary in :data:`Loss.VOCABULARY`): derived from what the
entry provides (a derivative, a Hessian, a conjugate, a cvxpy expression, a kink, the
Lipschitz constants) and from its declared ``shape`` and facts. The conjugates in f
(margin losses: l^*(u) = phi^*(y u); regression losses of the residual r = f - y with
r -> psi(r): l^*(u) = u y + psi^*(u)) serve the Fenchel gap of :mod:`convexlearn.certify.duality`.

Adding a loss touches this file only: write one :class:`Loss` and register it with
:func:`register_loss` (or in :data:`LOSSES`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .capabilities import Capable
from .data import check_choice
from .errors import NotApplicableError, ParameterError

__all__ = ["Loss", "LOSSES", "LOSS_FACTORIES", "absolute_loss", "epsilon_insensitive_loss",
           "huber_loss", "loss_parameters", "make_loss", "quantile_loss", "register_loss",
           "registered_name"]

_LN2 = math.log(2.0)


class _LazyCvxpy:
    """The cvxpy module, imported at the first attribute read. The catalogue's ``_cvx``
    expressions name ``cp``, but only the exact (cvxpy) solvers call them, and importing
    cvxpy takes 0.4-0.8 s that ``import convexlearn`` and the fast routes do not need."""

    def __getattr__(self, name: str) -> Any:
        import cvxpy
        return getattr(cvxpy, name)


cp = _LazyCvxpy()


@dataclass(frozen=True)
class Loss(Capable):
    """One loss function ``loss(y, f)`` with what solvers need from it.

    For a margin loss ``loss(y, f) = phi(y f)``, derivatives in f follow from the chain
    rule: ``d/df = y phi'(m)`` and ``d^2/df^2 = phi''(m)`` (y^2 = 1).

    Attributes
    ----------
    name : str
    task : str
        "classification" (labels mapped to {-1, +1}) or "regression" (real targets).
    formula : str
        The loss as text, for messages and reports.
    convex, differentiable, twice_differentiable : bool
        What first- and second-order methods may assume. The squared hinge is C^1 with a
        generalized second derivative 2 * 1[m < 1] (LIBLINEAR's), so Newton is allowed on
        it (semismooth Newton) although it is not twice differentiable at m = 1.
    curvature : float or None
        sup_f d^2 loss / df^2 (None: unbounded or not differentiable).
    kink : float or None
        The margin at which a piecewise loss is not differentiable.
    lipschitz : float or None
        sup |d loss / df|, the Lipschitz constant of the loss in f (None: unbounded).
    shape : str or None
        "piecewise_linear", "quadratic" or "piecewise_quadratic" in f (a QP writes it),
        None otherwise (the exact formulation is conic).
    declared : frozenset
        Facts no callable shows: "least_squares" (loss = (y - f)^2), "hinge_form"
        (loss = max(0, kink - m)), "minimal_at_zero" (loss(y, 0) = min loss: (w, b) = 0
        minimizes F for every penalty minimal at 0).
    """

    KIND = "loss"
    VOCABULARY = {
        "value": "per-sample values",
        "convex": "convex in f",
        "subgradient": "a subgradient and the subdifferential in f",
        "gradient": "differentiable in f",
        "hessian": "a (generalized) second derivative in f, for Newton",
        "twice_differentiable": "C^2 in f",
        "curvature": "a bounded second derivative (Lipschitz gradient), for step sizes",
        "lipschitz": "a bounded first derivative (Lipschitz in f)",
        "kink": "one kink: piecewise smooth with a known non-differentiable margin",
        "conjugate": "its convex conjugate in f, for the Fenchel duality gap",
        "cvxpy": "a convex cvxpy expression, for the exact formulation",
        "piecewise_linear": "piecewise linear in f (an LP/QP writes it)",
        "quadratic": "quadratic in f (a QP writes it)",
        "piecewise_quadratic": "piecewise quadratic in f (a QP writes it)",
        "least_squares": "the loss is (y - f)^2 (Gram-matrix methods, closed forms, homotopy)",
        "hinge_form": "the loss is max(0, kink - y f) (the LP route; kink 1: the SVM)",
        "minimal_at_zero": "loss(y, 0) is the loss's minimum, so (w, b) = 0 minimizes F",
        "prox": "the proximal operator of t loss(y, .) in f, per sample",
        "pieces": "breakpoints and slopes of a convex piecewise-linear loss of the residual "
                  "f - y (the dual LP / QP routes; its kinks enter the certificate)",
    }

    name: str
    task: str
    formula: str
    convex: bool
    differentiable: bool
    twice_differentiable: bool
    curvature: float | None
    kink: float | None
    _value: Callable
    _dphi: Callable | None = None           # derivative in the margin (or in f for regression)
    _d2phi: Callable | None = None          # second derivative
    _kink_slopes: tuple | None = None       # (left, right) derivative in m at the kink
    _cvx: Callable | None = None            # cvxpy expression of the margin (or of y, f)
    _value_yf: Callable | None = None       # value as a function of (y, f), when not of m
    #: loss > 0 everywhere but -> 0 as m -> +inf: without a penalty, separable data leave
    #: F without a minimizer (ERM checks this with a separability LP).
    zero_only_at_infinity: bool = False
    lipschitz: float | None = None
    shape: str | None = None
    declared: frozenset = frozenset()
    _conj: Callable | None = None           # phi^* (margin) or psi^* (residual), per sample
    #: (breakpoints r_1 < ... < r_K, slopes s_0 < ... < s_K) of a piecewise-linear loss of
    #: the residual r = f - y: psi has slope s_k on (r_k, r_{k+1}), psi(r_1) = min on the
    #: pieces' values (see :meth:`pieces`).
    _pieces: tuple | None = None
    #: prox of t psi in the residual r = f - y: (v, t) -> argmin_r t psi(r) + (r - v)^2 / 2
    _prox: Callable | None = None
    #: the parameters of a parameterized loss, as (name, value) pairs (``describe``)
    params: tuple = ()

    def __post_init__(self):
        if self.shape is not None and self.shape not in self.VOCABULARY:
            raise ParameterError(f"unknown loss shape {self.shape!r}")
        provided = {"subgradient": self._dphi, "hessian": self._d2phi,
                    "cvxpy": self._cvx, "conjugate": self._conj, "pieces": self._pieces,
                    "prox": self._prox}
        facts = {"value": True, "convex": self.convex, "gradient": self.differentiable,
                 "twice_differentiable": self.twice_differentiable,
                 "curvature": self.curvature is not None,
                 "lipschitz": self.lipschitz is not None, "kink": self.kink is not None}
        caps = ({c for c, f in provided.items() if f is not None}
                | {c for c, ok in facts.items() if ok} | set(self.declared)
                | ({self.shape} if self.shape else set()))
        unknown = caps - set(self.VOCABULARY)
        if unknown:
            raise ParameterError(f"unknown loss capabilities {sorted(unknown)}")
        object.__setattr__(self, "_caps", frozenset(caps))

    def capabilities(self) -> frozenset[str]:
        """The capability names of this loss (see :data:`VOCABULARY`)."""
        return self._caps

    @property
    def margin_based(self) -> bool:
        """True for classification losses: phi and its derivatives take the margin m = y f
        (regression losses take the residual f - y).
        """
        return self.task == "classification"

    @property
    def has_hessian(self) -> bool:
        """True when a (generalized) second derivative is defined, so Newton applies."""
        return self._d2phi is not None

    def _arg(self, y, f):
        return y * f if self.margin_based else f - y

    def value(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """Per-sample loss values ``loss(y_i, f_i)``."""
        if self._value_yf is not None:
            return self._value_yf(y, f)
        return self._value(self._arg(y, f))

    def derivative(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """A subgradient of ``loss(y_i, .)`` at f_i, per sample (the gradient where smooth).

        At a kink the right derivative in the margin is used (0 for the hinge at m = 1).
        """
        self._require(self._dphi is not None, "a subgradient")
        d = self._dphi(self._arg(y, f))
        return y * d if self.margin_based else d

    def kinks(self) -> list[tuple[float, float, float]]:
        """Every non-differentiable point of the loss's argument (the margin, or the residual
        f - y of a regression loss) with its (left, right) slopes there; [] when smooth."""
        if self.kink is not None:
            return [(self.kink, *self._kink_slopes)]
        if self._pieces is not None:
            bps, slopes = self._pieces
            return [(r, slopes[k], slopes[k + 1]) for k, r in enumerate(bps)]
        return []

    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        """(breakpoints r_1 < ... < r_K, slopes s_0 < ... < s_K) of a piecewise-linear
        regression loss psi(r), r = f - y: slope s_k between r_k and r_{k+1}. Its conjugate
        is psi^*(u) = max_k (u r_k - psi(r_k)) on [s_0, s_K] (inf outside): the dual LP and
        QP routes write it with one variable per slope interval."""
        self._require(self._pieces is not None, "breakpoints and slopes (the dual LP)")
        bps, slopes = self._pieces
        return np.array(bps, dtype=float), np.array(slopes, dtype=float)

    def subdifferential(self, y: np.ndarray, f: np.ndarray, kink_tol: float = 0.0) -> Any:
        """Interval ``[lo_i, hi_i]`` = the subdifferential of ``loss(y_i, .)`` at f_i.

        Arguments (margin or residual) within ``kink_tol`` of a kink are treated as lying on
        it (a floating-point solution never lands exactly there), so their interval is the
        full one; two kinks closer than 2 kink_tol give the nearer one.
        """
        self._require(self._dphi is not None, "a subdifferential")
        d = self.derivative(y, f)
        lo, hi = d.copy(), d.copy()
        arg = self._arg(y, f)
        for position, left, right in self.kinks():
            on_kink = np.abs(arg - position) <= kink_tol
            scale = y[on_kink] if self.margin_based else 1.0
            a, b = scale * left, scale * right
            lo[on_kink], hi[on_kink] = np.minimum(a, b), np.maximum(a, b)
        return lo, hi

    def hessian(self, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        """d^2 loss(y_i, f) / df^2 at f_i, per sample (generalized for the squared hinge)."""
        self._require(self._d2phi is not None, "a second derivative (Newton)")
        return self._d2phi(self._arg(y, f))

    def conjugate(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """l_i^*(u_i) = sup_f u_i f - loss(y_i, f), per sample (inf outside the domain):
        phi^*(y_i u_i) for a margin loss, u_i y_i + psi^*(u_i) for a residual loss."""
        self._require(self._conj is not None, "a conjugate (Fenchel gap)")
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.margin_based:
                return self._conj(y * u)
            return u * y + self._conj(u)

    def prox(self, y: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """argmin_f t loss(y_i, f) + (f - v_i)^2 / 2, per sample (t > 0): for a residual loss
        y + prox_{t psi}(v - y)."""
        self._require(self._prox is not None and not self.margin_based, "a prox")
        return y + self._prox(np.asarray(v, dtype=float) - y, float(t))

    def cvxpy(self, y: np.ndarray, f: Any) -> cp.Expression:
        """The per-sample losses as a convex cvxpy expression of the decision values ``f``."""
        self._require(self._cvx is not None, "a convex cvxpy expression (exact solver)")
        if self.margin_based:
            return self._cvx(cp.multiply(y, f))
        return self._cvx(f - y)

    def _require(self, ok: bool, what: str) -> None:
        if ok:
            return
        if not self.convex:
            why = "it is for evaluation only (not convex)"
        elif self.kink is not None:
            why = f"it is not differentiable at m = {self.kink:g}"
        else:
            why = "it is not implemented for this loss"
        raise NotApplicableError(f"the {self.name} loss ({self.formula}) has no {what}: {why}")

    def describe(self) -> str:
        """The name with its parameters, e.g. ``quantile(quantile=0.3)``; else the name."""
        extra = ", ".join(f"{k}={v:g}" for k, v in self.params)
        return self.name + (f"({extra})" if extra else "")

    def label(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"Loss({self.describe()!r}: {self.formula})"


def _log1p_exp_neg(m):
    """log(1 + exp(-m)) without overflow: max(-m, 0) + log1p(exp(-|m|))."""
    return np.maximum(-m, 0.0) + np.log1p(np.exp(-np.abs(m)))


def _sigmoid_neg(m):
    """sigma(-m) = 1 / (1 + exp(m)), to a few ulp. exp(m) = inf beyond m = 709.78 gives
    exactly 0 there (true value < 2.3e-308, a subnormal); in place, 2.5-5x faster than
    scipy's expit (5000 to 1e6 samples, measured)."""
    with np.errstate(over="ignore"):
        out = np.exp(m)
    out += 1.0
    return np.reciprocal(out, out=out)


def _sigmoid_curvature(m):
    """sigma(m) sigma(-m) = e / (1 + e)^2 with e = exp(-|m|) (even in m, no overflow)."""
    e = np.exp(-np.abs(m))
    return e / (1.0 + e) ** 2


def _exp_neg(m):
    # exp(-m) overflows to inf for m < -709: that is the true value in floating point,
    # and line searches reject such steps; silence the warning.
    with np.errstate(over="ignore"):
        return np.exp(-m)


def _xlogx(x):
    """x log x with 0 log 0 = 0."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log(x[pos])
    return out


def _outside(out, bad):
    """``out`` with inf where ``bad`` (outside a conjugate's domain)."""
    out = np.array(out, dtype=float)
    out[bad] = np.inf
    return out


def _logistic_conj(v):
    """(-v) log(-v) + (1 + v) log(1 + v) on -1 <= v <= 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.clip(v, -1, 0)
        return _outside(_xlogx(-u) + _xlogx(1 + u), (v < -1) | (v > 0))


def _logistic_log2_conj(v):
    """c phi_logistic^*(v / c), c = 1/log 2, on -c <= v <= 0."""
    c = 1.0 / _LN2
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.clip(v / c, -1, 0)
        return _outside(c * (_xlogx(-u) + _xlogx(1 + u)), (v < -c) | (v > 0))


def _exponential_conj(v):
    """v + (-v) log(-v) on v <= 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return _outside(v + _xlogx(-np.minimum(v, 0.0)), v > 0)


LOSSES: dict[str, Loss] = {loss.name: loss for loss in [
    Loss("hinge", "classification", "max(0, 1 - m)", True, False, False, None, 1.0,
         lambda m: np.maximum(0.0, 1.0 - m),
         _dphi=lambda m: np.where(m < 1.0, -1.0, 0.0), _kink_slopes=(-1.0, 0.0),
         _cvx=lambda m: cp.pos(1 - m), lipschitz=1.0, shape="piecewise_linear",
         declared=frozenset({"hinge_form"}),
         _conj=lambda v: _outside(v, (v < -1) | (v > 0))),
    Loss("squared_hinge", "classification", "max(0, 1 - m)^2", True, True, False, 2.0, None,
         lambda m: np.maximum(0.0, 1.0 - m) ** 2,
         _dphi=lambda m: -2.0 * np.maximum(0.0, 1.0 - m),
         _d2phi=lambda m: np.where(m < 1.0, 2.0, 0.0),
         _cvx=lambda m: cp.square(cp.pos(1 - m)), shape="piecewise_quadratic",
         _conj=lambda v: np.where(v > 0, np.inf, v + 0.25 * v * v)),
    Loss("logistic", "classification", "log(1 + exp(-m))", True, True, True, 0.25, None,
         _log1p_exp_neg,
         _dphi=lambda m: -_sigmoid_neg(m),
         _d2phi=_sigmoid_curvature,
         _cvx=lambda m: cp.logistic(-m), zero_only_at_infinity=True, lipschitz=1.0,
         _conj=_logistic_conj),
    Loss("logistic_log2", "classification", "log2(1 + exp(-m))", True, True, True,
         0.25 / _LN2, None,
         lambda m: _log1p_exp_neg(m) / _LN2,
         _dphi=lambda m: -_sigmoid_neg(m) / _LN2,
         _d2phi=lambda m: _sigmoid_curvature(m) / _LN2,
         _cvx=lambda m: cp.logistic(-m) / _LN2, zero_only_at_infinity=True,
         lipschitz=1.0 / _LN2, _conj=_logistic_log2_conj),
    Loss("exponential", "classification", "exp(-m)", True, True, True, None, None,
         _exp_neg, _dphi=lambda m: -_exp_neg(m), _d2phi=_exp_neg,
         _cvx=lambda m: cp.exp(-m), zero_only_at_infinity=True, _conj=_exponential_conj),
    Loss("perceptron", "classification", "max(0, -m)", True, False, False, None, 0.0,
         lambda m: np.maximum(0.0, -m),
         _dphi=lambda m: np.where(m < 0.0, -1.0, 0.0), _kink_slopes=(-1.0, 0.0),
         _cvx=lambda m: cp.pos(-m), lipschitz=1.0, shape="piecewise_linear",
         declared=frozenset({"hinge_form", "minimal_at_zero"}),
         _conj=lambda v: np.where((v < -1) | (v > 0), np.inf, 0.0)),
    Loss("squared_classification", "classification", "(1 - m)^2", True, True, True, 2.0, None,
         lambda m: (1.0 - m) ** 2,
         _dphi=lambda m: -2.0 * (1.0 - m), _d2phi=lambda m: np.full_like(m, 2.0),
         _cvx=lambda m: cp.square(1 - m), shape="quadratic",
         declared=frozenset({"least_squares"}), _conj=lambda v: v + 0.25 * v * v),
    # Regression: the argument is the residual r = f - y.
    Loss("squared", "regression", "(y - f)^2", True, True, True, 2.0, None,
         lambda r: r ** 2,
         _dphi=lambda r: 2.0 * r, _d2phi=lambda r: np.full_like(r, 2.0),
         _cvx=lambda r: cp.square(r), shape="quadratic",
         declared=frozenset({"least_squares"}), _conj=lambda u: 0.25 * u * u),
    # sign(0) = +1 cannot be read off the margin alone (m = 0 is an error for y = -1 only).
    Loss("zero_one", "classification", "1[y != sign(f)], sign(0) = +1", False, False, False,
         None, None, None,
         _value_yf=lambda y, f: np.where(np.where(f >= 0.0, 1.0, -1.0) != y, 1.0, 0.0)),
]}


#: Relative slack of the conjugates' domain bounds below: a dual point clipped to a bound
#: and then divided by a sample weight lands a rounding error outside it.
_DOMAIN_SLACK = 1e-12


def _on_interval(u, lo, hi, value):
    """``value`` where lo <= u <= hi (to :data:`_DOMAIN_SLACK` relative), inf elsewhere."""
    slack = _DOMAIN_SLACK * max(abs(lo), abs(hi), 1.0)
    return _outside(value, (u < lo - slack) | (u > hi + slack))


def _check_real(name: str, value: Any, low: float, high: float, low_open: bool,
                high_open: bool, loss: str) -> float:
    """``value`` as a float inside the interval, else a ParameterError naming the bound."""
    ok = (isinstance(value, (int, float, np.integer, np.floating))
          and not isinstance(value, (bool, np.bool_)) and math.isfinite(float(value)))
    if ok:
        v = float(value)
        ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        interval = (("(" if low_open else "[") + f"{low:g}, " +
                    ("inf" if high == math.inf else f"{high:g}") + (")" if high_open else "]"))
        raise ParameterError(f"the {loss} loss needs {name} in {interval}; got "
                             f"{name}={value!r}")
    return float(value)


def _pieces_prox(breakpoints, slopes) -> Callable:
    """prox of t psi for psi piecewise linear (breakpoints r_k, slopes s_0 < ... < s_K):
    r = v - t s_k while that stays on piece k, r = r_k for v in [r_k + t s_{k-1},
    r_k + t s_k] (the optimality condition (v - r) / t in dpsi(r))."""
    bps, sl = np.asarray(breakpoints, float), np.asarray(slopes, float)

    def prox(v, t):
        r = v - t * sl[0]
        for k, position in enumerate(bps):
            # past breakpoint k: held there, then slope s_{k+1}
            r = np.where(v > position + t * sl[k], position, r)
            r = np.where(v > position + t * sl[k + 1], v - t * sl[k + 1], r)
        return r
    return prox


def absolute_loss() -> Loss:
    """|y - f|: slopes -1, +1 at r = f - y = 0; conjugate 0 on [-1, 1]."""
    return Loss("absolute", "regression", "|y - f|", True, False, False, None, None,
                np.abs, _dphi=lambda r: np.where(r < 0.0, -1.0, 1.0),
                _cvx=lambda r: cp.abs(r), lipschitz=1.0, shape="piecewise_linear",
                _conj=lambda u: _on_interval(u, -1.0, 1.0, np.zeros_like(u)),
                _pieces=((0.0,), (-1.0, 1.0)), _prox=_pieces_prox((0.0,), (-1.0, 1.0)))


def quantile_loss(quantile: float = 0.5) -> Loss:
    """The pinball loss max(tau (y - f), (tau - 1)(y - f)), tau = ``quantile`` in (0, 1)
    (scikit-learn's QuantileRegressor name). In r = f - y: max(-tau r, (1 - tau) r),
    slopes -tau, 1 - tau at 0; conjugate 0 on [-tau, 1 - tau]."""
    tau = _check_real("quantile", quantile, 0.0, 1.0, True, True, "quantile")
    return Loss("quantile", "regression", f"max(tau (y - f), (tau - 1)(y - f)), tau={tau:g}",
                True, False, False, None, None,
                lambda r: np.maximum(-tau * r, (1.0 - tau) * r),
                _dphi=lambda r: np.where(r < 0.0, -tau, 1.0 - tau),
                _cvx=lambda r: cp.maximum(-tau * r, (1.0 - tau) * r),
                lipschitz=max(tau, 1.0 - tau), shape="piecewise_linear",
                _conj=lambda u: _on_interval(u, -tau, 1.0 - tau, np.zeros_like(u)),
                _pieces=((0.0,), (-tau, 1.0 - tau)), params=(("quantile", tau),),
                _prox=_pieces_prox((0.0,), (-tau, 1.0 - tau)))


def epsilon_insensitive_loss(epsilon: float = 0.1) -> Loss:
    """max(0, |y - f| - epsilon), epsilon >= 0 (SVR's tube; epsilon = 0 is |y - f|): kinks
    at r = -epsilon (slopes -1, 0) and +epsilon (0, 1); conjugate epsilon |u| on [-1, 1]."""
    eps = _check_real("epsilon", epsilon, 0.0, math.inf, False, True, "epsilon_insensitive")
    pieces = ((0.0,), (-1.0, 1.0)) if eps == 0.0 else ((-eps, eps), (-1.0, 0.0, 1.0))
    return Loss("epsilon_insensitive", "regression",
                f"max(0, |y - f| - epsilon), epsilon={eps:g}", True, False, False, None, None,
                lambda r: np.maximum(np.abs(r) - eps, 0.0),
                _dphi=lambda r: np.where(r < -eps, -1.0, np.where(r >= eps, 1.0, 0.0)),
                _cvx=lambda r: cp.pos(cp.abs(r) - eps), lipschitz=1.0,
                shape="piecewise_linear",
                _conj=lambda u: _on_interval(u, -1.0, 1.0, eps * np.abs(u)),
                _pieces=pieces, params=(("epsilon", eps),), _prox=_pieces_prox(*pieces))


def huber_loss(delta: float = 1.0) -> Loss:
    """Huber's loss of r = f - y: r^2 / 2 for |r| <= delta, delta |r| - delta^2 / 2 beyond
    (delta > 0; C^1, derivative clip(r, -delta, delta), generalized second derivative
    1[|r| <= delta] for semismooth Newton); conjugate u^2 / 2 on [-delta, delta]. Not
    scikit-learn's HuberRegressor objective, which also fits a scale (docs/conventions.md)."""
    delta = _check_real("delta", delta, 0.0, math.inf, True, True, "huber")
    return Loss("huber", "regression",
                f"r^2/2 for |r| <= delta, delta |r| - delta^2/2 beyond (r = y - f), "
                f"delta={delta:g}", True, True, False, 1.0, None,
                lambda r: np.where(np.abs(r) <= delta, 0.5 * r * r,
                                   delta * np.abs(r) - 0.5 * delta * delta),
                _dphi=lambda r: np.clip(r, -delta, delta),
                _d2phi=lambda r: np.where(np.abs(r) <= delta, 1.0, 0.0),
                _cvx=lambda r: 0.5 * cp.huber(r, delta), lipschitz=delta,
                shape="piecewise_quadratic",
                _conj=lambda u: _on_interval(u, -delta, delta, 0.5 * u * u),
                _prox=lambda v, t: np.where(np.abs(v) <= delta * (1.0 + t), v / (1.0 + t),
                                            v - t * delta * np.sign(v)),
                params=(("delta", delta),))


#: Parameterized losses: name -> (factory, the parameters ``make_loss`` may pass).
LOSS_FACTORIES: dict[str, tuple[Callable[..., Loss], set]] = {
    "absolute": (absolute_loss, set()),
    "quantile": (quantile_loss, {"quantile"}),
    "epsilon_insensitive": (epsilon_insensitive_loss, {"epsilon"}),
    "huber": (huber_loss, {"delta"}),
}
for _name, (_factory, _) in LOSS_FACTORIES.items():
    LOSSES[_name] = _factory()          # the defaults: quantile 0.5, epsilon 0.1, delta 1


def loss_parameters(name: Any) -> set:
    """The parameters ``make_loss(name, ...)`` accepts (empty for an unparameterized or an
    unknown loss, or a ready-made Loss)."""
    entry = LOSS_FACTORIES.get(name) if isinstance(name, str) else None
    return set(entry[1]) if entry else set()


def register_loss(loss: Loss) -> Loss:
    """Add ``loss`` to :data:`LOSSES` under its name (so ``make_loss(name)``, the
    estimators and the distributed tasks find it); returns it.

    Raises
    ------
    ParameterError
        A different loss is registered under that name.
    """
    if not isinstance(loss, Loss):
        raise ParameterError(f"register_loss takes a Loss; got {type(loss).__name__}")
    if LOSSES.get(loss.name, loss) is not loss:
        raise ParameterError(f"a loss named {loss.name!r} is already registered")
    LOSSES[loss.name] = loss
    return loss


def registered_name(loss: Loss) -> str | None:
    """The catalogue key of ``loss`` when this very object is registered, else None."""
    return loss.name if LOSSES.get(loss.name) is loss else None


def make_loss(loss: Any, **params: Any) -> Loss:
    """A :class:`Loss` from its name and parameters (``quantile`` for "quantile",
    ``epsilon`` for "epsilon_insensitive", ``delta`` for "huber"), or pass a Loss through.

    Raises
    ------
    ParameterError
        For an unknown name (the message lists the valid ones), an unknown parameter for
        that loss, or a parameter out of range (the message names the bound).
    """
    if isinstance(loss, Loss):
        if params:
            raise ParameterError(f"loss parameters {sorted(params)} given with a ready-made "
                                 f"{loss.describe()} loss")
        return loss
    name = check_choice("loss", loss, LOSSES)
    if not params:
        return LOSSES[name]
    accepted = loss_parameters(name)
    unknown = set(params) - accepted
    if unknown:
        raise ParameterError(f"unknown parameter(s) {sorted(unknown)} for loss {name!r}; it "
                             f"accepts {sorted(accepted) or 'none'}")
    return LOSS_FACTORIES[name][0](**params)
