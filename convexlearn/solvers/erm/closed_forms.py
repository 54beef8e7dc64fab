"""Closed-form linear models: least squares, ridge, classification by regression, LDA,
polynomial regression.

Intercepts are never penalized and never enter a minimum-norm choice: with an intercept,
features and targets are centered (x_c = x - mean x, y_c = y - mean y), w is computed on
the centered data and b = mean(y) - <mean(x), w>.

* Least squares, min ||y - X w - b||^2: w = X_c^+ y_c, the minimum-norm minimizer even when
  X is rank deficient (the lectures' Theorem 9.12, w = A^+ b); without intercept w = X^+ y.
* Ridge, min ||y - X w - b||^2 + alpha ||w||^2 (scikit-learn's ``Ridge``):
  w = (X_c^T X_c + alpha I)^-1 X_c^T y_c, or X_c^T (X_c X_c^T + alpha I)^-1 y_c when d > n;
  on a sparse X (:func:`ridge_pcg`, the cd route's ridge) by preconditioned conjugate
  gradients on the same normal equations, centred implicitly.
* Classification by regression: least squares on targets t_i in {0, 1} (t = 1 for
  classes[1]), predict classes[1] when f(x) >= 1/2.
* Gaussian generative classifier with shared covariance (LDA): class means mu_0, mu_1,
  priors pi_k = N_k / N, pooled covariance Sigma = sum_k sum_{i in k} (x_i - mu_k)(x_i -
  mu_k)^T / (N - 2); w = Sigma^-1 (mu_1 - mu_0), w_0 = -1/2 (mu_1^T Sigma^-1 mu_1 -
  mu_0^T Sigma^-1 mu_0) + log(pi_1 / pi_0); predict classes[1] when <w, x> + w_0 >= 0.
  Denominator: N - 2 (the default, ``pooled="unbiased"``) is the unbiased estimate, since
  the two class means are estimated from the same data; it is the slide's N - M with M = 2
  classes. ``pooled="mle"`` divides by N (the maximum-likelihood estimate, scikit-learn's
  ``LinearDiscriminantAnalysis``). The direction of w does not depend on the choice; its
  length does, and so does the balance between the quadratic and the prior terms of w_0.
* Polynomial regression: least squares on the monomial map of
  :func:`convexlearn.kernels.polynomial_features` (it contains the constant monomial, so no
  separate intercept is fitted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...data import as_binary_labels, as_features, as_targets, check_choice, check_nonnegative
from ...errors import DataError
from ...kernels import polynomial_features

__all__ = ["LinearModel", "least_squares", "ridge", "classify_by_regression", "lda",
           "polynomial_regression", "ridge_pcg"]


@dataclass
class LinearModel:
    """f(x) = <w, phi(x)> + b with phi the identity or a feature map.

    For a classifier, ``classes`` holds the two labels and ``threshold`` the cut on f
    (classes[1] when f >= threshold).
    """

    w: np.ndarray
    b: float
    method: str
    classes: np.ndarray | None = None
    threshold: float = 0.0
    feature_map: object = None
    details: dict = field(default_factory=dict)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """f(X) = phi(X) w + b, with phi the feature map (the identity when None).

        Raises DataError when X has (after the map) another number of features than w.
        """
        X = as_features(X)
        if self.feature_map is not None:
            X = self.feature_map(X)
        if X.shape[1] != self.w.shape[0]:
            raise DataError(f"X has {X.shape[1]} (mapped) features; the model has "
                            f"{self.w.shape[0]}")
        return X @ self.w + self.b

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Labels (classes[1] where f >= threshold, else classes[0]), or f itself when
        ``classes`` is None (regression).
        """
        f = self.decision_function(X)
        if self.classes is None:
            return f
        return np.where(f >= self.threshold, self.classes[1], self.classes[0])


def _center(X, y, intercept):
    if not intercept:
        return X, y, np.zeros(X.shape[1]), 0.0
    mx, my = X.mean(axis=0), float(y.mean())
    return X - mx, y - my, mx, my


def least_squares(X: ArrayLike, y: ArrayLike, intercept: bool = True,
                  rcond: float | None = None) -> LinearModel:
    """Minimum-norm least squares: w = X_c^+ y_c (pseudo-inverse), b = mean(y) - <mean(x), w>.

    ``rcond``: singular values below rcond * s_max count as zero (numpy's default when None).
    The rank found is in ``details["rank"]``.
    """
    X = as_features(X)
    y = as_targets(y, n=X.shape[0])
    Xc, yc, mx, my = _center(X, y, intercept)
    kwargs = {} if rcond is None else {"rtol": rcond}
    w = np.linalg.pinv(Xc, **kwargs) @ yc
    rank = int(np.linalg.matrix_rank(Xc, **({} if rcond is None else {"rtol": rcond})))
    return LinearModel(w, my - float(mx @ w), "least squares (pseudo-inverse)",
                       details={"rank": rank, "rank_deficient": rank < X.shape[1]})


