"""Solve a problem file with its methods and verify its expectations.

:func:`run_problem` hands the problem to its model kind's adapter
(:mod:`convexlearn.app.adapters`), then compares every ``[expect]`` entry with the facts of
the run: a number ``e`` is met by a value ``a`` when ``|a - e| <= rtol * max(1, |e|)``
(``rtol`` from ``<key>_rtol``, default 1e-6); integers and booleans must be equal;
``max_gap.<method>`` bounds that method's relative gap to the exact reference; and every
exact method must be certified ("optimal": the solver said so *and* the KKT or
optimality check passed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .adapters import ADAPTERS, MethodRow, Progress, RunResult, adapter_for
from .catalogue import Problem
from ..errors import ConvexLearnError

__all__ = ["MethodRow", "Check", "RunResult", "ADAPTERS", "adapter_for", "run_problem",
           "check_expectations"]


@dataclass
class Check:
    """One expectation: what the file says, what the run found, and the verdict."""

    name: str
    expected: Any
    actual: Any
    passed: bool


def _close(actual, expected, rtol) -> bool:
    return actual is not None and abs(actual - expected) <= rtol * max(1.0, abs(expected))


def check_expectations(problem: Problem, result: RunResult) -> list[Check]:
    """Compare every ``[expect]`` entry with the run; exact methods must be certified.

    Numbers use ``<key>_rtol`` (relative, floored at 1); integers and booleans must be
    equal; ``max_gap.<method>`` bounds that method's gap to the exact reference.
    """
    keys = ADAPTERS[problem.kind].expect_keys
    checks = [Check(f"{row.method} certified", "optimal", row.status, row.status == "optimal")
              for row in result.rows if row.method.startswith("exact")]
    for key, expected in problem.expect.items():
        if expected is None or key.endswith("_rtol") or key == "max_gap":
            continue
        actual = result.facts.get(key)
        if keys[key].type == "number":
            passed = _close(actual, expected, problem.expect.get(f"{key}_rtol", 1e-6))
        else:
            passed = actual == expected
        checks.append(Check(key, expected, actual, bool(passed)))
    rows = {row.method: row for row in result.rows}
    for method, bound in (problem.expect.get("max_gap") or {}).items():
        if method in rows:          # a method left out by --methods has nothing to check
            gap = rows[method].gap
            checks.append(Check(f"gap {method}", f"<= {bound:g}", gap,
                                gap is not None and abs(gap) <= bound))
    return checks


def run_problem(problem: Problem, methods: list[str] | None = None, tol: float | None = None,
                progress: Progress | None = None) -> RunResult:
    """Solve ``problem`` with its methods (or ``methods``) and check its expectations.

    Raises
    ------
    ConvexLearnError
        Bad parameters or data (the message starts with the problem file), infeasible or
        unbounded problems, solver failures (including an exact reference that fails its
        own optimality check).
    """
    adapter = adapter_for(problem.kind)
    tol = problem.tol if tol is None else tol
    try:
        methods = adapter.select_methods(problem, methods)   # every name, before any work
        result = adapter.run(problem, methods, tol, progress)
    except ConvexLearnError as exc:
        text = str(exc)
        if not text.startswith(str(problem.path)):
            exc.args = (f"{problem.path}: {text}",) + exc.args[1:]
        raise
    result.checks = check_expectations(problem, result)
    return result
