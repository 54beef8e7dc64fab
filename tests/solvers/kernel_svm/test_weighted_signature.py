"""Per-sample costs (sample weights) reach the compiled loops as writeable arrays, as one
C does: a read-only view (np.broadcast_to) is another numba signature, whose loading from
the disk cache (~0.4 s, ~0.8 s under load) fell on a process's first weighted solve (the
kernel sweep's rbf/blobs1/C=0.01/n=400/weights: 0.86 s, 0.075 s the second time)."""

import numpy as np
import pytest

import convexlearn as cl
from convexlearn.app.generators import blobs
from convexlearn.certify import kkt_kernels
from convexlearn.solvers.kernel_svm import small_kernels, smo_kernels


def _readonly(dispatcher):
    return {tuple(str(a) for a in sig) for sig in dispatcher.signatures
            if any("readonly" in str(a) for a in sig)}


@pytest.mark.parametrize("n, intercept", [(400, True), (1100, True), (400, False)])
def test_weighted_solves_add_no_read_only_signature(n, intercept):
    X, y = blobs(n, 0, d=2, separation=1.0)[:2]
    w = np.random.default_rng(2).uniform(0.1, 3.0, n)
    w[::10] = 0.0
    # the compiled loops loaded (above certified_smo.SMALL_N: no numpy loop first)
    X0, y0 = blobs(600, 0)[:2]
    cl.SVM(X0, y0, C=1.0, kernel="rbf", intercept=intercept).solve()
    loops = (small_kernels.small_solve, smo_kernels.smo_loop, kkt_kernels.kkt_pass)
    before = [_readonly(f) for f in loops]
    sol = cl.SVM(X, y, C=1.0, kernel="rbf", sample_weight=w, intercept=intercept).solve()
    assert sol.status == "optimal" and sol.report.relative_gap <= 1e-9
    assert [_readonly(f) for f in loops] == before