def ridge(X: ArrayLike, y: ArrayLike, alpha: float, intercept: bool = True) -> LinearModel:
    """min ||y - X w - b||^2 + alpha ||w||^2 (alpha >= 0; alpha = 0 falls back to least
    squares when X_c^T X_c is singular)."""
    X = as_features(X)
    y = as_targets(y, n=X.shape[0])
    alpha = check_nonnegative("alpha", alpha)
    Xc, yc, mx, my = _center(X, y, intercept)
    n, d = Xc.shape
    if alpha == 0.0:
        return least_squares(X, y, intercept)
    if d <= n:
        w = np.linalg.solve(Xc.T @ Xc + alpha * np.eye(d), Xc.T @ yc)
    else:   # push-through identity: an n x n system instead of d x d
        w = Xc.T @ np.linalg.solve(Xc @ Xc.T + alpha * np.eye(n), yc)
    return LinearModel(w, my - float(mx @ w), "ridge (normal equations)")


def classify_by_regression(X: ArrayLike, y: ArrayLike) -> LinearModel:
    """Least squares on targets {0, 1} (classes[1] -> 1); predict classes[1] when f >= 1/2."""
    X = as_features(X)
    s, label_map = as_binary_labels(y, n=X.shape[0])
    model = least_squares(X, (s + 1.0) / 2.0, intercept=True)
    model.method, model.classes, model.threshold = ("classification by regression",
                                                    label_map.classes, 0.5)
    return model


def lda(X: ArrayLike, y: ArrayLike, pooled: str = "unbiased") -> LinearModel:
    """Gaussian generative classifier with a shared covariance (see the module docstring).

    Parameters
    ----------
    pooled : {"unbiased", "mle"}
        Denominator N - 2 or N of the pooled covariance.
    """
    X = as_features(X)
    s, label_map = as_binary_labels(y, n=X.shape[0])
    check_choice("pooled", pooled, ("unbiased", "mle"))
    n = X.shape[0]
    groups = [X[s < 0], X[s > 0]]
    if pooled == "unbiased" and n <= 2:
        raise DataError("the unbiased pooled covariance needs more than 2 samples")
    mu = [g.mean(axis=0) for g in groups]
    scatter = sum((g - m).T @ (g - m) for g, m in zip(groups, mu))
    sigma = scatter / (n - 2 if pooled == "unbiased" else n)
    try:
        w = np.linalg.solve(sigma, mu[1] - mu[0])
        a0, a1 = np.linalg.solve(sigma, mu[0]), np.linalg.solve(sigma, mu[1])
    except np.linalg.LinAlgError:
        raise DataError("the pooled covariance is singular (a feature is constant within both "
                        "classes, or d >= N - 1): the Gaussian classifier needs Sigma^-1") from None
    priors = np.array([len(groups[0]), len(groups[1])], dtype=float) / n
    w0 = -0.5 * (mu[1] @ a1 - mu[0] @ a0) + float(np.log(priors[1] / priors[0]))
    return LinearModel(w, float(w0), f"Gaussian classifier, shared covariance ({pooled})",
                       classes=label_map.classes, threshold=0.0,
                       details={"means": mu, "priors": priors, "covariance": sigma})


def polynomial_regression(X: ArrayLike, y: ArrayLike, degree: int = 2) -> LinearModel:
    """Least squares on the monomials of degree <= ``degree`` (minimum-norm, pseudo-inverse).

    phi is :func:`convexlearn.kernels.polynomial_features` with gamma = 1, coef0 = 1 (the
    scaled monomials of (<x, x'> + 1)^degree): the same span as the plain monomials, so
    the same fitted values.
    """
    X = as_features(X)

    def phi(Z):
        return polynomial_features(Z, degree=degree, gamma=1.0, coef0=1.0)

    model = least_squares(phi(X), y, intercept=False)
    model.method, model.feature_map = f"polynomial regression (degree {degree})", phi
    return model


def ridge_pcg(Xv: Any, xbar: np.ndarray, rhs: np.ndarray, diag: np.ndarray, lam2: float,
              tol: float = 1e-12, max_iter: int = 1000) -> tuple[np.ndarray, int, bool]:
    """Ridge on a sparse X by preconditioned conjugate gradients on its normal equations,
    with implicit centring: solve (G + lam2 I) w = rhs, G = (2/n) Xc^T Xc,
    Xc = Xv - u xbar^T (u = 1 unweighted; Xv^T u = n xbar, u^T u = n), i.e.

        G v = (2/n) (Xv^T (Xv v) - n xbar <xbar, v>),

    two passes over X an iteration and vectors of n and d, never Xc nor a d x d matrix.
    Jacobi preconditioner diag = G_jj (+ lam2). Stops when ||r|| <= tol ||rhs|| (tol
    relative to the right-hand side; the caller's certificate decides) or after
    ``max_iter``; returns (w, iterations, converged).
    """
    n = Xv.shape[0]
    precond = 1.0 / np.maximum(diag + lam2, np.finfo(float).tiny)

    def G(v):
        q = np.asarray(Xv @ v).ravel()
        out = np.asarray(Xv.T @ q).ravel()
        out -= (n * float(xbar @ v)) * xbar
        out *= 2.0 / n
        out += lam2 * v
        return out

    w = np.zeros_like(rhs)
    r = rhs.copy()
    z = precond * r
    p = z.copy()
    rz, stop = float(r @ z), tol * float(np.linalg.norm(rhs))
    for it in range(1, max_iter + 1):
        Gp = G(p)
        step = rz / float(p @ Gp)
        w += step * p
        r -= step * Gp
        if float(np.linalg.norm(r)) <= stop:
            return w, it, True
        z = precond * r
        rz, rz_old = float(r @ z), rz
        p *= rz / rz_old
        p += z
    return w, max_iter, False
