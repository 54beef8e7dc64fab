"""The nu-problems on the dual QP core: nu-SVC and nu-SVR as LIBSVM builds them, and
the certified route (Solver_NU, active-set polish, the QP's duality gap).

nu-SVC (Schoelkopf et al. 2000; LIBSVM's ``solve_nu_svc``), primal::

    min_{w, b, rho, xi}  1/2 ||w||^2 - nu rho + 1/n sum_i xi_i
    s.t.  y_i (<w, phi(x_i)> + b) >= rho - xi_i,  xi_i >= 0

whose dual, scaled by n (a = n alpha, as LIBSVM), is the QP of
:mod:`~convexlearn.solvers.kernel_svm.qp` with s = y, p = 0, 0 <= a <= 1 and one row per
class, sum_{y = +1} a = sum_{y = -1} a = nu n / 2 (feasible iff nu <= 2 min(n+, n-) / n).
With the intercepts per sign (b_+, b_-) of the rows (g + b_c = 0 on the free variables of
class c) LIBSVM's r = (b_- - b_+) / 2 and rho_libsvm = -(b_+ + b_-) / 2; the primal
point is w = sum_i (a_i / n) y_i phi(x_i), b = (b_+ + b_-) / (2 n), rho = r / n, and
scikit-learn's NuSVC reports the C-SVC with C = 1 / r it equals: ``dual_coef_`` = y a / r,
``intercept_`` = (b_+ + b_-) / (2 r) (= -rho_libsvm / r), decision (g + b) / r.

nu-SVR (LIBSVM's ``solve_nu_svr``), primal with scikit-learn's C (Schoelkopf's C is C n)::

    min  1/2 ||w||^2 + C (n nu eps + sum_i (xi_i + xi_i*))
    s.t. z_i - <w, phi(x_i)> - b <= eps + xi_i,  <w, phi(x_i)> + b - z_i <= eps + xi_i*,
         xi, xi* >= 0  (eps >= 0 a variable)

dual: a = (a+, a-) on the samples twice, s = (+1, -1), p = (-z, z), 0 <= a <= C, rows
sum a+ = sum a- = C nu n / 2. Then ``dual_coef_`` = a+ - a-, b = (b_+ + b_-) / 2
(``intercept_``), eps = (b_+ - b_-) / 2 (LIBSVM's -r).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...certify.kkt import dual_qp_objectives, relative_gap
from ...gram import Gram
from ...solution import Timer
from .qp import DualQP
from .smo_nu import smo_nu_qp

__all__ = ["nu_svc_qp", "nu_svr_qp", "nu_svc_read", "nu_svr_read", "solve_nu_qp",
           "nu_gap"]


def nu_svc_qp(gram: Gram, y: np.ndarray, nu: float) -> DualQP:
    """LIBSVM's nu-SVC dual (module docstring): s = y, p = 0, u = 1, rows nu n / 2."""
    y = np.asarray(y, dtype=float)
    half = nu * y.size / 2.0
    rows = (((y > 0).astype(float), half), ((y < 0).astype(float), half))
    return DualQP.on_samples(gram, y, 0.0, 1.0, rows, name="nu-SVC dual")


def nu_svr_qp(gram: Gram, z: np.ndarray, C: float, nu: float) -> DualQP:
    """LIBSVM's nu-SVR dual (module docstring): a = (a+, a-), s = (+1, -1), p = (-z, z),
    u = C, rows C nu n / 2, on the samples indexed twice."""
    z = np.asarray(z, dtype=float)
    n = z.size
    ones, zeros = np.ones(n), np.zeros(n)
    half = C * nu * n / 2.0
    rows = ((np.r_[ones, zeros], half), (np.r_[zeros, ones], half))
    return DualQP.on_samples(gram, np.r_[ones, -ones], np.r_[-z, z], C, rows,
                             index=np.r_[np.arange(n), np.arange(n)], name="nu-SVR dual")


