"""The exact lasso path by homotopy (LARS with the lasso modification).

The lasso in lambda-form (squared loss, l1 penalty, intercept unpenalized)::

    F(w, b) = (1/n) sum_i (y_i - <w, x_i> - b)^2 + lam ||w||_1

With the intercept, X and y are centred (b = mean(y) - <mean(X), w>) and the problem is
the same on the centred data without intercept. Write mu = n lam / 2 and
c(w) = X^T (y - X w) (the correlations of the residual). w is optimal iff::

    c_j = mu sign(w_j)   where w_j != 0,        |c_j| <= mu   where w_j = 0.

On an interval of mu where the active set A = {j : w_j != 0} and its signs s are fixed,
the first condition is linear: X_A^T X_A w_A = X_A^T y - mu s, so w_A(mu) = a - mu d with
``a = G^{-1} X_A^T y``, ``d = G^{-1} s``, ``G = X_A^T X_A``: the path is piecewise linear
in mu (hence in lam). It changes direction at a *breakpoint*, where an inactive
correlation reaches the boundary (|c_j(mu)| = mu: j joins A) or an active coefficient
reaches 0 (j leaves A). The path starts at ``mu_max = max_j |c_j(0)|`` (w = 0 for every
larger mu) and is followed down to ``lam_min``, or until G becomes singular (more active
features than the rank of the centred X: beyond that the lasso solution is not unique,
and the path reported ends there, said so in ``notes``).

Each candidate event is linear in mu' on the segment, so it has one root; the event just
applied (a feature that joined, or left) has its root at the segment's start, and is not
an event again below it (recomputed through round-off it can land ~1e-12 below mu): a
feature that just joined cannot leave, nor one that just left rejoin on the same side,
and an active coefficient leaves only when it shrinks toward 0 (d_j s_j < 0).

Between two breakpoints the solution is the linear interpolation of its ends, exactly
(in exact arithmetic): :meth:`LassoPath.at` returns it for any lam in the path's range.
Each breakpoint carries its own KKT residual (:meth:`LassoPath.kkt_residuals`):
``|c_j - mu s_j|`` on A and ``max(0, |c_j| - mu)`` off A, each divided by the size of the
terms that cancel in it. Compare scikit-learn's ``lars_path(method="lasso")``,
whose ``alphas`` are mu / n in this notation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular

from ...certify.lasso_gram import GramSummary, gram_summary

__all__ = ["LassoPath", "lasso_homotopy"]

#: Relative slack when comparing candidate breakpoints with the current mu: an event at
#: mu (1 - _EVENT_RTOL) or above is the one just applied, seen again through round-off.
_EVENT_RTOL = 1e-12
#: Events below mu_max * _FLOOR_RTOL are round-off of an interpolating fit (residual ~ 0):
#: the path runs straight to lam_min instead.
_FLOOR_RTOL = 1e-10


@dataclass
class LassoPath:
    """Breakpoints of the lasso path, decreasing in lam, and exact interpolation.

    Attributes
    ----------
    lams : ndarray of shape (k,)
        Breakpoints in lambda-form (decreasing); lams[0] = lam_max, where w = 0 first.
    coefs : ndarray of shape (k, d)
        w at each breakpoint (exact zeros off the active set).
    intercepts : ndarray of shape (k,)
        b at each breakpoint (0 without intercept).
    events : list of str
        What happened at each breakpoint ("start", "join j", "leave j", "end").
    notes : list of str
        Why the path ended where it did, when not at ``lam_min``.
    """

    lams: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    events: list[str]
    n_samples: int
    notes: list[str] = field(default_factory=list)
    _X: np.ndarray | None = field(default=None, repr=False)
    _y: np.ndarray | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return (f"<LassoPath: {len(self.lams)} breakpoints, lam from {self.lams[0]:.4g} "
                f"to {self.lams[-1]:.4g}, up to "
                f"{int(np.max(np.count_nonzero(self.coefs, axis=1)))} active features>")

    def at(self, lam: float) -> tuple[np.ndarray, float]:
        """(w, b) at any lam: w = 0 above lams[0]; between two breakpoints the linear
        interpolation of their solutions (the path is linear there)."""
        lam = float(lam)
        if not np.isfinite(lam) or lam < self.lams[-1] * (1 - 1e-12):
            raise ValueError(f"lam={lam!r} is outside the computed path "
                             f"[{self.lams[-1]:.6g}, inf)")
        if lam >= self.lams[0]:
            return np.zeros(self.coefs.shape[1]), float(self.intercepts[0])
        k = int(np.searchsorted(-self.lams, -lam, side="right"))  # lams[k-1] > lam >= lams[k]
        k = min(max(k, 1), len(self.lams) - 1)
        hi, lo = self.lams[k - 1], self.lams[k]
        t = (hi - lam) / (hi - lo)
        w = (1 - t) * self.coefs[k - 1] + t * self.coefs[k]
        b = (1 - t) * self.intercepts[k - 1] + t * self.intercepts[k]
        return w, float(b)

    def kkt_residuals(self) -> np.ndarray:
        """Per breakpoint: the largest violation of the lasso's optimality conditions,
        coordinate j divided by the size of the terms that cancel in it,
        ``max(mu, sum_i |x_ij| (|y_i - b| + sum_k |x_ik w_k|))`` (mu = n lam / 2): the
        terms of ``X_j^T (y - b - X w)`` before they cancel. Scale-free, and meaningful at
        lam = 0 too, where the conditions are X^T r = 0."""
        out = np.empty(len(self.lams))
        absX = np.abs(self._X)
        for k, (lam, w, b) in enumerate(zip(self.lams, self.coefs, self.intercepts)):
            mu = self.n_samples * lam / 2
            r = self._y - self._X @ w - b
            c = self._X.T @ r
            on = w != 0
            viol = np.where(on, np.abs(c - mu * np.sign(w)), np.maximum(0.0, np.abs(c) - mu))
            size = np.maximum(mu, absX.T @ (np.abs(self._y - b) + absX @ np.abs(w)))
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(viol > 0, viol / size, 0.0)
            out[k] = float(rel.max()) if rel.size else 0.0
        return out


def lasso_homotopy(X: np.ndarray, y: np.ndarray, intercept: bool = True,
                   lam_min: float = 0.0, max_breakpoints: int = 10_000,
                   summary: GramSummary | None = None) -> LassoPath:
    """Follow the lasso path from lam_max down to ``lam_min`` (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    intercept : bool
        Fit an unpenalized intercept (centring).
    lam_min : float
        Where to stop (lambda-form, >= 0). The path also stops where the active set
        outgrows the rank of X (the solution is not unique beyond).
    max_breakpoints : int
        A budget: each breakpoint costs one solve with the active Gram matrix.
    summary : GramSummary, optional
        :func:`convexlearn.certify.lasso_gram.gram_summary` of (X, y, intercept), when the
        caller has it (n > d: its Gram matrix and X^T y, centred, are the homotopy's).

    Returns
    -------
    LassoPath
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    # n > d: every product goes through the d x d Gram matrix of the centred X, computed
    # once (n d^2) by row blocks (no n x d centred copy), and a breakpoint costs O(d |A|)
    # instead of O(n d). Else the centred X itself.
    if n > d:
        if summary is None:
            summary = gram_summary(X, y, intercept)
        gram, Xc, c = summary.gram, None, summary.xty
        x_mean, y_mean = summary.x_mean, summary.y_mean
    else:
        if intercept:
            x_mean, y_mean = X.mean(axis=0), float(y.mean())
        else:
            x_mean, y_mean = np.zeros(d), 0.0
        gram, Xc = None, X - x_mean
        c = Xc.T @ (y - y_mean)
    j0 = int(np.argmax(np.abs(c)))
    mu = float(abs(c[j0]))
    mu_min = n * float(lam_min) / 2
    floor = max(mu_min, mu * _FLOOR_RTOL)
    w = np.zeros(d)
    mus, coefs, events, notes = [mu], [w.copy()], ["start"], []
    if mu == 0.0:
        notes.append("y is constant (centred) or orthogonal to every feature: w = 0 for "
                     "every lam")
        return _finish(mus, coefs, events, notes, n, x_mean, y_mean, X, y)
    active, signs = [j0], [float(np.sign(c[j0]))]
    # the last event (kind, feature, sign): its root at mu is not an event below mu
    last = ("join", j0, signs[0])
    while mu > mu_min and len(mus) < max_breakpoints:
        if gram is None:
            XA = Xc[:, active]
            G = XA.T @ XA
        else:
            G = gram[np.ix_(active, active)]
        try:
            chol = np.linalg.cholesky(G)
        except np.linalg.LinAlgError:
            notes.append(f"the path stops at lam = {2 * mu / n:.6g}: {len(active)} active "
                         f"features exceed the rank of X, and the lasso solution is not "
                         f"unique below this lam")
            break
        a = _chol_solve(chol, c[active])
        dvec = _chol_solve(chol, np.asarray(signs))
        if gram is None:               # c_j(mu') = p_j + mu' q_j off A
            p = c - Xc.T @ (XA @ a)
            q = Xc.T @ (XA @ dvec)
        else:
            GA = gram[:, active]
            p = c - GA @ a
            q = GA @ dvec
        ceiling = mu * (1 - _EVENT_RTOL)
        best_mu, event = mu_min, None
        inactive = np.ones(d, dtype=bool)
        inactive[active] = False
        for sign in (1.0, -1.0):
            with np.errstate(divide="ignore", invalid="ignore"):
                cand = p / (sign - q)
            ok = inactive & np.isfinite(cand) & (cand > max(best_mu, floor)) & (cand < ceiling)
            if last[0] == "leave" and last[2] == sign:
                # c_j = p_j + mu' q_j meets sign * mu' once: at mu, where j just left (a
                # rejoin below mu is on the other side, -sign)
                ok[last[1]] = False
            if ok.any():
                j = int(np.flatnonzero(ok)[np.argmax(cand[ok])])
                best_mu, event = float(cand[j]), ("join", j, sign)
        with np.errstate(divide="ignore", invalid="ignore"):
            leave = a / dvec
        # w_j = a_j - mu' dvec_j reaches 0 below mu only if it shrinks as mu' decreases:
        # dvec_j s_j < 0. A feature that just joined (w_j = 0 at mu up to round-off) grows
        # (dvec_j s_j > 0); without this test its zero, seen again through round-off ~1e-12
        # below mu, passed for a leave (found on n=50000, d=200: the path went wrong there).
        toward_zero = dvec * np.asarray(signs) < 0
        if last[0] == "join":           # w_j = a_j - mu' dvec_j is 0 once: at mu, the join
            toward_zero[-1] = False
        ok = toward_zero & np.isfinite(leave) & (leave > max(best_mu, floor)) & \
            (leave < ceiling)
        if ok.any():
            k = int(np.flatnonzero(ok)[np.argmax(leave[ok])])
            best_mu, event = float(leave[k]), ("leave", k, 0.0)
        w = np.zeros(d)
        w[active] = a - best_mu * dvec
        if event is not None and event[0] == "leave":
            w[active[event[1]]] = 0.0           # exactly: it leaves here
        mus.append(best_mu)
        coefs.append(w)
        if event is None:
            events.append("end")
            mu = best_mu
            break
        if event[0] == "join":
            active.append(event[1])
            signs.append(event[2])
            events.append(f"join {event[1]}")
            last = event
        else:
            last = ("leave", active[event[1]], signs[event[1]])
            events.append(f"leave {last[1]}")
            del active[event[1]], signs[event[1]]
        mu = best_mu
    if len(mus) >= max_breakpoints and mu > mu_min:
        notes.append(f"stopped after max_breakpoints={max_breakpoints} at lam = "
                     f"{2 * mu / n:.6g}")
    return _finish(mus, coefs, events, notes, n, x_mean, y_mean, X, y)


def _chol_solve(chol: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    # finite by construction (a Cholesky factor of finite data): skip scipy's scans
    z = solve_triangular(chol, rhs, lower=True, check_finite=False)
    return solve_triangular(chol.T, z, lower=False, check_finite=False)


def _finish(mus, coefs, events, notes, n, x_mean, y_mean, X, y) -> LassoPath:
    coefs = np.array(coefs)
    return LassoPath(lams=2 * np.asarray(mus) / n, coefs=coefs,
                     intercepts=y_mean - coefs @ x_mean, events=events, n_samples=n,
                     notes=notes, _X=X, _y=y)
