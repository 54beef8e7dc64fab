"""The exact linear SVM: dual coordinate descent, then an active-set polish in w-space.

The C-form (b unpenalized, per-sample bounds C_i = C s_i, C_i = inf for the hard margin)::

    P(w, b) = 1/2 ||w||^2 + sum_i C_i max(0, 1 - m_i),    m_i = y_i (<w, x_i> + b)
    D(a)    = sum_i a_i - 1/2 ||X^T (y * a)||^2,           0 <= a_i <= C_i,  y^T a = 0

DCD to a loose tolerance guesses the active set (a short run first, then the full one; wide
data, n < d, on the n x n rows of Z^T = Q R); the KKT system of that set is solved in
w-space (size d + 1 + |F|) and repaired by primal-dual active-set rounds; where that fails,
the active-set method on DCD's candidates with every other multiplier at its bound
(:mod:`.linear_reduced`), an interior point in w-space and the primal active-set method,
then a working set. The answer is certified by the relative duality gap recomputed from the
data (:mod:`.linear_certificate`); a point that fails is "inaccurate" and the caller moves
to its next route. The steps in detail, and why: docs/routes.md, "Design notes of the
algorithms".
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from scipy import sparse

from ...errors import ConvexLearnError, NotApplicableError
from ...solution import Solution, Timer
from .dcd import dcd_linear
from .dual_sets import dual_solve_pays
from .linear_active_set import active_set, column_scaling, feasible_start, one_blas_thread
from .linear_certificate import GAP_TOL, certificate, certified_solution
from .linear_ipm import ipm_w
from .linear_polish import polish_w
from .linear_reduced import reduced_active_set
from .linear_sparse import face_solve
from .linear_working_set import working_set_polish
from .row_space import row_space
from ..kernel_svm.polish import intercept_from_alpha

__all__ = ["solve_linear_exact", "certificate", "polish_w", "GAP_TOL"]

_PDAS_STAGE_ROUNDS = 10    # the polish from DCD's sets (see _solve's pdas)
_CHUNK_ROUNDS = 10          # the polish between DCD's chunks (as the stages')
_REFINE_EPOCHS = 50         # more DCD epochs at tol / 10 when its free set outgrew p
_FREE_VECTORS_FIRST = 4e6  # n p^2 from which DCD's free vectors go before the interior point
_FIRST_TOL = 3e-2           # the short DCD run before the first polish (see _solve)
_FIRST_EPOCHS = 60
_EXTEND_EPOCHS = 30         # a short run at its budget goes on for this many full
_EXTEND_SHRUNK = 8          # epochs' worth of coordinate steps where its last epoch
#                             visited at most n / _EXTEND_SHRUNK coordinates (see _solve)
_TIGHTEN = (1e-3, 1e-4, 1e-5)   # DCD's tolerances after a short run that converged
_TIGHTEN_EPOCHS = 30        # their budget in all, in full epochs' worth of steps
_EPOCHS_CAP = 3000          # epochs of those runs (mostly on shrunk sets)


_REDUCED_FREE = 8           # the candidates' active set is tried with <= 2p + this free
# (the sweeps' successes had <= 2p + 6: blobs_2000x2 at C = 1e3, 9 at p = 3; the raw breast
# cancer data's 74-198 at p = 31 failed at the step limit, 10-40 ms lost)


def solve_linear_exact(svm: Any, *, tol: float = 1e-2, max_epochs: int = 300, seed: Any = 0,
                       gap_tol: float = GAP_TOL) -> Solution:
    """The certified linear SVM: DCD warm start, w-space active-set polish, certificate.

    Stages (module docstring), each tried when the previous one is not certified: the
    polish from the DCD point; the hard margin: the active-set method from the
    consistency LP's point; the soft margin: interior point then active set, the active
    set from the DCD point; the working-set QP. The first certified answer is returned,
    else the one with the smallest relative gap; ``provenance["polish"]`` names its stage.

    Parameters
    ----------
    svm : convexlearn.SVM
        Linear kernel on features (not a precomputed Gram matrix); soft or hard margin,
        sample weights allowed (bounds C_i = C s_i).
    tol : float
        Projected-gradient spread (margin units) at which the DCD warm start stops; the
        polish needs only the active set, not an accurate point.
    max_epochs : int
        Budget of the warm start.
    seed : int
        DCD's random order.
    gap_tol : float
        Relative duality gap that certifies (see :func:`certificate`).

    Returns
    -------
    Solution
        status "optimal" when the certificate holds, "inaccurate" otherwise;
        ``extra["certificate"]`` holds its figures (primal, dual, gap, relative gap).
    """
    timer = Timer()
    if not svm.kernel.is_linear or svm.X is None:
        raise NotApplicableError(f"the linear exact route needs the linear kernel on "
                                 f"features; this problem is {svm.describe()}")
    with one_blas_thread():
        if sparse.issparse(svm.X):
            return _solve_sparse(svm, timer, seed, gap_tol)
        sol = _solve(svm, timer, tol, max_epochs, seed, gap_tol)
        if sol.status != "optimal" and sol.provenance.get("row_space"):
            # the rows' span dropped a direction that mattered: the problem as given
            sol = _solve(svm, timer, tol, max_epochs, seed, gap_tol, reduce=False)
        return sol


def _solve(svm, timer, tol, max_epochs, seed, gap_tol, reduce=True) -> Solution:
    X, y = svm.X, svm.y
    n, d = X.shape
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), (n,))
    mu = X.mean(axis=0) if svm.intercept else np.zeros(d)
    Z = X - mu if svm.intercept else X
    sigma2 = float(np.mean(np.einsum("ij,ij->i", Z, Z)))
    sigma2 = sigma2 if math.isfinite(sigma2) and sigma2 > 0 else 1.0
    sigma = math.sqrt(sigma2)
    Zs = Z / sigma
    Cs = C * sigma2                      # X / sigma is the problem with C sigma^2
    basis = None
    if reduce and n < d:
        # w = Z^T (y a) lies in the rows' span: with Z^T = Q R (Q: d x n, orthonormal
        # columns) the problem on the n x n rows R^T, w = Q w', is the same one (margins
        # and ||w|| preserved); its polish works on p = n (+ 1) unknowns instead of d (+ 1)
        # (200 x 500: the w-space polish's p^3 QR steps were 45 ms of a 52 ms solve;
        # 200 x 300 hinge at lam_max / 100: 0.20 s -> 0.02 s);
        # the directions of a zero pivot (centring leaves rank n - 1) are dropped
        basis, Zs = row_space(Zs)
        d = Zs.shape[1]
    Zy = y[:, None] * (np.column_stack([Zs, np.ones(n)]) if svm.intercept else Zs)
    frame = (X, y, C, mu, sigma, svm.intercept, svm.hard_margin, gap_tol, basis)
    p = Zy.shape[1]
    S = column_scaling(Zy)          # once a solve: every polish below uses it
    finite = np.isfinite(Cs)
    # a short DCD run first (_FIRST_TOL, _FIRST_EPOCHS) and the polish from its sets: where
    # they are right already, the remaining epochs are saved (over_5000x50 at C = 1e-3
    # without intercept: certified after 7 epochs, against 10 epochs and the interior
    # point; overlapping weighted data: 60 epochs against 300); else DCD goes on from
    # there to ``tol`` and ``max_epochs`` and the stages below run as before
    counts = {}
    alpha_s, w_s, b_s, epochs, dcd_status, _ = dcd_linear(
        Zs, y, Cs, intercept=svm.intercept, tol=max(tol, _FIRST_TOL),
        max_iter=min(max_epochs, _FIRST_EPOCHS), seed=seed, center=False, record=False,
        counts=counts)
    early, how = _early_pdas(frame, Zy, Cs, alpha_s, timer, scaling=S), "pdas"
    if early is None and dcd_status == "max_iter" and _EXTEND_EPOCHS \
            and counts.get("last_pass", n) * _EXTEND_SHRUNK <= n:
        # a short run at its budget whose active set shrank to a few coordinates goes on
        # for _EXTEND_EPOCHS full epochs' worth of steps, in up to _EPOCHS_CAP epochs:
        # epochs on a few dozen coordinates cost little (blobsover_2000x2 at C = 1 without
        # intercept converged after 12 n more steps, 0.5 ms, where the interior point took
        # 3-4 ms); kept only when it converged (then the tighter runs below), else the
        # stages go on from the short run's point as before (raw breast cancer at C = 1e-3:
        # 1463 epochs did not converge). Not on a large active set: over_5000x50 at C = 1
        # (72% active) spent 17 ms and did not converge either
        more = dcd_linear(Zs, y, Cs, intercept=svm.intercept, tol=max(tol, _FIRST_TOL),
                          max_iter=_EPOCHS_CAP, seed=seed, center=False, record=False,
                          alpha0=alpha_s, b0=b_s, max_visits=_EXTEND_EPOCHS * n, counts=counts)
        if more[4] == "converged":
            alpha_s, w_s, b_s, dcd_status = more[0], more[1], more[2], more[4]
            epochs += -(-counts["visits"] // max(n, 1))     # in full epochs' worth of steps
    if early is None and dcd_status == "max_iter":
        # a short run that did not converge (nearly hard margin: blobs_2000x2 at C = 1e3
        # ran its 300 epochs, 4 free > p = 3, then the interior point) with more free
        # multipliers than p: the candidates' active set (a few steps at most)
        early, how = _early_reduced(frame, Zy, Cs, alpha_s, w_s, b_s, timer), \
            "reduced active set"
    start = "dcd (short run)"
    if early is None and dcd_status == "converged" and finite.all():
        # DCD converged fast: its compiled epochs with shrinking cost little more (LIBLINEAR's
        # own regime), so it goes on to tighter tolerances, each point's sets polished,
        # within _TIGHTEN_EPOCHS full epochs' worth of steps in all (without intercept
        # these runs took 3-11 n steps each; with one, whose multiplier steps revisit every
        # coordinate, 10-41 n: over_20000x20 at C = 1e-3 spent 65 ms where the stages
        # below answered in 50 ms)
        budget = _TIGHTEN_EPOCHS * n
        for t in _TIGHTEN:
            alpha_s, w_s, b_s, _, dcd_status, _ = dcd_linear(
                Zs, y, Cs, intercept=svm.intercept, tol=t, max_iter=_EPOCHS_CAP,
                seed=seed, center=False, record=False, alpha0=alpha_s, b0=b_s,
                max_visits=budget, counts=counts)
            budget -= counts["visits"]
            epochs += -(-counts["visits"] // max(n, 1))
            early, how = _early_pdas(frame, Zy, Cs, alpha_s, timer, scaling=S), "pdas"
            start = f"dcd (tol {t:g})"
            if early is None and (t == _TIGHTEN[0] or dcd_status != "converged"
                                  or budget <= 0 or t == _TIGHTEN[-1]):
                # the candidates' active set where the stages below would try it first
                # (at tol / 10, over_20000x20 at C = 1e-3 with intercept) and at the end
                early, how = _early_reduced(frame, Zy, Cs, alpha_s, w_s, b_s, timer), \
                    "reduced active set"
            if early is not None or dcd_status != "converged" or budget <= 0:
                break
    if early is not None:
        early.n_iter = epochs
        early.provenance.update(warm_start=start, polish=how,
                                dcd_status=dcd_status, dcd_tol=max(tol, _FIRST_TOL),
                                row_space=basis is not None)
        return early
    ipm = {}

    def ipm_start():
        if "start" not in ipm:
            ipm["start"] = _ipm_start(Zy, Cs, d)
        return ipm["start"]

    overlap = finite.all() and dcd_status != "converged" and int(np.count_nonzero(
        (alpha_s > 1e-8 * Cs.max()) & (alpha_s < Cs * (1 - 1e-8)))) > 2 * p
    if overlap:
        # more than 2p free multipliers after the short run: heavy overlap, where the
        # full run's sets do not polish either and the interior point answered (the
        # linear SVM sweep's overlapping cases: 300 epochs spent first); tried now
        ipm["first"] = True
        found = _run_stage(lambda: _active_set_from(Zy, Cs, d, svm.intercept, *ipm_start()))
        if found is not None:
            sol = _finish(frame, alpha_s, found, timer)
            if sol.status == "optimal":
                sol.n_iter = epochs
                sol.provenance.update(warm_start="interior point",
                                      polish="interior point, active set",
                                      dcd_status=dcd_status, dcd_tol=max(tol, _FIRST_TOL),
                                      row_space=basis is not None)
                return sol
    # (a run that diverged, the hard margin on non-separable data, is not continued: its
    # multipliers overflow)
    # DCD goes on in chunks that double its epochs (60, 120, 240, max_epochs), the polish
    # tried from each chunk's sets: where they settle before the budget, the rest is saved
    # (the ERM sweep's hinge cases that ran 300 epochs before a polish that certified:
    # bc_std at lam_max / 1e3, clf_200x300 at lam_max / 2; with p ~ 31 a polish costs
    # about 5-10 epochs)
    go_on = dcd_status == "converged" and tol < _FIRST_TOL
    while epochs < max_epochs and (dcd_status == "max_iter" or go_on):
        go_on = False
        alpha_s, w_s, b_s, more, dcd_status, _ = dcd_linear(
            Zs, y, Cs, intercept=svm.intercept, tol=tol,
            max_iter=min(epochs, max_epochs - epochs) if finite.all() else max_epochs - epochs,
            seed=seed, center=False, record=False, alpha0=alpha_s, b0=b_s)
        epochs += more
        # (a polish, ~p^3 / 3 flops, only where it costs less than a quarter of the chunk's
        # epochs, n p each: not on the rows' span of 200 x 300, p = 201 - unless its free
        # set is at most p / 2, solved in (a_F, b) for k^2 p flops a round (.dual_sets),
        # whose BLAS flops are ~20x cheaper than DCD's: then up to the chunk's n p more)
        chunk = _early_pdas(frame, Zy, Cs, alpha_s, timer, _CHUNK_ROUNDS, S) \
            if (dcd_status == "max_iter" and epochs < max_epochs
                and (4 * p * p <= 3 * more * n
                     or _cheap_polish(alpha_s, Cs, p, more * n * p))) else None
        if chunk is not None:
            chunk.n_iter = epochs
            chunk.provenance.update(warm_start=f"dcd ({epochs} epochs)", polish="pdas",
                                    dcd_status=dcd_status, dcd_tol=tol,
                                    row_space=basis is not None)
            return chunk
    u_dcd = np.append(w_s, b_s) if svm.intercept else w_s
    scale = float(np.max(Cs[finite])) if finite.any() else max(1.0, float(np.max(alpha_s)))
    free = (alpha_s > 1e-8 * scale) & ~(finite & (alpha_s >= Cs * (1 - 1e-8)))

    def pdas():
        # more than p free vectors cannot lie on the margin in general position; the sets
        # of a good warm start polish in 1-6 rounds (measured over the sweeps' 70 cases
        # where this stage answered), and a round that frees more than p samples or a
        # tenth round is a start that will not (one failing 30-round polish took 0.44 s
        # on 200 x 300 before the interior point's start answered)
        if free.sum() > Zy.shape[1]:
            return None
        return polish_w(Zy, Cs, alpha_s, svm.intercept, scale, max_rounds=_PDAS_STAGE_ROUNDS,
                        max_free=Zy.shape[1], scaling=S)

    def lp_active_set():
        start = feasible_start(Zy, S)
        return _active_set_from(Zy, Cs, d, svm.intercept, start, None)

    # the stages, fastest first; the first certified answer is returned
    stages = [("pdas", "dcd", pdas)]
    if svm.hard_margin:
        # DCD with C = inf on the raw breast cancer data ended at margins of -2
        stages.append(("active set", "consistency LP", lp_active_set))
    free_vectors = ("active set", "dcd free vectors",
                    lambda: _active_set_from(Zy, Cs, d, svm.intercept, u_dcd,
                                             _nearest_margin(Zy, u_dcd, free),
                                             max_iter=max(8, p // 2)))
    # DCD stalled with a free set near the rows' rank (nearly separable data: |F| = 54
    # > p = 51 after 300 epochs, converging like 1/k; or |F| <= p with a few samples on
    # the wrong side, where the all-at-once polish above fails): its free vectors,
    # nearest their margin first, are the crash start of the active-set method
    # (measured at n=5000, d=50: 17 iterations, against 51 from DCD's margins alone,
    # and the interior point 6x the time)
    # (at most p / 2 steps: 17 at p = 51 where it wins; beyond, the interior point's
    # start is the cheaper - on breast cancer at C = 1.7e4 this one took 96 steps)
    # It goes before the interior point only where that one's ~20 Newton systems cost
    # n p^2 flops each beyond _FREE_VECTORS_FIRST: below, both stages cost about the
    # same (~10 ms at 569 x 31: an active-set step ~0.7 ms, an interior-point one
    # ~0.5 ms) and the free vectors finished in only 3 of the ERM sweep's 14 hinge cases
    # that reached them, the failures paying for both stages.
    refined = {}

    def refine():
        # DCD stopped at tol with more free multipliers than p, some still between their
        # bounds on their way to one (over_5000x50 without intercept at C = 1e-3: 51 free
        # > p = 50 after 10 epochs, 41 after 25 at tol / 10): a few more epochs from its
        # point settle the sets, where the stages below cost ~10x DCD (free vectors
        # failed in 0.11 s, interior point and active set 0.21 s); (alpha, u), once
        if "point" not in refined:
            a2, w2, b2, _, _, _ = dcd_linear(
                Zs, y, Cs, intercept=svm.intercept, tol=tol / 10, max_iter=_REFINE_EPOCHS,
                seed=seed, center=False, record=False, alpha0=alpha_s, b0=b_s)
            refined["point"] = (a2, np.append(w2, b2) if svm.intercept else w2)
        return refined["point"]

    def pdas_refined():
        # the w-space polish from the refined sets (at most p free)
        a2 = refine()[0]
        free2 = (a2 > 1e-8 * scale) & ~(finite & (a2 >= Cs * (1 - 1e-8)))
        if free2.sum() > p:
            return None
        return polish_w(Zy, Cs, a2, svm.intercept, scale, max_rounds=_PDAS_STAGE_ROUNDS,
                        max_free=p, scaling=S)

    def reduced(a, u):
        # at most 2p + _REDUCED_FREE free multipliers (below)
        k = np.count_nonzero((a > 1e-8 * scale) & (a < Cs * (1 - 1e-8)))
        return reduced_active_set(Zy, Cs, svm.intercept, a, u, scale) \
            if k <= 2 * p + _REDUCED_FREE else None

    # the active-set method on the candidates only, every other multiplier at its bound
    # (.linear_reduced; at C = 1e-3 without intercept 10-20 steps on ~3p rows where the
    # interior point and the free vectors' active set over every row cost 5-10x DCD);
    # after a converged run from the point refined at tol / 10 (60 steps from the DCD
    # point of wover_5000x50, seed 2, at C = 1e-3; 16 refined), its free count judged
    # there, and before the polish from the refined sets (whose all-at-once set changes
    # failed on the sweep's over_5000x50, 4-7 ms, before it answered)
    if finite.all() and dcd_status == "converged":
        stages.append(("reduced active set", "dcd refined (tol / 10)",
                       lambda: reduced(*refine())))
    elif finite.all():
        stages.append(("reduced active set", "dcd", lambda: reduced(alpha_s, u_dcd)))
    if free.sum() > p and dcd_status == "converged":
        stages.append(("pdas", "dcd refined (tol / 10)", pdas_refined))
    try_free_vectors = finite.all() and free.sum() <= 2 * p
    free_vectors_first = try_free_vectors and n * p * p >= _FREE_VECTORS_FIRST
    if free_vectors_first:
        stages.append(free_vectors)
    if finite.all():
        # the sides of an interior point's answer (Newton systems of size d + 1),
        # finished by the active-set method from its free vectors (unless tried above)
        if "first" not in ipm:
            stages.append(("interior point, active set", "interior point",
                           lambda: _active_set_from(Zy, Cs, d, svm.intercept,
                                                    *ipm_start())))
        if try_free_vectors and not free_vectors_first:
            stages.append(free_vectors)
        if np.any(S > 1.0):
            # the same start, the small columns not scaled up: features 1e8 apart in scale
            # (breast cancer's standardized columns alternately x 1e4 and x 1e-4) make
            # S^2 in the null-space method's penalty block span 1e16, and every w-space
            # stage above missed the certificate (relative gap 2.7e-5 from here, 1.3e-7
            # after 686 active-set steps from DCD's point: 1.8 s); unscaled it certifies
            stages.append(("interior point, active set (small columns unscaled)",
                           "interior point",
                           lambda: _active_set_from(Zy, Cs, d, svm.intercept, *ipm_start(),
                                                    scaling=np.minimum(S, 1.0))))
        stages.append(("active set", "dcd",
                       lambda: _active_set_from(Zy, Cs, d, svm.intercept, u_dcd, None)))
    stages.append(("working set", "dcd", lambda: working_set_polish(
        Zy, Cs, svm.intercept, alpha_s, w_s, b_s, scale)))
    best = None

    def keep(stage, start, polished):
        nonlocal best
        sol = _finish(frame, alpha_s, polished, timer)
        sol.n_iter = epochs
        sol.provenance.update(warm_start=start, polish=stage, dcd_status=dcd_status,
                              dcd_tol=tol, row_space=basis is not None)
        if best is None or (abs(sol.extra["certificate"]["relative_gap"])
                            < abs(best.extra["certificate"]["relative_gap"])):
            best = sol
        return sol.status == "optimal"

    unpolished = None       # the labels of DCD's own point: the first stage with no point
    for stage, start, run in stages:
        polished = _run_stage(run)
        if polished is not None:
            if keep(stage, start, polished):
                return best
        elif unpolished is None:
            unpolished = (stage, start)
            # DCD's own point is checked at once after a converged run (it may certify);
            # a run that stopped at its budget is checked only when no stage certifies
            # (~1 ms on 569 x 30, never repaid: its point is ~1e-2 off); so is one with
            # more free multipliers than p, not yet settled (5 ms on 20000 x 20, C = 1e-3)
            if best is None and dcd_status == "converged" and free.sum() <= p:
                unpolished = ()
                if keep(stage, start, None):
                    return best
    if unpolished:
        keep(*unpolished, None)
    return best


def _early_pdas(frame: tuple, Zy: np.ndarray, Cs: np.ndarray, alpha_s: np.ndarray,
                timer: Timer, rounds: int = _PDAS_STAGE_ROUNDS,
                scaling: np.ndarray | None = None) -> Solution | None:
    """The polish from the sets of a short DCD run (at most p free multipliers, at most
    ``rounds`` active-set rounds), as a certified Solution, or None (not certified, or no
    polish)."""
    finite = np.isfinite(Cs)
    if not finite.any():
        return None         # the hard margin: its multipliers have no scale yet
    scale = float(np.max(Cs[finite]))
    free = (alpha_s > 1e-8 * scale) & ~(finite & (alpha_s >= Cs * (1 - 1e-8)))
    if free.sum() > Zy.shape[1]:
        return None
    try:
        polished = polish_w(Zy, Cs, alpha_s, frame[5], scale, max_rounds=rounds,
                            max_free=Zy.shape[1], scaling=scaling)
    except np.linalg.LinAlgError:
        return None
    if polished is None:
        return None
    sol = _finish(frame, alpha_s, polished, timer)
    return sol if sol.status == "optimal" else None


def _early_reduced(frame: tuple, Zy: np.ndarray, Cs: np.ndarray, alpha_s: np.ndarray,
                   w_s: np.ndarray, b_s: float, timer: Timer) -> Solution | None:
    """:func:`~.linear_reduced.reduced_active_set` from a short DCD run with more free
    multipliers than p (finite bounds), as a certified Solution, or None."""
    p = Zy.shape[1]
    if not np.isfinite(Cs).all():
        return None
    scale = float(np.max(Cs))
    free = (alpha_s > 1e-8 * scale) & (alpha_s < Cs * (1 - 1e-8))
    if not p < free.sum() <= 2 * p + _REDUCED_FREE:
        return None
    u = np.append(w_s, b_s) if frame[5] else w_s
    found = _run_stage(lambda: reduced_active_set(Zy, Cs, frame[5], alpha_s, u, scale))
    if found is None:
        return None
    sol = _finish(frame, alpha_s, found, timer)
    return sol if sol.status == "optimal" else None


def _cheap_polish(alpha_s: np.ndarray, Cs: np.ndarray, p: int, budget: float) -> bool:
    """The free set read off ``alpha_s`` is solved in (a_F, b) (at most p / 2 free) for at
    most ``budget`` flops a round (k^2 p + k^3 / 3)."""
    finite = np.isfinite(Cs)
    if not finite.all():
        return False
    scale = float(np.max(Cs))
    k = int(np.count_nonzero((alpha_s > 1e-8 * scale) & (alpha_s < Cs * (1 - 1e-8))))
    return dual_solve_pays(k, p) and k * k * p + k ** 3 / 3 <= budget


def _run_stage(run):
    """A stage's point, or None when it raises what a stage may (an LP status HiGHS
    cannot resolve, a singular factorization): the next stage takes over."""
    try:
        return run()
    except (ConvexLearnError, np.linalg.LinAlgError):
        return None


def _nearest_margin(Zy: np.ndarray, u: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The samples of ``mask``, nearest their margin at u first, at most p of them."""
    idx = np.flatnonzero(mask)
    g = np.abs(Zy[idx] @ u - 1.0)
    return idx[np.argsort(g)][:Zy.shape[1]]


