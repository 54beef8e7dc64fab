"""The ratio walk (polish_walk) against a numpy reference: the same ratio steps with every
face solved afresh by np.linalg.solve."""

import numpy as np
import pytest
from scipy.linalg import lapack

import convexlearn as cl
from convexlearn.solvers.kernel_svm.polish_walk import ratio_walk


def _face(K, E, free, r, totals):
    """The face's solution: [K_FF E_F; E_F^T 0] [x; b] = [r_F; totals] (x = 0 off F)."""
    F = np.flatnonzero(free)
    k, m = F.size, E.shape[1]
    A = np.zeros((k + m, k + m))
    A[:k, :k] = K[np.ix_(F, F)]
    A[:k, k:] = E[F]
    A[k:, :k] = E[F].T
    sol = np.linalg.solve(A, np.concatenate([r[F], totals]))
    x = np.zeros(K.shape[0])
    x[F] = sol[:k]
    return x, sol[k:]


def _reference(K, E, beta, rest, target, lo, hi):
    """One multiplier fixed per step, each face solved afresh (the textbook primal
    active-set method); the point when the face's solution is in the box."""
    beta, free = beta.copy(), np.ones(beta.size, dtype=bool)
    totals = E.T @ beta
    fixed_part = np.zeros(beta.size)
    steps = 0
    while free.any():
        x, b = _face(K, E, free, target - rest - K @ fixed_part, totals - E[~free].T @ beta[~free]
                     if (~free).any() else totals)
        d = np.where(free, x - beta, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d < 0, (beta - lo) / -d, np.where(d > 0, (hi - beta) / d, np.inf))
        room[~free] = np.inf
        t = room.min()
        if t >= 1.0:
            return np.where(free, x, beta), free, steps, b
        steps += 1
        beta = beta + t * d
        hit = np.flatnonzero(room <= t + 1e-15)
        beta[hit] = np.where(d[hit] > 0, hi[hit], lo[hit])
        free[hit] = False
        fixed_part[hit] = beta[hit]
    return beta, free, steps, None


def _problem(intercept, seed=0, k=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(k, 2))
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)) + 1e-3 * np.eye(k)
    y = np.where(rng.random(k) < 0.5, 1.0, -1.0)
    C = 1.0
    lo, hi = np.where(y > 0, 0.0, -C), np.where(y > 0, C, 0.0)
    beta = y * rng.uniform(0.2, 0.8, size=k)
    E = np.ones((k, 1)) if intercept else np.ones((k, 0))
    target = y
    rest = 0.3 * rng.normal(size=k)
    return K, E, beta, rest, target, lo, hi


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ratio_walk_takes_the_reference_steps(intercept, seed):
    K, E, beta, rest, target, lo, hi = _problem(intercept, seed)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    assert np.any((x0 < lo) | (x0 > hi))            # the face's solution leaves the box
    ref_beta, ref_free, ref_steps, _ = _reference(K, E, beta, rest, target, lo, hi)
    assert ref_steps >= 3                           # several steps: a walk to compare
    factor, info = lapack.dpotrf(K, lower=False, clean=True)
    assert info == 0
    walked, free, steps, b = ratio_walk(K, factor, E, beta, rest, target, E.T @ beta,
                                        lo, hi, x0 - beta)
    np.testing.assert_array_equal(free, ref_free)
    assert steps == ref_steps
    fixed = ~free
    np.testing.assert_array_equal(walked[fixed], ref_beta[fixed])   # exactly on bounds
    assert np.all((walked >= lo) & (walked <= hi))
    if intercept:
        assert abs(walked.sum() - beta.sum()) <= 1e-12 * beta.size
    if b is not None:           # its solution, accepted as accurate: the face's own
        np.testing.assert_allclose(walked, ref_beta, atol=1e-9)


