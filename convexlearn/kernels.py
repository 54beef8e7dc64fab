"""Kernel functions, Gram matrices, the PSD check and the explicit polynomial feature map.

Kernels (docs/conventions.md):

=============  ==================================================
linear         k(x, x') = <x, x'>
poly           k(x, x') = (gamma <x, x'> + coef0) ** degree
rbf            k(x, x') = exp(-gamma ||x - x'||^2),  gamma = 1/(2 sigma^2)
sigmoid        k(x, x') = tanh(gamma <x, x'> + coef0)   (not PSD in general)
precomputed    the user's Gram matrix K (training: n x n; prediction: m x n)
callable       any function k(A, B) -> Gram matrix of shape (len(A), len(B))
=============  ==================================================

The lectures' polynomial kernel (x.x' + 1)^h is ``poly`` with ``gamma=1, coef0=1``.
Defaults follow scikit-learn's SVC: ``gamma="scale"`` = 1 / (d * Var(X)) (1 when X is
constant), ``gamma="auto"`` = 1 / d, ``degree=3`` (an integer),
``coef0=0``.
"""

from __future__ import annotations

from typing import Any

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from .data import as_features, check_nonnegative, check_positive, check_real
from .errors import DataError, NotPSDError, ParameterError

__all__ = [
    "KERNELS",
    "Kernel",
    "make_kernel",
    "PSDCheck",
    "check_psd",
    "polynomial_features",
    "polynomial_feature_count",
]

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")

DEFAULT_PSD_TOL = 1e-9


def _sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    # ||a||^2 + ||b||^2 - 2 a.b, clipped: cancellation can make it slightly negative.
    # In place (two m x n arrays instead of five); the same roundings as the expression.
    d2 = np.add.outer((A * A).sum(1), (B * B).sum(1))
    ab = A @ B.T
    ab *= -2.0
    d2 += ab
    return np.maximum(d2, 0.0, out=d2)


#: Largest integer degree the poly kernel raises by products (:func:`_integer_power`).
_MAX_PRODUCT_DEGREE = 64


def _integer_power(base: np.ndarray, degree: int) -> np.ndarray:
    """``base ** degree`` entrywise for an integer ``degree`` >= 1, by repeated squaring
    (at most 2 log2(degree) products, each rounded once: within ~2 log2(degree) ulps of
    ``pow``, as LIBSVM's ``powi``). numpy's float power calls ``pow`` for every entry
    (~14 ns; a product ~0.5 ns): the poly kernel's blocks, e.g. the certificate's
    products K beta at n = 1000, cost that ~25x over. ``base`` is overwritten."""
    out = None
    while True:
        if degree & 1:
            out = base.copy() if out is None else np.multiply(out, base, out=out)
        degree >>= 1
        if not degree:
            return out
        np.multiply(base, base, out=base)


