"""convexlearn.threads: one BLAS thread for small problems on a busy machine."""

from __future__ import annotations

import numpy as np
import pytest

import convexlearn as cl
from convexlearn import threads


def _blas_threads():
    from threadpoolctl import threadpool_info
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_one_blas_thread_limits_and_restores():
    pytest.importorskip("threadpoolctl")
    before = _blas_threads()
    with threads.one_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before


@pytest.mark.parametrize("loaded", [True, False])
def test_tiny_problems_always_small_ones_on_a_busy_machine_only(monkeypatch, loaded):
    pytest.importorskip("threadpoolctl")
    monkeypatch.setattr(threads, "busy", lambda: loaded)
    seen = []
    real = threads.one_blas_thread

    def spy():
        seen.append(1)
        return real()

    monkeypatch.setattr(threads, "one_blas_thread", spy)
    threads.small_problem_threads(threads.SMALL_PROBLEM_ENTRIES + 1).__enter__()
    assert not seen
    with threads.small_problem_threads(threads.TINY_PROBLEM_ENTRIES + 1):
        pass
    assert len(seen) == int(loaded)
    with threads.small_problem_threads(1000):          # tiny: one thread whatever the load
        pass
    assert len(seen) == int(loaded) + 1
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    sol = cl.ERM(X, X[:, 0] + rng.standard_normal(60), loss="squared", penalty="l1",
                 lam=0.05).solve()
    assert sol.ok and len(seen) == int(loaded) + 2


def test_the_exact_kernel_route_runs_on_one_blas_thread_above_its_threshold(monkeypatch):
    pytest.importorskip("threadpoolctl")
    from convexlearn.routes import svm as svm_routes
    seen = []
    real = svm_routes.certified_smo

    def spy(svm, **kw):
        seen.append((svm.n_samples, set(_blas_threads())))
        return real(svm, **kw)

    monkeypatch.setattr(svm_routes, "certified_smo", spy)
    with threads.kernel_solve_threads(threads.KERNEL_ONE_THREAD_N + 1):
        assert set(_blas_threads()) == {1}
    before = _blas_threads()
    with threads.kernel_solve_threads(threads.KERNEL_ONE_THREAD_N):
        assert _blas_threads() == before                # small: no controller, no change
    rng = np.random.default_rng(0)
    for n in (200, threads.KERNEL_ONE_THREAD_N + 1):
        X = rng.standard_normal((n, 3))
        y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1, -1)
        assert cl.SVM(X, y, C=1.0, kernel="rbf").solve().status == "optimal"
    assert seen[0] == (200, set(before))
    assert seen[1] == (threads.KERNEL_ONE_THREAD_N + 1, {1})
    assert _blas_threads() == before
