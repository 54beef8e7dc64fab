"""Logging of convexlearn: the ``convexlearn`` logger hierarchy and ``verbose=`` of solve.

Every module logs through ``logging.getLogger(__name__)`` (``convexlearn.svm``,
``convexlearn.erm``, ...), children of the ``convexlearn`` logger, which has a
``NullHandler``: nothing is printed unless the application configures logging (or a
call asks for ``verbose``). INFO records say which route or method runs and how it ended
(status, objective, time); DEBUG records add the fallbacks and certificate figures.
"""

from __future__ import annotations

from typing import Any

import contextlib
import functools
import logging
import time

__all__ = ["ROOT", "verbosity", "logged_solve"]

ROOT = logging.getLogger("convexlearn")
ROOT.addHandler(logging.NullHandler())


@contextlib.contextmanager
def verbosity(verbose: bool | int) -> Any:
    """Within the block, the ``convexlearn`` logger prints to stderr: ``verbose=True`` (or
    1) at INFO, 2 at DEBUG; False or 0 changes nothing. The level and handlers are
    restored on exit.

    Raises
    ------
    ParameterError
        ``verbose`` is not a bool or an integer in {0, 1, 2}.
    """
    from .errors import ParameterError
    if not isinstance(verbose, (bool, int)) or not 0 <= int(verbose) <= 2:
        raise ParameterError(f"verbose must be a bool or 0, 1, 2; got {verbose!r}")
    if not verbose:
        yield
        return
    level, handler = ROOT.level, None
    if not any(not isinstance(h, logging.NullHandler) for h in ROOT.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        ROOT.addHandler(handler)
    ROOT.setLevel(logging.INFO if int(verbose) == 1 else logging.DEBUG)
    try:
        yield
    finally:
        ROOT.setLevel(level)
        if handler is not None:
            ROOT.removeHandler(handler)


def logged_solve(func: Any) -> Any:
    """Decorate a problem's ``solve(self, method, ...)``: accept ``verbose=`` (see
    :func:`verbosity`) and log the call (INFO: method and size; the outcome: status,
    objective, route, time)."""
    log = logging.getLogger(func.__module__)

    @functools.wraps(func)
    def solve(self, method="exact", *args, verbose: bool | int = False, **kwargs):
        if ((verbose is False or (type(verbose) is int and verbose == 0))
                and not log.isEnabledFor(logging.INFO)):
            # nothing to log: no handler swap, no records (a fixed cost of small solves)
            return func(self, method, *args, **kwargs)
        with verbosity(verbose):
            X = getattr(self, "X", None)
            shape = "" if X is None else f" on {X.shape[0]} x {X.shape[1]}"
            log.info("%s.solve(method=%r)%s", type(self).__name__, method, shape)
            start = time.perf_counter()
            sol = func(self, method, *args, **kwargs)
            route = sol.provenance.get("route") or sol.method
            log.info("%s: status %s, objective %.12g, route %s, %.3f s", sol.method,
                     sol.status, sol.objective, route, time.perf_counter() - start)
            if (sol.report is not None and hasattr(sol.report, "summary")
                    and log.isEnabledFor(logging.DEBUG)):     # summary() is not free
                log.debug("%s", sol.report.summary())
            return sol
    return solve