@pytest.mark.parametrize("prefetch", [0, 8])
def test_ratio_walk_with_the_inverse_after_many_steps(prefetch, monkeypatch):
    # more than INVERSE_AFTER steps: W's columns come from K_0^{-1}, the same steps;
    # before that from the column cache, whatever it prefetches
    import convexlearn.solvers.kernel_svm.polish_walk as walk
    monkeypatch.setattr(walk, "PREFETCH", prefetch)
    K, E, beta, rest, target, lo, hi = _problem(True, seed=3, k=160)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    ref_beta, ref_free, ref_steps, _ = _reference(K, E, beta, rest, target, lo, hi)
    assert ref_steps > 24
    factor, _ = lapack.dpotrf(K, lower=False, clean=True)
    walked, free, steps, b = ratio_walk(K, factor, E, beta, rest, target, E.T @ beta,
                                        lo, hi, x0 - beta)
    np.testing.assert_array_equal(free, ref_free)
    assert steps == ref_steps
    np.testing.assert_array_equal(walked[~free], ref_beta[~free])
    if b is not None:
        np.testing.assert_allclose(walked, ref_beta, atol=1e-8)


def test_ratio_walk_with_a_wrong_factor_departs_from_the_reference():
    # the comparison can fail: steering with another matrix's factor takes other steps
    K, E, beta, rest, target, lo, hi = _problem(True, seed=0)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    ref_beta, ref_free, _, _ = _reference(K, E, beta, rest, target, lo, hi)
    factor, _ = lapack.dpotrf(K + 5.0 * np.eye(K.shape[0]), lower=False, clean=True)
    walked, free, _, _ = ratio_walk(K, factor, E, beta, rest, target, E.T @ beta,
                                    lo, hi, x0 - beta)
    assert not (np.array_equal(free, ref_free) and np.allclose(walked, ref_beta, atol=1e-8))


def test_very_local_kernel_is_certified():
    # issue 24's shape at a small size: rbf gamma = 10 on two 2-D blobs
    from sklearn.datasets import make_blobs
    X, y = make_blobs(400, centers=2, random_state=1)
    sol = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=10.0).solve()
    assert sol.status == "optimal"
    assert sol.report.relative_gap <= 1e-9


@pytest.mark.parametrize("prefetch", [0, 3, 8])
def test_column_cache_returns_the_inverse_columns(prefetch):
    # K_0^{-1} e_j against numpy's inverse, for the asked columns and (read later without
    # a solve) the prefetched nearest ones
    from convexlearn.solvers.kernel_svm.polish_walk import _Columns
    K = _problem(True, seed=4, k=90)[0]
    factor, _ = lapack.dpotrf(K, lower=False, clean=True)
    reference = np.linalg.inv(K)
    tol = 1e-10 * np.abs(reference).max()              # (cond(K) ~ 3.5e4)
    cache = _Columns(factor, prefetch)
    idx = np.arange(0, 90, 2)
    room = np.linspace(1.0, 0.0, idx.size)              # the last positions are nearest
    cache.nearest = (idx, room)
    asked = np.array([5, 7])
    np.testing.assert_allclose(cache.get(asked), reference[:, asked], rtol=0, atol=tol)
    nearest = idx[-prefetch:] if prefetch else idx[:0]
    solved = np.flatnonzero(cache.slot >= 0)
    np.testing.assert_array_equal(solved, np.union1d(asked, nearest))
    used = cache.used
    if prefetch:
        np.testing.assert_allclose(cache.get(nearest[::-1]), reference[:, nearest[::-1]],
                                   rtol=0, atol=tol)
        assert cache.used == used                       # no new solve
    many = np.arange(1, 90, 2)                          # beyond the first allocation
    np.testing.assert_allclose(cache.get(many), reference[:, many], rtol=0, atol=tol)
    np.testing.assert_allclose(cache.get(asked), reference[:, asked], rtol=0, atol=tol)


def test_column_cache_with_a_wrong_factor_departs_from_the_inverse():
    from convexlearn.solvers.kernel_svm.polish_walk import _Columns
    K = _problem(True, seed=4, k=30)[0]
    factor, _ = lapack.dpotrf(K + np.eye(30), lower=False, clean=True)
    got = _Columns(factor, 4).get(np.array([3]))
    assert not np.allclose(got, np.linalg.inv(K)[:, [3]], rtol=1e-6)


def test_ratio_walk_that_cannot_start_returns_its_four_values():
    # a border whose Schur complement E^T K^{-1} E is not positive definite (E = 0): no
    # step, the point unchanged, no face solution (the caller unpacks four values)
    K, E, beta, rest, target, lo, hi = _problem(True, seed=0)
    factor, _ = lapack.dpotrf(K, lower=False, clean=True)
    walked, free, steps, b = ratio_walk(K, factor, np.zeros_like(E), beta, rest, target,
                                        np.zeros(1), lo, hi, -beta)
    assert steps == 0 and b is None and free.all()
    np.testing.assert_array_equal(walked, beta)


