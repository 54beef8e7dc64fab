"""Problem fingerprints: which data and parameters a solution answers.

A problem hashes its arrays once (:func:`data_digest`) and, with its model parameters,
records :func:`problem_fingerprint` in ``solution.provenance["fingerprint"]``; a solution
recorded for another problem is then refused (``solution.check_same_problem``).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

__all__ = ["data_digest", "problem_fingerprint"]


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
