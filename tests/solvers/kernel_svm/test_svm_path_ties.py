"""Degenerate breakpoints of the exact SVM C-path (svm_path_ties): a breakpoint whose KKT
check fails (several samples at a boundary at one lambda, read through the round-off of an
ill-conditioned elbow system: 2-D data under an rbf kernel) is resolved where it stands by
the warm active-set iteration, not re-anchored, and the segments on both sides of it still
interpolate exactly; the re-anchors that remain (duplicated samples: a singular elbow, whose
solution is not unique) are warm, not cold solves of the whole problem."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_moons

import convexlearn as cl
from convexlearn.routes.svm import exact_c_path
from convexlearn.routes.svm_c_path_certify import certify_breakpoints
from convexlearn.solvers.kernel_svm import svm_path
from convexlearn.solvers.kernel_svm.svm_path import svm_c_path
from helpers import assert_path_point_exact


def _grid():
    """A 10 x 10 integer grid (exact ties of distances), labels from a noisy rule, rbf
    gamma = 0.1 (its elbow systems up to cond ~1e7): re-anchored once before the ties."""
    g = np.arange(10.0)
    X = np.array([(i, j) for i in g for j in g])
    rng = np.random.default_rng(1)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(scale=2.0, size=len(X)) > 9, 1, -1)
    return cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.1)


def _moons():
    """make_moons(200, noise 0.3), standardized, gamma "scale" (the benchmark's sweep at
    n = 200): re-anchored once before the ties."""
    X, y = make_moons(200, noise=0.3, random_state=1)
    return cl.SVM((X - X.mean(axis=0)) / X.std(axis=0), y, C=1.0, kernel="rbf")


def _counting_anchor(svm, calls=None):
    """The path's anchor: a certified solve at C (its C appended to ``calls``)."""
    def anchor(C):
        if calls is not None:
            calls.append(C)
        sol = svm.with_C(C).solve(cert_tol=1e-9)
        return sol.alpha, sol.b
    return anchor


@pytest.mark.parametrize("case", [_grid, _moons])
def test_ties_are_resolved_in_place_certified_and_interpolated_exactly(case):
    svm = case()
    path, solutions = exact_c_path(svm, 0.01, 100.0)
    assert path.reanchored == 0
    ties = [k for k, event in enumerate(path.events) if event.startswith("tie ")]
    assert ties and path.notes == [f"{len(ties)} degenerate breakpoints resolved in place"]
    assert all(s.status == "optimal" for s in solutions)
    assert max(s.report.max_violation for s in solutions) <= 1e-9
    for k in ties:              # the segments ending and starting at the tie are lines
        for j in (k, k + 1):
            if j < len(path.Cs):
                assert_path_point_exact(svm, path, np.sqrt(path.Cs[j - 1] * path.Cs[j]))
    for C in (0.05, 1.0, 30.0):
        assert_path_point_exact(svm, path, C)


def test_without_the_in_place_resolution_the_path_reanchors_warm(monkeypatch):
    real = svm_path._warm

    def not_in_place(Q, y, near, lam, tol, regular=False):
        return None if regular else real(Q, y, near, lam, tol)

    monkeypatch.setattr(svm_path, "_warm", not_in_place)
    svm = _grid()
    calls = []
    anchor = _counting_anchor(svm, calls)
    path = svm_c_path(svm.gram, svm.y, 0.01, 100.0, anchor)
    assert path.reanchored > 0 and calls == [0.01]      # (the first anchor only: warm)
    assert all(s.status == "optimal" for s in certify_breakpoints(svm, path, 1e-9))


def test_duplicated_samples_reanchor_warm_and_certified():
    X, y = load_iris(return_X_y=True)
    keep = y > 0
    svm = cl.SVM(X[keep][:, [2, 3]], y[keep], C=1.0)    # many identical petal pairs
    calls = []
    anchor = _counting_anchor(svm, calls)
    path = svm_c_path(svm.gram, svm.y, 0.1, 3.0, anchor)
    assert path.reanchored > 0 and calls == [0.1]        # (all warm)
    assert all(s.status == "optimal" for s in certify_breakpoints(svm, path, 1e-9))
    for k in np.flatnonzero(np.array(path.events) == "re-anchor")[:3]:
        problem = svm.with_C(path.Cs[k])
        reference = problem.solve(cert_tol=1e-9)
        at = problem.from_alpha(path.alphas[k], b=path.intercepts[k])
        P = problem.primal_objective(at)
        assert abs(P - reference.objective) <= 1e-9 * abs(reference.objective)


def test_a_tie_after_a_missed_crossing_is_reanchored_not_interpolated(monkeypatch):
    """One segment overshoots its event by 2% (a missed crossing, as round-off could make
    it): the breakpoint there fails its check and the warm iteration finds a valid solution
    at that lambda, but the straight segment to it from the breakpoint before is not the
    path (its midpoint violates the KKT conditions at ~5e-3); the tie is refused and the
    path re-anchors, a segment :meth:`SVMPath.at` refuses."""
    real, calls, over = svm_path._segment, [], []

    def overshooting(state, lam, lam_end):
        out = real(state, lam, lam_end)
        calls.append(lam)
        if out is None or out[3] is None or over or len(calls) < 40:
            return out
        lam_next, a, a0, event = out
        f = (0.98 * lam_next - lam) / (lam_next - lam)
        over.append(lam)
        return (0.98 * lam_next, np.clip(state.a + (a - state.a) * f, 0, 1),
                state.a0 + (a0 - state.a0) * f, event)

    monkeypatch.setattr(svm_path, "QUIET", False)
    monkeypatch.setattr(svm_path, "_segment", overshooting)
    X, y = make_moons(80, noise=0.3, random_state=1)
    svm = cl.SVM(X, y, C=1.0, kernel="rbf")
    anchor = _counting_anchor(svm)
    path = svm_c_path(svm.gram, svm.y, 0.01, 100.0, anchor)
    assert over
    start = int(np.argmin(np.abs(np.log(path.Cs * over[0]))))  # the segment from 1/lam
    assert np.isclose(path.Cs[start], 1 / over[0], rtol=1e-12)
    # (the overshot breakpoint itself may pass its check; the next one fails)
    k = next(j for j in range(start + 1, len(path.Cs))
             if path.events[j] == "re-anchor" or path.events[j].startswith("tie "))
    assert path.events[k] == "re-anchor" and k <= start + 2
    with pytest.raises(ValueError, match="re-anchor"):
        path.at(np.sqrt(path.Cs[k - 1] * path.Cs[k]))
    # (the overshot breakpoint is the patch's error, not certified; the ties that remain
    # interpolate exactly)
    for j in (j for j, e in enumerate(path.events) if e.startswith("tie ")):
        assert_path_point_exact(svm, path, np.sqrt(path.Cs[j - 1] * path.Cs[j]))
