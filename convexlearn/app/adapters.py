"""One small adapter per model kind: how its problem is built, solved and summarized.

An adapter declares the keys its ``[model]`` and ``[expect]`` tables accept (validated by
:mod:`convexlearn.app.catalogue`), the methods it offers, and ``run``, which builds the problem
object from the data, solves it with each method and returns one :class:`MethodRow` per
method plus the *facts* the expectations are checked against (:mod:`convexlearn.app.runner`).
Adapters import their model module lazily, so a kind whose module is absent from this
installation is reported as such and the rest of the catalogue still runs.

Gap to exact: ``(F - F*) / |F*|`` (|F*| floored at the smallest normal double) with F* the objective of the exact reference
(the first exact method asked for, else the model's default exact method), which must
pass its own optimality check or the run is a solver failure.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import model_checks
from .schema import Key, Problem
from ..distributed import is_dask_array
from ..errors import NotApplicableError, ParameterError, SolverError

__all__ = ["MethodRow", "RunResult", "Adapter", "SVMAdapter", "ERMAdapter", "HalfspaceAdapter",
           "ShatteringAdapter", "ADAPTERS", "adapter_for"]

Progress = Callable[[str], None]


@dataclass
class MethodRow:
    """One method's outcome: the columns of the report table, and its history."""

    method: str
    status: str
    objective: float
    gap: float | None = None
    violation: float | None = None      # KKT max violation, or distance to the subdifferential
    n_free: int | None = None
    n_bounded: int | None = None
    n_iter: int | None = None
    time_s: float = 0.0
    reference: bool = False
    history: dict = field(default_factory=dict)
    route: str | None = None            # the route "exact" took, when it is another name
    cert_tol: str | None = None         # the tolerance the status was decided at ("1e-09 gap")


@dataclass
class RunResult:
    """Everything ``convexlearn solve`` prints, writes and plots about one problem."""

    problem: Problem
    rows: list[MethodRow]
    facts: dict
    checks: list                         # of runner.Check, filled by run_problem
    model: Any = None
    solutions: dict = field(default_factory=dict)
    separability: Any = None
    tol: float = 1e-6
    decision: Callable | None = None     # f(Z) of the exact reference, for plots
    margin_lines: bool = False           # f = +-1 are the SVM's margins
    support_sets: tuple = (None, None)   # (free, bounded) sample indices

    @property
    def label_map(self) -> Any:
        """The model's LabelMap (labels <-> {-1, +1}); None when the model has none."""
        return getattr(self.model, "label_map", None)

    @property
    def signed_y(self) -> np.ndarray:
        """The data's labels mapped to {-1.0, +1.0} (classes[0] -> -1); needs a ``label_map``."""
        return self.label_map.to_signed(self.problem.data.y)

    @property
    def class_names(self) -> list:
        """The two original labels as a list, sorted (classes[0] -> -1, classes[1] -> +1)."""
        return self.label_map.classes.tolist()

    @property
    def passed(self) -> bool:
        """True when every expectation check passed (also while ``checks`` is still empty)."""
        return all(check.passed for check in self.checks)

    @property
    def reference(self) -> MethodRow | None:
        """The row of the exact reference method; None when no row is marked as it."""
        return next((row for row in self.rows if row.reference), None)


def rel_gap(value: float, ref: float) -> float:
    return (value - ref) / max(abs(ref), 2.2250738585072014e-308)


def route_of(method: str, solution: Any) -> str | None:
    """The route the exact chain took (e.g. "exact-linear"), None when it is the method."""
    route = solution.provenance.get("route")
    return route if route and route != method else None


def cert_tol_of(report: Any) -> str | None:
    """The tolerance a status was decided at, for the table: the relative duality gap's
    ("1e-09 gap") when an exact route certified by it, else the report's own tolerance."""
    if report is None:
        return None
    gap_tol = getattr(report, "gap_tol", None)
    return f"{gap_tol:g} gap" if gap_tol is not None else f"{report.tol:g}"


def history_of(solution: Any) -> dict:
    h = solution.history
    return {k: h[k] for k in ("objective", "best", "iteration", "time") if k in h} \
        if len(h) else {}


COMMON_EXPECT = {
    "objective": Key("number", None, "optimal objective of the exact reference"),
    "objective_rtol": Key("number", 1e-6, "relative tolerance on 'objective'"),
    "max_gap": Key("table of numbers", {}, "method -> largest relative gap to exact"),
}