def _both_walks(K, E, beta, rest, target, lo, hi, direction, limit, monkeypatch):
    """The compiled walk (with the statuses its loop returned) and the numpy walk."""
    import convexlearn.solvers.kernel_svm.polish_walk_kernels as kernels
    statuses, loop = [], kernels.walk_loop

    def recording(*args):
        statuses.append(loop(*args))
        return statuses[-1]
    monkeypatch.setattr(kernels, "walk_loop", recording)
    factor, info = lapack.dpotrf(K, lower=False, clean=True)
    assert info == 0
    walks = [ratio_walk(K, factor, E, beta, rest, target, E.T @ beta, lo, hi, direction,
                        limit=limit, compiled=c) for c in (True, False)]
    return walks, statuses


def _assert_same_walk(compiled, numpy_walk, K, beta):
    # the same fixed set after the same steps, the fixed entries on the same bound
    # exactly; the free ones (and the intercepts) within the forward error of two
    # backward-stable solves of the face's system: k eps cond(K) max|beta|
    (walked, free, steps, b), (ref, ref_free, ref_steps, ref_b) = compiled, numpy_walk
    np.testing.assert_array_equal(free, ref_free)
    assert steps == ref_steps
    np.testing.assert_array_equal(walked[~free], ref[~free])
    bound = K.shape[0] * np.finfo(float).eps * np.linalg.cond(K) * np.max(np.abs(beta))
    np.testing.assert_allclose(walked, ref, rtol=0, atol=bound)
    assert (b is None) == (ref_b is None)
    if b is not None:
        np.testing.assert_allclose(b, ref_b, rtol=0, atol=bound)


@pytest.mark.parametrize("inverse_after", [0, 5, 24, 10**6])
@pytest.mark.parametrize("intercept", [True, False])
def test_compiled_walk_takes_the_numpy_walks_steps(inverse_after, intercept, monkeypatch):
    # step by step: the walks stopped after 1, 2, ... fixed multipliers (limit) agree,
    # and the whole walk ends in the box at the reference's point; columns from the
    # cache before ``inverse_after`` steps, from K_0^{-1} after
    import convexlearn.solvers.kernel_svm.polish_walk as walk
    from convexlearn.solvers.kernel_svm import polish_walk_kernels as kernels
    monkeypatch.setattr(walk, "INVERSE_AFTER", inverse_after)
    K, E, beta, rest, target, lo, hi = _problem(intercept, seed=3, k=160)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    ref_beta, ref_free, ref_steps, _ = _reference(K, E, beta, rest, target, lo, hi)
    seen = set()
    for limit in [1, 2, 3, 10, 25, 60, ref_steps - 1, ref_steps, 160]:
        walks, statuses = _both_walks(K, E, beta, rest, target, lo, hi, x0 - beta, limit,
                                      monkeypatch)
        _assert_same_walk(*walks, K, beta)
        seen.update(statuses)
        if limit >= ref_steps:
            assert statuses[-1] == kernels.IN_BOX
            np.testing.assert_array_equal(walks[0][1], ref_free)
            np.testing.assert_allclose(walks[0][0], ref_beta, atol=1e-8)
        else:
            assert statuses[-1] == kernels.LIMIT and walks[0][3] is None
    assert kernels.NEED_COLUMNS in seen or inverse_after == 0
    assert (kernels.NEED_INVERSE in seen) == (inverse_after < ref_steps)


