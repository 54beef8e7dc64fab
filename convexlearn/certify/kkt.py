"""The KKT report of the soft- and hard-margin SVM, recomputed from the data.

KKT conditions of the C-form SVM (docs/conventions.md), with margins
m_i = y_i f(x_i) and a = alpha:

=======================  ======================================  ==========================
condition                 per-sample residual r_i                 scaled by
=======================  ======================================  ==========================
stationarity             ||w - sum_i a_i y_i phi(x_i)||          s_w (below)
balance (intercept)      |sum_i a_i y_i|                         s_a
primal_feasibility       max(0, 1 - xi_i - m_i)                  1 (margins are unitless)
slack_nonnegativity      max(0, -xi_i)                           1
dual_feasibility         max(0, -a_i, a_i - C)                   s_a
complementary_margin     a_i |m_i - 1 + xi_i|                    s_a
complementary_slack      (C - a_i) xi_i                          s_a
duality_gap              |P(w, b) - D(a)|                        max(|P|, |D|, floor)
=======================  ======================================  ==========================

The duality gap is relative to the objectives themselves (:func:`relative_gap`), never to
an absolute 1 that would make a small objective look solved: at C = 1e-6 the objective is
~1e-6 n and a gap of 1e-9 of it is what "exact" asks. The floor (the smallest normal
double, 2.2e-308) only avoids 0/0: P = 0 needs w = 0 and xi = 0, which no problem with
both classes present has.

``s_a`` is the scale of the multipliers: C (max_i C_i with sample weights, where each
sample has its own bound C_i = C s_i in place of C) for the soft margin, max(1, max_i a_i)
for the hard margin, so every residual is dimensionless and a single ``tol`` applies.
The stationarity norm is taken in feature space; for a kernel expansion
f = sum_j beta_j k(x_j, .) + b it is sqrt((beta - y a)^T K (beta - y a)). It is the
difference of two vectors that cancel, each a sum of n terms, so its round-off is eps times
the size of those terms, not of the result: it is scaled by

    s_w = max(||w||, sum_i |a_i| ||phi(x_i)||)       (||phi(x_i)|| = sqrt(K_ii))

(``sum_i |beta_i| ||phi(x_i)||`` in place of ||w|| for an expansion), the triangle bound
of both sums, as the ERM certificate scales ||X^T r|| by ||X|| ||r||. Every residual is
then free of units: X -> c X with C -> C / c^2 (the same problem: alpha -> alpha / c^2,
w -> w / c) scales s_w and the residual alike, and leaves the verdict unchanged.

Slacks: the solution's own ``xi`` when it has one (slack form), otherwise the optimal
slack for (w, b), xi_i = max(0, 1 - m_i). In the latter case the two feasibility rows
of the soft margin hold by construction, and the content of the check lies in
complementary slackness (a_i = C wherever m_i < 1, a_i = 0 wherever m_i > 1).

Support vectors. From the dual view: support a_i > t s_a, bounded a_i >= C - t s_a,
free in between (t the tolerance). From the primal view: m_i < 1 - t requires a_i = C,
m_i > 1 + t requires a_i = 0, a free SV requires |m_i - 1| <= t. A sample whose two views
contradict is listed in ``disagreements``.
"""

from __future__ import annotations

from typing import Any

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import lsq_linear

from ..errors import NotApplicableError
from .kkt_kernels import compiled_ready, kkt_pass

__all__ = ["KKTReport", "kkt_report", "relative_gap", "solution_multipliers", "svm_kkt",
           "reconstruct_multipliers", "gram_factor", "dual_qp_objectives", "CONDITIONS",
           "svm_kkt_rows", "worst_residual"]

CONDITIONS = ("stationarity", "balance", "primal_feasibility", "slack_nonnegativity",
              "dual_feasibility", "complementary_margin", "complementary_slack", "duality_gap")

_WORST_SHOWN = 5
#: The per-sample rows of svm_kkt_rows / kkt_pass, in their order.
_ROWS = ("primal_feasibility", "slack_nonnegativity", "dual_feasibility",
         "complementary_margin", "complementary_slack")
