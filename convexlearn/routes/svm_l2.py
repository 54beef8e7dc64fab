"""Routes of the L2-loss (squared hinge) SVM (:class:`convexlearn.svm_l2.SquaredHingeSVM`).

``method="exact"`` walks :func:`exact_chain` with the walker of
:mod:`convexlearn.routes.chain`; an answer is "optimal" iff its certificate
(:mod:`convexlearn.certify.squared_hinge`, recomputed from the data) passes, and the
exact routes record ``gap_tol`` = 1e-9 on the report when the relative duality gap is
within it.

* "exact-linear" (linear kernel on features): generalized Newton in w-space
  (:mod:`convexlearn.solvers.linear_svm.l2_newton`), exact on its final active set.
* "exact-smo" (any kernel): the C-SVC's dual QP with the diagonal shifted by
  1 / (2 C_i), no upper bound, solved by SMO (:func:`~convexlearn.solvers.kernel_svm.smo.smo_qp`)
  and the active-set polish of the core (:meth:`~convexlearn.solvers.kernel_svm.qp.DualQP.polish`).
  It forms the n x n matrix K + diag(1 / (2 C_i)) (a precomputed Gram operator).
* "exact-dual", "exact-primal": the cvxpy formulations
  (:mod:`convexlearn.formulations.svm_variants`).

The iterative method "dcd" is LIBLINEAR's L2-loss dual coordinate descent
(:func:`~convexlearn.solvers.linear_svm.dcd.dcd_linear`, linear kernel, uniform C).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import NotApplicableError, ParameterError
from ..formulations.svm_variants import squared_hinge_dual, squared_hinge_primal
from ..gram import Gram
from ..kernels import make_kernel
from ..solution import Solution, Timer
from ..solvers.kernel_svm.qp import DualQP
from ..solvers.kernel_svm.smo import smo_qp
from ..solvers.linear_svm.dcd import dcd_linear
from ..solvers.linear_svm.l2_newton import squared_hinge_linear
from .chain import Route, walk

__all__ = ["ROUTES", "EXACT_METHODS", "ITERATIVE", "exact_chain", "solve", "EXACT_TOL"]

#: Relative duality gap at which an exact answer is certified.
EXACT_TOL = 1e-9
#: Default tolerance of the certificate's residuals for the exact methods.
REPORT_TOL = 1e-6


def _linear_applies(p) -> str | None:
    if not p.kernel.is_linear or p.X is None:
        return f"route 'exact-linear' needs the linear kernel on features; this is {p.describe()}"
    return None


def _linear(p, *, solver, options) -> Solution:
    if _linear_applies(p) is not None:
        raise NotApplicableError(_linear_applies(p))
    timer = Timer()
    p.densify("the exact L2-loss route")
    w, b, info = squared_hinge_linear(np.asarray(p.X, dtype=float), p.y, p.C_bounds, p.mode)
    sol = _primal_solution(p, w, b, None)
    sol.n_iter, sol.time_s = info["newton_iter"], timer()
    sol.provenance = {"solver": "convexlearn.l2_newton", **info}
    if not info["converged"]:
        sol.status = "inaccurate"
    return sol


def _primal_solution(p, w, b, beta) -> Solution:
    """A primal point with a_i = 2 C_i xi_i (its implied multipliers)."""
    sol = Solution(w=w, b=float(b), dual_coef=beta, method="exact")
    f = p.decision_function(sol)
    xi = np.maximum(0.0, 1.0 - p.y * f)
    sol.xi, sol.alpha = xi, 2.0 * p.C_bounds * xi
    if sol.dual_coef is None:
        sol.dual_coef = p.y * sol.alpha
    sol.objective = p.primal_objective(sol)
    sol.status = "optimal"
    return sol


def _smo(p, *, solver, options) -> Solution:
    """SMO + polish on the shifted dual QP (module docstring), on the samples of cost > 0."""
    timer = Timer()
    C = p.C_bounds
    keep = np.flatnonzero(C > 0)
    K = np.array(p.gram[np.ix_(keep, keep)], dtype=float)
    K[np.diag_indices(keep.size)] += 1.0 / (2.0 * C[keep])
    if p.mode == "penalized":
        K += 1.0        # the bias as a constant feature 1
    y = p.y[keep]
    gram = Gram(make_kernel("precomputed"), None, K)
    rows = ((y, 0.0),) if p.mode == "unpenalized" else ()
    qp = DualQP.on_samples(gram, y, -1.0, np.inf, rows, name="L2-loss SVM dual")
    res, _, loop = smo_qp(qp, tol=1e-3, cache_size=options.get("cache_size", 200.0),
                          record=False)
    alpha, b, g = res.alpha, None, qp.target - res.v
    refined = qp.polish(alpha, g, max_rounds=200)
    if refined is not None:
        alpha, b, g = refined
    full = np.zeros(p.n_samples)
    full[keep] = alpha
    if p.mode == "unpenalized" and b is None:
        b = qp.intercept(alpha, g)[0]
    sol = p.from_alpha(full, b=None if p.mode != "unpenalized" else b)
    sol.method, sol.n_iter, sol.time_s = "exact", res.n_iter, timer()
    sol.status = "optimal"
    sol.provenance = {"solver": f"convexlearn.smo ({loop}) + polish",
                      "polished": refined is not None}
    return sol


def _cvxpy(method: str):
    def run(p, *, solver, options) -> Solution:
        from ..formulations.base import solve_formulation     # loads cvxpy: on use only
        p.densify(f"route {method!r}")
        data = {"X": p.X} if p.kernel.is_linear else {"K": p.gram}
        build = squared_hinge_dual if method == "exact-dual" else squared_hinge_primal
        form = build(p.y, p.C_bounds, p.mode, **data)
        info = solve_formulation(form, solver, **options)
        v = form.variables
        if method == "exact-dual":
            sol = p.from_alpha(np.asarray(v["alpha"].value, dtype=float))
        else:
            b = float(v["b"].value) if "b" in v else 0.0
            if "w" in v:
                sol = _primal_solution(p, np.asarray(v["w"].value, float), b, None)
            else:
                sol = _primal_solution(p, None, b, np.asarray(v["beta"].value, float))
        sol.method, sol.status, sol.n_iter = "exact", info.status, info.iterations
        sol.provenance = {**info.provenance(), "formulation": form.name}
        return sol
    return run


ROUTES: dict[str, Route] = {
    "exact-linear": Route("exact-linear", _linear, applies=_linear_applies),
    "exact-smo": Route("exact-smo", _smo,
                       memory=lambda p: 3 * 8 * p.n_samples * p.n_samples),
    "exact-dual": Route("exact-dual", _cvxpy("exact-dual"),
                        memory=lambda p: 3 * 8 * p.n_samples * p.n_samples),
    "exact-primal": Route("exact-primal", _cvxpy("exact-primal"),
                          memory=lambda p: 3 * 8 * p.n_samples * p.n_samples),
}
EXACT_METHODS = ("exact",) + tuple(ROUTES)
ITERATIVE = ("dcd",)


def exact_chain(p: Any) -> list[str]:
    """Linear kernel on features: Newton first; other kernels: SMO first; then the cvxpy
    dual and primal."""
    first = "exact-linear" if _linear_applies(p) is None else "exact-smo"
    return [first, "exact-dual", "exact-primal"]


def _dcd(p, tol: float, options: dict) -> Solution:
    if not p.kernel.is_linear or p.X is None:
        raise NotApplicableError(f"method 'dcd' needs the linear kernel; this is {p.describe()}")
    if p.sample_weight is not None:
        raise NotApplicableError("method 'dcd' takes one C (no sample weights); "
                                 "method='exact' takes per-sample costs")
    unknown = set(options) - {"max_iter", "seed", "shrinking"}
    if unknown:
        raise ParameterError(f"method 'dcd' takes max_iter, seed, shrinking; got "
                             f"{sorted(unknown)}")
    timer = Timer()
    X = p.X
    if p.mode == "penalized":      # LIBLINEAR's bias: a constant feature 1, penalized
        X = np.hstack([np.asarray(p.X.todense() if hasattr(p.X, "todense") else p.X),
                       np.ones((p.n_samples, 1))])
    alpha, w, b, epochs, status, history = dcd_linear(
        X, p.y, p.C, "squared_hinge", p.mode == "unpenalized", tol,
        options.get("max_iter", 1000), options.get("seed", 0), options.get("shrinking", True))
    if p.mode == "penalized":
        w, b = w[:-1], float(w[-1])
    sol = Solution(w=np.asarray(w, float), b=float(b), alpha=alpha, dual_coef=p.y * alpha,
                   method="dcd", n_iter=epochs, history=history,
                   status="optimal" if status == "converged" else status)
    sol.xi = np.maximum(0.0, 1.0 - p.y * p.decision_function(sol))
    sol.objective = p.primal_objective(sol)
    sol.time_s = timer()
    sol.provenance = {"solver": "convexlearn.dcd", "tol": tol, "route": "dcd"}
    return sol


def solve(p: Any, method: str = "exact", *, solver: str | None = None, tol: float = 1e-6,
          kkt_tol: float | None = None, **options) -> Solution:
    """``SquaredHingeSVM.solve``: the exact chain, one exact route, or "dcd"; the status
    from the certificate (module docstring)."""
    if not isinstance(method, str) or method not in EXACT_METHODS + ITERATIVE:
        raise ParameterError(f"unknown method {method!r} for the L2-loss SVM; valid: "
                             f"{', '.join(map(repr, EXACT_METHODS + ITERATIVE))}")
    exact = method in EXACT_METHODS
    if kkt_tol is None:
        kkt_tol = REPORT_TOL if exact else min(max(tol, 1e-6), 1e-3)
    if not exact:
        sol = _dcd(p, tol, options)
        sol.report = p.kkt(sol, tol=kkt_tol)
        if sol.status == "optimal" and not sol.report.passed:
            sol.status = "inaccurate"
        return sol
    timer = Timer()
    if method == "exact":
        names = exact_chain(p)
    else:
        reason = ROUTES[method].applies(p)
        if reason is not None:
            raise NotApplicableError(reason)
        names = [method] + [m for m in ("exact-dual", "exact-primal") if m != method]

    def certify(sol: Solution) -> Solution:
        sol.report = p.kkt(sol, tol=kkt_tol)
        if sol.status == "inaccurate":      # a route that says its point is not final
            sol.report.passed = False
        if sol.report.passed and sol.report.relative_gap <= EXACT_TOL:
            sol.report.gap_tol = EXACT_TOL
        return sol

    best = walk(p, [ROUTES[m] for m in names], certify=certify,
                violation=lambda r: r.max_violation, tol=kkt_tol,
                context={"solver": solver, "options": options}, named=method != "exact")
    best.time_s = timer()
    return best
