"""Paths of regularized ERM: ``ERM.path(lams)``, every point certified at ``EXACT_TOL``.

Three ways along a grid of lam (:func:`solve_path`), each ending in the problem's own
certificate (:meth:`convexlearn.erm.ERM.certificate`, recomputed from the data):

* the lasso (squared loss + l1, unweighted, dense X with n > d): the exact homotopy
  (:func:`convexlearn.solvers.erm.homotopy.lasso_homotopy`, LARS with the lasso modification,
  Gram form) from lam_max down to min(lams), a few small solves per breakpoint; every grid
  point is the linear interpolation of the two breakpoints around it (the path is linear
  there);
* otherwise, where the exact chain starts with Newton or coordinate descent: that route at
  each lam, warm-started from the previous point (coordinate descent screens with the
  sequential strong rule);
* else :func:`~convexlearn.routes.erm.solve_exact` at each lam.

The first two certify all points in one batch: the scores X W + b and X^T G of every point
come from two matrix products (one pass over X each, for all points together) instead of
two passes per point. The lasso's homotopy points are first certified from the Gram summaries
the homotopy runs on (:mod:`convexlearn.certify.lasso_gram`: rounding bounded, O(d |S|)
per point); only those whose bound does not fit go through the products. A point whose certificate fails at 1e-9 (relative), or that the
homotopy did not reach, goes through :func:`~convexlearn.routes.erm.solve_exact` (the full
chain: coordinate descent first for the lasso), warm-started from the previous point.
``path(exact=True)`` returns the homotopy's breakpoints themselves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..certify.lasso_gram import gram_certificate, gram_summary
from ..certify.optimality import fixed_multipliers, null_scale
from ..data import check_nonnegative, is_sparse
from ..fingerprints import Provenance
from ..errors import ConvexLearnError, NotApplicableError, ParameterError
from ..path import Path
from ..solution import Solution, Timer
from ..solvers.erm.homotopy import lasso_homotopy
from .erm import (HOMOTOPY_MAX_DIM, EXACT_TOL, ROUTES, finish_exact, snap_zeros, exact_chain,
                  solve_exact)

__all__ = ["HOMOTOPY_MAX_DIM", "path", "solve_path"]

#: Scores and multipliers of at most this many floats (n x points) per batch product.
BATCH_FLOATS = 1 << 23


def solve_path(erm: Any, lams: Any, *, method: str = "exact", tol: float = EXACT_TOL,
               **options) -> list[Solution]:
    """Exact solutions at each lam of ``lams`` (in order; see the module docstring for the
    routes); ``erm.lam`` is left at the last value (the caller restores it).

    An iterative ``method`` runs at each lam from the previous point (``erm.solve``).
    """
    lams = list(lams)
    if not lams:
        return []
    if method != "exact":
        out, previous = [], None
        for lam in lams:
            erm.lam = lam
            opts = dict(options)
            if previous is not None:
                opts.setdefault("warm_start", previous)
            previous = erm.solve(method, **opts)
            out.append(previous)
        return out
    route = None
    if not options:
        chains = []
        for lam in lams:
            erm.lam = lam
            chains.append(exact_chain(erm)[0])
        route = chains[0] if len(set(chains)) == 1 and chains[0] in ("cd", "newton") else None
    if route is None:
        out, previous, screen = [], None, None
        for lam in lams:
            erm.lam = lam
            previous = solve_exact(erm, tol=tol, warm_start=previous, screen=screen, **options)
            grad = previous.extra.get("loss_grad")
            screen = None if grad is None else (_lam1(erm), grad)
            out.append(previous)
        return out
    timer = Timer()
    summary = None
    if route == "cd" and _homotopy_applies(erm):
        summary = gram_summary(erm.X, erm.y, erm.intercept)
        route, raw = "lasso-homotopy", _homotopy_points(erm, lams, summary)
    else:
        raw, previous, screen = [], None, None
        for lam in lams:
            erm.lam = lam
            try:
                previous = ROUTES[route].run(erm, warm_start=previous, screen=screen)
            except ConvexLearnError:
                previous = None
            raw.append(previous)
            grad = None if previous is None else previous.extra.get("loss_grad")
            screen = None if grad is None else (_lam1(erm), grad)
    out = _certify_batch(erm, lams, raw, tol, route, summary)
    for sol in out:
        sol.provenance["path_time_s"] = timer()
    return out


def _is_lasso(erm) -> bool:
    """The squared loss of a regression with the l1 penalty: the piecewise-linear path."""
    return (erm.loss.has("least_squares") and not erm.loss.margin_based
            and erm.penalty.has("piecewise_linear", "split"))


def _homotopy_applies(erm) -> bool:
    """The lasso on dense, unweighted data with n > d and d <= HOMOTOPY_MAX_DIM."""
    n, d = erm.X.shape
    return (_is_lasso(erm)
            and erm.sample_weight is None and not is_sparse(erm.X)
            and isinstance(erm.X, np.ndarray) and n > d and d <= HOMOTOPY_MAX_DIM)


def _homotopy_points(erm, lams: list, summary) -> list[Solution | None]:
    """Each lam's (w, b) on the exact lasso path (None below where the homotopy ended);
    ``summary``: the data's :func:`~convexlearn.certify.lasso_gram.gram_summary`."""
    timer = Timer()
    d = erm.X.shape[1]
    hp = lasso_homotopy(erm.X, erm.y, erm.intercept, lam_min=min(lams),
                        max_breakpoints=4 * d + 2 * len(lams) + 10, summary=summary)
    end, elapsed = hp.lams[-1], timer()
    raw: list[Solution | None] = []
    for lam in lams:
        if lam < end * (1 - 1e-12):
            raw.append(None)
            continue
        w, b = hp.at(lam)
        k = int(np.count_nonzero(hp.lams >= lam))        # breakpoints passed to reach lam
        raw.append(Solution(w=w, b=b if erm.intercept else 0.0, status="converged",
                            method="lasso-homotopy", n_iter=k, time_s=elapsed,
                            provenance={"solver": "convexlearn.homotopy (LARS-lasso, Gram "
                                                  "form)", "breakpoints": k,
                                        "homotopy_notes": list(hp.notes)}))
    return raw