class Adapter(ABC):
    """How one model kind is built, solved and checked. Subclasses fill in the blanks."""

    kind = ""
    module = ""                         # the convexlearn module this kind needs
    model_keys: dict[str, Key] = {}
    expect_keys: dict[str, Key] = {}
    default_methods: tuple[str, ...] = ()

    def available(self) -> bool:
        """True when this kind's model module (``self.module``) is installed."""
        return importlib.util.find_spec(self.module) is not None

    def task(self, model: dict) -> str:
        """What the data must hold: "classification", "regression" or "points"."""
        return "classification"

    def methods(self) -> list[str]:
        """The method names this kind accepts (here: ``default_methods``)."""
        return list(self.default_methods)

    @abstractmethod
    def run(self, problem: Problem, methods: list[str], tol: float,
            progress: Progress | None) -> RunResult:
        """Build the problem from ``problem``, solve it with each method and collect the facts.

        Parameters
        ----------
        problem : Problem
        methods : list of str
            Method names, already checked by :meth:`check_methods`.
        tol : float
            Tolerance of the iterative methods and of the optimality check.
        progress : callable or None
            Called with a one-line message before each step.

        Returns
        -------
        RunResult
            One MethodRow per method and the facts; ``checks`` is left empty for the runner.

        Raises
        ------
        SolverError
            The run cannot be trusted: the exact reference is not certified optimal,
            a certificate fails its independent check, or two deciders disagree.
        """

    def distributed_methods(self) -> list[str]:
        """The method names that run on a dask array (``--scheduler``); none by default."""
        return []

    def unsuitable(self, problem: Problem, method: str) -> str | None:
        """Why ``method`` cannot solve this problem's model (None: it can). Decided from
        the model's parameters alone, before any solving; the solvers check again."""
        return None

    def check_methods(self, methods: list[str], problem: Problem | None = None) -> list[str]:
        """Validate names against :meth:`methods` (or :meth:`distributed_methods` when the
        problem's data are dask arrays) and, given ``problem``, against its model; return
        them in order, without duplicates. Every name is checked before any work starts.

        Raises ParameterError naming the valid methods when one is unknown, or the
        NotApplicableError of the first method that does not suit the model.
        """
        distributed = problem is not None and is_dask_array(problem.data.X)
        valid = self.distributed_methods() if distributed else self.methods()
        if distributed and not valid:
            raise ParameterError(f"model kind {self.kind!r} has no distributed method: run it "
                                 f"without --scheduler (the distributed ones: svm, erm)")
        unknown = [m for m in methods if m not in valid]
        if unknown:
            where = " on a dask array (--scheduler)" if distributed else ""
            raise ParameterError(f"unknown {self.kind} method(s) {', '.join(map(repr, unknown))}"
                                 f"{where}; valid: {', '.join(valid)}")
        methods = list(dict.fromkeys(methods))
        for method in methods if problem is not None else ():
            reason = self.unsuitable(problem, method)
            if reason:
                raise NotApplicableError(f"method {method!r} does not suit this problem: "
                                         f"{reason} (nothing was solved)")
        return methods

    def select_methods(self, problem: Problem, methods: list[str] | None) -> list[str]:
        """The methods to run: ``methods`` (from the command line), else the file's
        ``[run] methods``, else ``default_methods``; checked by :meth:`check_methods`.

        On a dask array the file's methods without a distributed version are left out
        (the exact reference always runs); names given on the command line must all run.
        """
        if not methods:
            methods = problem.methods or list(self.default_methods)
            if is_dask_array(problem.data.X):
                methods = [m for m in methods if m in self.distributed_methods()] or \
                    list(self.default_methods)
        return self.check_methods(methods, problem)


def _method_options(problem: Problem, method: str, registry: dict) -> dict:
    """``[run.options.<method>]``, checked against the solver's signature so that a typo
    is a ParameterError naming the valid options, not a TypeError deep in a solver."""
    options = dict(problem.options.get(method, {}))
    if not options:
        return options
    if method not in registry:
        raise ParameterError(f"[run.options.{method}]: method {method!r} takes no options")
    params = inspect.signature(registry[method]).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        valid = [name for name in list(params)[1:] if name not in ("callback", "tol")]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ParameterError(f"[run.options.{method}]: unknown option(s) {unknown}; "
                                 f"valid: {', '.join(valid)}")
    return options


