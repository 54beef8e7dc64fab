"""Routes of the SVM: which algorithm answers ``SVM.solve(method)``, in which order.

``method="exact"`` walks a chain of routes, fastest first for the problem's shape
(:func:`exact_chain`), and keeps the first answer whose KKT report passes at the exact
tolerance: every residual and the duality gap recomputed from the data
(:mod:`convexlearn.certify.kkt`). A route that fails, or whose answer is not certified,
hands over to the next; the solution records the route it came from
(``provenance["route"]``), what was tried before it (``provenance["fallback_from"]``) and
what was skipped and why (``provenance["skipped"]``: e.g. a route whose memory estimate
exceeds what is available). The cvxpy formulations keep their names ("exact-dual",
"exact-primal", "exact-primal-hinge") and are routes like any other.

The iterative methods ("subgradient", "pegasos", "smo", "dcd") are looked up in
:data:`ITERATIVE_METHODS` and called with the problem and their own options; their status
"optimal" also rests on the KKT report, at their own tolerance.

Adding a route: write ``run(svm, *, solver, polish, kkt_tol, options) -> Solution`` (or
raise a :class:`~convexlearn.errors.ConvexLearnError`), register a
:class:`~convexlearn.routes.chain.Route` (name, run, applies, memory estimate) in
:data:`ROUTES`, and place it in :func:`exact_chain`; the walker of
:mod:`convexlearn.routes.chain` does the rest.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import data
from ..certify.kkt import solution_multipliers
from ..data import (check_bool, check_C, check_method_options, check_positive, is_sparse)
from ..errors import (ConvexLearnError, DataError, InfeasibleError, NotApplicableError,
                      ParameterError, SolverError, UnboundedError)
from ..formulations.base import solve_formulation
from ..formulations.svm import svm_dual, svm_primal
from .chain import Route, walk
from .halfspace import SeparabilityResult, decide_separability
from ..path import Path
from ..solution import Solution, Timer
from ..threads import kernel_solve_threads
from ..solvers.kernel_svm.certified_smo import certified_smo, memory_estimate
from ..solvers.linear_svm.linear_exact import solve_linear_exact
from ..solvers.kernel_svm.polish import polish_alpha
from ..solvers.kernel_svm import smo
from ..solvers.kernel_svm.svm_path import svm_c_path
from .svm_c_path_certify import certify_breakpoints, path_point
from ..solvers.linear_svm import dcd, pegasos, svm_subgradient

__all__ = ["EXACT_METHODS", "ITERATIVE_METHODS", "ROUTES", "Route", "exact_chain", "solve",
           "feature_space_separability", "exact_c_path", "exact_path"]

#: Iterative methods: name -> function; each takes the SVM and keyword options and returns
#: a Solution.
ITERATIVE_METHODS: dict[str, Callable[..., Solution]] = {
    "subgradient": svm_subgradient.solve_svm, "pegasos": pegasos.solve_svm,
    "smo": smo.solve_svm, "dcd": dcd.solve_svm}

#: The tolerance the fast exact routes certify at (relative duality gap, recomputed).
EXACT_TOL = 1e-9
#: The default tolerance of the KKT report that decides an exact answer's status (margin
#: units and relative gap). Not EXACT_TOL: on data far from the origin (x ~ 1e9) no float
#: pair (w, b) has margins accurate to 1e-9 (b's float spacing is ~1e-7 in margin units),
#: so 1e-9 would call representable optima "inaccurate"; pass kkt_tol=1e-9 to ask for it.
REPORT_TOL = 1e-6

#: Methods that work on a sparse X (linear kernel) through products, never densifying it
#: (and "exact" / "exact-linear" for the linear kernel: :data:`SPARSE_EXACT`).
SPARSE_METHODS = ("dcd", "pegasos", "subgradient")

INFEASIBLE_HINT = ("the hard-margin SVM is infeasible: no hyperplane separates the two classes "
                   "with margin. cl.Halfspace(X, y).check() decides linear separability and "
                   "returns a certificate; use a finite C for the soft margin")


def _cvxpy_memory(svm) -> int:
    """The cvxpy routes hold Q (n x n, or X (n x d) for the linear kernel) ~3 times over:
    the data, cvxpy's canonical copy and the solver's factorization."""
    n = svm.n_samples
    if svm.kernel.is_linear and svm.X is not None:
        return 3 * 8 * n * (svm.X.shape[1] + 1)
    return 3 * 8 * n * n


#: Options of the exact chain that only SMO reads (LIBSVM's ``-m`` and ``-h``): the column
#: cache in MB and shrinking. Speed only (the certificate decides the answer); the other
#: routes do not see them.
SMO_OPTIONS = ("cache_size", "shrinking")


def _without_smo_options(options: dict) -> dict:
    return {k: v for k, v in options.items() if k not in SMO_OPTIONS}


#: Where a sparse X goes without densifying, named in the errors of the routes that
#: need it dense.
SPARSE_EXACT = ("for the linear kernel, method='exact' (route 'exact-linear': DCD and the "
                "duality-gap certificate by sparse products, O(nnz + n + d) memory) takes "
                "CSR/CSC as is")


def _dense_purpose(method: str) -> str:
    return f"SVM method {method!r} ({SPARSE_EXACT})"


def _dense_fits(method: str) -> Callable[[Any], str | None]:
    """``applies`` of a route that needs X dense: a sparse X qualifies only when its dense
    copy is within data.DENSIFY_LIMIT_BYTES (the route densifies it)."""
    def applies(svm) -> str | None:
        if not is_sparse(svm.X):
            return None
        n, d = svm.X.shape
        if 8 * n * d <= data.DENSIFY_LIMIT_BYTES:
            return None
        return (f"route {method!r} needs X dense, and the dense copy of this sparse "
                f"{n} x {d} X would take {8 * n * d:,} bytes, above the densification "
                f"limit ({SPARSE_EXACT})")
    return applies


def _cvxpy_route(method: str) -> Route:
    def run(svm, *, solver, polish, kkt_tol, options):
        svm.densify(_dense_purpose(method))
        options = _without_smo_options(options)
        solution = _solve_formulation(svm, method, solver, **options)
        if polish:
            solution = polished(svm, solution, kkt_tol)
        return solution
    return Route(method, run, applies=_dense_fits(method), memory=_cvxpy_memory)


def _smo_polish(svm, *, solver, polish, kkt_tol, options):
    """SMO + active-set polish + certificate (:mod:`convexlearn.solvers.kernel_svm.certified_smo`);
    ``options`` may set its ``cache_size`` (MB) and ``shrinking`` (:data:`SMO_OPTIONS`)."""
    svm.densify(_dense_purpose("exact-smo"))
    cache = check_positive("cache_size", options.get("cache_size", 200.0))
    shrinking = check_bool("shrinking", options.get("shrinking", True))
    with kernel_solve_threads(svm.n_samples):        # threads.py: measured
        solution = certified_smo(svm, kkt_tol=kkt_tol, cache_size=cache, polish=polish,
                                 shrinking=shrinking)
    if svm.hard_margin and solution.status != "optimal":
        # An uncertified hard-margin point may not even be feasible (on data that are
        # not separable in feature space alpha only grows): never the answer. Whether
        # the data are separable is for the cvxpy routes and the separability LP.
        raise SolverError(f"route 'exact-smo' found no certified hard-margin point (KKT "
                          f"violation {solution.report.max_violation:.3g}, relative gap "
                          f"{solution.report.relative_gap:.3g}, alpha up to "
                          f"{float(np.max(solution.alpha)):.3g})")
    return solution


def _smo_memory(svm) -> int:
    return memory_estimate(svm)
def _linear_route_memory(svm) -> int:
    """The linear route holds a centred, scaled copy of X and the signed rows (2 n d), one
    n x (d + 1) temporary at a time (the interior point's R^T D R, the active set's row
    norms), plus the KKT systems of size <= 2 (d + 1). On a sparse X: DCD's copy of the
    CSR indices (int64) and a few vectors of n and of d (the certificate's extended
    precision works by blocks of rows)."""
    n, d = svm.X.shape if svm.X is not None else (svm.n_samples, svm.n_samples)
    if is_sparse(svm.X):
        return 16 * svm.X.nnz + 8 * (16 * n + 8 * d)
    return 8 * (5 * n * (d + 1) + 8 * (d + 1) ** 2)


def _linear_applies(svm) -> str | None:
    if not svm.kernel.is_linear or svm.X is None:
        return (f"route 'exact-linear' needs the linear kernel on features; this problem "
                f"is {svm.describe()}")
    return None


def _linear_route(svm, *, solver, polish, kkt_tol, options) -> Solution:
    """DCD warm start, w-space polish (active set; interior point then active set for heavy
    overlap; consistency LP then active set for the hard margin), duality-gap certificate
    at 1e-9 relative (:func:`convexlearn.solvers.linear_svm.linear_exact.solve_linear_exact`). A
    point whose own certificate fails is reported as not passed, so the chain moves on."""
    reason = _linear_applies(svm)
    if reason is not None:
        raise NotApplicableError(reason)
    options = _without_smo_options(options)
    if options or solver is not None:
        raise SolverError(f"route 'exact-linear' takes no cvxpy solver or options "
                          f"(solver={solver!r}, options={sorted(options)}): left to the "
                          f"cvxpy routes")
    solution = solve_linear_exact(svm)
    cert = solution.extra["certificate"]
    if svm.hard_margin and not cert["passed"]:
        # no certified feasible point: whether the data are separable is for the cvxpy
        # routes and the separability LP to decide (never claimed here)
        raise SolverError(f"route 'exact-linear' found no certified hard-margin point "
                          f"(relative gap {cert['relative_gap']:.3g})")
    report = svm.kkt(solution, tol=kkt_tol)
    if not cert["passed"]:
        report.passed = False
        report.notes.append(f"duality-gap certificate failed: relative gap "
                            f"{cert['relative_gap']:.3g} > {solution.provenance['gap_tol']:g}")
    solution.report = report
    return solution


#: Every exact route by name; ``SVM.solve(method=name)`` runs one directly.
ROUTES: dict[str, Route] = {m: _cvxpy_route(m)
                            for m in ("exact-primal", "exact-primal-hinge", "exact-dual")}
ROUTES["exact-smo"] = Route("exact-smo", _smo_polish, memory=_smo_memory)
ROUTES["exact-linear"] = Route("exact-linear", _linear_route, applies=_linear_applies,
                               memory=_linear_route_memory)

EXACT_METHODS = ("exact",) + tuple(ROUTES)


def exact_chain(svm: Any) -> list[str]:
    """The routes ``method="exact"`` tries, in order, for this problem.

    The cvxpy dual first: measured (benchmarks/bench_exact_svm.py, n=5000, d=50), the
    linear dual in factor form 1/2 ||X^T (y * alpha)||^2 solves 2x faster than the primal,
    with many or with few support vectors; nonlinear kernels have no cheaper primal (the
    expansion form carries the same n x n matrix, singular for low-rank kernels). The
    primal is the second opinion (on iris scaled by 1e-4 the dual's point failed its KKT
    check at 1.9e-4, the primal's passed).

    Nonlinear kernels try "exact-smo" first (SMO, then the active-set polish, certified
    from the data: :mod:`convexlearn.solvers.kernel_svm.certified_smo`): O(n) memory beyond a
    bounded column cache, and at n = 2000..20000 (rbf, d = 10) 1-3x LIBSVM's fit time
    where the interior-point dual needs the n x n matrix three times over
    (benchmarks/bench_kernel_svm.py).

    The linear kernel on features goes first to "exact-linear" (DCD, then the w-space
    active-set polish: benchmarks/bench_svm_linear.py, n=5000, d=50, both regimes, under
    SVC(kernel="linear")'s time, certified at a relative gap of 1e-9).
    """
    if svm.kernel.is_linear and svm.X is not None and not svm.gram_formed:
        return ["exact-linear", "exact-dual", "exact-primal"]
    if not svm.kernel.is_linear:     # (with or without intercept, weights: compiled SMO)
        return ["exact-smo", "exact-dual", "exact-primal"]
    return ["exact-dual", "exact-primal"]


def solve(svm: Any, method: str = "exact", *, solver: str | None = None, tol: float = 1e-6,
          kkt_tol: float | None = None, polish: bool = True, **options) -> Solution:
    """``SVM.solve``: dispatch to the exact chain, an exact route or an iterative method,
    then decide the status from the KKT report (see :meth:`convexlearn.svm.SVM.solve`)."""
    if not isinstance(method, str):
        raise ParameterError(f"method must be a string; got {method!r}")
    polish = check_bool("polish", polish)
    tol = check_positive("tol", tol)
    if kkt_tol is None:     # capped: smo at tol=10 was "optimal" at alpha = 0
        kkt_tol = REPORT_TOL if method in EXACT_METHODS else min(max(tol, 1e-6), 1e-3)
    kkt_tol = check_positive("kkt_tol", kkt_tol)
    linear_sparse = method in ("exact", "exact-linear") and svm.kernel.is_linear
    if method not in SPARSE_METHODS and not linear_sparse:
        svm.densify(_dense_purpose(method))
    if method in EXACT_METHODS:
        solution = _solve_exact(svm, method, solver, polish, kkt_tol, options)
    elif method in ITERATIVE_METHODS:
        solution = _solve_iterative(svm, method, tol, options)
    else:
        valid = list(EXACT_METHODS) + list(ITERATIVE_METHODS)
        raise ParameterError(f"unknown SVM method {method!r}; valid: "
                             f"{', '.join(map(repr, valid))}")
    report = solution.report
    if report is None or report.tol != kkt_tol:     # a route may have checked its point
        report = svm.kkt(solution, tol=kkt_tol)
    solution.report = report
    if solution.status in ("optimal", "converged"):
        solution.status = "optimal" if report.passed else "inaccurate"
    return solution


def _solve_iterative(svm, method: str, tol: float, options: dict) -> Solution:
    if options.get("loss", "hinge") != "hinge":
        raise NotApplicableError(
            f"SVM.solve solves the hinge-loss SVM; loss={options['loss']!r} is another "
            f"problem, whose KKT conditions this report does not check. Use "
            f"cl.ERM(X, y, loss={options['loss']!r}, penalty='l2') or call "
            f"{ITERATIVE_METHODS[method].__module__} directly")
    if svm.sample_weight is not None:
        raise NotApplicableError(
            f"method {method!r} does not take sample weights; the exact methods do "
            f"(per-sample cost C s_i)")
    func = ITERATIVE_METHODS[method]
    options = check_method_options(method, func, options, ("svm", "tol"))
    solution = func(svm, tol=tol, **options)
    solution.provenance.setdefault("route", method)
    return solution


def _solve_exact(svm, method: str, solver: str | None, polish: bool, kkt_tol: float,
                 options: dict) -> Solution:
    """Walk the chain (``method="exact"``) or one named route with the other cvxpy
    formulation as its fallback (:func:`convexlearn.routes.chain.walk`); keep the first
    certified answer, else the one with the smallest KKT violation. A claim of
    infeasibility is raised only when every route that ran makes it and, for the hard
    margin, the separability LP proves it."""
    timer = Timer()
    if method == "exact":
        chain = exact_chain(svm)
    else:
        reason = ROUTES[method].applies(svm)
        if reason is not None:
            raise NotApplicableError(reason)
        chain = [method, "exact-primal" if method == "exact-dual" else "exact-dual"]
        if method == "exact-smo":
            chain.append("exact-primal")

    def certify(solution: Solution) -> Solution:
        if solution.report is None or solution.report.tol != kkt_tol:
            solution.report = svm.kkt(solution, tol=kkt_tol)
        return solution

    def no_answer(failures, skipped) -> Exception:
        if not failures and skipped:
            return ConvexLearnError(_memory_message(svm, skipped))
        return _exact_failure(svm, failures)

    best = walk(svm, [ROUTES[name] for name in chain], certify=certify,
                violation=lambda report: report.max_violation, tol=kkt_tol,
                context={"solver": solver, "polish": polish, "kkt_tol": kkt_tol,
                         "options": options},
                named=method != "exact", no_answer=no_answer)
    gap_tol = best.provenance.get("gap_tol")     # the routes certified by the duality gap
    if gap_tol is not None and best.report.passed and abs(best.report.relative_gap) <= gap_tol:
        best.report.gap_tol = gap_tol
    best.time_s = timer()
    if svm.psd_check is not None:
        best.extra["psd_check"] = svm.psd_check
    return best


def feature_space_separability(svm: Any) -> SeparabilityResult:
    """Are the data linearly separable in the kernel's feature space?

    The separability LP (:func:`convexlearn.routes.halfspace.decide_separability`,
    homogeneous when the problem has no intercept) on X for the linear kernel, on the
    Gram matrix otherwise: f(x_i) = sum_j beta_j K_ji + b is linear in beta, so the
    hard-margin SVM is feasible iff the rows of K are separable.

    Returns
    -------
    SeparabilityResult
        Without margin and slack (only the verdict and its verified certificate).

    Raises
    ------
    DataError
        Without intercept, when a sample is the zero vector of the feature space: no
        hyperplane through the origin classifies it.
    """
    features = svm.X if svm.kernel.is_linear and not svm.gram_formed else svm.gram
    if not svm.intercept:
        zero = np.flatnonzero(~np.any(features != 0, axis=1))
        if zero.size:
            raise DataError(f"without intercept, sample(s) {zero[:8].tolist()} are the "
                            f"zero vector of the feature space: no hyperplane through the "
                            f"origin classifies them")
    return decide_separability(features, svm.y, not svm.intercept, slack=False,
                               label_map=svm.label_map)


def exact_c_path(svm: Any, C_min: float, C_max: float, kkt_tol: float = 1e-9) -> Any:
    """The exact SVM path in C between ``C_min`` and ``C_max``, every breakpoint certified.

    Follows :func:`convexlearn.solvers.kernel_svm.svm_path.svm_c_path` from a certified anchor at
    ``C_min`` (the exact chain), re-anchoring on the exact chain at degenerate
    breakpoints, then certifies every breakpoint at ``kkt_tol`` (residuals in margin units,
    duality gap relative to the primal objective) by :func:`.svm_c_path_certify.
    certify_breakpoints`: from the path's margins with their rounding bounded, the full
    KKT report from the data at regular breakpoints, the last, and any whose bounds do
    not pass.

    Returns
    -------
    path : SVMPath
        Breakpoints and exact interpolation (:meth:`SVMPath.at`).
    solutions : list of Solution
        One per breakpoint, with its report (a full KKT report, or the bounded summary
        whose ``full()`` recomputes it); status "optimal" iff it passed.
    """
    if svm.hard_margin:
        raise NotApplicableError("the C-path needs the soft margin: pass a finite C")
    if svm.sample_weight is not None:
        raise NotApplicableError("the exact C-path does not take sample weights")
    C_min, C_max = float(C_min), float(C_max)
    if not 0 < C_min <= C_max < math.inf:
        raise ParameterError(f"the C-path needs 0 < C_min <= C_max < inf; got "
                             f"C_min={C_min!r}, C_max={C_max!r}")

    def anchor(C: float):
        sol = solve(svm.with_C(C), "exact", kkt_tol=kkt_tol)
        if sol.status != "optimal":
            raise SolverError(f"no certified anchor for the C-path at C={C:.6g} "
                              f"(status {sol.status!r})")
        return sol.alpha, sol.b

    timer = Timer()
    if svm.kernel.name == "rbf" and not svm.gram_formed and not is_sparse(svm.X):
        # the path needs K whole: rbf's by BLAS's product and one compiled pass (gram_rbf:
        # the exp of SMO's columns, within a few ulps of numpy's; loaded here only), not
        # kernels.Kernel's numpy passes over two n x n arrays (n = 2000: 0.021 s against
        # 0.038 s CPU, and 32 MB of fresh pages fewer)
        from ..solvers.kernel_svm.gram_rbf import rbf_block
        svm.share_gram(rbf_block(svm.X, svm.X, svm.kernel.gamma))
    path = svm_c_path(svm.gram, svm.y, C_min, C_max, anchor, kkt_tol=kkt_tol)
    svm.fingerprint()         # the data's digest, once: every with_C copy shares it
    solutions = certify_breakpoints(svm, path, kkt_tol)
    for sol in solutions:
        sol.time_s = timer() / len(solutions)
    return path, solutions


def exact_path(svm: Any, Cs: Any, kkt_tol: float = 1e-9) -> Path:
    """``SVM.path(Cs, exact=True)``: :func:`exact_c_path` between min(Cs) and max(Cs) as a
    :class:`~convexlearn.path.Path` whose ``at(C)`` interpolates exactly (a C on a segment
    that ends in a re-anchor is solved by the exact chain instead)."""
    Cs = [check_C(C) for C in np.atleast_1d(Cs).tolist()]
    if not Cs:
        raise ParameterError("Cs is empty: a path needs at least one value")
    timer = Timer()
    breakpoints, solutions = exact_c_path(svm, min(Cs), max(Cs), kkt_tol=kkt_tol)

    def interpolate(C: float) -> Solution:
        problem = svm.with_C(C)
        try:
            alpha, b = breakpoints.at(C)
        except ValueError:          # outside the path, or a re-anchored segment
            if not breakpoints.Cs[0] <= C <= breakpoints.Cs[-1]:
                raise
            return solve(problem, "exact", kkt_tol=kkt_tol)
        sol = problem.from_alpha(alpha, b=b)
        sol.report = problem.kkt(sol, tol=kkt_tol)
        return path_point(sol, problem.deferred_fingerprint(), C, "interpolated")

    return Path("C", breakpoints.Cs, solutions, time_s=timer(),
                provenance={"route": "svm-c-path", "events": breakpoints.events,
                            "reanchored": breakpoints.reanchored}, interpolate=interpolate)


def _memory_message(svm, skipped: dict[str, str]) -> str:
    detail = "; ".join(f"{m}: {why}" for m, why in skipped.items())
    return (f"no exact route for the {svm.describe()} fits in memory ({detail}); "
            f"an iterative method (method='smo' or 'dcd') needs O(n) memory")


def _solver_data(svm) -> tuple[dict, float, np.ndarray | None]:
    """The data the exact solvers see: (X or K scaled, kappa, shift).

    kappa = mean_i k(x_i, x_i): the solvers see K / kappa and C kappa. The SVM is
    equivariant under this scaling (alpha -> kappa alpha, w -> sqrt(kappa) w in the
    scaled features, objective -> kappa objective: the C-scaling law), so the
    interior-point method works on unit-scale data whatever the units of X. With an
    intercept the linear SVM is also translation invariant (b absorbs <w, mu>), so the
    linear data are centred first (``shift`` = the mean): far-from-origin clouds stay
    well conditioned.
    """
    def safe(kappa: float) -> float:
        return kappa if math.isfinite(kappa) and kappa > 0 else 1.0
    if svm.kernel.is_linear and not svm.gram_formed:
        shift = svm.X.mean(axis=0) if svm.intercept else None
        Xs = svm.X - shift if shift is not None else svm.X
        kappa = safe(float(np.mean(np.einsum("ij,ij->i", Xs, Xs))))
        return {"X": Xs / math.sqrt(kappa)}, kappa, shift
    kappa = safe(float(np.mean(np.diag(svm.gram))))
    return {"K": svm.gram / kappa}, kappa, None


def _solve_formulation(svm, method: str, solver: str | None, **options) -> Solution:
    data, kappa, shift = _solver_data(svm, )
    C = svm.C * kappa
    if method == "exact-dual":
        form = svm_dual(svm.y, C, svm.intercept, weights=svm.sample_weight, **data)
    else:
        form_name = svm.check_primal_form("hinge" if method.endswith("hinge") else "slack")
        form = svm_primal(svm.y, C, svm.intercept, form_name, weights=svm.sample_weight,
                          **data)
    info = solve_formulation(form, solver, **options)
    if method == "exact-dual":
        # alpha is translation invariant on y^T alpha = 0; b is recomputed on X itsvm.
        solution = svm.from_alpha(np.asarray(form.variables["alpha"].value) / kappa)
    else:
        solution = _from_primal(form, kappa)
        if shift is not None:
            solution.b -= float(solution.w @ shift)
    solution.method = method
    solution.status = info.status
    solution.n_iter = info.iterations
    solution.objective = float(form.problem.value) / kappa
    solution.provenance = {**info.provenance(), "formulation": form.name,
                           "normalization": kappa, "polished": False}
    return solution


def _exact_failure(svm, failures) -> Exception:
    """The error to raise when every exact formulation failed."""
    detail = "; ".join(f"{m}: {e}" for m, e in failures)
    # the fast routes never claim infeasibility: the formulations' claims decide
    claimed = [e for m, e in failures if m not in ("exact-linear", "exact-smo")]
    claims = bool(claimed) and all(isinstance(e, (InfeasibleError, UnboundedError))
                                   for e in claimed)
    if not (svm.hard_margin and claims):
        return SolverError(f"every exact formulation of the {svm.describe()} failed "
                           f"({detail})")
    # Both formulations say "no separating hyperplane with margin": ask the LP.
    try:
        verdict = svm.feature_space_separability()
    except DataError as exc:       # homogeneous with a zero vector: never separable
        return InfeasibleError(f"{INFEASIBLE_HINT} ({exc})")
    if verdict.separable:
        return SolverError(
            f"the solvers reported the hard-margin SVM infeasible, but the data are "
            f"separable (verified: {verdict.verified}): a numerical failure ({detail})")
    if not verdict.verified:     # three floating-point claims, no proof: undecided
        return SolverError(
            f"the solvers reported the hard-margin SVM infeasible and the separability "
            f"LP says 'not separable', but its certificate did not verify: not proven "
            f"either way (margins this small are below floating-point resolution); use a "
            f"finite C, or cl.Halfspace(X, y).check(exact=True) ({detail})")
    return InfeasibleError(f"{INFEASIBLE_HINT} (both formulations agree, and the "
                           f"separability LP returns a verified certificate)")


def polished(svm: Any, solution: Solution, kkt_tol: float) -> Solution:
    """Return the active-set polished solution if its KKT report is no worse.

    Starting multipliers: the solver's (or the report's reconstruction); for a
    solution without multipliers (hinge form) also reconstructions with wider margin
    bands, since the interior point leaves margins ~1e-5 off. A polished point whose
    KKT report passes is certified by the data alone and gets status "optimal" even if
    the solver said optimal_inaccurate (kept in provenance["cvxpy_status"]).
    """
    before = svm.kkt(solution, tol=kkt_tol)
    starts = [before.alpha]
    if solution.alpha is None:
        starts += [solution_multipliers(svm, solution, band)[0]
                   for band in (1e-3, 1e-2, 1e-1)]
    best, best_report = None, before
    for alpha0 in starts:
        refined = polish_alpha(svm.y, svm.C_bounds, alpha0, svm.intercept,
                               svm.kernel_block)
        if refined is None:
            continue
        candidate = svm.from_alpha(refined[0], b=refined[1])
        report = svm.kkt(candidate, tol=kkt_tol)
        if report.max_violation <= best_report.max_violation:
            best, best_report = candidate, report
    if best is None:
        return solution
    best.method, best.n_iter, best.report = solution.method, solution.n_iter, best_report
    best.status = "optimal" if best_report.passed else solution.status
    best.objective = svm.primal_objective(best)
    best.provenance = {**solution.provenance, "polished": True,
                       "unpolished_max_violation": before.max_violation,
                       "unpolished_objective": solution.objective}
    return best


def _from_primal(form, kappa: float = 1.0) -> Solution:
    """Read (w or beta, b, xi, alpha) off a primal solved on data scaled by 1/kappa."""
    v = form.variables
    b = float(v["b"].value) if "b" in v else 0.0
    margin = form.constraints.get("margin")
    alpha = (None if margin is None
             else np.maximum(np.asarray(margin.dual_value, float), 0.0) / kappa)
    xi = np.asarray(v["xi"].value, float) if "xi" in v else None
    if "w" in v:
        w = np.asarray(v["w"].value, float) / math.sqrt(kappa)
        return Solution(w=w, b=b, alpha=alpha, xi=xi)
    beta = np.asarray(v["beta"].value, float) / kappa
    return Solution(w=None, b=b, alpha=alpha, xi=xi, dual_coef=beta)
