"""Dual coordinate descent (DCD) for the linear SVM, with an unpenalized intercept.

Hsieh, Chang, Lin, Keerthi and Sundararajan (2008), the method of LIBLINEAR, minimizes the
dual of the linear SVM one coordinate at a time, keeping w = sum_i a_i y_i x_i so that a
coordinate costs O(d)::

    min_a  1/2 a^T (Q + D) a - e^T a,   Q_ij = y_i y_j <x_i, x_j>,   0 <= a_i <= U

hinge loss: D = 0, U = C; squared hinge 1/2 ||w||^2 + C sum_i max(0, 1 - m_i)^2:
D = I / (2C), U = inf. The coordinate step is the clipped Newton step
a_i <- clip(a_i - G_i / (Q_ii + D_ii), 0, U), G_i = y_i f(x_i) - 1 + D_ii a_i, taken in a
random order each epoch, with LIBLINEAR's shrinking of bounded coordinates whose projected
gradient points outward beyond the last epoch's extremes.

**The intercept.** LIBLINEAR has no equality constraint: it appends a constant feature, so
its b is penalized (b^2 / 2 joins ||w||^2 / 2) - the problem scikit-learn's ``LinearSVC``
solves. Here b stays unpenalized (DESIGN.md): the constraint y^T a = 0 is enforced by the
method of multipliers (augmented Lagrangian) with penalty ``rho``::

    L(a, lam) = 1/2 a^T (Q + D) a - e^T a + lam y^T a + rho/2 (y^T a)^2.

For fixed lam this is again a box-constrained problem of the same kind - exactly LIBLINEAR's
bias trick with a constant feature sqrt(rho) and the linear term shifted by lam y - so it is
minimized by the same coordinate steps, now with G_i = y_i (<w, x_i> + b) - 1 + D_ii a_i and
curvature Q_ii + D_ii + rho, where b = lam + rho y^T a is the current intercept. When the
coordinates are optimal (maximal projected-gradient spread <= the outer accuracy), the
multiplier moves, lam <- lam + rho y^T a, the next inner problem is asked for 10x the
accuracy, and the shrunk coordinates are reactivated (they were judged for the old b; not
doing so froze y^T a away from 0 and made lam drift - measured). At the solution
y^T a = 0 and lam = b, the unpenalized intercept. The method stops when the
projected-gradient spread is <= tol and the multiplier step rho |y^T a| (the change it would
make to b) is <= tol as well.

Equivalently: LIBLINEAR's penalized-intercept problem is the first inner problem (lam = 0,
constant feature 1 = sqrt(rho) with rho = 1); the outer loop removes the penalty.

:func:`solve_svm` runs on centred data X - mean (b unpenalized: the same problem, b shifted
by <w, mean>) with rho = the mean square of a centred feature, and requires
|y^T a| ||mean|| <= tol as well (else mean y^T a shows in w). Both were measured necessary: uncentred iris
versicolor/virginica stayed 7e-4 above the optimum after 10 000 epochs (+530% at a shift
of 1e3), and centred digits 3/8 with rho = 1 stayed 1.7e-2 above it after 3000.
"""

from __future__ import annotations

import math

import numpy as np

from scipy.linalg.blas import daxpy, ddot

from ..data import check_choice, check_positive, is_sparse
from ..errors import NotApplicableError, ParameterError
from ..solution import History, Solution, Timer

__all__ = ["solve_svm", "dcd_linear", "LOSSES"]

LOSSES = ("hinge", "squared_hinge")

_INNER = 0.1      # inner accuracy after a multiplier step, relative to rho |y^T a|
_TOL_FLOOR = 1e-14    # the gap test cuts tol no further (projected gradients are O(1))


