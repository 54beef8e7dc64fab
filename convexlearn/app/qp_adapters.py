"""Adapters of the problems built on the dual QP (kinds ``svr``, ``one_class``, ``nu_svc``
and ``nu_svr``).

Kept apart from :mod:`convexlearn.app.adapters` (its size); importing this module adds
its kinds to ``adapters.ADAPTERS`` (done by :mod:`convexlearn.app.catalogue`, which every
problem file goes through, and by the command line).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import SolverError
from . import model_checks
from .adapters import (ADAPTERS, COMMON_EXPECT, Adapter, MethodRow, RunResult, SVMAdapter,
                       cert_tol_of, history_of, rel_gap, route_of)
from .schema import Key, Problem

__all__ = ["solve_methods", "QPAdapter", "SVRAdapter", "OneClassAdapter", "NuSVCAdapter",
           "NuSVRAdapter"]


def solve_methods(problem: Problem, methods: list[str], exact_methods: Any,
                  solve: Callable[[str], Any], progress: Callable[..., Any] | None,
                  counts: Callable[[Any], tuple]) -> tuple[dict, list[MethodRow], Any]:
    """Solve with each method, the reference (the first of ``exact_methods`` asked for,
    else "exact") first; ``solve(method)`` returns a certified Solution and ``counts(sol)``
    its (free, bounded) support counts for the table. Returns (solutions by method, the
    rows with their gap to the reference, the reference). Raises SolverError when the
    reference is not certified optimal."""
    exact = [x for x in methods if x in exact_methods]
    ref_method = exact[0] if exact else "exact"
    order = [ref_method] + [x for x in methods if x != ref_method]
    solutions, rows = {}, []
    for k, method in enumerate(order, start=1):
        if progress:
            progress(f"{problem.name}: {method} (method {k}/{len(order)})")
        sol = solve(method)
        solutions[method] = sol
        n_free, n_bounded = counts(sol)
        rows.append(MethodRow(method, sol.status, sol.objective,
                              violation=sol.report.max_violation, n_free=n_free,
                              n_bounded=n_bounded, n_iter=sol.n_iter, time_s=sol.time_s,
                              reference=method == ref_method, history=history_of(sol),
                              route=route_of(method, sol), cert_tol=cert_tol_of(sol.report)))
    ref = solutions[ref_method]
    if ref.status != "optimal":
        raise SolverError(f"the exact reference ({ref_method}) is not certified: status "
                          f"{ref.status!r}\n{ref.report.summary()}")
    for row in rows:
        row.gap = rel_gap(row.objective, ref.objective)
    return solutions, rows, ref


class QPAdapter(Adapter):
    """A problem of the SVM family built on the dual QP (:class:`convexlearn.qp_problem.
    QPProblem`): the certified exact chain, its routes by name, and SMO alone."""

    default_methods = ("exact",)
    kernel_keys = {k: SVMAdapter.model_keys[k] for k in ("kernel", "gamma", "degree", "coef0")}
    expect_keys = {**COMMON_EXPECT, "n_support": Key("integer", None),
                   "n_free": Key("integer", None), "n_bounded": Key("integer", None),
                   "intercept": Key("number", None, "b (one-class: -rho)"),
                   "intercept_rtol": Key("number", 1e-6, "relative tolerance on 'intercept'")}

    def methods(self) -> list[str]:
        from ..routes.qp import QP_METHODS
        return list(QP_METHODS)

    def build(self, problem: Problem) -> Any:
        """The convexlearn problem of the file."""
        raise NotImplementedError

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Solve with each method (the first exact one, else "exact", is the reference and
        must be certified); facts: objective, support counts (of the expansion: free and
        at the bound C, or 1, in its terms) and the intercept."""
        model = self.build(problem)

        def solve(method):
            if method == "smo":
                return model.solve(method, tol=tol, cert_tol=max(tol, 1e-6))
            return model.solve(method, solver=problem.solver, **problem.solver_options)

        solutions, rows, ref = solve_methods(
            problem, methods, [m for m in self.methods() if m != "smo"], solve, progress,
            lambda sol: (sol.report.free.size, sol.report.at_upper.size))
        facts = {"objective": ref.objective, **self.support_facts(model, ref),
                 "intercept": float(ref.b)}
        facts["n_free"] = facts["n_support"] - facts["n_bounded"]
        facts.update(self.more_facts(model, ref))
        return RunResult(problem, rows, facts, [], model=model, solutions=solutions, tol=tol)

    def support_facts(self, model: Any, ref: Any) -> dict:
        """n_support (beta_i != 0) and n_bounded (|beta_i| at the QP's bound)."""
        beta = model.expansion(ref)
        bound = np.max(model.dual_qp().upper)
        return {"n_support": int(np.count_nonzero(beta)),
                "n_bounded": int(np.count_nonzero(np.abs(beta) == bound))}

    def more_facts(self, model: Any, ref: Any) -> dict:
        """The kind's own facts of the exact reference (none here)."""
        return {}


