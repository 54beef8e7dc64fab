"""Routes of regularized ERM: which algorithm answers ``ERM.solve("exact")``, in which order.

Every route ends in the relative certificate of :func:`convexlearn.certify.optimality.
certificate` at ``EXACT_TOL`` = 1e-9 (stationarity distance over the size of the terms that
cancel, Fenchel duality gap over max(|P|, |D|)); the chain keeps the first certified
answer and records ``provenance["route"]``, the routes tried before it
(``provenance["fallback_from"]``) and the certificate's figures. The chain
(:func:`exact_chain`):

==========================================  =============================================
problem                                     routes, fastest first
==========================================  =============================================
smooth loss (logistic, squared, exponential,  "newton": damped Newton (generalized Hessian
squared hinge, ...) with l2 or none           for the squared hinge), warm-startable
squared / logistic loss with l1 or elastic    "cd": coordinate descent with active sets,
net; squared + l2 on sparse X (before         screening and a sign-fixed polish (exact 0.0);
"newton": O(nnz) sweeps)
                                              the lasso (unweighted): "homotopy", its exact
                                              path down to lam, after cd (before it when
                                              d > n: CD settles slowly near interpolation)
perceptron, every penalty                     "zero": (0, 0), a minimizer (F >= 0 = F(0, 0))
hinge / perceptron with l1 or none            "lp": the LP straight to HiGHS (highspy)
hinge with l2                                 "svm": the SVM with C = 1/(n lam), converted
                                              back (F_ERM = F_SVM / (n C))
absolute / quantile / epsilon-insensitive     "dual-lp": the Fenchel dual as an LP (d + 1
(capability "pieces") with l1 or none         rows) to HiGHS, (w, b) its row duals
the same losses with l2                       "dual-qp": the dual on the SVM QP core (SMO,
                                              polish); before the cvxpy problem up to
                                              DUAL_QP_MAX_SAMPLES with an intercept, after it
                                              otherwise
Huber (C^1, generalized Hessian) with l2      "newton" (semismooth, as the squared hinge)
everything (lp penalties: only this)          "exact-primal": the cvxpy problem (Clarabel)
==========================================  =============================================

The last route's answer is returned even when it does not certify (status "inaccurate",
its figures in the report): the fallback of last resort.
"""

from __future__ import annotations

from typing import Any, Callable

import math

import numpy as np

from ..data import check_method_options, is_sparse
from ..errors import ConvexLearnError, NotApplicableError, ParameterError, SolverError
from ..fingerprints import Provenance
from ..formulations.base import solve_formulation
from ..solution import Solution, Timer
from ..solvers.erm import cd as cd_module
from ..solvers.erm.cd import cd, coordinate_descent
from ..solvers.erm.erm_subgradient import subgradient
from ..solvers.erm.gd import gradient_descent
from ..solvers.erm.lp import margin_lp, piecewise_dual_lp
from ..solvers.erm.newton import newton
from ..solvers.erm.prox import fista, ista
from ..threads import small_problem_threads
from .chain import Route, walk
from .erm_existence import existence_needs_proof, newton_proves_existence
from .erm_newton import newton_route
from .erm_resume import CD_RESUME_TOLS, resume_until_certified

__all__ = ["EXACT_TOL", "HOMOTOPY_FIRST_FRACTION", "HOMOTOPY_MAX_DIM", "ITERATIVE_METHODS", "ITERATIVE_TOL", "METHODS",
           "ROUTES", "closed_form_applies", "exact_chain", "solve", "solve_closed_form", "solve_exact",
           "solve_iterative"]

#: Iterative methods: name -> function. Each takes an ERMOracle and the starting point,
#: and returns a Solution.
ITERATIVE_METHODS: dict[str, Callable[..., Solution]] = {
    "gd": gradient_descent, "newton": newton, "irls": newton, "prox": ista, "ista": ista,
    "fista": fista, "subgradient": subgradient, "cd": cd,
}
METHODS = ("exact", "exact-primal", "closed-form", *ITERATIVE_METHODS)
#: The status tolerance of the iterative methods' certificate (relative, as the exact one).
ITERATIVE_TOL = 1e-6

