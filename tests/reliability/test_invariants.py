"""Ten invariants of the problems, 200 hypothesis examples each, on small random data.

1 relabeling (any two labels; swapping the classes flips w), 2 permutation of the samples,
3 feature scaling (X -> s X with C -> C / s^2 gives w -> w / s, P -> P / s^2),
4 a duplicated sample = weight 2, 5 sign(0) = +1, 6 the KKT check of the exact answer
passes, 7 a perturbed answer fails it, 8 separable iff the hard margin is feasible,
9 compare(x, x) = 0 and save/load round trip (fingerprint included), 10 a translation
X -> X + c moves only b.
"""

import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import convexlearn as cl

EXAMPLES = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(0, 2**32 - 1)


def data(seed: int, n_max: int = 10):
    """Small Gaussian data with both classes, a shift and a random feature scale."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(4, n_max + 1)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-1, 1, size=d)
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
    y[:2] = (1, -1)
    C = float(10.0 ** rng.uniform(-1, 1))
    return rng, X, y, C


def smo(X, y, C, **kw):
    """SMO (fast) to a tight tolerance; the exact route where SMO does not certify within
    a small budget (w = 0 optima, all samples bounded, stall SMO: seed 1024285981 of
    data() runs 100000 iterations without reaching tol=1e-9)."""
    svm = cl.SVM(X, y, C=C, **kw)
    sol = svm.solve("smo", tol=1e-7, max_iter=2000)
    if sol.status != "optimal":
        sol = svm.solve()
    assert sol.status == "optimal", sol
    return sol


def w_close(a, b, scale, X):
    """w agree to 1e-5 of ||w||, or of 1 / max|x| when w ~ 0 (w is in units of 1/x)."""
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * max(scale, 1.0 / np.abs(X).max()))


def objectives_agree(a, b, fa=1.0, fb=1.0):
    """fa P_a = fb P_b up to what the two certificates allow: each primal objective is
    within its duality gap P - D of the optimum, so |fa P_a - fb P_b| <= fa gap_a + fb gap_b."""
    ra, rb = a.report, b.report
    diff = abs(fa * ra.primal_objective - fb * rb.primal_objective)
    allowed = fa * abs(ra.duality_gap) + fb * abs(rb.duality_gap)
    # plus the round-off of P itself (1e-9 relative, the exactness level of the project)
    assert diff <= allowed + 1e-9 * abs(fa * ra.primal_objective), (diff, allowed)


@EXAMPLES
@given(SEEDS)
def test_1_relabeling(seed):
    _, X, y, C = data(seed)
    ref = smo(X, y, C)
    named = smo(X, np.where(y > 0, "spam", "ham"), C)        # 'ham' -> -1, 'spam' -> +1
    swapped = smo(X, np.where(y > 0, 0, 1), C)              # 1 -> +1 is now the y = -1 class
    scale = np.linalg.norm(ref.w)
    w_close(named.w, ref.w, scale, X)
    w_close(swapped.w, -ref.w, scale, X)


@EXAMPLES
@given(SEEDS)
def test_2_permutation(seed):
    rng, X, y, C = data(seed)
    perm = rng.permutation(len(y))
    ref, other = smo(X, y, C), smo(X[perm], y[perm], C)
    w_close(other.w, ref.w, np.linalg.norm(ref.w), X)
    objectives_agree(other, ref)


@EXAMPLES
@given(SEEDS, st.floats(-3, 3))
def test_3_feature_scaling_changes_C_by_the_law(seed, log_s):
    _, X, y, C = data(seed)
    s = 10.0 ** log_s
    ref, scaled = smo(X, y, C), smo(s * X, y, C / s**2)
    w_close(s * scaled.w, ref.w, np.linalg.norm(ref.w), X)
    objectives_agree(scaled, ref, fa=s**2)


@EXAMPLES
@given(SEEDS)
@example(seed=32597)
def test_4_duplicate_sample_is_weight_two(seed):
    # both sides certified exact: the invariant is the problem's. SMO at tol 1e-7 as the
    # duplicated side was off by 9.5e-7 in w_0 on seed 32597 (optimum w = 0, feature
    # scales 0.15 and 17), beyond 1e-5 / max|x|
    rng, X, y, C = data(seed, n_max=8)
    i = int(rng.integers(len(y)))
    dup = cl.SVM(np.vstack([X, X[i]]), np.r_[y, y[i]], C=C).solve()
    assert dup.status == "optimal"
    weights = np.ones(len(y))
    weights[i] = 2.0
    weighted = cl.SVM(X, y, C=C, sample_weight=weights).solve()
    assert weighted.status == "optimal"
    w_close(weighted.w, dup.w, np.linalg.norm(dup.w), X)
    objectives_agree(weighted, dup)


@EXAMPLES
@given(SEEDS, st.sampled_from([(-1, 1), (0, 1), ("a", "b"), (False, True)]))
def test_5_sign_of_zero_is_plus_one(seed, labels):
    _, X, y, C = data(seed)
    y_named = np.where(y > 0, labels[1], labels[0])
    svm = cl.SVM(X, y_named, C=C)
    zero = cl.Solution(w=np.zeros(X.shape[1]), b=0.0)      # f = 0 everywhere
    assert np.all(svm.predict(zero) == labels[1])
    assert svm.label_map.to_labels(np.array([0.0]))[0] == labels[1]


@EXAMPLES
@given(SEEDS)
def test_6_7_kkt_of_the_exact_answer_passes_and_a_perturbed_one_fails(seed):
    rng, X, y, C = data(seed)
    svm = cl.SVM(X, y, C=C)
    sol = svm.solve()
    assert sol.status == "optimal" and svm.kkt(sol).passed
    # Invariant 7: move w by 1e-3 of its norm in a random direction; b recomputed as is.
    direction = rng.normal(size=X.shape[1])
    size = max(np.linalg.norm(sol.w), 1.0 / np.abs(X).max())     # w may be 0
    bad = cl.Solution(w=sol.w + 1e-3 * size * direction / np.linalg.norm(direction), b=sol.b)
    assert not svm.kkt(bad).passed


@EXAMPLES
@given(SEEDS)
def test_8_separable_iff_hard_margin_feasible(seed):
    rng, X, y, _ = data(seed)
    if rng.random() < 0.5:      # make half of them separable by a random hyperplane
        w = rng.normal(size=X.shape[1])
        y = np.where(X @ w >= np.median(X @ w), 1, -1)
    separable = cl.Halfspace(X, y).check(margin=False, slack=False)
    assert separable.verified
    try:
        sol = cl.SVM(X, y, C=None).solve()
    except cl.InfeasibleError:
        feasible = False
    else:
        feasible = True
        assert sol.status == "optimal"
    assert separable.separable == feasible


@EXAMPLES
@given(SEEDS)
def test_9_compare_with_itself_is_zero_and_save_load_round_trips(seed):
    _, X, y, C = data(seed)
    svm = cl.SVM(X, y, C=C)
    sol = smo(X, y, C)
    cmp = cl.compare(sol, sol, svm)
    assert cmp.objective_gap == 0 and cmp.w_distance == 0 and cmp.b_difference == 0
    assert cmp.decision_difference == 0 and cmp.same_support
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sol.json")
        sol.save(path)
        back = cl.load(path)
    np.testing.assert_array_equal(back.w, sol.w)
    np.testing.assert_array_equal(back.alpha, sol.alpha)
    assert back.b == sol.b and back.status == sol.status
    assert back.provenance["fingerprint"] == svm.fingerprint()    # the fingerprint survives
    assert cl.compare(sol, back, svm).objective_gap == 0


@EXAMPLES
@given(SEEDS, st.floats(-6, 6))
# found by hypothesis: before its null-space KKT step the exact linear route did not certify
# this shifted problem (data 1e4 from the origin, 5 samples, 2 features) and the chain fell
# back to the cvxpy dual, whose answer failed this test
@example(seed=2984, log_shift=4.0)
def test_10_translation_moves_only_the_intercept(seed, log_shift):
    rng, X, y, C = data(seed)
    c = rng.normal(size=X.shape[1]) * 10.0 ** log_shift
    ref, moved = smo(X, y, C), cl.SVM(X + c, y, C=C).solve()
    assert moved.status == "optimal", moved
    # P is 1-strongly convex in w: ||w - w*||^2 / 2 <= P(w) - P* <= the duality gap, so two
    # certified answers differ by at most sqrt(2 gap_a) + sqrt(2 gap_b) (the exact route on
    # data 1e6 from the origin certifies at gap ~1e-10 relative, not at round-off).
    bound = sum(np.sqrt(2 * abs(s.report.duality_gap)) for s in (moved, ref))
    np.testing.assert_allclose(moved.w, ref.w, rtol=0,
                               atol=bound + 1e-5 * max(np.linalg.norm(ref.w), 1 / np.abs(X).max()))
    objectives_agree(moved, ref)


pytestmark = pytest.mark.slow