#: The index sets of the report, in svm_kkt_rows' order.
_SETS = ("support", "free", "bounded", "margin_support", "disagreements")


@dataclass(repr=False)
class KKTReport:
    """KKT conditions of an SVM solution, each residual recomputed from the data.

    Attributes
    ----------
    passed : bool
        Every scaled residual (and the relative duality gap) is <= ``tol``.
    tol : float
    max_violation : float
        The largest scaled residual over all conditions and samples.
    duality_gap : float
        P(w, b) - D(alpha), absolute.
    relative_gap : float
        |P - D| / max(|P|, |D|, floor) (:func:`relative_gap`).
    primal_objective, dual_objective : float
    residuals : dict[str, ndarray or float]
        Scaled residual per condition, per sample where the condition is per sample.
        Conditions that do not apply (balance without intercept, slack terms of the hard
        margin) are absent.
    support, free, bounded : ndarray of int
        Index sets from the dual view (alpha).
    margin_support : ndarray of int
        Primal view: samples with m_i <= 1 + tol (on or inside the margin).
    disagreements : ndarray of int
        Samples whose dual and primal views of "support vector" contradict each other.
    margins : ndarray
        m_i = y_i f(x_i).
    alpha : ndarray
        The multipliers used (the solution's, or reconstructed).
    notes : list of str
        What was reconstructed or could not be checked.
    gap_tol : float or None
        Set by the exact routes that certify by the relative duality gap (``exact-smo``,
        ``exact-linear``: |P - D| / max(|P|, |D|) <= gap_tol, 1e-9): the tolerance the
        answer is certified at, which :meth:`summary` states first.
    """

    passed: bool
    tol: float
    max_violation: float
    duality_gap: float
    relative_gap: float
    primal_objective: float
    dual_objective: float
    residuals: dict
    support: np.ndarray
    free: np.ndarray
    bounded: np.ndarray
    margin_support: np.ndarray
    disagreements: np.ndarray
    margins: np.ndarray
    alpha: np.ndarray
    notes: list = field(default_factory=list)
    gap_tol: float | None = None

    def __getattr__(self, name: str) -> Any:
        # The index sets of a report built by :func:`svm_kkt` from its numpy rows are
        # computed on first read (from ``_sets``: the bounds, s_a, tol; ``alpha`` and
        # ``margins`` are fields); the verdict never reads them. (Only names missing from
        # the instance arrive here.)
        lazy = self.__dict__.get("_sets")
        if name not in _SETS or lazy is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        for key, value in zip(_SETS, _index_sets(self.alpha, self.margins, *lazy)):
            self.__dict__[key] = value
        del self.__dict__["_sets"]
        return self.__dict__[name]

    def worst(self) -> dict[str, float]:
        """Largest scaled residual of each condition."""
        return {name: float(np.max(r)) if np.ndim(r) else float(r)
                for name, r in self.residuals.items()}

    def violations(self) -> list[tuple[str, float, list[int]]]:
        """Conditions above ``tol``: (name, worst residual, worst samples)."""
        out = []
        for name, r in self.residuals.items():
            worst = float(np.max(r)) if np.ndim(r) else float(r)
            if worst > self.tol:
                samples = ([] if not np.ndim(r) else
                           [int(i) for i in np.argsort(-r)[:_WORST_SHOWN] if r[i] > self.tol])
                out.append((name, worst, samples))
        return out

    def summary(self) -> str:
        """A few lines for people: verdict, worst residuals, support counts."""
        if self.gap_tol is not None and self.passed:
            head = (f"CERTIFIED at {self.gap_tol:g} (relative duality gap "
                    f"{self.relative_gap:.2e} <= {self.gap_tol:g}); KKT residuals: max "
                    f"{self.max_violation:.2e} (margin units, each <= {self.tol:g}), duality "
                    f"gap {self.duality_gap:.3e}")
        else:
            head = (f"KKT check {'PASSED' if self.passed else 'FAILED'} at tol={self.tol:g}: "
                    f"max violation {self.max_violation:.2e}, duality gap "
                    f"{self.duality_gap:.3e} (relative {self.relative_gap:.2e})")
        lines = [head,
                 f"  primal objective {self.primal_objective:.10g}, dual objective "
                 f"{self.dual_objective:.10g}",
                 f"  support vectors: {self.support.size} ({self.free.size} free, "
                 f"{self.bounded.size} bounded); on/inside the margin: "
                 f"{self.margin_support.size}; disagreements: {self.disagreements.size}"]
        for name, value in self.worst().items():
            flag = "  <-- violated" if value > self.tol else ""
            lines.append(f"  {name:22s} {value:.2e}{flag}")
        for name, _, samples in self.violations():
            if samples:
                lines.append(f"  {name} violated at samples {samples}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        # a few lines: the arrays (margins, alpha, residuals) are for inspection
        return (f"<KKTReport {'passed' if self.passed else 'FAILED'} at tol={self.tol:g}: "
                f"max violation {self.max_violation:.2e}, relative gap "
                f"{self.relative_gap:.2e}, n={self.alpha.size}, {self.support.size} support "
                f"vectors ({self.free.size} free); .summary() for the conditions>")


def reconstruct_multipliers(features: np.ndarray, y: np.ndarray, C: float, intercept: bool,
                            w: np.ndarray, margins: np.ndarray, band: float) -> np.ndarray:
    """Multipliers for a solution that has none, by bounded least squares.

    ``features`` is a factor Phi (n x r) of the Gram matrix, K = Phi Phi^T (X itself for
    the linear kernel), and ``w`` the primal point in that feature space (for a kernel
    expansion beta, w = Phi^T beta). Complementary slackness fixes a_i = C where
    m_i < 1 - band and a_i = 0 where m_i > 1 + band; on the margin band the a_i in [0, C]
    minimize

        ||w - sum_i a_i y_i phi_i||^2 + (sum_i a_i y_i)^2   (the last term with intercept)

    so that the stationarity and balance residuals of the report measure how well any
    admissible multiplier explains w.
    """
    n = y.shape[0]
    upper = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    alpha = np.zeros(n)
    below = margins < 1 - band
    on = ~below & (margins <= 1 + band)
    alpha[below] = np.where(np.isfinite(upper[below]), upper[below], 0.0)
    # columns y_i (phi_i, 1), formed for the margin band only: products elsewhere, so a
    # sparse X stays sparse (the band's block is dense, |band| columns)
    ya = y * alpha * below
    fixed = features.T @ ya
    target = np.asarray(w, dtype=float) - np.asarray(fixed).ravel()
    if intercept:
        target = np.append(target, -float(ya.sum()))
    idx = np.flatnonzero(on & (upper > 0))     # C_i = 0 (weight 0): a_i = 0 is forced
    if idx.size:
        block = features[idx]
        block = block.toarray() if hasattr(block, "toarray") else np.asarray(block)
        A_band = block.T * y[idx][None, :]
        if intercept:
            A_band = np.vstack([A_band, y[idx][None, :]])
        fit = lsq_linear(A_band, target, bounds=(np.zeros(idx.size), upper[idx]),
                         method="bvls")
        alpha[idx] = fit.x
    return alpha


def gram_factor(K: np.ndarray) -> np.ndarray:
    """A factor Phi with Phi Phi^T = K (eigenvalues below zero from round-off dropped)."""
    eigvals, eigvecs = np.linalg.eigh(K)
    keep = eigvals > eigvals[-1] * 1e-13
    return eigvecs[:, keep] * np.sqrt(eigvals[keep])


#: Denominator floor of :func:`relative_gap` (only avoids 0/0; see the module docstring).
GAP_FLOOR = float(np.finfo(float).tiny)


def relative_gap(primal: float, dual: float) -> float:
    """The relative duality gap |P - D| / max(|P|, |D|, GAP_FLOOR).

    Scale-free: multiplying the objective by s (X by sqrt(s) with a linear kernel, or C
    and K by s) leaves it unchanged.
    """
    return abs(primal - dual) / max(abs(primal), abs(dual), GAP_FLOOR)


def dual_qp_objectives(signs: np.ndarray, target: np.ndarray, upper: Any, alpha: np.ndarray,
                       g: np.ndarray, b: Any, delta: Any = 0.0) -> tuple[float, float]:
    """(P, D) of the dual QP min 1/2 a^T Q a + p^T a, s^T a = delta, 0 <= a <= u
    (:mod:`convexlearn.solvers.kernel_svm.qp`) at a feasible a with multiplier b.

    With Q_ij = s_i s_j K_ij, g = K (s * a) (computed by blocks by the caller), the target
    t = -s * p and G = s (g + b - t) (the gradient of the Lagrangian)::

        D = -F(a) = (s t)^T a - 1/2 (s a)^T g
        P = 1/2 (s a)^T g + b delta + sum_{u_i finite} u_i max(0, -G_i)

    P - D = a^T G - b (s^T a - delta) + sum_i u_i max(0, -G_i) is the Lagrangian duality
    gap, >= 0 at a feasible a and 0 exactly at an optimum; for the C-SVC (s = y, t = y,
    delta = 0) P is the primal objective 1/2 ||w||^2 + sum_i C_i xi_i at (w, b) and D the
    dual objective. Variables without an upper bound (the hard margin) add no term: there
    G_i >= 0 is primal feasibility, which the KKT report checks on its own row.

    The nu-problems have one row per sign instead (sum_{s_i = +1} a_i = delta_+,
    sum_{s_i = -1} a_i = delta_-): ``b`` = (b_+, b_-) and ``delta`` = (delta_+, delta_-)
    are pairs, variable i takes b_{s_i} in G, and the multipliers of the rows are b_+ and
    -b_-, so that P has b_+ delta_+ - b_- delta_- in place of b delta.
    """
    if np.ndim(b):
        b_pos, b_neg = (float(x) for x in b)
        d_pos, d_neg = (float(x) for x in delta)
        b = np.where(signs > 0, b_pos, b_neg)
        offset = b_pos * d_pos - b_neg * d_neg
    else:
        offset = b * delta
    sa = signs * alpha
    aQa = float(sa @ g)
    st = signs * target
    # (the C-SVC's s t = 1: summed as before, for the same roundings)
    linear = float(alpha.sum()) if np.all(st == 1.0) else float(st @ alpha)
    upper = np.broadcast_to(np.asarray(upper, dtype=float), alpha.shape)
    finite = np.isfinite(upper)
    primal = 0.5 * aQa + offset
    if finite.any():
        hinge = np.maximum(0.0, -signs * (g + b - target))
        primal += float(upper @ hinge) if finite.all() else float(upper[finite] @ hinge[finite])
    return primal, linear - 0.5 * aQa


def svm_kkt(y: np.ndarray, C: float, intercept: bool, alpha: np.ndarray, f: np.ndarray,
            w_norm2: float, alpha_Q_alpha: float, stationarity: float,
            xi: np.ndarray | None = None, tol: float = 1e-6, notes: Any = (),
            stationarity_scale: float | None = None, rows: tuple | None = None) -> KKTReport:
    """Evaluate the KKT conditions from precomputed quantities.

    Parameters
    ----------
    y : ndarray of {-1, +1}
    C : float or ndarray
        ``inf`` for the hard margin; per-sample bounds C_i = C s_i for weighted samples.
    intercept : bool
    alpha : ndarray
        Multipliers.
    f : ndarray
        Decision values f(x_i) (including b) at the training samples.
    w_norm2 : float
        ||w||^2 of the primal point.
    alpha_Q_alpha : float
        alpha^T Q alpha = ||sum_i alpha_i y_i phi(x_i)||^2.
    stationarity : float
        ||w - sum_i alpha_i y_i phi(x_i)|| in feature space.
    stationarity_scale : float, optional
        s_w of the module docstring (the size of the terms that cancel in the
        stationarity residual); default ||w||.
    xi : ndarray, optional
        The solution's slacks; default max(0, 1 - m).
    tol : float
    notes : iterable of str
    rows : tuple, optional
        The per-sample pass (:func:`~convexlearn.certify.kkt_kernels.kkt_pass`'s return
        value) on these y, C, alpha, f, xi and ``tol``, when a compiled caller ran it
        already (the one-call small SVM); computed here otherwise.
    """
    alpha = np.asarray(alpha, dtype=float)
    C = np.asarray(C, dtype=float)
    if C.ndim == 0:              # (one C: no reduction over a broadcast vector)
        C_value = float(C)
        hard = math.isinf(C_value)
        C = np.full(alpha.shape, C_value)
        s_a = max(1.0, float(alpha.max())) if hard else C_value   # (= C.max(), no pass)
    else:                        # (a writeable copy: a read-only view is another
        C = np.array(np.broadcast_to(C, alpha.shape))  # compiled signature of kkt_pass)
        hard = bool(np.all(np.isinf(C)))
        s_a = max(1.0, float(alpha.max())) if hard else float(C.max())
    s_w = math.sqrt(max(w_norm2, 0.0)) if stationarity_scale is None else stationarity_scale
    use_xi = xi is not None and not hard
    xi = np.asarray(xi, dtype=float) if use_xi else np.zeros(0)
    args = (np.asarray(y, dtype=float), C, alpha, np.asarray(f, dtype=float), xi, use_xi,
            hard, s_a, float(tol))
    lazy = None
    if rows is not None:
        m, xi_used, rows, top, *sets = rows
    elif compiled_ready() and alpha.ndim == 1:
        # one compiled pass, the same operations as svm_kkt_rows (kkt_kernels)
        m, xi_used, rows, top, *sets = kkt_pass(*(np.ascontiguousarray(a) if
                                                  isinstance(a, np.ndarray) else a
                                                  for a in args))
    else:
        # the rows now, the index sets (not part of the verdict) when first read:
        # ~20 vector operations less per report (a fixed cost of every small fit)
        m, xi_used, rows, top = _kkt_rows(*args)
        sets, lazy = [None] * len(_SETS), (C, hard, s_a, float(tol))
    support, free, bounded, margin_support, disagreements = sets
    res = {"stationarity": stationarity / max(s_w, GAP_FLOOR) if stationarity else 0.0}
    if intercept:
        res["balance"] = abs(float(alpha @ y)) / s_a
    res["primal_feasibility"] = rows[0]
    if not hard:
        res["slack_nonnegativity"] = rows[1]
    res["dual_feasibility"] = rows[2]
    res["complementary_margin"] = rows[3]
    if not hard:
        res["complementary_slack"] = rows[4]
    primal = 0.5 * w_norm2 + (0.0 if hard else float(C @ xi_used))
    dual = float(alpha.sum()) - 0.5 * alpha_Q_alpha
    gap = primal - dual
    rel_gap = relative_gap(primal, dual)
    res["duality_gap"] = rel_gap
    # the largest residual, in the order of ``res``: each row's maximum from the pass
    # (``top``, in _ROWS' order; the slack rows are not in ``res`` for the hard margin),
    # the scalars as they are: one list (a dict of the row maxima, a lookup and np.ndim per
    # key made ~6 of svm_kkt's ~15 us, a fixed cost of each of a one-vs-one fit's 45 problems)
    if m.size:
        tops = top.tolist()
        values = [res["stationarity"], res["balance"]] if intercept else [res["stationarity"]]
        values += [tops[0], tops[2], tops[3]] if hard else tops
        values.append(rel_gap)
    else:
        values = [float(np.max(r)) if np.ndim(r) else float(r) for r in res.values()]
    max_violation = worst_residual(values)
    report = KKTReport(
        passed=bool(max_violation <= tol), tol=tol, max_violation=max_violation,
        duality_gap=gap, relative_gap=rel_gap, primal_objective=primal, dual_objective=dual,
        residuals=res, support=support, free=free, bounded=bounded,
        margin_support=margin_support, disagreements=disagreements, margins=m, alpha=alpha,
        notes=list(notes))
    if lazy is not None:
        for name in _SETS:
            del report.__dict__[name]
        report.__dict__["_sets"] = lazy
    return report


def worst_residual(values: Any) -> float:
    """The largest of the residuals ``values`` (floats), NaN when any is NaN (a NaN
    intercept, margin or slack): Python's max() skips a NaN that follows a number, and
    ``max_violation <= tol`` must then fail."""
    values = list(values)
    return max(values) if all(v == v for v in values) else math.nan


def svm_kkt_rows(y: np.ndarray, C: np.ndarray, alpha: np.ndarray, f: np.ndarray,
                 xi: np.ndarray, use_xi: bool, hard: bool, s_a: float, tol: float) -> tuple:
    """The per-sample rows and index sets of the KKT report, in numpy: the reference of
    :func:`~convexlearn.certify.kkt_kernels.kkt_pass` (its docstring has the formulas;
    the same return values, the row maxima as ``np.max`` of each row)."""
    m, xi_used, rows, top = _kkt_rows(y, C, alpha, f, xi, use_xi, hard, s_a, tol)
    return (m, xi_used, rows, top, *_index_sets(alpha, m, C, hard, s_a, tol))


def _kkt_rows(y: np.ndarray, C: np.ndarray, alpha: np.ndarray, f: np.ndarray,
              xi: np.ndarray, use_xi: bool, hard: bool, s_a: float, tol: float) -> tuple:
    """(m, xi_used, rows, top) of :func:`svm_kkt_rows`: what the verdict reads."""
    m = y * f
    xi_used = xi if use_xi else np.maximum(0.0, 1.0 - m)
    if hard:
        xi_used = np.zeros_like(m)
    rows = np.zeros((5, m.size))
    rows[0] = np.maximum(0.0, 1.0 - xi_used - m)
    if not hard:
        rows[1] = np.maximum(0.0, -xi_used)
    upper = np.maximum(0.0, alpha - C) if not hard else np.zeros_like(alpha)
    rows[2] = np.maximum(np.maximum(0.0, -alpha), upper) / s_a
    rows[3] = np.abs(alpha) * np.abs(m - 1.0 + xi_used) / s_a
    if not hard:
        rows[4] = np.abs(C - alpha) * np.abs(xi_used) / s_a
    top = np.max(rows, axis=1) if m.size else np.full(5, -np.inf)
    return m, xi_used, rows, top


def _index_sets(alpha: np.ndarray, m: np.ndarray, C: np.ndarray, hard: bool, s_a: float,
                tol: float) -> tuple:
    """(support, free, bounded, margin_support, disagreements) of :func:`svm_kkt_rows`."""
    a_tol = tol * s_a
    support = alpha > a_tol
    at_upper = alpha >= C - a_tol if not hard else np.zeros_like(support)
    bounded = support & at_upper
    free = support & ~bounded
    margin_support = m <= 1 + tol
    # (at_upper without support: C_i = 0, a weight-0 sample, absent from the problem)
    disagree = ((support & (m > 1 + tol))                       # SV strictly outside the margin
                | (~at_upper & (m < 1 - tol))                   # margin violator not at C
                | (free & (np.abs(m - 1) > tol)))               # free SV off the margin
    return (np.flatnonzero(support), np.flatnonzero(free), np.flatnonzero(bounded),
            np.flatnonzero(margin_support), np.flatnonzero(disagree))


def solution_multipliers(svm: Any, solution: Any, band: float) -> tuple[np.ndarray, str | None]:
    """The multipliers of ``solution``: its own, or rebuilt when it has none.

    Taken from the expansion (alpha = y beta) for a linear solution that carries one, else
    rebuilt by bounded least squares (:func:`reconstruct_multipliers`) with margin band
    ``band``: in X for a linear w, in the factor Phi of K (``svm.gram_factor``) for a kernel
    expansion, where beta need not equal y alpha when K is singular.

    Returns
    -------
    alpha : ndarray
    note : str or None
        How alpha was obtained, when it was not the solution's own.
    """
    y = svm.y
    if solution.alpha is not None:
        return np.asarray(solution.alpha, float), None
    f = svm.decision_function(solution)
    if svm.kernel.is_linear and solution.w is not None:
        if solution.dual_coef is not None:
            return (y * np.asarray(solution.dual_coef, float),
                    "multipliers taken from the expansion: alpha = y * dual_coef")
        alpha = reconstruct_multipliers(svm.X, y, svm.C_bounds, svm.intercept,
                                        np.asarray(solution.w, float), y * f, band)
        return alpha, (f"multipliers reconstructed from (w, b) by bounded least squares "
                       f"(margin band +-{band:g})")
    if solution.dual_coef is None:
        raise NotApplicableError("a kernel SVM solution needs dual_coef or alpha; "
                                 "this one has neither")
    Phi = svm.gram_factor
    alpha = reconstruct_multipliers(Phi, y, svm.C_bounds, svm.intercept,
                                    Phi.T @ np.asarray(solution.dual_coef, float), y * f, band)
    return alpha, (f"multipliers reconstructed from the expansion by bounded least squares "
                   f"in a factor of K (margin band +-{band:g})")


def kkt_report(svm: Any, solution: Any, tol: float = 1e-6,
               products: np.ndarray | None = None, rows: tuple | None = None) -> KKTReport:
    """The KKT report of ``solution`` for the SVM problem ``svm``, recomputed from the data.

    Works for any solution: with w (linear kernel) or a kernel expansion (``dual_coef``),
    with or without multipliers; missing multipliers come from
    :func:`solution_multipliers` with margin band 10 tol, and the report's ``notes`` say so.
    ``products`` (kernel expansions only): K [beta, y alpha] (n x 2), when the caller formed
    it from ``svm``'s Gram matrix for many solutions at once (one matrix product for the
    exact C-path's breakpoints instead of one pass over K each). ``rows``: the
    per-sample pass on that product and the solution's slacks, computed by the caller
    (:func:`svm_kkt`).
    """
    y, b = svm.y, float(solution.b)
    alpha, note = solution_multipliers(svm, solution, band=max(tol, 1e-9) * 10)
    notes = [] if note is None else [note]
    norms = np.sqrt(np.maximum(svm.gram_operator.diagonal, 0.0))     # ||phi(x_i)||
    if svm.kernel.is_linear and solution.w is not None:
        w = np.asarray(solution.w, float)
        f = svm.X @ w + b
        v = svm.X.T @ (y * alpha)
        w_norm2, aQa = float(w @ w), float(v @ v)
        stationarity = float(np.linalg.norm(w - v))
        scale = max(math.sqrt(w_norm2), float(np.abs(alpha) @ norms))
    else:
        # K [beta, y alpha] in one pass, by blocks of rows against the support only
        # (svm.gram_products): O(block x n_SV) memory, no n x n matrix at scale.
        beta = (np.asarray(solution.dual_coef, float) if solution.dual_coef is not None
                else y * alpha)
        ya = y * alpha
        if products is None and np.array_equal(beta, ya):
            # the same vector (a dual solver's expansion): one column, not two
            Kb = Kya = np.asarray(svm.gram_products(beta), dtype=float).reshape(-1)
        else:
            if products is None:
                products = svm.gram_products(np.column_stack([beta, ya]))
            Kb, Kya = products[:, 0], products[:, 1]
        f = Kb + b
        diff = beta - ya
        w_norm2, aQa = float(beta @ Kb), float(ya @ Kya)
        stationarity = math.sqrt(max(float(diff @ (Kb - Kya)), 0.0))
        scale = max(float(np.abs(beta) @ norms), float(np.abs(alpha) @ norms))
    return svm_kkt(y, svm.C_bounds, svm.intercept, alpha, f, w_norm2, aQa, stationarity,
                   xi=solution.xi, tol=tol, notes=notes, stationarity_scale=scale, rows=rows)
