"""The polish's joiners (polish.pick_joiners): at most MAX_JOIN violators a round, worst
first, no two near-duplicates (normalized kernel above JOIN_APART) in the same round."""

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel

import convexlearn as cl
from convexlearn.solvers.kernel_svm import polish
from convexlearn.solvers.kernel_svm.polish import pick_joiners


def _block(X, gamma):
    return lambda rows, cols: rbf_kernel(X[rows], X[cols], gamma=gamma)


def test_few_violators_all_join():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2)) * 1e-3              # all near-duplicates
    join = np.arange(0, 50, 2)
    wrong = rng.random(50)
    assert np.array_equal(pick_joiners(join, wrong, _block(X, 10.0)), join)


def test_many_violators_join_apart_and_worst_first():
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(100, 2)) * 10.0
    # each centre three times, 1e-3 apart: near-duplicate triples
    X = np.repeat(centres, 3, axis=0) + rng.normal(size=(300, 2)) * 1e-3
    wrong = rng.random(300)
    join = np.flatnonzero(wrong > 0.05)
    taken = pick_joiners(join, wrong, _block(X, 10.0))
    assert taken.size == polish.MAX_JOIN
    assert np.all(np.isin(taken, join))
    K = rbf_kernel(X[taken], gamma=10.0)
    np.fill_diagonal(K, 0.0)
    assert np.max(K) <= polish.JOIN_APART
    # the worst violator joins, and of each triple at most the worst of those taken
    assert int(join[np.argmax(wrong[join])]) in taken
    assert np.unique(taken // 3).size == taken.size


def test_gamma_10_blobs_certify_with_the_rule(monkeypatch):
    picks = []
    pick = polish.pick_joiners

    def counted(join, wrong, kernel_block):
        out = pick(join, wrong, kernel_block)
        picks.append((join.size, out.size))
        return out
    monkeypatch.setattr(polish, "pick_joiners", counted)
    X, y = make_blobs(2000, centers=2, random_state=1)
    y = 2.0 * y - 1.0
    sol = cl.SVM(X, y, C=1.0, kernel="rbf", gamma=10.0).solve()
    assert sol.status == "optimal" and sol.provenance["route"] == "exact-smo"
    assert sol.report.relative_gap <= 1e-9
    assert any(n > polish.MAX_JOIN for n, _ in picks)       # the rule was in play
    assert all(k <= polish.MAX_JOIN for _, k in picks)
