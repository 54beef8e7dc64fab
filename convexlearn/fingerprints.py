"""Problem fingerprints: which data and parameters a solution answers.

A problem hashes its arrays once (:func:`data_digest`) and, with its model parameters,
records :func:`problem_fingerprint` in ``solution.provenance["fingerprint"]``; a solution
recorded for another problem is then refused (``solution.check_same_problem``).

Hashing reads every byte of the data (about 0.1 s per 80 MB): a problem may record its
fingerprint as a :class:`Deferred` entry of a :class:`Provenance` instead, computed the first
time the entry is read (a comparison, a save, ``provenance["fingerprint"]``), from the same
arrays and the parameters captured at the solve (:class:`DataDigest` keeps the arrays until
then; the problem's data do not change after construction).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, ItemsView, ValuesView
from typing import Any
import json

import numpy as np

__all__ = ["DataDigest", "Deferred", "Provenance", "data_digest", "problem_fingerprint"]


def data_digest(*arrays) -> str:
    """sha256 of the arrays' shapes, dtypes and bytes (None counts as a marker): the data part
    of a problem's fingerprint, computed once per problem object (it reads every byte)."""
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"none;")
            continue
        if hasattr(a, "tocsr"):     # scipy.sparse: its arrays (an object array would hash
            a = a.tocsr()           # the pointer, different in every process)
            h.update(f"sparse{a.shape};".encode())
            for part in (a.data, a.indices, a.indptr):
                h.update(np.ascontiguousarray(part).view(np.uint8))
            continue
        a = np.ascontiguousarray(a)
        h.update(f"{a.shape}{a.dtype.str};".encode())
        # the array's own buffer, not a tobytes() copy (the same bytes, one pass fewer)
        h.update(a.tobytes() if a.dtype.hasobject else a.reshape(-1).view(np.uint8))
    return h.hexdigest()


def problem_fingerprint(digest: str, params: dict) -> str:
    """The fingerprint a problem records in ``solution.provenance["fingerprint"]``: sha256 of its
    data digest (:func:`data_digest`) and its model parameters (C, kernel, lam, ...)."""
    text = digest + json.dumps(params, sort_keys=True, default=repr)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class DataDigest:
    """:func:`data_digest` of ``arrays``, computed on the first call and kept (the arrays are
    then released)."""

    __slots__ = ("_arrays", "_value")

    def __init__(self, *arrays):
        self._arrays, self._value = arrays, None

    def __call__(self) -> str:
        if self._value is None:
            self._value, self._arrays = data_digest(*self._arrays), ()
        return self._value


class Deferred:
    """A :class:`Provenance` value computed by ``make()`` when first read."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]):
        self.make = make


class Provenance(dict):
    """A solution's provenance: a dict whose :class:`Deferred` values are computed when first
    read and then stored in their place. Reading one key (``[]``, ``get``, ``pop``) computes
    that value only; every whole-dict view (items, values, iteration, copies, comparison,
    repr, pickling, ``dict(p)``, ``{**p}``) computes them all first, so no Deferred ever
    leaves it. Testing a key (``in``, ``keys()``) computes nothing."""

    @classmethod
    def of(cls, provenance: dict, **entries) -> "Provenance":
        """``provenance`` (itself when a Provenance, else a copy) with ``entries`` set."""
        out = provenance if isinstance(provenance, cls) else cls(provenance)
        dict.update(out, entries)
        return out

    def _value(self, key):
        value = dict.__getitem__(self, key)
        if isinstance(value, Deferred):
            value = value.make()
            dict.__setitem__(self, key, value)
        return value

    def _resolve(self) -> "Provenance":
        for key, value in list(dict.items(self)):
            if isinstance(value, Deferred):
                self._value(key)
        return self

    def __getitem__(self, key):
        return self._value(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._value(key) if key in self else default

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            self._value(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return self._value(key) if key in self else dict.setdefault(self, key, default)

    # whole-dict views: every value computed first ({**p} and dict(p) go through
    # keys() and __getitem__ once __iter__ is overridden)
    def __iter__(self):
        return dict.__iter__(self._resolve())

    def items(self) -> ItemsView:
        return dict.items(self._resolve())

    def values(self) -> ValuesView:
        return dict.values(self._resolve())

    def popitem(self) -> tuple[Any, Any]:
        return dict.popitem(self._resolve())

    def copy(self) -> "Provenance":
        return Provenance(dict(self._resolve()))

    def __eq__(self, other):
        return dict.__eq__(self._resolve(), other)

    def __ne__(self, other):
        return dict.__ne__(self._resolve(), other)

    __hash__ = None

    def __or__(self, other):
        return dict.__or__(self._resolve(), other)

    def __ror__(self, other):
        return dict.__ror__(self._resolve(), other)

    def __repr__(self) -> str:
        return dict.__repr__(self._resolve())

    def __reduce__(self):
        return (Provenance, (dict(self._resolve()),))
