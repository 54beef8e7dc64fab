"""Independent checks of separability certificates: trust the data, not the solver.

Two certificates (docs/conventions.md), each checked from X and y alone:

* a **hyperplane** (w, b) proves *separable*: every ``m_i = y_i (<w, x_i> + b) >= 1``
  (b = 0 without intercept);
* **lambda** proves *not separable*: ``lambda >= 0``, each class sum 1 (without intercept:
  lambda != 0) and the balance ``sum_i lambda_i y_i x_i = 0``, so that
  ``sum_i lambda_i m_i = 0 < 2`` for every (w, b): the class hulls meet.

The float checks (:func:`verify_hyperplane`, :func:`verify_certificate`) divide each
residual by the rounding scale of the sum that produced it and compare with ``tol``; a
float lambda with balance residual r also proves "no margin above ||r|| / 2". The exact
checks (:func:`verify_hyperplane_exact`, :func:`verify_certificate_exact`) work over Q on
the dyadic rationals the floats are; a float lambda is first projected exactly onto the
equalities on its support. :func:`balance` and :func:`class_sums` serve every check,
float and exact. The scales and the projection in detail: docs/routes.md, "Design notes
of the algorithms".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg

from ..data import as_features
from ..errors import DataError

__all__ = ["CertificateCheck", "verify_hyperplane", "verify_hyperplane_exact",
           "verify_certificate", "verify_certificate_exact", "verify", "verify_result",
           "exact_is_cheap", "midrange", "signed_data", "dyadic", "class_sums", "balance",
           "DEFAULT_TOL", "EXACT_MAX_ENTRIES"]

#: Default relative tolerance of the floating-point checks.
DEFAULT_TOL = 1e-6
#: "Small" for the exact checks: at most this many exact products (n d for a hyperplane,
#: |support| d for lambda).
EXACT_MAX_ENTRIES = 200_000


@dataclass
class CertificateCheck:
    """The verdict of one independent check.

    Attributes
    ----------
    claim : str
        "separable" (hyperplane) or "not separable" (lambda).
    certificate : str
        "hyperplane" or "lambda".
    arithmetic : str
        "float" or "exact".
    passed : bool
        The certificate proves the claim (float: up to ``tol``).
    residuals : dict[str, float]
        Largest scaled violation of each condition (0 when it holds).
    tol : float or None
        Tolerance of a float check (None for exact checks).
    message : str
        One line for people: what was proved, or what failed and where.
    margin_bound : float or None
        Float lambda checks: no hyperplane separates with geometric margin above this.
    exact : object
        Exact checks: the exact certificate, ``(w, b)`` rescaled to margins >= 1 or the
        projected lambda, as Fractions (None when the check failed).
    """

    claim: str
    certificate: str
    arithmetic: str
    passed: bool
    residuals: dict[str, float] = field(default_factory=dict)
    tol: float | None = None
    message: str = ""
    margin_bound: float | None = None
    exact: Any = None

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        return f"{self.arithmetic} check of the {self.certificate} ({self.claim}): {verdict} - {self.message}"


def signed_data(X: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """X as checked floats, y as a float vector in {-1, +1} (one class allowed here)."""
    X = as_features(X)
    y = np.asarray(y, dtype=float).ravel()
    if y.shape[0] != X.shape[0]:
        raise DataError(f"X has {X.shape[0]} samples but y has {y.shape[0]} entries")
    if not np.all((y == 1) | (y == -1)):
        raise DataError(f"the verifier needs labels in {{-1, +1}}; got "
                        f"{np.unique(y[(y != 1) & (y != -1)])[:5].tolist()}")
    return X, y


def exact_is_cheap(n_terms: int, d: int) -> bool:
    """True when an exact check over ``n_terms`` samples in dimension d is affordable."""
    return n_terms * max(d, 1) <= EXACT_MAX_ENTRIES


# --------------------------------------------------------------------------- hyperplane
def verify_hyperplane(X: ArrayLike, y: ArrayLike, w: Any, b: float = 0.0, *,
                      tol: float = DEFAULT_TOL) -> CertificateCheck:
    """Float check that ``y_i (<w, x_i> + b) >= 1`` for all i, with scaled tolerance.

    The violation ``max(0, 1 - m_i)`` of sample i is divided by
    ``max(1, sum_j |w_j x_ij| + |b|)``, the size of the terms of its margin; the check
    passes when every scaled violation is <= ``tol`` and every margin is > 0.
    """
    X, y = signed_data(X, y)
    w = np.asarray(w, dtype=float).ravel()
    if w.shape[0] != X.shape[1] or not np.all(np.isfinite(w)) or not math.isfinite(b):
        return CertificateCheck("separable", "hyperplane", "float", False, tol=tol,
                                message=f"w must be a finite vector of length {X.shape[1]}")
    m = y * (X @ w + b)
    scale = np.maximum(1.0, np.abs(X) @ np.abs(w) + abs(b))
    violation = np.maximum(0.0, 1.0 - m) / scale
    worst = int(np.argmax(violation))
    passed = bool(violation[worst] <= tol and np.all(m > 0))
    if passed:
        message = f"all {m.size} functional margins >= 1 (smallest {m.min():.10g}, tol {tol:g})"
    else:
        message = (f"sample {worst} has functional margin {m[worst]:.10g} < 1 "
                   f"(scaled violation {violation[worst]:.3g} > tol {tol:g})")
    return CertificateCheck("separable", "hyperplane", "float", passed,
                            {"margin": float(violation[worst])}, tol, message)


def dyadic(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact integers N and exponent E with ``values == N / 2**E`` (object array of ints)."""
    ratios = [float(v).as_integer_ratio() for v in np.ravel(values)]
    E = max(q.bit_length() - 1 for _, q in ratios)
    N = np.array([p << (E - (q.bit_length() - 1)) for p, q in ratios], dtype=object)
    return N.reshape(np.shape(values)), E