def _takes_callback(method: str, registry: dict) -> bool:
    """Whether the solver of ``method`` (a function in ``registry``) takes a ``callback``
    (the progress line's iteration count); True for a method outside it (the distributed
    "admm", which does)."""
    if method not in registry:
        return True
    params = inspect.signature(registry[method]).parameters
    return "callback" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _iterative_callback(label: str, progress: Progress | None, max_iter=None):
    """A solver callback that shows ``label: iteration t[/max_iter]`` (None: no progress)."""
    if progress is None:
        return None
    total = f"/{max_iter}" if isinstance(max_iter, int) else ""

    def callback(t, *state):         # the state is method-specific; only t is shown
        progress(f"{label}: iteration {t}{total}")
    return callback


class SVMAdapter(Adapter):
    """The C-form SVM (``convexlearn.svm.SVM``): exact formulations and iterative methods."""

    kind, module = "svm", "convexlearn.svm"
    model_keys = {
        "C": Key("number", 1.0, "cost of the slack; inf for the hard margin", check=model_checks.C),
        "kernel": Key("string", "linear", "linear, rbf, poly or sigmoid",
                      check=model_checks.kernel),
        "gamma": Key("number or string", "scale", "kernel width: a number > 0, 'scale' "
                     "(1 / (d Var X)) or 'auto' (1 / d)", check=model_checks.gamma),
        "degree": Key("integer", 3, "degree of the poly kernel", check=model_checks.degree),
        "coef0": Key("number", 0.0, "constant of the poly and sigmoid kernels"),
        "intercept": Key("boolean", True, "fit an unpenalized intercept b"),
    }
    expect_keys = {
        **COMMON_EXPECT,
        "n_support": Key("integer", None), "n_free": Key("integer", None),
        "n_bounded": Key("integer", None),
        "training_errors": Key("integer", None, "samples with sign(f(x_i)) != y_i"),
        "separable": Key("boolean", None, "verdict of the separability LP (linear kernel)"),
    }
    default_methods = ("exact",)

    def methods(self) -> list[str]:
        """Every SVM method: the exact formulations, then the iterative methods."""
        from ..svm import EXACT_METHODS, ITERATIVE_METHODS
        return list(EXACT_METHODS) + list(ITERATIVE_METHODS)

    def distributed_methods(self) -> list[str]:
        """On a dask array: "exact", which is the cascade SVM, and "cascade" by its name."""
        return ["exact", "cascade"]

    def unsuitable(self, problem: Problem, method: str) -> str | None:
        """See :func:`convexlearn.app.model_checks.svm_unsuitable`."""
        return model_checks.svm_unsuitable(problem.model, method)

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Solve with each method; the first exact method asked for (else "exact") is the reference.

        The reference is solved first (also when not asked for). Rows carry the KKT max
        violation and the free/bounded support-vector counts. Facts of the reference:
        objective, n_support, n_free, n_bounded, training_errors, and the separability LP's
        verdict when ``expect.separable`` is set (linear kernel only). Raises SolverError when
        the reference is not certified optimal.
        """
        from ..svm import EXACT_METHODS, ITERATIVE_METHODS, SVM
        m = problem.model
        svm = SVM(problem.data.X, problem.data.y, C=m["C"], kernel=m["kernel"],
                  intercept=m["intercept"], gamma=m["gamma"], degree=m["degree"],
                  coef0=m["coef0"])
        if is_dask_array(problem.data.X):
            return self._run_distributed(problem, svm, methods, tol, progress)
        exact = [x for x in methods if x in EXACT_METHODS]
        ref_method = exact[0] if exact else "exact"
        order = [ref_method] + [x for x in methods if x != ref_method]
        solutions, rows = {}, []
        for k, method in enumerate(order, start=1):
            label = f"{problem.name}: {method} (method {k}/{len(order)})"
            if progress:
                progress(label)
            if method in EXACT_METHODS:
                sol = svm.solve(method, solver=problem.solver, cert_tol=tol,
                                **problem.solver_options)
            else:
                opts = _method_options(problem, method, ITERATIVE_METHODS)
                sol = svm.solve(method, tol=tol, cert_tol=tol,
                                callback=_iterative_callback(label, progress, opts.get("max_iter")),
                                **opts)
            solutions[method] = sol
            rep = sol.report
            rows.append(MethodRow(method, sol.status, sol.objective,
                                  violation=rep.max_violation, n_free=rep.free.size,
                                  n_bounded=rep.bounded.size, n_iter=sol.n_iter,
                                  time_s=sol.time_s, reference=method == ref_method,
                                  history=history_of(sol), route=route_of(method, sol),
                                  cert_tol=cert_tol_of(rep)))
        ref = solutions[ref_method]
        if ref.status != "optimal":
            raise SolverError(f"the exact reference ({ref_method}) is not certified: status "
                              f"{ref.status!r}, KKT max violation {ref.report.max_violation:.2e} "
                              f"> tol {tol:g}\n{ref.report.summary()}")
        for row in rows:
            row.gap = rel_gap(row.objective, ref.objective)
        f = svm.decision_function(ref)
        facts = {"objective": ref.objective, "n_support": int(ref.report.support.size),
                 "n_free": int(ref.report.free.size), "n_bounded": int(ref.report.bounded.size),
                 "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != svm.y))}
        result = RunResult(problem, rows, facts, [], model=svm, solutions=solutions, tol=tol,
                           decision=lambda Z: svm.decision_function(ref, Z), margin_lines=True,
                           support_sets=(ref.report.free, ref.report.bounded))
        return _with_separability(result, svm, progress)


    def _run_distributed(self, problem: Problem, svm: Any, methods: list[str], tol: float,
                         progress: Progress | None) -> RunResult:
        """The cascade SVM on the cluster (``exact`` and ``cascade`` are one method: it runs
        once, under the first name asked for), certified chunk-wise at its own 1e-9."""
        method = methods[0]
        if progress:
            progress(f"{problem.name}: {method} (cascade SVM on the cluster)")
        ref = svm.solve("cascade")
        rep = ref.report
        if ref.status != "optimal":
            raise SolverError(f"the cascade SVM is not certified: status {ref.status!r}, KKT "
                              f"max violation {rep.max_violation:.2e} > tol {rep.tol:g}\n"
                              f"{rep.summary()}")
        row = MethodRow(method, ref.status, ref.objective, gap=0.0,
                        violation=rep.max_violation, n_free=rep.free.size,
                        n_bounded=rep.bounded.size, n_iter=ref.n_iter, time_s=ref.time_s,
                        reference=True, history=history_of(ref), route=route_of(method, ref),
                        cert_tol=cert_tol_of(rep))
        f = np.asarray(svm.decision_function(ref).compute())
        y = np.asarray(svm.label_map.to_signed(problem.data.y.compute()))
        facts = {"objective": ref.objective, "n_support": int(rep.support.size),
                 "n_free": int(rep.free.size), "n_bounded": int(rep.bounded.size),
                 "training_errors": int(np.sum(np.where(f >= 0, 1.0, -1.0) != y))}
        result = RunResult(problem, [row], facts, [], model=svm, solutions={method: ref},
                           tol=tol, support_sets=(rep.free, rep.bounded))
        return _with_separability(result, svm, progress)


def _with_separability(result: RunResult, svm: Any, progress: Progress | None) -> RunResult:
    """The separability LP's verdict as the fact "separable", when ``[expect]`` asks for it
    (linear kernel only). The LP runs in memory: on a dask array (--scheduler) the file's
    data, which were in memory before they were sent to the cluster, are fetched back."""
    problem = result.problem
    if problem.expect.get("separable") is None:
        return result
    if not svm.kernel.is_linear:
        raise ParameterError(f"{problem.path}: 'expect.separable' is decided for the "
                             f"linear kernel only (use a feature map in [data])")
    if progress:
        progress(f"{problem.name}: separability LP")
    X, y = problem.data.X, problem.data.y
    if is_dask_array(X):
        X, y = np.asarray(X.compute()), np.asarray(y.compute())
    result.separability = _halfspace(X, y, problem.model["intercept"])
    result.facts["separable"] = result.separability.separable
    return result


def _halfspace(X, y, intercept: bool):
    from ..halfspace import Halfspace
    return Halfspace(X, y, intercept=intercept).check()


class HalfspaceAdapter(Adapter):
    """Linear separability with a verified certificate either way (``Halfspace.check``)."""

    kind, module = "halfspace", "convexlearn.halfspace"
    model_keys = {"intercept": Key("boolean", True, "false: hyperplanes through the origin")}
    expect_keys = {
        "separable": Key("boolean", None), "margin": Key("number", None),
        "margin_rtol": Key("number", 1e-6), "min_total_slack": Key("number", None),
        "min_total_slack_rtol": Key("number", 1e-6),
    }
    default_methods = ("lp",)

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Decide linear separability with the LP (``Halfspace.check``): one row, "lp".

        Facts: separable, verified, margin, min_total_slack. Raises SolverError when the
        certificate fails its independent check.
        """
        if progress:
            progress(f"{problem.name}: separability LP")
        res = _halfspace(problem.data.X, problem.data.y, problem.model["intercept"])
        status = ("separable" if res.separable else "not separable") + \
                 ("" if res.verified else " (UNVERIFIED)")
        row = MethodRow("lp", status, math.nan, time_s=res.time_s, reference=True)
        facts = {"separable": res.separable, "verified": res.verified,
                 "margin": res.margin, "min_total_slack": res.min_total_slack}
        if not res.verified:
            raise SolverError(f"{problem.path}: the separability certificate failed its "
                              f"independent check\n{res.summary()}")
        decision = (lambda Z: Z @ res.w + res.b) if res.separable else None
        return RunResult(problem, [row], facts, [], model=res, separability=res, tol=tol,
                         decision=decision)


