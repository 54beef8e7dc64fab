"""The certified kernel route: SMO to a tight tolerance, active-set polish, KKT certificate.

``certified_smo(svm)`` is the exact answer of a kernel SVM at LIBSVM's scale:

The C-SVC is built as a dual QP (:func:`~convexlearn.solvers.kernel_svm.c_svc.c_svc_qp`), and
SMO and the polish run on the QP:

1. SMO (:func:`~convexlearn.solvers.kernel_svm.smo.smo_qp`: second-order working set,
   shrinking, kernel columns from X in a cache bounded in MB) to the maximal violation
   ``tol``; it identifies the active set (which multipliers are 0, C_i or free). A small
   QP starts in SMO's numpy loop while the compiled loop is not loaded in the process
   (:func:`smo_small_first`: loading costs more than the whole solve); a tiny C-SVC
   (n <= 300, intercept) then takes a dense numpy path first
   (:mod:`~convexlearn.solvers.kernel_svm.tiny_dense`: SMO to 1e-1, a dense active-set
   solve, the same certificate), the steps below going on from its SMO point when it
   does not certify;
2. the active-set polish (:func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion`) solves
   the KKT system of that set exactly (only the |F| x |F| block of K) and corrects the
   set until every margin agrees with it;
3. the KKT report (:func:`~convexlearn.certify.kkt.kkt_report`) recomputes every
   residual and the duality gap from the data, with f = K (y * alpha) + b by blocks of
   rows against the support vectors only (memory O(block x n_SV), no n x n matrix).

The answer is "optimal" only when the report passes at ``kkt_tol`` and the relative
duality gap |P - D| / max(|P|, |D|) is at most ``gap_tol`` (default 1e-9). When it is not
(an active set misread at a loose SMO tolerance), SMO resumes from the polished point at
a tolerance 100 times smaller, at most ``retries`` times; an SMO run that ends at its
iteration budget (large C on a low-rank kernel: 10^5..10^6 iterations at n = 400) is
polished (with ten times its rounds, 1000: from such a point the active set is far,
and the polish's rounds are cheaper than SMO's zigzag there) and certified as it stands,
then resumed with twice the budget.

A small C-SVC with intercept (n <= 1000, its Gram matrix in memory or within the column
cache; once the compiled loop is in use) runs steps 1-3 in one compiled call
(:mod:`~convexlearn.solvers.kernel_svm.small_certified`: SMO, a plain polish, the
certificate's product; the report and the test above unchanged); when that does not
certify, the steps above go on: from SMO's point when SMO spent its iterations, from
scratch otherwise (the polish then reads K from SMO's warm column cache). There SMO's
first run is short (:func:`_small_chunk`: 25 n iterations, at least 5000, instead of
max(10^5, 100 n)): at large C, and on low-rank kernels where SMO zigzags on an almost
flat face, the polish from that point costs less than SMO's remaining 10^4..10^5
iterations; when SMO spent it and the plain polish declined, the numpy polish runs from
its point if few multipliers are free there (:func:`_early_polish`; it gives up after six
rounds that each find many margin violators: :class:`_EarlyProgress`), and SMO then goes
on to the general path's first chunk.
"""

from __future__ import annotations

from typing import Any

import math
import sys
import time

import numpy as np

from ...data import check_positive
from ...certify.kkt_kernels import allow_compiled
from ...gram import KernelColumns, indexed_products
from ...solution import Solution, Timer
from . import cache_pool, small_certified
from .c_svc import c_svc_qp, c_svc_solution
from .polish import is_balanced
from .qp import DualQP
from .small_certified import label_exact_smo
from .tiny_dense import TINY_TOL, certified_tiny, tiny_applies
from .smo import SMOResult, raise_diverged, smo, smo_qp