#: The exact tolerance of every route's certificate (relative, see the module docstring).
EXACT_TOL = 1e-9

#: Clarabel tolerances of the refining cvxpy attempts (tighter, then Clarabel's defaults).
EXACT_CLARABEL_OPTIONS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                          "tol_ktratio": 1e-10, "max_iter": 400}
CLARABEL_DEFAULTS = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8,
                     "tol_ktratio": 1e-6, "max_iter": 200}

#: The lasso goes by homotopy up to this many features (a breakpoint factors the active
#: Gram matrix, up to d x d): the exact route's fallback and the path's grid
#: (:mod:`convexlearn.routes.erm_path`); above, warm-started coordinate descent.
HOMOTOPY_MAX_DIM = 1000
#: d > n: the homotopy before CD below this lam / lam_max (200 x 300: CD 3/19/401 ms, homotopy 11/68/129 ms at 0.5/0.01/0.001)
HOMOTOPY_FIRST_FRACTION = 3e-3



def _penalized(erm) -> bool:
    return not erm.penalty.has("zero") and erm.lam > 0


def _l1_only(erm) -> bool:
    """The penalty is lam1 ||w||_1 alone (an LP writes it)."""
    return erm.penalty.has("piecewise_linear", "split")


def _newton_applies(erm) -> str | None:
    smooth_pen = erm.penalty.has("hessian") or not _penalized(erm)
    if erm.loss.has_hessian and erm.loss.differentiable and smooth_pen:
        return None
    return "Newton needs a twice-differentiable loss and a smooth penalty (l2 or none)"


def _sparse_ridge(erm) -> bool:
    """Least squares + l2 on sparse X: coordinate descent's implicitly centred sweeps (O(nnz)
    each, nothing d x d) answer it too."""
    return (is_sparse(erm.X) and erm.loss.has("least_squares") and erm.penalty.has("split")
            and _penalized(erm))


def _cd_applies(erm) -> str | None:
    if (erm.penalty.has("sparse") or _sparse_ridge(erm)) \
            and cd_module.applies(erm.loss, erm.penalty):
        return None
    return ("coordinate descent's route needs a sparse penalty (l1, elastic net) and a loss "
            "with what coordinate descent needs")


def _zero_applies(erm) -> str | None:
    if erm.loss.has("minimal_at_zero"):
        return None
    return "(0, 0) is a minimizer only for a loss minimal at f = 0 (the perceptron)"


def _lp_applies(erm) -> str | None:
    if erm.loss.has("hinge_form") and (_l1_only(erm) or not _penalized(erm)):
        return None
    return ("the LP needs a loss max(0, kappa - m) (hinge, perceptron) with the l1 penalty "
            "or none")


def _dual_lp_applies(erm) -> str | None:
    if (erm.loss.has("pieces") and not erm.loss.margin_based
            and (_l1_only(erm) or not _penalized(erm))):
        return None
    return ("the dual LP needs a piecewise-linear regression loss (capability 'pieces': "
            "absolute, quantile, epsilon-insensitive) with the l1 penalty or none")


def _dual_qp_applies(erm) -> str | None:
    if (erm.loss.has("pieces") and not erm.loss.margin_based
            and erm.penalty.has("quadratic", "split") and _penalized(erm)):
        return None
    return ("the dual QP needs a piecewise-linear regression loss (capability 'pieces') "
            "with the l2 penalty and lam > 0")


def _svm_applies(erm) -> str | None:
    if (erm.loss.has("hinge_form") and erm.loss.kink == 1.0
            and erm.penalty.has("quadratic", "split") and _penalized(erm)):
        return None
    return "the SVM route needs the hinge loss with the l2 penalty and lam > 0"


