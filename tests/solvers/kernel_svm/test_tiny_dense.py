"""The tiny path of exact-smo (solvers/kernel_svm/tiny_dense.py: dense SMO to a loose
tolerance, a dense active-set solve, the certificate), taken while the compiled SMO loop
is not loaded: it certifies, its objective agrees with the general path's within the sum
of the two certified gaps, its certificate fails on a perturbed answer, and when it does
not certify the general path goes on from SMO's point."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

import convexlearn as cl
from convexlearn.app.generators import blobs
from convexlearn.certify.kkt import kkt_report
from convexlearn.solvers.kernel_svm import certified_smo as cs
from convexlearn.solvers.kernel_svm import tiny_dense
from convexlearn.solvers.kernel_svm.small_certified import certified_small_reference
from convexlearn.solvers.kernel_svm.tiny_dense import (
    TINY_N,
    certified_tiny,
    tiny_applies,
)


def _problems():
    X, y = blobs(200, 0, d=2, separation=1.0)[:2]
    Xc, labels = make_classification(150, 8, random_state=1)
    Xc, yc = StandardScaler().fit_transform(Xc), np.where(labels > 0, 1.0, -1.0)
    # per-sample costs, C_i = 0 on every tenth sample
    w = np.where(np.arange(yc.size) % 10 == 0, 0.0,
                 np.random.default_rng(4).uniform(0.1, 3.0, yc.size))
    pre = cl.SVM(cl.SVM(Xc, yc, kernel="rbf", gamma=0.1).gram_operator.kernel(Xc), yc,
                 C=1.0, kernel="precomputed")
    return {"rbf blobs C=1": cl.SVM(X, y, C=1.0, kernel="rbf"),
            "rbf blobs C=100": cl.SVM(X, y, C=100.0, kernel="rbf"),
            "all at bounds (C=0.01)": cl.SVM(X, y, C=0.01, kernel="rbf"),
            "poly3": cl.SVM(Xc, yc, C=1.0, kernel="poly", degree=3),
            "weights with zeros": cl.SVM(Xc, yc, C=1.0, kernel="rbf", sample_weight=w),
            "precomputed": pre}


PROBLEMS = _problems()


def _extended_objectives(svm, solution):
    """P(alpha, b) and D(alpha) of the C-SVM in extended precision (np.longdouble), on the
    kernel matrix computed from the data in extended precision: an oracle independent of
    the library's kernel code and of its float64 roundings."""
    L = np.longdouble
    kernel = svm.gram_operator.kernel
    X = None if svm.X is None else np.asarray(svm.X).astype(L)
    if kernel.name == "rbf":
        K = np.exp(-L(kernel.gamma) * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    elif kernel.name == "poly":
        K = (L(kernel.gamma) * (X @ X.T) + L(kernel.coef0)) ** int(kernel.degree)
    else:
        assert kernel.name == "precomputed"
        K = np.asarray(svm.gram).astype(L)          # the data themselves
    y, a = svm.y.astype(L), np.asarray(solution.alpha, float).astype(L)
    C = np.broadcast_to(np.asarray(svm.C_bounds, float), svm.y.shape).astype(L)
    f = K @ (y * a)
    xi = np.maximum(L(0), 1 - y * (f + L(solution.b)))
    half = (y * a) @ f / 2
    return half + C @ xi, a.sum() - half


@pytest.fixture
def not_loaded(monkeypatch):
    """certified_smo as in a process without the compiled loop (the rent-or-buy rule's
    numpy side)."""
    monkeypatch.setattr(cs, "compiled_loop_loaded", lambda intercept=True: False)
    monkeypatch.setattr(cs, "_numpy_loop_cpu", [0.0])


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_tiny_path_certifies_and_matches_the_general_path(name):
    svm = PROBLEMS[name]
    assert tiny_applies(svm)
    tiny, start, _ = certified_tiny(svm, kkt_tol=1e-6, gap_tol=1e-9)
    ref = certified_small_reference(svm)          # SMO's numpy loop and the general polish
    assert start is None and ref.status == "optimal"
    report = tiny.report
    assert report.passed and report.relative_gap <= 1e-9
    # Both certified: recomputed on one kernel matrix in extended precision, each answer's
    # gap P - D is at most 1e-9 of its scale, and since D <= P* <= P for each, the primal
    # objectives differ by at most the sum of the two gaps. (Each report's figures are
    # evaluated on the kernel its own path computed, whose float64 roundings move an
    # objective of ~1e4 by ~1e-10, beyond 4 eps |P|: the comparison needs one kernel.)
    (P_t, D_t), (P_r, D_r) = _extended_objectives(svm, tiny), _extended_objectives(svm, ref)
    scale = max(abs(P_t), abs(D_t), abs(P_r), abs(D_r), 1.0)
    assert P_t - D_t <= 1e-9 * scale and P_r - D_r <= 1e-9 * scale
    assert abs(P_t - P_r) <= (P_t - D_t) + (P_r - D_r) + 64 * np.finfo(np.longdouble).eps * scale
    # feasible: in the box and balanced
    C = np.broadcast_to(svm.C_bounds, svm.y.shape)
    assert np.all(tiny.alpha >= 0) and np.all(tiny.alpha <= C)
    assert abs(svm.y @ tiny.alpha) <= 1e-12 * svm.n_samples * float(np.max(C))


def test_certified_smo_takes_the_tiny_path_and_counts_its_cpu(not_loaded):
    svm = PROBLEMS["rbf blobs C=1"]
    sol = cs.certified_smo(svm)
    assert sol.status == "optimal"
    assert sol.provenance["loop"] == "numpy, tiny dense (tiny_dense)"
    assert sol.provenance["smo_tol"] == [tiny_dense.TINY_TOL]
    assert cs._numpy_loop_cpu[0] > 0                 # the rent-or-buy rule's rent


def test_perturbed_answer_fails_the_certificate():
    svm = PROBLEMS["rbf blobs C=1"]
    tiny, _, _ = certified_tiny(svm, kkt_tol=1e-6, gap_tol=1e-9)
    alpha = tiny.alpha
    free = np.flatnonzero((alpha > 0) & (alpha < svm.C_bounds))
    same = free[svm.y[free] == svm.y[free[0]]][:2]   # two of one sign: stays balanced
    moved = alpha.copy()
    moved[same[0]] += 1e-4
    moved[same[1]] -= 1e-4
    Kb = svm.gram_products(svm.y * moved)
    sol = cl.Solution(w=None, alpha=moved, b=tiny.b, dual_coef=svm.y * moved,
                      xi=np.maximum(0.0, 1.0 - svm.y * (Kb + tiny.b)))
    report = kkt_report(svm, sol, tol=1e-6)
    assert not (report.passed and report.relative_gap <= 1e-9)


def test_active_set_failure_hands_over_to_the_general_path(not_loaded, monkeypatch):
    """No rounds: the active-set solve gives up, SMO's loose point goes to the general
    path (its SMO from that point, its polish), which certifies."""
    real = tiny_dense.active_set_dense
    monkeypatch.setattr(tiny_dense, "active_set_dense",
                        lambda K, y, C, alpha: real(K, y, C, alpha, rounds=0))
    svm = PROBLEMS["rbf blobs C=1"]
    tiny, start, n_iter = certified_tiny(svm, kkt_tol=1e-6, gap_tol=1e-9)
    assert tiny is None and n_iter > 0
    assert np.all(start >= 0) and np.all(start <= 1.0) and abs(svm.y @ start) < 1e-10
    sol = cs.certified_smo(svm)
    assert sol.status == "optimal" and sol.provenance.get("loop") != "numpy, tiny dense (tiny_dense)"
    assert sol.n_iter > n_iter                       # the tiny path's iterations counted


def test_uncertified_answer_hands_over(not_loaded, monkeypatch):
    """An active-set answer that fails its certificate (perturbed) is not returned."""
    real = tiny_dense.active_set_dense

    def perturbed(K, y, C, alpha):
        a, b, g = real(K, y, C, alpha)
        return a, b + 1e-3, g
    monkeypatch.setattr(tiny_dense, "active_set_dense", perturbed)
    svm = PROBLEMS["rbf blobs C=1"]
    assert certified_tiny(svm, kkt_tol=1e-6, gap_tol=1e-9)[0] is None
    sol = cs.certified_smo(svm)
    assert sol.status == "optimal" and sol.provenance.get("loop") != "numpy, tiny dense (tiny_dense)"


def test_not_applicable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(TINY_N + 1, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    assert not tiny_applies(cl.SVM(X, y, C=1.0, kernel="rbf"))
    assert not tiny_applies(cl.SVM(X[:50], y[:50], C=1.0, kernel="rbf", intercept=False))
    assert tiny_applies(cl.SVM(X[:50], y[:50], C=1.0, kernel="rbf"))


def test_singular_gram_certifies_or_hands_over(not_loaded):
    """Every sample twice (K singular, poly2): the dense solve either certifies or its
    residual check refuses the system and the general path (least squares) certifies."""
    X, y = blobs(150, 0, d=2, separation=1.0)[:2]
    svm = cl.SVM(np.vstack([X, X]), np.concatenate([y, y]), C=1.0, kernel="poly", degree=2)
    tiny, start, _ = certified_tiny(svm, kkt_tol=1e-6, gap_tol=1e-9)
    assert (tiny is None) != (start is None)
    sol = cs.certified_smo(svm)
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_active_set_product_is_the_reports_product(name):
    # certified_tiny hands active_set_dense's g to the report as its product K beta: that
    # holds only if g is K @ (y * a) itself, bit for bit (not a running gradient)
    svm = PROBLEMS[name]
    n = svm.n_samples
    K = np.ascontiguousarray(svm.gram_operator.block(np.arange(n), np.arange(n)))
    y = np.asarray(svm.y, dtype=float)
    C = np.ascontiguousarray(np.broadcast_to(np.asarray(svm.C_bounds, float), (n,)))
    alpha = tiny_dense.tiny_smo(K, y, C, tiny_dense.TINY_TOL, tiny_dense.TINY_BUDGET)[0]
    out = tiny_dense.active_set_dense(K, y, C, alpha)
    assert out is not None
    a, _, g = out
    assert np.array_equal(g, K @ (y * a))


def test_max_by_argmax_is_the_maximum():
    rng = np.random.default_rng(0)
    for x in (rng.normal(size=95), rng.normal(size=(7, 9)), np.array([-3.0])):
        assert tiny_dense._max(x) == float(np.max(x))
    assert np.isnan(tiny_dense._max(np.array([1.0, np.nan, 5.0])))      # as np.max


def test_wine_fit_on_the_tiny_path_matches_the_general_path(not_loaded, monkeypatch):
    # the estimator's binary fit (the benchmark's case: wine's classes 1 and 2, one fold)
    # on the tiny path and with the tiny path switched off: both certified, same objective
    from sklearn.datasets import load_wine
    from convexlearn.estimators import KernelSVMClassifier
    X, y = load_wine(return_X_y=True)
    keep = y > 0
    X, y = StandardScaler().fit_transform(X[keep])[:95], y[keep][:95]
    tiny = KernelSVMClassifier().fit(X, y)
    assert tiny.solution_.provenance["loop"] == "numpy, tiny dense (tiny_dense)"
    monkeypatch.setattr(cs, "tiny_applies", lambda svm: False)
    general = KernelSVMClassifier().fit(X, y)
    assert general.solution_.provenance.get("loop") != "numpy, tiny dense (tiny_dense)"
    for model in (tiny, general):
        assert model.solution_.status == "optimal"
        assert model.kkt_.passed and model.kkt_.relative_gap <= 1e-9
    P_t, P_g = tiny.kkt_.primal_objective, general.kkt_.primal_objective
    bound = (tiny.kkt_.relative_gap + general.kkt_.relative_gap) * max(abs(P_t), abs(P_g))
    assert abs(P_t - P_g) <= bound + 4 * np.finfo(float).eps * max(abs(P_t), abs(P_g))
    assert np.array_equal(tiny.predict(X), general.predict(X))