class ERMAdapter(Adapter):
    """Regularized ERM in lambda-form (``convexlearn.erm.ERM``): exact, closed form,
    first- and second-order methods; checked by the distance of 0 to dF."""

    kind, module = "erm", "convexlearn.erm"
    model_keys = {
        "loss": Key("string", doc="hinge, logistic, squared, ...", check=model_checks.loss),
        "penalty": Key("string", "l2", "none, l1, l2, lp, elastic_net",
                       check=model_checks.penalty),
        "lam": Key("number", 0.1, "regularization weight (>= 0)", check=model_checks.lam),
        "intercept": Key("boolean", True, "fit an unpenalized intercept b"),
        "p": Key("number", None, "exponent of the lp penalty (>= 1)", check=model_checks.p),
        "l1_ratio": Key("number", None, "mixing of the elastic net, in [0, 1]",
                        check=model_checks.l1_ratio),
        "quantile": Key("number", None, "quantile loss: tau", check=model_checks.quantile),
        "epsilon": Key("number", None, "tube half-width", check=model_checks.epsilon),
        "delta": Key("number", None, "Huber threshold", check=model_checks.delta),
    }
    expect_keys = {
        **COMMON_EXPECT,
        "nonzeros": Key("integer", None, "|w_j| > 1e-6 max(1, ||w||_inf)"),
        "training_errors": Key("integer", None, "classification: sign(f(x_i)) != y_i"),
    }
    default_methods = ("exact",)

    def task(self, model: dict) -> str:
        """The task of the loss ``model["loss"]``: "classification" or "regression"."""
        from ..losses import make_loss
        return make_loss(model["loss"]).task

    def methods(self) -> list[str]:
        """Every ERM method: "exact", "closed-form", then the iterative methods."""
        from ..erm import METHODS
        return list(METHODS)

    def distributed_methods(self) -> list[str]:
        """On a dask array: "exact" and the distributed methods of
        :data:`convexlearn.distributed.erm.DASK_ERM_METHODS`."""
        from ..distributed.erm import DASK_ERM_METHODS
        return ["exact", *DASK_ERM_METHODS]

    def unsuitable(self, problem: Problem, method: str) -> str | None:
        """See :func:`convexlearn.app.model_checks.erm_unsuitable`."""
        return model_checks.erm_unsuitable(problem.model, method)

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Solve with each method; "exact" is the reference (solved first, also when not asked for).

        Rows carry the distance of 0 to dF. Facts of the reference: objective, nonzeros
        (|w_j| > 1e-6 max(1, ||w||_inf)) and, for a classification loss, training_errors.
        Raises SolverError when the reference is not certified optimal.
        """
        from ..erm import ERM, ITERATIVE_METHODS
        from ..routes.erm import EXACT_TOL
        m = problem.model
        extra = {k: m[k] for k in ("p", "l1_ratio", "quantile", "epsilon", "delta")
                 if m.get(k) is not None}
        erm = ERM(problem.data.X, problem.data.y, loss=m["loss"], penalty=m["penalty"],
                  lam=m["lam"], intercept=m["intercept"], **extra)
        order = ["exact"] + [x for x in methods if x != "exact"]
        solutions, rows = {}, []
        for k, method in enumerate(order, start=1):
            label = f"{problem.name}: {method} (method {k}/{len(order)})"
            if progress:
                progress(label)
            if method == "exact":         # certified at its own 1e-9 (tighter if asked)
                sol = erm.solve("exact", cert_tol=min(tol, EXACT_TOL), solver=problem.solver,
                                **problem.solver_options)
            else:
                opts = _method_options(problem, method, ITERATIVE_METHODS)
                if method != "closed-form":
                    callback = _iterative_callback(label, progress, opts.get("max_iter"))
                    opts = {"tol": tol, **opts}
                    if _takes_callback(method, ITERATIVE_METHODS):    # cd does not
                        opts.setdefault("callback", callback)
                sol = erm.solve(method, cert_tol=tol, **opts)
            solutions[method] = sol
            rows.append(MethodRow(method, sol.status, sol.objective,
                                  violation=sol.report.distance, n_iter=sol.n_iter,
                                  time_s=sol.time_s, reference=method == "exact",
                                  history=history_of(sol), route=route_of(method, sol),
                                  cert_tol=cert_tol_of(sol.report)))
        ref = solutions["exact"]
        if ref.status != "optimal":
            raise SolverError(f"the exact reference is not certified: status {ref.status!r}; "
                              f"{ref.report.summary()}")
        for row in rows:
            row.gap = rel_gap(row.objective, ref.objective)
        w = np.asarray(ref.w, float)
        facts = {"objective": ref.objective,
                 "nonzeros": int(np.sum(np.abs(w) > 1e-6 * max(1.0, np.abs(w).max())))}
        result = RunResult(problem, rows, facts, [], model=erm, solutions=solutions, tol=tol)
        if erm.label_map is not None:
            f = erm.decision_function(ref)
            facts["training_errors"] = int(np.sum(np.where(f >= 0, 1.0, -1.0) != erm.y))
            result.decision = lambda Z: erm.decision_function(ref, Z)
        return result


class ShatteringAdapter(Adapter):
    """Do halfspaces shatter a point set? Decided by the LP over all labelings and by the
    rank test; the two deciders must agree."""

    kind, module = "shattering", "convexlearn.shattering"
    model_keys = {"intercept": Key("boolean", True, "false: halfspaces through the origin")}
    expect_keys = {"shattered": Key("boolean", None)}
    default_methods = ("lp", "algebra")

    def task(self, model: dict) -> str:
        """Always "points": the data are an unlabeled point set."""
        return "points"

    def run(self, problem: Any, methods: Any, tol: float, progress: Callable[..., Any]) -> Any:
        """Decide whether halfspaces shatter the points, once per method ("lp", "algebra").

        A row's status names an unrealizable labeling when one is found; the first method is
        the reference. Fact: shattered. Raises SolverError when the methods disagree.
        """
        from ..shattering import unrealizable_labeling
        rows, verdicts = [], {}
        for method in methods:
            start = time.perf_counter()
            witness = unrealizable_labeling(problem.data.X, not problem.model["intercept"],
                                            method=method)
            verdicts[method] = witness
            status = "shattered" if witness is None else \
                f"not shattered (y = {np.asarray(witness, int).tolist()})"
            rows.append(MethodRow(method, status, math.nan, time_s=time.perf_counter() - start,
                                  reference=method == methods[0]))
        answers = {m: w is None for m, w in verdicts.items()}
        if len(set(answers.values())) > 1:
            raise SolverError(f"the shattering deciders disagree: {answers}")
        facts = {"shattered": answers[methods[0]]}
        return RunResult(problem, rows, facts, [], tol=tol)


ADAPTERS: dict[str, Adapter] = {a.kind: a for a in (SVMAdapter(), ERMAdapter(),
                                                    HalfspaceAdapter(), ShatteringAdapter())}


def adapter_for(kind: str, where: str = "") -> Adapter:
    """The adapter of a model kind; ParameterError when unknown or not installed."""
    prefix = f"{where}: " if where else ""
    if kind not in ADAPTERS:
        raise ParameterError(f"{prefix}unknown model kind {kind!r}; valid: "
                             f"{', '.join(sorted(ADAPTERS))}")
    adapter = ADAPTERS[kind]
    if not adapter.available():
        raise ParameterError(f"{prefix}model kind {kind!r} needs {adapter.module}, which this "
                             f"installation of convexlearn does not have")
    return adapter
