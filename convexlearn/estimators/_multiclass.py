"""Multiclass decompositions of a binary kernel classifier, in scikit-learn's SVC layout.

One-vs-one (SVC's, LIBSVM's): for classes c_0 < ... < c_{K-1}, one binary problem per pair
(i, j), i < j, in the order (0, 1), (0, 2), ..., (0, K-1), (1, 2), ...; class i is +1 and
class j is -1 in problem (i, j) (LIBSVM's sign, kept by scikit-learn's public attributes for
K > 2), so a pairwise value f_ij(x) > 0 votes for i, else for j (LIBSVM's rule: an exact
zero votes for j). The prediction is the class with the most votes, ties to the lowest
class. scikit-learn's "ovr" transform of the pairwise values (:func:`ovr_from_ovo`) counts
an exact zero for i instead, as SVC's ``decision_function`` does; so, as in SVC, the argmax
of that transform may differ from ``predict`` where a value is zero (``break_ties=True``
predicts that argmax).

One-vs-rest: problem k separates c_k (+1) from the rest (-1); prediction argmax_k f_k(x).

Two classes: one problem with classes_[1] as +1 (scikit-learn's public sign for K = 2).

Fitted layout (:class:`Expansion`), as SVC's:

* ``support_``: training indices of the support vectors, grouped by class (class order),
  increasing within a class; ``n_support_[c]`` of them belong to class c.
* ``dual_coef_``: one-vs-one, shape (K - 1, n_SV): the coefficient y_s alpha_s of support
  vector s (of class c) in problem (c, c') sits in row c' - 1 if c < c', else in row c'.
  One-vs-rest, shape (K, n_SV): row k is problem k. Two classes: shape (1, n_SV).
* ``intercept_``: b of each problem, in problem order.

so that, for the pair p = (i, j) and K_i = k(x, support vectors of class i)::

    f_ij(x) = K_i @ dual_coef_[j - 1, class i] + K_j @ dual_coef_[i, class j] + intercept_[p]

Rounding. Two evaluations of f(x) = sum_s beta_s k_s(x) + b that add the terms in different
orders (a matrix product is blocked by the batch size) differ by at most
2 gamma_m sum_s |beta_s k_s(x)| + |b| (gamma_m = m u / (1 - m u), m = n_SV + 1 terms,
u = 2^-53). Values that close are indistinguishable in floating point, so the decisions
below treat them as equal: one-vs-rest ties go to the lowest class, a pairwise value within
its bound of 0 is a zero (votes for j in ``predict``, for i in the "ovr" transform). Predictions are then the same whatever the batch (found by
scikit-learn's check_methods_subset_invariance: a sample on the margin of two one-vs-rest
problems had f = -1 in both, and the batch decided the class).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["ovo_pairs", "Expansion", "fit_decomposition", "rounding_bound", "vote",
           "ovr_from_ovo", "argmax_ties_low"]

#: fit_binary(rows, y_pm) -> (beta over rows, b): one binary problem on the training samples
#: ``rows`` with labels y_pm in {-1, +1}; beta_s = y_s alpha_s (zero off the support).
BinaryFit = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, float]]


def ovo_pairs(n_classes: int) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, in SVC's order (0, 1), (0, 2), ..., (1, 2), ..."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


@dataclass
class Expansion:
    """A fitted decomposition in SVC's layout (see the module docstring)."""

    scheme: str                  # "binary", "ovo" or "ovr"
    n_classes: int
    support: np.ndarray          # training indices, grouped by class
    n_support: np.ndarray        # per class
    dual_coef: np.ndarray        # (K - 1, n_SV) ovo; (K, n_SV) ovr; (1, n_SV) binary
    intercept: np.ndarray        # per problem

    @property
    def problems(self) -> list[tuple[int, int]]:
        """(i, j) per one-vs-one problem; (k, -1) per one-vs-rest problem; (1, 0) binary."""
        if self.scheme == "ovo":
            return ovo_pairs(self.n_classes)
        if self.scheme == "ovr":
            return [(k, -1) for k in range(self.n_classes)]
        return [(1, 0)]

    def coefficients(self) -> np.ndarray:
        """(n_problems, n_SV): problem p's coefficient of each support vector (0 where the
        vector is not in the problem), so that F = k(X, SV) @ coefficients().T + intercept."""
        if self.scheme != "ovo":
            return self.dual_coef
        bounds = np.concatenate([[0], np.cumsum(self.n_support)])
        out = np.zeros((len(self.intercept), self.support.size))
        for p, (i, j) in enumerate(ovo_pairs(self.n_classes)):
            si, sj = slice(bounds[i], bounds[i + 1]), slice(bounds[j], bounds[j + 1])
            out[p, si] = self.dual_coef[j - 1, si]
            out[p, sj] = self.dual_coef[i, sj]
        return out


