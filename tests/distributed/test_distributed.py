"""convexlearn.distributed on a LocalCluster (2 worker processes): ERM methods and the
cascade SVM against the in-memory solvers, the chunk-wise certificates, the routing of
cl.ERM/cl.SVM, and a data set larger than the workers' memory."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

import convexlearn as cl  # noqa: E402
from convexlearn.certify.optimality import subgradient_distance  # noqa: E402
from convexlearn.distributed.erm import DaskERM  # noqa: E402
from convexlearn.distributed.svm import DaskSVM  # noqa: E402
from convexlearn.errors import NotApplicableError  # noqa: E402

#: Per worker, for the functional tests: room for the imports (~250 MB with cvxpy and
#: numba), a compile of SMO in a fresh environment and its column cache.
MEMORY_LIMIT = 1024 * 2 ** 20
#: Per worker, for the larger-than-memory test (the data are larger than this).
TIGHT_MEMORY_LIMIT = 450 * 2 ** 20


def _cluster(memory_limit):
    import dask
    # Workers must not pause or spill: the test is that nothing needs the whole data.
    with dask.config.set({"distributed.worker.memory.pause": False,
                          "distributed.worker.memory.spill": False,
                          "distributed.worker.memory.target": False}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           processes=True, memory_limit=memory_limit,
                                           dashboard_address=None)
        c = distributed.Client(cluster)
        yield c
        c.close()
        cluster.close()


@pytest.fixture(scope="module")
def client():
    yield from _cluster(MEMORY_LIMIT)


@pytest.fixture(scope="module")
def tight_client():
    yield from _cluster(TIGHT_MEMORY_LIMIT)


def _data(n=4000, d=5, seed=0, task="classification"):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.3
    w0 = rng.standard_normal(d)
    if task == "classification":
        y = np.where(X @ w0 + rng.standard_normal(n) > 0, "b", "a")
    else:
        w0[: d // 2] = 0.0
        y = X @ w0 + 0.5 * rng.standard_normal(n)
    return X, y


def _dask(client, X, y, chunks=4):
    m = -(-X.shape[0] // chunks)
    return (client.persist(da.from_array(X, chunks=(m, X.shape[1]))),
            client.persist(da.from_array(y, chunks=m)))


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def test_logistic_l2_newton_matches_in_memory(client):
    X, y = _data()
    Xd, yd = _dask(client, X, y)
    erm = cl.ERM(Xd, yd, loss="logistic", penalty="l2", lam=1e-2)
    assert isinstance(erm, DaskERM)
    sol = erm.solve("newton", tol=1e-12)
    ref = cl.ERM(X, y, loss="logistic", penalty="l2", lam=1e-2).solve(
        "newton", tol=1e-12, certify=False)
    assert sol.status == "optimal"
    assert _rel(sol.w, ref.w) <= 1e-8 and abs(sol.b - ref.b) <= 1e-8 * max(1, abs(ref.b))
    # the chunk-wise certificate equals the in-memory one at the same point
    mem = cl.ERM(X, y, loss="logistic", penalty="l2", lam=1e-2)
    d_mem, _ = subgradient_distance(mem.X, mem.y, mem.loss, mem.penalty, mem.lam, True,
                                    sol.w, sol.b)
    assert sol.report.distance == pytest.approx(d_mem, rel=1e-6, abs=1e-15)
    # and it can fail: a perturbed point is not optimal
    bad = erm.optimality(cl.Solution(w=sol.w + 1e-3, b=sol.b), tol=1e-9)
    assert not bad.passed and bad.distance > 1e-5
    auto = erm.solve()
    assert auto.provenance["route"] == "newton" and auto.status == "optimal"


@pytest.mark.parametrize("weighted", [False, True])
def test_certificate_first_pass_from_newtons_last_pass(client, weighted):
    """Newton's last pass (at the answer) brings the certificate's first-pass sums: the
    certificate then makes one pass (the conjugates), with the figures of the two-pass one
    computed afresh; another point gets no borrowed sums."""
    X, y = _data(seed=3)
    Xd, yd = _dask(client, X, y)
    s = np.random.default_rng(2).integers(0, 4, X.shape[0]).astype(float) if weighted \
        else None
    erm = cl.ERM(Xd, yd, loss="logistic", penalty="l2", lam=1e-2, sample_weight=s)
    sol = erm.solve("newton", tol=1e-12)
    fresh = erm.certificate(sol)                    # a new oracle: both passes
    assert sol.report.details["passes"] == 1 and fresh.details["passes"] == 2
    assert sol.report.passed and fresh.passed
    for key in ("distance", "relative_distance", "objective"):
        assert getattr(sol.report, key) == pytest.approx(getattr(fresh, key), rel=1e-9,
                                                         abs=1e-16)
    assert abs(sol.report.duality_gap - fresh.duality_gap) <= 1e-13
    oracle = erm.oracle()
    x = oracle.join(sol.w, sol.b)
    oracle.value_grad(x)
    assert oracle.certificate_sums(x) is not None
    assert oracle.certificate_sums(x + 1e-3) is None
    # a loss with a kink never borrows (its kink rows need the certificate's own pass)
    assert not cl.ERM(Xd, yd, loss="hinge", penalty="l2", lam=1e-2).oracle().eager_sums


def test_lasso_from_moments_and_prox_match_in_memory(client):
    X, y = _data(task="regression", seed=1)
    Xd, yd = _dask(client, X, y)
    erm = cl.ERM(Xd, yd, loss="squared", penalty="l1", lam=0.05)
    mem = cl.ERM(X, y, loss="squared", penalty="l1", lam=0.05)
    ref = mem.solve("fista", tol=1e-12, certify=False)
    # the exact route of a least-squares loss: the moments (one pass), solved in memory
    sol = erm.solve()
    assert sol.provenance["route"] == "gram" and sol.status == "optimal"
    prox = erm.solve("prox", tol=1e-11)
    assert prox.status == "optimal"
    for got in (sol, prox):
        assert _rel(got.w, ref.w) <= 1e-8
        assert np.array_equal(got.w == 0, ref.w == 0)      # the same zero pattern
        assert got.objective == pytest.approx(mem.objective(ref.w, ref.b), rel=1e-12)
        # a finite duality gap, the in-memory certificate's at the same point
        assert np.isfinite(got.report.relative_gap) and got.report.relative_gap <= 1e-9
        here = mem.certificate(got)
        assert abs(got.report.duality_gap - here.duality_gap) <= 1e-8 * abs(here.objective)


@pytest.mark.parametrize("loss, penalty, intercept, task, weighted", [
    ("logistic", "l2", True, "classification", False),
    ("logistic", "l1", True, "classification", True),
    ("hinge", "l2", True, "classification", True), ("squared", "l1", True, "regression", False),
    ("squared", "l1", True, "regression", True),
    ("squared", "elastic_net", False, "regression", False)])
def test_chunked_certificate_is_the_in_memory_certificate(client, loss, penalty, intercept,
                                                          task, weighted):
    """The same figures (relative distance, duality gap, verdict) at the optimum and at a
    perturbed point, for margin losses (classes rebalanced), regression losses (centred
    multipliers), l1 (the dual point scaled into the ball), kinks (hinge) and sample
    weights (one in ten 0); and the exact route's answer is the in-memory one."""
    X, y = _data(n=1200, d=4, seed=7, task=task)
    Xd, yd = _dask(client, X, y, chunks=3)
    kw = {"l1_ratio": 0.5} if penalty == "elastic_net" else {}
    if weighted:
        s = np.random.default_rng(9).uniform(0.1, 3.0, X.shape[0])
        s[::10] = 0.0
        kw["sample_weight"] = s
    mem = cl.ERM(X, y, loss=loss, penalty=penalty, lam=0.02, intercept=intercept, **kw)
    if weighted:
        kw["sample_weight"] = client.persist(da.from_array(s, chunks=yd.chunks))
    erm = cl.ERM(Xd, yd, loss=loss, penalty=penalty, lam=0.02, intercept=intercept, **kw)
    opt = mem.solve()
    assert opt.status == "optimal"
    if loss != "hinge":
        mine = erm.solve()
        assert mine.status == "optimal" and _rel(mine.w, opt.w) <= 1e-7
    bad = cl.Solution(w=opt.w * 1.01 + 1e-3, b=opt.b + 0.01)
    for point, passes in ((opt, True), (bad, False)):
        a, b = mem.certificate(point), erm.certificate(point)
        assert a.passed is b.passed is passes
        assert b.relative_distance == pytest.approx(a.relative_distance, rel=1e-6, abs=1e-13)
        assert b.details["dual_objective"] == pytest.approx(a.details["dual_objective"],
                                                            rel=1e-10, abs=1e-14)
        assert abs(b.duality_gap - a.duality_gap) <= 1e-8 * abs(a.objective)


