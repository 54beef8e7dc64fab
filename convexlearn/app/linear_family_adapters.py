"""Adapters of the L2-loss SVM and the Crammer-Singer multiclass SVM (kinds ``svm_l2`` and
``crammer_singer``).

Kept apart from :mod:`convexlearn.app.adapters` (its size); importing this module adds
its kinds to ``adapters.ADAPTERS`` (done by :mod:`convexlearn.app.catalogue`, which every
problem file goes through, and by the command line). Both kinds solve every method asked
for, the first exact one (else "exact") first: it is the reference and must be certified
(relative duality gap <= 1e-9 and KKT residuals within the run's tolerance).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import model_checks
from .adapters import ADAPTERS, COMMON_EXPECT, Adapter, RunResult, SVMAdapter
from .qp_adapters import solve_methods
from .schema import Key, Problem

__all__ = ["SquaredHingeAdapter", "CrammerSingerAdapter"]


class SquaredHingeAdapter(Adapter):
    """The L2-loss SVM (``convexlearn.svm_l2.SquaredHingeSVM``: ``cl.SVM(X, y, C,
    loss="squared_hinge")``); ``intercept = "penalized"`` is LinearSVC's problem."""

    kind, module = "svm_l2", "convexlearn.svm_l2"
    model_keys = {
        "C": Key("number", 1.0, "cost of the squared slack (finite)", check=model_checks.finite_C),
        **{k: SVMAdapter.model_keys[k] for k in ("kernel", "gamma", "degree", "coef0")},
        "intercept": Key("boolean or string", True, "true: unpenalized b; false: b = 0; "
                         "\"penalized\": + b^2 / 2 (LIBLINEAR, LinearSVC)",
                         check=model_checks.intercept_mode),
    }
    expect_keys = {**COMMON_EXPECT, "n_support": Key("integer", None, "samples with xi_i > 0"),
                   "intercept": Key("number", None, "b"),
                   "intercept_rtol": Key("number", 1e-6, "relative tolerance on 'intercept'"),
                   "training_errors": Key("integer", None, "samples with sign(f(x_i)) != y_i")}
    default_methods = ("exact",)

    def methods(self) -> list[str]:
        """The exact routes of :mod:`convexlearn.routes.svm_l2`, then "dcd"."""
        from ..routes.svm_l2 import EXACT_METHODS, ITERATIVE
        return list(EXACT_METHODS) + list(ITERATIVE)

    def unsuitable(self, problem: Problem, method: str) -> str | None:
        """See :func:`convexlearn.app.model_checks.svm_unsuitable` (dcd and exact-linear
        keep w: the linear kernel)."""
        return model_checks.svm_unsuitable(problem.model, method)

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Solve with each method (exact ones certified at a relative gap of 1e-9, "dcd" at
        ``tol``). Facts of the reference: objective, n_support, intercept, training_errors."""
        from ..routes.svm_l2 import EXACT_METHODS
        from ..svm_l2 import SquaredHingeSVM
        m = problem.model
        svm = SquaredHingeSVM(problem.data.X, problem.data.y, C=m["C"], kernel=m["kernel"],
                              intercept=m["intercept"], gamma=m["gamma"], degree=m["degree"],
                              coef0=m["coef0"])

        def solve(method):
            if method in EXACT_METHODS:
                return svm.solve(method, solver=problem.solver, cert_tol=tol,
                                 **problem.solver_options)
            return svm.solve(method, tol=tol, cert_tol=tol, **problem.options.get(method, {}))

        solutions, rows, ref = solve_methods(
            problem, methods, EXACT_METHODS, solve, progress,
            lambda sol: (sol.report.free.size, sol.report.bounded.size))
        f = svm.decision_function(ref)
        facts = {"objective": ref.objective, "n_support": int(ref.report.support.size),
                 "intercept": float(ref.b),
                 "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != svm.y))}
        return RunResult(problem, rows, facts, [], model=svm, solutions=solutions, tol=tol,
                         decision=lambda Z: svm.decision_function(ref, Z), margin_lines=True,
                         support_sets=(ref.report.free, ref.report.bounded))


class CrammerSingerAdapter(Adapter):
    """The Crammer-Singer multiclass SVM (``convexlearn.crammer_singer``; no intercept, as
    ``LinearSVC(multi_class="crammer_singer", fit_intercept=False)``); every class of the
    label column is kept."""

    kind, module = "crammer_singer", "convexlearn.crammer_singer"
    model_keys = {"C": Key("number", 1.0, "cost of a sample's multiclass hinge (finite)",
                           check=model_checks.finite_C)}
    expect_keys = {**COMMON_EXPECT,
                   "n_support": Key("integer", None, "samples with a row of A != 0"),
                   "n_bounded": Key("integer", None, "samples with A_{i, y_i} = C"),
                   "n_free": Key("integer", None, "support samples with A_{i, y_i} < C"),
                   "training_errors": Key("integer", None, "argmax_m f_m(x_i) != y_i")}
    default_methods = ("exact",)

    def task(self, model: dict) -> str:
        """"multiclass": labels with two classes or more."""
        return "multiclass"

    def methods(self) -> list[str]:
        """:data:`convexlearn.crammer_singer.METHODS` (all exact: no iterative method)."""
        from ..crammer_singer import METHODS
        return list(METHODS)

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Solve with each method, certified at a relative gap of 1e-9 and KKT residuals
        <= ``tol``. Facts of the reference: objective, n_support, n_bounded, n_free,
        training_errors."""
        from ..crammer_singer import METHODS, CrammerSingerSVM
        cs = CrammerSingerSVM(problem.data.X, problem.data.y, C=problem.model["C"])

        def counts(sol):
            # the dual's own multiplier of each sample: A_{i, y_i} in [0, C_i]
            if sol.alpha is None:
                return None, None
            own = np.asarray(sol.alpha)[np.arange(cs.n_samples), cs.codes]
            bounded = int(np.count_nonzero(own >= cs.C_bounds))
            return int(np.count_nonzero(own > 0)) - bounded, bounded

        solutions, rows, ref = solve_methods(
            problem, methods, METHODS,
            lambda method: cs.solve(method, solver=problem.solver, cert_tol=tol,
                                    **problem.solver_options), progress, counts)
        facts = {"objective": ref.objective}
        n_free, n_bounded = counts(ref)
        if n_free is not None:          # a primal-only reference (exact-primal) has no A
            facts.update(n_support=n_free + n_bounded, n_bounded=n_bounded, n_free=n_free)
        facts["training_errors"] = int(np.sum(cs.predict(ref) != np.asarray(problem.data.y)))
        return RunResult(problem, rows, facts, [], model=cs, solutions=solutions, tol=tol)


ADAPTERS.update({a.kind: a for a in (SquaredHingeAdapter(), CrammerSingerAdapter())})
