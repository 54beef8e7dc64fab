"""The exact C-path's breakpoints as they are found, and the path they make (:mod:`.svm_path`).

A path at n = 2000 has thousands of breakpoints, each an n-vector of multipliers: tens of
MB. The rows are written straight into fixed chunks of :data:`CHUNK` rows that are never
copied nor grown (:class:`AlphaRows`): a buffer grown by ``ndarray.resize`` zero-fills
each new half before the rows are written (n = 2000, 1262 breakpoints: 0.019 s CPU of a
0.16 s path; the same rows written into chunks, 0.002 s), and one reserved up front for
the most breakpoints may touch pages the path never uses. The breakpoints' certificates and
:meth:`SVMPath.at` read the rows from the chunks; the dense (k, n) array
:attr:`SVMPath.alphas` is formed once, when it is first read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["AlphaRows", "Breakpoints", "CHUNK", "SVMPath"]

#: Rows of multipliers a chunk of the record holds.
CHUNK = 256


class AlphaRows:
    """k rows of n multipliers held in chunks of ``size`` rows (the last one partly
    filled): row i is ``chunks[i // size][i % size]``."""

    def __init__(self, chunks: list, k: int, n: int, size: int):
        self.chunks, self.k, self.n, self.size = chunks, k, n, size
        self._dense: np.ndarray | None = None

    @classmethod
    def from_array(cls, alphas: Any) -> "AlphaRows":
        """The rows of a (k, n) array (one chunk, not copied)."""
        alphas = np.asarray(alphas, dtype=float)
        rows = cls([alphas], alphas.shape[0], alphas.shape[1], max(alphas.shape[0], 1))
        rows._dense = alphas
        return rows

    def row(self, i: int) -> np.ndarray:
        """Row i (a view of its chunk)."""
        if not -self.k <= i < self.k:
            raise IndexError(f"breakpoint {i} of {self.k}")
        i %= self.k
        return self.chunks[i // self.size][i % self.size]

    def take(self, ks: Any) -> np.ndarray:
        """The rows ``ks`` (indices in [-k, k), negative ones from the end), as a new
        (len(ks), n) array."""
        ks = np.asarray(ks, dtype=np.int64).ravel()
        if ks.size and not (-self.k <= ks.min() and ks.max() < self.k):
            raise IndexError(f"breakpoints {ks.min()}..{ks.max()} of {self.k}")
        ks = ks % max(self.k, 1)          # (a chunk's rows past k were never written)
        out = np.empty((ks.size, self.n))
        which = ks // self.size
        for c in np.unique(which).tolist():
            sel = which == c
            out[sel] = self.chunks[c][ks[sel] - c * self.size]
        return out

    def dense(self) -> np.ndarray:
        """All rows as one (k, n) array: formed on the first call (a view where they fit
        in one chunk), the same array after. The chunks then become views of it, so that
        the rows are held once and :meth:`row` and :meth:`take` see what is written into
        it."""
        if self._dense is None:
            full, rest = divmod(self.k, self.size)
            parts = self.chunks[:full] + ([self.chunks[full][:rest]] if rest else [])
            self._dense = (parts[0] if len(parts) == 1 else
                           np.concatenate(parts) if parts else np.empty((0, self.n)))
            self.chunks = [self._dense[c:c + self.size]
                           for c in range(0, self.k, self.size)]
        return self._dense


class Breakpoints:
    """The breakpoints (C, alpha = a / lambda, b = a_0 / lambda, event, bounds) so far."""

    def __init__(self, n: int):
        self.n = n
        self._chunks: list[np.ndarray] = []
        self.k = 0
        self.Cs: list[float] = []
        self.intercepts: list[float] = []
        self.events: list[str] = []
        self.bounds: list[Any] = []

    def add(self, lam: float, a: np.ndarray, a0: float, event: str, bounds: Any) -> None:
        """Record the breakpoint at lambda of the fractions (a, a_0), its event and its
        bounded KKT figures ``bounds`` (svm_path_bound.bounded_kkt's)."""
        np.divide(a, lam, out=self.free_rows()[0])
        self.k += 1
        self.Cs.append(1.0 / lam)
        self.intercepts.append(a0 / lam)
        self.events.append(event)
        self.bounds.append(bounds)

    def last(self) -> tuple[float, np.ndarray, float]:
        """The last breakpoint as the path's variables (lambda, a, a_0) = (1 / C, alpha
        lambda, b lambda) (a new array)."""
        i = self.k - 1
        lam = 1.0 / self.Cs[i]
        return lam, self._chunks[i // CHUNK][i % CHUNK] * lam, self.intercepts[i] * lam

    def free_rows(self) -> np.ndarray:
        """The current chunk's rows after the last breakpoint (at least one: a new chunk
        where it is full; a view, for :meth:`written`)."""
        if self.k == CHUNK * len(self._chunks):
            self._chunks.append(np.empty((CHUNK, self.n)))
        return self._chunks[-1][self.k - CHUNK * (len(self._chunks) - 1):]

    def written(self, rows: int, Cs: list, intercepts: list, events: list, bounds: list
                ) -> None:
        """``rows`` breakpoints whose alpha rows were written into :meth:`free_rows`."""
        self.k += rows
        self.Cs.extend(Cs)
        self.intercepts.extend(intercepts)
        self.events.extend(events)
        self.bounds.extend(bounds)

    def arrays(self) -> tuple[np.ndarray, AlphaRows, np.ndarray, list[str], np.ndarray]:
        """(Cs, alphas as :class:`AlphaRows`, intercepts, events, bounds)."""
        return (np.array(self.Cs), AlphaRows(self._chunks, self.k, self.n, CHUNK),
                np.array(self.intercepts), self.events, np.array(self.bounds))


@dataclass
class SVMPath:
    """Breakpoints of the SVM path in C (increasing) and exact interpolation.

    Attributes
    ----------
    Cs : ndarray of shape (k,)
    alphas : ndarray of shape (k, n)
        The multipliers alpha (in [0, C]) at each breakpoint: formed from the record's
        chunks when first read (the same array after; the chunks then become its views,
        but the breakpoints' Solutions of :func:`convexlearn.routes.svm.exact_c_path` keep
        views of the old chunks, so that while they are held the rows are held twice);
        :meth:`alpha` and :meth:`at` read the chunks without it. Constructed from a (k, n)
        array too.
    intercepts : ndarray of shape (k,)
    events : list of str
    reanchored : int
        Degenerate breakpoints where the path was re-anchored on a certified solve.
    bounds : ndarray of shape (k, len(BOUND_FIELDS))
        Upper bounds of each breakpoint's KKT figures from the path's margins and their
        rounding bound (:func:`convexlearn.certify.path_kkt_bound.bounded_kkt`): they
        certify ``(alphas[k], intercepts[k])`` at ``Cs[k]`` when they pass.
    """

    Cs: np.ndarray
    alphas: np.ndarray
    intercepts: np.ndarray
    events: list[str]
    reanchored: int = 0
    notes: list[str] = field(default_factory=list)
    bounds: np.ndarray | None = None

    def __repr__(self) -> str:
        return (f"<SVMPath: {len(self.Cs)} breakpoints, C from {self.Cs[0]:.4g} to "
                f"{self.Cs[-1]:.4g}, {self.reanchored} re-anchored>")

    def alpha(self, k: int) -> np.ndarray:
        """The multipliers at breakpoint k (``alphas[k]``: a view of the record's row, the
        dense array not formed)."""
        return self._rows.row(k)

    def alpha_rows(self, ks: Any) -> np.ndarray:
        """``alphas[ks]`` for an array of breakpoint indices (a new array; the dense one
        not formed)."""
        return self._rows.take(ks)

    def at(self, C: float) -> tuple[np.ndarray, float]:
        """(alpha, b) at any C in [Cs[0], Cs[-1]]: a = alpha / C and a_0 = b / C are
        linear in 1/C between two breakpoints."""
        C = float(C)
        if not (self.Cs[0] * (1 - 1e-12) <= C <= self.Cs[-1] * (1 + 1e-12)):
            raise ValueError(f"C={C!r} is outside the computed path "
                             f"[{self.Cs[0]:.6g}, {self.Cs[-1]:.6g}]")
        k = int(np.clip(np.searchsorted(self.Cs, C), 1, len(self.Cs) - 1))
        if self.events[k] == "re-anchor" and not np.isclose(C, self.Cs[k], rtol=1e-12):
            raise ValueError(f"C={C:.6g} lies in a segment that ends in a re-anchor (a "
                             f"degenerate tie the path could not follow): it is not "
                             f"linear there; solve at C directly")
        lam, lam_lo, lam_hi = 1 / C, 1 / self.Cs[k - 1], 1 / self.Cs[k]
        t = 0.0 if lam_lo == lam_hi else (lam_lo - lam) / (lam_lo - lam_hi)
        a = (1 - t) * self.alpha(k - 1) / self.Cs[k - 1] + t * self.alpha(k) / self.Cs[k]
        a0 = (1 - t) * self.intercepts[k - 1] / self.Cs[k - 1] + t * self.intercepts[k] / self.Cs[k]
        return a * C, float(a0 * C)


def _get_alphas(path: SVMPath) -> np.ndarray:
    return path._rows.dense()


def _set_alphas(path: SVMPath, alphas: Any) -> None:
    path._rows = alphas if isinstance(alphas, AlphaRows) else AlphaRows.from_array(alphas)


# ``alphas`` stays a dataclass field (the generated __init__, eq and dataclasses.fields
# see it) whose value is formed on first read: the property is set after the decorator,
# which would otherwise take it for the field's default
SVMPath.alphas = property(_get_alphas, _set_alphas,   # type: ignore[assignment]
                          doc="The multipliers at each breakpoint, (k, n) (class docstring).")
