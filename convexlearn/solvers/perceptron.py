"""The Rosenblatt perceptron's update loop.

The user-level :func:`convexlearn.perceptron.perceptron` (validation, embedding,
stopping rule, history and the mistake bound, which needs the hard-margin SVM) is built
on :func:`perceptron_pass`; the conventions follow.

On the homogeneous embedding ``x'_i = (1, x_i)`` (so ``<w', x'> = b + <w, x>``), starting
from ``w' = 0`` and visiting the samples in order, each *mistake*
``y_i <w', x'_i> <= 0`` triggers the update::

    w' <- w' + y_i x'_i

An epoch without a mistake ends the run (status "converged": w' separates the data).
If the data are linearly separable, the number of updates T obeys::

    T <= R^2 B^2,   R = max_i ||x'_i||,   B = min { ||w|| : y_i <w, x'_i> >= 1 for all i }

B is the norm of the hard-margin SVM without intercept on the embedded data
(``SVM(X', y, C=None, intercept=False)``), so R^2 B^2 = (R / gamma)^2 with gamma = 1/B
the best margin of a homogeneous separator of the embedded data. On data that are not
separable the loop stops after ``max_epochs`` epochs with status "not converged": it
never runs forever.

:func:`perceptron_pass` is the bare, reusable update loop (one epoch over given rows,
vectorized in blocks: the margins of a block are computed at once and the loop jumps to
the first mistake); :func:`perceptron` adds validation, the embedding, the stopping rule,
history and the bound (in :mod:`convexlearn.perceptron`: the bound solves an SVM, a
problem class that solvers do not import).
"""

from __future__ import annotations

import numpy as np

__all__ = ["perceptron_pass"]

_BLOCK = 256


def perceptron_pass(Z: np.ndarray, w: np.ndarray, block: int = _BLOCK) -> int:
    """One epoch of perceptron updates over the rows of ``Z = y[:, None] * X'``, in order.

    For each row z_i (a sample times its label), if ``<w, z_i> <= 0`` then
    ``w <- w + z_i``. ``w`` is updated in place.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Label-signed samples ``y_i x'_i`` in the order they are visited.
    w : ndarray of shape (p,)
        Current weights, modified in place.
    block : int
        Rows whose margins are computed in one matrix-vector product.

    Returns
    -------
    int
        The number of updates (mistakes) made in this epoch.
    """
    n, updates, pos = Z.shape[0], 0, 0
    while pos < n:
        stop = min(pos + block, n)
        bad = np.flatnonzero(Z[pos:stop] @ w <= 0)
        if bad.size == 0:
            pos = stop
            continue
        k = pos + int(bad[0])
        w += Z[k]
        updates += 1
        pos = k + 1          # rows after k must be re-scored with the new w
    return updates
