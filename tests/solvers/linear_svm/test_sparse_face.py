"""The sparse route's fixed costs: the face solve's box check and the certificate's
extended-precision pass only where it can change the verdict.

* ``face_solve(box_check=...)`` stops at the looser residual on a face whose point left the
  box (fewer iterations, a point outside the box), and on the optimum's face runs to
  ``tol`` with the same answer as without the check;
* ``_needs_wide``: no second pass when the float64 error is small, or when the gap is
  beyond the tolerance by more than the error bound; a second pass otherwise (and for an
  infinite bound); the certificate's verdicts are unchanged (a far point still fails, the
  optimum still passes).
"""

import math

import numpy as np
import pytest
from scipy import sparse

import convexlearn as cl
from convexlearn.solvers.linear_svm import linear_certificate
from convexlearn.solvers.linear_svm.dcd import dcd_linear
from convexlearn.solvers.linear_svm.linear_certificate import certificate
from convexlearn.solvers.linear_svm.linear_sparse import face_solve


def _text_like(n=600, d=300, per_row=8, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(d, size=(n, per_row)), axis=1).ravel()
    X = sparse.csr_matrix((rng.random(n * per_row), cols,
                           np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    w = np.where(rng.random(d) < 0.3, rng.standard_normal(d), 0.0)
    s = X @ w
    y = np.where(s + noise * np.std(s) * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return X, y


def test_box_check_stops_on_a_wrong_face_and_not_on_the_right_one():
    X, y = _text_like(n=300, d=600)         # n < d: every face's system is regular
    n, d = X.shape
    C = np.ones(n)
    mu = np.zeros(d)
    # a rough DCD point: its face is wrong (the face's optimum leaves the box)
    rough = dcd_linear(X, y, C, intercept=False, tol=0.5, max_iter=3, record=False)[0]
    full = face_solve(X, y, C, rough, False, mu)
    checked = face_solve(X, y, C, rough, False, mu, box_check=1e-2)
    free = full[3]
    assert np.any((full[0][free] < 0) | (full[0][free] > 1)), "the test needs a wrong face"
    assert checked[2] < full[2]
    a = checked[0][checked[3]]
    assert np.any((a < -1e-6) | (a > 1 + 1e-6))
    # the optimum's face: the check passes and the solve runs to tol
    sol = cl.SVM(X, y, C=1.0, intercept=False).solve()
    assert sol.status == "optimal"
    exact = face_solve(X, y, C, sol.alpha, False, mu)
    same = face_solve(X, y, C, sol.alpha, False, mu, box_check=1e-2)
    assert same[2] == exact[2]
    np.testing.assert_array_equal(same[0], exact[0])


def test_needs_wide_only_where_the_verdict_can_change():
    tol, scale = 1e-9, 10.0                             # the tolerance: 1e-8 absolute
    needs = linear_certificate._needs_wide
    assert not needs(1e-12, 5e-9, scale, tol)          # float64 accurate enough
    assert needs(5e-9, 5e-9, scale, tol)               # near the tolerance: wide
    assert needs(5e-9, -5e-9, scale, tol)
    assert not needs(5e-9, 1e-3, scale, tol)           # beyond 2 tol + the bound: fails
    assert not needs(5e-9, -1e-3, scale, tol)
    assert needs(1e-6, 5e-7, scale, tol)               # the bound covers the gap
    assert needs(math.inf, 1e-3, scale, tol)           # hard margin at stake
    assert needs(5e-9, math.inf, scale, tol)           # an infinite gap: as before


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_certificate_verdicts_unchanged(shift):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 5)) + shift
    y = np.where(X[:, 0] - shift + 0.3 * rng.standard_normal(300) > 0, 1.0, -1.0)
    sol = cl.SVM(X, y, C=1.0).solve()
    assert sol.status == "optimal"
    good = certificate(X, y, 1.0, True, sol.w, sol.b, sol.alpha)
    assert good["passed"]
    far = certificate(X, y, 1.0, True, sol.w * 1.01, sol.b, sol.alpha)
    assert not far["passed"] and far["relative_gap"] > 1e-6
