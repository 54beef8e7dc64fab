"""Plain JSON data for results, exactly: encoding, decoding and atomic files.

Results hold floats, numpy arrays and scalars, tuples and small dataclasses (reports,
checks). :func:`encode` turns them into strict JSON values and :func:`decode` turns those
back, so that ``encode(decode(encode(x))) == encode(x)`` and every float comes back bit
for bit:

=====================  ====================================================================
value                  JSON
=====================  ====================================================================
finite float           a number written with ``repr`` precision (the shortest string that
                       reads back as the same double)
NaN, +inf, -inf        ``{"__float__": "nan" | "inf" | "-inf"}``
numpy scalar           the Python int, float or bool it holds
ndarray                ``{"__ndarray__": nested lists, "dtype": "float64", "shape": [...]}``;
                       non-finite entries are the strings "nan", "inf", "-inf"
tuple                  ``{"__tuple__": [...]}``
dataclass instance     ``{"__record__": "ClassName", "fields": {...}}``, decoded as a
                       :class:`Record` (attribute access to the same fields)
anything else          ``{"__repr__": repr(value)}``, decoded as that string (lossy, and
                       the only lossy case)
=====================  ====================================================================

:func:`write_atomic` writes a file through a staged copy in the target's directory and
``os.replace``: a failed or killed write leaves the target as it was. The staged copy is an
unnamed file where Linux offers ``O_TMPFILE`` (a kill leaves nothing), else a temporary file
named ``.convexlearn-tmp-*`` (removed on any error; a kill can leave it, recognisable).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .errors import DataError
from .version import __version__

__all__ = ["encode", "decode", "float_list", "array_from_list", "Record", "StagedFile",
           "write_atomic", "write_json", "TMP_PREFIX", "FORMAT", "FORMAT_VERSION",
           "solution_record", "solution_fields", "read_solution_data"]

#: Prefix of every temporary file convexlearn writes (then renames into place).
TMP_PREFIX = ".convexlearn-tmp-"

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _float_text(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def float_list(values: Any) -> list:
    """An array as (nested) lists of Python numbers; NaN and +-inf as "nan", "inf", "-inf"."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        obj = arr.astype(object)
        bad = ~np.isfinite(arr)
        obj[bad] = [_float_text(v) for v in arr[bad]]
        return obj.tolist()
    return arr.tolist()


def array_from_list(data: Any, dtype: str = "float64") -> np.ndarray:
    """Inverse of :func:`float_list`: the strings "nan", "inf", "-inf" become floats."""
    if np.dtype(dtype).kind in "fc":
        return np.array(data, dtype=object).astype(dtype) if _has_text(data) \
            else np.array(data, dtype=dtype)
    return np.array(data, dtype=dtype)


def _has_text(data) -> bool:
    if isinstance(data, list):
        return any(_has_text(v) for v in data)
    return isinstance(data, str)


class Record:
    """A decoded dataclass: its fields as attributes, its class name in ``type``.

    A report saved with a solution (a KKTReport, an OptimalityReport) comes back as a
    Record with the same field names and values, so code that reads ``report.support``
    or ``report.distance`` works on a loaded solution as on a fresh one.
    """

    def __init__(self, type: str, fields: dict[str, Any]):
        self.type = type
        self.fields = dict(fields)

    def __getattr__(self, name: str):
        fields = self.__dict__.get("fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(f"{self.__dict__.get('type', 'Record')} record has no field "
                             f"{name!r}; fields: {', '.join(fields)}")

    def __eq__(self, other) -> bool:
        return isinstance(other, Record) and encode(self) == encode(other)

    def __repr__(self) -> str:
        names = ", ".join(list(self.fields)[:8]) + (", ..." if len(self.fields) > 8 else "")
        return f"Record({self.type}: {names})"


