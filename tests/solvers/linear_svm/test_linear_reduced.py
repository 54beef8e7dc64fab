"""The active-set polish on DCD's candidate samples (.linear_reduced).

* from a DCD point with more free multipliers than p (small C, no intercept; and with an
  intercept at a large C), it returns a KKT point on every row whose certificate passes at
  1e-9 (recomputed from the data), equal to the cvxpy dual's optimum, after active-set
  steps on a few rows only;
* a perturbed answer fails the certificate;
* zero sample weights (C_i = 0) are no violators on either side;
* ``c_fixed`` of ``active_set`` is the same problem as the rows it stands for.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification

import convexlearn as cl
from convexlearn.solvers.linear_svm import linear_reduced
from convexlearn.solvers.linear_svm.dcd import dcd_linear
from convexlearn.solvers.linear_svm.linear_active_set import active_set
from convexlearn.solvers.linear_svm.linear_certificate import certificate


def _scaled(X, y, C, intercept):
    """(Zs, y, Cs, Zy, mu, sigma2) as the exact route scales the problem."""
    n, d = X.shape
    mu = X.mean(axis=0) if intercept else np.zeros(d)
    Z = X - mu
    s2 = float(np.mean(np.einsum("ij,ij->i", Z, Z)))
    Zs = Z / np.sqrt(s2)
    Cs = np.broadcast_to(np.asarray(C, dtype=float), (n,)) * s2
    Zy = y[:, None] * (np.column_stack([Zs, np.ones(n)]) if intercept else Zs)
    return Zs, Cs, Zy, mu, s2


def _case(name):
    if name == "small C, no intercept":
        X, y = make_classification(5000, 50, flip_y=0.1, random_state=7)
        return X, np.where(y > 0, 1.0, -1.0), 1e-3, False, (3e-2, 60)
    X, y = make_blobs(2000, 2, centers=2, cluster_std=1.0, random_state=7)
    return X, np.where(y > 0, 1.0, -1.0), 1e3, True, (1e-2, 300)


@pytest.mark.parametrize("name", ["small C, no intercept", "large C, intercept"])
def test_reduced_polish_certifies_from_dcd_with_too_many_free(name, monkeypatch):
    X, y, C, intercept, (tol, epochs) = _case(name)
    Zs, Cs, Zy, mu, s2 = _scaled(X, y, C, intercept)
    alpha, w, b, _, _, _ = dcd_linear(Zs, y, Cs, intercept=intercept, tol=tol,
                                      max_iter=epochs, seed=0, center=False, record=False)
    p = Zy.shape[1]
    free = (alpha > 1e-8 * Cs.max()) & (alpha < Cs * (1 - 1e-8))
    assert free.sum() > p            # the case the w-space polish refuses
    rows = []
    original = linear_reduced.active_set

    def recorded(R, *args, **kwargs):
        rows.append(R.shape[0])
        return original(R, *args, **kwargs)
    monkeypatch.setattr(linear_reduced, "active_set", recorded)
    u0 = np.append(w, b) if intercept else w
    # (from DCD's loose point: more steps than the route's default allows after a refined
    # run)
    found = linear_reduced.reduced_active_set(Zy, Cs, intercept, alpha, u0, float(Cs.max()),
                                              max_steps=300)
    assert found is not None and rows and max(rows) <= 8 * p < X.shape[0]
    a, w2, b2, steps = found
    w_user = w2 / np.sqrt(s2)
    b_user = b2 - float(w_user @ mu) if intercept else 0.0
    cert = certificate(X, y, C, intercept, w_user, b_user, a / s2)
    assert cert["passed"] and abs(cert["relative_gap"]) <= 1e-9
    assert not certificate(X, y, C, intercept, w_user * (1 + 1e-6), b_user, a / s2)["passed"]
    ref = cl.SVM(X, y, C=C, kernel="linear", intercept=intercept).solve("exact-dual")
    assert cert["primal"] == pytest.approx(ref.objective, rel=1e-8)


def test_zero_weights_are_no_violators():
    X, y = make_classification(2000, 20, flip_y=0.1, random_state=3)
    y = np.where(y > 0, 1.0, -1.0)
    s = np.random.default_rng(3).integers(0, 4, y.size).astype(float)
    C = 1e-3 * s
    Zs, Cs, Zy, mu, s2 = _scaled(X, y, C, False)
    alpha, w, _, _, _, _ = dcd_linear(Zs, y, Cs, intercept=False, tol=1e-2, max_iter=300,
                                      seed=0, center=False, record=False)
    found = linear_reduced.reduced_active_set(Zy, Cs, False, alpha, w, float(Cs.max()),
                                              max_steps=300)
    assert found is not None
    a = found[0]
    assert np.all(a[C == 0] == 0.0)
    assert certificate(X, y, C, False, found[1] / np.sqrt(s2), 0.0, a / s2)["passed"]


def test_c_fixed_stands_for_its_rows():
    # the rows of B dropped and their C_i r_i summed into c_fixed: the same minimizer as
    # with every row, as long as they stay below their margin
    X, y = make_classification(400, 5, flip_y=0.2, random_state=1)
    y = np.where(y > 0, 1.0, -1.0)
    R = y[:, None] * X
    C = np.full(y.size, 1e-3)
    full = active_set(R, C, 5, np.zeros(5))
    assert full is not None
    u, alpha, _ = full
    below = R @ u < 1.0 - 1e-9
    keep = ~below
    part = active_set(R[keep], C[keep], 5, np.zeros(5), c_fixed=C[below] @ R[below])
    assert part is not None
    np.testing.assert_allclose(part[0], u, rtol=1e-10, atol=1e-13)