class _CentredSparse:
    """X - 1 mu^T for a CSR X, never formed: the products of DCD in O(nnz) (implicit
    centring; mu = 0 without an intercept).

    DCD keeps v = sum_i a_i y_i x_i and s = y^T a; the centred w is v - s mu, so
    <x_i - mu, w> = <x_i, v> - s <x_i, mu> - <mu, v> + s ||mu||^2, with <mu, v> updated at
    each step (v += t x_i moves it by t <x_i, mu>).
    """

    def __init__(self, X, mu):
        self.X, self.mu = X, mu
        self.indptr, self.indices, self.data = X.indptr, X.indices, X.data
        self.xm = X @ mu
        self.mu2 = float(mu @ mu)
        self.shape = X.shape

    def __matmul__(self, w):
        return self.X @ w - float(self.mu @ w)

    @property
    def T(self):
        outer = self

        class _Transposed:
            def __matmul__(self, u):
                return outer.X.T @ u - outer.mu * float(np.sum(u))
        return _Transposed()

    def row_sq_norms(self) -> np.ndarray:
        sq = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        return sq - 2.0 * self.xm + self.mu2


def _objectives(X, y, C, loss, alpha, w, b):
    """Primal P(w, b), dual D(a) (the dual value is a bound only where y^T a = 0)."""
    m = y * (X @ w + b)
    slack = np.maximum(0.0, 1.0 - m)
    ww = float(w @ w)
    if loss == "hinge":
        return 0.5 * ww + C * float(slack.sum()), float(alpha.sum()) - 0.5 * ww
    return (0.5 * ww + C * float(slack @ slack),
            float(alpha.sum()) - 0.5 * ww - float(alpha @ alpha) / (4.0 * C))


