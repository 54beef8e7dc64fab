"""The exact linear SVM on sparse input (CSR, CSC), and hinge + l2 ERM through it.

* ``solve()`` on CSR and on CSC equals ``solve()`` on the dense copy (objective to 1e-9
  relative, w, b), certified at a relative duality gap of 1e-9, X never densified;
* the sparse certificate equals the dense one on the same point, and fails on a perturbed
  answer (w moved, b moved, a multiplier moved);
* its extended-precision evaluation equals the dense one;
* hinge + l2 ERM on CSR goes through the SVM route, certified at 1e-9 by the solver's
  multipliers (no dense block of the samples on the margin);
* a route that needs X dense refuses a sparse X above the limit and names the route that
  takes it;
* ``face_solve(box_check=...)`` stops at the looser residual on a face whose point left the
  box (fewer iterations, a point outside the box), and on the optimum's face runs to
  ``tol`` with the same answer as without the check;
* the certificate's extended-precision pass only where the verdict can change
  (``_needs_wide``), its verdicts unchanged (a far point fails, the optimum passes).
"""

import math

import numpy as np
import pytest
from scipy import sparse

import convexlearn as cl
from convexlearn import data
from convexlearn.errors import DataError
from convexlearn.solvers.linear_svm import linear_certificate
from convexlearn.solvers.linear_svm.dcd import dcd_linear
from convexlearn.solvers.linear_svm.linear_certificate import certificate
from convexlearn.solvers.linear_svm.linear_sparse import face_solve


