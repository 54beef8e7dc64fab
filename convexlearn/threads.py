"""BLAS threads for small problems on a busy machine: one thread where threads cost more
than they gain.

OpenBLAS splits a product over its threads from about a million flops; when the machine
has more runnable processes than cores, each split waits for a time slice. Measured on the
2-core test machine under load: the certified lasso on 1000 x 50 took 19 ms with the
default threads and 1.6 ms with one (scikit-learn's Lasso, whose Cython loop calls no
threaded BLAS, 1.3-1.7 ms either way). :func:`one_blas_thread` limits BLAS to one thread
inside a ``with`` block through threadpoolctl, when installed (else nothing changes); its
controller is built once (10-50 ms: it inspects the loaded libraries), each limit then
costs ~15 us. :func:`small_problem_threads` asks for it for tiny problems always, and for
small problems on a busy machine (1-minute load average >= the number of cores): an idle
machine's first solve of a problem beyond :data:`TINY_PROBLEM_ENTRIES` does not pay for
the controller, and its threads do not wait. Tiny problems cannot gain from a second
thread, and the load average lags the load: measured, squared hinge + l2 on 569 x 30 by
Newton took 3-4 ms CPU on one thread and 100-150 ms CPU (0.2-0.3 s wall) with OpenBLAS's
two threads on a loaded machine that :func:`busy` called idle.

The kernel SVM's exact route (:func:`kernel_solve_threads`) runs on one thread from
n > :data:`KERNEL_ONE_THREAD_N` samples up, whatever the load: its BLAS work is the
polish's factorizations, triangular solves and matrix-vector products on the free block
(|F| ~ 100..3000), whose threads synchronize at every call. Measured on the 2-core machine,
nothing else running, best of 3 (solve() with the default threads -> one): rbf gamma = 10
on make_blobs n = 2000 1.75 s -> 0.73 s and 1.18 s -> 0.44 s; gamma = 5, n = 3000
0.37 s -> 0.24 s; n = 4000 0.26 s -> 0.21 s; n = 8000, C = 100 (two 3000 x 3000
factorizations) 3.94 s -> 3.83 s; n = 10000 2.67 s -> 2.20 s; n = 20000 4.96 s -> 4.78 s.
Smaller problems take the one-call compiled path or the numpy path, with no BLAS call
worth a thread, and do not pay for the controller.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable

import numpy as np

__all__ = ["KERNEL_ONE_THREAD_N", "SMALL_PROBLEM_ENTRIES", "TINY_PROBLEM_ENTRIES", "busy",
           "kernel_solve_threads", "one_blas_thread", "small_problem_threads", "SPLIT_ENTRIES",
           "by_blocks"]

#: A problem with at most this many entries of X (n d) runs its exact solve on one BLAS
#: thread (:func:`small_problem_threads`): its products take milliseconds, which a
#: second thread does not shorten on a busy machine.
SMALL_PROBLEM_ENTRIES = 1 << 22
#: A problem with at most this many entries of X runs its exact solve on one BLAS thread
#: whatever the load (:func:`small_problem_threads`): its products take well under a
#: millisecond (the controller, ~10 ms once per process, is then built on the first one).
TINY_PROBLEM_ENTRIES = 1 << 17
#: A kernel SVM of more samples than this runs its exact solve on one BLAS thread
#: (:func:`kernel_solve_threads`, the module docstring).
KERNEL_ONE_THREAD_N = 1000

#: A blocked computation of at least this many entries runs on two threads
#: (:func:`by_blocks`): ~5 ms of work or more on one core, where a thread costs ~0.1 ms.
SPLIT_ENTRIES = 1 << 20

_CONTROLLER: list[Any] = []


def by_blocks(block: Callable[[int, int], None], n: int, rows: int, entries: int,
              shareable: bool = True) -> None:
    """``block(start, stop)`` for the consecutive blocks of ``rows`` of range(n): the
    blocks of the first and of the second half of the rows on two threads when the
    computation has at least :data:`SPLIT_ENTRIES` ``entries``, the machine two cores and
    ``block`` may run on two threads at once (``shareable``); in order on this thread
    otherwise. Python threads whose numpy and BLAS calls release the GIL, each BLAS call
    within the caller's thread limit (:func:`one_blas_thread`): no BLAS thread waits
    for a time slice. Measured, the certificate's rbf K beta at n = 8000, d = 20, 3002
    support vectors: the same CPU time (0.27 s), about half the wall time when a second
    core is free, the same peak memory as one thread's blocks of twice the size. The
    blocks are those of one thread (the split falls on a block boundary), so the result
    is bit for bit the same either way."""
    if entries >= SPLIT_ENTRIES and shareable and (os.cpu_count() or 1) > 1:
        from concurrent.futures import ThreadPoolExecutor

        err = np.geterr()      # numpy's error state is per thread: the caller's holds

        def part(lo: int, hi: int) -> None:
            with np.errstate(**err):
                for start in range(lo, hi, rows):
                    block(start, min(start + rows, hi))
        # the split on a block boundary: the same blocks, so the same bits, as one thread
        blocks = -(-n // rows)
        half = min(n, -(-blocks // 2) * rows)
        with ThreadPoolExecutor(2) as pool:
            for done in [pool.submit(part, 0, half), pool.submit(part, half, n)]:
                done.result()
        return
    for start in range(0, n, rows):
        block(start, min(start + rows, n))


def one_blas_thread() -> AbstractContextManager:
    """A context in which BLAS runs on one thread (threadpoolctl, when installed; else
    no change)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:        # an optional speed-up, not a dependency
            _CONTROLLER.append(None)
        else:
            _CONTROLLER.append(ThreadpoolController())
    controller = _CONTROLLER[0]
    return nullcontext() if controller is None else controller.limit(limits=1,
                                                                     user_api="blas")


def small_problem_threads(n_entries: int) -> AbstractContextManager:
    """:func:`one_blas_thread` for a problem of at most :data:`TINY_PROBLEM_ENTRIES`
    entries, or of at most :data:`SMALL_PROBLEM_ENTRIES` on a busy machine (see the module
    docstring), else no change (large products gain from threads; an idle machine's
    threads do not wait)."""
    if n_entries <= TINY_PROBLEM_ENTRIES or (n_entries <= SMALL_PROBLEM_ENTRIES
                                              and busy()):
        return one_blas_thread()
    return nullcontext()


def kernel_solve_threads(n_samples: int) -> AbstractContextManager:
    """:func:`one_blas_thread` for the exact kernel SVM route on more than
    :data:`KERNEL_ONE_THREAD_N` samples (measurements in the module docstring), else no
    change."""
    return one_blas_thread() if n_samples > KERNEL_ONE_THREAD_N else nullcontext()


def busy() -> bool:
    """The 1-minute load average is at least the number of cores (False where unknown)."""
    try:
        return os.getloadavg()[0] >= (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return False
