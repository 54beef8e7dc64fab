"""Reading CSV data files: numpy's parser first, cell-by-cell diagnostics when it fails.

:class:`CsvFile` reads a file with a header line. The structure (the same number of cells
on every line, no blank line in the middle, no duplicated column name) is checked for
every file; the cells are then parsed by ``numpy.loadtxt`` (the fast path, about the
speed of numpy itself). Only when numpy refuses a column, or a value is NaN or infinite,
is that column read again cell by cell, so that the error names the file, the line (the
header is line 1) and the column of the first bad cell. A file with a quote character
(a quoted cell may hold the delimiter or a line break) is read by the :mod:`csv` module
instead, and its cells parsed the same way.

Every error is a :class:`~convexlearn.errors.ProblemFileError` naming the file.
"""

from __future__ import annotations

from typing import Any

import csv
import hashlib
import math
from pathlib import Path

import numpy as np

from ..errors import ProblemFileError

__all__ = ["CsvFile", "read_csv", "numeric_column", "label_column", "check_delimiter"]


def check_delimiter(delimiter: Any) -> str:
    """The delimiter if it is one character other than a quote, a line break or a
    character of a number; ProblemFileError otherwise."""
    if not isinstance(delimiter, str) or len(delimiter) != 1 or \
            delimiter in '"\r\n' or delimiter in "0123456789.+-eE":
        raise ProblemFileError(f"the CSV delimiter must be one character other than a quote, "
                               f"a line break, a digit, '.', '+', '-' or 'e'; got {delimiter!r}")
    return delimiter