def _text_like(n=400, d=150, per_row=6, seed=0, noise=0.3):
    """Rows with a few positive values, labels from a planted sparse w with noise."""
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(d, size=(n, per_row)), axis=1).ravel()
    X = sparse.csr_matrix((rng.random(n * per_row), cols,
                           np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    w = np.where(rng.random(d) < 0.3, rng.standard_normal(d), 0.0)
    s = X @ w
    y = np.where(s + noise * np.std(s) * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_exact_equals_dense(intercept, fmt):
    X, y = _text_like()
    svm = cl.SVM(X.asformat(fmt), y, C=1.0, intercept=intercept)
    sol = svm.solve(cert_tol=1e-9)
    assert sparse.issparse(svm.X)                 # never densified
    assert sol.status == "optimal" and sol.provenance["route"] == "exact-linear"
    assert sol.extra["certificate"]["relative_gap"] <= 1e-9
    ref = cl.SVM(X.toarray(), y, C=1.0, intercept=intercept).solve()
    assert ref.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    # the optimum's w is unique (strictly convex in w), b is where free vectors exist
    np.testing.assert_allclose(sol.w, ref.w, atol=1e-6 * np.abs(ref.w).max())
    assert sol.b == pytest.approx(ref.b, abs=1e-6)


def test_sparse_exact_with_weights_and_small_C():
    X, y = _text_like(seed=3)
    weights = np.random.default_rng(1).uniform(0.2, 2.0, size=y.size)
    for C in (0.05, 20.0):
        sol = cl.SVM(X, y, C=C, sample_weight=weights).solve()
        ref = cl.SVM(X.toarray(), y, C=C, sample_weight=weights).solve()
        assert sol.status == ref.status == "optimal"
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9)


def test_sparse_certificate_equals_dense_and_fails_when_perturbed():
    X, y = _text_like(seed=2)
    svm = cl.SVM(X, y, C=1.0)
    sol = svm.solve()
    C = np.full(y.size, 1.0)
    args = (y, C, True)
    cert_s = certificate(X, *args, sol.w, sol.b, sol.alpha)
    cert_d = certificate(X.toarray(), *args, sol.w, sol.b, sol.alpha)
    assert cert_s["passed"] and cert_d["passed"]
    assert cert_s["primal"] == pytest.approx(cert_d["primal"], rel=1e-13)
    assert cert_s["dual"] == pytest.approx(cert_d["dual"], rel=1e-13)
    w = sol.w.copy()
    w[np.argmax(np.abs(w))] *= 1 + 1e-5
    assert not certificate(X, *args, w, sol.b, sol.alpha)["passed"]
    assert not certificate(X, *args, sol.w, sol.b + 1e-5, sol.alpha)["passed"]
    alpha = sol.alpha.copy()
    free = np.flatnonzero((alpha > 1e-3) & (alpha < 1 - 1e-3))
    alpha[free[0]] *= 0.9
    assert not certificate(X, *args, sol.w, sol.b, alpha)["passed"]
    # the KKT report, by sparse products too, fails on the perturbed w
    assert not svm.kkt(cl.Solution(w=w, b=sol.b, alpha=sol.alpha), tol=1e-9).passed


def test_wide_evaluation_sparse_equals_dense():
    X, y = _text_like(seed=4)
    rng = np.random.default_rng(0)
    w, a = rng.standard_normal(X.shape[1]), rng.random(y.size)
    np.testing.assert_array_equal(linear_certificate._wide_margins(X, y, w, 0.3),
                                  linear_certificate._wide_margins(X.toarray(), y, w, 0.3))
    wide_s = linear_certificate._wide_expansion(X, y * a)
    wide_d = linear_certificate._wide_expansion(X.toarray(), y * a)
    np.testing.assert_allclose(wide_s.astype(float), wide_d.astype(float), rtol=1e-15)
    np.testing.assert_allclose(linear_certificate.row_sq_norms(X),
                               linear_certificate.row_sq_norms(X.toarray()), rtol=1e-14)


@pytest.mark.parametrize("intercept", [True, False])
def test_hinge_l2_erm_on_sparse_goes_through_the_svm_route(intercept):
    X, y = _text_like(seed=5)
    lam = 1.0 / y.size
    erm = cl.ERM(X, y, "hinge", "l2", lam=lam, intercept=intercept)
    sol = erm.solve()
    assert sparse.issparse(erm.X)
    assert sol.status == "optimal" and sol.provenance["route"] == "svm"
    assert sol.report.details["method"].startswith("the solver's multipliers")
    ref = cl.ERM(X.toarray(), y, "hinge", "l2", lam=lam, intercept=intercept).solve()
    assert ref.status == "optimal"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    # the solver's multipliers perturbed: the certificate fails on them and on the point
    bad = cl.Solution(w=sol.w * (1 + 1e-5), b=sol.b)
    assert not erm.certificate(bad, tol=1e-9).passed


def test_dense_routes_refuse_big_sparse_and_name_the_sparse_route(monkeypatch):
    X, y = _text_like(n=200, d=60)
    monkeypatch.setattr(data, "DENSIFY_LIMIT_BYTES", 1000)
    svm = cl.SVM(X, y, C=1.0)
    sol = svm.solve()           # the chain skips the cvxpy routes, the linear one answers
    assert sol.status == "optimal" and sparse.issparse(svm.X)
    for method in ("exact-dual", "exact-primal", "smo"):
        with pytest.raises(DataError, match=r"method='exact' \(route 'exact-linear'.*"
                                            r"O\(nnz \+ n \+ d\)"):
            cl.SVM(X, y, C=1.0).solve(method)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_row_norms_by_blocks_equal_dense(monkeypatch, fmt):
    from convexlearn import gram
    from convexlearn.kernels import make_kernel
    X, _ = _text_like(n=300, d=80, per_row=5, seed=6)
    X = sparse.lil_matrix(X)
    X[7] = 0.0                                  # empty rows inside and at the ends
    X[0] = 0.0
    X[299] = 0.0
    X[11, :] = np.arange(80.0)                  # a row longer than a block
    X = sparse.csr_matrix(X).asformat(fmt)
    expect = np.einsum("ij,ij->i", X.toarray(), X.toarray())
    for block in (7, 64, 2**18):                # blocks inside rows, across rows, all of X
        monkeypatch.setattr(data, "ROW_NORM_BLOCK", block)
        np.testing.assert_allclose(data.row_sq_norms(X), expect, rtol=1e-14, atol=0)
        np.testing.assert_allclose(gram.kernel_diagonal(make_kernel("linear"), X),
                                   expect, rtol=1e-14, atol=0)


def test_sparse_row_norms_make_no_copy_of_x():
    # X.multiply(X) held two copies of the values and int64 indices: 84 MB on 42 MB of data
    import tracemalloc
    X, _ = _text_like(n=60000, d=5000, per_row=20, seed=7)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        data.row_sq_norms(X)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    size = X.data.nbytes + X.indices.nbytes
    assert peak < 3 * 8 * X.shape[0] + 8 * data.ROW_NORM_BLOCK + size / 4, \
        f"{peak / 1e6:.1f} MB for {size / 1e6:.1f} MB of data"


def test_column_norms_by_blocks_equal_dense(monkeypatch):
    from convexlearn.certify.optimality import column_rms
    X, _ = _text_like(n=300, d=80, per_row=5, seed=8)
    dense = X.toarray()
    expect = np.sqrt(np.einsum("ij,ij->j", dense, dense) / 300)
    expect[expect == 0] = 1.0
    for block in (7, 2**18):
        monkeypatch.setattr(data, "ROW_NORM_BLOCK", block)
        for fmt in ("csr", "csc"):
            np.testing.assert_allclose(column_rms(X.asformat(fmt)), expect, rtol=1e-14)


def test_box_check_stops_on_a_wrong_face_and_not_on_the_right_one():
    X, y = _text_like(n=300, d=600, per_row=8)   # n < d: every face's system is regular
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