def _ipm_start(Zy: np.ndarray, Cs: np.ndarray, d: int):
    """(u, free vectors) of :func:`~convexlearn.solvers.linear_svm.linear_ipm.ipm_w` at 1e-6: the
    samples within 1e-3 of their margin, nearest first; (None, None) if it fails."""
    found = ipm_w(Zy, Cs, d, tol=1e-6)
    if found is None or not np.all(np.isfinite(found[0])):
        return None, None
    g = np.abs(Zy @ found[0] - 1.0)
    near = np.flatnonzero(g < 1e-3)
    return found[0], near[np.argsort(g[near])][:Zy.shape[1]]


def _active_set_from(Zy, Cs, d, intercept, u0, start_set, max_iter=None, scaling=None):
    """:func:`~convexlearn.solvers.linear_svm.linear_active_set.active_set` from u0 as a polished
    tuple (alpha, w, b, iterations), or None."""
    if u0 is None:
        return None
    found = active_set(Zy, Cs, d, u0, start_set=start_set, max_iter=max_iter,
                       scaling=scaling)
    if found is None:
        return None
    u, alpha, iterations = found
    return alpha, u[:d], float(u[d]) if intercept else 0.0, iterations


def _finish(frame: tuple, alpha_s: np.ndarray, polished: Any, timer: Timer) -> Solution:
    """Map a point of the scaled problem back to the user's units and certify it.

    ``polished`` is (alpha, w, b, rounds) in the scaled, centred variables, or None
    (then w and b are recomputed from ``alpha_s``)."""
    X, y, C, mu, sigma, intercept, hard_margin, gap_tol, basis = frame
    sigma2 = sigma * sigma
    rounds = 0
    if polished is not None:
        alpha_s, _, _, rounds = polished
    alpha = alpha_s / sigma2
    w = X.T @ (y * alpha) if not intercept else (X - mu).T @ (y * alpha)
    if polished is None:
        candidates = [(w, intercept_from_alpha(y, C, alpha, X @ w)[0] if intercept else 0.0)]
    else:
        # the polish's own w and w recomputed from alpha (with the polish's b'; f =
        # <(x - mu) / sigma, w'> + b'): badly scaled features make either one the more
        # accurate, the certificate decides
        # (the polish's first: measured over the ERM sweep's hinge cases, it had the
        # smallest gap in 2 of 3 and passed in all)
        w_p = (polished[1] if basis is None else basis @ polished[1]) / sigma
        candidates = [(ww, float(polished[2]) - float(ww @ mu) if intercept else 0.0)
                      for ww in (w_p, w)]
    return certified_solution(X, y, C, intercept, hard_margin, gap_tol, candidates, alpha,
                              timer, polish_rounds=rounds, polished=polished is not None,
                              normalization=sigma2)


