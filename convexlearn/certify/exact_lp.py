"""Exact separability verdicts over Q: a phase-1 simplex in rational arithmetic.

Every float is a dyadic rational, so X, y define an LP over Q whose answer is a fact
about the data. Where the float LP's certificate does not verify exactly (nearly touching
hulls), :func:`exact_verdict` decides: the certificate system

    A lambda = c,  lambda >= 0,   a_i = (y_i x_i, [y_i = +1], [y_i = -1]),  c = (0, 1, 1)

is solved by a phase-1 simplex (Bland's rule) in Fractions, warm-started from the float
LP's basis. Optimum 0 gives an exact lambda; otherwise the phase-1 duals give an exact
hyperplane (Farkas). Either is re-checked in integers from the data
(:func:`verify_hyperplane_rational`, :func:`verify_certificate_rational`). Beyond
:data:`EXACT_LP_MAX_ENTRIES` or :data:`EXACT_LP_MAX_PIVOTS` the verdict stays unproven.
The steps in detail: docs/routes.md, "Design notes of the algorithms".
"""

from __future__ import annotations

from typing import Any

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from .separability import CertificateCheck, balance, class_sums, dyadic, signed_data

__all__ = ["ExactVerdict", "exact_verdict", "exact_lp_fits", "verify_hyperplane_rational",
           "verify_certificate_rational", "EXACT_LP_MAX_ENTRIES", "EXACT_LP_MAX_PIVOTS"]

#: Largest exact tableau (entries ``(d + k) (n + d + k + 1)``) the exact simplex builds:
#: about 3000 samples in 2-D, 1000 in 5-D (measured: 1000 x 5 Gaussian data, 35 pivots from
#: a cold start, 7 s; the entries are Fractions with denominators up to 2**1074).
EXACT_LP_MAX_ENTRIES = 20_000
#: Pivot budget of the exact simplex (Bland's rule is slow but finite).
EXACT_LP_MAX_PIVOTS = 2_000


@dataclass
class ExactVerdict:
    """The exact simplex's answer and its independent check.

    ``separable`` is the verdict; ``w, b`` (Fractions, margins >= 1 exactly) or
    ``lam`` (Fractions, a certificate) the proof; ``check`` the integer re-check of it;
    ``pivots`` the simplex's pivot count (warm-start pivots included).
    """

    separable: bool
    w: list | None
    b: Fraction | None
    lam: list | None
    check: CertificateCheck
    pivots: int


def exact_lp_fits(n: int, d: int, homogeneous: bool = False) -> bool:
    """True when the exact tableau of n samples in dimension d is within the size limit."""
    m = d + (1 if homogeneous else 2)
    return m * (n + m + 1) <= EXACT_LP_MAX_ENTRIES


def _columns(X: np.ndarray, y: np.ndarray, homogeneous: bool) -> tuple[list, list]:
    """Rows of the exact equality system ``A lambda = c`` as lists of Fractions, and c."""
    n, d = X.shape
    A = [[Fraction(float(v)) for v in (X[:, j] * y)] for j in range(d)]  # y x exact: y = +-1
    if homogeneous:
        A.append([Fraction(1)] * n)
        c = [Fraction(0)] * d + [Fraction(1)]
    else:
        A.append([Fraction(int(v > 0)) for v in y])
        A.append([Fraction(int(v < 0)) for v in y])
        c = [Fraction(0)] * d + [Fraction(1), Fraction(1)]
    return A, c


