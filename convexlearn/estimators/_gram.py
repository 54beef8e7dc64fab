"""One Gram matrix of all training samples, shared by the binary problems of a multiclass fit.

The K (K - 1) / 2 one-vs-one problems of K classes (or the K one-vs-rest problems) are
problems on subsets of the same samples: each needs its block of the kernel matrix G of all
training samples. Forming G once evaluates every entry once, where solving each problem
from X evaluates its SMO columns, its products K beta (polish, certificate) and its
free-set blocks again, per problem (one-vs-one: every block of a class with itself is read
by K - 1 pairs). For one-vs-one, G is stored by class (:class:`SharedGram`): a pair's
block is then copied from four slices, with no gather.

Only for kernels PSD by construction (a block of G needs no check of its own) and when G
fits in :data:`SHARED_GRAM_BYTES` (LIBSVM's default kernel cache, 200 MiB).

rbf blocks come from :func:`~convexlearn.solvers.kernel_svm.gram_rbf.rbf_block` (BLAS's
product, then one compiled pass with SMO's vectorized exp; numpy's exp is a scalar libm
call, ~half of the digits Gram's cost) once the compiled SMO loop is loaded in the process.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..gram import SharedGram
from ..kernels import Kernel, make_kernel
from ..solvers.kernel_svm.certified_smo import compiled_loop_loaded

__all__ = ["SHARED_GRAM_BYTES", "SharedGram", "shared_gram"]

#: Largest shared Gram matrix, in bytes (8 n^2 for n training samples).
SHARED_GRAM_BYTES = 200 * 2**20

def shared_gram(spec: dict, gamma: Any, X: np.ndarray, codes: np.ndarray,
                scheme: str, max_bytes: float = SHARED_GRAM_BYTES,
                kernel: Kernel | None = None) -> SharedGram | None:
    """The shared Gram matrix of a fit, or None where it does not pay or does not apply.

    Parameters
    ----------
    spec : dict
        The estimator's kernel parameters (kernel, degree, coef0).
    gamma : float or None
        The resolved gamma.
    X : ndarray of shape (n, d)
        Training samples (dense).
    codes : ndarray of int, shape (n,)
        Class index (0 .. K-1) of each sample.
    scheme : {"ovo", "ovr"}
        One-vs-one stores G with the samples grouped by class (its problems read class
        blocks); one-vs-rest in training order (each problem reads all of G).
    max_bytes : float
        Largest G formed (the estimator's ``cache_size`` in bytes).
    kernel : Kernel, optional
        The fit's kernel already resolved from ``spec`` and ``gamma`` (else made here).

    Returns
    -------
    SharedGram or None
        None for two classes (one problem: SMO computes only the columns it needs, fewer
        than all of G), the linear kernel (its exact route works on X), callables,
        kernels not PSD by construction (each problem checks its own Gram matrix), and
        8 n^2 > ``max_bytes``.
    """
    n = X.shape[0]
    name = spec["kernel"]
    if (np.max(codes) < 2 or callable(name) or name in ("linear", "precomputed")
            or 8 * n * n > max_bytes):
        return None
    if kernel is None:
        kernel = make_kernel(name, X, gamma=gamma, degree=spec["degree"], coef0=spec["coef0"])
    if not kernel.known_psd:
        return None
    if kernel.name == "rbf" and compiled_loop_loaded(True):
        # rbf by BLAS's product and one compiled pass with a vectorized exp (gram_rbf),
        # once numba is initialized (the compiled SMO loop loaded): a process's first fits
        # stay in numpy, where loading numba would cost more than it saves (certified_smo).
        # The two exps differ by a few ulps, so a fit's last bits depend on whether the
        # process had loaded the loop before; each answer is certified either way
        from ..solvers.kernel_svm.gram_rbf import gram_block_function
        return SharedGram(gram_block_function(kernel), X, codes, scheme == "ovo")
    return SharedGram(kernel, X, codes, scheme == "ovo")
