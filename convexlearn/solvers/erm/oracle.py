"""First- and second-order oracle of the ERM objective, shared by the iterative solvers.

The variable is x = (w, b) (b only with an intercept), A = [X, 1] (or X), f = A x::

    F(x)      = L(x) + lam R(w),     L(x) = (1/n) sum_i loss(y_i, f_i)
                (with sample weights s: L(x) = (1/sum s) sum_i s_i loss(y_i, f_i))
    grad L(x) = (1/n) A^T l'(f)                       (l' the derivative in f)
    hess L(x) = (1/n) A^T diag(l''(f)) A

Each solver states what it needs through :meth:`ERMOracle.require`, which raises a
NotApplicableError naming the method, the problem and what is missing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...data import is_sparse
from ...errors import NotApplicableError
from ...losses import Loss
from ...penalties import Penalty

__all__ = ["ERMOracle"]


def _sparse_norm2(X, intercept: bool) -> float:
    """||A||_2 for A = [X, 1] (or X) with X sparse, by a Lanczos SVD (svds), enlarged by
    1e-6 relative: an upper bound up to that accuracy, without densifying X."""
    from scipy.sparse import hstack
    from scipy.sparse.linalg import svds
    A = hstack([X, np.ones((X.shape[0], 1))], format="csr") if intercept else X
    if min(A.shape) < 3:
        return float(np.linalg.norm(A.toarray(), 2))
    top = svds(A, k=1, return_singular_vectors=False, tol=1e-8, random_state=0)
    return float(top[0]) * (1 + 1e-6)


class ERMOracle:
    """Values, (sub)gradients, Hessians and proximal steps of F over x = (w, b).

    Parameters
    ----------
    X : ndarray (n, d)
    y : ndarray (n,)
    loss : Loss
    penalty : Penalty
    lam : float
    intercept : bool
    sample_weight : ndarray (n,), optional
        s_i >= 0: the loss term is (1/sum s) sum_i s_i loss_i (a weighted mean, so integer
        weights are copies of samples and uniform weights change nothing).
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, loss: Loss, penalty: Penalty, lam: float,
                 intercept: bool = True, sample_weight: np.ndarray | None = None):
        self.X, self.y, self.loss, self.penalty = X, y, loss, penalty
        # weights normalized to mean 1: (1/sum s) sum s_i loss_i = mean(v_i loss_i), v = n s / sum s
        self.weights = (None if sample_weight is None
                        else np.asarray(sample_weight, float) * (y.shape[0] / np.sum(sample_weight)))
        self.lam, self.intercept = float(lam), bool(intercept)
        self.n, self.d = X.shape
        self.dim = self.d + int(self.intercept)
        # Scores f = A x of the last point asked for: Newton asks for the value, the
        # gradient and the Hessian at the same x, and X @ w is a full pass over X.
        self._last_x, self._last_f = None, None
        self._last_loss_grad = None       # (scores, grad L) of the last loss_value_grad
        self._buffers = {}

    # ------------------------------------------------------------------ shapes
    def split(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """(w, b) from x: w a view of x; b = 0.0 without an intercept."""
        return x[:self.d], (float(x[self.d]) if self.intercept else 0.0)

    def join(self, w: Any, b: float = 0.0) -> np.ndarray:
        """x = (w, b) as a new float array (w alone without an intercept)."""
        w = np.asarray(w, dtype=float)
        return np.append(w, float(b)) if self.intercept else w.copy()

    def zeros(self) -> np.ndarray:
        """The point x = 0, of dimension d (d + 1 with an intercept)."""
        return np.zeros(self.dim)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """f = X w + b (remembered for the last x: callers must not modify the result)."""
        last = self._last_x
        # (np.array_equal's checks cost more than the comparison at this size)
        if last is not None and last.shape == x.shape and bool((last == x).all()):
            return self._last_f
        w, b = self.split(x)
        f = self.X @ w
        if b:
            f += b
        self._last_x, self._last_f = np.array(x, dtype=float), f
        return f

    def _AT(self, g: np.ndarray) -> np.ndarray:
        """A^T g for A = [X, 1]."""
        out = self.X.T @ g
        return np.append(out, g.sum()) if self.intercept else out

    def _pad(self, v: np.ndarray) -> np.ndarray:
        return np.append(v, 0.0) if self.intercept else v

    # ---------------------------------------------------------------- requests
    def describe(self) -> str:
        """The problem in words (loss, penalty, lam), for error messages."""
        return (f"ERM with the {self.loss.name} loss and the {self.penalty.describe()} penalty "
                f"(lam={self.lam:g})")

    def require(self, method: str, *, differentiable_loss: bool = False, hessian: bool = False,
                smooth_penalty: bool = False, twice_smooth_penalty: bool = False,
                prox: bool = False,
                subgradient: bool = False) -> None:
        """Raise NotApplicableError when ``method`` needs what this problem lacks: the
        loss capabilities "gradient" / "hessian", the penalty capabilities "gradient"
        (when lam > 0) and "prox"; every method needs "convex" of both."""
        loss, pen = self.loss, self.penalty
        problem = self.describe()
        if not loss.has("convex") or not pen.has("convex"):
            bad = loss.name if not loss.has("convex") else pen.name
            raise NotApplicableError(f"{method} cannot solve {problem}: {bad} is not convex "
                                     f"(it is for evaluation only)")
        if hessian and not loss.has("hessian"):
            other = "'gd' or 'fista'" if loss.has("gradient") else "'subgradient' or 'exact'"
            raise NotApplicableError(f"{method} needs a twice-differentiable loss; {loss.name} "
                                     f"({loss.formula}) is not (in {problem}, it lacks the "
                                     f"loss capability 'hessian'); use {other}")
        if differentiable_loss and not loss.has("gradient"):
            raise NotApplicableError(f"{method} needs a differentiable loss; {loss.name} "
                                     f"({loss.formula}) is not (in {problem}, it lacks the "
                                     f"loss capability 'gradient'); use method='subgradient' "
                                     f"or 'exact'")
        if (smooth_penalty or twice_smooth_penalty) and not pen.has("gradient") \
                and self.lam > 0:
            raise NotApplicableError(f"{method} needs a differentiable penalty; "
                                     f"{pen.describe()} ({pen.formula}) is not (in {problem}, "
                                     f"it lacks the penalty capability 'gradient'); use "
                                     f"'prox' or 'fista' for l1/elastic net, or 'subgradient'")
        if prox:
            pen.require(method, problem, "prox")

    # ------------------------------------------------------------------ values
    def loss_value(self, x: np.ndarray) -> float:
        """L(x) = (1/n) sum_i loss(y_i, f_i), with f = A x."""
        return float(np.mean(self._weighted(self.loss.value(self.y, self.scores(x)))))

    def _weighted(self, per_sample: np.ndarray) -> np.ndarray:
        """v_i * per_sample_i (the normalized sample weights; unchanged without weights)."""
        return per_sample if self.weights is None else self.weights * per_sample

    def value(self, x: np.ndarray) -> float:
        """F(x) = L(x) + lam R(w)."""
        w, _ = self.split(x)
        reg = self.lam * self.penalty.value(w) if self.lam > 0 else 0.0
        return self.loss_value(x) + reg

    def loss_value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(L(x), grad L(x)) for a differentiable loss."""
        f = self.scores(x)
        last = self._last_loss_grad
        if last is not None and last[0] is f:     # asked again at the same point: no pass
            grad = last[1].copy()
        else:
            grad = self._AT(self._weighted(self.loss.derivative(self.y, f))) / self.n
        self._last_loss_grad = (f, grad)      # (the scores object identifies the point)
        return float(np.mean(self._weighted(self.loss.value(self.y, f)))), grad

    def last_loss_grad(self, x: np.ndarray) -> np.ndarray | None:
        """grad L(x) = (1/n) A^T (v * l'(f)) as the last :meth:`loss_value_grad` at this
        x computed it, else None (no pass over X: for a certificate of the iterate)."""
        # (getattr: an oracle without the in-memory scores, e.g. the distributed one)
        last, at = getattr(self, "_last_loss_grad", None), getattr(self, "_last_x", None)
        if last is None or at is None or last[0] is not self._last_f or at.shape != x.shape \
                or not bool((at == x).all()):
            return None
        return last[1]

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(F(x), grad F(x)) for a differentiable loss and penalty."""
        value, grad = self.loss_value_grad(x)
        w, _ = self.split(x)
        if self.lam > 0:
            value += self.lam * self.penalty.value(w)
            grad = grad + self.lam * self._pad(self.penalty.subgradient(w))
        return value, grad

    def value_subgradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(F(x), g) with g one subgradient of F at x (sum rule, chain rule through A)."""
        return self.value_grad(x)   # derivative() and subgradient() return subgradients

    def hessian(self, x: np.ndarray, dtype: Any = np.float64, stride: int = 1,
                penalty: bool = True) -> np.ndarray:
        """(1/m) A_S^T diag(l''(f_S)) A_S + lam diag(R''), S = every ``stride``-th sample.

        With ``stride=1`` S is every sample and this is the Hessian of F (generalized for
        the squared hinge). A larger stride gives a subsampled estimate of the loss part
        (m = ceil(n / stride) rows; Byrd et al. 2011), used by Newton's early iterations
        (see :func:`~convexlearn.solvers.erm.newton.newton`).

        The X block is formed as B^T B with B = sqrt(l'') * X_S (l'' >= 0 for convex
        losses): numpy then uses the symmetric rank-k product, half the flops of
        X^T (l'' * X). ``dtype`` float32 halves the time again; B lives in a buffer kept
        across calls (a fresh n x d array per call costs as much as the product, in page
        faults). The intercept row, X_S^T l'' and sum l'', is formed in float64.
        ``penalty=False`` leaves out lam R'' (the loss's curvature alone, defined for every
        penalty). Returned in float64.
        """
        h = self._weighted(self.loss.hessian(self.y, self.scores(x)))
        X = self.X
        if self.sparse:
            raise NotApplicableError(
                f"the dense Hessian ({self.dim} x {self.dim}) of a sparse X is not formed; "
                f"use hessian_vector (Newton takes CG steps on sparse X)")
        if stride > 1:
            X, h = X[::stride], h[::stride]
        m = X.shape[0]
        B = self._hessian_buffer(dtype)[:m]
        np.multiply(X, np.sqrt(h)[:, None], out=B, casting="same_kind")
        H = np.empty((self.dim, self.dim))
        H[:self.d, :self.d] = B.T @ B
        if self.intercept:
            H[:self.d, self.d] = H[self.d, :self.d] = X.T @ h
            H[self.d, self.d] = h.sum()
        H /= m
        if penalty and self.lam > 0:
            w, _ = self.split(x)
            d = np.arange(self.d)
            H[d, d] += self.lam * self.penalty.hessian_diag(w)
        return H

    @property
    def sparse(self) -> bool:
        """X is a scipy.sparse matrix (every product here then keeps it sparse)."""
        return is_sparse(self.X)

    def curvature(self, x: np.ndarray) -> np.ndarray:
        """l''(f_i) at x, per sample (the weights of the Gauss-Newton / Hessian products)."""
        return self._weighted(self.loss.hessian(self.y, self.scores(x)))

    def hessian_vector(self, x: np.ndarray, v: np.ndarray, h: np.ndarray | None = None,
                       penalty: bool = True) -> np.ndarray:
        """H v = (1/n) A^T (l'' * (A v)) + lam R''(w) v, by two products with X (never
        forming H: O(nnz(X)) for a sparse X). ``h``: l''(f) at x, if already computed."""
        h = self.curvature(x) if h is None else h
        vw, vb = self.split(v)
        Av = self.X @ vw
        if self.intercept:
            Av = Av + vb
        out = self._AT(h * Av) / self.n
        if penalty and self.lam > 0:
            w, _ = self.split(x)
            out[:self.d] += self.lam * self.penalty.hessian_diag(w) * vw
        return out

    def _hessian_buffer(self, dtype) -> np.ndarray:
        """An n x d work array of ``dtype`` for the Hessian's weighted rows, kept per dtype."""
        key = np.dtype(dtype)      # (hashable; its .name costs ~15 us)
        if key not in self._buffers:
            self._buffers[key] = np.empty((self.n, self.d), dtype=dtype)
        return self._buffers[key]

    def _A(self) -> np.ndarray:
        """A = [X, 1] (or X)."""
        return np.column_stack([self.X, np.ones(self.n)]) if self.intercept else self.X

    def lipschitz(self) -> float | None:
        """An upper bound on the Lipschitz constant of grad L: curvature * ||A||_2^2 / n.

        None when the loss curvature is unbounded (exponential): use a line search.
        """
        if self.loss.curvature is None:
            return None
        if self.weights is not None:       # sqrt(v) rows: ||diag(sqrt v) A||^2 <= max v ||A||^2
            scale = float(np.max(self.weights))
            return scale * ERMOracle(self.X, self.y, self.loss, self.penalty, self.lam,
                                     self.intercept).lipschitz()
        if self.sparse:
            return self.loss.curvature * _sparse_norm2(self.X, self.intercept) ** 2 / self.n
        return self.loss.curvature * float(np.linalg.norm(self._A(), 2)) ** 2 / self.n

    def prox(self, x: np.ndarray, t: float) -> np.ndarray:
        """prox of t lam R applied to w (b is unpenalized and passes through)."""
        w, _ = self.split(x)
        out = x.copy()
        out[:self.d] = self.penalty.prox(w, t * self.lam) if self.lam > 0 else w
        return out

    # ---------------------------------------------------------------- results
    def solution(self, x: np.ndarray, method: str, status: str, n_iter: int, history: Any,
                 time_s: float, objective: float | None = None, **provenance) -> Any:
        """Wrap an iterate as a :class:`~convexlearn.solution.Solution` (objective = F(x);
        pass ``objective`` when the solver already holds F(x) in float64)."""
        from ...solution import Solution
        w, b = self.split(x)
        F = self.value(x) if objective is None else float(objective)
        return Solution(w=w.copy(), b=b, objective=F, status=status, method=method,
                        n_iter=n_iter, history=history, time_s=time_s,
                        provenance={"solver": f"convexlearn.{method}", **provenance})
