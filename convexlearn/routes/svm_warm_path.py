"""The SVM's path over a grid of C: the certified kernel route, warm-started, each point
certified at 1e-9 by default.

For C_1, C_2, ... in the order given, the multipliers of the previous point, scaled by
C_k / C_{k-1}, start the certified route of the next C
(:func:`~convexlearn.solvers.kernel_svm.certified_smo.certified_smo`: SMO to the violation
``tol``, the active-set polish, the KKT report recomputed from the data). The scaling keeps
every fraction alpha_i / C of the previous answer, so it is feasible at the new C (0 <=
alpha <= C, and y^T alpha = 0 is kept by a common factor), its bounded multipliers stay
bounded and its free ones free: the guess that is exact while the path's sets do not
change (the path is linear in 1/C on such a segment), where the previous rule (min(1,
C_k / C_{k-1})) left the bounded multipliers of an increasing C inside the box. SMO's
starting gradient K (y * alpha) scales the same way: it is read off the previous point's
certificate (f - b, computed from the data), so a warm start costs no kernel product
beyond the free multipliers' columns. The point
is kept when its report passes at ``kkt_tol`` with a relative duality gap <= ``kkt_tol``;
otherwise that C goes through the exact chain of ``SVM.solve()`` (``provenance["route"]``
says which, ``provenance["fallback_from"]`` why).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data import check_C, check_positive
from ..errors import ParameterError
from ..solution import Timer
from ..threads import kernel_solve_threads
from ..solvers.kernel_svm.certified_smo import certified_smo

__all__ = ["svm_warm_path", "PATH_TOL"]

#: The default certificate tolerance of every point: the exact routes' 1e-9 (residuals in
#: margin units, duality gap relative to max(|P|, |D|)).
PATH_TOL = 1e-9

#: Options of the certified route a path passes on.
_OPTIONS = ("cache_size", "max_iter")


def svm_warm_path(svm: Any, Cs: Any, *, tol: float = 1e-3, kkt_tol: float = PATH_TOL,
                  **smo_options) -> tuple[list[float], list, dict]:
    """Solve ``svm`` at each C in ``Cs`` (see the module docstring); ``svm.C`` is restored.
    Returns the values, the solutions and the provenance (the problem class makes the
    :class:`~convexlearn.path.Path`).

    Parameters
    ----------
    svm : convexlearn.SVM
    Cs : array_like of positive floats (finite: a hard margin has no path)
    tol : float
        SMO's violation tolerance before the polish (LIBSVM's ``-e``; the certificate, not
        this, decides each point).
    kkt_tol : float
        Tolerance of the KKT report and of the relative duality gap that certify each point.
    **smo_options
        ``cache_size`` (MB) and ``max_iter`` of the certified route.
    """
    values = [check_C(C) for C in np.atleast_1d(Cs).tolist()]
    for C in values:
        check_positive("C", C)       # finite and > 0: the path varies a soft margin
    tol, kkt_tol = check_positive("tol", tol), check_positive("kkt_tol", kkt_tol)
    unknown = sorted(set(smo_options) - set(_OPTIONS))
    if unknown:
        raise ParameterError(f"SVM.path: unknown option(s) {unknown}; the warm-started path "
                             f"takes {list(_OPTIONS)}")
    timer = Timer()
    saved, out, previous, C_prev = svm.C, [], None, None
    try:
        for C in values:
            svm.C = C
            warm = products = None
            if previous is not None and previous.alpha is not None:
                warm = previous.alpha * (C / C_prev)
                if previous.provenance["route"].startswith("exact-smo"):
                    # K (y * alpha) scales with alpha: from the previous certificate's
                    # product (f - b, computed from the data), no product of its own
                    products = (svm.y * previous.report.margins - previous.b) * (C / C_prev)
            with kernel_solve_threads(svm.n_samples):   # threads.py: measured
                sol = certified_smo(svm, tol=tol, kkt_tol=kkt_tol, gap_tol=kkt_tol,
                                    warm_start=warm, warm_products=products, **smo_options)
            if sol.status == "optimal":
                sol.provenance["route"] = ("exact-smo (warm-started)" if warm is not None
                                           else "exact-smo")
                sol.report.gap_tol = kkt_tol
            else:
                failed = sol.report.summary()
                sol = svm.solve(cert_tol=kkt_tol)
                sol.provenance["fallback_from"] = {"exact-smo": failed}
            sol.extra["C"] = C
            out.append(sol)
            previous, C_prev = sol, C
    finally:
        svm.C = saved
    return values, out, {"warm_start": "previous alpha scaled by C/C_prev",
                         "smo_tol": tol, "kkt_tol": kkt_tol, "time_s": timer()}