def test_reduced_least_squares_keeps_the_objective():
    """||y_c - X_c w||^2 = ||z - R w||^2 + const for every w (full column rank), with and
    without intercept; a rank-deficient X keeps only its row space's k rows."""
    from convexlearn.distributed.moments import reduced_least_squares
    rng = np.random.default_rng(8)
    n, d = 300, 5
    X = rng.standard_normal((n, d)) + 2.0
    y = rng.standard_normal(n)
    for intercept in (True, False):
        A = np.column_stack([X, np.ones(n)]) if intercept else X
        R, z, xbar, ybar = reduced_least_squares(A.T @ A / n, A.T @ y / n, y @ y / n, n,
                                                 intercept)
        Xc, yc = X - xbar, y - ybar
        values = []
        for _ in range(3):
            w = rng.standard_normal(d)
            values.append(np.sum((yc - Xc @ w) ** 2) - np.sum((z - R @ w) ** 2))
        assert np.ptp(values) <= 1e-9 * np.sum(yc ** 2)
        assert R.shape == (d, d)
    Xr = np.column_stack([X, X[:, 0] + X[:, 1]])        # rank d in d + 1 columns
    R, *_ = reduced_least_squares(Xr.T @ Xr / n, Xr.T @ y / n, y @ y / n, n, False)
    assert R.shape == (d, d + 1)