#: While the compiled SMO loop is not loaded in the process (loading it from numba's disk
#: cache costs ~0.13-0.15 s of CPU: numba's runtime and the loop's machine code, see
#: convexlearn.compiled; ~0.4 s with numba's own loader), QPs of at most SMALL_N
#: variables run SMO's numpy loop first (same iterates), for at most SMALL_BUDGET
#: iterations (~30-60 us each at n <= 500); the compiled loop resumes from its point when
#: they do not suffice. Once the numpy loops of the process have cost LOAD_CPU_SECONDS (the
#: price of loading), the compiled loop is loaded and used: the rent-or-buy rule, which
#: never spends more than twice the better of the two choices. Measured on wine (n = 95, 74
#: iterations): five-fold cross-validation in a fresh process, 0.06 s of CPU instead of
#: 0.40 s (benchmarks/bench_cold_start.py).
SMALL_N, SMALL_BUDGET, LOAD_CPU_SECONDS = 500, 2000, 0.15
_numpy_loop_cpu = [0.0]          # CPU seconds this process spent in those numpy loops
_loaded: set = set()             # the loops found loaded (they stay loaded)


def compiled_loop_loaded(intercept: bool = True) -> bool:
    """Whether this process has the compiled SMO loop (compiled or loaded from its cache):
    the loop with the equality row (on its own, or in the one-call path's
    :func:`~convexlearn.solvers.kernel_svm.small_kernels.small_solve`), or (``intercept``
    False) the one without. A loop once
    found loaded is remembered (numba's ``signatures`` costs ~0.1 ms a call, a fixed cost
    of every small solve)."""
    if intercept in _loaded:
        return True
    name, loop = ("smo_kernels", "smo_loop") if intercept else ("smo_box_kernels",
                                                                "smo_box_loop")
    kernels = sys.modules.get(f"{__package__}.{name}")
    # (the one-call path's function holds the loop with the row compiled in)
    small = sys.modules.get(f"{__package__}.small_kernels") if intercept else None
    # (and the loop on a contiguous active set, which the row's QPs without an index run)
    compact = sys.modules.get(f"{__package__}.smo_compact_kernels") if intercept else None
    if ((kernels is not None and bool(getattr(kernels, loop).signatures))
            or (small is not None and bool(getattr(small.small_solve, "signatures", ())))
            or (compact is not None and bool(compact.compact_loop.signatures))):
        _loaded.add(intercept)
        return True
    return False


def _compiled_use(n: int, intercept: bool) -> bool:
    """Whether a QP of n variables runs a compiled loop now (not SMO's numpy loop first:
    :func:`smo_small_first`'s rent-or-buy rule)."""
    return (n > SMALL_N or _numpy_loop_cpu[0] >= LOAD_CPU_SECONDS
            or compiled_loop_loaded(intercept))


def smo_small_first(qp: DualQP, *, tol: float, max_iter: int | None, alpha0: Any,
                    cache_size: float, shrinking: bool, g0: np.ndarray | None = None
                    ) -> tuple[SMOResult, Any, str]:
    """:func:`~convexlearn.solvers.kernel_svm.smo.smo_qp` (without history), except that a
    small QP starts in the numpy loop while the compiled one is not loaded (:data:`SMALL_N`;
    not with a known start gradient ``g0``, which the compiled loop takes); the
    certificate decides either way."""
    done = 0
    if g0 is None and not _compiled_use(qp.n, qp.has_equality):
        qp.check_smo_form()
        budget = SMALL_BUDGET if max_iter is None else min(int(max_iter), SMALL_BUDGET)
        # K itself (n <= SMALL_N: at most 2 MB): the numpy loop then reads rows, where
        # computing its columns one by one cost ~40 % of its time (wine, n = 95: 5.7 ms
        # -> 3.6 ms); the loop only steers, the certificate recomputes from the data
        everything = np.arange(qp.n)
        cols = (KernelColumns.from_gram(np.ascontiguousarray(qp.gram.block(everything,
                                                                           everything)))
                if qp.gram.from_samples else qp.gram.columns(cache_size))
        start = time.process_time()
        res = smo(cols, qp.signs, qp.upper, qp.has_equality, tol, budget, shrinking, alpha0,
                  target=qp.target)
        _numpy_loop_cpu[0] += time.process_time() - start
        if res.status != "max_iter" or budget == max_iter:
            return res, cols.stats(), "numpy reference (compiled loop not loaded)"
        alpha0, done = res.alpha, res.n_iter
        max_iter = None if max_iter is None else int(max_iter) - done
    res, stats, loop = smo_qp(qp, tol=tol, max_iter=max_iter, alpha0=alpha0,
                              cache_size=cache_size, shrinking=shrinking, record=False,
                              g0=g0 if done == 0 else None)
    res.n_iter += done
    return res, stats, loop

