"""Seeded synthetic data sets for problem files (``[data.generator]``).

Every generator draws from ``numpy.random.default_rng(seed)``, so a problem file and its
seed fix the data exactly; ``GENERATORS`` maps a name to the function and the keys it
accepts (type name and default, in the format of :class:`convexlearn.app.schema.Key`).
Classification generators return labels in {-1, +1}; regression generators real targets;
``points`` may return no labels at all (point sets for shattering questions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError

__all__ = ["GENERATORS", "xor", "blobs", "regression", "rank_deficient", "polynomial", "points"]


def _check_n(n: int, least: int = 2) -> None:
    if n < least:
        raise ParameterError(f"the generator needs n >= {least}; got n={n}")


def xor(n: int, seed: int, noise: float = 0.15) -> Any:
    """XOR: n points around the corners (+-1, +-1), label y = sign(x_1 x_2).

    Corners are dealt in turn so every quadrant gets n/4 points; Gaussian noise of
    standard deviation ``noise`` (below 1, so no point crosses an axis in practice).
    No line separates the classes; the degree-2 map with coef0 = 0,
    (x_1^2, sqrt(2) x_1 x_2, x_2^2), does.
    """
    _check_n(n, 4)
    rng = np.random.default_rng(seed)
    corners = np.array([[1, 1], [-1, -1], [1, -1], [-1, 1]], dtype=float)
    X = corners[np.arange(n) % 4] + noise * rng.standard_normal((n, 2))
    return X, np.where(X[:, 0] * X[:, 1] >= 0, 1, -1)


def blobs(n: int, seed: int, d: int = 2, separation: float = 3.0, noise: float = 1.0) -> Any:
    """Two Gaussian clouds centred at -+separation/2 e_1 with standard deviation ``noise``;
    labels -1 and +1 alternate so the classes are balanced."""
    _check_n(n)
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, -1, 1)
    X = noise * rng.standard_normal((n, d))
    X[:, 0] += 0.5 * separation * y
    return X, y


def regression(n: int, seed: int, d: int = 5, informative: int = 3, noise: float = 0.1) -> Any:
    """y = X w + noise eps, X and eps standard normal; w has ``informative`` nonzero entries
    (1, -2, 3, ...) and zeros elsewhere - a sparse truth for the lasso."""
    _check_n(n)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    k = min(informative, d)
    w[:k] = np.arange(1, k + 1) * np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
    return X, X @ w + noise * rng.standard_normal(n)


def rank_deficient(n: int, seed: int, d: int = 6, rank: int = 3, noise: float = 0.1) -> Any:
    """A design of rank ``rank`` < d: X = A B with A (n x rank), B (rank x d) standard
    normal; y = A c + noise eps. Least squares then has a whole affine set of minimizers
    with one optimal value (the minimum-norm one is the pseudo-inverse solution)."""
    _check_n(n)
    if not 1 <= rank < d:
        raise ParameterError(f"rank_deficient needs 1 <= rank < d; got rank={rank}, d={d}")
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, rank))
    X = A @ rng.standard_normal((rank, d))
    return X, A @ np.arange(1.0, rank + 1) + noise * rng.standard_normal(n)


def polynomial(n: int, seed: int, coefs: list | None = None, noise: float = 0.1) -> Any:
    """x uniform on [-1, 1], y = sum_k coefs[k] x^k + noise eps (one feature column)."""
    _check_n(n)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, n)
    coefs = [0.5, -1.0, 0.0, 2.0] if coefs is None else coefs
    return x[:, None], np.polynomial.polynomial.polyval(x, coefs) + noise * rng.standard_normal(n)


def points(points: list, labels: list | None = None, seed: int | None = None) -> Any:
    """Explicit points (rows) and optional labels, for small textbook examples."""
    X = np.asarray(points, dtype=float)
    if X.ndim != 2 or X.size == 0:
        raise ParameterError(f"'points' must be a non-empty list of rows of equal length; "
                             f"got {points!r}")
    if labels is not None and len(labels) != len(X):
        raise ParameterError(f"{len(X)} points but {len(labels)} labels")
    return X, None if labels is None else np.asarray(labels)


GENERATORS = {
    "xor": (xor, {"n": ("integer", 40), "seed": ("integer", 0), "noise": ("number", 0.15)}),
    "blobs": (blobs, {"n": ("integer", 40), "seed": ("integer", 0), "d": ("integer", 2),
                      "separation": ("number", 3.0), "noise": ("number", 1.0)}),
    "regression": (regression, {"n": ("integer", 50), "seed": ("integer", 0),
                                "d": ("integer", 5), "informative": ("integer", 3),
                                "noise": ("number", 0.1)}),
    "rank_deficient": (rank_deficient, {"n": ("integer", 30), "seed": ("integer", 0),
                                        "d": ("integer", 6), "rank": ("integer", 3),
                                        "noise": ("number", 0.1)}),
    "polynomial": (polynomial, {"n": ("integer", 40), "seed": ("integer", 0),
                                "coefs": ("list of numbers", None), "noise": ("number", 0.1)}),
    "points": (points, {"points": ("list of lists of numbers", None),
                        "labels": ("list of labels", None), "seed": ("integer", None)}),
}