def dcd_linear(X: np.ndarray, y: np.ndarray, C: float, loss: str = "hinge", intercept: bool = True,
               tol: float = 1e-4, max_iter: int = 1000, seed=0, shrinking: bool = True,
               rho: float | None = None, alpha0: np.ndarray | None = None, callback=None,
               b0: float = 0.0, gap_tol: float | None = None, shift_norm: float = 0.0):
    """Dual coordinate descent on arrays (see the module docstring).

    Parameters
    ----------
    X : ndarray (n, d)
    y : ndarray of {-1, +1}
    C : float
        Finite; the hard margin has no box and is left to SMO or the exact solvers.
    loss : {"hinge", "squared_hinge"}
    intercept : bool
        True: unpenalized b via the augmented Lagrangian on y^T a = 0.
    tol : float
        Accuracy of the projected gradient (its max - min over the coordinates, as in
        LIBLINEAR) and of the intercept.
    max_iter : int
        Budget of epochs (passes over the active coordinates).
    seed : int or numpy.random.Generator
        For the random order of the coordinates.
    rho : float, optional
        Augmented-Lagrangian penalty, default mean_ij x_ij^2 (the mean square of a feature;
        1 for all-zero X): the constant feature sqrt(rho) is as large as a typical feature.
        That is LIBLINEAR's bias 1 on standardized data, and unlike a fixed 1 it makes the
        method equivariant under X -> s X. Measured (epochs to tol 1e-6, centred data):
        digits 3/8 544 (rho = 1: not converged in 3000, 1.7e-2 off), iris 101 (130),
        standardized breast cancer and make_classification as with rho = 1; rho =
        mean ||x_i||^2 was 2-4x slower on the last two.
    alpha0 : ndarray, optional
        Warm start (clipped to the box).
    b0 : float
        Warm start of the intercept (the multiplier starts at b0 - rho y^T alpha0).
    callback : callable, optional
        ``callback(epoch, alpha, dual_objective)`` after each epoch; False stops.
    gap_tol : float, optional
        Also require the relative gap |P - D| / max(1, |P|) <= gap_tol at the stop (as
        :func:`~convexlearn.solvers.smo.smo` does): while it fails, ``tol`` is cut tenfold
        (down to 1e-14); a gap still too large there ends with status "inaccurate".
    shift_norm : float
        ||mu|| max_i ||x_i - mu|| for a centring X - mu done by the caller: the imbalance
        s = y^T a then shows in the decision values on the original data as
        s <mu, x_i - mu>, so the stop also needs |s| shift_norm <= tol.

    Returns
    -------
    alpha, w, b, n_epochs, status, history
        History per epoch: ``objective`` (the dual objective D(a) = e^T a - 1/2 ||w||^2
        - a^T D a / 2; a lower bound on the optimum only once y^T a = 0), ``violation``
        (projected-gradient spread on the pass), ``balance`` (|y^T a|), ``active``
        (coordinates visited), ``time``; after full passes also ``primal`` (P(w, b)) and
        ``gap`` (P - D) - the primal costs a product X w, as much as a full pass.
    """
    timer = Timer()
    n, d = X.shape
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    hinge = loss == "hinge"
    upper = C if hinge else math.inf
    diag = 0.0 if hinge else 1.0 / (2.0 * C)
    sparse = isinstance(X, _CentredSparse)
    sq = X.row_sq_norms() if sparse else np.einsum("ij,ij->i", X, X)
    if intercept:
        # the constant feature sqrt(rho) as large as a typical feature: 1 on standardized
        # data (LIBLINEAR's bias 1), and equivariant under X -> s X
        mean_sq = float(sq.mean()) / d if n and d else 0.0
        rho = (mean_sq if mean_sq > 0 else 1.0) if rho is None else check_positive("rho", rho)
    else:
        rho = 0.0
    # A zero row without intercept (hinge) has no curvature: its dual term is linear, and
    # the clipped step must go to the bound the gradient points at. A tiny curvature does
    # that through the clip (the step is +-huge), with no branch in the loop.
    curv = np.maximum(sq + diag + rho, 1e-300)
    alpha = np.zeros(n) if alpha0 is None else np.clip(np.array(alpha0, dtype=float), 0.0, upper)
    w = X.T @ (y * alpha)
    s = float(y @ alpha)
    lam = float(b0) - rho * s if intercept else 0.0
    yl = y.tolist()
    if sparse:
        # v = sum a_i y_i x_i on the stored values; w = v - s mu is formed only at the end
        indptr, indices, data, xm = X.indptr, X.indices, X.data, X.xm
        v = X.X.T @ (y * alpha)
        mu_v = float(X.mu @ v)
    else:
        rows = list(np.ascontiguousarray(X))   # row views made once
    # The loop is per coordinate, so its cost is interpreter overhead: Python floats for the
    # scalars and the BLAS ddot/daxpy wrappers (~0.1-0.4 us a call against ~1 us for
    # ``x @ w`` and ``w += t * x``) - measured in benchmarks/bench_svm_iterative.py.
    alpha_l = alpha.tolist()
    a_sum, a_sq = float(alpha.sum()), float(np.einsum("i,i", alpha, alpha))
    curv_l = curv.tolist()
    history = History()
    active = np.arange(n)
    pg_max_old, pg_min_old = math.inf, -math.inf
    status, epoch = "max_iter", 0
    outer_tol = math.inf              # accuracy asked of the inner problem before lam moves
    while epoch < max_iter:
        epoch += 1
        b = lam + rho * s
        pg_max, pg_min = -math.inf, math.inf
        keep = np.ones(active.size, dtype=bool)
        perm = rng.permutation(active)
        n_pass = perm.size
        for pos, i in enumerate(perm.tolist()):
            yi, ai = yl[i], alpha_l[i]
            if sparse:
                lo, hi = indptr[i], indptr[i + 1]
                cols, vals = indices[lo:hi], data[lo:hi]
                fi = float(vals @ v[cols]) - s * xm[i] - mu_v + s * X.mu2
            else:
                xi = rows[i]
                fi = ddot(xi, w)
            G = yi * (fi + b) - 1.0 + diag * ai
            if ai <= 0.0:
                if shrinking and G > pg_max_old:
                    keep[pos] = False
                    continue
                pg = min(G, 0.0)
            elif ai >= upper:
                if shrinking and G < pg_min_old:
                    keep[pos] = False
                    continue
                pg = max(G, 0.0)
            else:
                pg = G
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if pg != 0.0:
                new = ai - G / curv_l[i]
                new = 0.0 if new < 0.0 else (upper if new > upper else new)
                step = (new - ai) * yi
                if step != 0.0:
                    alpha_l[i] = new
                    a_sum += new - ai
                    a_sq += new * new - ai * ai
                    if sparse:
                        v[cols] += step * vals      # CSR rows hold each column once
                        mu_v += step * xm[i]
                    else:
                        daxpy(xi, w, a=step)        # w += step x_i, in place
                    if rho or sparse:
                        s += step
                        b += rho * step
        active = perm[keep]
        # LIBLINEAR's spread max - min of the projected gradients; without an intercept the
        # box is the only constraint and optimality is every pg = 0: max |pg| (the spread
        # is 0 when all pg are equal, e.g. all -1 at the start; found in review).
        if not active.size:
            violation = 0.0
        elif intercept:
            violation = pg_max - pg_min
        else:
            violation = max(pg_max, -pg_min)
        # O(1) bookkeeping per epoch: running sums, not O(n) reductions (a threaded BLAS
        # dot of length 20 000 was measured at ~10 ms on a busy machine)
        ww = (float(v @ v) - 2.0 * s * mu_v + s * s * X.mu2) if sparse else ddot(w, w)
        dual = a_sum - 0.5 * ww - 0.5 * diag * a_sq
        row = dict(objective=dual, violation=violation, balance=abs(s), active=n_pass,
                   violation_target=tol)
        if n_pass == n or callback is not None:
            alpha[:] = alpha_l
        if n_pass == n:
            if sparse:
                w = v - s * X.mu
            # the primal needs X w, O(nd): only after full passes, which cost as much
            primal = _objectives(X, y, C, loss, alpha, w, lam + rho * s)[0]
            row.update(primal=primal, gap=primal - dual)
        history.record(**row, time=timer())
        if callback is not None and callback(epoch, alpha, dual) is False:
            status = "stopped"
            break
        pg_max_old = pg_max if pg_max > 0 else math.inf
        pg_min_old = pg_min if pg_min < 0 else -math.inf
        inner_done = violation <= max(tol, outer_tol)
        if not inner_done:
            continue
        if intercept and max(rho, shift_norm) * abs(s) > tol:
            # multiplier step; ask the next inner problem for more accuracy
            outer_tol = max(tol, _INNER * max(rho, shift_norm) * abs(s))
            lam += rho * s
            # shrinking decisions were made for the old multiplier: revisit every coordinate
            active = np.arange(n)
            pg_max_old, pg_min_old = math.inf, -math.inf
            continue
        if violation > tol:        # the multiplier is accurate: now the coordinates must be
            outer_tol = tol
            continue
        if active.size < n:        # optimal on the active set: re-check every coordinate
            active = np.arange(n)
            pg_max_old, pg_min_old = math.inf, -math.inf
            continue
        if gap_tol is not None and "primal" in row:     # this pass was a full one
            rel_gap = abs(row["gap"]) / max(1.0, abs(row["primal"]))
            if rel_gap > gap_tol:
                if tol > _TOL_FLOOR:
                    tol = outer_tol = max(tol / 10.0, _TOL_FLOOR)
                    continue
                status = "inaccurate"
                break
        status = "converged"
        break
    alpha[:] = alpha_l
    w = X.T @ (y * alpha)          # recomputed: the running sum drifts by round-off
    return alpha, w, lam + rho * s, epoch, status, history