def exact_chain(erm: Any) -> list[str]:
    """The routes of ``erm``'s exact solve, fastest first (see the module docstring): the
    routes of :data:`ORDER` that apply, the cvxpy problem last. A smooth problem goes to
    Newton alone; the lasso tries its homotopy first when d > n (dense: measured faster,
    CD settles slowly near interpolation)."""
    if _newton_applies(erm) is None:
        if _sparse_ridge(erm) and _cd_applies(erm) is None:
            return ["cd", "newton", "exact-primal"]     # O(nnz) sweeps: measured faster
        return ["newton", "exact-primal"]
    chain = [name for name in ORDER if ROUTES[name].applies(erm) is None]
    if "homotopy" in chain and erm.X.shape[1] > erm.X.shape[0] and not is_sparse(erm.X) \
            and erm.lam < HOMOTOPY_FIRST_FRACTION * _lasso_lam_max(erm):
        chain.remove("homotopy")
        chain.insert(0, "homotopy")
    if "dual-qp" in chain and (not erm.intercept or erm.n_samples > DUAL_QP_MAX_SAMPLES):
        chain.remove("dual-qp")
        chain.append("dual-qp")
    return chain


def _lasso_lam_max(erm) -> float:
    """The unweighted lasso's lam_max = ||(2/n) X^T yc||_inf (one pass over X, kept)."""
    cache, y = erm.work_cache("chain"), np.asarray(erm.y, dtype=float)
    if "lam_max" not in cache:
        cache["lam_max"] = 2.0 * float(np.max(np.abs(erm.X.T @ (
            y - y.mean() if erm.intercept else y)), initial=0.0)) / len(y)
    return cache["lam_max"]


def _certify(erm, sol: Solution, tol: float) -> Solution:
    """Attach the relative certificate; status "optimal" iff it passes at ``tol``."""
    given = sol.extra.pop("certificate_inputs", None)
    scores = XTg = None
    if given is not None and given[0] == np.asarray(sol.w, dtype=float).tobytes() \
            and given[1] == sol.b:
        scores, XTg = given[2], given[3]
    sol.report = erm.certificate(sol, tol=tol, scores=scores, XTg=XTg)
    sol.objective = sol.report.objective       # F recomputed from the data by the certificate
    sol.status = "optimal" if sol.report.passed else "inaccurate"
    return sol


# --------------------------------------------------------------------- routes
def _cd_route(erm, warm_start=None, screen=None, cd_tol=1e-12, **_):
    timer = Timer()
    w0 = None if warm_start is None else np.asarray(warm_start.w, dtype=float)
    b0 = 0.0 if warm_start is None else float(warm_start.b)
    w, b, info = coordinate_descent(erm.X, erm.y, erm.loss, erm.penalty, erm.lam,
                                    erm.intercept, w0=w0, b0=b0, screen=screen, tol=cd_tol,
                                    cache=erm.work_cache("cd"), sample_weight=erm.sample_weight)
    sol = Solution(w=w, b=b, objective=math.nan, status="converged", method="cd",
                   n_iter=info["sweeps"], time_s=timer(),
                   provenance={"solver": "convexlearn.cd", "polished": info["polished"],
                               "screened": info["screened"], "gram": info["gram"]})
    sol.extra["loss_grad"] = info["grad"]
    if info.get("cert") is not None:     # scores and X^T g at (w, b), from CD's last pass
        sol.extra["certificate_inputs"] = (w.tobytes(), b, *info["cert"])
    return sol


def _homotopy_applies(erm) -> str | None:
    if (erm.loss.has("least_squares") and erm.penalty.has("piecewise_linear", "split")
            and erm.lam > 0 and erm.sample_weight is None
            and erm.X.shape[1] <= HOMOTOPY_MAX_DIM):
        return None
    return (f"the homotopy needs the unweighted lasso (squared loss, l1, lam > 0) with at "
            f"most {HOMOTOPY_MAX_DIM} features")