def verify_hyperplane_exact(X: ArrayLike, y: ArrayLike, w: Any, b: float = 0.0) -> CertificateCheck:
    """Exact check over Q: every margin ``y_i (<w, x_i> + b)`` is > 0 in rational arithmetic.

    Computed with Python integers (every float is ``N / 2**E``). On success ``exact``
    holds ``(w / m_min, b / m_min)`` as Fractions, whose margins are >= 1 exactly.
    """
    X, y = signed_data(X, y)
    w = np.asarray(w, dtype=float).ravel()
    if w.shape[0] != X.shape[1] or not np.all(np.isfinite(w)) or not math.isfinite(b):
        return CertificateCheck("separable", "hyperplane", "exact", False,
                                message=f"w must be a finite vector of length {X.shape[1]}")
    NX, EX = dyadic(X)
    Nw, Ew = dyadic(w)
    (Nb,), Eb = dyadic(np.array([b]))
    D = max(EX + Ew, Eb)
    sign = np.where(y > 0, 1, -1).astype(object)
    # 2**D * m_i as exact integers.
    scaled = sign * ((NX @ Nw) * (1 << (D - EX - Ew)) + Nb * (1 << (D - Eb)))
    worst = int(np.argmin(scaled))
    m_min = Fraction(int(scaled[worst]), 1 << D)
    if m_min <= 0:
        return CertificateCheck("separable", "hyperplane", "exact", False,
                                {"margin": float(-m_min)},
                                message=f"sample {worst} has exact margin {float(m_min):.6g} <= 0: "
                                        f"the hyperplane does not separate")
    w_exact = [Fraction(v) / m_min for v in w]
    b_exact = Fraction(b) / m_min
    return CertificateCheck("separable", "hyperplane", "exact", True, {"margin": 0.0},
                            message=f"all {len(y)} exact margins > 0 (smallest "
                                    f"{float(m_min):.10g}); rescaled by it they are >= 1",
                            exact=(w_exact, b_exact))


# ---------------------------------------------------------------------------- lambda
def _class_rows(y: np.ndarray, homogeneous: bool) -> tuple[np.ndarray, list[str]]:
    if homogeneous:
        return np.ones((1, y.size)), ["sum"]
    return np.vstack([y > 0, y < 0]).astype(float), ["sum over y=+1", "sum over y=-1"]


def class_sums(lam: np.ndarray, y: np.ndarray, homogeneous: bool) -> list:
    """The sums a certificate normalizes: ``[sum_i lambda_i]`` (homogeneous), else
    ``[sum_{y=+1} lambda_i, sum_{y=-1} lambda_i]``; floats, or exact for integer/Fraction
    entries (object arrays)."""
    lam = np.asarray(lam)
    if homogeneous:
        return [lam.sum()]
    return [lam[y > 0].sum(), lam[y < 0].sum()]


