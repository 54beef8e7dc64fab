"""The ERM oracle on row-chunked data: each value, gradient and Hessian is a chunk-wise sum.

With A = [X, 1] (or X) cut into row blocks A_k, x = (w, b), f_k = A_k x::

    n L(x)        = sum_k sum_{i in k} loss(y_i, f_i)
    n grad L(x)   = sum_k A_k^T l'(f_k)                       (a dim-vector per block)
    n hess L(x)   = sum_k A_k^T diag(l''(f_k)) A_k            (dim x dim per block)

so only x travels to the workers and only dim-vectors and dim x dim matrices travel back
(dim = d + 1 with an intercept). :class:`DaskERMOracle` has the interface of
:class:`~convexlearn.solvers.erm.oracle.ERMOracle`, so the package's own gradient descent,
Newton, proximal-gradient and subgradient loops run on a cluster unchanged; each call
is one pass over the data (the last point's values are remembered, since Newton asks
for the value, the gradient and then the Hessian at the same x).

The Gram matrix G = A^T A / n is reduced once at construction: it gives the column RMS
(the units of the certificate), the Lipschitz bound curvature * lambda_max(G), and, being
a sum of finite products, detects non-finite entries of X in the same pass.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from ..errors import DataError, NotApplicableError
from ..losses import Loss, make_loss, registered_name
from ..penalties import Penalty
from ..solvers.erm.oracle import ERMOracle
from .chunks import ChunkedData

__all__ = ["DaskERMOracle", "gram_of", "loss_token", "moments_of"]


def loss_token(loss: Loss) -> Any:
    """What a task carries for the loss: its name when registered (cheap to ship), else
    the Loss object itself (pickled by value)."""
    name = registered_name(loss)
    return loss if name is None else name


def _design(X: np.ndarray, intercept: bool) -> np.ndarray:
    return np.column_stack([X, np.ones(X.shape[0])]) if intercept else X


def _block_moments(X, y, intercept, weight=None):
    """(A_k^T V A_k, A_k^T V y, y^T V y, (column square sums of X, X^T v, sum y, sum y^2))
    on one row block (V = diag(v), I unweighted; the last tuple unweighted but for X^T v:
    the certificate's constants)."""
    A = _design(X, intercept)
    y = np.asarray(y, dtype=float)
    vy = y if weight is None else weight * y
    VA = A if weight is None else A * weight[:, None]
    XT_v = X.sum(axis=0) if weight is None else X.T @ weight
    return (A.T @ VA, A.T @ vy, float(y @ vy),
            (np.einsum("ij,ij->j", X, X), XT_v, float(np.sum(y)), float(y @ y)))


def _block_eval(X, y, x, loss, intercept, order, sums=False, weight=None):
    """(sum v loss, [A^T (v l')], [A^T diag(v l'') A], [certificate sums]) on one row
    block, up to ``order`` (v = 1 without weights). ``sums`` (order >= 1): also (sum g^2,
    sum g+, sum g-, X^T g+) with g = v l', the sums the certificate's first pass takes
    from a loss without kinks."""
    loss = make_loss(loss)
    v = 1.0 if weight is None else weight
    d = X.shape[1]
    f = X @ x[:d]
    if intercept:
        f += x[d]
    out = (float(np.sum(v * loss.value(y, f))),)
    if order >= 1:
        g = v * loss.derivative(y, f)
        grad = X.T @ g
        if sums:
            # two matrix-vector products (X^T [g+, g-] as one product is 10x slower:
            # not a BLAS call for the transposed view)
            g_pos = np.maximum(g, 0.0)
            extra = (float(g @ g), float(g_pos.sum()), float(g_pos.sum() - g.sum()),
                     X.T @ g_pos if intercept else np.zeros(d))
        out += (np.append(grad, g.sum()) if intercept else grad,)
    if order >= 2:
        h = v * loss.hessian(y, f)
        B = X * np.sqrt(h)[:, None]
        H = np.empty((x.size, x.size))
        H[:d, :d] = B.T @ B
        if intercept:
            H[:d, d] = H[d, :d] = X.T @ h
            H[d, d] = h.sum()
        out += (H,)
    if sums and order >= 1:
        out += (extra,)
    return out


class DaskERMOracle(ERMOracle):
    """:class:`~convexlearn.solvers.erm.oracle.ERMOracle` over :class:`ChunkedData`.

    Parameters
    ----------
    data : ChunkedData
    loss : Loss
    penalty : Penalty
    lam : float
    intercept : bool

    Attributes
    ----------
    gram : ndarray (dim, dim)
        G = A^T A / n.
    moments : tuple or None
        (A^T A / n, A^T y / n, y^T y / n, constants) when reduced here or given
        (:func:`moments_of`).
    units : ndarray (dim,)
        sqrt(diag G): the RMS of each column of A (the certificate's units).
    passes : int
        Passes over the data so far (each a map over the blocks and a tree reduction).
    """

    def __init__(self, data: ChunkedData, loss: Loss, penalty: Penalty, lam: float,
                 intercept: bool = True, gram: np.ndarray | None = None,
                 moments: tuple | None = None):
        # the sample weights live on the blocks (each block function gets its v)
        self.data, self.X, self.y, self.weights = data, None, None, None
        self.loss, self.penalty = loss, penalty
        self.lam, self.intercept = float(lam), bool(intercept)
        self.n, self.d = data.n, data.d
        self.dim = self.d + int(self.intercept)
        self._token = loss_token(loss)
        self._memo: tuple | None = None
        self.passes = 0
        # Newton asks for the Hessian at the point its line search accepted: computing it
        # in the same pass halves the passes, for a dim x dim block that costs little
        # next to a pass's latency (small dim only).
        self.eager_order = 2 if loss.has_hessian and self.dim <= 64 else 1
        if moments is None and gram is None:
            moments = moments_of(data, self.intercept)
        self.moments = moments
        self.gram = moments[0] if gram is None else gram
        # A loss without kinks: each gradient pass also returns the certificate's sums
        # (three scalars and X^T g+: ~1% of a Newton pass's work), so that the
        # certificate at the solver's last point (Newton's) needs no pass of its own
        # (certificate_sums).
        self.certificate_constants = None if moments is None else moments[3]
        self.eager_sums = self.certificate_constants is not None and not loss.kinks()
        self.units = np.sqrt(np.maximum(np.diag(self.gram), 0.0))

    # ---------------------------------------------------------------- passes
    def evaluate(self, x: np.ndarray, order: int) -> tuple:
        """(L(x), grad L(x), hess L(x)) up to ``order``, each divided by n (one pass, or
        none when the last point already had them)."""
        key = np.asarray(x, dtype=float)
        if self._memo is not None and self._memo[1] >= order and \
                np.array_equal(self._memo[0], key):
            return self._memo[2]
        order = max(order, self.eager_order) if order >= 1 else order
        sums = self.eager_sums and order >= 1
        parts = self.data.map_reduce(_block_eval, key.copy(), self._token, self.intercept,
                                     order, sums)
        self.passes += 1
        out = tuple(p / self.n for p in parts[:order + 1])
        self._memo = (key.copy(), order, out, parts if sums else None)
        return out

    def certificate_sums(self, x: np.ndarray) -> tuple | None:
        """The first pass of :func:`~.certificate.chunked_optimality` at x, from the last
        evaluation when it was at x with the certificate's sums (a loss without kinks: no
        sample on a kink, so no rows to gather), else None. The tuple is
        :func:`~.certificate._block_certificate`'s, summed over the blocks."""
        memo = self._memo
        if memo is None or memo[3] is None or not np.array_equal(memo[0], x):
            return None
        total, base = memo[3][0], memo[3][1]
        g_sq, pos, neg, XT_pos = memo[3][-1]
        col_sq, XT_v, y_sum, y_sq = self.certificate_constants
        empty = [np.zeros(0)]
        return (total, base, [np.zeros((0, self.dim))], empty, empty, empty, empty, g_sq,
                pos, neg, XT_pos, XT_v, y_sum, y_sq, col_sq)

    def scores(self, x: Any) -> NoReturn:
        """Refused: the n decision values of chunked data stay on the workers (the
        distributed methods use values, gradients and Hessians reduced chunk-wise)."""
        raise NotApplicableError("the decision values X w + b of a dask array stay on the "
                                 "workers: use value_grad / hessian (reduced chunk-wise)")

    def loss_value(self, x: np.ndarray) -> float:
        """L(x) = (1/n) sum_i loss(y_i, f_i) (one pass)."""
        return float(self.evaluate(x, 0)[0])

    def loss_value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(L(x), grad L(x)) (one pass)."""
        out = self.evaluate(x, 1)
        return float(out[0]), out[1].copy()

    def hessian(self, x: np.ndarray, dtype: Any = np.float64, stride: int = 1,
                penalty: bool = True) -> np.ndarray:
        """(1/n) A^T diag(l''(f)) A + lam diag(R''), reduced chunk-wise in float64.

        ``dtype`` and ``stride`` (the in-memory Newton's cheaper early Hessians) are
        accepted and ignored: here the cost of a pass is its latency, not its flops.
        """
        H = self.evaluate(x, 2)[2].copy()
        if penalty and self.lam > 0:
            w, _ = self.split(x)
            i = np.arange(self.d)
            H[i, i] += self.lam * self.penalty.hessian_diag(w)
        return H

    def lipschitz(self) -> float | None:
        """curvature * lambda_max(A^T A) / n (None for an unbounded curvature)."""
        if self.loss.curvature is None:
            return None
        return self.loss.curvature * float(np.linalg.eigvalsh(self.gram)[-1])


def moments_of(data: ChunkedData, intercept: bool) -> tuple:
    """(A^T V A / n, A^T V y / n, y^T V y / n, constants) reduced chunk-wise in one pass
    (the oracle's Gram matrix, and all a least-squares loss needs of the data; V = diag(v)
    the normalized weights, I without; constants = the certificate's sums that do not
    depend on the point: column square sums of X, X^T v, sum y, sum y^2); raises
    DataError when X or y has NaN/inf."""
    G, Aty, yy, constants = data.map_reduce(_block_moments, bool(intercept))
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(Aty)) and np.isfinite(yy)):
        raise DataError("X or y contains NaN or infinite values (found in the chunk-wise "
                        "moments A^T A, A^T y)")
    return G / data.n, Aty / data.n, yy / data.n, constants


def gram_of(data: ChunkedData, intercept: bool) -> np.ndarray:
    """G = A^T A / n reduced chunk-wise (:func:`moments_of`)."""
    return moments_of(data, intercept)[0]
