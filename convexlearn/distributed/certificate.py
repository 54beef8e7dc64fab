"""The ERM optimality certificate on row-chunked data, computed chunk by chunk.

Same certificate as :func:`convexlearn.certify.optimality.certificate`, with the same
figures and verdict: the distance of 0 to dF(w, b) (each coordinate in units of F, divided
by the RMS of its column of A = [X, 1]) relative to the terms that cancel in it, and the
Fenchel duality gap relative to max(|P|, |D|). Margins within ``kink_tol`` of a loss kink
and |w_j| <= ``kink_tol`` on l1 terms are treated as on the kink. Pass 1: each row block
returns (1/n) A_k^T g over its samples off any kink (g their loss derivatives), F's loss
sum, the few rows on a kink with their derivative intervals, and the sums that make the
multipliers dual feasible (sum g+, sum g-, X^T g+); the projection (bounded least squares
in dim + k variables) runs on the client. Pass 2 sums the loss conjugates at the feasible
multipliers. Only vectors of length dim and the kink rows travel.

Where F is strongly convex (mu = lam * strong_convexity(R) > 0) the certificate also
bounds the suboptimality without any reference: F(x) - F* <= ||s||^2 / (2 mu) for any
subgradient s of F at x (Euclidean norm, in raw units; b enters F through the data,
so this bound needs no intercept term when mu is taken on w only: it is reported for
problems without intercept, or as the bound on the w-part only otherwise).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from ..errors import NotApplicableError
from ..certify.duality import dual_shrink, dual_value, gap_defined
from ..certify.optimality import (OptimalityReport, minimum_norm_subgradient,
                                  relative_report, stationarity_scale)
from ..losses import make_loss
from .oracle import DaskERMOracle

__all__ = ["chunked_optimality"]

#: Kink rows gathered at most (each is a dim-vector): beyond, the certificate says so
#: instead of gathering a chunk-sized block.
MAX_KINK_ROWS = 200_000


def _block_multipliers(X, y, x, loss, intercept, kink_tol, weight):
    """(f, lo, hi, g) on one row block: the scores, the derivative intervals (times the
    weights v), and the multipliers of the samples off any kink (0 on a kink)."""
    d = X.shape[1]
    f = X @ x[:d]
    if intercept:
        f += x[d]
    lo, hi = loss.subdifferential(y, f, kink_tol)
    if weight is not None:
        lo, hi = lo * weight, hi * weight
    return f, lo, hi, np.where(lo < hi, 0.0, lo)


def _block_certificate(X, y, x, loss, intercept, kink_tol, weight=None):
    """Pass 1 on one row block, every entry a sum over the samples (lists concatenate):
    (sum v loss, A_k^T g off kinks, [kink rows of A], [lo], [hi], [y on kinks],
    [v on kinks], sum g^2, sum g+, sum g-, X^T g+, X^T v, sum y, sum y^2, the columns
    square sums)."""
    loss = make_loss(loss)
    f, lo, hi, g = _block_multipliers(X, y, x, loss, intercept, kink_tol, weight)
    v = np.ones(X.shape[0]) if weight is None else np.asarray(weight, float)
    free = lo < hi
    base = X.T @ g
    if intercept:
        base = np.append(base, g.sum())
    rows = X[free]
    if intercept:
        rows = np.column_stack([rows, np.ones(rows.shape[0])])
    g_pos = np.maximum(g, 0.0)
    XT_pos = X.T @ g_pos if intercept else np.zeros(X.shape[1])
    return (float(v @ loss.value(y, f)), base, [rows], [lo[free]], [hi[free]],
            [np.asarray(y, float)[free]], [v[free]], float(g @ g), float(g_pos.sum()),
            float(g_pos.sum() - g.sum()), XT_pos, X.T @ v, float(np.sum(y)), float(y @ y),
            np.einsum("ij,ij->j", X, X))


def _conjugate_sum(loss, y, g, v):
    """sum_i v_i l_i^*(g_i / v_i) over samples of weight v_i > 0 (the conjugate of v l);
    a sample of weight 0 admits only g_i = 0 (inf otherwise)."""
    held = v > 0
    if np.any(g[~held] != 0.0):
        return math.inf
    return float(np.sum(v[held] * loss.conjugate(y[held], g[held] / v[held])))


def _block_conjugate(X, y, x, loss, intercept, kink_tol, shrink, weight=None):
    """Pass 2 on one row block: sum_i v_i l_i^*(g'_i / v_i) over the samples off any kink,
    g' the shrunk multipliers (the kink samples' are summed by the client)."""
    loss = make_loss(loss)
    _, lo, hi, g = _block_multipliers(X, y, x, loss, intercept, kink_tol, weight)
    v = np.ones(X.shape[0]) if weight is None else np.asarray(weight, float)
    fixed = lo >= hi
    return _conjugate_sum(loss, np.asarray(y, float)[fixed], shrink.apply(g, v)[fixed],
                          v[fixed])


def _combine(a, b):
    return tuple(u + v for u, v in zip(a, b))


def chunked_optimality(oracle: DaskERMOracle, x: np.ndarray, tol: float = 1e-6,
                       kink_tol: float = 1e-6) -> OptimalityReport:
    """The ERM certificate at x = (w, b), computed chunk-wise: the in-memory one's figures.

    Pass 1 reduces A^T g over the samples off any kink, the rows on a kink and the sums
    the dual point needs; the projection runs on the client
    (:func:`~convexlearn.certify.optimality.minimum_norm_subgradient`); pass 2 (only where
    a Fenchel dual is written) sums the loss conjugates at the multipliers made dual
    feasible by the map of :func:`~convexlearn.certify.duality.dual_shrink`, which needs
    sums only.

    Parameters
    ----------
    oracle : DaskERMOracle
    x : ndarray (dim,)
    tol : float
        ``passed`` iff ``relative_distance <= tol`` and ``relative_gap <= tol`` (where a
        gap is defined), the scales of :func:`convexlearn.certify.optimality.certificate`.
    kink_tol : float
        Margin band around a loss kink, and |w_j| band around 0 for l1 terms.

    Returns
    -------
    OptimalityReport
        As in memory (distance, relative distance, duality gap); ``suboptimality`` is the
        strong-convexity bound ||s||^2 / (2 mu) (nan where F is not strongly convex in all
        of x); ``details["passes"]`` counts this certificate's passes (pass 1 is none when
        the oracle's last evaluation was at x: :meth:`DaskERMOracle.certificate_sums`).
    """
    data, loss, penalty, lam = oracle.data, oracle.loss, oracle.penalty, oracle.lam
    x = np.asarray(x, float)
    # pass 1, unless the solver's last pass was at x and brought its sums (no kinks)
    first = oracle.certificate_sums(x)
    fused = first is not None
    if not fused:
        first = data.map_reduce(_block_certificate, x, oracle._token, oracle.intercept,
                                float(kink_tol), combine=_combine)
    (total, base, rows, lows, highs, ys, vs, g_sq, pos, neg, XT_pos, XT_v, y_sum,
     y_sq, col_sq) = first
    n, d = data.n, oracle.d
    k = sum(r.shape[0] for r in rows)
    if k > MAX_KINK_ROWS:
        raise NotApplicableError(
            f"{k} samples lie within kink_tol={kink_tol:g} of the loss's kink; the "
            f"chunk-wise certificate gathers at most {MAX_KINK_ROWS} such rows")
    A_kink = np.vstack(rows) if k else np.zeros((0, oracle.dim))
    lo = np.concatenate(lows) if k else np.zeros(0)
    hi = np.concatenate(highs) if k else np.zeros(0)
    y_kink = np.concatenate(ys) if k else np.zeros(0)
    v_kink = np.concatenate(vs) if k else np.zeros(0)
    # the units of the in-memory certificate: each column's RMS (unweighted; 1 for a
    # zero column and the intercept)
    units = np.sqrt(col_sq / n)
    units = np.append(np.where(units > 0, units, 1.0), [1.0] * int(oracle.intercept))
    w, b = oracle.split(x)
    P = total / n + (lam * penalty.value(w) if lam > 0 else 0.0)
    s0 = 1.0 if loss.margin_based else (y_sq / n - (y_sum / n) ** 2 if oracle.intercept
                                        else y_sq / n)
    s0 = s0 if s0 > 0 else 1.0

    def report(scaled_columns: bool) -> OptimalityReport:
        distance, details, z = minimum_norm_subgradient(
            base / n, A_kink.T / n, lo, hi, units, penalty, lam, w, kink_tol,
            scaled_columns)
        r_pen = details.pop("penalty_subgradient")
        z_pos = np.maximum(z, 0.0)
        g_norm = float(np.sqrt(g_sq + z @ z))
        details["scale"] = stationarity_scale(g_norm, n, lam, penalty, r_pen, units)
        D, passes = math.nan, 1
        if gap_defined(loss, penalty, lam):
            XTg = base[:d] + A_kink[:, :d].T @ z
            # sum v = n: the shift of a regression loss's g is along v (1 unweighted)
            sums = dict(pos_sum=pos + z_pos.sum(), neg_sum=neg + (z_pos.sum() - z.sum()),
                        XT_pos=XT_pos + A_kink[:, :d].T @ z_pos,
                        g_sum=(base[d] + z.sum()) if oracle.intercept else 0.0,
                        shift_columns=XT_v, weight_sum=float(n))

            def conjugates(balance):
                shrink, XTg_s = dual_shrink(loss, penalty, lam, oracle.intercept, n, XTg,
                                            balance=balance, **sums)
                conj = data.map_reduce(_block_conjugate, x, oracle._token, oracle.intercept,
                                       float(kink_tol), shrink)
                if k:
                    conj += _conjugate_sum(loss, y_kink, shrink.apply(z, v_kink), v_kink)
                return conj, XTg_s

            conj, XTg_s = conjugates(None)
            passes = 2
            if not math.isfinite(conj) and oracle.intercept and not loss.margin_based:
                # a bounded conjugate domain that the shift left (as in memory: the sign
                # sides are scaled toward 0 instead)
                conj, XTg_s = conjugates(True)
                passes = 3
            D = dual_value(conj / n, penalty, lam, XTg_s, n)
        details.update(n_on_kink=k, passes=passes - fused, units=units, n_samples=n,
                       computed="chunk-wise (dask)", n_chunks=data.n_chunks)
        rep = relative_report(distance, details, P, D, s0, tol)
        rep.details["multipliers_on_kink"] = z
        return rep

    rep = report(False)
    if not rep.passed and rep.details["method"].startswith("bounded-variable"):
        second = report(True)      # a second feasible multiplier (as in memory)
        if second.passed:
            second.details["method"] += " on unit-norm columns"
            rep = second
    mu = lam * penalty.strong_convexity
    if mu > 0 and not oracle.intercept:
        # the raw (unscaled) minimum-norm subgradient, from the scaled one's multipliers
        raw = distance_raw(base / n, A_kink.T / n, rep.details["multipliers_on_kink"],
                           oracle, w, kink_tol)
        rep.suboptimality = raw * raw / (2.0 * mu)
        rep.optimal_objective = float(P - rep.suboptimality)
    return rep


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
