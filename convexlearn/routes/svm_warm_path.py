"""The SVM's path over a grid of C: warm-started SMO, each point certified.

(The exact piecewise-linear C-path, with its breakpoints, is
:func:`convexlearn.routes.svm.exact_c_path`.)

For C_1, C_2, ... in the order given, the multipliers of the previous point start SMO at
the next C, scaled by min(1, C_k / C_{k-1}) so that they stay feasible (0 <= alpha <= C,
and y^T alpha = 0 is kept by a common scaling). SMO runs to the violation ``tol`` and the
point is kept when its KKT report (:mod:`convexlearn.certify.kkt`, every residual and the
relative duality gap) passes at ``kkt_tol``; otherwise that C goes through the exact chain
of ``SVM.solve()`` (``provenance["route"]`` says which).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data import check_C, check_positive
from ..solution import Timer

__all__ = ["svm_warm_path"]


def svm_warm_path(svm: Any, Cs: Any, *, tol: float = 1e-6, kkt_tol: float = 1e-6,
                  **smo_options) -> tuple[list[float], list, dict]:
    """Solve ``svm`` at each C in ``Cs`` (see the module docstring); ``svm.C`` is restored.
    Returns the values, the solutions and the provenance (the problem class makes the
    :class:`~convexlearn.path.Path`).

    Parameters
    ----------
    svm : convexlearn.SVM
    Cs : array_like of positive floats (finite: a hard margin has no path)
    tol : float
        SMO's violation tolerance (and relative gap) at each point.
    kkt_tol : float
        Tolerance of the KKT report that certifies each point.
    **smo_options
        Passed to SMO (cache_size, shrinking, max_iter).
    """
    values = [check_C(C) for C in np.atleast_1d(Cs).tolist()]
    for C in values:
        check_positive("C", C)       # finite and > 0: the path varies a soft margin
    tol, kkt_tol = check_positive("tol", tol), check_positive("kkt_tol", kkt_tol)
    timer = Timer()
    saved, out, previous, C_prev = svm.C, [], None, None
    try:
        for C in values:
            svm.C = C
            warm = None
            if previous is not None and previous.alpha is not None:
                warm = previous.alpha * min(1.0, C / C_prev)
            sol = svm.solve("smo", tol=tol, cert_tol=kkt_tol, warm_start=warm, **smo_options)
            if sol.ok:
                sol.provenance["route"] = "smo (warm-started)" if warm is not None else "smo"
            else:
                failed = sol.report.summary() if sol.report is not None else sol.status
                sol = svm.solve(cert_tol=kkt_tol)
                sol.provenance["fallback_from"] = {"smo": failed}
            sol.extra["C"] = C
            out.append(sol)
            previous, C_prev = sol, C
    finally:
        svm.C = saved
    return values, out, {"warm_start": "previous alpha scaled by min(1, C/C_prev)",
                         "smo_tol": tol, "kkt_tol": kkt_tol, "time_s": timer()}
