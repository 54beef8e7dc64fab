"""Resume an iterative exact route whose answer fell short of its certificate.

Coordinate descent stops when no coordinate step decreases F by more than ``tol * |F|``
(units of F). The certificate's duality gap can ask for more: on a lasso of the
rcv1-shaped generator (n = 20 000, d = 50 000, lam = lam_max / 20, 14 352 nonzero
coefficients, ||w||_1 = 2771) CD at its default tol 1e-12 stopped with a relative
stationarity distance of 1.6e-12 but a relative gap of 1.75e-9: the gap sums
|w_j| times each coordinate's remaining violation, and ||w||_1 is large. Resumed from
its answer with the tolerance tighter (:data:`CD_RESUME_TOLS`) it certifies; the
certificate is never loosened.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..solution import Solution

__all__ = ["CD_RESUME_TOLS", "resume_until_certified"]

#: Coordinate descent's tol (relative decrease of F per coordinate step) for each resume
#: (its default is 1e-12; measured above: 1e-16 from scratch gave a gap of 1.8e-11).
CD_RESUME_TOLS = (1e-16, 1e-20)


def resume_until_certified(run: Callable[[Solution, float], Solution],
                           certify: Callable[[Solution], Solution], sol: Solution,
                           tols: Iterable[float]) -> Solution | None:
    """``run(start, tol)`` from ``sol`` at each tol in turn (each resume starts from the
    previous answer), ``certify`` each answer; the first that passes, else None (the
    walker keeps the route's first answer). ``provenance["resumed"]`` lists the tols run."""
    done = []
    for tol in tols:
        sol = certify(run(sol, tol))
        done.append(tol)
        sol.provenance["resumed"] = list(done)
        if sol.report.passed:
            return sol
    return None
