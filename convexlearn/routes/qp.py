"""Routes of the problems built on the dual QP (:class:`convexlearn.qp_problem.QPProblem`).

``method="exact"`` walks ``["exact-smo", "exact-dual"]`` with the walker of
:mod:`convexlearn.routes.chain`: SMO + active-set polish + certificate
(:func:`~convexlearn.solvers.kernel_svm.certified_qp.certified_qp`: O(n) memory beyond a
bounded column cache), then the problem's cvxpy dual (its multipliers polished on their
active set). Every answer is certified by the problem's ``certificate`` at ``cert_tol``
(default 1e-9: relative duality gap and scaled KKT residuals), the one status rule.
``method="smo"`` is SMO alone at ``tol`` (no polish), certified at ``cert_tol``
(default: ``tol`` clipped to [1e-6, 1e-3]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError
from ..solution import Solution, Timer
from ..solvers.kernel_svm.certified_qp import certified_qp
from ..solvers.kernel_svm.smo import smo_qp
from .chain import Route, walk

__all__ = ["QP_ROUTES", "QP_METHODS", "solve_qp_problem", "EXACT_TOL"]

#: The default tolerance of the certificate of the exact routes.
EXACT_TOL = 1e-9


def _smo_route(problem, *, solver, polish, cert_tol, options):
    return certified_qp(problem, cert_tol=cert_tol, polish=polish,
                        cache_size=options.get("cache_size", 200.0))


def _smo_memory(problem) -> int:
    """The column cache (at most 200 MB or l^2 doubles) and ~12 vectors of l doubles."""
    l = problem.dual_qp().n
    return int(min(200 * 2**20, 8 * l * l) + 12 * 8 * l)


def _dual_route(problem, *, solver, polish, cert_tol, options):
    """The cvxpy dual; its multipliers clipped to the box and polished on their active set."""
    from ..formulations.base import solve_formulation
    timer = Timer()
    form = problem.dual_formulation()
    info = solve_formulation(form, solver, **{k: v for k, v in options.items()
                                                if k != "cache_size"})
    qp = problem.dual_qp()
    alpha = np.clip(problem.qp_alpha(form), 0.0, qp.upper)
    g = qp.expansion_products(alpha)
    b, polished = None, False
    if polish:
        refined = qp.polish(alpha, g)
        if refined is not None:
            alpha, b, g = refined
            polished = True
    sol = problem.solution_from_qp(alpha, g, b)
    sol.method, sol.time_s = "exact-dual", timer()
    sol.provenance = {**info.provenance(), "formulation": form.name, "polished": polished}
    return sol


def _dual_memory(problem) -> int:
    """cvxpy holds the n x n Gram matrix ~3 times over (data, canonical copy, factor)."""
    return 3 * 8 * problem.n_samples ** 2


QP_ROUTES: dict[str, Route] = {"exact-smo": Route("exact-smo", _smo_route, memory=_smo_memory),
                               "exact-dual": Route("exact-dual", _dual_route,
                                                   memory=_dual_memory)}
QP_METHODS = ("exact",) + tuple(QP_ROUTES) + ("smo",)


def _smo_only(problem, tol: float, options: dict) -> Solution:
    """SMO at ``tol``, no polish (LIBSVM's answer): the iterative method."""
    timer = Timer()
    qp = problem.dual_qp()
    res, cache, loop = smo_qp(qp, tol=tol, alpha0=problem.feasible_start(),
                              max_iter=options.get("max_iter"),
                              cache_size=options.get("cache_size", 200.0))
    sol = problem.solution_from_qp(res.alpha, qp.target - res.v, None)
    sol.method, sol.status, sol.n_iter, sol.time_s = "smo", res.status, res.n_iter, timer()
    sol.history = res.history
    sol.provenance = {"solver": "convexlearn.smo", "tol": tol, "loop": loop, "route": "smo"}
    sol.extra["cache"] = cache
    return sol


def solve_qp_problem(problem: Any, method: str, *, solver: str | None, tol: float,
                     cert_tol: float | None, polish: bool, options: dict) -> Solution:
    """``QPProblem.solve``: the exact chain, one named route (the other as its fallback
    for errors), or SMO alone; the status from the problem's certificate."""
    if method not in QP_METHODS:
        raise ParameterError(f"unknown method {method!r} for {problem.describe()}; valid: "
                             f"{', '.join(map(repr, QP_METHODS))}")
    if method == "smo":
        cert_tol = min(max(tol, 1e-6), 1e-3) if cert_tol is None else cert_tol
        sol = _smo_only(problem, tol, options)
        sol.report = problem.certificate(sol, tol=cert_tol)
        if sol.status == "converged":
            sol.status = "optimal" if sol.report.passed else "inaccurate"
    else:
        cert_tol = EXACT_TOL if cert_tol is None else cert_tol
        names = list(QP_ROUTES) if method == "exact" else (
            [method] + [m for m in QP_ROUTES if m != method])

        def certify(sol: Solution) -> Solution:
            # (exact-smo certified its own answer at cert_tol, from the data: not twice)
            if sol.report is None or sol.report.tol != cert_tol:
                sol.report = problem.certificate(sol, tol=cert_tol)
            return sol

        sol = walk(problem, [QP_ROUTES[m] for m in names], certify=certify,
                   violation=lambda report: report.max_violation, tol=cert_tol,
                   context={"solver": solver, "polish": polish, "cert_tol": cert_tol,
                            "options": options}, named=method != "exact")
    sol.objective = sol.report.primal_objective
    return sol
