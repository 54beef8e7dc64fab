"""How far one solution is from another (usually: an iterative method from the exact optimum).

``compare(reference, other, problem)`` reports

* the objective gap  F(other) - F(reference), absolute and relative to max(|F(reference)|, |F(other)|) (floor: the smallest
  normal double, which only avoids 0/0 - never an absolute 1, which makes small objectives
  look solved),
  with F the *primal* objective P(w, b): taken from the KKT report where there is one (the
  ``objective`` of an exact-dual SVM solution is the dual value D(alpha), which would mix a
  lower bound into the comparison), else the solution's ``objective``;
* ||w - w*|| where both solutions carry w (linear problems), and |b - b*|;
* with the problem at hand: the largest difference of the decision functions on the
  training samples, max_i |f(x_i) - f*(x_i)| (the comparison that makes sense for kernel
  expansions, whose coefficients need not be unique);
* the support sets: the symmetric difference of {i : alpha_i > 0} (dual view, from the KKT
  reports) and of {i : m_i <= 1} (primal view). The dual support set of an SVM is unique
  only when the multipliers are; the primal view depends on (w, b) alone.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

import numpy as np

from .solution import Solution, check_same_problem

__all__ = ["compare", "Comparison"]


#: Floor of relative measures: the smallest normal double (avoids 0/0 only).
_TINY = 2.2250738585072014e-308


@dataclass
class Comparison:
    """Result of :func:`compare`.

    Attributes
    ----------
    reference_method, other_method : str
    objective_reference, objective_other : float
        Primal objectives P(w, b) from the KKT reports when available, else each
        solution's ``objective`` (a note says when that is a dual value).
    objective_gap : float
        F(other) - F(reference) (positive when ``other`` is worse on a minimization).
    relative_gap : float
        |objective_gap| / max(|F(reference)|, |F(other)|, tiny) (tiny = the smallest normal
        double).
    w_distance : float or None
        ||w - w*|| (None unless both solutions have w).
    b_difference : float
        |b - b*|.
    decision_difference : float or None
        max_i |f(x_i) - f*(x_i)| on the training data (needs ``problem``).
    support_reference, support_other : ndarray or None
        Support indices (alpha_i > tol) from the KKT reports.
    only_in_reference, only_in_other : ndarray
        The two halves of the symmetric difference of the support sets.
    margin_only_in_reference, margin_only_in_other : ndarray
        The same for the primal view (m_i <= 1 + tol).
    notes : list of str
    """

    reference_method: str
    other_method: str
    objective_reference: float
    objective_other: float
    objective_gap: float
    relative_gap: float
    w_distance: float | None = None
    b_difference: float = float("nan")
    decision_difference: float | None = None
    support_reference: np.ndarray | None = None
    support_other: np.ndarray | None = None
    only_in_reference: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    only_in_other: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    margin_only_in_reference: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    margin_only_in_other: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    notes: list = field(default_factory=list)

    @property
    def same_support(self) -> bool | None:
        """True when the dual support sets are identical (None when unknown)."""
        if self.support_reference is None or self.support_other is None:
            return None
        return self.only_in_reference.size == 0 and self.only_in_other.size == 0

    @property
    def support_difference(self) -> int | None:
        """Size of the symmetric difference of the support sets (None when unknown)."""
        if self.same_support is None:
            return None
        return int(self.only_in_reference.size + self.only_in_other.size)

    def summary(self) -> str:
        """A few lines for people."""
        lines = [f"{self.other_method} vs {self.reference_method}: objective "
                 f"{self.objective_other:.10g} vs {self.objective_reference:.10g} "
                 f"(gap {self.objective_gap:.3e}, relative {self.relative_gap:.2e})"]
        if self.w_distance is not None:
            lines.append(f"  ||w - w*|| = {self.w_distance:.3e}, "
                         f"|b - b*| = {self.b_difference:.3e}")
        if self.decision_difference is not None:
            lines.append(f"  max |f - f*| on the training data = {self.decision_difference:.3e}")
        if self.same_support is not None:
            lines.append(f"  support vectors: {self.support_other.size} vs "
                         f"{self.support_reference.size}; only in reference "
                         f"{self.only_in_reference.tolist()}, only in other "
                         f"{self.only_in_other.tolist()}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _report(solution: Solution, problem):
    if solution.report is not None and hasattr(solution.report, "support"):
        return solution.report
    if problem is not None and hasattr(problem, "kkt"):
        return problem.kkt(solution)
    return None


def _same_problem(reference: Solution, other: Solution, problem) -> None:
    """Refuse solutions of different problems (their recorded fingerprints differ)."""
    for name, sol in (("reference", reference), ("other", other)):
        check_same_problem(sol, None, "compare", name)      # a Solution at all
    recorded = reference.provenance.get("fingerprint")
    if recorded is not None:
        check_same_problem(other, recorded, "compare", "other")
    if problem is not None and hasattr(problem, "fingerprint"):
        for name, sol in (("reference", reference), ("other", other)):
            check_same_problem(sol, problem.fingerprint(), "compare", name)


def compare(reference: Solution, other: Solution, problem: Any = None) -> Comparison:
    """Compare ``other`` with ``reference`` (see the module docstring).

    Parameters
    ----------
    reference, other : Solution
        Both solutions of the same problem; ``reference`` is usually the exact optimum.
    problem : SVM, optional
        Enables the decision-function difference on the training data, and the KKT
        reports of solutions that have none attached.

    Returns
    -------
    Comparison

    Raises
    ------
    ParameterError
        The solutions record different problems in ``provenance["fingerprint"]`` (data or
        parameters differ), or one of them is not a solution of ``problem``.
    """
    _same_problem(reference, other, problem)
    rep_ref, rep_other = _report(reference, problem), _report(other, problem)
    f_ref, f_other = (float(sol.objective) if rep is None else float(rep.primal_objective)
                      for sol, rep in ((reference, rep_ref), (other, rep_other)))
    gap = f_other - f_ref
    cmp = Comparison(reference.method, other.method, f_ref, f_other, gap,
                     abs(gap) / max(abs(f_ref), abs(f_other), _TINY),
                     b_difference=abs(float(other.b) - float(reference.b)))
    for sol, rep in ((reference, rep_ref), (other, rep_other)):
        if rep is None and sol.method == "exact-dual":
            cmp.notes.append(f"the objective of {sol.method} is its dual value D(alpha), not "
                             f"P(w, b): it has no KKT report to take P from (pass the problem)")
    if reference.w is not None and other.w is not None:
        cmp.w_distance = float(np.linalg.norm(np.asarray(other.w) - np.asarray(reference.w)))
    if problem is not None and hasattr(problem, "decision_function"):
        diff = problem.decision_function(other) - problem.decision_function(reference)
        cmp.decision_difference = float(np.max(np.abs(diff)))
    if rep_ref is None or rep_other is None:
        if problem is not None and not hasattr(problem, "kkt"):
            cmp.notes.append("support sets not compared: this problem has no KKT report "
                             "(support vectors are an SVM notion)")
        else:
            cmp.notes.append("support sets not compared: a solution has no KKT report "
                             "(pass the problem to compute one)")
        return cmp
    if rep_ref.tol != rep_other.tol:
        cmp.notes.append(f"the KKT reports use different tolerances ({rep_ref.tol:g} vs "
                         f"{rep_other.tol:g}): support thresholds differ")
    cmp.support_reference, cmp.support_other = rep_ref.support, rep_other.support
    cmp.only_in_reference = np.setdiff1d(rep_ref.support, rep_other.support)
    cmp.only_in_other = np.setdiff1d(rep_other.support, rep_ref.support)
    cmp.margin_only_in_reference = np.setdiff1d(rep_ref.margin_support, rep_other.margin_support)
    cmp.margin_only_in_other = np.setdiff1d(rep_other.margin_support, rep_ref.margin_support)
    return cmp