def fit_decomposition(codes: np.ndarray, n_classes: int, scheme: str,
                      fit_binary: BinaryFit) -> tuple[Expansion, list]:
    """Fit every binary problem of ``scheme`` and lay the expansion out as SVC does.

    Parameters
    ----------
    codes : ndarray of int, shape (n,)
        Class index (0 .. K-1) of each training sample.
    n_classes : int
    scheme : {"ovo", "ovr"}
        Ignored for two classes (one problem, classes_[1] as +1).
    fit_binary : callable
        ``fit_binary(rows, y_pm) -> (beta, b, extra)`` for the samples ``rows`` (indices
        into the training set; one-vs-one: class i's, then class j's, increasing within
        each) with labels y_pm in {-1, +1}; ``extra`` is kept, per problem, in the
        returned list.

    Returns
    -------
    expansion : Expansion
    extras : list
        ``extra`` of each problem, in problem order.
    """
    n = codes.shape[0]
    if n_classes == 2:
        return _fit_binary_layout(codes, fit_binary)
    if scheme == "ovr":
        tasks = [(np.arange(n), np.where(codes == k, 1.0, -1.0)) for k in range(n_classes)]
    else:
        # class i's samples, then class j's: blocks of a class-grouped Gram matrix are
        # then contiguous (estimators._gram)
        members = [np.flatnonzero(codes == c) for c in range(n_classes)]
        tasks = [(np.concatenate([members[i], members[j]]),
                  np.repeat([1.0, -1.0], [members[i].size, members[j].size]))
                 for i, j in ovo_pairs(n_classes)]
    betas = np.zeros((len(tasks), n))
    intercept, extras = np.empty(len(tasks)), []
    for p, (rows, y_pm) in enumerate(tasks):
        beta, b, extra = fit_binary(rows, y_pm)
        betas[p, rows] = beta
        intercept[p] = b
        extras.append(extra)
    used = np.any(betas != 0, axis=0)
    # grouped by class, increasing index within a class (a stable sort on the class code)
    candidates = np.flatnonzero(used)
    support = candidates[np.argsort(codes[candidates], kind="stable")]
    n_support = np.bincount(codes[support], minlength=n_classes).astype(np.int32)
    if scheme != "ovo":
        dual_coef = betas[:, support]
    else:
        dual_coef = np.zeros((n_classes - 1, support.size))
        sv_class = codes[support]
        for p, (i, j) in enumerate(ovo_pairs(n_classes)):
            of_i, of_j = sv_class == i, sv_class == j
            dual_coef[j - 1, of_i] = betas[p, support[of_i]]
            dual_coef[i, of_j] = betas[p, support[of_j]]
    return Expansion(scheme, n_classes, support, n_support, dual_coef, intercept), extras


def _fit_binary_layout(codes: np.ndarray, fit_binary: BinaryFit) -> tuple[Expansion, list]:
    """:func:`fit_decomposition` for two classes: one problem on all samples, class 1 as
    +1; the same layout, without the general case's (problems x n) table (a fixed cost of
    small fits)."""
    beta, b, extra = fit_binary(np.arange(codes.shape[0]), np.where(codes == 1, 1.0, -1.0))
    used = np.asarray(beta) != 0
    of_0, of_1 = np.flatnonzero(used & (codes == 0)), np.flatnonzero(used & (codes == 1))
    support = np.concatenate([of_0, of_1])
    n_support = np.array([of_0.size, of_1.size], dtype=np.int32)
    dual_coef = np.asarray(beta, dtype=float)[support][None, :]
    return Expansion("binary", 2, support, n_support, dual_coef, np.array([float(b)])), [extra]


def rounding_bound(abs_terms: np.ndarray, abs_intercept: np.ndarray, n_terms: int) -> np.ndarray:
    """gamma_m (sum_s |beta_s k_s(x)| + |b|), m = n_terms + 1: the worst-case error of one
    float64 evaluation of sum_s beta_s k_s(x) + b, whatever the order of the sum."""
    u = np.finfo(np.float64).eps / 2
    m = n_terms + 1
    return (m * u / (1 - m * u)) * (abs_terms + abs_intercept)


def argmax_ties_low(D: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per row, the first column whose value is within rounding of the row's maximum:
    |D_k - D_max| <= bound_k + bound_max (see the module docstring)."""
    top = np.argmax(D, axis=1)
    rows = np.arange(D.shape[0])
    close = D >= (D[rows, top] - bound[rows, top])[:, None] - bound
    return np.argmax(close, axis=1)


def vote(D: np.ndarray, bound: np.ndarray, n_classes: int,
         zero_for_i: bool = False) -> np.ndarray:
    """Votes (n, K) of the one-vs-one values D (n, n_pairs): f_ij > 0 votes for i, else for
    j; a value within its rounding bound of 0 is a zero, which votes for j (LIBSVM's
    prediction) or, with ``zero_for_i``, for i (scikit-learn's "ovr" transform)."""
    votes = np.zeros((D.shape[0], n_classes))
    for p, (i, j) in enumerate(ovo_pairs(n_classes)):
        for_i = D[:, p] >= -bound[:, p] if zero_for_i else D[:, p] > bound[:, p]
        votes[for_i, i] += 1
        votes[~for_i, j] += 1
    return votes


def ovr_from_ovo(D: np.ndarray, bound: np.ndarray, n_classes: int) -> np.ndarray:
    """scikit-learn's "ovr" shape of one-vs-one values: votes + c / (3 (|c| + 1)), with
    c_k = sum of the pairwise values in k's favour (f_ij for i, -f_ij for j). The second
    term lies in (-1/3, 1/3): it orders classes with equal votes, never changes the votes."""
    conf = np.zeros((D.shape[0], n_classes))
    for p, (i, j) in enumerate(ovo_pairs(n_classes)):
        conf[:, i] += D[:, p]
        conf[:, j] -= D[:, p]
    return vote(D, bound, n_classes, zero_for_i=True) + conf / (3 * (np.abs(conf) + 1))