#: Epoch budget of the sparse route's DCD (it runs to the certificate's accuracy, not to a
#: warm start).
_SPARSE_EPOCHS = 5000
#: DCD's projected-gradient tolerance (margin units) before the first face solve, and the
#: number of face solves (each followed by DCD from its clipped point) before DCD alone is
#: asked for the gap. 1e-2: on the rcv1-shaped 200000 x 50000 (70 values a row, C = 1)
#: 1e-1 left sets that 8 faces did not fix (382 s CPU, DCD alone closing the gap), 1e-2
#: with the box check 54 s (75 s without it).
_SPARSE_DCD_TOL = 1e-2
_FACE_ROUNDS = 8
#: Residual (margin units, root mean square) at which a face solve checks the box and
#: stops if its point left it (:func:`~.linear_sparse.face_solve`).
_FACE_BOX_CHECK = 1e-4


def _solve_sparse(svm, timer, seed, gap_tol) -> Solution:
    """The sparse route: X (CSR) is used through products only, extra memory O(nnz + n + d).

    DCD with shrinking and implicit centring (:func:`~.dcd.dcd_linear`) to a loose
    tolerance finds the face; the face's KKT system is solved by conjugate gradients
    (:func:`~.linear_sparse.face_solve`, products with the free rows only) and its point,
    clipped to the box, certified (:func:`certificate`: sparse products, extended precision
    where float64 could be wrong at ``gap_tol``). A face whose point fails hands it back to
    DCD (a warm start: the samples on the wrong side move), up to ``_FACE_ROUNDS`` times;
    then DCD alone is asked for a relative gap of ``gap_tol / 10`` (it cuts its tolerance
    tenfold while the gap is larger). The best certified candidate is returned."""
    X, y = svm.X, svm.y
    n = X.shape[0]
    C = np.broadcast_to(np.asarray(svm.C_bounds, dtype=float), (n,))
    intercept = svm.intercept
    mu = (np.asarray(X.mean(axis=0), dtype=float).ravel() if intercept
          else np.zeros(X.shape[1]))
    run = dict(intercept=intercept, max_iter=_SPARSE_EPOCHS, seed=seed, center=intercept,
               record=False)
    alpha, w, b, epochs, status, _ = dcd_linear(X, y, C, tol=_SPARSE_DCD_TOL, **run)
    best, cg_iterations = None, 0

    def certify(a, b_a, stage):
        nonlocal best
        w_a = np.asarray(X.T @ (y * a)).ravel()
        candidates = [(w_a, float(b_a) if intercept else 0.0)]
        if intercept:
            b_free = intercept_from_alpha(y, C, a, np.asarray(X @ w_a).ravel())[0]
            candidates.append((w_a, float(b_free)))
        sol = certified_solution(X, y, C, intercept, svm.hard_margin, gap_tol, candidates, a,
                                 timer, polished=stage != "dcd", polish_rounds=rounds)
        sol.provenance["polish"] = stage
        if best is None or (sol.status == "optimal" and best.status != "optimal") or (
                abs(sol.extra["certificate"]["relative_gap"])
                < abs(best.extra["certificate"]["relative_gap"]) and best.status != "optimal"):
            best = sol
        return sol.status == "optimal"

    rounds = 0
    for rounds in range(1, _FACE_ROUNDS + 1):
        face = face_solve(X, y, C, alpha, intercept, mu, box_check=_FACE_BOX_CHECK)
        if face is None:
            break
        a_face, b_face, iterations, _ = face
        cg_iterations += iterations
        a_face = np.clip(a_face, 0.0, C)
        if certify(a_face, b_face, "face (conjugate gradients)"):
            break
        alpha, w, b, more, status, _ = dcd_linear(X, y, C, tol=_SPARSE_DCD_TOL,
                                                  alpha0=a_face, b0=b_face, **run)
        epochs += more
    if best is None or best.status != "optimal":
        start = best.alpha if best is not None else alpha
        alpha, w, b, more, status, _ = dcd_linear(
            X, y, C, tol=_SPARSE_DCD_TOL, alpha0=start, b0=best.b if best is not None else b,
            gap_tol=gap_tol / 10, **run)
        epochs += more
        certify(alpha, b, "dcd")
    best.n_iter = epochs
    best.time_s = timer()
    best.provenance.update(warm_start="dcd", dcd_status=status, face_rounds=rounds,
                           cg_iterations=cg_iterations, input="sparse (CSR products)")
    return best