class _Tableau:
    """Dense exact tableau ``[B^-1 A | B^-1 | B^-1 a_t | B^-1 c]``: n sample columns, m row
    artificials (the identity at the start, so their columns hold B^-1), one single
    artificial t."""

    def __init__(self, A: list, c: list):
        self.m, self.n = len(A), len(A[0])
        m, n = self.m, self.n
        self.rows = [A[i] + [Fraction(int(i == k)) for k in range(m)] + [Fraction(0), c[i]]
                     for i in range(m)]
        self.basis = [n + i for i in range(m)]
        self.t = n + m                  # the single artificial's column
        self.pivots = 0

    def pivot(self, r: int, s: int) -> None:
        rows = self.rows
        p = rows[r][s]
        row_r = [v / p for v in rows[r]]
        rows[r] = row_r
        nz = [k for k, v in enumerate(row_r) if v]
        for i in range(self.m):
            f = rows[i][s]
            if i != r and f:
                row_i = rows[i]
                for k in nz:
                    row_i[k] -= f * row_r[k]
        self.basis[r] = s
        self.pivots += 1

    def crash(self, hint) -> None:
        """Pivot the hint columns into the basis (the float LP's basis, rebuilt exactly)."""
        for h in hint:
            free = [i for i in range(self.m) if self.basis[i] >= self.n and self.rows[i][h]]
            if free:
                self.pivot(max(free, key=lambda i: abs(self.rows[i][h])), int(h))

    def make_feasible(self) -> None:
        """Single artificial: -1 on every row with a negative value, pivoted in at the most
        negative one; afterwards every basic value is >= 0."""
        neg = [i for i in range(self.m) if self.rows[i][-1] < 0]
        if not neg:
            return
        for i in neg:
            self.rows[i][self.t] = Fraction(-1)
        self.pivot(min(neg, key=lambda i: self.rows[i][-1]), self.t)

    def phase1(self, max_pivots: int) -> bool:
        """Minimize the artificials with Bland's rule; False when out of pivots."""
        n, m = self.n, self.m
        cost = lambda j: 0 if j < n else 1  # noqa: E731
        while True:
            cB = [cost(j) for j in self.basis]
            enter = None
            for j in range(n + m + 1):
                if j in self.basis:
                    continue
                rc = cost(j) - sum(cB[i] * self.rows[i][j] for i in range(m) if cB[i])
                if rc < 0:
                    enter = j
                    break
            if enter is None:
                return True
            if self.pivots >= max_pivots:
                return False
            best = None
            for i in range(m):
                a = self.rows[i][enter]
                if a > 0:
                    key = (self.rows[i][-1] / a, self.basis[i])
                    if best is None or key < best[0]:
                        best = (key, i)
            # Phase 1 is bounded below by 0: an entering column always has a positive entry.
            self.pivot(best[1], enter)

    def objective(self) -> Fraction:
        return sum((self.rows[i][-1] for i in range(self.m) if self.basis[i] >= self.n),
                   Fraction(0))

    def duals(self) -> list:
        """pi = c_B^T B^-1 (the row artificials' columns hold B^-1)."""
        n, m = self.n, self.m
        return [sum((self.rows[i][n + k] for i in range(m) if self.basis[i] >= n), Fraction(0))
                for k in range(m)]


def exact_verdict(X: ArrayLike, y: ArrayLike, homogeneous: bool = False, hint: Any = None,
                  max_pivots: int = EXACT_LP_MAX_PIVOTS) -> ExactVerdict | None:
    """Decide linear separability exactly over Q (see the module docstring).

    Parameters
    ----------
    X, y : the data (y in {-1, +1}); floats are taken as the exact rationals they are.
    homogeneous : bool
    hint : sequence of int, optional
        Samples whose columns start in the basis (the float LP's active set).
    max_pivots : int

    Returns
    -------
    ExactVerdict, or None when the problem exceeds :data:`EXACT_LP_MAX_ENTRIES` or the
    pivot budget (the verdict is then unproven).
    """
    X, y = signed_data(X, y)
    n, d = X.shape
    if not exact_lp_fits(n, d, homogeneous):
        return None
    A, c = _columns(X, y, homogeneous)
    tab = _Tableau(A, c)
    tab.crash([] if hint is None else list(dict.fromkeys(int(h) for h in hint)))
    tab.make_feasible()
    if not tab.phase1(max_pivots):
        return None
    if tab.objective() == 0:
        lam = [Fraction(0)] * n
        for i, j in enumerate(tab.basis):
            if j < n:
                lam[j] = tab.rows[i][-1]
        check = verify_certificate_rational(X, y, lam, homogeneous=homogeneous)
        return ExactVerdict(False, None, None, lam, check, tab.pivots)
    u = [-p for p in tab.duals()]
    if homogeneous:
        s, b = -u[d], Fraction(0)
    else:
        s, b = -(u[d] + u[d + 1]) / 2, (u[d] - u[d + 1]) / 2
    w = [v / s for v in u[:d]]
    b = b / s
    check = verify_hyperplane_rational(X, y, w, b)
    return ExactVerdict(True, w, b, None, check, tab.pivots)


