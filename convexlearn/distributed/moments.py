"""Least-squares ERM on a dask array from the data's moments: one pass, then in memory.

For a loss (y - f)^2 the objective depends on the data only through A^T A, A^T y and
y^T y (A = [X, 1]): the pass that reduces them (the oracle's Gram pass) is all the
cluster computes before the certificate. With an intercept, b = ybar - xbar^T w at the
optimum, so the problem in w is the centred one, with Gram matrix
Gc = X^T X - n xbar xbar^T and c = X^T y - n xbar ybar. Writing Gc = V diag(s) V^T
(eigenvalues s_j > d eps s_max kept, k of them), R = diag(sqrt(s)) V^T and
z = diag(1/sqrt(s)) V^T c give

    ||y_c - X_c w||^2 = ||z - R w||^2 + (y_c^T y_c - ||z||^2)

for every w in the row space of X_c (w outside it changes only the penalty, which the
solver minimizes away), so the k x d problem (1/k) ||z - R w||^2 + lam' R(w) with
lam' = lam n / k has the same minimizer (F_k = (n / k) F_n up to a constant). The
in-memory exact route solves it; the chunk-wise certificate of the answer on the data
decides, as for every distributed route. Squaring the data's condition number is the
price: on ill-conditioned X this route's answer fails the certificate and the chain
goes on to Newton or FISTA.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..losses import make_loss
from ..solution import Solution, Timer
from .oracle import DaskERMOracle

__all__ = ["MAX_MOMENT_DIM", "least_squares_from_moments", "reduced_least_squares"]

#: Largest dim = d (+1) for which the dim x dim moments are formed on the client.
MAX_MOMENT_DIM = 4096


def reduced_least_squares(G: np.ndarray, Aty: np.ndarray, yy: float, n: int,
                          intercept: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(R, z, xbar, ybar) of the module docstring from the moments G = A^T A / n,
    A^T y / n, y^T y / n (xbar = 0, ybar = 0 without intercept)."""
    d = G.shape[0] - int(intercept)
    if intercept:
        xbar, ybar = G[:d, d].copy(), float(Aty[d])
        Gc = n * (G[:d, :d] - np.outer(xbar, xbar))
        c = n * (Aty[:d] - xbar * ybar)
    else:
        xbar, ybar = np.zeros(d), 0.0
        Gc, c = n * G, n * Aty
    s, V = np.linalg.eigh((Gc + Gc.T) / 2.0)
    keep = s > d * np.finfo(float).eps * max(float(s[-1]), 0.0)
    root = np.sqrt(s[keep])
    R = root[:, None] * V[:, keep].T
    z = (V[:, keep].T @ c) / root
    return R, z, xbar, ybar


def least_squares_from_moments(oracle: DaskERMOracle, x0: Any = None, *, tol: float = 1e-9,
                               **options) -> Solution:
    """Solve a least-squares ERM from the oracle's moments with the in-memory exact route.

    Parameters
    ----------
    oracle : DaskERMOracle
        Its loss declares "least_squares"; its ``moments`` are reduced (no pass here).
    x0 : ignored
        The in-memory route needs no start.
    tol : float
        The in-memory route's certificate tolerance on the reduced problem (relative
        distance and gap; the chunk-wise certificate on the data decides the status).
    **options
        Passed to the in-memory ``solve()``.
    """
    from ..erm import ERM

    timer = Timer()
    oracle.loss.require("gram", "a dask ERM", "least_squares")
    G, Aty, yy = oracle.moments[:3]
    n = oracle.n
    R, z, xbar, ybar = reduced_least_squares(G, Aty, yy, n, oracle.intercept)
    k = R.shape[0]
    if k == 0:      # every column constant: w = 0 minimizes (the penalty is minimal there)
        w = np.zeros(oracle.d)
        small = Solution(w=w, b=0.0, objective=np.nan, status="optimal", method="gram")
    else:
        small = ERM(R, z, loss=make_loss("squared"), penalty=oracle.penalty,
                    lam=oracle.lam * n / k, intercept=False).solve(cert_tol=max(tol, 1e-9),
                                                                   **options)
        w = small.w
    b = ybar - float(xbar @ w) if oracle.intercept else 0.0
    x = oracle.join(w, b)
    # F from the moments (no pass): (1/n) ||y - A x||^2 = y^T y/n - 2 x^T A^T y/n + x^T G x
    F = yy - 2.0 * float(x @ Aty) + float(x @ G @ x)
    if oracle.lam > 0:
        F += oracle.lam * oracle.penalty.value(w)
    sol = Solution(w=w, b=b, objective=F, status=small.status, method="gram",
                   n_iter=small.n_iter)
    sol.provenance.update(reduced_route=small.provenance.get("route"),
                          reduced_rows=k, reduced_status=small.status)
    sol.time_s = timer()
    return sol
