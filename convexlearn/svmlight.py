"""Reading data in the svmlight / LIBSVM format, kept sparse.

One sample per line::

    <label> [qid:<int>] <index>:<value> <index>:<value> ...   [# comment]

``index`` counts features from 1 (LIBSVM's convention); a file in which some index is 0
counts them from 0 (scikit-learn's ``zero_based="auto"`` rule). Indices must increase
along a line; features not listed are 0. Lines that are blank or start with ``#`` are
skipped, a ``#`` ends a line's data. The label is a number (a regression target, or a
class: any two distinct numbers are accepted, mapped by sorting as everywhere in
convexlearn); ``qid`` is read and kept (``SvmlightData.qid``) but does not enter X.

X comes back as a ``scipy.sparse.csr_matrix`` of float64: the format exists for sparse
data, and a problem class keeps it sparse where its methods allow (see
docs/input_kinds.md). Every error is a :class:`~convexlearn.errors.DataError` naming the
file and the line (lines count from 1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError

__all__ = ["SvmlightData", "read_svmlight", "looks_like_svmlight", "SVMLIGHT_SUFFIXES"]

#: File name endings read as svmlight without looking at the content.
SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm", ".scale")

#: The largest feature index accepted (a CSR matrix of more columns is a typo, not data).
MAX_FEATURES = 1 << 31

_PAIR = re.compile(r"^(\d+):(\S+)$")


@dataclass
class SvmlightData:
    """Samples read from an svmlight file.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n, d)
    y : ndarray of shape (n,)
        The labels (or targets) as floats.
    qid : ndarray of int or None
        Query ids, when the file has them.
    zero_based : bool
        Whether the file counts features from 0.
    path : Path
    """

    X: Any
    y: np.ndarray
    qid: np.ndarray | None
    zero_based: bool
    path: Path

    @property
    def shape(self) -> tuple[int, int]:
        """(n, d) of X."""
        return self.X.shape


def _number(text: str, path, line: int, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{path}, line {line}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{path}, line {line}: {what} is {text!r} (not finite)")
    return value


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: no such data file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a text file (byte {exc.start} is not UTF-8)") from None


def read_svmlight(path: Any, n_features: int | None = None) -> SvmlightData:
    """Read an svmlight / LIBSVM data file.

    Parameters
    ----------
    path : str or Path
    n_features : int, optional
        Number of columns of X (default: the largest index found). A file that uses a
        larger index is refused.

    Returns
    -------
    SvmlightData

    Raises
    ------
    DataError
        Missing or unreadable file, no sample, a label or value that is not a finite
        number, a malformed ``index:value`` pair, indices that do not increase, an index
        beyond ``n_features``; the message names the file and line.
    """
    from scipy import sparse

    path = Path(path)
    text = read_text(path)
    labels: list[float] = []
    qids: list[int] = []
    indptr, indices, values, lines = [0], [], [], []
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        body = raw.split("#", 1)[0].split()
        if not body:
            continue
        if "," in body[0]:
            raise DataError(f"{path}, line {number}: label {body[0]!r} lists several labels "
                            f"(multilabel data): one label per sample is needed")
        labels.append(_number(body[0], path, number, "label"))
        lines.append(number)
        tokens = body[1:]
        if tokens and tokens[0].startswith("qid:"):
            try:
                qids.append(int(tokens[0][4:]))
            except ValueError:
                raise DataError(f"{path}, line {number}: {tokens[0]!r} is not qid:<integer>") \
                    from None
            tokens = tokens[1:]
        previous = -1
        for token in tokens:
            match = _PAIR.match(token)
            if match is None:
                raise DataError(f"{path}, line {number}: {token!r} is not index:value")
            index = int(match.group(1))
            if index <= previous:
                raise DataError(f"{path}, line {number}: feature index {index} after "
                                f"{previous}: indices must increase along a line")
            if index > MAX_FEATURES:
                raise DataError(f"{path}, line {number}: feature index {index} is beyond "
                                f"{MAX_FEATURES}")
            previous = index
            indices.append(index)
            values.append(_number(match.group(2), path, number, f"feature {index}'s value"))
        indptr.append(len(indices))
    if not labels:
        raise DataError(f"{path}: no sample (every line is blank or a comment)")
    if qids and len(qids) != len(labels):
        raise DataError(f"{path}: {len(qids)} of {len(labels)} samples have a qid: all or none")
    idx = np.asarray(indices, dtype=np.int64)
    zero_based = bool(idx.size) and int(idx.min()) == 0
    if not zero_based:
        idx -= 1
    found = int(idx.max()) + 1 if idx.size else 0
    d = found if n_features is None else int(n_features)
    if found > d:
        row = int(np.searchsorted(np.asarray(indptr), int(np.argmax(idx)), side="right")) - 1
        raise DataError(f"{path}, line {lines[row]}: feature index "
                        f"{int(idx.max()) + (0 if zero_based else 1)} is beyond the "
                        f"{d} features expected")
    X = sparse.csr_matrix((np.asarray(values, dtype=float), idx, np.asarray(indptr)),
                          shape=(len(labels), d))
    return SvmlightData(X=X, y=np.asarray(labels, dtype=float),
                        qid=np.asarray(qids) if qids else None, zero_based=zero_based,
                        path=path)


def looks_like_svmlight(path: Any) -> bool:
    """True for a file in svmlight format: its name ends in one of
    :data:`SVMLIGHT_SUFFIXES`, or its first line that is not blank or a comment reads
    ``<number> [qid:q] [i:v ...]`` (a CSV file starts with a header of names)."""
    path = Path(path)
    if path.suffix.lower() in SVMLIGHT_SUFFIXES:
        return True
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            for _, line in zip(range(1000), fh):
                body = line.split("#", 1)[0].split()
                if not body:
                    continue
                try:
                    float(body[0])
                except ValueError:
                    return False
                return all(_PAIR.match(t) or t.startswith("qid:") for t in body[1:]) \
                    and (len(body) > 1 or "," not in line)
    except OSError:
        return False
    return False
