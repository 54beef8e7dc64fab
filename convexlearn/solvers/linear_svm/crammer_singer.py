"""The exact Crammer-Singer multiclass SVM: the sequential dual method, then an active-set
finish in W-space, certified by the duality gap.

Problem and dual: :mod:`convexlearn.formulations.svm_variants`; certificate:
:mod:`convexlearn.certify.crammer_singer`. The dual puts a mass mu_i (summing to C_i) on
the classes of sample i; A_i = C_i e_{y_i} - mu_i and W = A^T X.

1. LIBLINEAR's sequential dual method (:mod:`.cs_kernel`: one exact k-variable step per
   sample) to a loose tolerance guesses, per sample, the classes S_i that carry mass.
2. Finish: with S_i fixed, the masses of a sample with |S_i| >= 2 are C_i on its first
   class m0 moved by lambda_ij to its others m_j, and optimality asks the classes of S_i
   to tie: <w_{m_j} - w_{m0}, x_i> = e_{i m0} - e_{i m_j}. W = W_fix - M^T lambda (rows of
   M: x_i in block m_j, -x_i in block m0) turns that into the F x F system
   (M M^T) lambda = M W_fix - r, solved by least squares. A sample whose masses come out
   negative leaves the set of its most negative class, a class whose score beats the tie
   joins it (primal-dual active-set rounds); the duality gap, recomputed from the data,
   decides.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...certify.crammer_singer import crammer_singer_certificate
from ...solution import Timer
from .cs_kernel import cs_epoch
from .linear_active_set import one_blas_thread

__all__ = ["crammer_singer_exact", "cs_dual_cd", "finish_sets", "sets_from_scores",
           "polish_dual"]


def cs_dual_cd(X: np.ndarray, codes: np.ndarray, k: int, C: np.ndarray, eps: float,
               max_epochs: int, seed: Any = 0, A0: np.ndarray | None = None) -> tuple:
    """The sequential dual method until the largest per-sample gradient spread <= eps.
    Returns (A, W, epochs, spread)."""
    n, d = X.shape
    rng = np.random.default_rng(seed)
    A = np.zeros((n, k)) if A0 is None else np.array(A0, dtype=float)
    W = A.T @ X
    sq = np.einsum("ij,ij->i", X, X)
    spread, epoch = np.inf, 0
    for epoch in range(1, max_epochs + 1):
        spread = cs_epoch(X, sq, codes, C, A, W, rng.permutation(n), eps)
        if spread <= eps:
            break
    return A, A.T @ X, epoch, spread


def _masses(A, codes, C):
    mu = -np.array(A, dtype=float)
    rows = np.arange(A.shape[0])
    mu[rows, codes] = C - A[rows, codes]
    return mu


def finish_sets(X: np.ndarray, codes: np.ndarray, k: int, C: np.ndarray,
                sets: list) -> tuple[np.ndarray, np.ndarray]:
    """W and A for the sets (module docstring, step 2); None when the system is empty."""
    n, d = X.shape
    rows_i, m0s, mjs = [], [], []
    W = np.zeros((k, d))
    A = np.zeros((n, k))
    for i, S in enumerate(sets):
        m0 = S[0]
        A[i, codes[i]] += C[i]
        A[i, m0] -= C[i]
        for mj in S[1:]:
            rows_i.append(i)
            m0s.append(m0)
            mjs.append(mj)
    W = A.T @ X
    if not rows_i:
        return W, A
    ri, m0a, mja = np.array(rows_i), np.array(m0s), np.array(mjs)
    F = ri.size
    E = np.ones((n, k))
    E[np.arange(n), codes] = 0.0
    Xi = X[ri]
    # M W_fix - r:  <w_mj - w_m0, x_i> - (e_{i m0} - e_{i mj})
    S = Xi @ W.T
    rhs = (S[np.arange(F), mja] - S[np.arange(F), m0a]) - (E[ri, m0a] - E[ri, mja])
    # M M^T = (x_i . x_i') * ((e_mj - e_m0) . (e_m'j' - e_m'0))
    G = Xi @ Xi.T
    cls = (np.equal.outer(mja, mja).astype(float) - np.equal.outer(mja, m0a)
           - np.equal.outer(m0a, mja) + np.equal.outer(m0a, m0a))
    lam = np.linalg.lstsq(G * cls, rhs, rcond=None)[0]
    np.add.at(A, (ri, mja), -lam)
    np.add.at(A, (ri, m0a), lam)
    return A.T @ X, A


def _sets_from(A, codes, C, V, xi, cut):
    """Per sample: the classes with mass > cut, the first the one of largest mass."""
    mu = _masses(A, codes, C)
    sets = []
    for i in range(A.shape[0]):
        on = np.flatnonzero(mu[i] > cut * max(C[i], 1e-300))
        if on.size == 0:
            on = np.array([int(np.argmax(mu[i]))])
        on = on[np.argsort(-mu[i, on], kind="stable")]
        sets.append(list(on))
    return sets


def crammer_singer_exact(X: np.ndarray, codes: np.ndarray, k: int, C: np.ndarray, *,
                         gap_tol: float = 1e-9, tol: float = 1e-6, seed: Any = 0,
                         max_rounds: int = 30) -> tuple[np.ndarray, np.ndarray, dict]:
    """(W, A, info): the certified Crammer-Singer solution (module docstring). ``info``
    holds the certificate and the counts (epochs, rounds); ``info["certificate"]["passed"]``
    says whether the duality gap met ``gap_tol``."""
    timer = Timer()
    X = np.ascontiguousarray(X, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    C = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=float), (X.shape[0],)))
    eps, epochs, A0 = 1e-1, 0, None
    best = None
    rounds = 0
    with one_blas_thread():
        for _ in range(6):      # a looser set guess first; CD tightened while it fails
            A, W, ep, _ = cs_dual_cd(X, codes, k, C, eps, 2000, seed, A0)
            epochs += ep
            A0 = A
            cert = crammer_singer_certificate(X, codes, C, W, A, tol, gap_tol)
            cand = (W, A, cert)
            if best is None or cert["relative_gap"] < best[2]["relative_gap"]:
                best = cand
            if cert["passed"]:
                break
            best = min(best, polish_dual(X, codes, k, C, A, tol, gap_tol, max_rounds),
                       key=lambda c: (not c[2]["passed"], c[2]["relative_gap"]))
            rounds += best[2].get("rounds", 0)
            if best[2]["passed"]:
                break
            eps /= 100.0
    W, A, cert = best
    return W, A, {"certificate": cert, "epochs": epochs, "rounds": rounds, "time_s": timer()}


def polish_dual(X: np.ndarray, codes: np.ndarray, k: int, C: np.ndarray, A: np.ndarray,
                tol: float = 1e-6, gap_tol: float = 1e-9,
                max_rounds: int = 30) -> tuple:
    """The active-set finish (module docstring, step 2) from multipliers ``A`` (the sets
    read off their masses, and off the scores of W = A^T X): (W, A, certificate) of the
    best point met; the certificate's ``rounds`` counts the systems solved."""
    X = np.ascontiguousarray(X, dtype=float)
    best, rounds = None, 0
    with one_blas_thread():
        for sets in (_sets_from(A, codes, C, None, None, 1e-8),
                     sets_from_scores(X, codes, A.T @ X)):
            for _ in range(max_rounds):
                rounds += 1
                Wf, Af = finish_sets(X, codes, k, C, sets)
                cert = crammer_singer_certificate(X, codes, C, Wf, Af, tol, gap_tol)
                if best is None or (cert["passed"], -cert["relative_gap"]) > (
                        best[2]["passed"], -best[2]["relative_gap"]):
                    best = (Wf, Af, cert)
                if cert["passed"] or not _repair(sets, X, codes, C, Wf, Af):
                    break
            if best[2]["passed"]:
                break
    best[2]["rounds"] = rounds
    return best


