"""The one-call path of exact-smo for small C-SVCs (solvers/kernel_svm/small_certified.py,
small_kernels.py) against its numpy reference: the same sets, objectives within the two
certified gaps, the certificate's product within the rounding of two sums; its
certificate fails on a perturbed answer, and a failure hands over to the general path."""

from __future__ import annotations


import numpy as np
import pytest
from sklearn.datasets import make_classification

import convexlearn as cl
from convexlearn.app.generators import blobs
from convexlearn.certify.kkt import kkt_report
from convexlearn.solvers.kernel_svm import certified_smo as certified_module
from convexlearn.solvers.kernel_svm import small_kernels
from convexlearn.solvers.kernel_svm.certified_smo import certified_smo
from convexlearn.solvers.kernel_svm.small_certified import (
    certified_small,
    certified_small_reference,
    small_applies,
)

EPS = np.finfo(float).eps


def _weighted_one_free():
    """10 samples with per-sample costs whose optimum has exactly one free multiplier."""
    rng = np.random.default_rng(51)
    X = rng.normal(size=(10, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=10) > 0, 1.0, -1.0)
    return cl.SVM(X, y, C=1.0, kernel="rbf", gamma=0.1, sample_weight=rng.uniform(0.2, 2, 10))


def _problems():
    X, y = blobs(300, 0, d=2, separation=1.0)[:2]
    Xc, yc = make_classification(250, 10, random_state=0)
    Xc = (Xc - Xc.mean(0)) / Xc.std(0)
    yc = 2.0 * yc - 1.0
    w = np.random.default_rng(3).uniform(0.1, 3.0, yc.size)
    w[::10] = 0.0                                        # weights with zeros: C_i = 0
    shared = cl.SVM(Xc, yc, C=10.0, kernel="rbf", gamma=0.05)
    shared.share_gram(shared.gram_operator.kernel(Xc))   # K in memory (one-vs-one's case)
    pre = cl.SVM(shared.gram_operator.kernel(Xc), yc, C=1.0, kernel="precomputed")
    return {"rbf blobs C=1": cl.SVM(X, y, C=1.0, kernel="rbf"),
            "rbf blobs C=100": cl.SVM(X, y, C=100.0, kernel="rbf"),
            "all at bounds (C=0.01)": cl.SVM(X, y, C=0.01, kernel="rbf"),
            "poly3 clf10": cl.SVM(Xc, yc, C=1.0, kernel="poly", degree=3),
            "weights with zeros": cl.SVM(Xc, yc, C=1.0, kernel="rbf", sample_weight=w),
            "shared Gram": shared, "precomputed": pre, "one free": _weighted_one_free()}


PROBLEMS = _problems()


@pytest.fixture(autouse=True)
def _compiled_loops_loaded():
    """Load the compiled SMO loop, so that certified_smo takes the one-call path."""
    X, y = blobs(600, 0)
    cl.SVM(X, y, C=1.0, kernel="rbf").solve()


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_compiled_equals_reference(name):
    svm = PROBLEMS[name]
    assert small_applies(svm, 200.0)
    fast, start = certified_small(svm, tol=1e-3, kkt_tol=1e-6, gap_tol=1e-9)
    ref = certified_small_reference(svm)
    assert start is None and fast.status == ref.status == "optimal"
    for fast_set, ref_set in ((fast.report.support, ref.report.support),
                              (fast.report.free, ref.report.free),
                              (fast.report.bounded, ref.report.bounded)):
        np.testing.assert_array_equal(fast_set, ref_set)
    # both certified at a relative gap g <= 1e-9: P - P* <= g |P| for each, so the two
    # primal objectives differ by at most the sum of the two gaps
    P_f, P_r = fast.report.primal_objective, ref.report.primal_objective
    bound = (fast.report.relative_gap + ref.report.relative_gap) * max(abs(P_f), abs(P_r))
    assert abs(P_f - P_r) <= bound + 4 * EPS * abs(P_r)
    # the multipliers solve the same face's system (different factorizations)
    scale = float(np.max(svm.C_bounds))
    np.testing.assert_allclose(fast.alpha, ref.alpha, rtol=0, atol=1e-7 * scale)
    assert fast.report.max_violation <= 1e-6 and ref.report.max_violation <= 1e-6
    if name == "all at bounds (C=0.01)":
        assert fast.report.free.size == 0
    if name == "one free":
        assert fast.report.free.size == 1
    if name == "weights with zeros":
        zero = svm.C_bounds == 0.0
        assert np.all(fast.alpha[zero] == 0.0)


@pytest.mark.parametrize("name", ["rbf blobs C=1", "weights with zeros", "shared Gram"])
def test_rows_of_the_call_equal_the_reports_own_pass(name):
    """The report's per-sample rows computed in the call are those the report computes
    itself on the same product and slacks, bit for bit (the same compiled pass on the
    same operations)."""
    svm = PROBLEMS[name]
    fast, _ = certified_small(svm, tol=1e-3, kkt_tol=1e-6, gap_tol=1e-9)
    Kb = _product(svm, svm.y * fast.alpha)           # (deterministic: the call's own)
    own = kkt_report(svm, fast, tol=1e-6, products=np.column_stack([Kb, Kb]))
    for key, value in own.residuals.items():
        np.testing.assert_array_equal(fast.report.residuals[key], value)
    for attribute in ("support", "free", "bounded", "margin_support", "disagreements",
                      "margins"):
        np.testing.assert_array_equal(getattr(fast.report, attribute),
                                      getattr(own, attribute))
    assert fast.report.max_violation == own.max_violation
    assert fast.report.relative_gap == own.relative_gap