@dataclass(frozen=True)
class Kernel:
    """A validated kernel with its parameters.

    Call it as ``kernel(A, B)`` to get the Gram block ``K[i, j] = k(A[i], B[j])``.

    Attributes
    ----------
    name : str
        ``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"``, ``"precomputed"`` or ``"callable"``.
    gamma, degree, coef0 : float
        The resolved parameters (``gamma="scale"`` already turned into a number).
    function : callable or None
        The user's function for ``name == "callable"``.
    """

    name: str
    gamma: float = 1.0
    degree: float = 3
    coef0: float = 0.0
    function: object = field(default=None, compare=False)

    @property
    def is_linear(self) -> bool:
        """True for the plain inner product (primal forms in w are available)."""
        return self.name == "linear"

    @property
    def known_psd(self) -> bool:
        """True when the kernel is PSD by construction (the eigenvalue check can be skipped).

        linear and rbf always; poly when coef0 >= 0 and the degree is a positive integer
        (a nonnegative combination of powers of a PSD kernel). sigmoid, precomputed
        and callables must be checked.
        """
        if self.name in ("linear", "rbf"):
            return True
        if self.name == "poly":
            return self.coef0 >= 0 and float(self.degree).is_integer() and self.degree >= 1
        return False

    def __call__(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        B = A if B is None else B
        if self.name == "linear":
            return A @ B.T
        if self.name == "poly":
            if float(self.degree).is_integer() and 1 <= self.degree <= _MAX_PRODUCT_DEGREE:
                return _integer_power(self.gamma * (A @ B.T) + self.coef0, int(self.degree))
            return (self.gamma * (A @ B.T) + self.coef0) ** self.degree
        if self.name == "rbf":
            K = _sq_dists(A, B)
            K *= -self.gamma
            return np.exp(K, out=K)
        if self.name == "sigmoid":
            return np.tanh(self.gamma * (A @ B.T) + self.coef0)
        if self.name == "callable":
            K = np.asarray(self.function(A, B), dtype=np.float64)
            if K.shape != (A.shape[0], B.shape[0]):
                raise DataError(f"the kernel callable returned shape {K.shape}; expected "
                                f"{(A.shape[0], B.shape[0])}")
            if not np.all(np.isfinite(K)):
                raise DataError("the kernel callable returned non-finite values")
            return K
        raise ParameterError("a precomputed kernel has no function: pass the Gram matrix itself")

    def describe(self) -> str:
        """The name with its resolved parameters, e.g. ``rbf(gamma=0.5)``; the bare name for
        linear, precomputed and callable kernels.
        """
        if self.name == "poly":
            return f"poly(gamma={self.gamma:g}, coef0={self.coef0:g}, degree={self.degree:g})"
        if self.name == "rbf":
            return f"rbf(gamma={self.gamma:g})"
        if self.name == "sigmoid":
            return f"sigmoid(gamma={self.gamma:g}, coef0={self.coef0:g})"
        return self.name


def _scale_variance(X: np.ndarray, sample_weight: np.ndarray | None) -> float:
    """Variance of all entries of X, row i counted s_i times (an integer weight is a copy)."""
    if sample_weight is None:
        return float(X.var())
    s = np.asarray(sample_weight, dtype=float)
    d = X.shape[1]
    mean = float(s @ X.sum(axis=1)) / (d * s.sum())
    return float(s @ ((X - mean) ** 2).sum(axis=1)) / (d * s.sum())


def make_kernel(kernel: Any = "linear", X: np.ndarray | None = None, gamma: Any = "scale",
                degree: int = 3,
                coef0: float = 0.0, sample_weight: np.ndarray | None = None) -> Kernel:
    """Validate a kernel specification.

    Parameters
    ----------
    kernel : str or callable
        One of :data:`KERNELS` or a function ``k(A, B)`` returning a Gram block.
    X : ndarray, optional
        Training data, needed to resolve ``gamma="scale"`` (1 / (d Var X)) and
        ``gamma="auto"`` (1 / d).
    sample_weight : ndarray, optional
        Row weights for ``gamma="scale"``: Var X counts row i s_i times, so an integer
        weight gives the gamma of the repeated data set (scikit-learn's SVC ignores them).
    gamma : float or {"scale", "auto"}
        Must be > 0 when given as a number.
    degree : float
        Polynomial degree, > 0.
    coef0 : float
        Additive constant of the poly and sigmoid kernels.
    """
    if callable(kernel):
        return Kernel("callable", function=kernel)
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ParameterError(f"unknown kernel {kernel!r}; valid: "
                             f"{', '.join(map(repr, KERNELS))} or a callable")
    # Typed for every kernel, so that a typo is not silently ignored by the linear kernel.
    coef0 = check_real("coef0", coef0)
    degree = check_positive("degree", degree)
    if not isinstance(gamma, str):
        check_positive("gamma", gamma)
    elif gamma not in ("scale", "auto"):
        raise ParameterError(f"gamma must be a positive number, 'scale' or 'auto'; "
                             f"got gamma={gamma!r}")
    if kernel in ("linear", "precomputed"):
        return Kernel(kernel)
    if isinstance(gamma, str):
        if X is None:
            raise ParameterError(f"gamma={gamma!r} needs the training data to be resolved")
        d = X.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):   # an overflow is raised below
            var = _scale_variance(X, sample_weight)
        if gamma == "auto":
            gamma = 1.0 / d
        else:                       # scikit-learn's rule, including 1.0 for constant X
            if not math.isfinite(var):
                # SVC goes on with gamma = 1/inf = 0 and fails later on non-finite duals
                raise DataError(f"gamma='scale' is 1 / (d Var(X)), but Var(X) overflows "
                                f"float64 on these data (max |x| = "
                                f"{float(np.max(np.abs(X))):.3g}): rescale X or give gamma "
                                f"as a number")
            gamma = 1.0 / (d * var) if var > 0 else 1.0
    gamma = check_positive("gamma", gamma)
    if kernel == "poly" and not float(degree).is_integer():
        # (gamma <x, x'> + coef0) ** 2.5 is undefined (nan) wherever the base is negative.
        raise ParameterError(f"the poly kernel needs an integer degree; got degree={degree!r}")
    return Kernel(kernel, gamma=gamma, degree=degree, coef0=coef0)