def _repair(sets, X, codes, C, W, A) -> bool:
    """One primal-dual active-set update of ``sets``: drop the most negative mass of each
    sample, add the class with the largest score above the tie; True if a set changed."""
    n = X.shape[0]
    rows = np.arange(n)
    mu = _masses(A, codes, C)
    S = X @ W.T
    V = S - S[rows, codes][:, None] + 1.0
    V[rows, codes] = 0.0
    changed = False
    for i in range(n):
        Si = sets[i]
        neg = [m for m in Si if mu[i, m] < -1e-12 * max(C[i], 1e-300)]
        if neg and len(Si) > 1:
            worst = min(neg, key=lambda m: mu[i, m])
            Si.remove(worst)
            changed = True
            continue
        tie = V[i, Si[0]]
        out = [m for m in range(W.shape[0]) if m not in Si]
        if out:
            m = max(out, key=lambda m: V[i, m])
            if V[i, m] > tie + 1e-12 * max(1.0, abs(tie)):
                Si.append(m)
                changed = True
    return changed


def sets_from_scores(X: np.ndarray, codes: np.ndarray, W: np.ndarray,
                     band: float = 1e-6) -> list:
    """Per sample, the classes whose v_im = e_im + <w_m - w_{y_i}, x_i> is within ``band``
    (relative to max(1, |xi_i|)) of the max xi_i, the largest first: the active classes of a
    primal point (for the multipliers of a primal-only answer)."""
    n = X.shape[0]
    rows = np.arange(n)
    S = X @ W.T
    V = S - S[rows, codes][:, None] + 1.0
    V[rows, codes] = 0.0
    xi = V.max(axis=1)
    sets = []
    for i in range(n):
        on = np.flatnonzero(V[i] >= xi[i] - band * max(1.0, abs(xi[i])))
        sets.append(list(on[np.argsort(-V[i, on], kind="stable")]))
    return sets
