"""Shared test helpers: real data sets, convention conversions and common assertions.

Append new helpers at the end; keep each one small and documented.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=None)
def _load(name: str):
    from sklearn import datasets
    loader = {"iris": datasets.load_iris, "wine": datasets.load_wine,
              "breast_cancer": datasets.load_breast_cancer, "digits": datasets.load_digits}[name]
    X, y = loader(return_X_y=True)
    return X.astype(float), y


def standardize(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per feature (constant features left at zero)."""
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def binary_dataset(name: str, classes=(0, 1), standardized: bool = True):
    """(X, y) for two classes of a scikit-learn data set, y in the original labels.

    ``name`` is "iris", "wine", "breast_cancer" or "digits"; ``classes`` picks the pair.
    """
    X, y = _load(name)
    keep = np.isin(y, classes)
    X, y = X[keep], y[keep]
    return (standardize(X) if standardized else X.copy()), y.copy()


def svc_alpha(svc, n: int) -> np.ndarray:
    """alpha (length n) from a fitted binary scikit-learn SVC.

    Conversion: ``SVC.dual_coef_[0, k] = y_i alpha_i`` for ``i = SVC.support_[k]``, with
    ``y_i = +1`` for ``SVC.classes_[1]`` - so alpha = |dual_coef_|, zero off the support.
    The decision function is ``dual_coef_ @ K(support_vectors_, x) + intercept_``, i.e.
    ``intercept_`` is our b.
    """
    alpha = np.zeros(n)
    alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return alpha


def assert_kkt_passes(problem, solution, tol=1e-6, context=""):
    """Assert that the KKT report of ``solution`` passes, printing it otherwise."""
    report = problem.kkt(solution, tol=tol)
    assert report.passed, f"{context}: KKT check failed\n{report.summary()}"
    return report


def assert_objectives_agree(solutions: dict, rtol: float, context=""):
    """Every pair of solutions has objectives within ``rtol`` (relative); names the pair."""
    names = list(solutions)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            fa, fb = solutions[a].objective, solutions[b].objective
            rel = abs(fa - fb) / max(1.0, abs(fa), abs(fb))
            assert rel <= rtol, (f"{context}: {a} and {b} disagree: objectives {fa!r} vs {fb!r} "
                                 f"(relative {rel:.2e} > {rtol:g})")


def support_groups(X: np.ndarray, y: np.ndarray, support) -> set:
    """Support vectors up to exact duplicates: the set of groups of identical (x, y) rows.

    A multiplier can be split arbitrarily among identical samples (iris has such rows), so
    the support *set* is only unique up to this grouping; each group is named by its
    first index.
    """
    rows = np.column_stack([X, y])
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return {int(first[inverse[i]]) for i in support}


def erm_grid_data(n: int = 60, d: int = 5, seed: int = 0):
    """Small ERM data: breast_cancer rows/columns (standardized), labels with 10% flipped so
    the classes overlap (unregularized logistic/exponential then have a finite minimizer),
    and real regression targets y_reg = X w0 + noise. Returns (X, y_labels, y_reg)."""
    X, y = binary_dataset("breast_cancer")
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(y), n, replace=False)
    X, y = X[idx, :d].copy(), y[idx].copy()
    flip = rng.choice(n, n // 10, replace=False)
    y[flip] = 1 - y[flip]
    y_reg = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    return X, y, y_reg


def support_is_unique(svm, report):
    """The optimal alpha is unique when the KKT system on the free SVs is nonsingular.

    Free SVs satisfy Q_FF a_F + y_F b = 1 - Q_FB a_B; alpha_F (and b) are unique iff
    [[Q_FF, y_F], [y_F^T, 0]] has full rank (without intercept: Q_FF).
    """
    F = report.free
    Q = svm.gram[np.ix_(F, F)] * np.outer(svm.y[F], svm.y[F])
    if svm.intercept:
        M = np.block([[Q, svm.y[F][:, None]], [svm.y[F][None, :], np.zeros((1, 1))]])
    else:
        M = Q
    return np.linalg.matrix_rank(M, tol=1e-8 * max(1.0, np.abs(M).max())) == M.shape[0]


def sparse_rows(n: int, d: int, per_row: int, seed: int = 0):
    """A CSR matrix of ``per_row`` values a row (columns uniform, duplicates summed, values
    uniform on [0, 1)): text-like sparse data; and the generator, for the labels."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(d, size=(n, per_row)), axis=1).ravel()
    X = sp.csr_matrix((rng.random(n * per_row), cols, np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    X.sum_duplicates()
    return X, rng


def assert_path_point_exact(svm, path, C: float) -> None:
    """The exact C-path's interpolation ``path.at(C)`` passes the KKT check at 1e-9 and has
    the objective of an independent certified solve at C (to 1e-9 relative)."""
    problem = svm.with_C(C)
    alpha, b = path.at(C)
    between = problem.from_alpha(alpha, b=b)
    assert problem.kkt(between, tol=1e-9).passed
    reference = problem.solve(cert_tol=1e-9)
    P = problem.primal_objective(between)
    assert abs(P - reference.objective) <= 1e-9 * abs(reference.objective)
