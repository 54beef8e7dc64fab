"""One route protocol and one chain walker, for every problem that has an exact chain.

A :class:`Route` is one way to a certified answer: its name, whether it applies to a
problem (and why not), its memory estimate, its run, and optionally a second chance when
its point fails the certificate. :func:`walk` tries the routes of a chain in order and
applies the one status rule of the package:

    an answer is "optimal" iff its certificate, recomputed from the data, passes at the
    tolerance asked for; otherwise it is "inaccurate".

The walker keeps the first certified answer; when none certifies, the one with the
smallest violation. It records what it did in the answer's provenance: ``route`` (the
route that produced it), ``fallback_from`` (route -> why it was left: its error, or its
failed certificate) and ``skipped`` (route -> why it did not run: it does not apply, or
its memory estimate exceeds what is available).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..data import available_memory
from ..errors import ConvexLearnError, DataError, ParameterError
from ..solution import Solution

__all__ = ["Route", "walk", "status_of", "ALWAYS_FITS"]

#: Memory estimates below this (bytes) are not checked against the system's free memory.
ALWAYS_FITS = 64 * 2**20


def _applies_always(problem: Any) -> str | None:
    return None


def _no_memory(problem: Any) -> int:
    return 0


@dataclass(frozen=True)
class Route:
    """One way to the exact answer of a problem.

    Attributes
    ----------
    name : str
        What ``provenance["route"]`` records.
    run : callable
        ``run(problem, **context) -> Solution``; raises a
        :class:`~convexlearn.errors.ConvexLearnError` when it finds no point.
    applies : callable, optional
        ``applies(problem) -> None`` when the route can run on the problem, else a short
        reason why not (what it needs).
    memory : callable, optional
        ``memory(problem) -> int``: bytes the route allocates beyond the data, estimated
        before it starts.
    refine : callable, optional
        ``refine(problem, solution, tol) -> Solution | None``: a second chance for a point
        whose certificate failed (a polish onto its active set); the walker certifies what
        it returns and keeps it only when it certifies.
    """

    name: str
    run: Callable[..., Solution]
    applies: Callable[[Any], str | None] = _applies_always
    memory: Callable[[Any], int] = _no_memory
    refine: Callable[..., Solution | None] | None = None


def status_of(report: Any) -> str:
    """The one status rule: "optimal" iff the certificate passed, else "inaccurate"."""
    return "optimal" if report.passed else "inaccurate"


def walk(problem: Any, routes: Sequence[Route], *, certify: Callable[[Solution], Solution],
         violation: Callable[[Any], float], tol: float, context: dict | None = None,
         named: bool = False, no_answer: Callable[[list, dict], Exception] | None = None
         ) -> Solution:
    """Try ``routes`` in order; return the first certified answer, else the best one.

    Parameters
    ----------
    problem : object
        What every route runs on.
    routes : sequence of Route
    certify : callable
        ``certify(solution) -> solution`` with ``solution.report`` set (the problem's
        certificate at ``tol``; it may return an improved solution, e.g. exact zeros).
    violation : callable
        ``violation(report) -> float``: how far a report is from passing, to rank
        uncertified answers (smaller is better).
    tol : float
        The tolerance of the certificate (handed to ``refine``).
    context : dict, optional
        Keyword arguments of every ``run``.
    named : bool
        The user named the first route: once it answers without error, its verdict stands
        (the later routes are its fallback for errors only).
    no_answer : callable, optional
        ``no_answer(failures, skipped) -> Exception`` raised when no route answered
        (failures: list of (name, exception)); by default the last failure is re-raised.

    Returns
    -------
    Solution
        Status set by :func:`status_of`; provenance ``route``, ``fallback_from`` and
        ``skipped`` as the module docstring says.
    """
    context = dict(context or {})
    failures: list[tuple[str, Exception]] = []
    left: dict[str, str] = {}
    skipped: dict[str, str] = {}
    best: Solution | None = None
    available = None
    for route in routes:
        reason = route.applies(problem)
        if reason is not None:
            skipped[route.name] = reason
            continue
        need = route.memory(problem)
        if need > ALWAYS_FITS and available is None:     # ask the system only when it matters
            available = available_memory()
        if available is not None and need > available:
            skipped[route.name] = (f"needs ~{need / 2**30:.2f} GiB (estimate), "
                                   f"{available / 2**30:.2f} GiB available")
            continue
        try:
            solution = certify(route.run(problem, **context))
        except (ParameterError, DataError):
            raise               # the user's call or data are wrong, not the route
        except ConvexLearnError as exc:
            failures.append((route.name, exc))
            left[route.name] = f"{type(exc).__name__}: {exc}"
            continue
        if not solution.report.passed and route.refine is not None:
            refined = route.refine(problem, solution, tol)
            if refined is not None:
                refined = certify(refined)
                if refined.report.passed:
                    solution = refined
        solution.provenance["route"] = route.name
        if best is None or violation(solution.report) < violation(best.report):
            best = solution
        if solution.report.passed:
            best = solution
            break
        left[route.name] = (f"its point failed the certificate (violation "
                            f"{violation(solution.report):.3g} > {tol:g})")
        if named and not failures:
            break
    if best is None:
        if no_answer is not None:
            raise no_answer(failures, skipped)
        if failures:
            raise failures[-1][1]
        raise ConvexLearnError("no route applies: " + "; ".join(
            f"{name}: {why}" for name, why in skipped.items()))
    left.pop(best.provenance["route"], None)
    if left:
        best.provenance["fallback_from"] = left
    if skipped:
        best.provenance["skipped"] = skipped
    best.status = status_of(best.report)
    return best
