"""The SVM on dask arrays: the cascade SVM with an exact, chunk-wise certified finish.

Same problem and conventions as :class:`convexlearn.SVM` (C-form, dual max sum alpha -
1/2 alpha^T Q alpha, 0 <= alpha_i <= C, y^T alpha = 0 with an intercept).
``cl.SVM(X, y, ...)`` builds a :class:`DaskSVM` when X is a dask array chunked by rows.
One method: ``"cascade"`` (also what ``"exact"`` runs), see
:mod:`convexlearn.distributed.cascade`.

The KKT report of a cascade solution is computed in two parts: the conditions on the
final working set W (every support vector is in W) by
:func:`convexlearn.certify.kkt.kkt_report` on the SVM restricted to W, and, chunk by
chunk, the conditions of the samples outside W (alpha_i = 0 needs m_i >= 1: residual
max(0, 1 - m_i), in margin units, reported as ``outside_margin``) and the duality gap of
the whole problem, |P - D| / max(1, |P|) with P = 1/2 alpha^T Q alpha + C sum_i max(0,
1 - m_i) over all n samples. ``passed`` = every residual <= ``cert_tol``.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from ..certify.kkt import KKTReport
from ..data import check_bool, check_C, check_count, check_positive
from ..deprecation import renamed
from ..errors import NotApplicableError, ParameterError
from ..kernels import make_kernel
from ..solution import History, Solution, Timer
from ..svm import SVM
from .cascade import cascade_pass, empty_set, margins_outside, polished
from .chunks import ChunkedData

__all__ = ["DaskSVM", "DASK_SVM_METHODS"]

DASK_SVM_METHODS = ("exact", "cascade")


class DaskSVM(SVM):
    """:class:`~convexlearn.SVM` on a dask array X (rows chunked), y alike.

    Parameters
    ----------
    X : dask.array.Array (n, d)
    y : dask.array.Array or array_like (n,)
    C, kernel, intercept, gamma, degree, coef0 :
        As for :class:`~convexlearn.SVM`; kernels "linear", "rbf" and "poly" (PSD by
        construction: the cascade never sees the whole Gram matrix to check it).
        ``gamma="scale"`` is 1 / (d Var X), Var X reduced chunk-wise.
    client : dask.distributed.Client, optional
    """

    def __init__(self, X: ArrayLike, y: ArrayLike, C: float = 1.0, kernel: Any = "linear",
                 intercept: bool = True, *,
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0,
                 sample_weight: Any = None, client: Any = None,
                 **ignored):
        if sample_weight is not None:
            raise NotApplicableError("sample_weight is not supported on a dask array "
                                     "(the cascade solves unweighted subproblems)")
        if ignored:
            raise ParameterError(f"option(s) {sorted(ignored)} do not apply on a dask array")
        if not isinstance(kernel, str) or kernel not in ("linear", "rbf", "poly"):
            raise NotApplicableError(
                f"kernel={kernel!r} on a dask array: the cascade needs a kernel that is PSD "
                f"by construction, one of 'linear', 'rbf', 'poly' (the Gram matrix is never "
                f"formed whole, so it cannot be checked)")
        self.data = ChunkedData(X, y, "classification", client)
        self.X, self.y, self.label_map = self.data.X, self.data.y, self.data.label_map
        self.C = check_C(C)
        self.intercept = check_bool("intercept", intercept)
        if isinstance(gamma, str) and gamma == "scale" and kernel != "linear":
            var = float(self.data.compute(self.X.var()))
            gamma = 1.0 / (self.data.d * var) if var > 0 else 1.0
        elif isinstance(gamma, str) and gamma == "auto":
            gamma = 1.0 / self.data.d
        self.kernel = make_kernel(kernel, None, gamma=1.0 if kernel == "linear" else gamma,
                                  degree=degree, coef0=coef0)
        if not self.kernel.known_psd:
            raise NotApplicableError(f"{self.kernel.describe()} is not PSD by construction "
                                     f"(poly needs coef0 >= 0 and an integer degree)")
        self.sample_weight, self._gram = None, None     # no Gram operator: chunks

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
            SMO's tolerance in the cascade's passes (LIBSVM's -e; the passes only find
            the support set).
        cert_tol : float
            Tolerance of the final report (margin units; gap relative to max(1, |P|)),
            deciding "optimal".
        finish_tol : float
            SMO's tolerance on the working set before the polish.
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
        finish_tol = check_positive("finish_tol", finish_tol)
        max_passes, max_add = check_count("max_passes", max_passes), check_count("max_add", max_add)
        timer, history = Timer(), History()
        S, prev = empty_set(self.data.d), None
        passes = rounds = 0

        def finish(W):
            alpha, b, sub, _ = polished(W, self.C, self.kernel, self.intercept, finish_tol)
            check = margins_outside(self.data, W, W[2] * alpha, b, self.kernel, max_add)
            history.record(support=int(np.sum(alpha > 0)), working_set=len(W[0]),
                           violators=check[2], worst_outside=check[3], time=timer())
            return alpha, b, sub, check

        # Graf's passes, until the violators of the global check fit in one finishing
        # round (or S is stable); then finishing rounds on a growing working set, until
        # the check holds at kkt_tol (measured: each pass only shaves the violators by
        # ~3x, a round adds them all at once).
        for passes in range(1, max_passes + 1):
            S = cascade_pass(self.data, S, self.C, self.kernel, self.intercept, tol)
            alpha, b, sub, check = finish(S)
            key = S[0].tobytes()
            if check[2] <= max_add or key == prev:
                break
            prev, S = key, S[:3] + (alpha,)
        W = S
        for rounds in range(1, check_count("max_rounds", max_rounds) + 1):
            hinge, found, _, worst = check
            if worst <= kkt_tol or not found:
                break
            W = _grow(W, alpha, found)
            alpha, b, sub, check = finish(W)
        hinge, _, _, worst = check
        return self._solution(W, alpha, b, sub, hinge, worst, kkt_tol, passes, rounds,
                              history, timer)

    def _solution(self, W, alpha, b, sub, hinge, worst, kkt_tol, passes, rounds, history,
                  timer) -> Solution:
        local = sub.kkt(sub.from_alpha(alpha, b=b if self.intercept else None), tol=kkt_tol)
        beta = W[2] * alpha
        aQa = float(beta @ sub.gram_products(beta))     # by blocks: no |W| x |W| matrix
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
        w = W[1].T @ (W[2] * alpha) if self.kernel.is_linear else None
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


def _grow(W: tuple, alpha: np.ndarray, found: list) -> tuple:
    """W plus the violators found (alpha = 0 for them): the next working set."""
    parts = [(W[0], W[1], W[2], alpha)] + [(i, X, y, np.zeros(i.size)) for i, X, y, _ in found]
    idx = np.concatenate([p[0] for p in parts])
    order = np.argsort(idx, kind="stable")
    return tuple(np.concatenate([p[k] for p in parts])[order] for k in range(4))