def _support_columns(erm, sols: list[Solution]) -> tuple[np.ndarray, Any]:
    """The columns of X where some w_k is nonzero, and X restricted to them (a copy, once
    for all points) when that saves work: else (all columns, X). A lasso path touches a
    few columns; the others add exact zeros to the scores."""
    X = erm.X
    nonzero = np.zeros(X.shape[1], dtype=bool)
    for sol in sols:
        nonzero |= np.asarray(sol.w) != 0
    cols = np.flatnonzero(nonzero)
    if is_sparse(X) or len(cols) > X.shape[1] // 2 or X.shape[0] * len(cols) > 8 * BATCH_FLOATS:
        return np.arange(X.shape[1]), X
    return cols, X[:, cols]


def _batch_products(erm, sols: list[Solution], cols: np.ndarray,
                    X_cols: Any) -> tuple[np.ndarray, np.ndarray]:
    """Scores X w_k + b_k and X^T g_k of K points, as rows (K, n) and (K, d), g_k the fixed
    loss multipliers (:func:`~convexlearn.certify.optimality.fixed_multipliers`) at the
    scores: one matrix product each way. Rows, so that each point's vector is contiguous;
    the scores from ``X_cols``, the columns ``cols`` of X outside which every w_k is 0
    (:func:`_support_columns`); the multipliers row by row (no K x n temporaries beside
    the two results)."""
    X, y = erm.X, erm.y
    W = np.vstack([np.asarray(sol.w)[cols] for sol in sols])        # (K, |cols|)
    B = np.array([sol.b if erm.intercept else 0.0 for sol in sols])
    if is_sparse(X_cols):
        scores = np.ascontiguousarray(np.asarray(X_cols @ W.T).T)
    else:
        scores = W @ X_cols.T                         # (K, n), C order
    scores += B[:, None]
    G = np.empty_like(scores)
    for i, row in enumerate(scores):
        # no kink: the subdifferential is the derivative, fixed everywhere
        G[i] = (erm.loss.derivative(y, row) if not erm.loss.kinks()
                else fixed_multipliers(y, erm.loss, row))
    XTG = np.asarray(X.T @ G.T).T if is_sparse(X) else G @ X
    return scores, np.ascontiguousarray(XTG)


