"""Probabilities from decision values: Platt scaling and pairwise coupling (LIBSVM's method).

Platt scaling (Platt 1999, in the numerically stable form of Lin, Lin and Weng, "A note on
Platt's probabilistic outputs for support vector machines", Machine Learning 2007)::

    P(y = +1 | f) = 1 / (1 + exp(A f + B))

(A, B) minimize the cross-entropy sum_i -t_i log p_i - (1 - t_i) log(1 - p_i) against the
regularized targets t_i = (N+ + 1) / (N+ + 2) for positives and 1 / (N- + 2) for negatives,
by Newton's method with a backtracking line search, the Hessian shifted by 1e-12 I, and
every log(1 + exp(.)) evaluated without overflow. As LIBSVM's ``probability=True``, the
decision values come from an internal 5-fold cross-validation (values of samples the
model did not see), see :func:`cv_decision_values`.

Multiclass, one-vs-one: the pairwise probabilities r_ij = P(i | i or j, x) are coupled by
Wu, Lin and Weng's second method ("Probability estimates for multi-class classification by
pairwise coupling", JMLR 2004, LIBSVM's): p minimizes
sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2 subject to sum_i p_i = 1, solved here directly
as its KKT linear system [Q 1; 1^T 0] (p, mu) = (0, 1) (the paper shows p >= 0). For
one-vs-rest, the per-class Platt probabilities are normalized to sum 1.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["platt_fit", "platt_predict", "couple_pairwise", "cv_decision_values"]


def _log1pexp(z: np.ndarray) -> np.ndarray:
    """log(1 + exp(z)) without overflow."""
    return np.logaddexp(0.0, z)


def platt_fit(f: np.ndarray, y_pm: np.ndarray, max_iter: int = 100, min_step: float = 1e-10,
              sigma: float = 1e-12, eps: float = 1e-5) -> tuple[float, float]:
    """(A, B) of P(+1 | f) = 1 / (1 + exp(A f + B)) by Lin-Lin-Weng's Newton method.

    Parameters
    ----------
    f : ndarray (n,)
        Decision values (larger = more likely +1).
    y_pm : ndarray of {-1, +1}
    max_iter, min_step, sigma, eps :
        Newton iterations, smallest line-search step, Hessian shift, and the stop
        max(|g_A|, |g_B|) <= eps on the gradient of the cross-entropy (a sum over samples).
    """
    f = np.asarray(f, dtype=float)
    pos = y_pm > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def objective(A: float, B: float) -> float:
        z = A * f + B         # -log p = log(1 + e^z), -log(1 - p) = log(1 + e^-z)
        return float(np.sum(t * _log1pexp(z) + (1 - t) * _log1pexp(-z)))

    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = objective(A, B)
    for _ in range(max_iter):
        z = A * f + B
        p = np.exp(-_log1pexp(z))             # 1 / (1 + e^z), stable both ways
        q = 1.0 - p
        d2 = p * q
        h11 = sigma + float(f * f @ d2)
        h22 = sigma + float(d2.sum())
        h21 = float(f @ d2)
        d1 = t - p
        g1, g2 = float(f @ d1), float(d1.sum())
        if max(abs(g1), abs(g2)) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            new = objective(A + step * dA, B + step * dB)
            if new < value + 1e-4 * step * gd:
                A, B, value = A + step * dA, B + step * dB, new
                break
            step /= 2.0
        else:
            break       # no decrease: the line search failed (Lin-Lin-Weng stop here too)
    return A, B


def platt_predict(f: np.ndarray, A: float, B: float) -> np.ndarray:
    """1 / (1 + exp(A f + B)), evaluated stably."""
    return np.exp(-_log1pexp(A * np.asarray(f, dtype=float) + B))


def couple_pairwise(R: np.ndarray, n_classes: int, pairs) -> np.ndarray:
    """Wu-Lin-Weng method 2: class probabilities (n, K) from r_ij (n, n_pairs) = P(i | i or
    j) for the pairs (i, j) in order. r is clipped to [1e-7, 1 - 1e-7] as LIBSVM does."""
    R = np.clip(R, 1e-7, 1 - 1e-7)
    n = R.shape[0]
    K = n_classes
    Q = np.zeros((n, K + 1, K + 1))
    for p, (i, j) in enumerate(pairs):
        rij, rji = R[:, p], 1.0 - R[:, p]
        Q[:, i, i] += rji ** 2
        Q[:, j, j] += rij ** 2
        Q[:, i, j] -= rji * rij
        Q[:, j, i] -= rij * rji
    Q[:, :K, K] = Q[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1))
    rhs[:, K] = 1.0
    P = np.linalg.solve(Q, rhs[..., None])[..., 0][:, :K]
    P = np.clip(P, 0.0, None)       # >= 0 in exact arithmetic; remove round-off
    return P / P.sum(axis=1, keepdims=True)


def cv_decision_values(rows_y: np.ndarray, fit_predict: Callable, n_folds: int = 5,
                       seed: int | None = 0) -> np.ndarray:
    """Decision values of each sample from a model fitted without it (stratified k-fold).

    Parameters
    ----------
    rows_y : ndarray of {-1, +1}
        Labels of the problem's samples.
    fit_predict : callable
        ``fit_predict(train, test) -> f_test``, positions into ``rows_y``.
    n_folds : int
        5 as LIBSVM; fewer when a class has fewer samples (at least 2 folds).

    A training fold with one class only gets the constant value +1 or -1 of that class
    (LIBSVM's rule).
    """
    rng = np.random.default_rng(seed)
    n = rows_y.shape[0]
    fold = np.empty(n, dtype=int)
    for label in (-1.0, 1.0):
        idx = rng.permutation(np.flatnonzero(rows_y == label))
        fold[idx] = np.arange(idx.size) % n_folds
    values = np.empty(n)
    for k in range(n_folds):
        test = np.flatnonzero(fold == k)
        train = np.flatnonzero(fold != k)
        if test.size == 0:
            continue
        labels = np.unique(rows_y[train])
        if labels.size < 2:
            values[test] = labels[0] if labels.size else 0.0
            continue
        values[test] = fit_predict(train, test)
    return values
