"""The result of a regularization path: one certified Solution per parameter value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .solution import Solution

__all__ = ["Path"]


@dataclass
class Path:
    """Solutions along a path of regularization values, in the order asked for.

    Attributes
    ----------
    parameter : str
        The name of the value that varies ("lam" for ERM, "C" for the SVM).
    values : ndarray
        The values, in the order solved (each solution also records its own).
    solutions : list of Solution
        One per value; each carries its certificate (``report``) and status.
    time_s : float
        Wall-clock time of the whole path.
    provenance : dict
        How the path was computed (warm starts, screening, routes used).
    interpolate : callable, optional
        For an exact piecewise-linear path (``path(..., exact=True)``), whose ``values``
        are its breakpoints: ``interpolate(value) -> Solution`` gives the solution at any
        value between two breakpoints, exactly (see :meth:`at`).
    """

    parameter: str
    values: np.ndarray
    solutions: list[Solution]
    time_s: float = 0.0
    provenance: dict = field(default_factory=dict)
    interpolate: Callable[[float], Solution] | None = field(default=None, repr=False)

    @property
    def exact(self) -> bool:
        """True for an exact piecewise-linear path: ``values`` are its breakpoints."""
        return self.interpolate is not None

    def at(self, value: float) -> Solution:
        """The solution at ``value``: between two breakpoints of an exact path, the linear
        interpolation of the solutions at its ends (exact: the path is linear there);
        on any path, the solution at a value it holds."""
        if self.interpolate is not None:
            return self.interpolate(float(value))
        hits = np.flatnonzero(self.values == value)
        if hits.size == 0:
            raise ValueError(f"{self.parameter}={value!r} is not on this path; an exact path "
                             f"(exact=True) interpolates between its breakpoints")
        return self.solutions[int(hits[0])]

    @property
    def certified(self) -> bool:
        """True when every point's status is "optimal" (its certificate passed)."""
        return all(sol.status == "optimal" for sol in self.solutions)

    @property
    def objectives(self) -> np.ndarray:
        """The objective of each point."""
        return np.array([sol.objective for sol in self.solutions])

    @property
    def coefs(self) -> np.ndarray:
        """The weight vectors as rows (len(values), d); only where every point has a w."""
        return np.vstack([sol.w for sol in self.solutions])

    def __len__(self) -> int:
        return len(self.solutions)

    def __iter__(self):
        return iter(self.solutions)

    def __getitem__(self, i) -> Solution:
        return self.solutions[i]

    def __repr__(self) -> str:
        n_ok = sum(sol.status == "optimal" for sol in self.solutions)
        span = (f"{self.values.min():g} .. {self.values.max():g}" if len(self.values)
                else "empty")
        kind = "breakpoints" if self.exact else "values"
        return (f"Path({len(self.solutions)} {kind} of {self.parameter} in {span}, "
                f"{n_ok}/{len(self.solutions)} certified, time_s={self.time_s:.3g})")