def encode(value: Any) -> Any:
    """``value`` as strict JSON data (see the module docstring for the table)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else {"__float__": _float_text(value)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            data = float_list(value)
        else:
            data = [encode(v) for v in value.ravel().tolist()]
        return {"__ndarray__": data, "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, Record):
        return {"__record__": value.type, "fields": encode(value.fields)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"__record__": type(value).__name__, "fields": encode(fields)}
    return {"__repr__": repr(value)}


def decode(data: Any) -> Any:
    """Inverse of :func:`encode` (dataclasses come back as :class:`Record`)."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__float__" in data and len(data) == 1:
        return _NONFINITE[data["__float__"]]
    if "__ndarray__" in data:
        dtype = data.get("dtype", "float64")
        if np.dtype(dtype).kind in "biuf":
            return array_from_list(data["__ndarray__"], dtype).reshape(data["shape"])
        out = np.empty(len(data["__ndarray__"]), dtype=dtype)
        out[:] = [decode(v) for v in data["__ndarray__"]]
        return out.reshape(data["shape"])
    if "__tuple__" in data and len(data) == 1:
        return tuple(decode(v) for v in data["__tuple__"])
    if "__record__" in data:
        return Record(data["__record__"], decode(data["fields"]))
    if "__repr__" in data and len(data) == 1:
        return data["__repr__"]
    return {k: decode(v) for k, v in data.items()}


