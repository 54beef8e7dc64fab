"""The exact ERM route by Newton's method, stopped by the certificate it must pass.

Newton (:func:`convexlearn.solvers.erm.newton.newton`; Newton-CG on a sparse or wide X)
runs until the relative certificate of its iterate passes at the route's ``tol``
(:meth:`convexlearn.erm.ERM.certificate`: stationarity distance and duality gap, 1e-9
relative for "exact"), with ||grad F|| <= 1e-13 ||grad F(0)|| as the last resort. Newton
converges quadratically, so every step past the first certified iterate is pure cost:
on the rcv1-shaped 200000 x 50000 logistic problem the iterate before the last one
already passed (relative distance 1.4e-11, gap 1e-16) and the last step cost 20 of the
73 Hessian-vector products.

The check reuses what the step computed: the scores X w + b and X^T l'(f) of the last
gradient (no pass over X; O(n + d) work), so it runs only once the gradient has fallen
below CHECK_BELOW of its value at (w, b) = 0, where measured certificates start to
pass (relative distance ~1e-8 at 7e-6 of it). With sample weights the certificate
recomputes both products (two passes), still cheap beside a Newton-CG step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..solution import Solution
from ..solvers.erm.newton import newton

__all__ = ["newton_route", "CHECK_BELOW", "LAST_RESORT"]

#: The certificate is tried at iterates with ||grad F|| <= CHECK_BELOW ||grad F(0)||.
CHECK_BELOW = 1e-4
#: Newton's own stopping rule, ||grad F|| <= LAST_RESORT ||grad F(0)||: far below what
#: the certificate needs, for the problems whose certificate never passes.
LAST_RESORT = 1e-13
#: Newton-CG's last model is solved until the predicted relative distance is tol / this.
TARGET_MARGIN = 10.0


def newton_route(erm: Any, warm_start: Solution | None = None, tol: float = 1e-9,
                 max_iter: int = 200, **_) -> Solution:
    """Newton from 0 (or ``warm_start``) until the certificate passes at ``tol`` (see the
    module docstring), at most ``max_iter`` iterations; the walker certifies the answer
    again (the ERM remembers the report of its last point, so that costs nothing)."""
    oracle = erm.oracle()
    x0 = None if warm_start is None else oracle.join(warm_start.w, warm_start.b)
    # gradient units: its size at w = 0, b = 0 (far from the optimum; the same for a cold
    # and a warm start)
    _, g0 = oracle.value_grad(oracle.zeros())
    g0norm = max(float(np.linalg.norm(g0)), 1e-300)

    stop = _CertifiedStop(erm, oracle, tol, CHECK_BELOW * g0norm)
    # chord steps (a reused factor) may finish: the last resort is far below the need
    return newton(oracle, x0, tol=LAST_RESORT * g0norm, max_iter=max_iter, reuse_hessian=True,
                  stop=stop, forcing_scale=g0norm)


class _CertifiedStop:
    """Newton's ``stop``: the certificate of the iterate passes at ``tol``, tried below
    ``check_below`` (a gradient norm). ``gradient_target``: the gradient norm at which the
    relative distance should reach tol / TARGET_MARGIN, extrapolated linearly from the
    last check (the distance is the gradient measured in column units): Newton-CG then
    solves the last model only that far (0 until a check has run)."""

    def __init__(self, erm: Any, oracle: Any, tol: float, check_below: float):
        self.erm, self.oracle, self.tol, self.check_below = erm, oracle, tol, check_below
        self.gradient_target = 0.0

    def __call__(self, x: np.ndarray, value: float, grad: np.ndarray) -> bool:
        gnorm = float(np.linalg.norm(grad))
        oracle = self.oracle
        loss_grad = oracle.last_loss_grad(x)
        if gnorm > self.check_below or loss_grad is None:
            return False
        w, b = oracle.split(x)
        XTg = loss_grad[:oracle.d] * oracle.n          # X^T l'(f) of the gradient's pass
        point = Solution(w=w.copy(), b=b, objective=value, status="converged",
                         method="newton")
        report = self.erm.certificate(point, tol=self.tol, scores=oracle.scores(x), XTg=XTg)
        if report.relative_distance > 0:
            self.gradient_target = gnorm * self.tol / (TARGET_MARGIN * report.relative_distance)
        return bool(report.passed)
