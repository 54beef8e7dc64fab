"""Building claims from the pieces every source shares: one-vs-one kernel models (SVC and
LIBSVM files), linear models (scikit-learn's linear estimators and LIBLINEAR files), and
the checks of the data against a model (number of features, label set)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import DataError, NotApplicableError
from ..solution import Solution
from .report import Claim

__all__ = ["Source", "ovo_claims", "linear_claims", "check_labels", "check_features",
           "augmented", "not_in_package"]


class Source:
    """The claims of one model, and how its predictions combine them.

    ``scheme``: "binary" (one claim), "ovo" (one claim per pair of classes, majority
    vote, ties to the first class), "ovr" (one claim per class, largest decision value),
    or "regression" (no labels to flip). ``classes``: the model's classes in its order.
    ``predict_proba``: (predict_proba, predict) callables of a probabilistic model,
    compared sample by sample; ``notes``: facts the report prints.
    """

    def __init__(self, kind: str, claims: list[Claim], scheme: str, classes: Any = None,
                 notes: list[str] | None = None, predict_proba: Any = None):
        self.kind, self.claims, self.scheme = kind, claims, scheme
        self.classes = None if classes is None else np.asarray(classes)
        self.notes = list(notes or [])
        self.predict_proba = predict_proba

    def predict(self, decisions: list[np.ndarray]) -> np.ndarray | None:
        """Labels from the claims' decision values (None for regression)."""
        if self.scheme == "regression":
            return None
        if self.scheme == "ovr":
            return self.classes[np.argmax(np.vstack(decisions), axis=0)]
        votes = np.zeros((len(self.classes), decisions[0].shape[0]))
        for claim, f in zip(self.claims, decisions):
            votes[claim.pos] += f >= 0
            votes[claim.neg] += f < 0
        return self.classes[np.argmax(votes, axis=0)]


def not_in_package(what: str, needs: str) -> NotApplicableError:
    """The error for a model whose problem convexlearn cannot state yet."""
    return NotApplicableError(f"cannot verify {what}: its problem needs {needs}, which "
                              f"convexlearn does not have yet (see convexlearn.losses and "
                              f"docs/verify.md for what is verified)")


def check_features(X: Any, d: int, what: str) -> None:
    """DataError unless X has d columns."""
    if X.shape[1] != d:
        raise DataError(f"{what} was fitted on {d} features; the data have {X.shape[1]}")


def check_labels(y: np.ndarray, classes: np.ndarray, what: str) -> None:
    """DataError unless the labels of y are exactly the model's classes."""
    found = np.unique(y)
    wanted = np.unique(classes)
    if found.shape != wanted.shape or not np.all(found == wanted):
        raise DataError(f"the labels of the data {found[:10].tolist()} are not the classes "
                        f"of {what} {wanted[:10].tolist()}")


def augmented(scaling: float) -> Callable[[Any], Any]:
    """X -> [X, scaling * 1]: LIBLINEAR's bias feature (sparse stays sparse)."""
    def features(X):
        from scipy import sparse
        col = np.full((X.shape[0], 1), float(scaling))
        if sparse.issparse(X):
            return sparse.hstack([X, sparse.csr_matrix(col)], format="csr")
        return np.hstack([np.asarray(X, float), col])
    return features


def linear_claims(kind: str, X: Any, y: np.ndarray, W: np.ndarray, b: np.ndarray,
                  classes: np.ndarray, make_erm: Callable, bias: float | None,
                  notes: list | None = None) -> Source:
    """Claims of a linear classifier: W (d, k') and b (k'), one column per binary problem.

    One column: binary, positive for ``classes[1]`` of the two sorted classes (the caller
    signs W that way); k columns: one-vs-rest, column k positive for ``classes[k]``. ``bias``: LIBLINEAR's bias feature
    value (its weight is the last row of W, penalized) or None for an unpenalized
    intercept b. ``make_erm(Z, labels)`` builds the problem.
    """
    features = None if bias is None else augmented(bias)
    Z = X if features is None else features(X)
    claims = []
    if W.shape[1] == 1:
        erm = make_erm(Z, y)
        sol = Solution(w=W[:, 0].copy(), b=float(b[0]) if bias is None else 0.0)
        claims.append(Claim(erm, sol, f"{classes[0]} vs {classes[1]}", None, features,
                            pos=1, neg=0))
        scheme = "binary"
    else:
        for k in range(W.shape[1]):
            labels = (y == classes[k])
            erm = make_erm(Z, labels)
            sol = Solution(w=W[:, k].copy(), b=float(b[k]) if bias is None else 0.0)
            claims.append(Claim(erm, sol, f"{classes[k]} vs rest", None, features, pos=k,
                                neg=-1))
        scheme = "ovr"
    return Source(kind, claims, scheme, classes, notes)


def ovo_claims(kind: str, y: np.ndarray, classes: np.ndarray, sv_rows: np.ndarray,
               sv_class: np.ndarray, coef: np.ndarray, rho: np.ndarray,
               make_svm: Callable[[np.ndarray], Any], notes: list | None = None,
               predict_proba: Any = None) -> Source:
    """The claims of a LIBSVM one-vs-one model.

    ``classes``: the model's label order; ``sv_rows``: the row of each support vector in
    the data; ``sv_class``: its class (index into ``classes``); ``coef`` (k-1, l) and
    ``rho`` (k(k-1)/2,) as LIBSVM writes them: the pair (s, t), s < t, has decision value
    sum_i coef_i k(sv_i, x) - rho_p, positive for classes[s]; the coefficients of class
    s's vectors are in row t - 1, those of class t's in row s. In convexlearn's convention
    +1 is the larger label of the pair, so beta = +-coef and b = -+rho.
    ``make_svm(rows)`` builds the pair's problem on those rows of the data.
    """
    k = len(classes)
    claims, p = [], 0
    for s in range(k):
        for t in range(s + 1, k):
            rows = np.flatnonzero((y == classes[s]) | (y == classes[t]))
            svm = make_svm(rows)
            where = np.full(y.shape[0], -1)
            where[rows] = np.arange(rows.size)
            beta = np.zeros(rows.size)
            for cls, row in ((s, t - 1), (t, s)):
                mine = sv_class == cls
                beta[where[sv_rows[mine]]] = coef[row, mine]
            sign = 1.0 if svm.classes[1] == classes[s] else -1.0
            beta *= sign
            b = -sign * float(rho[p])
            alpha = svm.y * beta
            w = (svm.X.T @ beta) if svm.kernel.is_linear else None
            sol = Solution(w=None if w is None else np.asarray(w).ravel(), b=b, alpha=alpha,
                           dual_coef=beta, method=kind)
            pos, neg = (s, t) if sign > 0 else (t, s)
            whole = rows.size == y.shape[0]      # a binary model: its problem is all of X
            claims.append(Claim(svm, sol, f"{classes[s]} vs {classes[t]}",
                                None if whole else rows, None, pos=pos, neg=neg))
            p += 1
    return Source(kind, claims, "binary" if k == 2 else "ovo", classes, notes,
                  predict_proba)
