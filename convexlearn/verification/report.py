"""The verdict on one answer: its certificate against the certified optimum of its problem.

A *claim* is a problem of convexlearn (an :class:`~convexlearn.svm.SVM` or an
:class:`~convexlearn.erm.ERM`, in convexlearn's conventions) and the answer someone gave
for it (a :class:`~convexlearn.solution.Solution`). :func:`check_claim` computes

* ``gap``: for the SVM the relative duality gap of the answer itself,
  |P(w, b) - D(alpha)| / max(|P|, |D|) (:mod:`convexlearn.certify.kkt`); for ERM the
  relative suboptimality (F - F*) / max(|F*|, |F|) against the certified optimum F*;
* the KKT violators: samples (SVM) or coordinates of (w, b) (ERM) whose scaled residual
  is above ``tol`` (the scales of docs/conventions.md), with the residual;
* the support sets of the answer and of the optimum (SVM: alpha_i > tol * C; ERM with an
  l1 part: |w_j| > tol * max|w*|; ERM with a hinge-type loss: samples with m_i < 1);
* the decision values of both on the evaluation samples (for ``flipped``).

The optimum is solved once per problem by the fast exact route (``solve()``) and kept in
a small cache keyed by the problem's fingerprint (data digest and parameters), so several
answers verified against one problem, or one problem object rebuilt, reuse it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import SolverError
from ..solution import Solution

__all__ = ["Claim", "PartReport", "check_claim", "certified_optimum", "clear_cache"]

#: Certified optima kept (fingerprint -> Solution), most recently used last.
CACHE_SIZE = 64
_CACHE: OrderedDict = OrderedDict()


def clear_cache() -> None:
    """Forget every certified optimum computed by :func:`certified_optimum`."""
    _CACHE.clear()


def _is_svm(problem) -> bool:
    return hasattr(problem, "C_bounds")


def certified_optimum(problem: Any) -> Solution:
    """The certified optimum of ``problem`` (``problem.solve()``, the fastest exact route),
    computed once per fingerprint and cached (:data:`CACHE_SIZE` problems)."""
    key = problem.fingerprint()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    optimum = problem.solve() if _is_svm(problem) else problem.reference()
    if optimum.status != "optimal":
        raise SolverError(f"the exact route found no certified optimum of "
                          f"{problem.describe()} (status {optimum.status!r})")
    _CACHE[key] = optimum
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return optimum


@dataclass
class Claim:
    """A problem in convexlearn's conventions and the answer given for it.

    ``rows``: the samples of the caller's data the problem holds, in order (one pair of
    classes of a one-vs-one model); None for all of them. ``label``: names the claim in
    reports ("versicolor vs virginica"). ``features``: maps the caller's X to the
    problem's (None: the same). ``pos``, ``neg``: indices, in the model's class list, of
    the classes the problem's +1 and -1 stand for (one-vs-one voting, one-vs-rest).
    """

    problem: Any
    solution: Solution
    label: str = ""
    rows: np.ndarray | None = None
    features: Any = None
    pos: int = 1
    neg: int = 0
    optimum: Solution | None = field(default=None, repr=False)

    def decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """f(x) of the answer and of the certified optimum on the caller's samples X
        (mapped by ``features``, e.g. LinearSVC's appended bias column, when set).

        For a kernel expansion both come from one kernel block, X against the union of
        the two supports only."""
        p, sol = self.problem, self.solution
        opt = self.optimum if self.optimum is not None else certified_optimum(p)
        Z = X if self.features is None else self.features(X)
        if _is_svm(p) and p.X is not None and not p.kernel.is_linear:
            mine, best = p.expansion(sol), p.expansion(opt)
            cols = np.flatnonzero((mine != 0) | (best != 0))
            Z = Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z, dtype=float)
            K = p.kernel(Z, p.X[cols])
            return K @ mine[cols] + sol.b, K @ best[cols] + opt.b
        return p.decision_function(sol, Z), p.decision_function(opt, Z)


@dataclass
class PartReport:
    """The figures of one claim (see the module docstring)."""

    label: str
    problem: str
    passed: bool
    gap: float
    objective: float
    optimum: float
    kkt_violation: float
    violators: dict
    support_kind: str
    support_missing: list
    support_extra: list
    decision: np.ndarray = field(repr=False, default=None)
    optimum_decision: np.ndarray = field(repr=False, default=None)
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain data (no arrays)."""
        return {"label": self.label, "problem": self.problem, "passed": self.passed,
                "gap": self.gap, "objective": self.objective, "optimum": self.optimum,
                "kkt_violation": self.kkt_violation,
                "violators": {str(k): v for k, v in self.violators.items()},
                "support_kind": self.support_kind, "support_missing": self.support_missing,
                "support_extra": self.support_extra, "notes": list(self.notes)}


def _rows(claim: Claim, idx) -> list[int]:
    idx = np.asarray(idx, dtype=int)
    return (idx if claim.rows is None else claim.rows[idx]).tolist()


def _violators(claim: Claim, per_sample: np.ndarray, tol: float) -> dict:
    bad = np.flatnonzero(per_sample > tol)
    bad = bad[np.argsort(-per_sample[bad], kind="stable")]
    return dict(zip(_rows(claim, bad), per_sample[bad].tolist()))


def _check_svm(claim: Claim, tol: float) -> PartReport:
    svm, sol = claim.problem, claim.solution
    optimum = claim.optimum = certified_optimum(svm)
    rep = svm.kkt(sol, tol=tol)
    per_sample = np.zeros(svm.n_samples)
    for r in rep.residuals.values():
        if np.ndim(r):
            per_sample = np.maximum(per_sample, r)
    scale = float(np.max(svm.C_bounds)) if not svm.hard_margin else \
        max(1.0, float(np.max(optimum.alpha)))
    mine = set(np.flatnonzero(rep.alpha > tol * scale).tolist())
    best = set(np.flatnonzero(np.asarray(optimum.alpha) > tol * scale).tolist())
    opt_margins = getattr(optimum.report, "margins", None)
    f_opt = (svm.y * opt_margins if opt_margins is not None
             else svm.decision_function(optimum))
    return PartReport(
        label=claim.label, problem=svm.describe(), passed=bool(rep.passed),
        gap=float(rep.relative_gap), objective=float(rep.primal_objective),
        optimum=float(optimum.objective), kkt_violation=float(rep.max_violation),
        violators=_violators(claim, per_sample, tol), support_kind="samples",
        support_missing=_rows(claim, sorted(best - mine)),
        support_extra=_rows(claim, sorted(mine - best)),
        decision=svm.y * rep.margins, optimum_decision=f_opt, notes=list(rep.notes))


def _erm_residuals(erm, cert, w: np.ndarray) -> np.ndarray:
    """Per coordinate of (w, b): distance of 0 to that coordinate's subdifferential at the
    certificate's loss multipliers g, in units of F (divided by the column RMS), relative
    to the certificate's scale (the size of the terms that cancel)."""
    from ..certify.optimality import column_rms
    n = erm.n_samples
    g = cert.details["multipliers"]
    base = np.asarray(erm.X.T @ g).ravel() / n
    out = np.zeros(w.size + int(erm.intercept))
    if erm.lam > 0 and not erm.penalty.has("zero"):
        kind, *box = erm.penalty.subdifferential(w, cert.details.get("kink_tol", 1e-6))
        if kind == "box":
            c, lo, hi = (np.asarray(v, float) for v in box)
            s = base + erm.lam * c
            out[:w.size] = np.maximum(0.0, np.maximum(-(s + erm.lam * hi), s + erm.lam * lo))
        else:       # the ball at w = 0: one figure for all coordinates
            out[:w.size] = cert.distance
    else:
        out[:w.size] = np.abs(base)
    out[:w.size] /= column_rms(erm.X)
    if erm.intercept:
        out[-1] = abs(float(np.sum(g)) / n)
    floor = 1e-3 * math.sqrt(cert.details.get("null_scale", 1.0))
    return out / max(cert.details.get("scale", 1.0), floor)


def _zero_at_large_margins(loss) -> bool:
    """A margin loss that vanishes for every margin >= 1 (hinge, squared hinge): its
    answer depends on the samples below the margin only, as an SVM's on its support."""
    if not loss.margin_based:
        return False
    margins = np.array([1.0, 2.0, 1e3])
    return bool(np.all(loss.value(np.ones(3), margins) == 0.0))


def _erm_support(erm, w: np.ndarray, scores: np.ndarray, ref_w: np.ndarray, tol: float):
    """What "support" means for this ERM problem, and the set of (w, scores)."""
    if erm.penalty.has("sparse") and erm.lam > 0:
        cut = tol * max(float(np.max(np.abs(ref_w))), np.finfo(float).tiny)
        return "features", set(np.flatnonzero(np.abs(w) > cut).tolist())
    if _zero_at_large_margins(erm.loss):
        # hinge-type losses: the samples with a nonzero loss (margin below the hinge)
        values = erm.loss.value(erm.y, scores)
        return "samples", set(np.flatnonzero(values > tol * max(1.0, float(np.max(values, initial=0.0)))).tolist())
    return "none", set()


def _check_erm(claim: Claim, tol: float) -> PartReport:
    erm, sol = claim.problem, claim.solution
    optimum = claim.optimum = certified_optimum(erm)
    cert = erm.optimality(sol, tol=tol, reference=optimum)
    F, F_star = cert.objective, cert.optimal_objective
    gap = (F - F_star) / max(abs(F_star), abs(F), np.finfo(float).tiny)
    w = np.asarray(sol.w, float)
    residual = _erm_residuals(erm, cert, w)
    f = erm.decision_function(sol)
    f_opt = erm.decision_function(optimum)
    kind, mine = _erm_support(erm, w, f, optimum.w, tol)
    _, best = _erm_support(erm, np.asarray(optimum.w), f_opt, optimum.w, tol)
    bad = np.flatnonzero(residual > tol)
    bad = bad[np.argsort(-residual[bad], kind="stable")]
    names = {int(j): ("intercept" if j == w.size else int(j)) for j in bad}
    violators = {names[int(j)]: float(residual[j]) for j in bad}
    rows = (lambda s: _rows(claim, sorted(s))) if kind == "samples" else sorted
    return PartReport(
        label=claim.label, problem=erm.describe(),
        passed=bool(cert.passed and gap <= tol), gap=float(gap), objective=float(F),
        optimum=float(F_star), kkt_violation=float(cert.relative_distance),
        violators=violators, support_kind=kind, support_missing=rows(best - mine),
        support_extra=rows(mine - best), decision=f, optimum_decision=f_opt,
        notes=[f"certificate: {cert.summary()}"])


def check_claim(claim: Claim, tol: float) -> PartReport:
    """The :class:`PartReport` of one claim at ``tol`` (SVM or ERM, by the problem)."""
    return _check_svm(claim, tol) if _is_svm(claim.problem) else _check_erm(claim, tol)