@pytest.mark.parametrize("name", ["rbf blobs C=1", "poly3 clf10", "shared Gram"])
def test_certificate_product_from_data(name):
    """K beta of the certificate (fresh kernel columns from X, or the matrix in memory)
    against the Gram operator's numpy product: within n eps sum_j |K_ij beta_j| (two
    sums of n terms) plus the compiled exponential's few ulps (1e-14 relative)."""
    svm = PROBLEMS[name]
    fast, _ = certified_small(svm, tol=1e-3, kkt_tol=1e-6, gap_tol=1e-9)
    beta = svm.y * fast.alpha
    n = beta.size
    got = _product(svm, beta)
    want = svm.gram_products(beta)
    absolute = np.abs(svm.gram_operator.block(np.arange(n), np.arange(n))) @ np.abs(beta)
    assert np.all(np.abs(got - want) <= (2 * n * EPS + 1e-14) * absolute)


def _product(svm, beta):
    """K beta by the certificate's compiled product (the call's)."""
    spec = svm.gram_operator.spec()
    XT = spec.X if spec.code == 4 else np.ascontiguousarray(spec.X.T)
    n = beta.size
    return small_kernels.certificate_products(spec.code, spec.X, XT, spec.K, spec.gamma,
                                              spec.coef0, spec.degree, beta,
                                              np.empty(n, dtype=np.int64), np.empty(n))


def _perturbed(svm, alpha):
    """The report at ``alpha`` moved along a feasible direction (two free multipliers of
    one sign, +-1e-4 C: balanced and inside the box), K beta recomputed from the data."""
    free = np.flatnonzero((alpha > 0) & (alpha < svm.C_bounds))
    same = free[svm.y[free] == svm.y[free[0]]][:2]
    moved = alpha.copy()
    step = 1e-4 * float(np.max(svm.C_bounds))
    moved[same[0]] += step
    moved[same[1]] -= step
    return moved, _product(svm, svm.y * moved)


def test_perturbed_answer_fails_the_certificate():
    svm = PROBLEMS["rbf blobs C=1"]
    fast, _ = certified_small(svm, tol=1e-3, kkt_tol=1e-6, gap_tol=1e-9)
    moved, Kb = _perturbed(svm, fast.alpha)
    sol = cl.Solution(w=None, alpha=moved, b=fast.b, dual_coef=svm.y * moved,
                      xi=np.maximum(0.0, 1.0 - svm.y * (Kb + fast.b)))
    report = kkt_report(svm, sol, tol=1e-6, products=np.column_stack([Kb, Kb]))
    assert not (report.passed and report.relative_gap <= 1e-9)


def test_uncertified_call_hands_over_to_the_general_path(monkeypatch):
    """A compiled answer that fails its certificate (here: perturbed after the call, its
    product recomputed from the data) is not returned; the general path certifies."""
    svm = PROBLEMS["rbf blobs C=1"]
    original = small_kernels.small_solve

    def wrong(*args):
        out = list(original(*args))
        out[2], out[5] = _perturbed(svm, out[2])
        out[11] = None                 # (the report's own pass on the perturbed answer)
        return tuple(out)

    monkeypatch.setattr(small_kernels, "small_solve", wrong)
    fast, start = certified_small(svm, tol=1e-3, kkt_tol=1e-6, gap_tol=1e-9)
    assert fast is None and start is not None
    sol = certified_smo(svm)
    # (the general path; or, the compiled loop then not found loaded since small_solve is
    # replaced here, the tiny dense path that precedes it)
    assert sol.status == "optimal"
    assert sol.provenance.get("loop") in (None, "numpy, tiny dense (tiny_dense)")
    assert sol.n_iter >= start[2] or sol.provenance.get("loop") is not None


def test_polish_failure_hands_over():
    """Every sample twice: K_FF singular, the plain Cholesky refuses it; the general
    path's polish (least squares) certifies from SMO's point."""
    X, y = blobs(150, 0, d=2, separation=1.0)[:2]
    svm = cl.SVM(np.vstack([X, X]), np.concatenate([y, y]), C=1.0, kernel="poly", degree=2)
    fast, start = certified_small(svm, tol=1e-3, kkt_tol=1e-6, gap_tol=1e-9)
    assert fast is None and start[0].shape == (300,)
    sol = certified_smo(svm)
    assert sol.status == "optimal" and sol.provenance.get("loop") is None


def test_route_takes_the_one_call_path():
    sol = PROBLEMS["rbf blobs C=1"].solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "exact-smo"
    assert sol.provenance["loop"] == "compiled, one call (small_kernels)"
    assert sol.report.relative_gap <= 1e-9


def test_not_applicable():
    X, y = blobs(100, 0, d=2, separation=1.0)[:2]
    assert not small_applies(cl.SVM(X, y, C=1.0, kernel="rbf", intercept=False), 200.0)
    assert not small_applies(cl.SVM(X, y, C=np.inf, kernel="rbf"), 200.0)
    assert not small_applies(cl.SVM(X, y, C=1.0, kernel="linear"), 200.0)
    assert not small_applies(cl.SVM(X, y, C=1.0, kernel="rbf"), 0.01)   # cache too small


def test_general_path_when_compiled_loop_not_loaded(monkeypatch):
    """Before the compiled loop is loaded a small problem runs SMO's numpy loop (the
    rent-or-buy rule; a tiny one, n <= tiny_dense.TINY_N, its dense numpy path): the
    one-call path is not taken, its module not loaded."""
    monkeypatch.setattr(certified_module, "_compiled_use", lambda n, intercept: False)
    sol = certified_smo(PROBLEMS["rbf blobs C=1"])
    assert sol.status == "optimal"
    assert sol.provenance.get("loop") in (None, "numpy, tiny dense (tiny_dense)")