@dataclass(frozen=True)
class PSDCheck:
    """Outcome of :func:`check_psd`.

    Attributes
    ----------
    min_eigenvalue : float
        Smallest eigenvalue of the symmetrized matrix (nan when the check was skipped);
        with ``method == "cholesky"`` a proven lower bound on it (>= ``-tolerance``).
    tolerance : float
        The absolute threshold used: ``tol * ||K||_2`` (``method == "cholesky"``:
        ``tol * s`` with s <= ||K||_2 the lower bound of :func:`_norm_lower_bound`, a
        stricter threshold).
    repaired : bool
        True when negative eigenvalues were clipped to zero.
    repair_size : float
        Frobenius norm of the change made by the repair (0 when none).
    skipped : bool
        True when the kernel is PSD by construction and no eigenvalues were computed.
    method : str
        How the bound was proven: ``"eigvalsh"`` (the eigenvalues) or ``"cholesky"`` (a
        Cholesky factorization of a shifted K, :func:`_cholesky_bound`).
    """

    min_eigenvalue: float
    tolerance: float
    repaired: bool = False
    repair_size: float = 0.0
    skipped: bool = False
    method: str = "eigvalsh"


def check_psd(K: np.ndarray, tol: float = DEFAULT_PSD_TOL, repair: bool = False,
              name: str = "kernel matrix") -> tuple[np.ndarray, PSDCheck]:
    """Check that a symmetric matrix is positive semidefinite up to round-off.

    Accepted when ``lambda_min(K) >= -tol * ||K||_2`` (``||K||_2`` the largest absolute
    eigenvalue).  A clearly indefinite matrix raises :class:`NotPSDError` with its
    smallest eigenvalue, unless ``repair=True``: then the negative eigenvalues are set
    to zero (the nearest PSD matrix in Frobenius norm) and the change is reported.

    The eigenvalues are computed only when a cheaper proof fails: a Cholesky
    factorization of K + eps I (:func:`_cholesky_bound`, ~n^3 / 3 flops against
    eigvalsh's ~4 n^3 / 3 and its slower tridiagonal stage) proves
    ``lambda_min(K) >= -tol * s`` with s <= ||K||_2; a matrix it does not prove PSD is
    decided by the eigenvalues exactly as without it (same acceptance, same errors).

    Returns
    -------
    K : ndarray
        The (possibly repaired) matrix.
    check : PSDCheck
    """
    proven = _cholesky_bound(K, tol)
    if proven is not None:
        return K, proven
    eigvals, eigvecs = (np.linalg.eigh(K) if repair else (np.linalg.eigvalsh(K), None))
    scale = max(float(np.max(np.abs(eigvals))), np.finfo(float).tiny)
    threshold = tol * scale
    lam_min = float(eigvals[0])
    if lam_min >= -threshold:
        return K, PSDCheck(lam_min, threshold)
    if not repair:
        raise NotPSDError(
            f"the {name} is not positive semidefinite: smallest eigenvalue {lam_min:.3e} < "
            f"-{threshold:.3e} (= -{tol:g} * ||K||_2); the problem would not be convex. "
            f"Choose other kernel parameters, or pass repair_psd=True to clip the negative "
            f"eigenvalues (reported)", lam_min, threshold)
    clipped = np.maximum(eigvals, 0.0)
    K_fixed = (eigvecs * clipped) @ eigvecs.T
    K_fixed = 0.5 * (K_fixed + K_fixed.T)
    size = float(np.linalg.norm(eigvals - clipped))
    return K_fixed, PSDCheck(lam_min, threshold, repaired=True, repair_size=size)


def _norm_lower_bound(K: np.ndarray) -> float:
    """s <= ||K||_2 for a symmetric K: max(max_i |K_ii|, ||K||_F / sqrt(n)) (|K_ii| =
    |e_i^T K e_i| and ||K||_F^2 = sum of the n squared eigenvalues)."""
    n = K.shape[0]
    return max(float(np.max(np.abs(np.diagonal(K)))), float(np.linalg.norm(K)) / math.sqrt(n))


def _cholesky_bound(K: np.ndarray, tol: float) -> PSDCheck | None:
    """A proof that ``lambda_min(K) >= -tol * ||K||_2`` from a Cholesky factorization,
    or None (not proven: the caller computes the eigenvalues).

    With s = :func:`_norm_lower_bound` (<= ||K||_2) and eps = tol s / 2, the computed
    factor R of A = K + eps I satisfies R^T R = A + E with |E| <= gamma_{n+1} |R^T| |R|
    (Higham, Accuracy and Stability of Numerical Algorithms, Thm 10.3; gamma_m =
    m u / (1 - m u), u = 2^-53), so ||E||_2 <= gamma_{n+1} ||R||_F^2. R^T R is PSD, hence
    lambda_min(K) >= -eps - ||E||_2 =: -bound. Accepted when bound <= tol s, with
    gamma_{n+1} doubled (blocked LAPACK orderings and the rounding of ||R||_F). Holds to
    n ~ 2000 at tol = 1e-9 (the rounding term grows like n^2 u s).
    """
    n = K.shape[0]
    if n == 0 or not np.all(np.isfinite(K)):
        return None
    s = _norm_lower_bound(K)
    if not s > 0.0:
        return None
    eps = 0.5 * tol * s
    u = np.finfo(np.float64).eps / 2
    gamma = 2.0 * (n + 1) * u / (1.0 - (n + 1) * u)
    # ||R||_F^2 = trace(A + E) ~ trace(A): where the bound cannot hold, skip the factorization
    if gamma * (float(np.trace(K)) + n * eps) > 0.99 * (tol * s - eps):
        return None
    A = np.array(K, dtype=np.float64, order="C")
    A[np.diag_indices(n)] += eps
    try:
        R = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return None
    rounding = gamma * float(np.sum(R * R))
    bound = eps + rounding
    if not (np.isfinite(bound) and bound <= tol * s):
        return None
    return PSDCheck(-bound, tol * s, method="cholesky")


