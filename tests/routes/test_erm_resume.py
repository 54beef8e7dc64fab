"""Coordinate descent resumed tighter when its certificate falls short (routes/erm_resume.py)."""

import numpy as np
from helpers import sparse_rows

import convexlearn as cl
from convexlearn.certify.optimality import OptimalityReport
from convexlearn.routes.erm import ROUTES
from convexlearn.routes.erm_resume import CD_RESUME_TOLS, resume_until_certified
from convexlearn.solution import Solution


def _lasso(n=400, d=900, per_row=15, seed=3):
    """Sparse rows, more columns than rows (a lasso near interpolation: many nonzeros)."""
    X, rng = sparse_rows(n, d, per_row, seed)
    y = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)
    lam_max = 2.0 * float(np.abs(X.T @ (y - y.mean())).max()) / n
    return cl.ERM(X, y, "squared", "l1", lam=lam_max / 20)


def test_a_short_cd_answer_is_resumed_until_it_certifies():
    erm = _lasso()
    route = ROUTES["cd"]
    loose = route.run(erm, cd_tol=1e-5)                # stopped far too early
    loose.report = erm.certificate(loose, tol=1e-9)
    assert not loose.report.passed
    refined = route.refine(erm, loose, 1e-9)
    assert refined is not None and refined.report.passed
    assert refined.provenance["resumed"][0] == CD_RESUME_TOLS[0]
    assert erm.certificate(refined, tol=1e-9).passed
    # and the whole chain answers "optimal" by the same route
    sol = erm.solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "cd"


def _report(passed):
    return OptimalityReport(distance=0.0, suboptimality=np.nan, passed=passed, tol=1e-9,
                            objective=1.0, details={})


def test_resume_stops_at_the_first_pass_and_gives_up_with_none():
    ran = []

    def run(sol, tol):
        ran.append(tol)
        return Solution(w=np.zeros(1), b=0.0, objective=1.0, status="converged", method="cd")

    def certify_at(k):
        def certify(sol):
            sol.report = _report(len(ran) >= k)
            return sol
        return certify
    start = Solution(w=np.zeros(1), b=0.0, objective=1.0, status="converged", method="cd")
    out = resume_until_certified(run, certify_at(2), start, (1e-16, 1e-20, 1e-24))
    assert ran == [1e-16, 1e-20] and out.provenance["resumed"] == [1e-16, 1e-20]
    ran.clear()
    assert resume_until_certified(run, certify_at(9), start, (1e-16, 1e-20)) is None
    assert ran == [1e-16, 1e-20]