def solve_svm(svm, tol: float = 1e-4, max_iter: int = 1000, loss: str = "hinge", seed=0,
              shrinking: bool = True, rho: float | None = None, callback=None,
              warm_start=None, gap_tol: float | None = None) -> Solution:
    """Dual coordinate descent for a linear-kernel ``svm`` (soft margin), b unpenalized.

    Parameters
    ----------
    svm : convexlearn.SVM
        Linear kernel, finite C.
    tol : float
        Projected-gradient spread and intercept accuracy at which to stop.
    max_iter : int
        Budget of epochs.
    loss : {"hinge", "squared_hinge"}
        "squared_hinge" solves 1/2 ||w||^2 + C sum_i max(0, 1 - m_i)^2 - another problem
        than the SVM's hinge C-form, so ``svm.kkt`` (which checks the hinge problem) does
        not certify it; ``objective`` is then the squared-hinge primal value.
    seed : int or numpy.random.Generator
        Random order of the coordinates; the same seed gives the same result.
    shrinking : bool
    rho : float, optional
        Augmented-Lagrangian penalty of y^T a = 0 (default: the mean square of a centred
        feature, see :func:`dcd_linear`).
    callback : callable, optional
        ``callback(epoch, alpha, dual_objective)``; returning False stops.
    warm_start : Solution or ndarray, optional
        Starting multipliers (and, from a Solution, the intercept).
    gap_tol : float, optional
        Relative duality gap required as well (default ``tol``, so that "converged" means
        what the KKT report checks; ``math.inf``: LIBLINEAR's rule). See :func:`dcd_linear`.

    Returns
    -------
    Solution
        ``w``, ``b`` (the multiplier of y^T a = 0), ``alpha``, ``objective`` = P(w, b),
        ``n_iter`` = epochs; history per epoch as in :func:`dcd_linear` (dual objective,
        violation, balance = |y^T a|, active, time; primal and gap after full passes).
    """
    timer = Timer()
    if not svm.kernel.is_linear or svm.X is None:
        raise NotApplicableError(
            f"method 'dcd' (dual coordinate descent) needs the linear kernel: it keeps "
            f"w = sum_i alpha_i y_i x_i explicitly; this problem is {svm.describe()}. "
            f"Use method='smo' for other kernels")
    if svm.hard_margin:
        raise NotApplicableError(
            "method 'dcd' needs a finite C (the coordinate steps are clipped to [0, C]); "
            "for the hard margin use method='smo' or the exact solver")
    loss = check_choice("loss", loss, LOSSES)
    tol = check_positive("tol", tol)
    gap_tol = tol if gap_tol is None else check_positive("gap_tol", gap_tol, allow_inf=True)
    alpha0, b0 = None, 0.0
    if warm_start is not None:
        alpha0 = warm_start.alpha if isinstance(warm_start, Solution) else warm_start
        b0 = float(warm_start.b) if isinstance(warm_start, Solution) else 0.0
        if alpha0 is None or np.shape(alpha0) != (svm.n_samples,):
            raise ParameterError(f"warm_start must carry alpha of shape ({svm.n_samples},)")
    # With an intercept, b is unpenalized, so the problem on X - mu is the same one with
    # b shifted by <w, mu>: the multiplier method converges much faster on centred data
    # (uncentred, ||x||^2 >> rho stalls it: iris versicolor/virginica was 7e-4 above the
    # optimum after 10 000 epochs, and 5x at a +1e3 shift; found in review).
    mu = (np.asarray(svm.X.mean(axis=0)).ravel() if svm.intercept
          else np.zeros(svm.X.shape[1]))
    if alpha0 is not None:
        b0 += float((svm.X.T @ (svm.y * np.clip(alpha0, 0.0, svm.C))) @ mu)
    # a sparse X is centred implicitly (its centred copy would be dense)
    Xc = _CentredSparse(svm.X, mu) if is_sparse(svm.X) else svm.X - mu
    if svm.intercept:
        sq = Xc.row_sq_norms() if is_sparse(svm.X) else np.einsum("ij,ij->i", Xc, Xc)
        shift_norm = float(np.linalg.norm(mu)) * float(np.sqrt(np.max(sq)))
    else:
        shift_norm = 0.0
    alpha, w_c, b, epochs, status, history = dcd_linear(
        Xc, svm.y, svm.C, loss, svm.intercept, tol, max_iter, seed, shrinking, rho,
        alpha0, callback, b0, gap_tol=None if math.isinf(gap_tol) else gap_tol,
        shift_norm=shift_norm)
    # w = sum_i alpha_i y_i x_i (the primal-dual link the KKT report checks); it differs
    # from the centred run's w_c by mu y^T alpha, which the stop kept <= tol, and with
    # b = b_c - <w, mu> the decision values differ from the run's by (y^T alpha) <mu, x - mu>.
    w = svm.X.T @ (svm.y * alpha)
    b -= float(w @ mu)
    primal, dual = _objectives(svm.X, svm.y, svm.C, loss, alpha, w, b)
    xi = np.maximum(0.0, 1.0 - svm.y * (svm.X @ w + b))
    sol = Solution(w=w, b=float(b), alpha=alpha, xi=xi, objective=primal, status=status,
                   method="dcd", n_iter=epochs, history=history, time_s=timer(),
                   provenance={"solver": "convexlearn.dcd", "tol": tol, "seed": seed,
                               "loss": loss, "intercept": "unpenalized (augmented Lagrangian)"
                               if svm.intercept else "none"},
                   dual_coef=svm.y * alpha)
    sol.extra.update(loss=loss, dual_objective=dual, balance=float(svm.y @ alpha))
    return sol