__all__ = ["certified_smo", "memory_estimate", "SMOColumns"]

#: Memory of the kernel-product blocks (gram.PRODUCT_BLOCK_BYTES) and their temporaries.
_PRODUCT_BYTES = 4 * 2**23


def memory_estimate(svm: Any, cache_size: float = 200.0) -> int:
    """Bytes :func:`certified_smo` allocates beyond the data: the column cache (bounded
    by ``cache_size`` MB, at most n columns), ~12 vectors of n doubles, the kernel-product
    blocks, and the free-set block of the polish (at most MAX_FREE^2 doubles; estimated
    from a free set of min(n, 2000))."""
    n = svm.n_samples
    cache = min(cache_size * 2**20, 8.0 * n * n)
    free = min(n, 2000)
    gram = svm.gram_operator.memory_bytes()
    return int(cache + 12 * 8 * n + _PRODUCT_BYTES + 2 * 8 * free * free + gram)


class SMOColumns:
    """K's blocks and products read from the column cache an SMO run leaves, computed
    from the Gram operator for the columns it does not hold.

    After SMO the cache holds, within its bound (``cache_size`` MB), complete columns
    K[:, j] of the multipliers it worked on, which at the end of a run are mostly the free
    ones; the polish moves exactly those, so its products g + K delta and its free-set
    block K_FF are matrix reads, not n |F| kernel evaluations (measured: rbf, n = 8000,
    d = 20, C = 100, |F| ~ 2970: two products of 1.05 s and two blocks of 0.5 s each).
    The cached entries come from the compiled loop's kernel (its rbf exponential agrees
    with numpy's to a few ulps): the polish only steers, and the certificate recomputes
    every residual from the data (:func:`~convexlearn.certify.kkt.kkt_report`).
    Partial columns (computed on the active entries of a shrunk run) are not read.
    With ``index`` (the sample of each variable; ``gram`` and the cache are then the
    samples'), blocks and products are those of K[index][:, index] (epsilon-SVR).
    """

    #: The columns a product computes from the Gram operator (those the cache does not
    #: hold) are kept, within this many bytes, for the polish's next rounds: each round's
    #: product moves the whole free set again (rbf gamma = 10, make_blobs(2000): ~100 of
    #: ~630 columns not held, recomputed in each of 14 rounds, ~3 ms of a 4-5 ms product).
    KEPT_BYTES = 2**25

    def __init__(self, gram: Any, columns: Any, index: np.ndarray | None = None):
        self.gram, self.index = gram, index
        slot_of = np.asarray(columns.slot_of)
        held = slot_of >= 0
        held[held] &= ~np.asarray(columns.partial)[slot_of[held]]
        self.data, self.slot_of, self.held = columns.data, slot_of, held
        n = slot_of.size
        self.kept_slot = np.full(n, -1, dtype=np.intp)   # row of ``kept`` holding K[:, j]
        self.kept = np.empty((min(n, self.KEPT_BYTES // (8 * max(n, 1))), n))
        self.kept_used = 0

    def _keep(self, cols: np.ndarray) -> None:
        """Compute and keep the columns ``cols`` (sample indices) while there is room."""
        cols = cols[:self.kept.shape[0] - self.kept_used]
        if cols.size:
            rows = slice(self.kept_used, self.kept_used + cols.size)
            self.kept[rows] = self.gram.block(np.arange(self.slot_of.size), cols).T
            self.kept_slot[cols] = np.arange(rows.start, rows.stop)
            self.kept_used = rows.stop

    def products(self, B: Any) -> np.ndarray:
        """K @ B (B of shape (n,) or (n, k)), from cached columns where held."""
        if self.index is not None:
            return indexed_products(self._sample_products, self.gram.n, self.index, B)
        return self._sample_products(B)

    def _sample_products(self, B: Any) -> np.ndarray:
        B = np.asarray(B, dtype=float)
        B2 = B[:, None] if B.ndim == 1 else B
        support = np.any(B2 != 0.0, axis=1)
        cached = np.flatnonzero(support & self.held)
        rest = support & ~self.held
        if rest.any():
            self._keep(np.flatnonzero(rest & (self.kept_slot < 0)))
            rest &= self.kept_slot < 0
        kept = np.flatnonzero(support & ~self.held & (self.kept_slot >= 0))
        if rest.any():
            out = np.asarray(self.gram.products(np.where(rest[:, None], B2, 0.0)), dtype=float)
            out = out.reshape(B2.shape).copy()
        else:
            out = np.zeros(B2.shape)
        if cached.size or kept.size:
            from .smo_kernels import add_rows        # (loaded: the cache is its loop's)
            # the cached and kept columns read in place (a gathered copy of them and its
            # product cost twice the time: 0.07 s a product at |F| = 2971, n = 8000)
            for store, slot, idx in ((self.data, self.slot_of, cached),
                                     (self.kept, self.kept_slot, kept)):
                if idx.size:
                    add_rows(store, slot[idx], np.ascontiguousarray(B2[idx]), out)
        return out[:, 0] if B.ndim == 1 else out

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K[rows][:, cols], from cached columns where held (K[r, c] = column c's entry r)."""
        rows, cols = np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)
        if self.index is not None:
            rows, cols = self.index[rows], self.index[cols]
        held = self.held[cols]
        kept = ~held & (self.kept_slot[cols] >= 0)
        if not held.any() and not kept.any():
            return self.gram.block(rows, cols)
        from .smo_kernels import gather_rows_into   # (loaded: the cache is its loop's)
        # K[cols][:, rows] filled by whole rows (a cached or kept column is a row of it;
        # the others' entries computed as K[cols_rest][:, rows], K being symmetric) and
        # returned as its transposed view: no second copy. Scattering the gathered rows
        # into the columns of a C-ordered block (and its temporary) cost 0.4-0.8 s of
        # CPU per solve at |F| = 2971 (rbf n = 8000 d = 20 C = 100, 220 columns not held)
        out = np.empty((cols.size, rows.size))
        for store, slot, mask in ((self.data, self.slot_of, held),
                                  (self.kept, self.kept_slot, kept)):
            where = np.flatnonzero(mask)
            if where.size:
                gather_rows_into(store, slot[cols[where]], rows, out, where)
        where = np.flatnonzero(~held & ~kept)
        if where.size:
            out[where] = self.gram.block(cols[where], rows)
        return out.T


#: Rounds of the active-set polish after an SMO run that converged, and after one that
#: spent its iteration chunk or budget (the active set then far from identified).
_ROUNDS, _LAST_ROUNDS = 100, 1000
#: Rounds of the numpy polish from the point of the one-call path's short first chunk
#: (:data:`SMALL_CHUNK_PER_N`; ~0.3 ms each at n = 400, C = 100 on a low-rank kernel),
#: and the largest fraction of n free there for it to be tried (module docstring).
#: Measured on 17 low-rank C = 100 cases of the sweep (data seeds 9 and 11), CPU in all:
#: 60 rounds 1.36 s, 100 1.42 s, 150 1.21 s, 250 1.20 s (fewer rounds fail where more
#: certify, and SMO's 9 * 10^4 further iterations then cost more than the rounds saved).
_EARLY_ROUNDS, _EARLY_FREE = 250, 0.25


def _early_polish(svm: Any, alpha: np.ndarray) -> bool:
    """Whether the numpy polish runs from the point of the one-call path's short chunk
    (SMO spent it, the plain polish declined): when at most _EARLY_FREE n multipliers are
    free there. A low-rank kernel (poly on 2-D data, a linear Gram: few free multipliers
    at the optimum) is certified there in 1-200 ms where SMO needed 10^5 and more
    iterations; with a large free set (rbf at C = 1e4, |F| ~ 250 of 400) each of its
    least-squares rounds costs ~3 ms and SMO's iterations are the cheaper way
    (measured on the sweep's cases, data seed 11)."""
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), alpha.shape)
    free = int(np.count_nonzero((alpha > 0.0) & (alpha < C)))
    return free <= _EARLY_FREE * alpha.size


#: The early polish's progress test (:class:`_EarlyProgress`): from its _PROGRESS_ROUNDS-th
#: round that finds margin violators on, it gives up unless some round so far had at most
#: _PROGRESS_JOIN n of them or none above _PROGRESS_WRONG.
_PROGRESS_ROUNDS, _PROGRESS_JOIN, _PROGRESS_WRONG = 6, 0.2, 1.0


class _EarlyProgress:
    """The early polish's progress test, a ``progress`` callback of
    :func:`~convexlearn.solvers.kernel_svm.polish.polish_expansion`: False (give up) at its
    k-th call, k >= _PROGRESS_ROUNDS, when every call so far had more than _PROGRESS_JOIN n
    violators and a worst margin error max_i wrong_i >= _PROGRESS_WRONG.

    Measured on the sweep's cases where the early polish ran (data seeds 11 and 12, 110
    cases): where it certified (67), within six such rounds the joiners fell to 0.19 n or
    fewer at least once (0.17-0.19 n on three low-rank C = 1e4 cases at n = 200..400, a
    few n / 100 mostly) or every bounded sample came within 1 of its margin; where it
    failed (43: low-rank kernels at C = 1e4, poly3 on circles at C = 100 - the face from
    SMO's early point far from the optimum's), the rounds kept pulling in 0.1 n .. 0.5 n
    samples with margin errors of 2 and more, alternating, until its rounds ran out
    (40-75 ms at n = 400, SMO's 10^4 iterations ~11 ms). The test stops 38 of the 43,
    after ~15-35 ms (1.43 s of the 2.40 s those polishes cost in all), none that would
    certify; n / 8 stopped three that would (a C = 1e4 success saves SMO 10^5 iterations
    and more, ~100-200 ms; a stop saves ~30 ms)."""

    def __init__(self, n: int) -> None:
        self.n, self.calls = n, 0
        self.fewest, self.least = math.inf, math.inf

    def __call__(self, join: np.ndarray, wrong: np.ndarray) -> bool:
        self.calls += 1
        self.fewest = min(self.fewest, join.size)
        self.least = min(self.least, float(np.max(wrong)))
        return (self.calls < _PROGRESS_ROUNDS or self.fewest <= _PROGRESS_JOIN * self.n
                or self.least < _PROGRESS_WRONG)


def _budgets(svm, max_iter: int | None) -> tuple[int, int]:
    """(iterations of SMO's first run, total iterations). A given ``max_iter`` is both.
    Default: runs of max(10^5, 100 n) iterations, doubled after each that ends at its
    budget, up to LIBSVM's total max(10^7, 100 n) (with or without intercept: both loops
    are compiled)."""
    n = svm.n_samples
    if max_iter is not None:
        return int(max_iter), int(max_iter)
    return max(100_000, 100 * n), max(10**7, 100 * n)


#: SMO's first chunk on the one-call path (n <= small_certified.SMALL_MAX, K held
#: whole): SMALL_CHUNK_PER_N n iterations, at least SMALL_CHUNK_MIN, instead of
#: max(10^5, 100 n). Where SMO needs more (large C; a low-rank kernel, where it zigzags on
#: an almost flat face), the polish from that point is cheaper than SMO's remaining
#: iterations at this size (poly3 on 2-D blobs, C = 100, n = 400: ~10^4 iterations and
#: the polish 30-50 ms, against 1.5-2 x 10^5 iterations to SMO's 1e-3, 90-140 ms).
SMALL_CHUNK_PER_N, SMALL_CHUNK_MIN = 25, 5000


def _small_chunk(n: int) -> int:
    """SMO's first chunk on the one-call path: max(SMALL_CHUNK_MIN, SMALL_CHUNK_PER_N n)."""
    return max(SMALL_CHUNK_MIN, SMALL_CHUNK_PER_N * n)


def _rerun_smo(svm: Any, alpha: np.ndarray) -> bool:
    """Whether the general path reruns SMO from scratch after the one-call path declined
    SMO's converged point ``alpha``: only for a free set above MAX_FREE_SMALL on a Gram
    operator computed from samples (the rerun fills the column cache the general polish
    then reads: its free block and products). Otherwise it goes on from SMO's point: a
    given Gram matrix is read as it is, and a singular free block (a low-rank kernel:
    poly on 2-D data, a linear Gram) comes with few free multipliers, where the rerun
    repeated the whole of SMO's run for nothing (pre-lin/clf2/C=100/n=400: 2 x 77501
    iterations, 0.36 s, against 77501 and 0.17 s; LIBSVM 76236)."""
    if not svm.gram_operator.from_samples:
        return False
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), alpha.shape)
    free = int(np.count_nonzero((alpha > 0.0) & (alpha < C)))
    return free > small_certified.MAX_FREE_SMALL


