"""The ERM optimality certificate on row-chunked data, computed chunk by chunk.

Same certificate as :mod:`convexlearn.certify.optimality`: the distance of 0 to
dF(w, b), each coordinate in units of F (divided by the RMS of its column of A = [X, 1]),
with margins within ``kink_tol`` of a loss kink and |w_j| <= ``kink_tol`` on l1 terms
treated as on the kink. Each row block returns (1/n) A_k^T g over its samples off any
kink (g their loss derivatives), F's loss sum, and the few rows on a kink with their
derivative intervals; the projection (bounded least squares in dim + k variables,
:func:`~convexlearn.certify.optimality.minimum_norm_subgradient`) runs on the client.
Only vectors of length dim and the kink rows travel.

Where F is strongly convex (mu = lam * strong_convexity(R) > 0) the certificate also
bounds the suboptimality without any reference: F(x) - F* <= ||s||^2 / (2 mu) for any
subgradient s of F at x (Euclidean norm, in raw units; b enters F through the data,
so this bound needs no intercept term when mu is taken on w only: it is reported for
problems without intercept, or as the bound on the w-part only otherwise).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import NotApplicableError
from ..certify.optimality import OptimalityReport, minimum_norm_subgradient
from ..losses import make_loss
from .oracle import DaskERMOracle

__all__ = ["chunked_optimality"]

#: Kink rows gathered at most (each is a dim-vector): beyond, the certificate says so
#: instead of gathering a chunk-sized block.
MAX_KINK_ROWS = 200_000


def _block_certificate(X, y, x, loss, intercept, kink_tol):
    """(loss sum, A_k^T g off kinks, [kink rows], [lo], [hi]) on one row block."""
    loss = make_loss(loss)
    d = X.shape[1]
    f = X @ x[:d]
    if intercept:
        f += x[d]
    lo, hi = loss.subdifferential(y, f, kink_tol)
    free = lo < hi
    g = np.where(free, 0.0, lo)
    base = X.T @ g
    if intercept:
        base = np.append(base, g.sum())
    rows = X[free]
    if intercept:
        rows = np.column_stack([rows, np.ones(rows.shape[0])])
    return (float(np.sum(loss.value(y, f))), base, [rows], [lo[free]], [hi[free]])


def _combine(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])


def chunked_optimality(oracle: DaskERMOracle, x: np.ndarray, tol: float = 1e-6,
                       kink_tol: float = 1e-6) -> OptimalityReport:
    """Distance of 0 to dF at x = (w, b), computed chunk-wise (one pass over the data).

    Parameters
    ----------
    oracle : DaskERMOracle
    x : ndarray (dim,)
    tol : float
        ``passed`` = distance <= tol (the distance is in units of F per unit of each
        column's RMS, as in :func:`convexlearn.certify.optimality.subgradient_distance`).
    kink_tol : float
        Margin band around a loss kink, and |w_j| band around 0 for l1 terms.

    Returns
    -------
    OptimalityReport
        ``suboptimality`` is the strong-convexity bound ||s||^2 / (2 mu) (nan where F is
        not strongly convex in all of x); ``optimal_objective`` is F - that bound.
        ``details["passes"]`` counts this certificate's pass.
    """
    data = oracle.data
    total, base, rows, lows, highs = data.map_reduce(
        _block_certificate, np.asarray(x, float), oracle._token, oracle.intercept,
        float(kink_tol), combine=_combine)
    n = data.n
    k = sum(r.shape[0] for r in rows)
    if k > MAX_KINK_ROWS:
        raise NotApplicableError(
            f"{k} samples lie within kink_tol={kink_tol:g} of the loss's kink; the "
            f"chunk-wise certificate gathers at most {MAX_KINK_ROWS} such rows")
    M = (np.vstack(rows).T / n) if k else np.zeros((oracle.dim, 0))
    lo = np.concatenate(lows) if k else np.zeros(0)
    hi = np.concatenate(highs) if k else np.zeros(0)
    w, b = oracle.split(np.asarray(x, float))
    distance, details, z = minimum_norm_subgradient(
        base / n, M, lo, hi, oracle.units, oracle.penalty, oracle.lam, w, kink_tol)
    F = total / n + (oracle.lam * oracle.penalty.value(w) if oracle.lam > 0 else 0.0)
    details.update(n_on_kink=k, passes=1, units=oracle.units,
                   computed="chunk-wise (dask)", n_chunks=data.n_chunks)
    mu = oracle.lam * oracle.penalty.strong_convexity
    bound = np.nan
    if mu > 0 and not oracle.intercept:
        # the raw (unscaled) minimum-norm subgradient, from the scaled one's multipliers
        raw = distance_raw(base / n, M, z, oracle, w, kink_tol)
        bound = raw * raw / (2.0 * mu)
    return OptimalityReport(distance=distance, suboptimality=float(bound),
                            passed=bool(distance <= tol), tol=tol, objective=float(F),
                            optimal_objective=float(F - bound), details=details)


def distance_raw(base: Any, M: Any, z: Any, oracle: Any, w: Any, kink_tol: Any) -> float:
    """||base + M z + lam (r, 0)|| in raw units with the certificate's multipliers z and the
    penalty part projected coordinate-wise (box subdifferentials only)."""
    s = base + M @ z
    if oracle.lam > 0 and not oracle.penalty.has("zero"):
        sub = oracle.penalty.subdifferential(w, kink_tol)
        if sub[0] != "box":
            return float("nan")
        _, c, r_lo, r_hi = sub
        v = s[:w.size] + oracle.lam * c
        s = s.copy()
        s[:w.size] = v - np.clip(v, -oracle.lam * r_hi, -oracle.lam * r_lo)
    return float(np.linalg.norm(s))