def test_gd_admm_subgradient_and_status(client):
    X, y = _data(n=2000, d=3, seed=2)
    Xd, yd = _dask(client, X, y)
    erm = cl.ERM(Xd, yd, loss="logistic", penalty="l2", lam=0.1)
    ref = erm.solve("newton", tol=1e-12)
    gd = erm.solve("gd", tol=1e-7)
    assert gd.status == "optimal" and _rel(gd.w, ref.w) <= 1e-5
    admm = erm.solve("admm", tol=1e-7, max_iter=300)
    assert admm.report.distance <= 1e-5 and _rel(admm.w, ref.w) <= 1e-4
    sub = erm.solve("subgradient", max_iter=5)
    assert sub.status != "optimal" and not sub.report.passed   # 5 steps certify nothing


def test_sample_weights_on_every_method(client):
    """Integer weights are copies of samples: every distributed method solves the weighted
    problem (the in-memory weighted answer), and its objective is the weighted one."""
    X, y = _data(n=1500, d=3, seed=10)
    s = np.random.default_rng(11).integers(0, 4, X.shape[0]).astype(float)
    Xd, yd = _dask(client, X, y, chunks=3)
    sd = client.persist(da.from_array(s, chunks=yd.chunks))
    mem = cl.ERM(X, y, loss="logistic", penalty="l2", lam=0.05, sample_weight=s)
    ref = mem.solve()
    copies = np.repeat(np.arange(X.shape[0]), s.astype(int))
    dup = cl.ERM(X[copies], y[copies], loss="logistic", penalty="l2", lam=0.05).solve()
    assert _rel(dup.w, ref.w) <= 1e-8
    erm = cl.ERM(Xd, yd, loss="logistic", penalty="l2", lam=0.05, sample_weight=sd)
    for method, tol, err in (("newton", 1e-12, 1e-8), ("prox", 1e-11, 1e-7),
                             ("gd", 1e-9, 1e-6), ("admm", 1e-8, 1e-4)):
        sol = erm.solve(method, tol=tol, max_iter=2000)
        assert _rel(sol.w, ref.w) <= err, method
        assert sol.objective == pytest.approx(mem.objective(sol.w, sol.b), rel=1e-10), method
    sub = erm.solve("subgradient", max_iter=20)
    assert sub.objective == pytest.approx(mem.objective(sub.w, sub.b), rel=1e-10)
    sq_mem = cl.ERM(X, X @ np.ones(3), loss="squared", penalty="l2", lam=0.05,
                    sample_weight=s)
    sq = cl.ERM(Xd, da.from_array(X @ np.ones(3), chunks=yd.chunks), loss="squared",
                penalty="l2", lam=0.05, sample_weight=sd).solve()
    assert sq.provenance["route"] == "gram" and sq.status == "optimal"
    assert _rel(sq.w, sq_mem.solve().w) <= 1e-9


