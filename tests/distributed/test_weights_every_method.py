"""Sample weights on every public Dask method (issue 25): each answer equals the in-memory
weighted solve, and the unweighted answer differs from it (so each test can fail).

The synchronous scheduler (no cluster): the chunk-wise code is the same on any scheduler;
tests/distributed/test_distributed.py runs the methods on a LocalCluster."""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import convexlearn as cl  # noqa: E402

N, D, CHUNK, LAM = 600, 4, 200, 0.05


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(task):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)) + 0.3
    if task == "classification":
        y = np.where(X @ rng.standard_normal(D) + rng.standard_normal(N) > 0, 1.0, -1.0)
    else:
        y = X @ np.array([1.0, 0.0, -2.0, 0.5]) + 0.5 * rng.standard_normal(N)
    s = rng.integers(0, 4, N).astype(float)          # zeros included: samples left out
    return X, y, s


def _rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b))


#: (loss, penalty, task, method, options, how close to the in-memory w)
ERM_CASES = [
    ("logistic", "l2", "classification", "exact", {}, 1e-8),
    ("logistic", "l2", "classification", "newton", {"tol": 1e-12}, 1e-8),
    ("logistic", "l2", "classification", "gd", {"tol": 1e-10, "max_iter": 3000}, 1e-7),
    ("logistic", "l2", "classification", "prox", {"tol": 1e-11, "max_iter": 3000}, 1e-7),
    ("logistic", "l2", "classification", "fista", {"tol": 1e-11, "max_iter": 3000}, 1e-7),
    ("logistic", "l2", "classification", "admm", {"tol": 1e-9, "max_iter": 500}, 1e-6),
    ("logistic", "l1", "classification", "exact", {}, 1e-8),
    ("huber", "l2", "regression", "exact", {}, 1e-8),
    ("squared", "l2", "regression", "gram", {}, 1e-9),
    ("squared", "l1", "regression", "gram", {}, 1e-9),
    ("squared", "elastic_net", "regression", "exact", {}, 1e-9),
    ("squared", "l1", "regression", "prox", {"tol": 1e-11, "max_iter": 3000}, 1e-7),
]


@pytest.mark.parametrize("loss, penalty, task, method, options, close", ERM_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in ERM_CASES])
def test_erm_method_solves_the_weighted_problem(loss, penalty, task, method, options, close):
    X, y, s = _data(task)
    kw = {"l1_ratio": 0.5} if penalty == "elastic_net" else {}
    mem = cl.ERM(X, y, loss, penalty, lam=LAM, sample_weight=s, **kw)
    ref = mem.solve()
    plain = cl.ERM(X, y, loss, penalty, lam=LAM, **kw).solve()
    assert _rel(plain.w, ref.w) > 1e3 * close        # the weights matter here
    erm = cl.ERM(da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK), loss,
                 penalty, lam=LAM, sample_weight=da.from_array(s, chunks=CHUNK), **kw)
    sol = erm.solve(method, **options)
    assert sol.status == "optimal", (method, sol.report.summary())
    assert _rel(sol.w, ref.w) <= close
    assert sol.objective == pytest.approx(mem.objective(sol.w, sol.b), rel=1e-10)
    # the chunk-wise certificate is the weighted one: it rejects the unweighted optimum
    assert not erm.certificate(plain, tol=1e-6).passed


def test_subgradient_evaluates_the_weighted_objective():
    X, y, s = _data("classification")
    mem = cl.ERM(X, y, "logistic", "l2", lam=LAM, sample_weight=s)
    erm = cl.ERM(da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK),
                 "logistic", "l2", lam=LAM, sample_weight=da.from_array(s, chunks=CHUNK))
    sol = erm.solve("subgradient", max_iter=30)
    assert sol.objective == pytest.approx(mem.objective(sol.w, sol.b), rel=1e-10)
    plain = cl.ERM(X, y, "logistic", "l2", lam=LAM)
    assert abs(plain.objective(sol.w, sol.b) - sol.objective) > 1e-6 * abs(sol.objective)


def test_path_solves_the_weighted_problems():
    # the path runs the in-memory Newton route on the distributed oracle (which keeps no
    # scores in memory: the route's certificate stop stands aside)
    X, y, s = _data("classification")
    lams = [0.2, 0.05]
    mem = cl.ERM(X, y, "logistic", "l2", lam=LAM, sample_weight=s).path(lams)
    plain = cl.ERM(X, y, "logistic", "l2", lam=LAM).path(lams)
    dist = cl.ERM(da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK),
                  "logistic", "l2", lam=LAM,
                  sample_weight=da.from_array(s, chunks=CHUNK)).path(lams)
    for a, b, c in zip(dist.solutions, mem.solutions, plain.solutions):
        assert _rel(a.w, b.w) <= 1e-9
        assert _rel(c.w, b.w) > 1e-4


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_cascade_solves_the_weighted_svm(kernel):
    X, y, s = _data("classification")
    mem = cl.SVM(X, y, C=1.0, kernel=kernel, sample_weight=s)
    ref = mem.solve()
    svm = cl.SVM(da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK), C=1.0,
                 kernel=kernel, sample_weight=da.from_array(s, chunks=CHUNK))
    sol = svm.solve("cascade")
    assert sol.status == "optimal"
    d_ref = mem.dual_objective(ref.alpha)
    assert abs(sol.report.dual_objective - d_ref) <= 1e-9 * abs(d_ref)
    plain = cl.SVM(X, y, C=1.0, kernel=kernel, gamma=mem.kernel.gamma).solve()
    d_plain = cl.SVM(X, y, C=1.0, kernel=kernel, gamma=mem.kernel.gamma).dual_objective(
        plain.alpha)
    assert abs(d_plain - d_ref) > 1e-3 * abs(d_ref)