def _homotopy_route(erm, **_):
    """The lasso by its exact homotopy path (:mod:`convexlearn.solvers.erm.homotopy`) followed
    from lam_max down to lam; a SolverError when the path ends above lam (the active set
    outgrew the rank of X, or the breakpoint budget 4 d + 20 ran out)."""
    from ..solvers.erm.homotopy import lasso_homotopy
    reason = _homotopy_applies(erm)
    if reason is not None:
        raise NotApplicableError(f"route 'homotopy': {reason}; got {erm.describe()}")
    timer = Timer()
    X, d = erm._dense("the exact homotopy route"), erm.X.shape[1]
    hp = lasso_homotopy(X, erm.y, erm.intercept, lam_min=erm.lam, max_breakpoints=4 * d + 20)
    if hp.lams[-1] > erm.lam * (1 + 1e-12):
        raise SolverError(f"the lasso homotopy ended at lam={hp.lams[-1]:.6g} > {erm.lam:.6g}"
                          f" ({'; '.join(hp.notes) or 'breakpoint budget'})")
    w, b = hp.at(erm.lam)
    return Solution(w=w, b=b if erm.intercept else 0.0, objective=math.nan,
                    status="converged", method="homotopy", n_iter=len(hp.lams),
                    time_s=timer(), provenance={"solver": "convexlearn.homotopy (LARS-lasso)",
                                                "breakpoints": len(hp.lams)})


def _zero_route(erm, **_):
    """The perceptron: max(0, -m) >= 0 = its value at m = 0 and R(w) >= 0 = R(0), so
    (w, b) = (0, 0) is a minimizer whatever the penalty (the certificate checks it)."""
    erm.loss.require("route 'zero'", erm.describe(), "minimal_at_zero")
    w = np.zeros(erm.X.shape[1])
    return Solution(w=w, b=0.0, objective=erm.objective(w, 0.0), status="converged",
                    method="zero", n_iter=0, time_s=0.0,
                    provenance={"solver": "closed form: F >= 0 = F(0, 0)"})


def _lp_route(erm, **_):
    """The LP of hinge / perceptron with l1 or no penalty, straight to HiGHS
    (:func:`convexlearn.solvers.erm.lp.margin_lp`)."""
    timer = Timer()
    l1 = _penalized(erm) and _l1_only(erm)
    lam1 = erm.penalty.split(erm.lam)[0] if l1 else 0.0
    w, b, info = margin_lp(erm.X, erm.y, kappa=erm.loss.kink, lam1=lam1,
                           intercept=erm.intercept, sample_weight=erm.sample_weight)
    return Solution(w=w, b=b, objective=erm.objective(w, b), status="converged", method="lp",
                    n_iter=info["iterations"], time_s=timer(),
                    provenance={"solver": "HiGHS (highspy)",
                                "solver_version": info["solver_version"],
                                "hiGHS_status": info["status"]})


def _dual_lp_route(erm, **_):
    """A piecewise-linear regression loss with l1 or no penalty: its dual LP (d + 1 rows)
    straight to HiGHS (:func:`convexlearn.solvers.erm.lp.piecewise_dual_lp`), (w, b) from
    the row duals put on the basis' breakpoints."""
    timer = Timer()
    lam1 = erm.penalty.split(erm.lam)[0] if _penalized(erm) else 0.0
    breakpoints, slopes = erm.loss.pieces()
    w, b, info = piecewise_dual_lp(erm.X, erm.y, breakpoints, slopes, lam1=lam1,
                                   intercept=erm.intercept, sample_weight=erm.sample_weight)
    return Solution(w=w, b=b, objective=math.nan, status="converged", method="dual-lp",
                    n_iter=info["iterations"], time_s=timer(),
                    provenance={"solver": "HiGHS (highspy), dual simplex on the dual LP",
                                "solver_version": info["solver_version"],
                                "hiGHS_status": info["status"]})