def test_routing_and_errors(client):
    X, y = _data(n=400, d=3, seed=3)
    Xd, yd = _dask(client, X, y, chunks=2)
    erm = cl.ERM(Xd, yd, loss="hinge", penalty="l2", lam=0.1)
    with pytest.raises(NotApplicableError, match="newton"):
        erm.solve("cd")
    with pytest.raises(NotApplicableError, match="not differentiable"):
        erm.solve()
    with pytest.raises(NotApplicableError, match="cascade"):
        cl.SVM(Xd, yd, kernel="rbf").solve("smo")
    with pytest.raises(NotApplicableError, match="PSD by construction"):
        cl.SVM(Xd, yd, kernel="sigmoid")
    with pytest.raises(NotApplicableError, match="whole dask array"):
        erm.problem()
    Xbad = Xd.copy()
    Xbad[0, 0] = np.nan
    with pytest.raises(cl.DataError, match="NaN"):
        cl.ERM(Xbad, yd, lam=0.1).solve("newton")
    with pytest.raises(cl.DataError, match="sample_weight must be >= 0"):
        cl.ERM(Xd, yd, lam=0.1, sample_weight=-np.ones(X.shape[0]))
    with pytest.raises(cl.DataError, match="zero everywhere"):
        cl.ERM(Xd, yd, lam=0.1, sample_weight=da.zeros(X.shape[0], chunks=200))
    assert type(cl.ERM(X, y, lam=0.1)) is cl.ERM      # numpy input: the in-memory class


def test_cascade_rbf_reaches_exact_dual(client):
    rng = np.random.default_rng(4)
    n = 800
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n) > 1.4, 1, -1)
    Xd, yd = _dask(client, X, y, chunks=4)
    svm = cl.SVM(Xd, yd, C=1.0, kernel="rbf")
    assert isinstance(svm, DaskSVM)
    sol = svm.solve("cascade")
    assert sol.status == "optimal" and sol.report.passed
    mem = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=svm.kernel.gamma)
    ref = mem.solve()
    d_ref = mem.dual_objective(ref.alpha)
    assert abs(sol.report.dual_objective - d_ref) <= 1e-9 * abs(d_ref)
    assert mem.kkt(sol, tol=1e-8).passed            # certified again, in memory, on all n
    assert np.array_equal(svm.predict(sol, X), mem.predict(ref, X))


def test_certificate_and_cert_tol_on_the_dask_classes(client):
    # the vocabulary of the in-memory classes: certificate(), cert_tol (kkt_tol deprecated)
    X, y = _data(n=400, d=3, seed=5)
    Xd, yd = _dask(client, X, y, chunks=2)
    erm = cl.ERM(Xd, yd, loss="logistic", penalty="l2", lam=0.1)
    sol = erm.solve("newton", tol=1e-12, cert_tol=1e-9)
    report = erm.certificate(sol)
    assert report.passed and report.distance == erm.optimality(sol, tol=1e-9).distance
    assert not erm.certificate(cl.Solution(w=sol.w + 1e-3, b=sol.b)).passed
    svm = cl.SVM(Xd, yd, C=1.0, kernel="linear")
    ssol = svm.solve("cascade", cert_tol=1e-8)
    assert ssol.report.tol == 1e-8 and svm.certificate(ssol) is ssol.report
    with pytest.warns(DeprecationWarning, match="DaskSVM.solve: 'kkt_tol'.*'cert_tol'"):
        assert svm.solve("cascade", kkt_tol=1e-8).report.tol == 1e-8


def _features(i, d):
    """Deterministic, well-conditioned features of row indices (Weyl sequences, variance 1):
    cheap to regenerate on every pass."""
    a = np.sqrt(np.array([2, 3, 5, 7, 11, 13, 17, 19, 23, 29][:d], float))
    u = np.modf((i[:, None] + 1.0) * a[None, :])[0]
    return np.sqrt(3.0) * (2.0 * u - 1.0)


def _noise(i):
    return np.modf(np.sin(i * 12.9898) * 43758.5453)[0]