class StagedFile:
    """The complete content of a file, written next to its target and not yet in place.

    Where the system allows (Linux ``O_TMPFILE``), the content lives in an unnamed file
    of the target's directory: a process killed before :meth:`commit` leaves nothing
    behind at all. Elsewhere it is a temporary file named ``.convexlearn-tmp-<name>-XXXX``.
    :meth:`commit` links it under such a name and renames it over the target (an atomic
    ``os.replace``); :meth:`discard` removes it.
    """

    def __init__(self, path: Any, write: Callable[[str], None] | str | bytes):
        self.path = Path(path)
        self.fd: int | None = None
        self.name: str | None = None
        directory = str(self.path.parent) or "."
        data = write.encode() if isinstance(write, str) else write
        if isinstance(data, bytes) and hasattr(os, "O_TMPFILE"):
            with contextlib.suppress(OSError):
                self.fd = os.open(directory, os.O_TMPFILE | os.O_RDWR, 0o666 & ~_umask())
        try:
            if self.fd is not None:
                _write_all(self.fd, data)
                os.fsync(self.fd)
                return
            fd, self.name = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{self.path.name}-",
                                             dir=directory)
            with os.fdopen(fd, "wb") as handle:
                if isinstance(data, bytes):
                    handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if callable(write):
                write(self.name)
            os.chmod(self.name, 0o666 & ~_umask())   # mkstemp makes 0600; as open() would
        except BaseException:
            self.discard()
            raise

    def commit(self) -> Path:
        """Put the content in place: a rename over the target; return the target."""
        try:
            if self.fd is not None:
                self.name = _name_unnamed(self.fd, self.path)
                os.close(self.fd)
                self.fd = None
            os.replace(self.name, self.path)
            self.name = None
        except BaseException:
            self.discard()
            raise
        return self.path

    def discard(self) -> None:
        """Remove the staged content (nothing happens to the target)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        if self.name is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.name)
            self.name = None


def _name_unnamed(fd: int, path: Path) -> str:
    """Give the unnamed (O_TMPFILE) file ``fd`` a temporary name next to ``path``.

    ``linkat(AT_SYMLINK_FOLLOW)`` of /proc/self/fd/N (os.link does not follow that magic
    link); where that fails, a named temporary copy of the content.
    """
    import ctypes
    directory = str(path.parent) or "."
    for _ in range(100):
        name = os.path.join(directory, f"{TMP_PREFIX}{path.name}-{os.urandom(6).hex()}")
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.linkat(-100, f"/proc/self/fd/{fd}".encode(), -100,   # AT_FDCWD
                           os.fsencode(name), 0x400) == 0:               # AT_SYMLINK_FOLLOW
                return name
            err = ctypes.get_errno()
        except (OSError, AttributeError):
            err = None
        if err != 17:                                                    # EEXIST: retry
            break
    fd_copy, name = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{path.name}-", dir=directory)
    try:
        with os.fdopen(fd_copy, "wb") as handle:
            offset = 0
            while chunk := os.pread(fd, 1 << 20, offset):
                handle.write(chunk)
                offset += len(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(name, 0o666 & ~_umask())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
        raise
    return name


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_atomic(path: Any, write: Callable[[str], None] | str | bytes) -> Path:
    """Write ``path`` atomically (a :class:`StagedFile`, committed) and return it.

    ``write`` is the content (str is written as UTF-8) or a function that writes the file
    whose name it is given. On any error, or a KeyboardInterrupt, the staged content is
    removed and ``path`` is left as it was.

    Raises
    ------
    OSError
        The directory is missing or not writable, the disk is full, ...
    """
    return StagedFile(path, write).commit()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ saved solutions
#: The ``format`` field of a saved solution, and the version this release writes. A file
#: of a newer version is refused (with both versions named); older versions stay readable.
FORMAT = "convexlearn.solution"
FORMAT_VERSION = 1


def write_json(path: Any, data: Any) -> Path:
    """``data`` as indented strict JSON (NaN refused: encode it first), written atomically."""
    return write_atomic(path, json.dumps(data, indent=1, allow_nan=False) + "\n")


def solution_record(solution: Any) -> dict[str, Any]:
    """A :class:`~convexlearn.Solution` as strict JSON data, exactly.

    Fields: ``format`` ("convexlearn.solution"), ``format_version``; ``w``, ``alpha``,
    ``xi``, ``dual_coef`` as lists of floats (or null); ``support`` (indices, derived:
    see ``Solution.support``); ``b``, ``objective``, ``time_s``, ``status``, ``method``,
    ``n_iter``; ``history`` (columns); ``provenance``, ``report`` (the optimality
    report's fields as plain data) and ``extra``. Floats are written with repr
    precision, so every value reads back bit for bit; NaN and +-inf are encoded as
    described in the module docstring.
    """

    def vector(v):
        return None if v is None else float_list(np.asarray(v, dtype=float))

    support = solution.support
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "convexlearn": __version__,
        "method": solution.method, "status": solution.status,
        "objective": encode(solution.objective), "b": encode(solution.b),
        "w": vector(solution.w), "alpha": vector(solution.alpha), "xi": vector(solution.xi),
        "dual_coef": vector(solution.dual_coef),
        "support": None if support is None else support.tolist(),
        "n_iter": None if solution.n_iter is None else int(solution.n_iter),
        "time_s": encode(solution.time_s),
        "history": solution.history.to_dict(),
        "provenance": encode(solution.provenance),
        "report": encode(solution.report),
        "extra": encode(solution.extra),
    }


def solution_fields(data: Any) -> dict[str, Any]:
    """The keyword arguments of ``Solution(...)`` read back from :func:`solution_record`'s
    data (``history`` still as its columns).

    Raises
    ------
    DataError
        Not a saved solution, a newer format version, or a malformed field (named).
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise DataError(f"not a saved convexlearn solution: 'format' is {found!r}, "
                        f"expected {FORMAT!r}")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DataError(f"'format_version' must be a positive integer; got {version!r}")
    if version > FORMAT_VERSION:
        raise DataError(f"this solution was saved in format version {version}, newer than "
                        f"this convexlearn reads ({FORMAT_VERSION}): upgrade convexlearn")
    try:
        def vector(key):
            v = data.get(key)
            return None if v is None else array_from_list(v)

        return dict(w=vector("w"), b=decode(data["b"]), alpha=vector("alpha"),
                    xi=vector("xi"), objective=decode(data["objective"]),
                    status=data["status"], method=data["method"], n_iter=data.get("n_iter"),
                    history=data.get("history") or {},
                    time_s=decode(data.get("time_s", 0.0)),
                    provenance=decode(data.get("provenance") or {}),
                    dual_coef=vector("dual_coef"), report=decode(data.get("report")),
                    extra=decode(data.get("extra") or {}))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise DataError(f"malformed saved solution: {what}") from None


def read_solution_data(path: Any, method: str | None = None) -> Any:
    """The JSON data of a saved solution, or of one solution of a ``convexlearn solve
    --json`` run record (``method``; by default the run's exact reference).

    Raises
    ------
    DataError
        No such file, not JSON, or a run without that method (the message names the file).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not JSON: {exc}") from None
    if isinstance(data, dict) and data.get("format") == "convexlearn.run":
        solutions = data.get("solutions") or {}
        method = data.get("reference") if method is None else method
        if method not in solutions:
            raise DataError(f"{path}: the run has no solution of method {method!r}; it has "
                            f"{', '.join(solutions) or 'none'}")
        data = solutions[method]
    return data
