"""The route protocol and the one chain walker (convexlearn.routes.chain), on toy routes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from convexlearn.errors import DataError, ParameterError, SolverError
from convexlearn.routes import chain
from convexlearn.routes.chain import Route, status_of, walk
from convexlearn.solution import Solution


@dataclass
class Report:
    violation: float
    tol: float = 1e-9
    passed: bool = field(init=False)

    def __post_init__(self):
        self.passed = self.violation <= self.tol


def answering(violation: float):
    def run(problem, **context):
        problem.append(("ran", context))
        return Solution(w=None, b=0.0, objective=violation, status="converged",
                        method="toy", extra={"violation": violation})
    return run


def failing(exc: Exception):
    def run(problem, **context):
        problem.append(("ran", context))
        raise exc
    return run


def certify(solution: Solution) -> Solution:
    solution.report = Report(solution.extra["violation"])
    return solution


def run_walk(routes, **kwargs):
    calls: list = []
    sol = walk(calls, routes, certify=certify, violation=lambda r: r.violation, tol=1e-9,
               **kwargs)
    return sol, calls


def test_the_first_certified_answer_is_kept_and_later_routes_never_run():
    sol, calls = run_walk([Route("a", answering(1e-3)), Route("b", answering(0.0)),
                           Route("c", answering(0.0))])
    assert sol.provenance["route"] == "b" and sol.status == "optimal"
    assert len(calls) == 2
    assert "failed the certificate" in sol.provenance["fallback_from"]["a"]


def test_without_a_certified_answer_the_smallest_violation_wins_as_inaccurate():
    sol, _ = run_walk([Route("a", answering(1e-3)), Route("b", answering(1e-6)),
                       Route("c", answering(1e-4))])
    assert sol.provenance["route"] == "b" and sol.status == "inaccurate"
    assert set(sol.provenance["fallback_from"]) == {"a", "c"}


def test_a_route_that_does_not_apply_or_does_not_fit_is_skipped_with_its_reason(monkeypatch):
    monkeypatch.setattr(chain, "available_memory", lambda: 2**30)
    sol, calls = run_walk([
        Route("picky", answering(0.0), applies=lambda p: "needs the linear kernel"),
        Route("big", answering(0.0), memory=lambda p: 2**40),
        Route("ok", answering(0.0))])
    assert sol.provenance["route"] == "ok" and len(calls) == 1
    assert sol.provenance["skipped"]["picky"] == "needs the linear kernel"
    assert "GiB available" in sol.provenance["skipped"]["big"]


def test_a_failing_route_hands_over_and_is_recorded():
    sol, _ = run_walk([Route("a", failing(SolverError("diverged"))), Route("b", answering(0.0))])
    assert sol.provenance["fallback_from"] == {"a": "SolverError: diverged"}


@pytest.mark.parametrize("exc", [ParameterError("bad option"), DataError("bad data")])
def test_the_users_errors_are_raised_at_once(exc):
    with pytest.raises(type(exc), match="bad"):
        run_walk([Route("a", failing(exc)), Route("b", answering(0))])


def test_no_answer_raises_the_last_failure_or_the_problems_own_error():
    with pytest.raises(SolverError, match="second"):
        run_walk([Route("a", failing(SolverError("first"))),
                  Route("b", failing(SolverError("second")))])
    with pytest.raises(RuntimeError, match="2 failures"):
        run_walk([Route("a", failing(SolverError("x"))), Route("b", failing(SolverError("y")))],
                 no_answer=lambda failures, skipped: RuntimeError(f"{len(failures)} failures"))


def test_a_named_route_that_answers_keeps_its_own_verdict():
    sol, calls = run_walk([Route("named", answering(1e-3)), Route("fallback", answering(0.0))],
                          named=True)
    assert sol.provenance["route"] == "named" and sol.status == "inaccurate" and len(calls) == 1


def test_refine_is_kept_only_when_it_certifies():
    def refine_to(violation):
        return lambda problem, sol, tol: answering(violation)(problem)
    good, _ = run_walk([Route("a", answering(1e-3), refine=refine_to(0.0))])
    assert good.status == "optimal" and good.provenance["route"] == "a"
    bad, _ = run_walk([Route("a", answering(1e-3), refine=refine_to(1e-2))])
    assert bad.report.violation == 1e-3


def test_the_context_reaches_every_run():
    _, calls = run_walk([Route("a", answering(0.0))], context={"tol": 1e-9, "warm_start": None})
    assert calls == [("ran", {"tol": 1e-9, "warm_start": None})]


def test_the_one_status_rule():
    assert status_of(Report(0.0)) == "optimal" and status_of(Report(1.0)) == "inaccurate"


def test_svm_erm_and_dask_erm_walk_the_same_walker():
    # one walker: every family's chain is made of chain.Route objects
    from convexlearn.routes import erm as erm_routes, svm as svm_routes
    assert all(isinstance(r, Route) for r in svm_routes.ROUTES.values())
    assert all(isinstance(r, Route) for r in erm_routes.ROUTES.values())
    assert all(callable(f) for f in svm_routes.ITERATIVE_METHODS.values())
    assert all(callable(f) for f in erm_routes.ITERATIVE_METHODS.values())