@pytest.mark.slow
def test_larger_than_memory_newton_and_prox(tight_client):
    """X is regenerated chunk by chunk on every pass: more bytes than a worker's
    memory_limit (a worker is killed beyond 95% of it; with convexlearn imported it holds
    ~250 MB of its own): only chunks, dim-vectors and dim x dim matrices may ever be held.
    (Measured: 640 MB took 7 min on the shared 2-core machine; the size is kept just
    above the limit. At 300 MiB the workers of a fresh environment died of their imports.)"""
    d, rows = 8, 125_000
    n = 60 * rows
    idx = da.arange(n, chunks=rows, dtype=float)
    X = idx.map_blocks(_features, d, new_axis=1, chunks=(rows, d), dtype=float)
    w0 = np.linspace(-1, 1, d)
    f = X @ w0 + idx.map_blocks(_noise, dtype=float)
    assert X.nbytes > TIGHT_MEMORY_LIMIT
    y = da.where(f > 0, 1.0, -1.0)
    log = cl.ERM(X, y, loss="logistic", penalty="l2", lam=1e-2).solve("newton", tol=1e-8)
    assert log.status == "optimal", log.report
    lasso = cl.ERM(X, f, loss="squared", penalty="l1", lam=0.3).solve("prox", tol=1e-6)
    assert lasso.status == "optimal", lasso.report
    assert np.all(np.abs(lasso.w) < np.abs(w0) + 1e-9)     # l1 shrinks



def test_cascade_blocks_follow_the_worker_memory_limit(tight_client):
    """The margins pass forms a chunk's kernel rows against W by blocks sized from the
    worker's memory_limit (and a leaf's SMO cache likewise): with 450 MiB workers, a
    chunk of 20000 rows against 4000 expansion rows (640 MB at once, which the old pass
    formed whole and the nanny killed) passes and gives the values computed in memory."""
    from convexlearn.distributed import cascade
    per_thread = float(TIGHT_MEMORY_LIMIT)       # one thread per worker
    share = min(int(per_thread * cascade.BLOCK_SHARE), cascade.MAX_BLOCK_BYTES)
    assert tight_client.submit(cascade.worker_block_bytes, pure=False).result() == \
        share == cascade.worker_block_bytes(per_thread)
    assert cascade.worker_block_bytes(2**20) == 2**20 * cascade.BLOCK_SHARE
    cache_mb = tight_client.submit(cascade.worker_cache_mb, pure=False).result()
    assert cache_mb == pytest.approx(per_thread * cascade.CACHE_SHARE / 2**20)
    assert cache_mb < cascade.DEFAULT_CACHE_MB
    # off a worker: the in-memory defaults
    assert cascade.worker_block_bytes() == cascade.DEFAULT_BLOCK_BYTES
    assert cascade.worker_cache_mb() == cascade.DEFAULT_CACHE_MB
    rng = np.random.default_rng(8)
    n, m = 40_000, 4000
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    Xd, yd = _dask(tight_client, X, y, chunks=2)
    svm = cl.SVM(Xd, yd, C=1.0, kernel="rbf", gamma=0.5)
    assert 8 * (n // 2) * m > TIGHT_MEMORY_LIMIT
    W_X = rng.standard_normal((m, 2))
    W = (np.arange(n, n + m), W_X, np.ones(m), np.ones(m))   # indices outside the data
    beta = rng.uniform(-1, 1, m) * (rng.random(m) < 0.9)
    hinge, found, count, worst, f_W, g = cascade.margins_outside(svm.data, W, beta, 0.1,
                                                                 svm.kernel, 50)
    f = cascade.expansion_values(svm.kernel, X, W_X, beta, 2**24) + 0.1
    viol = 1.0 - y * f
    assert hinge == pytest.approx(np.maximum(viol, 0.0).sum(), rel=1e-12)
    assert count == int(np.sum(viol > 0)) and worst == pytest.approx(viol.max(), rel=1e-12)
    assert np.allclose(np.concatenate(g), f - 0.1, rtol=1e-13, atol=1e-13)
    # the worst violators of each chunk, with their f, outside W
    for idx, _, _, _, f_found in found:
        assert idx.size == 50 and np.allclose(f_found, f[idx], rtol=1e-13, atol=1e-13)
    # incremental: a change of a few multipliers added to the last pass's g
    change = np.zeros(m)
    change[:7] = rng.uniform(-1, 1, 7)
    inc = cascade.margins_outside(svm.data, W, change, 0.1, svm.kernel, 50, base=g)
    f2 = cascade.expansion_values(svm.kernel, X, W_X, beta + change, 2**24) + 0.1
    assert inc[0] == pytest.approx(np.maximum(1.0 - y * f2, 0.0).sum(), rel=1e-12)
    assert np.allclose(np.concatenate(inc[5]), f2 - 0.1, rtol=1e-12, atol=1e-12)
    # blocks of a few rows give the values of one block
    small = cascade.expansion_values(svm.kernel, X[:500], W_X, beta, 8 * m * 3)
    assert np.allclose(small, f[:500] - 0.1, rtol=1e-13, atol=1e-13)


def test_cascade_with_sample_weights_matches_in_memory(client):
    """Per-sample costs C s_i on the cascade (weights 0..3, zeros included: those samples
    are absent): the dual optimum of the in-memory weighted solve, gamma="scale" from the
    weighted variance as in memory, and a certificate that fails on other weights."""
    rng = np.random.default_rng(6)
    n = 1200
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n) > 1.4, 1, -1)
    s = rng.integers(0, 4, n).astype(float)
    Xd, yd = _dask(client, X, y, chunks=4)
    sd = client.persist(da.from_array(s, chunks=Xd.chunks[0]))
    svm = cl.SVM(Xd, yd, C=2.0, kernel="rbf", sample_weight=sd, client=client)
    mem = cl.SVM(X, y, C=2.0, kernel="rbf", sample_weight=s)
    assert svm.kernel.gamma == pytest.approx(mem.kernel.gamma, rel=1e-12)
    sol = svm.solve("cascade")
    assert sol.status == "optimal" and sol.report.passed, sol.report.residuals
    ref = mem.solve()
    d_ref = mem.dual_objective(ref.alpha)
    assert abs(sol.report.dual_objective - d_ref) <= 1e-9 * abs(d_ref)
    assert mem.kkt(sol, tol=1e-8).passed            # certified again, in memory
    assert np.all(sol.alpha <= 2.0 * s + 1e-15) and np.all(sol.alpha[s == 0] == 0.0)
    assert sol.report.primal_objective == pytest.approx(mem.primal_objective(sol), rel=1e-9)
    # the unweighted optimum is not the weighted one: the weighted check rejects it
    plain = cl.SVM(X, y, C=2.0, kernel="rbf", gamma=svm.kernel.gamma).solve()
    assert not mem.kkt(mem.from_alpha(np.minimum(plain.alpha, 2.0 * s), b=plain.b),
                       tol=1e-8).passed
    # a numpy weight vector works the same; a hard margin refuses weights
    again = cl.SVM(Xd, yd, C=2.0, kernel="rbf", sample_weight=s, client=client).solve("cascade")
    assert abs(again.report.dual_objective - d_ref) <= 1e-9 * abs(d_ref)
    with pytest.raises(cl.ParameterError, match="finite C"):
        cl.SVM(Xd, yd, C=None, kernel="rbf", sample_weight=sd, client=client)
    with pytest.raises(cl.DataError, match="weight 0"):
        cl.SVM(Xd, yd, kernel="rbf", sample_weight=np.where(y > 0, 1.0, 0.0), client=client)


