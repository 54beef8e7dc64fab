"""Reading CSV data files cell by cell, so that every error names the line and the column.

The header is line 1; a missing, NaN, infinite or non-numeric cell, a ragged row, or a
duplicated column name raises :class:`~convexlearn.errors.ProblemFileError` naming the
file, the line and the column.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from ..errors import ProblemFileError

__all__ = ["read_csv", "numeric_column", "label_column"]


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV file (strings); ragged rows are an error naming the line."""
    try:
        # utf-8-sig: a byte-order mark (Excel, Notepad) must not become part of the
        # first column's name.
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        raise ProblemFileError(f"{path}: no such data file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ProblemFileError(f"{path}: cannot read the CSV file: {exc}") from None
    while rows and not any(cell.strip() for cell in rows[-1]):
        rows.pop()                                   # trailing blank lines
    if len(rows) < 2:
        raise ProblemFileError(f"{path}: needs a header line and at least one data row")
    header = [name.strip() for name in rows[0]]
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise ProblemFileError(f"{path}, line 1: duplicated column name(s) {duplicated}")
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ProblemFileError(f"{path}, line {line}: {len(row)} cells, but the header "
                                   f"has {len(header)} columns")
    return header, [[cell.strip() for cell in row] for row in rows[1:]]


def numeric_column(path: Path, name: str, cells: list[str], lines: np.ndarray) -> np.ndarray:
    """Parse one column as floats; a missing, NaN, infinite or non-numeric cell is an error
    naming its line (the header is line 1) and column."""
    out = np.empty(len(cells))
    for i, cell in enumerate(cells):
        where = f"{path}, line {lines[i]}, column {name!r}"
        if cell == "":
            raise ProblemFileError(f"{where}: missing value")
        try:
            value = float(cell)
        except ValueError:
            raise ProblemFileError(f"{where}: non-numeric value {cell!r}") from None
        if math.isnan(value):
            raise ProblemFileError(f"{where}: missing value ({cell!r})")
        if math.isinf(value):
            raise ProblemFileError(f"{where}: infinite value ({cell!r})")
        out[i] = value
    return out


def label_column(path: Path, name: str, cells: list[str], lines: np.ndarray) -> np.ndarray:
    """A label column: numbers when every cell is one, else strings."""
    try:
        return numeric_column(path, name, cells, lines)
    except ProblemFileError:
        for i, cell in enumerate(cells):
            if cell == "" or cell.lower() == "nan":
                raise ProblemFileError(f"{path}, line {lines[i]}, column {name!r}: "
                                       f"missing label") from None
        return np.asarray(cells, dtype=object)