def _dual_qp_route(erm, **_):
    """A piecewise-linear regression loss with l2: its dual on the SVM family's QP core
    (:mod:`convexlearn.solvers.erm.pieces_qp`; epsilon-insensitive: the linear SVR), SMO
    then the active-set polish."""
    from ..solvers.erm.pieces_qp import solve_pieces_l2
    timer = Timer()
    breakpoints, slopes = erm.loss.pieces()
    w, b, info = solve_pieces_l2(erm._dense("the dual QP route"), erm.y, breakpoints, slopes,
                                 lam2=erm.penalty.split(erm.lam)[1], intercept=erm.intercept,
                                 sample_weight=erm.sample_weight)
    return Solution(w=w, b=b, objective=math.nan, status="converged", method="dual-qp",
                    n_iter=info["iterations"], time_s=timer(),
                    provenance={"solver": f"convexlearn SMO ({info['loop']}) on the dual QP",
                                "polished": info["polished"]})


def _svm_route(erm, **_):
    """Hinge + l2 is the soft-margin SVM with C = 1/(n lam): solved as such, converted back."""
    timer = Timer()
    svm = erm.as_svm()
    C, N = svm.C, 1.0 / (svm.C * erm.lam)      # N = n, or sum s with sample weights
    svm_sol = svm.solve()
    w, b = np.asarray(svm_sol.w, dtype=float), float(svm_sol.b)
    F = erm.objective(w, b)
    sol = Solution(w=w, b=b, objective=F, status="converged", method="svm",
                    n_iter=svm_sol.n_iter, time_s=timer(),
                    provenance={"solver": "convexlearn.SVM", "C": C,
                                "svm_route": svm_sol.provenance.get("route"),
                                "svm_objective": svm_sol.objective,
                                "svm_objective_over_nC": svm_sol.objective /
                                (N * C)})
    if svm_sol.alpha is not None:
        # the SVM's multipliers are the loss multipliers of the certificate,
        # g_i = -(n / N) y_i a_i / C (1/n A^T g = -lam w at the optimum): tried first there,
        # two sparse products instead of a dense block of every sample on the margin
        sol.extra["loss_multipliers"] = -(erm.n_samples / N) * svm.y * svm_sol.alpha / C
    return sol


def _cvxpy_route(erm, solver=None, options=None, tol=EXACT_TOL, **_):
    """The cvxpy problem (Clarabel by default). With the default solver and no options, a
    point that does not certify at ``tol`` is re-solved at tighter, then at Clarabel's
    default tolerances; the first certified point is kept, else the best one
    (``provenance["attempts"]``: solver, options, cvxpy status, relative distance)."""
    options = dict(options or {})
    timer = Timer()
    default = (solver is None or solver.upper() == "CLARABEL") and not options
    attempts = [(solver, options)]
    if default:
        attempts += [(solver, EXACT_CLARABEL_OPTIONS), (solver, CLARABEL_DEFAULTS)]
    tried, best = [], None
    for name, opts in attempts:
        sol = _cvxpy_once(erm, name, opts)
        rep = erm.certificate(sol, tol=tol)
        figure = max(rep.relative_distance,
                     0.0 if math.isnan(rep.relative_gap) else rep.relative_gap)
        tried.append((sol.provenance["solver"], opts or "formulations.base defaults",
                      sol.provenance["cvxpy_status"], figure))
        if best is None or figure < best[0]:
            best = (figure, sol)
        if sol.status == "optimal" and rep.passed or not default:
            best = (figure, sol)
            break
    sol = best[1]
    sol.provenance["attempts"] = tried
    sol.time_s = timer()
    return sol


def snap_zeros(erm: Any, sol: Solution, tol: float) -> Solution:
    """l1 / elastic net: the coordinates the certificate calls zero (|w_j| <= kink_tol)
    set to exactly 0.0, kept when the certificate still passes (an interior-point answer
    carries ~1e-10 residues there, a coordinate-descent one at lam_max ~1e-17)."""
    zeros = sol.report.details.get("zero_coordinates", np.zeros(0, dtype=int))
    if not erm.penalty.has("sparse") or not np.any(sol.w[zeros] != 0):
        return sol
    w = np.array(sol.w, dtype=float)
    w[zeros] = 0.0
    snapped = Solution(**{**sol.__dict__, "w": w, "objective": erm.objective(w, sol.b),
                          "provenance": {**sol.provenance, "snapped_zeros": int(len(zeros))}})
    snapped = _certify(erm, snapped, tol)
    return snapped if snapped.report.passed or not sol.report.passed else sol