def test_report_from_the_pass_is_the_in_memory_report():
    """The report on W from the pass's decision values (no kernel product on the client)
    gives the figures of SVM.kkt, passes at the optimum and fails on a perturbed point."""
    from convexlearn.distributed import cascade
    rng = np.random.default_rng(9)
    X = rng.standard_normal((300, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    s = rng.integers(1, 3, 300).astype(float)
    part = (np.arange(300), X, y, s, np.zeros(300))
    svm = cascade.sub_svm(part, 1.5, cl.SVM(X, y, kernel="rbf").kernel, True, True)
    sol = svm.solve(kkt_tol=1e-9)
    f = svm.decision_function(sol)
    rep = cascade.report_on(svm, sol.alpha, sol.b, f, 1e-9)
    ref = svm.kkt(sol, tol=1e-9)
    assert rep.passed and ref.passed
    assert rep.max_violation == pytest.approx(ref.max_violation, rel=1e-6, abs=1e-13)
    assert rep.dual_objective == pytest.approx(ref.dual_objective, rel=1e-12)
    bad = sol.alpha.copy()
    free = np.flatnonzero((bad > 0) & (bad < 1.5 * s))[:2]
    bad[free] += 1e-4 * y[free] * np.array([1.0, -y[free[0]] * y[free[1]]])
    moved = svm.from_alpha(bad, b=sol.b)
    assert not cascade.report_on(svm, bad, sol.b, svm.decision_function(moved), 1e-9).passed