def _feasible(qp: DualQP, alpha: np.ndarray) -> bool:
    """l <= alpha <= u and, with the equality row, |s^T alpha - Delta| <= 1e-12 n max u_i."""
    u = qp.upper
    scale = float(np.max(u)) if np.all(np.isfinite(u)) else max(1.0, float(np.max(alpha)))
    in_box = bool(np.all(alpha >= qp.lower) and np.all(alpha <= u))
    return in_box and (not qp.has_equality or is_balanced(qp.signs * alpha, scale, qp.delta))


def certified_smo(svm: Any, *, tol: float = 1e-3, kkt_tol: float = 1e-6, gap_tol: float = 1e-9,
                  cache_size: float = 200.0, max_iter: int | None = None,
                  retries: int = 3, polish: bool = True, shrinking: bool = True,
                  warm_start: np.ndarray | None = None,
                  warm_products: np.ndarray | None = None) -> Solution:
    """Solve a (kernel) SVM exactly: SMO, active-set polish, certificate (module docstring).

    Parameters
    ----------
    svm : convexlearn.SVM
    tol : float
        SMO's maximal KKT violation m(a) - M(a) before the polish (in units of the
        margins, LIBSVM's ``-e`` and its default 1e-3): on the benchmarks (rbf n = 2000 ..
        20000, digits) the active set is then already right or one polish round from it;
        where it is not, the retries tighten it.
    kkt_tol : float
        Tolerance of the KKT report (scaled residuals, see :mod:`convexlearn.certify.kkt`).
    gap_tol : float
        Relative duality gap |P - D| / max(|P|, |D|) required for "optimal".
    cache_size : float
        Kernel column cache of SMO, in MB (LIBSVM's ``-m``, default 200).
    max_iter : int, optional
        SMO's iteration budget (per run and in total). Default: a first run of
        max(10^5, 100 n) iterations; a run that ends at its budget is polished and
        certified, then resumed with twice the budget, up to max(10^7, 100 n) iterations
        in all (LIBSVM's cap).
    retries : int
        SMO restarts (tolerance / 100 each) when the certificate fails.
    polish : bool
        False: certify SMO's own point (the restarts then carry the whole burden).
    shrinking : bool
        SMO's shrinking heuristic (LIBSVM's ``-h``; speed only).
    warm_start : ndarray, optional
        Multipliers to start SMO's first run from (e.g. a neighbouring C's answer scaled
        by C / C_prev: :func:`convexlearn.routes.svm_warm_path.svm_warm_path`); used only
        when feasible (in the box and balanced to 1e-12 n max C_i), else SMO starts at 0.
    warm_products : ndarray, optional
        K (y * warm_start) when known (from a certificate's product): SMO's starting
        gradient then costs the free multipliers' columns only. It only steers: the
        answer's certificate is recomputed from the data.

    Returns
    -------
    Solution
        ``alpha``, ``b``, ``dual_coef = y * alpha``, ``xi``, ``w`` (linear kernel),
        ``objective`` = P from the report, ``report`` (the KKT report at ``kkt_tol``),
        status "optimal" (certified) or "inaccurate"; ``provenance`` with the SMO
        tolerances, iterations, whether the polish was kept, and the certificate's
        figures (``max_violation``, ``relative_gap``).
    """
    tol = check_positive("tol", tol)
    kkt_tol = check_positive("kkt_tol", kkt_tol)
    gap_tol = check_positive("gap_tol", gap_tol)
    timer = Timer()
    done = 0
    chunk, budget = _budgets(svm, max_iter)
    general_chunk, polish_first = chunk, False
    if (warm_start is None and polish and max_iter is None
            and _compiled_use(svm.n_samples, True)):
        if small_certified.small_applies(svm, cache_size):
            # SMO, polish and the certificate's product in one compiled call; when that
            # does not certify, the general path goes on from SMO's point
            chunk = min(_small_chunk(svm.n_samples), chunk)
            small, start = small_certified.certified_small(
                svm, tol=tol, kkt_tol=kkt_tol, gap_tol=gap_tol, shrinking=shrinking,
                cache_size=cache_size, max_iter=chunk, rounds=(_ROUNDS, _ROUNDS))
            if small is not None:
                small.time_s = timer()
                return small
            warm_start, warm_products, done = start
            if done >= chunk:
                # SMO spent its short chunk and the plain polish declined (a singular
                # free block: a low-rank kernel): the numpy polish from SMO's point when
                # its free set is small (_early_polish), then SMO on to the end of the
                # general path's first chunk, max(10^5, 100 n) iterations in all, and on
                # as before (the general path first ran a whole chunk of its own here:
                # poly3/blobs1/C=100/n=400 2 x 10^5 iterations)
                polish_first = _early_polish(svm, warm_start)
                chunk = max(general_chunk - done, 1)
            else:
                # SMO converged: the general path's chunks as they were (the short one was
                # the one call's only)
                chunk = general_chunk
                if _rerun_smo(svm, warm_start):
                    # the plain polish declined on a free set above MAX_FREE_SMALL: the
                    # general path from scratch, whose polish then reads K from SMO's warm
                    # column cache (gamma = 10, n = 1000, C = 100: 0.70 s against 0.81 s
                    # from SMO's point with a cold cache)
                    warm_start, warm_products = None, None
    elif (warm_start is None and polish and max_iter is None
          and not _compiled_use(svm.n_samples, True) and tiny_applies(svm)):
        # a tiny C-SVC while the compiled loop is not loaded: dense SMO to a loose
        # tolerance and a dense active-set solve (tiny_dense); its CPU counts as the numpy
        # loops' (the rent-or-buy rule); when it does not certify, the general path goes
        # on from SMO's point
        start = time.process_time()
        tiny, warm_start, done = certified_tiny(svm, kkt_tol=kkt_tol, gap_tol=gap_tol)
        _numpy_loop_cpu[0] += time.process_time() - start
        if tiny is not None:
            label_exact_smo(tiny, svm, n_iter=done, time_s=timer(), gap_tol=gap_tol,
                            smo_tol=[TINY_TOL], polished=True, kkt_tol=kkt_tol,
                            cache_size_mb=cache_size, shrinking=False,
                            loop="numpy, tiny dense (tiny_dense)")
            return tiny
    qp = c_svc_qp(svm)
    alpha0, g0, best = None, None, None
    if warm_start is not None:
        warm = np.asarray(warm_start, dtype=float)
        if warm.shape == (qp.n,) and np.all(np.isfinite(warm)) and _feasible(qp, warm):
            alpha0 = warm
            if warm_products is not None and np.shape(warm_products) == (qp.n,):
                g0 = np.asarray(warm_products, dtype=float)
    iterations, tols, polished_any = done, [], False
    attempt = 0
    cache_stats = None
    while True:
        early = polish_first and alpha0 is not None and g0 is not None
        polish_first = False
        if early:
            # (SMO's point of the one-call path, which spent its chunk: polished first)
            res, loop = SMOResult(alpha0, qp.target - g0, 0, "max_iter", None, math.nan,
                                  0), "compiled, one call (small_kernels)"
        else:
            res, cache_stats, loop = smo_small_first(qp, tol=tol, max_iter=chunk,
                                                     alpha0=alpha0, cache_size=cache_size,
                                                     shrinking=shrinking, g0=g0)
        if loop.startswith("compiled"):
            allow_compiled()          # numba is initialized: the report's compiled pass
        if res.status == "diverged":
            raise_diverged(svm, res)
        iterations += res.n_iter
        tols.append(tol)
        g = g0 if early else qp.target - res.v     # (the early point's own products)
        # SMO out of its chunk (a low-rank kernel at large C: SMO zigzags on an almost
        # flat face with steps ~1e-7 of alpha for 10^5+ iterations) or of its budget: the
        # polish, an active-set method that converges from any feasible point given
        # rounds, gets ten times as many (measured, poly3 / precomputed linear, C = 1e4,
        # n = 200..400: certified after the first chunk, 0.05-0.4 s of polish, where
        # SMO needed 4..15 more chunks; where it fails, 0.1-0.25 s each time: the
        # long polish at every chunk is still the faster route over the sweep's cases,
        # e.g. poly3/circles0.3/C=1e4/n=400 certified after 3 * 10^5 iterations, 1.3 s,
        # against 6.3 * 10^6 and 6.8 s when only the first chunk got it)
        spent = res.status == "max_iter"
        # the polish reads K from SMO's cache where it can (from X otherwise)
        kernel = (SMOColumns(qp.gram, res.columns)
                  if res.columns is not None and qp.gram.from_samples else None)
        options = (dict(max_rounds=_EARLY_ROUNDS, progress=_EarlyProgress(qp.n)) if early
                   else dict(max_rounds=_LAST_ROUNDS if spent else _ROUNDS))
        refined = qp.polish(res.alpha, g, kernel=kernel, **options) if polish else None
        if res.columns is not None:
            # (read by the polish only: the next run's; also a cache of a formed Gram's
            # columns, whose fresh pages cost more than the run at small C: the C-path's
            # anchor, rbf n = 2000, C = 0.01, ~0.1 s of system time in a 0.12 s solve)
            cache_pool.release(res.columns)
        polished = refined is not None
        polished_any |= polished
        alpha, b, g = refined if polished else (res.alpha, None, g)
        sol = c_svc_solution(svm, alpha, g, b)
        sol.report = report = svm.kkt(sol, tol=kkt_tol)
        certified = report.passed and report.relative_gap <= gap_tol
        if best is None or report.max_violation < best.report.max_violation or certified:
            best = sol
        if certified:
            break
        # resume from the polished point only when it is feasible (in the box and
        # balanced); SMO's own point always is
        # (with K (y * alpha) from the report's product, computed from the data: f - b)
        if not polished or _feasible(qp, alpha):
            alpha0, g0 = alpha, qp.signs * report.margins - sol.b
        else:
            alpha0, g0 = res.alpha, None
        if res.status == "max_iter":
            # SMO ran out of its chunk at this tolerance (large C on a low-rank kernel
            # needs 10^5..10^6 iterations at n = 400): resume it with twice the chunk,
            # polishing in between, within the total budget
            if iterations >= budget:
                break
            # (after the one-call path's short first chunk: the general path's first)
            chunk = min(chunk if early else 2 * chunk, budget - iterations)
            continue
        attempt += 1
        if attempt > retries:
            break
        tol = max(tol / 100.0, 1e-15)
    label_exact_smo(best, svm, n_iter=iterations, time_s=timer(), gap_tol=gap_tol,
                    smo_tol=tols, polished=polished_any, kkt_tol=kkt_tol,
                    cache_size_mb=cache_size, shrinking=shrinking)
    if cache_stats is not None:
        best.extra["cache"] = cache_stats
    return best