def _polish(erm, sol: Solution, tol: float) -> Solution | None:
    """The cvxpy point polished on its smooth piece (:mod:`convexlearn.solvers.erm.erm_polish`),
    when that certifies at ``tol``; else None."""
    from ..solvers.erm.erm_polish import polish_point
    zeros = sol.report.details.get("zero_coordinates", np.zeros(0, dtype=int))
    on_kink = sol.report.details.get("on_kink", np.zeros(0, dtype=int))
    try:
        w, b = polish_point(erm.X, erm.y, erm.loss, erm.penalty, erm.lam, erm.intercept,
                            sol.w, sol.b, zeros, on_kink)
    except ConvexLearnError:
        return None
    out = Solution(w=w, b=b, objective=erm.objective(w, b), status="converged",
                   method=sol.method, n_iter=sol.n_iter,
                   provenance={**sol.provenance, "polished": "Newton on the smooth piece"})
    out = _certify(erm, out, tol)
    return out if out.report.passed else None


def _lp_refine(erm, sol: Solution, tol: float) -> Solution | None:
    """The LP's vertex put exactly on its kinks: the samples the certificate finds on the
    kink (margin within its kink_tol of kappa) get y_i (<w_S, x_iS> + b) = kappa by one
    min-norm least-squares correction of (w_S, b) on the support S (HiGHS's feasibility
    tolerance is on its scaled LP: the unscaled margins carry ~1e-9 residues, a relative
    gap ~1e-8 at an exact support). Kept when it certifies at ``tol``; else None."""
    kappa = erm.loss.kink
    K = sol.report.details.get("on_kink", np.zeros(0, dtype=int))
    S = np.setdiff1d(np.flatnonzero(sol.w), sol.report.details.get(
        "zero_coordinates", np.zeros(0, dtype=int)))
    if K.size == 0:
        return None
    XK = erm.X[K][:, S]
    XK = XK.toarray() if hasattr(XK, "toarray") else np.asarray(XK)
    M = np.column_stack([XK, np.ones(K.size)]) if erm.intercept else XK
    w, b = np.array(sol.w, dtype=float), float(sol.b)
    margins = erm.y[K] * (XK @ w[S] + b)
    step = np.linalg.lstsq(erm.y[K][:, None] * M, kappa - margins, rcond=None)[0]
    w[S] += step[:S.size]
    b += float(step[S.size]) if erm.intercept else 0.0
    out = Solution(w=w, b=b, objective=erm.objective(w, b), status="converged",
                   method=sol.method, n_iter=sol.n_iter,
                   provenance={**sol.provenance, "refined": "kink samples put on the kink"})
    out = _certify(erm, out, tol)
    return out if out.report.passed else None


def _cvxpy_once(erm, solver, options) -> Solution:
    form = erm.formulation()
    info = solve_formulation(form, solver, **options)
    w = np.asarray(form.variables["w"].value, dtype=float)
    b = float(form.variables["b"].value) if erm.intercept else 0.0
    return Solution(w=w, b=b, objective=erm.objective(w, b), status=info.status,
                    method="exact-primal", n_iter=info.iterations, time_s=info.time_s,
                    provenance={**info.provenance(), "formulation": form.name,
                                "cvxpy_objective": float(form.problem.value)})