def nu_svc_read(y: np.ndarray, alpha: np.ndarray, b: tuple[float, float]) -> dict:
    """scikit-learn's NuSVC answer from the QP's a and (b_+, b_-): dual_coef = y a / r,
    intercept = (b_+ + b_-) / (2 r), with r = (b_- - b_+) / 2 (> 0 at an optimum that
    separates anything; 1 / r is the C of the equal C-SVC)."""
    r = (b[1] - b[0]) / 2.0
    return {"dual_coef": y * alpha / r, "intercept": (b[0] + b[1]) / (2.0 * r), "r": r,
            "rho": -(b[0] + b[1]) / 2.0}


def nu_svr_read(alpha: np.ndarray, b: tuple[float, float]) -> dict:
    """scikit-learn's NuSVR answer: dual_coef = a+ - a-, intercept = (b_+ + b_-) / 2,
    and the tube's half-width eps = (b_+ - b_-) / 2."""
    n = alpha.size // 2
    return {"dual_coef": alpha[:n] - alpha[n:], "intercept": (b[0] + b[1]) / 2.0,
            "epsilon": (b[0] - b[1]) / 2.0}


def nu_gap(qp: DualQP, alpha: np.ndarray, g: np.ndarray, b: tuple[float, float]
           ) -> tuple[float, float, float]:
    """(P, D, relative gap) of the two-row QP at a and its intercepts per sign
    (:func:`~convexlearn.certify.kkt.dual_qp_objectives`)."""
    primal, dual = dual_qp_objectives(qp.signs, qp.target, qp.upper, alpha, g, b, qp.deltas)
    return primal, dual, relative_gap(primal, dual)


def solve_nu_qp(qp: DualQP, *, tol: float = 1e-3, gap_tol: float = 1e-9,
                cache_size: float = 200.0, max_iter: int | None = None, retries: int = 3,
                polish: bool = True) -> dict[str, Any]:
    """The certified route of a two-row QP: Solver_NU to ``tol``, the active-set polish,
    the QP's relative duality gap; SMO resumes from the better point at tol / 100 while
    the gap exceeds ``gap_tol`` (at most ``retries`` times).

    Returns
    -------
    dict
        ``alpha``, ``g`` (= K (s * a)), ``b`` (b_+, b_-), ``primal``, ``dual``, ``gap``,
        ``certified`` (gap <= gap_tol and a feasible), ``polished``, ``n_iter``,
        ``smo_tol`` (the tolerances run), ``time_s``, ``cache``.
    """
    timer = Timer()
    alpha0, best, n_iter, tols, polished_any = None, None, 0, [], False
    for _ in range(retries + 1):
        res, cache, _ = smo_nu_qp(qp, tol=tol, max_iter=max_iter, alpha0=alpha0,
                                  cache_size=cache_size, record=False)
        n_iter += res.n_iter
        tols.append(tol)
        g = qp.target - res.v
        candidates = [(res.alpha, qp.intercept(res.alpha, g)[0], g, False)]
        refined = qp.polish(res.alpha, g) if polish else None
        if refined is not None and _feasible(qp, refined[0]):
            candidates.append((*refined, True))
        for alpha, b, g_c, was_polished in candidates:
            primal, dual, gap = nu_gap(qp, alpha, g_c, b)
            if best is None or gap < best["gap"]:
                best = {"alpha": alpha, "g": g_c, "b": tuple(float(x) for x in b),
                        "primal": primal, "dual": dual, "gap": gap,
                        "polished": was_polished}
        polished_any |= any(c[3] for c in candidates)
        if best["gap"] <= gap_tol:
            break
        alpha0 = best["alpha"]
        tol = max(tol / 100.0, 1e-15)
    best.update(certified=best["gap"] <= gap_tol and _feasible(qp, best["alpha"]),
                n_iter=n_iter, smo_tol=tols, time_s=timer(), cache=cache,
                polished_any=polished_any)
    return best


def _feasible(qp: DualQP, alpha: np.ndarray) -> bool:
    """0 <= a <= u and each row to the round-off of its n terms (1e-12 n max u)."""
    if not (np.all(alpha >= 0.0) and np.all(alpha <= qp.upper)):
        return False
    scale = 1e-12 * qp.n * float(np.max(qp.upper))
    sums = (float(alpha[qp.signs > 0].sum()), float(alpha[qp.signs < 0].sum()))
    return all(abs(s - d) <= scale for s, d in zip(sums, qp.deltas))
