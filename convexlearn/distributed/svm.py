"""The SVM on dask arrays: the cascade SVM with an exact, chunk-wise certified finish.

Same problem and conventions as :class:`convexlearn.SVM` (C-form, dual max sum alpha -
1/2 alpha^T Q alpha, 0 <= alpha_i <= C, y^T alpha = 0 with an intercept).
``cl.SVM(X, y, ...)`` builds a :class:`DaskSVM` when X is a dask array chunked by rows.
One method: ``"cascade"`` (also what ``"exact"`` runs), see
:mod:`convexlearn.distributed.cascade`.

Sample weights s_i >= 0 (a dask array in X's row chunks, or a numpy vector) make the box
0 <= alpha_i <= C s_i, as in memory; a sample of weight 0 is absent from the problem.

The KKT report of a cascade solution is computed in two parts: the conditions on the
final working set W (every support vector is in W), the report of
:func:`convexlearn.certify.kkt.kkt_report` on the SVM restricted to W from its decision
values f on W as the last pass over the chunks recomputed them
(:func:`~convexlearn.distributed.cascade.report_on`), and, chunk by chunk, the conditions of the samples outside W (alpha_i = 0 needs m_i >= 1: residual
max(0, 1 - m_i), in margin units, reported as ``outside_margin``) and the duality gap of
the whole problem, |P - D| / max(1, |P|) with P = 1/2 alpha^T Q alpha + C sum_i s_i max(0,
1 - m_i) over all n samples and alpha^T Q alpha = beta_W^T (f_W - b) from the same pass
(f recomputed from the data on every chunk). ``passed`` = every residual <= ``cert_tol``.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from ..certify.kkt import KKTReport
from ..data import check_bool, check_C, check_count, check_positive
from ..deprecation import renamed
from ..errors import DataError, NotApplicableError, ParameterError
from ..kernels import make_kernel
from ..solution import History, Solution, Timer
from ..svm import SVM
from .cascade import (cascade_pass, empty_set, exact_on, margins_outside, report_on,
                      smo_on, sub_svm)
from .chunks import ChunkedData

__all__ = ["DaskSVM", "DASK_SVM_METHODS"]

DASK_SVM_METHODS = ("exact", "cascade")
#: Graf's feedback passes go on while the global check finds more violators than this
#: many finishing rounds add (max_add per chunk each).
GRAF_ROUNDS = 4


class DaskSVM(SVM):
    """:class:`~convexlearn.SVM` on a dask array X (rows chunked), y alike.

    Parameters
    ----------
    X : dask.array.Array (n, d)
    y : dask.array.Array or array_like (n,)
    C, kernel, intercept, gamma, degree, coef0 :
        As for :class:`~convexlearn.SVM`; kernels "linear", "rbf" and "poly" (PSD by
        construction: the cascade never sees the whole Gram matrix to check it).
        ``gamma="scale"`` is 1 / (d Var X), Var X reduced chunk-wise (row i counted
        s_i times with weights, as in memory).
    sample_weight : dask.array.Array or array_like (n,), optional
        Per-sample costs: 0 <= alpha_i <= C s_i (soft margin only).
    client : dask.distributed.Client, optional
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, kernel: Any = "linear",
                 intercept: bool = True, *,
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0,
                 sample_weight: Any = None, client: Any = None,
                 **ignored):
        if ignored:
            raise ParameterError(f"option(s) {sorted(ignored)} do not apply on a dask array")
        if not isinstance(kernel, str) or kernel not in ("linear", "rbf", "poly"):
            raise NotApplicableError(
                f"kernel={kernel!r} on a dask array: the cascade needs a kernel that is PSD "
                f"by construction, one of 'linear', 'rbf', 'poly' (the Gram matrix is never "
                f"formed whole, so it cannot be checked)")
        self.C = check_C(C)
        if sample_weight is not None and self.hard_margin:
            raise ParameterError("sample_weight needs a finite C: the hard-margin SVM has "
                                 "no per-sample cost to weight")
        self.data = ChunkedData(X, y, "classification", client, sample_weight=sample_weight,
                                normalize=False)
        self.X, self.y, self.label_map = self.data.X, self.data.y, self.data.label_map
        self.intercept = check_bool("intercept", intercept)
        s = self.data.weights
        if s is not None:
            self._check_class_weights(s)
        if isinstance(gamma, str) and gamma == "scale" and kernel != "linear":
            var = float(self.data.compute(self.X.var() if s is None
                                          else _weighted_variance(self.X, s)))
            gamma = 1.0 / (self.data.d * var) if var > 0 else 1.0
        elif isinstance(gamma, str) and gamma == "auto":
            gamma = 1.0 / self.data.d
        self.kernel = make_kernel(kernel, None, gamma=1.0 if kernel == "linear" else gamma,
                                  degree=degree, coef0=coef0)
        if not self.kernel.known_psd:
            raise NotApplicableError(f"{self.kernel.describe()} is not PSD by construction "
                                     f"(poly needs coef0 >= 0 and an integer degree)")
        # the raw weights as a dask array (None unweighted); no Gram operator: chunks
        self.sample_weight, self._gram = s, None

    def _check_class_weights(self, s: Any) -> None:
        """Each class needs a sample of positive weight (as in memory)."""
        pos, neg = self.data.compute((s * (self.y > 0)).sum(), (s * (self.y < 0)).sum())
        for label, total in ((1, pos), (-1, neg)):
            if not total > 0:
                original = self.label_map.to_labels(np.array([label]))[0]
                original = original.item() if hasattr(original, "item") else original
                raise DataError(f"every sample of class {original!r} has weight 0: with "
                                f"them removed one class is left, and there is nothing "
                                f"to separate")

    @property
    def n_samples(self) -> int:
        """Number of training samples n."""
        return self.data.n

    def describe(self) -> str:
        """One line, as :meth:`SVM.describe`, with the chunking."""
        return super().describe()[:-1] + f", dask: {self.data.n_chunks} chunks)"

    @property
    def gram(self) -> NoReturn:
        raise NotApplicableError("the Gram matrix of a dask array is never formed whole")

    def primal(self, form: str = "slack") -> NoReturn:
        raise NotApplicableError(f"the cvxpy problems of {self.describe()} would load the "
                                 f"whole data; solve with method='cascade'")

    dual = primal

    def solve(self, method: str = "exact", *, tol: float = 1e-3, cert_tol: float = 1e-9,
              finish_tol: float = 1e-8, max_passes: int = 10, max_add: int = 200,
              max_rounds: int = 50, **options) -> Solution:
        """Cascade SVM, then the exact finish; the KKT report is computed chunk-wise.

        Parameters
        ----------
        method : str
            "cascade" (or "exact", the same).
        tol : float
            SMO's tolerance (LIBSVM's -e) in the cascade's passes and on the working
            set; violators outside W farther than ``tol`` from the margin (1 - m_i >
            tol) are added by SMO resumed on W, nearer ones by the exact solve on W.
        cert_tol : float
            Tolerance of the final report (margin units; gap relative to max(1, |P|)),
            deciding "optimal"; also the exact solve's report on W (KKT and relative
            gap).
        finish_tol : float
            Unused (kept for callers of the earlier finish; the exact solve on W starts
            from SMO at ``tol``, as the in-memory exact route).
        max_passes, max_add, max_rounds : int
            Cascade passes; violators added per chunk and per finishing round; rounds.
        """
        if method not in DASK_SVM_METHODS:
            raise NotApplicableError(
                f"method {method!r} does not run on a dask array; the distributed SVM "
                f"methods are {', '.join(map(repr, DASK_SVM_METHODS))}")
        kkt_tol = renamed("DaskSVM.solve", "kkt_tol", "cert_tol", options.pop("kkt_tol", None),
                          cert_tol, default=1e-9)
        if options:
            raise ParameterError(f"method 'cascade' has no option(s) {sorted(options)}")
        tol, kkt_tol = check_positive("tol", tol), check_positive("cert_tol", kkt_tol)
        check_positive("finish_tol", finish_tol)
        max_passes, max_add = check_count("max_passes", max_passes), check_count("max_add", max_add)
        max_rounds = check_count("max_rounds", max_rounds)
        timer, history = Timer(), History()
        weighted = self.sample_weight is not None
        args = (self.C, self.kernel, self.intercept)
        S, prev, passes = empty_set(self.data.d), None, 0

        def check(W, alpha, b, since=None, step=""):
            """The pass over the chunks at (alpha, b) on W: incremental from the last
            pass (``since`` = (its g per chunk, its alpha on W)), whole without; one
            history row: the step before it (``step``: "cascade", "smo", "exact" or
            "check", none; the flags ``cascade``, ``exact`` and ``whole``) and its
            seconds, the pass's seconds, the working set and what the pass found."""
            start = timer()
            beta = W[2] * alpha
            if since is None:
                out = margins_outside(self.data, W, beta, b, self.kernel, max_add)
            else:
                out = margins_outside(self.data, W, beta - W[2] * since[1], b, self.kernel,
                                      max_add, base=since[0])
            history.record(cascade=float(step == "cascade"), exact=float(step == "exact"),
                           whole=float(since is None), step_s=start - clock[0],
                           pass_s=timer() - start,
                           moved=int(np.sum(alpha != (0 if since is None else since[1]))),
                           support=int(np.sum(alpha > 0)), working_set=len(W[0]),
                           violators=out[2], worst_outside=out[3], time=timer())
            clock[0] = timer()
            return out

        clock = [0.0]       # when the step before the next pass started
        # Graf's passes, while the violators of the global check are more than a few
        # finishing rounds absorb (max_add per chunk each; or S is stable); the root's
        # multipliers (SMO at tol) are checked as they are: no solve on the client.
        # Measured (n = 100000, d = 10): a second pass took 227 s and its whole check
        # 157 s to bring 970 violators to 185; a finishing round takes ~20 s.
        for passes in range(1, max_passes + 1):
            S, b = cascade_pass(self.data, S, *args, tol, weighted)
            result = check(S[:4], S[4], b, step="cascade")
            key = S[0].tobytes()
            if result[2] <= GRAF_ROUNDS * max_add * self.data.n_chunks or key == prev:
                break
            prev = key
        W, alpha, exact, sub = S[:4], S[4], False, None
        # Finishing rounds: far violators join W and SMO resumes there (warm, its
        # gradient from the pass: f - b), and the next pass adds the kernel rows of the
        # multipliers that moved to the last pass's g; near violators, SMO and the
        # active-set polish on W, whose pass (incremental) finds the violators left;
        # once there is none, the certificate's pass recomputes g whole (its f on W
        # gives the report on W). Only when that report fails on a W that holds
        # every violator, the in-memory exact route on W (its retries at smaller SMO
        # tolerances). Measured (n = 6000, d = 10): the earlier finish, SMO at 1e-8 and
        # the polish every round, each pass whole, took 10x the in-memory route.
        rounds, retried, local, whole = 0, False, None, True
        while True:
            hinge, found, _, worst, f_W, g_chunks = result
            if exact and not whole and (worst <= kkt_tol or rounds >= max_rounds):
                # the incremental pass after the polish finds no violator: the
                # certificate's pass (g recomputed whole; its f on W for the report)
                result, whole = check(W, alpha, b, step="check"), True
                continue
            if exact:
                local = report_on(sub, alpha, b, f_W, kkt_tol)
                if (worst <= kkt_tol and (local.passed or retried)) or rounds >= max_rounds:
                    break
            rounds += 1
            if worst > kkt_tol and found:
                W, alpha, f_W = _grow(W, alpha, f_W, found)
            since = (g_chunks, alpha.copy())        # the pass's point, on the new W
            sub = sub_svm(W + (alpha,), *args, weighted)
            if worst > tol and rounds < max_rounds:
                alpha, b = smo_on(sub, alpha, f_W - b, tol)
                exact = False
            elif exact and worst <= kkt_tol:        # W holds them all; the report failed
                final = exact_on(sub, alpha, f_W - b, tol, kkt_tol)
                alpha, b, retried = final.alpha, final.b, True
            else:
                alpha, b = smo_on(sub, alpha, f_W - b, tol, polish=True)
                exact = True
            # incremental: violators left after the polish are found without a whole
            # pass (measured, n = 100000: one violator cost a whole pass of 159 s)
            result, whole = check(W, alpha, b, since, step="exact" if exact else "smo"), False
        return self._solution(W, alpha, b, local, hinge, worst, f_W, kkt_tol, passes,
                              rounds, history, timer)

    def _solution(self, W, alpha, b, local, hinge, worst, f_W, kkt_tol, passes, rounds,
                  history, timer) -> Solution:
        """The solution of the whole problem from the exact solve on W (alpha, b; the
        ``local`` KKT report on W) and the last pass's figures (full, not incremental)."""
        beta = W[2] * alpha
        aQa = float(beta @ (f_W - b))        # K_W beta from the pass: f - b on W
        primal = 0.5 * aQa + (0.0 if self.hard_margin else self.C * hinge)
        dual = float(alpha.sum()) - 0.5 * aQa
        rel_gap = abs(primal - dual) / max(1.0, abs(primal))
        residuals = dict(local.residuals)
        residuals["outside_margin"] = max(0.0, worst)
        residuals["duality_gap"] = rel_gap
        max_violation = max(float(np.max(r)) if np.ndim(r) else float(r)
                            for r in residuals.values())
        idx = W[0]
        report = KKTReport(
            passed=bool(max_violation <= kkt_tol), tol=kkt_tol, max_violation=max_violation,
            duality_gap=primal - dual, relative_gap=rel_gap, primal_objective=primal,
            dual_objective=dual, residuals=residuals, support=idx[local.support],
            free=idx[local.free], bounded=idx[local.bounded],
            margin_support=idx[local.margin_support],
            disagreements=idx[local.disagreements], margins=local.margins, alpha=alpha,
            notes=[f"per-sample residuals and margins are those of the working set "
                   f"({idx.size} samples, global indices in extra['working_set']); "
                   f"outside it, alpha = 0 and the worst 1 - m_i over every chunk is "
                   f"'outside_margin'"])
        full_alpha = np.zeros(self.n_samples)
        full_alpha[idx] = alpha
        w = W[1].T @ beta if self.kernel.is_linear else None
        sol = Solution(w=w, b=float(b) if self.intercept else 0.0, alpha=full_alpha,
                       objective=primal, status="optimal" if report.passed else "inaccurate",
                       method="cascade", n_iter=passes, history=history, time_s=timer(),
                       report=report,
                       provenance={"route": "cascade", "solver": "convexlearn.smo + polish",
                                   "passes": passes, "finishing_rounds": rounds,
                                   "n_chunks": self.data.n_chunks})
        sol.dual_coef = np.zeros(self.n_samples)
        sol.dual_coef[idx] = beta
        sol.extra.update(working_set=idx, support_vectors=W[1][alpha > 0],
                         dual_objective=dual)
        return sol

    def kkt(self, solution: Solution, tol: float = 1e-6) -> KKTReport:
        """The report computed by :meth:`solve` (re-checking needs a new pass: solve again)."""
        if solution.report is None:
            raise NotApplicableError("this solution has no chunk-wise report")
        return solution.report

    def decision_function(self, solution: Solution, X: ArrayLike | None = None) -> Any:
        """f(x) = sum_{i in SV} alpha_i y_i k(x_i, x) + b; lazy for a dask X (default: the
        training data)."""
        X = self.X if X is None else X
        idx = np.flatnonzero(solution.dual_coef)
        sv = solution.extra.get("support_vectors")
        beta = solution.dual_coef[idx]
        kern = self.kernel
        if hasattr(X, "map_blocks"):
            return X.map_blocks(lambda B: kern(B, sv) @ beta + solution.b, drop_axis=1,
                                dtype=float)
        return kern(np.asarray(X, float), sv) @ beta + solution.b

    def predict(self, solution: Solution, X: ArrayLike | None = None) -> Any:
        """Labels in the original classes (lazy for a dask X)."""
        f = self.decision_function(solution, X)
        if hasattr(f, "map_blocks"):
            return f.map_blocks(self.label_map.to_labels, dtype=self.label_map.classes.dtype)
        return self.label_map.to_labels(f)

    def dual_objective(self, alpha: Any) -> float:
        raise NotApplicableError("read solution.report.dual_objective (computed chunk-wise)")


def _grow(W: tuple, alpha: np.ndarray, f_W: np.ndarray, found: list) -> tuple:
    """W plus the violators found (alpha = 0 for them), sorted by global index: the next
    working set, its multipliers and f on it (the violators' f from the pass)."""
    parts = [W + (alpha, f_W)] + [(i, X, y, s, np.zeros(i.size), f) for i, X, y, s, f in found]
    idx = np.concatenate([p[0] for p in parts])
    order = np.argsort(idx, kind="stable")
    grown = tuple(np.concatenate([p[k] for p in parts])[order] for k in range(6))
    return grown[:4], grown[4], grown[5]


def _weighted_variance(X: Any, s: Any) -> Any:
    """Variance of all entries of the dask array X, row i counted s_i times (the
    in-memory ``gamma="scale"`` rule with weights), lazily."""
    d, total = X.shape[1], s.sum()
    mean = (s @ X.sum(axis=1)) / (d * total)
    return (s @ ((X - mean) ** 2).sum(axis=1)) / (d * total)