#: Every exact route by name: ``run(erm, *, warm_start, screen, solver, options, tol)``.
ROUTES: dict[str, Route] = {route.name: route for route in (
    Route("newton", newton_route, applies=_newton_applies),
    Route("cd", _cd_route, applies=_cd_applies,     # resumed tighter when the gap falls short
          refine=lambda erm, sol, tol: resume_until_certified(
              lambda s, t: _cd_route(erm, warm_start=s, cd_tol=t),
              lambda s: _certify(erm, s, tol), sol, CD_RESUME_TOLS)),
    Route("homotopy", _homotopy_route, applies=_homotopy_applies),
    Route("zero", _zero_route, applies=_zero_applies),
    Route("lp", _lp_route, applies=_lp_applies, refine=lambda erm, sol, tol: _lp_refine(erm, sol, tol)),
    Route("svm", _svm_route, applies=_svm_applies),
    Route("dual-lp", _dual_lp_route, applies=_dual_lp_applies),
    Route("dual-qp", _dual_qp_route, applies=_dual_qp_applies),
    Route("exact-primal", _cvxpy_route, refine=lambda erm, sol, tol: _polish(erm, sol, tol)),
)}
#: The order of the chain (:func:`exact_chain` keeps the routes that apply).
ORDER = ("zero", "newton", "cd", "homotopy", "lp", "svm", "dual-lp", "dual-qp", "exact-primal")

#: The dual QP (SMO on the linear kernel, compiled with an intercept) goes before the cvxpy
#: problem up to this many samples, after it (a fallback) beyond or without an intercept:
#: measured, d = 20: 2-4x faster than Clarabel at n = 1000, 1.3-2.5x slower at n = 3000.
DUAL_QP_MAX_SAMPLES = 2000


def _violation(report) -> float:
    """How far an ERM certificate is from passing (relative distance or gap)."""
    gap = report.relative_gap
    return max(report.relative_distance, 0.0 if math.isnan(gap) else gap)


def solve_exact(erm: Any, *, tol: float = EXACT_TOL, solver: str | None = None,
                warm_start: Solution | None = None, screen: Any = None, routes: Any = None,
                **options) -> Solution:
    """Walk the chain of :func:`exact_chain` (or ``routes``) with the walker of
    :mod:`convexlearn.routes.chain`: the first answer whose certificate passes at ``tol``
    (relative), else the one nearest to passing.

    ``solver`` or ``options`` (cvxpy solver options) go to the cvxpy route and make it the
    only one (the user asked for that solver). ``warm_start`` (a Solution) starts Newton and
    coordinate descent; ``screen`` = (lam1_prev, loss gradient in w at the previous point)
    feeds coordinate descent's strong rule on a path.
    """
    timer = Timer()
    chain = list(routes or exact_chain(erm))
    if solver is not None or options:
        chain = ["exact-primal"]
    with small_problem_threads(erm.X.nnz if is_sparse(erm.X) else erm.X.size):  # threads.py
        sol = walk(erm, [ROUTES[name] for name in chain],
                   certify=lambda s: snap_zeros(erm, _certify(erm, s, tol), tol),
                   violation=_violation, tol=tol,
                   context={"warm_start": warm_start, "screen": screen, "solver": solver,
                            "options": options, "tol": tol})
    sol = finish_exact(erm, sol, tol)
    sol.time_s = timer()
    return sol


def finish_exact(erm: Any, sol: Solution, tol: float) -> Solution:
    """The method is "exact", the route that answered in provenance (the walker's, else
    the method that produced the point), the certificate's figures beside it."""
    sol.provenance.setdefault("route", sol.method)
    sol.method = "exact"
    sol.provenance["certificate"] = {
        "tol": tol, "relative_distance": sol.report.relative_distance,
        "relative_gap": sol.report.relative_gap, "distance": sol.report.distance}
    sol.extra["lam"] = erm.lam
    return sol


# ----------------------------------------------------------- iterative methods
def solve_iterative(erm: Any, method: str, tol: float, warm_start: Any, options: dict) -> Solution:
    """An iterative method of :data:`ITERATIVE_METHODS` on ``erm`` (status: the caller's
    certificate decides "optimal")."""
    run = ITERATIVE_METHODS[method]
    oracle = erm.oracle()
    x0 = (None if warm_start is None
          else oracle.join(erm._checked_w(warm_start.w), warm_start.b))
    options = check_method_options(method, run, options, ("oracle", "x0", "tol"))
    if method == "subgradient" and options.get("step") == "polyak" \
            and options.get("f_star") is None:
        options["f_star"] = erm.reference().objective
    if method == "cd":
        _require_cd(erm)
    sol = run(oracle, x0, tol=tol, **options)
    sol.method = method
    return sol


