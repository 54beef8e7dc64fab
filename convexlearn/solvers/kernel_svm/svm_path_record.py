"""The exact C-path's breakpoints as they are found (:mod:`.svm_path`).

A path at n = 2000 has thousands of breakpoints, each an n-vector of multipliers: tens of
MB whose first touch (the kernel's page faults) costs more than copying them. The rows are
written straight into one buffer that grows by ``ndarray.resize`` (``realloc``: a large
block is remapped, not copied; numpy zero-fills the new rows, so each page is faulted in
once), not kept as a list of arrays stacked at the end (every page faulted in twice, and
the copy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Breakpoints"]


class Breakpoints:
    """The breakpoints (C, alpha = a / lambda, b = a_0 / lambda, event, bounds) so far."""

    def __init__(self, n: int, cap: int = 256):
        self._alphas = np.empty((cap, n))
        self.k = 0
        self.Cs: list[float] = []
        self.intercepts: list[float] = []
        self.events: list[str] = []
        self.bounds: list[Any] = []

    def add(self, lam: float, a: np.ndarray, a0: float, event: str, bounds: Any) -> None:
        """Record the breakpoint at lambda of the fractions (a, a_0), its event and its
        bounded KKT figures ``bounds`` (svm_path_bound.bounded_kkt's)."""
        if self.k == self._alphas.shape[0]:
            # (no view of the buffer is kept: it may move)
            self._alphas.resize((2 * self.k, self._alphas.shape[1]), refcheck=False)
        np.divide(a, lam, out=self._alphas[self.k])
        self.k += 1
        self.Cs.append(1.0 / lam)
        self.intercepts.append(a0 / lam)
        self.events.append(event)
        self.bounds.append(bounds)

    def free_rows(self) -> np.ndarray:
        """The buffer's rows after the last breakpoint (at least one; a view, for
        :meth:`written`), the buffer grown first when it is full."""
        if self.k == self._alphas.shape[0]:
            self._alphas.resize((2 * self.k, self._alphas.shape[1]), refcheck=False)
        return self._alphas[self.k:]

    def written(self, rows: int, Cs: list, intercepts: list, events: list, bounds: list
                ) -> None:
        """``rows`` breakpoints whose alpha rows were written into :meth:`free_rows`."""
        self.k += rows
        self.Cs.extend(Cs)
        self.intercepts.extend(intercepts)
        self.events.extend(events)
        self.bounds.extend(bounds)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], np.ndarray]:
        """(Cs, alphas, intercepts, events, bounds); the buffer trimmed in place (the
        recorder is spent)."""
        self._alphas.resize((self.k, self._alphas.shape[1]), refcheck=False)
        return (np.array(self.Cs), self._alphas, np.array(self.intercepts), self.events,
                np.array(self.bounds))