def balance(lam: np.ndarray, y: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``r = sum_i lambda_i y_i x_i``, zero for a certificate: in floats, or exactly when
    ``lam`` and ``X`` hold Python integers (object arrays; y only contributes its sign).
    The one balance of the float, the projected and the exact-simplex checks."""
    lam = np.asarray(lam)
    sign = np.where(np.asarray(y) > 0, 1, -1)
    signed = lam * (sign.astype(object) if lam.dtype == object else sign)
    return signed @ X


def midrange(X: np.ndarray) -> np.ndarray:
    """Per-column centre of the data's range, (max + min) / 2: the point affine problems
    are translated to (Halfspace's LPs, the float lambda check)."""
    return 0.5 * (X.max(axis=0) + X.min(axis=0))


def verify_certificate(X: ArrayLike, y: ArrayLike, lam: float, *, homogeneous: bool = False,
                       tol: float = DEFAULT_TOL) -> CertificateCheck:
    """Float check of a non-separability certificate lambda, with scaled tolerances.

    Affine: ``lambda >= 0``, each class sum = 1, ``sum_i lambda_i y_i x_i = 0``.
    Homogeneous: lambda is first divided by ``sum_i lambda_i`` (which must be > 0:
    lambda = 0 proves nothing), then ``lambda >= 0`` and the balance are checked.
    See the module docstring for the scales and for ``margin_bound``.
    """
    X, y = signed_data(X, y)
    lam = np.asarray(lam, dtype=float).ravel()
    fail = lambda msg: CertificateCheck("not separable", "lambda", "float", False, tol=tol,  # noqa: E731
                                        message=msg)
    if lam.shape[0] != X.shape[0] or not np.all(np.isfinite(lam)):
        return fail(f"lambda must be a finite vector of length {X.shape[0]}")
    if homogeneous:
        total = lam.sum()
        if not total > 0:
            return fail(f"sum of lambda is {total:.6g}; a certificate needs lambda != 0, >= 0")
        lam = lam / total
    rows, names = _class_rows(y, homogeneous)
    if not homogeneous and (not np.any(y > 0) or not np.any(y < 0)):
        return fail("one class only: its convex hull cannot meet the other's")
    residuals = {"sign": float(max(0.0, -lam.min()))}
    sums = np.array(class_sums(lam, y, homogeneous), dtype=float)
    residuals["normalization"] = float(np.max(np.abs(sums - 1.0)))
    if not homogeneous:
        # With each class's lambda summing to 1, sum_i lambda_i y_i x_i is the difference of
        # two convex combinations: the same for X - c, any c. Measured on X centred at its
        # midrange, so points far from the origin (x ~ 1e9, spread ~ 1) do not inflate the
        # rounding scale and let a residual of size ~ spread pass (found in review).
        if np.any(sums <= 0):
            return fail("a class sum of lambda is <= 0: lambda does not meet both hulls")
        lam = lam / (sums @ rows)
        X = X - midrange(X)
    r = balance(lam, y, X)
    scale = np.maximum(np.abs(X).T @ np.abs(lam), 1e-300)
    residuals["balance"] = float(np.max(np.abs(r) / scale))
    passed = all(v <= tol for v in residuals.values())
    bound = 0.5 * float(np.linalg.norm(r))
    if passed:
        message = (f"lambda >= 0, class sums = 1 and sum lambda_i y_i x_i = 0 up to tol {tol:g} "
                   f"(||r|| = {2 * bound:.3g}: no hyperplane separates with margin > {bound:.3g})")
    else:
        bad = max(residuals, key=residuals.get)
        detail = {"sign": f"lambda_{int(np.argmin(lam))} = {lam.min():.6g} < 0",
                  "normalization": f"{', '.join(f'{n} = {s:.10g}' for n, s in zip(names, sums))}",
                  "balance": f"sum lambda_i y_i x_i has scaled size {residuals['balance']:.3g}"}[bad]
        message = f"{bad} fails: {detail} (tol {tol:g})"
    return CertificateCheck("not separable", "lambda", "float", passed, residuals, tol, message,
                            margin_bound=bound)


def _solve_rational(M: np.ndarray, rhs: np.ndarray) -> tuple[list[int], int] | None:
    """Exact solution ``x = X / D`` of ``M x = rhs`` (integer M of full column rank), or None.

    Fraction-free Gaussian elimination (Bareiss): after step j every entry below row j is
    a minor of M, so all divisions are exact and the Python integers stay as small as
    determinants. Returns the integer numerators X and the common denominator D > 0; None
    when a column has no pivot (dependent over Q) or the system is inconsistent.
    """
    M = np.column_stack([M, rhs]).astype(object)
    r = M.shape[1] - 1
    prev = 1
    for j in range(r):
        nonzero = np.flatnonzero(M[j:, j] != 0)
        if nonzero.size == 0:
            return None
        p = j + int(nonzero[0])
        if p != j:
            M[[j, p]] = M[[p, j]]
        pivot = M[j, j]
        M[j + 1:, j + 1:] = (pivot * M[j + 1:, j + 1:]
                             - np.outer(M[j + 1:, j], M[j, j + 1:])) // prev
        M[j + 1:, j] = 0
        prev = pivot
    if np.any(M[r:, r] != 0):
        return None
    # Fraction-free back substitution: with D = M[r-1, r-1] (= +-det of the basis),
    # X_j = D x_j are integers (Cramer), and each division below is exact.
    D = M[r - 1, r - 1]
    X = [0] * r
    for j in range(r - 1, -1, -1):
        acc = D * M[j, r] - sum(M[j, k] * X[k] for k in range(j + 1, r))
        X[j], rem = divmod(acc, M[j, j])
        assert rem == 0, "Bareiss back substitution must divide exactly"
    return (X, D) if D > 0 else ([-v for v in X], -D)


def verify_certificate_exact(X: ArrayLike, y: ArrayLike, lam: float, *, homogeneous: bool = False,
                             rounding_tol: float = DEFAULT_TOL) -> CertificateCheck:
    """Exact check over Q of a lambda certificate, after projecting it onto the equalities.

    Steps (module docstring): support ``S = {i : lambda_i > 1e-12 sum(lambda)}``;
    a float basis B of the columns of ``A_S`` (rows: ``y_i x_i`` and the class
    indicators); ``lambda_{S \\ B}`` kept at its exact rational value; ``lambda_B``
    solved for exactly. Passes iff the projected lambda is >= 0, meets every equality
    exactly and is within ``rounding_tol`` of the given lambda (entrywise, after scaling it
    to class sums 1: the projection repairs rounding, not a wrong lambda); ``exact`` then
    holds it (list of Fractions, zeros off the support).
    """
    X, y = signed_data(X, y)
    lam = np.asarray(lam, dtype=float).ravel()

    def fail(msg: str) -> CertificateCheck:
        return CertificateCheck("not separable", "lambda", "exact", False, message=msg)

    if lam.shape[0] != X.shape[0] or not np.all(np.isfinite(lam)) or not lam.sum() > 0:
        return fail(f"lambda must be a finite, nonzero vector of length {X.shape[0]}")
    if not homogeneous and (not np.any(y > 0) or not np.any(y < 0)):
        return fail("one class only: its convex hull cannot meet the other's")
    support = np.flatnonzero(lam > 1e-12 * lam.sum())
    rows, _ = _class_rows(y, homogeneous)
    A = np.vstack([(X * y[:, None]).T, rows])[:, support]       # (d + k) x |S|
    c = [0] * X.shape[1] + [1] * rows.shape[0]
    lam_S = lam[support] / (rows[:, support] @ lam[support]).mean()  # class sums near 1
    # The basis is chosen on A with each row scaled by a power of two (exact; same solution
    # set): a feature of scale 1e-8 next to one of 1e8 would otherwise fall below the rank
    # threshold and leave the basis one column short.
    row_max = np.abs(A).max(axis=1)
    exponents = np.frexp(np.where(row_max > 0, row_max, 1.0))[1]
    _, R, piv = scipy.linalg.qr(np.ldexp(A, -exponents[:, None]), mode="economic",
                                pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > max(A.shape) * np.finfo(float).eps * max(diag.max(), 1e-300)))
    basic, fixed = piv[:rank], piv[rank:]
    # Everything as integers over the common power of two: A = NA / 2**EA, and
    # lambda_fixed = NL / 2**EL; the equations are multiplied by 2**(EA + EL).
    NA, EA = dyadic(A)
    NL, EL = dyadic(lam_S[fixed]) if fixed.size else (np.zeros(0, dtype=object), 0)
    rhs = np.array([int(v) << (EA + EL) for v in c], dtype=object)
    if fixed.size:
        rhs = rhs - NA[:, fixed] @ NL
    solution = _solve_rational(NA[:, basic] * (1 << EL), rhs)
    if solution is None:
        return fail(f"no exact solution of the {A.shape[0]} equalities on the support of "
                    f"{support.size} samples (rank {rank}): lambda is not a certificate")
    # lambda_S = u / Q exactly: basic entries X / D, fixed entries NL / 2**EL.
    X_basic, D = solution
    Q = D << EL
    u = np.zeros(support.size, dtype=object)
    u[basic] = [v << EL for v in X_basic]
    u[fixed] = NL * D
    if np.any(u < 0):
        return fail(f"the exact projection has lambda_i < 0 at samples "
                    f"{support[np.flatnonzero(u < 0)][:8].tolist()}")
    # The projection repairs rounding, not a wrong certificate: it may move no entry by
    # more than `rounding_tol` (lambda is normalized to class sums 1).
    moved = max(abs(float(Fraction(int(v), Q)) - float(lam_S[k])) for k, v in enumerate(u))
    if moved > rounding_tol:
        return fail(f"the nearest exact certificate on the support of lambda differs from it by "
                    f"{moved:.3g} > rounding_tol {rounding_tol:g}: lambda is not a certificate "
                    f"up to rounding")
    # Independent final check of every condition from the data, in integers:
    # sum_{class} u_i = Q and sum_i u_i y_i NX_ij = 0 with X_S = NX / 2**EX.
    NX, _ = dyadic(X[support])
    ys = y[support]
    if any(t != Q for t in class_sums(u, ys, homogeneous)) or np.any(balance(u, ys, NX) != 0):
        return fail("the projected lambda does not satisfy the equalities exactly")
    full = [Fraction(0)] * X.shape[0]
    for i, v in zip(support.tolist(), u):
        full[i] = Fraction(int(v), Q)
    return CertificateCheck("not separable", "lambda", "exact", True,
                            {"sign": 0.0, "normalization": 0.0, "balance": 0.0,
                             "projection": moved},
                            message=f"exact lambda on {support.size} samples: >= 0, class sums 1, "
                                    f"sum lambda_i y_i x_i = 0 over Q",
                            exact=full)


def verify(X: ArrayLike, y: ArrayLike, *, w: Any = None, b: float = 0.0, lam: float | None = None,
           homogeneous: bool = False,
           exact: Any = "auto", tol: float = DEFAULT_TOL) -> list[CertificateCheck]:
    """Check a hyperplane (``w``, ``b``) or a certificate (``lam``): float, then exact.

    ``exact="auto"`` adds the exact check when it is cheap (:func:`exact_is_cheap`);
    True forces it, False skips it. Returns the list of checks (all must pass).
    """
    if (w is None) == (lam is None):
        raise DataError("pass exactly one certificate: a hyperplane w (and b) or lambda")
    X, y = signed_data(X, y)
    if w is not None:
        if homogeneous and b != 0:
            raise DataError(f"a homogeneous hyperplane has b = 0; got b={b!r}")
        checks = [verify_hyperplane(X, y, w, b, tol=tol)]
        if exact is True or (exact == "auto" and exact_is_cheap(X.shape[0], X.shape[1])):
            checks.append(verify_hyperplane_exact(X, y, w, b))
        return checks
    checks = [verify_certificate(X, y, lam, homogeneous=homogeneous, tol=tol)]
    lam_arr = np.asarray(lam, dtype=float).ravel()
    n_support = int(np.sum(lam_arr > 1e-12 * max(float(lam_arr.sum()), 1e-300)))
    if exact is True or (exact == "auto" and exact_is_cheap(n_support, X.shape[1])):
        checks.append(verify_certificate_exact(X, y, lam, homogeneous=homogeneous))
    return checks


def verify_result(X: ArrayLike, y: ArrayLike, result: Any, *, exact: Any = "auto",
                  tol: float = DEFAULT_TOL) -> list[CertificateCheck]:
    """Re-check a :class:`~convexlearn.SeparabilityResult` from scratch.

    Ignores the result's own ``verified`` flag and checks whichever certificate it
    carries (hyperplane where ``separable``, lambda otherwise) against ``X`` and the
    labels ``y`` (any two labels, mapped with the result's ``label_map``).
    """
    y_signed = result.label_map.to_signed(y) if result.label_map is not None else y
    if result.separable:
        return verify(X, y_signed, w=result.w, b=result.b, homogeneous=result.homogeneous,
                      exact=exact, tol=tol)
    return verify(X, y_signed, lam=result.certificate, homogeneous=result.homogeneous,
                  exact=exact, tol=tol)