def _require_cd(erm) -> None:
    cd_module.require(erm.loss, erm.penalty, erm.describe(), method="method 'cd'")


def closed_form_applies(loss: Any, penalty: Any, lam: float) -> str | None:
    """None when least squares / ridge has a closed form for (loss, penalty, lam), else why
    not: the loss must be least squares, the penalty quadratic (or absent, or lam = 0)."""
    unpenalized = penalty.has("zero") or lam == 0
    if loss.has("least_squares") and (unpenalized or penalty.has("quadratic", "split")):
        return None
    return ("closed-form needs the squared loss with penalty 'none' or 'l2' (least "
            "squares / ridge)")


def solve_closed_form(erm: Any) -> Solution:
    """Least squares / ridge by their closed forms (status "converged": the certificate
    decides "optimal")."""
    from ..solvers.erm import closed_forms
    reason = closed_form_applies(erm.loss, erm.penalty, erm.lam)
    if reason is not None:
        raise NotApplicableError(f"{reason}; {erm.describe()} has none")
    unpenalized = erm.penalty.has("zero") or erm.lam == 0
    timer = Timer()
    if unpenalized:
        model = closed_forms.least_squares(erm.X, erm.y, erm.intercept)
    else:
        # (2/n) X_c^T (X_c w - y_c) + lam2 w = 0  <=>  ridge with alpha = n lam2 / 2.
        lam2 = erm.penalty.split(erm.lam)[1]
        model = closed_forms.ridge(erm.X, erm.y, erm.n_samples * lam2 / 2.0, erm.intercept)
    b = model.b if erm.intercept else 0.0
    # "converged": the formula is exact, but only the certificate says "optimal".
    return Solution(w=model.w, b=b, objective=erm.objective(model.w, b), status="converged",
                    method="closed-form", n_iter=0, time_s=timer(),
                    provenance={"solver": model.method, **model.details})


def solve(erm: Any, method: str, *, tol: float, certify: bool, cert_tol: float | None,
          solver: str | None, warm_start: Any, options: dict) -> Solution:
    """``ERM.solve`` after validation: the exact chain, the closed form or an iterative
    method; an iterative method's status "optimal" rests on the certificate at
    ``cert_tol`` (default :data:`ITERATIVE_TOL`), relative like the exact one."""
    if method not in METHODS:
        raise ParameterError(f"unknown ERM method {method!r}; valid: "
                             f"{', '.join(map(repr, METHODS))}")
    erm._require_convex(method)
    exact_tol = EXACT_TOL if cert_tol is None else cert_tol
    early = (newton_proves_existence(erm, exact_tol, warm_start) if method == "exact"
             and solver is None and not options and existence_needs_proof(erm) else None)
    erm._require_finite_minimizer()     # the separability LP, unless Newton proved it
    if method in ("exact", "exact-primal"):
        sol = finish_exact(erm, early, exact_tol) if early is not None else solve_exact(
            erm, tol=exact_tol, solver=solver,
            warm_start=warm_start, routes=["exact-primal"] if method != "exact" else None,
            **options)
        if method == "exact":
            erm._references[erm.lam] = sol
        sol.extra["lam"] = erm.lam
        sol.provenance = Provenance.of(sol.provenance, fingerprint=erm.deferred_fingerprint())
        return sol
    if method == "closed-form":
        sol = solve_closed_form(erm)
    else:
        sol = solve_iterative(erm, method, tol, warm_start, options)
    sol.extra["lam"] = erm.lam
    if certify:
        sol.report = erm.certificate(sol, tol=ITERATIVE_TOL if cert_tol is None
                                     else cert_tol)
        if sol.status in ("optimal", "converged"):
            sol.status = "optimal" if sol.report.passed else "inaccurate"
    elif sol.status == "optimal":
        sol.status = "converged"        # the solver's word only: "optimal" needs the check
    sol.provenance = Provenance.of(sol.provenance, fingerprint=erm.deferred_fingerprint())
    return sol

