"""The Rosenblatt perceptron with its mistake bound (the lectures' Theorem 9.8).

On the homogeneous embedding ``x'_i = (1, x_i)`` (so ``<w', x'> = b + <w, x>``), starting
from ``w' = 0`` and visiting the samples in order, each *mistake*
``y_i <w', x'_i> <= 0`` triggers the update ``w' <- w' + y_i x'_i``
(:func:`convexlearn.solvers.linear_svm.perceptron.perceptron_pass`). An epoch without a mistake ends
the run (status "converged": w' separates the data). If the data are linearly
separable, the number of updates T obeys::

    T <= R^2 B^2,   R = max_i ||x'_i||,   B = min { ||w|| : y_i <w, x'_i> >= 1 for all i }

B is the norm of the hard-margin SVM without intercept on the embedded data
(``SVM(X', y, C=None, intercept=False)``), so R^2 B^2 = (R / gamma)^2 with gamma = 1/B
the best margin of a homogeneous separator of the embedded data. On data that are not
separable the loop stops after ``max_epochs`` epochs with status "not converged": it
never runs forever.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .data import as_binary_labels, as_features, check_callable, check_seed
from .errors import InfeasibleError, ParameterError
from .solution import History, Solution, Timer
from .solvers.linear_svm.perceptron import perceptron_pass
from .svm import SVM

__all__ = ["perceptron", "mistake_bound"]


def mistake_bound(X: ArrayLike, y: ArrayLike, intercept: bool = True) -> tuple[float, float]:
    """R and B of the perceptron bound T <= R^2 B^2 for (X, y).

    ``R = max_i ||x'_i||`` and ``B = ||w*||`` for w* the hard-margin SVM without
    intercept on ``x' = (1, x)`` (``intercept=True``) or on x itself.

    Raises
    ------
    InfeasibleError
        When the (embedded) data are not linearly separable (B would be infinite).
    """
    Xe = _embed(as_features(X), intercept)
    sol = SVM(Xe, y, C=None, intercept=False).solve()
    return float(np.linalg.norm(Xe, axis=1).max()), float(np.linalg.norm(sol.w))


def _embed(X: np.ndarray, intercept: bool) -> np.ndarray:
    return np.hstack([np.ones((X.shape[0], 1)), X]) if intercept else X


def perceptron(X: ArrayLike, y: ArrayLike, max_epochs: int = 1000, *, intercept: bool = True,
               seed: Any = None,
               shuffle: bool = False, warm_start: Any = None, bound: bool = True,
               callback: Callable[[int, np.ndarray, int], bool | None] | None = None
               ) -> Solution:
    """Run the Rosenblatt perceptron (module docstring) and check its mistake bound.

    Parameters
    ----------
    X : array_like of shape (n, d)
    y : array_like of shape (n,)
        Two labels; sorted, ``classes[0] -> -1``, ``classes[1] -> +1``.
    max_epochs : int
        Budget of passes over the data; reaching it gives status "not converged".
    intercept : bool
        Run on the embedding x' = (1, x) (w'_0 is the intercept b); False runs the
        homogeneous perceptron on x.
    seed : int or numpy Generator, optional
        With ``shuffle=True``, the seed of the per-epoch sample order.
    shuffle : bool
        Visit the samples in a fresh random order each epoch (default: the given order,
        Rosenblatt's cyclic rule).
    warm_start : array_like, optional
        Initial w' (length d + 1 with intercept, d without); default 0. The bound
        T <= R^2 B^2 assumes the default.
    bound : bool
        Where converged, compute R and B and check T <= R^2 B^2 (solves one hard-margin
        SVM).
    callback : callable, optional
        ``callback(t, w, value)`` after each epoch, the signature of every iterative
        method: ``t`` the epoch (1, 2, ...), ``w`` a copy of the current weights (with
        intercept the embedded ``w' = (b, w)``, intercept first, as in
        :func:`~convexlearn.solvers.linear_svm.online.online_fit`), ``value`` the number of mistakes
        (updates) made in that epoch. Returning False stops the run (status "stopped"),
        unless the epoch was mistake-free (status "converged").

    Returns
    -------
    Solution
        ``w``, ``b`` (0 without intercept), ``status`` "converged" / "not converged" /
        "stopped", ``n_iter`` = epochs run, ``history`` per epoch (``mistakes``,
        ``objective`` = the perceptron loss (1/n) sum_i max(0, -y_i f(x_i)) at the epoch's
        end, ``time``), and ``extra``: ``updates`` (T), and where computed ``R``, ``B``,
        ``bound`` (R^2 B^2) and ``bound_holds``.
    """
    timer = Timer()
    X = as_features(X)
    y_signed, label_map = as_binary_labels(y, n=X.shape[0])
    if isinstance(max_epochs, bool) or not float(max_epochs).is_integer() or max_epochs < 1:
        raise ParameterError(f"max_epochs must be a positive integer; got max_epochs={max_epochs!r}")
    Xe = _embed(X, intercept)
    Z = y_signed[:, None] * Xe
    p = Xe.shape[1]
    if warm_start is None:
        w = np.zeros(p)
    else:
        w = np.array(warm_start, dtype=float).ravel()
        if w.shape != (p,) or not np.all(np.isfinite(w)):
            raise ParameterError(f"warm_start must be a finite vector of length {p} "
                                 f"({'1 + d, intercept first' if intercept else 'd'}); "
                                 f"got shape {w.shape}")
    rng = np.random.default_rng(check_seed("seed", seed))
    check_callable("callback", callback)
    history, T, status, epoch = History(), 0, "not converged", 0
    for epoch in range(1, int(max_epochs) + 1):
        order = rng.permutation(Z.shape[0]) if shuffle else None
        mistakes = perceptron_pass(Z if order is None else Z[order], w)
        T += mistakes
        loss = float(np.maximum(0.0, -(Z @ w)).mean())
        history.record(objective=loss, mistakes=mistakes, time=timer())
        stop = callback is not None and callback(epoch, w.copy(), mistakes) is False
        if mistakes == 0:
            status = "converged"
            break
        if stop:
            status = "stopped"
            break
    solution = Solution(w=w[1:].copy() if intercept else w.copy(),
                        b=float(w[0]) if intercept else 0.0,
                        objective=history["objective"][-1], status=status, method="perceptron",
                        n_iter=epoch, history=history,
                        provenance={"max_epochs": int(max_epochs), "seed": seed,
                                    "shuffle": shuffle, "intercept": intercept,
                                    "classes": label_map.classes.tolist()})
    solution.extra["updates"] = T
    if bound and status == "converged" and warm_start is None:
        try:
            R, B = mistake_bound(X, y, intercept)
        except InfeasibleError:     # cannot happen after convergence; be explicit anyway
            R, B = math.nan, math.inf
        solution.extra.update(R=R, B=B, bound=R * R * B * B, bound_holds=T <= R * R * B * B)
    solution.time_s = timer()
    return solution
