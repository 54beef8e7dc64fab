"""SMO's stopping tolerance before the polish steers only: the certified answer is the same.

certified_smo runs SMO to ``tol`` (m(a) - M(a), in units of the margins), hands its point
to the active-set polish and certifies the result at 1e-9 from the data. A looser SMO
tolerance misreads more of the active set at the hand-over (the polish then moves more
multipliers), but whatever tolerance SMO stops at, the answer that certifies is the
optimum: the same objective to the certificate's 1e-9.
"""

import numpy as np
import pytest
from test_smo import synthetic

import convexlearn as cl
from convexlearn.solvers.kernel_svm import small_certified
from convexlearn.solvers.kernel_svm.c_svc import c_svc_qp
from convexlearn.solvers.kernel_svm.certified_smo import certified_smo
from convexlearn.solvers.kernel_svm.smo import smo_qp

TOLS = (1e-1, 1e-2, 1e-3)


def _problem(kind):
    if kind == "rbf-C100":          # a large free set (most SVs on the margin)
        X, y = synthetic(n=400, d=6, seed=3)
        return cl.SVM(X, y, C=100.0, kernel="rbf", gamma=0.3)
    X, y = synthetic(n=400, d=2, seed=4)   # overlapping: most SVs at their bound
    return cl.SVM(X, y, C=1.0, kernel="rbf", gamma=1.0)


@pytest.mark.parametrize("kind", ["rbf-C100", "rbf-C1"])
@pytest.mark.parametrize("one_call", [True, False])
def test_certified_answer_is_the_same_at_every_smo_tolerance(monkeypatch, kind, one_call):
    if not one_call:            # the general path (the one-call path of small problems off)
        monkeypatch.setattr(small_certified, "small_applies", lambda svm, cache_size: False)
    svm = _problem(kind)
    sols = {tol: certified_smo(svm, tol=tol, kkt_tol=1e-9, gap_tol=1e-9) for tol in TOLS}
    for tol, sol in sols.items():
        assert sol.status == "optimal" and sol.report.passed and sol.report.tol == 1e-9
        assert sol.report.relative_gap <= 1e-9
        assert sol.provenance["smo_tol"][0] == tol
    ref = sols[1e-3].objective
    for sol in sols.values():
        assert abs(sol.objective - ref) <= 1e-9 * abs(ref)
    # and a perturbed answer does not certify (the check above can fail)
    bad = svm.from_alpha(np.clip(sols[1e-1].alpha * (1 + 1e-4), 0.0, svm.C_bounds))
    report = svm.kkt(bad, tol=1e-9)
    assert not (report.passed and report.relative_gap <= 1e-9)


def _misread(alpha, upper, final):
    """Samples whose set (0, free, at the bound) at SMO's point differs from the optimum's."""
    def sets(a):
        cut = 1e-10 * float(np.max(upper))
        return np.where(a <= cut, 0, np.where(a >= upper - cut, 2, 1))
    return int(np.sum(sets(alpha) != sets(final)))


@pytest.mark.parametrize("kind", ["rbf-C1"])      # (C = 100: the numpy loop takes ~20 s)
def test_a_looser_smo_tolerance_misreads_more_of_the_active_set(kind):
    svm = _problem(kind)
    qp = c_svc_qp(svm)
    final = certified_smo(svm, tol=1e-3, kkt_tol=1e-9, gap_tol=1e-9)
    assert final.status == "optimal"
    misread, iterations = {}, {}
    for tol in TOLS:
        res, _, _ = smo_qp(qp, tol=tol, record=False)
        misread[tol] = _misread(res.alpha, qp.upper, final.alpha)
        iterations[tol] = res.n_iter
    # SMO's work grows as the tolerance tightens, and the hand-over's misreads shrink
    assert iterations[1e-1] < iterations[1e-2] < iterations[1e-3]
    assert misread[1e-3] <= misread[1e-2] <= misread[1e-1]
    assert misread[1e-1] > misread[1e-3]
