"""The certificate of the Crammer-Singer multiclass SVM, recomputed from the data.

Primal and dual (docs/conventions.md; classes 0..k-1, e_im = 1 - [m = y_i])::

    P(W) = 1/2 ||W||_F^2 + sum_i C_i xi_i,   xi_i = max_m v_im,   v_im = e_im + <w_m - w_{y_i}, x_i>
    D(A) = sum_i s_i - 1/2 ||A^T X||_F^2,    s_i = A_{i y_i} = -sum_{m != y_i} A_im,
           A_im <= 0 (m != y_i),  s_i <= C_i

Weak duality P(W) >= P* >= D(A) for every W and every feasible A, so the relative gap
(P - D) / max(|P|, |D|) bounds the suboptimality of W whatever produced it. D is evaluated
at A made feasible (entries clipped, A_{i y_i} set to the mass of the others, scaled down
to C_i where it exceeds it).

Per sample, the dual puts the mass C_i on the classes: mu_im = -A_im (m != y_i) and
mu_{i y_i} = C_i - s_i, each >= 0. KKT: W = A^T X (stationarity, scaled by
max(||W||, sum_i ||A_i|| ||x_i||)) and mass only on the classes that attain the max
(complementarity: sum_m mu_im (xi_i - v_im) / C_i, in margin units).
"""

from __future__ import annotations

import math

import numpy as np

from .kkt import relative_gap

__all__ = ["crammer_singer_certificate", "feasible_dual", "CrammerSingerReport"]

_TINY = np.finfo(float).tiny


def feasible_dual(A: np.ndarray, codes: np.ndarray, C: np.ndarray) -> np.ndarray:
    """A moved into the dual's feasible set (module docstring)."""
    n = A.shape[0]
    rows = np.arange(n)
    F = np.minimum(np.asarray(A, dtype=float), 0.0)
    F[rows, codes] = 0.0
    s = -F.sum(axis=1)
    over = s > C
    if over.any():
        F[over] *= (C[over] / s[over])[:, None]
        s = np.minimum(s, C)
    F[rows, codes] = s
    return F


def crammer_singer_certificate(X: np.ndarray, codes: np.ndarray, C: np.ndarray,
                               W: np.ndarray, A: np.ndarray, tol: float = 1e-6,
                               gap_tol: float = 1e-9) -> dict:
    """The certificate of (W, A): primal, dual, relative gap, per-sample complementarity,
    stationarity; ``passed`` when every residual <= ``tol`` and the relative gap <= gap_tol
    (and not below -gap_tol: that would break weak duality)."""
    n = X.shape[0]
    rows = np.arange(n)
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    S = X @ W.T
    V = S - S[rows, codes][:, None] + 1.0
    V[rows, codes] = 0.0
    xi = V.max(axis=1)
    primal = 0.5 * float(np.sum(W * W)) + float(C @ xi)
    F = feasible_dual(A, codes, C)
    WA = F.T @ X
    dual = float(F[rows, codes].sum()) - 0.5 * float(np.sum(WA * WA))
    mass = -F
    mass[rows, codes] = C - F[rows, codes]
    comp = np.divide(np.sum(mass * (xi[:, None] - V), axis=1), C, out=np.zeros(n),
                     where=C > 0)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    scale = max(math.sqrt(float(np.sum(W * W))),
                float(np.linalg.norm(F, axis=1) @ norms), _TINY)
    stationarity = float(np.linalg.norm(W - WA)) / scale
    rel = (primal - dual) / max(abs(primal), abs(dual), _TINY)
    worst = max(float(np.max(comp, initial=0.0)), stationarity)
    passed = bool(worst <= tol and -gap_tol <= rel <= gap_tol)
    return dict(passed=passed, primal=primal, dual=dual, gap=primal - dual,
                relative_gap=relative_gap(primal, dual) if rel >= -gap_tol else math.inf,
                signed_relative_gap=rel, complementarity=comp, stationarity=stationarity,
                max_violation=worst, slack=xi, gap_tol=gap_tol, tol=tol)


class CrammerSingerReport:
    """The certificate of a Crammer-Singer solution (:func:`crammer_singer_certificate`'s
    figures as attributes): ``passed``, ``relative_gap``, ``primal_objective``,
    ``dual_objective``, ``duality_gap``, ``max_violation``, ``complementarity`` (per
    sample), ``stationarity``, ``slack`` (xi_i), ``tol``, ``gap_tol``."""

    def __init__(self, figures: dict):
        self.passed = figures["passed"]
        self.relative_gap = figures["relative_gap"]
        self.primal_objective = figures["primal"]
        self.dual_objective = figures["dual"]
        self.duality_gap = figures["gap"]
        self.max_violation = figures["max_violation"]
        self.complementarity = figures["complementarity"]
        self.stationarity = figures["stationarity"]
        self.slack = figures["slack"]
        self.tol, self.gap_tol = figures["tol"], figures["gap_tol"]

    def worst(self) -> dict[str, float]:
        """The largest residual of each condition (the gap relative)."""
        return {"complementarity": float(np.max(self.complementarity, initial=0.0)),
                "stationarity": float(self.stationarity),
                "duality_gap": float(self.relative_gap)}

    def summary(self) -> str:
        """Two lines: the verdict and the figures."""
        verdict = "CERTIFIED" if self.passed else "NOT certified"
        return (f"{verdict} at a relative duality gap of {self.gap_tol:g} (gap "
                f"{self.relative_gap:.2e}); KKT residuals max {self.max_violation:.2e} "
                f"(<= {self.tol:g})\n  primal {self.primal_objective:.12g}, dual "
                f"{self.dual_objective:.12g}")

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (f"<CrammerSingerReport {'passed' if self.passed else 'FAILED'}: relative gap "
                f"{self.relative_gap:.2e}, max violation {self.max_violation:.2e}>")