def test_compiled_walk_stops_as_the_numpy_walk_when_s_loses_definiteness(monkeypatch):
    # a wide rbf (exp(-0.02 |x - x'|^2) on 60 normal points) with a ridge of ~1e-15:
    # K_FF nearly singular (cond ~1e16), so the bordered S loses definiteness in floating
    # point after 30-45 steps. Which draw loses it depends on the machine's roundings (on
    # one, seed 0 with a 1e-14 ridge; on another, none of that ridge's draws): the first
    # draw of a fixed list whose compiled walk stops there is the case; both walks stop
    # there with the same fixed set
    from convexlearn.solvers.kernel_svm import polish_walk_kernels as kernels
    for ridge, seed in [(r, s) for r in (1e-15, 3e-15, 1e-14) for s in range(4)]:
        K, E, beta, rest, target, lo, hi = _problem(True, seed=0, k=60)
        X = np.random.default_rng(seed).normal(size=(60, 2))
        K = np.exp(-0.02 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)) + ridge * np.eye(60)
        x0 = np.linalg.solve(K, target - rest)
        walks, statuses = _both_walks(K, E, beta, rest, target, lo, hi, x0 - beta, 60,
                                      monkeypatch)
        monkeypatch.undo()
        if statuses[-1] == kernels.FAILED:
            break
    assert statuses[-1] == kernels.FAILED, "no draw lost definiteness"
    _assert_same_walk(*walks, K, beta)
    assert walks[0][3] is None and walks[0][1].any()


def test_compiled_walk_fixing_every_multiplier(monkeypatch):
    # margins far on one side: every multiplier ends on a bound, no face is left
    from convexlearn.solvers.kernel_svm import polish_walk_kernels as kernels
    K, E, beta, rest, target, lo, hi = _problem(False, seed=0, k=40)
    rest = -100.0 * target
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    walks, statuses = _both_walks(K, E, beta, rest, target, lo, hi, x0 - beta, 40,
                                  monkeypatch)
    assert statuses[-1] == kernels.EMPTY
    _assert_same_walk(*walks, K, beta)
    assert not walks[0][1].any()


def test_walk_loads_the_compiled_loop_only_on_large_faces():
    # import convexlearn does not load it; a face below COMPILED_FROM walks in numpy
    import subprocess
    import sys
    code = ("import sys, convexlearn.solvers.kernel_svm.polish as p, numpy as np\n"
            "from convexlearn.solvers.kernel_svm.polish_walk import _use_compiled, "
            "COMPILED_FROM\n"
            "name = 'convexlearn.solvers.kernel_svm.polish_walk_kernels'\n"
            "print(name in sys.modules, _use_compiled(COMPILED_FROM - 1), "
            "_use_compiled(COMPILED_FROM))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "True"]


@pytest.mark.parametrize("compiled", [True, False])
def test_walk_forms_the_inverse_only_for_a_long_remainder(compiled, monkeypatch):
    # past INVERSE_AFTER steps K_0^{-1} is formed only when INVERSE_REMAINING multipliers
    # would still leave the box; formed or not, the walk takes the reference's steps
    import convexlearn.solvers.kernel_svm.polish_walk as walk
    K, E, beta, rest, target, lo, hi = _problem(True, seed=3, k=160)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    ref_beta, ref_free, ref_steps, _ = _reference(K, E, beta, rest, target, lo, hi)
    assert ref_steps > 10
    factor, _ = lapack.dpotrf(K, lower=False, clean=True)
    formed, inverse = [], walk._inverse

    def counting(f):
        formed.append(f.shape[0])
        return inverse(f)
    monkeypatch.setattr(walk, "_inverse", counting)
    monkeypatch.setattr(walk, "INVERSE_AFTER", 5)
    counts = {}
    for remaining in (0, 10**6):
        monkeypatch.setattr(walk, "INVERSE_REMAINING", remaining)
        formed.clear()
        walked, free, steps, b = ratio_walk(K, factor, E, beta, rest, target, E.T @ beta,
                                            lo, hi, x0 - beta, compiled=compiled)
        counts[remaining] = len(formed)
        np.testing.assert_array_equal(free, ref_free)
        assert steps == ref_steps
        np.testing.assert_array_equal(walked[~free], ref_beta[~free])
    assert counts == {0: 1, 10**6: 0}


def test_inverse_forecast_counts_the_multipliers_that_leave_before_the_end():
    import convexlearn.solvers.kernel_svm.polish_walk as walk
    n = walk.INVERSE_REMAINING
    room = np.full(3 * n, np.inf)
    room[:n - 1] = 0.5
    room[n - 1] = 1.0                   # reaches its bound only at the direction's end
    assert not walk._inverse_wanted(room)
    room[n - 1] = 0.999
    assert walk._inverse_wanted(room)


def test_very_local_kernel_same_optimum_with_and_without_the_walks_inverse(monkeypatch):
    # the inverse only steers: formed at every chance (INVERSE_REMAINING = INVERSE_AT_ONCE
    # = 0) or never,
    # the polish ends at the same certified optimum (the certificate at 1e-9 decides)
    import convexlearn.solvers.kernel_svm.polish_walk as walk
    from sklearn.datasets import make_blobs
    X, y = make_blobs(1200, centers=2, random_state=1)   # (above the one-call size)
    formed, inverse = [], walk._inverse

    def counting(f):
        formed.append(f.shape[0])
        return inverse(f)
    monkeypatch.setattr(walk, "_inverse", counting)
    monkeypatch.setattr(walk, "INVERSE_AFTER", 2)     # (this size's walks are short)
    solutions, counts = [], []
    for remaining in (0, 10**6):
        monkeypatch.setattr(walk, "INVERSE_REMAINING", remaining)
        monkeypatch.setattr(walk, "INVERSE_AT_ONCE", remaining)
        formed.clear()
        sol = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=10.0).solve()
        assert sol.status == "optimal" and sol.provenance["route"] == "exact-smo"
        assert sol.report.relative_gap <= 1e-9
        solutions.append(sol)
        counts.append(len(formed))
    assert counts[0] >= 1 and counts[1] == 0          # both paths were taken
    a, b = solutions
    scale = max(abs(a.report.dual_objective), abs(b.report.dual_objective))
    assert abs(a.report.dual_objective - b.report.dual_objective) <= 1e-9 * scale
    np.testing.assert_allclose(a.alpha, b.alpha, rtol=0, atol=1e-6)