def _certify_batch(erm, lams: list, raw: list, tol: float, route: str,
                   summary=None) -> list[Solution]:
    """Certify the points of ``raw`` (None: the route failed there) with batched products;
    a point that fails goes through solve_exact, warm-started from the previous point.
    With a Gram ``summary`` (the lasso), a point is first certified from it
    (:func:`~convexlearn.certify.lasso_gram.gram_certificate`: O(d |S|), its rounding
    bounded); the points it does not certify, from X."""
    gram_reports = {}
    if summary is not None:
        s0 = null_scale(erm.loss, erm.y, erm.intercept)
        for k, sol in enumerate(raw):
            if sol is not None:
                rep = gram_certificate(summary, erm.loss, erm.penalty, lams[k], sol.w,
                                       sol.b, s0, tol)
                if rep is not None:
                    gram_reports[k] = rep
    done = [k for k, sol in enumerate(raw) if sol is not None and k not in gram_reports]
    block = max(1, BATCH_FLOATS // max(1, erm.X.shape[0]))
    products: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    # ERM.certificate recomputes its own products under sample weights: none to batch
    batched = done if erm.sample_weight is None else []
    cols, X_cols = _support_columns(erm, [raw[k] for k in batched])
    for start in range(0, len(batched), block):
        chunk = batched[start:start + block]
        scores, XTG = _batch_products(erm, [raw[k] for k in chunk], cols, X_cols)
        products.update({k: (scores[i], XTG[i]) for i, k in enumerate(chunk)})
    out: list[Solution] = []
    for k, lam in enumerate(lams):
        erm.lam = lam
        sol = raw[k]
        if sol is not None:
            scores, XTg = products.pop(k, (None, None))
            sol.report = gram_reports.get(k) or erm.certificate(sol, tol=tol, scores=scores,
                                                                XTg=XTg)
            sol.objective = sol.report.objective
            sol.status = "optimal" if sol.report.passed else "inaccurate"
            sol = snap_zeros(erm, sol, tol)
        if sol is None or not sol.report.passed:
            failed = {route: "route failed" if sol is None else
                      f"certificate failed: relative distance "
                      f"{sol.report.relative_distance:.2e}, relative gap "
                      f"{sol.report.relative_gap:.2e}"}
            warm = out[-1] if out else None
            sol = solve_exact(erm, tol=tol, warm_start=warm)
            sol.provenance.setdefault("fallback_from", {}).update(failed)
            out.append(sol)
            continue
        out.append(finish_exact(erm, sol, tol))
    return out


def _lam1(erm) -> float:
    return erm.penalty.split(erm.lam)[0]


def path(erm: Any, lams: Any, *, method: str = "exact", exact: bool = False,
         options: dict) -> Path:
    """``ERM.path``: the certified path over ``lams`` (:func:`solve_path`; the lasso by
    homotopy, else warm-started), or (``exact=True``) the exact lasso path by homotopy with
    certified breakpoints and exact interpolation. ``provenance["routes"]``: the routes
    that answered, sorted."""
    lams = [check_nonnegative("lam", v) for v in np.atleast_1d(lams).tolist()]
    if not lams:
        raise ParameterError("lams is empty: a path needs at least one value")
    timer = Timer()
    saved = erm.lam
    try:
        if exact:
            return _exact_lasso_path(erm, min(lams), options, timer)
        if method == "exact":
            erm._require_convex("exact")
            erm._require_finite_minimizer()
        out = solve_path(erm, lams, method=method, **options)
    finally:
        erm.lam = saved
    if method == "exact":
        for value, sol in zip(lams, out):
            erm._references.setdefault(value, sol)
    routes = sorted({sol.provenance.get("route", method) for sol in out})
    return Path("lam", np.asarray(lams, dtype=float), out, time_s=timer(),
                provenance={"method": method, "routes": routes,
                            "warm_start": routes != ["lasso-homotopy"],
                            "screening": "sequential strong rule (cd route)"
                            if "cd" in routes else None})


def _exact_lasso_path(erm, lam_min: float, options: dict, timer: Timer) -> Path:
    """The lasso's breakpoints from lam_max down to ``lam_min``
    (:func:`convexlearn.solvers.erm.homotopy.lasso_homotopy`), each certified by the problem's
    own certificate at :data:`EXACT_TOL`; between two breakpoints the path is linear."""
    if not _is_lasso(erm):
        raise NotApplicableError(
            f"path(exact=True) follows the piecewise-linear lasso path (squared loss, l1 "
            f"penalty); {erm.describe()} has no such path: use exact=False")
    if erm.sample_weight is not None:
        raise NotApplicableError("path(exact=True) follows the unweighted lasso path")
    if options:
        raise ParameterError(f"path(exact=True) takes no options; got {sorted(options)}")
    homotopy = lasso_homotopy(erm._dense("the lasso homotopy"), erm.y, erm.intercept,
                              lam_min=lam_min)

    def solution_at(lam: float, w: np.ndarray, b: float, event: str) -> Solution:
        erm.lam = lam
        sol = Solution(w=w, b=b, objective=erm.objective(w, b), method="exact-path",
                       provenance=Provenance(route="lasso-homotopy", event=event,
                                             fingerprint=erm.deferred_fingerprint()))
        sol.report = erm.certificate(sol, tol=EXACT_TOL)
        sol.status = "optimal" if sol.report.passed else "inaccurate"
        sol.extra["lam"] = lam
        return sol

    solutions = [solution_at(lam, w, b, ev) for lam, w, b, ev in
                 zip(homotopy.lams, homotopy.coefs, homotopy.intercepts, homotopy.events)]

    def interpolate(lam: float) -> Solution:
        w, b = homotopy.at(lam)
        saved = erm.lam
        try:
            return solution_at(lam, w, b, "interpolated")
        finally:
            erm.lam = saved

    return Path("lam", homotopy.lams, solutions, time_s=timer(),
                provenance={"route": "lasso-homotopy", "events": homotopy.events,
                            "notes": homotopy.notes}, interpolate=interpolate)
