"""The shape of a problem file: typed keys, validation with line numbers, the loaded problem.

:class:`Key` declares one key of a TOML table (type, default, meaning); :func:`validate`
checks a table against a dict of keys and fills the defaults; :class:`FileContext` turns a
dotted key into "file, line N" for error messages. :class:`Dataset` and :class:`Problem`
are what :mod:`convexlearn.app.catalogue` loads and the adapters
(:mod:`convexlearn.app.adapters`) solve. This module imports neither of them, so the
adapters (which declare their keys here) and the catalogue (which looks the adapters up)
depend on it and not on each other.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..deprecation import renamed
from ..errors import ConvexLearnError, ProblemFileError

__all__ = ["Key", "Dataset", "Problem", "FileContext", "validate", "read_toml", "is_number",
           "looks_like_csv", "CSV_NOT_TOML"]

_REQUIRED = object()


@dataclass(frozen=True)
class Key:
    """One key of a problem-file table: its type (see ``_TYPES``), default, meaning and
    an optional ``check`` of its value (the library's own validator, so that a bad value
    is reported with the file and line of its key, before any data are read)."""

    type: str
    default: Any = _REQUIRED
    doc: str = ""
    check: Any = None            # value -> None, raising ConvexLearnError for a bad value

    @property
    def required(self) -> bool:
        """True when the key has no default: the table must give it."""
        return self.default is _REQUIRED


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_label(v) -> bool:
    return isinstance(v, str) or is_number(v)


_TYPES = {
    "number": is_number,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "boolean or string": lambda v: isinstance(v, (bool, str)),
    "number or string": lambda v: is_number(v) or isinstance(v, str),
    "list of strings": lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v),
    "list of numbers": lambda v: isinstance(v, list) and all(map(is_number, v)),
    "list of labels": lambda v: isinstance(v, list) and all(map(_is_label, v)),
    "list of lists of numbers": lambda v: isinstance(v, list) and all(
        isinstance(r, list) and all(map(is_number, r)) for r in v),
    "table": lambda v: isinstance(v, dict),
    "table of numbers": lambda v: isinstance(v, dict) and all(map(is_number, v.values())),
}

@dataclass
class Dataset:
    """The samples of a problem, after selection, standardization and feature map.

    ``y`` holds the original labels (classification), real targets (regression) or is
    None (point sets). ``sha256`` is a checksum of X and y as solved (see the property);
    ``source_sha256`` of the CSV file's bytes.
    """

    X: np.ndarray
    y: np.ndarray | None
    feature_names: list[str]
    label: str | None = None
    classes: list | None = None
    source: str = ""
    source_sha256: str | None = None
    seed: int | None = None
    transforms: list[str] = field(default_factory=list)
    #: What ``convexlearn predict`` must redo on new data: the columns read, and the
    #: standardization (mean, std) and polynomial feature map applied to them.
    columns: list[str] | None = None
    scaling: tuple | None = None
    feature_map: dict | None = None

    @property
    def sha256(self) -> str:
        """SHA-256 hex digest of X's shape and float64 bytes, then of y: its float64 bytes, or
        its labels joined by newlines when not numeric (nothing when y is None).
        """
        h = hashlib.sha256(repr(self.X.shape).encode())
        h.update(np.ascontiguousarray(self.X, dtype="<f8").tobytes())
        if self.y is not None:
            if self.y.dtype.kind in "biuf":
                h.update(np.ascontiguousarray(self.y, dtype="<f8").tobytes())
            else:
                h.update("\n".join(map(str, self.y)).encode())
        return h.hexdigest()


@dataclass
class Problem:
    """A validated problem file with its data loaded (see the module docstring)."""

    path: Path
    name: str
    description: str
    kind: str
    model: dict
    data: Dataset
    methods: list[str] | None
    tol: float
    solver: str | None
    solver_options: dict
    options: dict
    expect: dict


class FileContext:
    """The file being read: turns a dotted key into 'file, line N' for messages."""

    def __init__(self, path: Path, text: str):
        self.path, self.lines = path, text.splitlines()

    def line_of(self, dotted: str) -> int | None:
        *section, key = dotted.split(".")
        header, pattern = None, re.compile(rf'^\s*"?{re.escape(key)}"?\s*=')
        for number, line in enumerate(self.lines, start=1):
            stripped = line.strip()
            if stripped.startswith("["):
                header = stripped.strip("[] ").split("]")[0]
            elif pattern.match(line) and (header or "") == ".".join(section):
                return number
        return None

    def error(self, dotted: str | None, message: str) -> ProblemFileError:
        line = self.line_of(dotted) if dotted else None
        where = f"{self.path}, line {line}" if line else f"{self.path}"
        return ProblemFileError(f"{where}: {message}")


#: Deprecated key -> (its new name, old value -> new value); read for one release with a
#: DeprecationWarning naming the new key (the library's words: docs/conventions.md).
RENAMED_KEYS: dict[str, tuple[str, Any]] = {"homogeneous": ("intercept", lambda v: not v)}


def _renamed_keys(table: dict, schema: dict[str, Key], prefix: str, ctx: FileContext) -> dict:
    """``table`` with each deprecated key the schema knows under its new name replaced."""
    for old, (new, convert) in RENAMED_KEYS.items():
        if old in table and old not in schema and new in schema:
            table = dict(table)
            value = table.pop(old)
            if not _TYPES[schema[new].type](value):
                raise ctx.error(prefix + old, f"key {prefix + old!r} must be "
                                f"{_article(schema[new].type)}; got {type(value).__name__} "
                                f"{value!r}")
            if new in table:
                raise ctx.error(prefix + old, f"give {prefix + new!r} only ({prefix + old!r} is "
                                f"its deprecated name)")
            line = ctx.line_of(prefix + old)
            table[new] = renamed(f"{ctx.path}" + (f", line {line}" if line else ""),
                                 prefix + old, prefix + new, value, None, convert=convert,
                                 stacklevel=4)
    return table


def validate(table: dict, schema: dict[str, Key], where: str, ctx: FileContext) -> dict:
    """Check a TOML table against ``schema``; return it with defaults filled in.

    Raises ProblemFileError naming the key for an unknown key (listing the valid ones), a
    wrong type (naming the expected type) or a missing required key. A deprecated key
    (:data:`RENAMED_KEYS`) is read under its new name, with a DeprecationWarning.
    """
    prefix = f"{where}." if where else ""
    table = _renamed_keys(table, schema, prefix, ctx)
    for key, value in table.items():
        if key not in schema:
            raise ctx.error(prefix + key, f"unknown key {prefix + key!r}; valid keys in "
                            f"[{where or 'top level'}]: {', '.join(sorted(schema))}")
        spec = schema[key]
        if not _TYPES[spec.type](value):
            raise ctx.error(prefix + key, f"key {prefix + key!r} must be {_article(spec.type)}; "
                            f"got {type(value).__name__} {value!r}")
        if spec.check is not None:
            try:
                spec.check(value)
            except ConvexLearnError as exc:
                raise ctx.error(prefix + key, f"key {prefix + key!r}: {exc}") from None
    missing = [k for k, spec in schema.items() if spec.required and k not in table]
    if missing:
        raise ctx.error(None, f"missing required key(s) in [{where or 'top level'}]: "
                        f"{', '.join(prefix + k for k in missing)}")
    return {k: table.get(k, spec.default) for k, spec in schema.items()
            if k in table or not spec.required}


def _article(type_name: str) -> str:
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


#: What to do with a CSV file given where a problem file is expected.
CSV_NOT_TOML = ("this is a CSV data file, not a problem file (TOML). Solve it as it is: "
                "convexlearn solve {path} --label COL (an SVM: --C, --kernel, --gamma; "
                "regularized ERM: --loss, --penalty, --lam), or ask whether its classes are "
                "linearly separable: convexlearn separable {path} --label COL. Problem files "
                "are described in docs/problem_files.md")


def looks_like_csv(path: Path, text: str) -> bool:
    """A ``.csv``/``.tsv`` name, or a first line with a CSV delimiter and no '=' (no TOML
    assignment, no table header)."""
    if path.suffix.lower() in (".csv", ".tsv"):
        return True
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return "=" not in first and not first.startswith(("[", "#")) and \
        any(c in first for c in ",;\t")


def read_toml(path: Path) -> tuple[dict, FileContext]:
    """Parse a TOML file; a syntax error names the file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProblemFileError(f"{path}: no such problem file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemFileError(f"{path}: cannot read the problem file: {exc}") from None
    try:
        return tomllib.loads(text), FileContext(path, text)
    except tomllib.TOMLDecodeError as exc:
        if looks_like_csv(path, text):
            raise ProblemFileError(f"{path}: {CSV_NOT_TOML.format(path=path)}") from None
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        message = re.sub(r"\s*\(at .*\)$", "", str(exc))
        where = f"line {found.group(1)}, column {found.group(2)}" if found else "end of file"
        raise ProblemFileError(f"{path}, {where}: TOML syntax error: {message}") from None