def _split_lines(text: str) -> list[str]:
    # The csv module's line ends (\n, \r\n, \r), not str.splitlines' (which also splits
    # on \x0b, \x1c, \u2028, ...): both paths must number lines alike.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class CsvFile:
    """A CSV file with a header line, checked for its structure on opening.

    Attributes
    ----------
    path : Path
    header : list of str
        Column names, stripped of surrounding blanks (and of a UTF-8 byte-order mark).
    n_rows : int
        Data rows (trailing blank lines are ignored).
    sha256 : str
        SHA-256 of the file's bytes.

    Raises
    ------
    ProblemFileError
        Missing or unreadable file, fewer than two lines, a duplicated column name, or a
        line whose number of cells differs from the header's (named by its line number).
    """

    def __init__(self, path: Any, delimiter: str = ","):
        self.path = Path(path)
        self.delimiter = check_delimiter(delimiter)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raise ProblemFileError(f"{self.path}: no such data file") from None
        except OSError as exc:
            raise ProblemFileError(f"{self.path}: cannot read the CSV file: {exc}") from None
        self.sha256 = hashlib.sha256(raw).hexdigest()
        try:
            # utf-8-sig: a byte-order mark (Excel, Notepad) must not become part of the
            # first column's name.
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ProblemFileError(f"{self.path}: cannot read the CSV file: {exc}") from None
        if "\x00" in text:
            raise ProblemFileError(f"{self.path}: cannot read the CSV file: it contains NUL "
                                   f"bytes (a binary file?)")
        if '"' in text:
            self._rows = self._parse_quoted(text)
            self._lines = None
            cells = self._rows
        else:
            lines = _split_lines(text)
            while lines and not lines[-1].strip():
                lines.pop()                           # trailing blank lines
            self._lines = lines
            self._rows = None
            cells = None
        first = (cells[0] if cells is not None else
                 (self._lines[0].split(self.delimiter) if self._lines else []))
        n_lines = len(cells) if cells is not None else len(self._lines)
        if n_lines < 2:
            raise ProblemFileError(f"{self.path}: needs a header line and at least one data row")
        self.header = [name.strip() for name in first]
        if len(self.header) == 1:
            self._check_one_column(self.header[0])
        duplicated = sorted({h for h in self.header if self.header.count(h) > 1})
        if duplicated:
            raise ProblemFileError(f"{self.path}, line 1: duplicated column name(s) "
                                   f"{duplicated}")
        self.n_rows = n_lines - 1
        self._check_ragged()

    def _check_one_column(self, header: str) -> None:
        """A header that is one column with this delimiter but holds another one (',',
        ';', tab, '|') almost surely names the wrong delimiter: say which one it uses."""
        counts = {c: header.count(c) for c in (",", ";", "\t", "|") if c != self.delimiter}
        guess = max(counts, key=counts.get)
        if counts[guess]:
            flag, toml = ("tab", '"\\t"') if guess == "\t" else (f"'{guess}'", f'"{guess}"')
            raise ProblemFileError(
                f"{self.path}, line 1: with the delimiter {self.delimiter!r} the header is one "
                f"column ({header[:60]!r}); the header seems to use {guess!r}: pass "
                f"--delimiter {flag} (in a problem file's [data]: delimiter = {toml})")

    def _parse_quoted(self, text: str) -> list[list[str]]:
        import io
        try:
            rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter))
        except csv.Error as exc:
            raise ProblemFileError(f"{self.path}: cannot read the CSV file: {exc}") from None
        while rows and not any(cell.strip() for cell in rows[-1]):
            rows.pop()
        return rows

    def _count(self, i: int) -> int:
        """Cells on data row ``i`` (0-based), 0 for a blank line (as the csv module)."""
        if self._rows is not None:
            return len(self._rows[i + 1])
        line = self._lines[i + 1]
        return line.count(self.delimiter) + 1 if line else 0

    def _check_ragged(self) -> None:
        m = len(self.header)
        if self._lines is not None:
            sep = self.delimiter
            counts = [line.count(sep) + 1 if line else 0 for line in self._lines[1:]]
        else:
            counts = [len(row) for row in self._rows[1:]]
        if any(c != m for c in counts):
            i = next(i for i, c in enumerate(counts) if c != m)
            raise ProblemFileError(f"{self.path}, line {i + 2}: {counts[i]} cells, but the "
                                   f"header has {m} columns")

    # --------------------------------------------------------------------- columns
    def index(self, name: str) -> int:
        """Position of column ``name`` (KeyError when absent)."""
        return self.header.index(name)

    def cells(self, name: str) -> list[str]:
        """The cells of one column as stripped strings (the slow path)."""
        j = self.index(name)
        if self._rows is not None:
            return [row[j].strip() for row in self._rows[1:]]
        sep = self.delimiter
        return [line.split(sep)[j].strip() for line in self._lines[1:]]

    def _lines_of_rows(self) -> np.ndarray:
        return np.arange(2, self.n_rows + 2)

    def numeric(self, names: list[str]) -> np.ndarray:
        """The columns ``names`` as an (n_rows, len(names)) float array.

        numpy parses them; when it refuses, or finds NaN or inf, the column of the first
        bad cell is read cell by cell and its error (line and column) raised.
        """
        X = self._numeric_fast(names)
        return X if X is not None else self._numeric_slow(names)

    def _numeric_fast(self, names: list[str]) -> np.ndarray | None:
        """numpy's parse of the columns; None when it fails or finds NaN or inf."""
        if self._lines is None:
            return None
        cols = [self.index(name) for name in names]
        try:
            # From the file itself: numpy's own reader, faster than from the lines (the
            # structure was checked on opening; blank lines can only trail, and numpy
            # skips them; the shape test below catches any other difference).
            X = np.loadtxt(self.path, delimiter=self.delimiter, usecols=cols, skiprows=1,
                           dtype=float, comments=None, quotechar=None, ndmin=2,
                           encoding="utf-8-sig")
        except (ValueError, OSError, UnicodeDecodeError):
            return None
        if X.shape != (self.n_rows, len(cols)) or not np.isfinite(X).all():
            return None
        return X

    def features_and_labels(self, features: list[str], label: str) -> Any:
        """``(numeric(features), labels(label))`` in one pass of numpy's parser when the
        labels are numbers too (two passes otherwise)."""
        Xy = self._numeric_fast(features + [label])
        if Xy is not None:
            return Xy[:, :-1], Xy[:, -1]
        return self.numeric(features), self.labels(label)

    def _numeric_slow(self, names: list[str]) -> np.ndarray:
        # Every column cell by cell, in order: the first bad cell of the leftmost bad
        # column is the one reported (the same cell whatever numpy stumbled on).
        lines = self._lines_of_rows()
        out = np.empty((self.n_rows, len(names)))
        for k, name in enumerate(names):
            out[:, k] = numeric_column(self.path, name, self.cells(name), lines)
        return out

    def labels(self, name: str) -> np.ndarray:
        """A label column: floats when every cell is a finite number, else the stripped
        strings (dtype object); a missing label ("" or "nan") is an error naming its line."""
        try:
            return self.numeric([name])[:, 0]
        except ProblemFileError:
            return label_column(self.path, name, self.cells(name), self._lines_of_rows())


def read_csv(path: Path, delimiter: str = ",") -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV file (stripped strings); ragged rows are an error naming
    the line. Reads cell by cell: use :class:`CsvFile` for numbers."""
    table = CsvFile(path, delimiter)
    columns = [table.cells(name) for name in table.header]
    return table.header, [list(row) for row in zip(*columns)]


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