def _integers(values) -> tuple[list[int], int]:
    """Integers N and a common denominator L > 0 with ``values == N / L`` exactly."""
    values = [Fraction(v) for v in values]
    L = math.lcm(*(v.denominator for v in values)) if values else 1
    return [v.numerator * (L // v.denominator) for v in values], L


def verify_hyperplane_rational(X: ArrayLike, y: ArrayLike, w: Any,
                               b: Any = Fraction(0)) -> CertificateCheck:
    """Exact check, in integers, that ``y_i (<w, x_i> + b) >= 1`` for every sample, with
    w, b rational (Fractions or floats, taken exactly)."""
    X, y = signed_data(X, y)
    if len(w) != X.shape[1]:
        return CertificateCheck("separable", "hyperplane", "exact", False,
                                message=f"w must have length {X.shape[1]}")
    NX, EX = dyadic(X)
    Nw, L = _integers(list(w) + [b])
    # L 2**EX m_i = y_i (NX_i . Nw + Nb 2**EX), compared with L 2**EX.
    lhs = (NX @ np.array(Nw[:-1], dtype=object) + (Nw[-1] << EX)) * np.where(
        y > 0, 1, -1).astype(object)
    one = L << EX
    worst = int(np.argmin(lhs))
    m_min = Fraction(int(lhs[worst]), one)
    if m_min < 1:
        return CertificateCheck("separable", "hyperplane", "exact", False,
                                {"margin": float(1 - m_min)},
                                message=f"sample {worst} has exact margin {float(m_min):.6g} < 1")
    return CertificateCheck("separable", "hyperplane", "exact", True, {"margin": 0.0},
                            message=f"exact simplex over Q: all {len(y)} margins >= 1 exactly "
                                    f"(smallest {float(m_min):.10g})",
                            exact=(list(w), Fraction(b)))


def verify_certificate_rational(X: ArrayLike, y: ArrayLike, lam: float, *,
                                homogeneous: bool = False) -> CertificateCheck:
    """Exact check, in integers, of a rational lambda: ``lambda >= 0``, class sums 1
    (homogeneous: total 1) and ``sum_i lambda_i y_i x_i = 0``."""
    X, y = signed_data(X, y)

    def fail(msg: str) -> CertificateCheck:
        return CertificateCheck("not separable", "lambda", "exact", False, message=msg)

    if len(lam) != X.shape[0]:
        return fail(f"lambda must have length {X.shape[0]}")
    N, L = _integers(lam)
    if min(N) < 0:
        return fail(f"lambda_{int(np.argmin(N))} < 0")
    N_arr = np.array(N, dtype=object)
    if any(t != L for t in class_sums(N_arr, y, homogeneous)):
        return fail("the class sums of lambda are not exactly 1")
    NX, _ = dyadic(X)
    if np.any(balance(N_arr, y, NX) != 0):
        return fail("sum_i lambda_i y_i x_i != 0 exactly")
    support = [i for i, v in enumerate(N) if v]
    return CertificateCheck("not separable", "lambda", "exact", True,
                            {"sign": 0.0, "normalization": 0.0, "balance": 0.0},
                            message=f"exact simplex over Q: lambda on {len(support)} samples, "
                                    f">= 0, class sums 1, sum lambda_i y_i x_i = 0 exactly",
                            exact=[Fraction(v, L) for v in N])