def check_gram(K: Any, n: int | None = None, name: str = "precomputed kernel",
               sym_tol: float = 1e-10) -> np.ndarray:
    """Validate a precomputed training Gram matrix: finite, square, symmetric."""
    K = as_features(K, name=name)
    if K.shape[0] != K.shape[1]:
        raise DataError(f"the {name} must be square (n x n); got shape {K.shape}")
    if n is not None and K.shape[0] != n:
        raise DataError(f"the {name} has shape {K.shape} but y has {n} entries")
    asym = float(np.max(np.abs(K - K.T)))
    scale = max(float(np.max(np.abs(K))), 1.0)
    if asym > sym_tol * scale:
        i, j = np.unravel_index(np.argmax(np.abs(K - K.T)), K.shape)
        raise DataError(f"the {name} is not symmetric: K[{i},{j}]={K[i, j]!r} but "
                        f"K[{j},{i}]={K[j, i]!r}")
    return 0.5 * (K + K.T)


def _multinomial_log(counts) -> float:
    counts = np.asarray(counts, dtype=float)
    return float(gammaln(counts.sum() + 1) - gammaln(counts + 1).sum())


def polynomial_feature_count(n_features: int, degree: int, coef0: float = 1.0) -> int:
    """Number of features of :func:`polynomial_features`.

    ``C(h + d, d)`` monomials of degree <= h when ``coef0 != 0``; ``C(h + d - 1, d - 1)``
    monomials of degree exactly h when ``coef0 == 0``.
    """
    if coef0 == 0:
        return math.comb(degree + n_features - 1, n_features - 1)
    return math.comb(degree + n_features, n_features)


def polynomial_features(X: ArrayLike, degree: int = 2, gamma: float = 1.0, coef0: float = 1.0,
                        max_features: int = 1_000_000) -> np.ndarray:
    """Explicit feature map of the polynomial kernel.

    Returns ``Phi`` with ``Phi @ Phi.T == (gamma X X^T + coef0) ** degree``. By the
    multinomial theorem, with a multi-index ``k = (k_1..k_d)``, ``|k| <= h`` and
    ``k_0 = h - |k|``:

        phi_k(x) = sqrt( h! / (k_0! k_1! ... k_d!) * coef0^k_0 * gamma^|k| ) * prod_j x_j^k_j

    All ``C(h + d, d)`` monomials of degree <= h (columns ordered by degree, then
    lexicographically). With ``coef0 = 0`` only the degree-h monomials remain, e.g.
    d = 3, h = 2 gives the lectures' phi: R^3 -> R^6 with entries x_j^2 and
    sqrt(2) x_j x_l.

    Parameters
    ----------
    X : array_like of shape (n, d)
    degree : int >= 1
    gamma : float > 0
    coef0 : float >= 0
    """
    X = as_features(X)
    if isinstance(degree, bool) or not float(degree).is_integer() or degree < 1:
        raise ParameterError(f"degree must be a positive integer for an explicit feature map; "
                             f"got degree={degree!r}")
    degree = int(degree)
    gamma = check_positive("gamma", gamma)
    coef0 = check_nonnegative("coef0", coef0)
    n, d = X.shape
    count = polynomial_feature_count(d, degree, coef0)
    if count > max_features:
        raise ParameterError(f"the degree-{degree} map of {d} features has {count} columns "
                             f"(> max_features={max_features}); use the kernel instead")
    degrees = [degree] if coef0 == 0 else range(degree + 1)
    columns = []
    for h in degrees:
        for combo in itertools.combinations_with_replacement(range(d), h):
            k = np.bincount(np.asarray(combo, dtype=int), minlength=d)
            k0 = degree - h
            log_c = _multinomial_log(np.append(k, k0)) + h * math.log(gamma)
            if k0:
                log_c += k0 * math.log(coef0)
            col = np.prod(X[:, list(combo)], axis=1) if h else np.ones(n)
            columns.append(math.exp(0.5 * log_c) * col)
    return np.column_stack(columns)
