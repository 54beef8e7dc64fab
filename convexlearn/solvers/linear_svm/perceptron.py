"""The Rosenblatt perceptron's update loop: ``w <- w + y_i x_i`` at each mistake.

:func:`perceptron_pass` is the bare, reusable loop (one epoch over given rows, vectorized
in blocks: the margins of a block are computed at once and the loop jumps to the first
mistake). The user-level :func:`convexlearn.perceptron.perceptron` adds validation, the
embedding x' = (1, x), the stopping rule, history and the mistake bound T <= R^2 B^2
(it solves the hard-margin SVM, a problem class that solvers do not import); its
docstring states the conventions.
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
