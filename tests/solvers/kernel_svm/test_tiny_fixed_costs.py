"""The tiny path's short cuts give what the code they replace gave: SMO's step on Python
floats (the compiled loop's clip_pair, same iterates bit for bit), without importing the
compiled module."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification
from sklearn.preprocessing import StandardScaler

import convexlearn as cl
from convexlearn.solvers.kernel_svm.smo_kernels import clip_pair
from convexlearn.solvers.kernel_svm.qp import curvature_floor
from convexlearn.solvers.kernel_svm.tiny_dense import TINY_TOL, tiny_smo


def _tiny_smo_reference(K, y, C, tol, budget):
    """tiny_smo as it was: the step by ``clip_pair.py_func`` on numpy arrays."""
    n = y.size
    alpha = np.zeros(n)
    diag = np.ascontiguousarray(np.diagonal(K))
    k_max = float(diag.max())
    curvature = np.maximum(diag[:, None] + diag[None, :] - 2.0 * K, curvature_floor(k_max))
    v = y - K @ (y * alpha)
    it, converged = 0, False
    while it < budget:
        up = np.where(y > 0, alpha < C, alpha > 0.0)
        low = np.where(y > 0, alpha > 0.0, alpha < C)
        vu, vl = np.where(up, v, -np.inf), np.where(low, v, np.inf)
        i = int(vu.argmax())
        m_val = vu[i]
        if m_val - vl.min() <= tol:
            converged = True
            break
        score = np.maximum(m_val - vl, 0.0)
        score = score * score / curvature[i]
        j = int(score.argmax())
        t = clip_pair.py_func(i, j, (m_val - v[j]) / curvature[i, j], y, C, alpha)
        v += t * (K[j] - K[i])
        it += 1
    return alpha, y - v, it, converged


def _problems():
    X, labels = load_wine(return_X_y=True)
    keep = labels > 0
    Xw, yw = StandardScaler().fit_transform(X[keep]), np.where(labels[keep] == 2, 1.0, -1.0)
    Xc, lc = make_classification(150, 8, flip_y=0.1, random_state=3)
    Xc, yc = StandardScaler().fit_transform(Xc), np.where(lc > 0, 1.0, -1.0)
    costs = np.random.default_rng(0).uniform(0.1, 3.0, yc.size)
    sub = np.random.default_rng(1).permutation(yw.size)[:60]
    return [(Xw, yw, 1.0, "rbf"), (Xw[sub], yw[sub], 100.0, "rbf"),
            (Xc, yc, 0.5, "poly"), (Xc, yc, costs, "rbf")]


@pytest.mark.parametrize("case", range(4))
@pytest.mark.parametrize("tol", [TINY_TOL, 1e-3])
def test_tiny_smo_same_iterates_as_the_clip_pair_loop(case, tol):
    X, y, C, kernel = _problems()[case]
    svm = cl.SVM(X, y, C=1.0, kernel=kernel)
    K = svm.gram_operator.kernel(X, X)
    Cv = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=float), y.shape))
    alpha, g, it, conv = tiny_smo(K, y, Cv, tol, 2000)
    ref_alpha, ref_g, ref_it, ref_conv = _tiny_smo_reference(K, y, Cv, tol, 2000)
    assert it == ref_it > 0 and conv == ref_conv
    np.testing.assert_array_equal(alpha, ref_alpha)
    np.testing.assert_array_equal(g, ref_g)


def test_tiny_fit_does_not_import_the_compiled_smo_module():
    """A process's first small fits (the compiled loop not loaded), by the estimator and
    by SVM.solve, stay in numpy: the compiled modules' dispatchers are not created."""
    code = ("import sys, numpy as np\n"
            "import convexlearn\n"
            "from convexlearn.app.generators import blobs\n"
            "from sklearn.datasets import load_wine\n"
            "from convexlearn.estimators import KernelSVMClassifier\n"
            "X, y = load_wine(return_X_y=True)\n"
            "m = KernelSVMClassifier().fit(X[y > 0], y[y > 0])\n"
            "assert m.solution_.status == 'optimal'\n"
            "assert 'tiny' in m.solution_.provenance['loop']\n"
            "X, y = blobs(200, 0)[:2]\n"
            "assert convexlearn.SVM(X, y, C=1.0, kernel='rbf').solve().status == 'optimal'\n"
            "print(any(k in sys.modules for k in ('convexlearn.solvers.kernel_svm.smo_kernels',\n"
            "                                     'convexlearn.solvers.kernel_svm.small_kernels')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_active_set_gesv_matches_numpy_solve(monkeypatch):
    """LAPACK's gesv called directly gives np.linalg.solve's active-set answer (to
    rounding), and its certificate."""
    from convexlearn.solvers.kernel_svm import tiny_dense

    def numpy_gesv(A, b):
        try:
            return None, None, np.linalg.solve(A, b), 0
        except np.linalg.LinAlgError:
            return None, None, None, 1
    for X, y, C, kernel in _problems():
        svm = cl.SVM(X, y, C=1.0, kernel=kernel)
        K = svm.gram_operator.kernel(X, X)
        Cv = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=float), y.shape))
        alpha = tiny_smo(K, y, Cv, TINY_TOL, 2000)[0]
        got = tiny_dense.active_set_dense(K, y, Cv, alpha)
        with monkeypatch.context() as m:
            m.setattr(tiny_dense, "dgesv", numpy_gesv)
            ref = tiny_dense.active_set_dense(K, y, Cv, alpha)
        assert (got is None) == (ref is None)
        if got is not None:
            np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-12 * Cv.max())
            assert abs(got[1] - ref[1]) <= 1e-10
    # a singular bordered system (two equal samples, both free) hands over, as before
    K = np.ones((2, 2))
    assert tiny_dense.active_set_dense(K, np.array([1.0, -1.0]), np.ones(2),
                                       np.array([0.5, 0.5])) is None


def test_rbf_diagonal_without_norms():
    from convexlearn.gram import kernel_diagonal
    X = np.random.default_rng(0).standard_normal((7, 3))
    kernel = cl.SVM(X, np.array([1.0, -1.0] * 3 + [1.0]), kernel="rbf").gram_operator.kernel
    # exp(-gamma * 0) = 1, as before (the norms were computed, then not used)
    np.testing.assert_array_equal(kernel_diagonal(kernel, X), np.ones(7))
    np.testing.assert_allclose(np.diag(kernel(X, X)), 1.0, rtol=0, atol=1e-14)