@pytest.mark.parametrize("compiled", [True, False])
def test_walk_forms_the_inverse_at_once_for_a_long_first_direction(compiled, monkeypatch):
    # INVERSE_AT_ONCE multipliers leaving along the first direction: K_0^{-1} before the
    # first step, no column solved for; the reference's steps all the same
    import convexlearn.solvers.kernel_svm.polish_walk as walk
    K, E, beta, rest, target, lo, hi = _problem(True, seed=3, k=160)
    x0, _ = _face(K, E, np.ones(beta.size, dtype=bool), target - rest, E.T @ beta)
    ref_beta, ref_free, ref_steps, _ = _reference(K, E, beta, rest, target, lo, hi)
    factor, _ = lapack.dpotrf(K, lower=False, clean=True)
    events, inverse, get = [], walk._inverse, walk._Columns.get
    monkeypatch.setattr(walk, "_inverse", lambda f: (events.append("inverse"), inverse(f))[1])
    monkeypatch.setattr(walk._Columns, "get",
                        lambda self, hit: (events.append("columns"), get(self, hit))[1])
    leaving = int(np.count_nonzero((x0 < lo) | (x0 > hi)))
    for at_once, expected in ((leaving, ["inverse"]), (leaving + 1, None)):
        monkeypatch.setattr(walk, "INVERSE_AT_ONCE", at_once)
        events.clear()
        walked, free, steps, b = ratio_walk(K, factor, E, beta, rest, target, E.T @ beta,
                                            lo, hi, x0 - beta, compiled=compiled)
        np.testing.assert_array_equal(free, ref_free)
        assert steps == ref_steps
        if expected is not None:
            assert events == expected
        else:
            assert events[0] == "columns"


@pytest.mark.parametrize("k", [1, 5, 64, 65, 200])
def test_mirror_lower_makes_dpotri_symmetric(k):
    """The compiled mirror of dpotri's triangle (the walk's K_0^{-1}) is bit for bit the
    numpy form triu + triu(, 1)^T, C-ordered."""
    from convexlearn.solvers.kernel_svm.polish_walk_kernels import mirror_lower
    rng = np.random.default_rng(k)
    A = rng.standard_normal((k, k))
    R, info = lapack.dpotrf(A @ A.T + k * np.eye(k), lower=False, clean=True)
    assert info == 0
    upper, info = lapack.dpotri(R, lower=False)
    assert info == 0 and upper.flags.f_contiguous
    expected = np.triu(upper) + np.triu(upper, 1).T
    inverse = upper.T
    mirror_lower(inverse)
    assert inverse.flags.c_contiguous
    np.testing.assert_array_equal(inverse, expected)