class SVRAdapter(QPAdapter):
    """Epsilon-SVR (``convexlearn.svr.SVR``)."""

    kind, module = "svr", "convexlearn.svr"
    model_keys = {"C": Key("number", 1.0, "cost of a deviation beyond the tube",
                           check=model_checks.C),
                  "epsilon": Key("number", 0.1, "half-width of the tube (>= 0)"),
                  **QPAdapter.kernel_keys}

    def task(self, model: dict) -> str:
        return "regression"

    def build(self, problem: Problem) -> Any:
        from ..svr import SVR
        m = problem.model
        return SVR(problem.data.X, problem.data.y, C=m["C"], epsilon=m["epsilon"],
                   kernel=m["kernel"], gamma=m["gamma"], degree=m["degree"], coef0=m["coef0"])


class OneClassAdapter(QPAdapter):
    """The one-class SVM (``convexlearn.one_class.OneClassSVM``, LIBSVM's scaling)."""

    kind, module = "one_class", "convexlearn.one_class"
    model_keys = {"nu": Key("number", 0.5, "in (0, 1]"), **QPAdapter.kernel_keys}

    def task(self, model: dict) -> str:
        return "points"

    def build(self, problem: Problem) -> Any:
        from ..one_class import OneClassSVM
        m = problem.model
        return OneClassSVM(problem.data.X, nu=m["nu"], kernel=m["kernel"], gamma=m["gamma"],
                           degree=m["degree"], coef0=m["coef0"])


class NuSVCAdapter(QPAdapter):
    """nu-SVC (``convexlearn.nu_svm.NuSVM``), answers in scikit-learn's 1/r scale
    (docs/conventions.md): ``intercept`` is NuSVC's ``intercept_``, ``r`` LIBSVM's r."""

    kind, module = "nu_svc", "convexlearn.nu_svm"
    model_keys = {"nu": Key("number", 0.5, "in (0, 1], at most 2 min(n+, n-) / n",
                            check=model_checks.nu), **QPAdapter.kernel_keys}
    expect_keys = {**QPAdapter.expect_keys,
                   "r": Key("number", None, "LIBSVM's r (1 / r: the C of the C-SVC with "
                            "the same answer)"),
                   "r_rtol": Key("number", 1e-6, "relative tolerance on 'r'"),
                   "training_errors": Key("integer", None, "samples with sign(f(x_i)) != y_i")}

    def build(self, problem: Problem) -> Any:
        from ..nu_svm import NuSVM
        m = problem.model
        return NuSVM(problem.data.X, problem.data.y, nu=m["nu"], kernel=m["kernel"],
                     gamma=m["gamma"], degree=m["degree"], coef0=m["coef0"])

    def support_facts(self, model: Any, ref: Any) -> dict:
        """Counted on the QP's a (0 <= a_i <= 1): dual_coef = y a / r is in the 1/r scale."""
        a = model.multipliers(ref)
        return {"n_support": int(np.count_nonzero(a)),
                "n_bounded": int(np.count_nonzero(a >= model.dual_qp().upper))}

    def more_facts(self, model: Any, ref: Any) -> dict:
        f = model.decision_function(ref)
        return {"r": model.r_of(ref),
                "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != model.y))}


class NuSVRAdapter(QPAdapter):
    """nu-SVR (``convexlearn.nu_svm.NuSVR``, scikit-learn's C): the tube's half-width
    ``epsilon`` is a fact of the answer."""

    kind, module = "nu_svr", "convexlearn.nu_svm"
    model_keys = {"C": Key("number", 1.0, "cost of a deviation beyond the tube (finite)",
                           check=model_checks.finite_C),
                  "nu": Key("number", 0.5, "in (0, 1]", check=model_checks.nu),
                  **QPAdapter.kernel_keys}
    expect_keys = {**QPAdapter.expect_keys,
                   "epsilon": Key("number", None, "the tube's half-width found"),
                   "epsilon_rtol": Key("number", 1e-6, "relative tolerance on 'epsilon'")}

    def task(self, model: dict) -> str:
        return "regression"

    def build(self, problem: Problem) -> Any:
        from ..nu_svm import NuSVR
        m = problem.model
        return NuSVR(problem.data.X, problem.data.y, C=m["C"], nu=m["nu"], kernel=m["kernel"],
                     gamma=m["gamma"], degree=m["degree"], coef0=m["coef0"])

    def more_facts(self, model: Any, ref: Any) -> dict:
        return {"epsilon": model.epsilon(ref)}


ADAPTERS.update({a.kind: a for a in (SVRAdapter(), OneClassAdapter(), NuSVCAdapter(),
                                     NuSVRAdapter())})
