"""Output files of the command: checked before any work, written all or nothing.

* :func:`check_outputs` refuses (a :class:`UsageError`, exit 2) an output that is one of
  the inputs, or two outputs on one path; ``-`` (standard output) is allowed once.
* :func:`check_writable` refuses, before anything is solved, a path whose directory is
  missing, is a file, or cannot be written (probed by creating a temporary file there),
  and a path that is a directory.
* :func:`write_all_atomic` stages every output in full next to its target, and renames
  them into place only when all are complete (a failure or Ctrl-C leaves no new file).
"""

from __future__ import annotations

from typing import Any

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from ..errors import DataError, ParameterError
from ..serialize import TMP_PREFIX, StagedFile

__all__ = ["UsageError", "check_outputs", "check_writable", "write_all_atomic", "STDOUT"]

STDOUT = "-"


class UsageError(ParameterError):
    """The command line contradicts itself (an output on an input, two outputs on one path)."""


def _same(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs: dict[str, str | None], inputs: dict[str, str | Path]) -> None:
    """Refuse an output path that is an input, or two outputs with one path.

    ``outputs`` maps an option (``--json``) to its path or None; ``inputs`` maps a
    description (``problem file``) to a path. ``-`` is standard output: once at most.
    """
    given = [(opt, p) for opt, p in outputs.items() if p is not None]
    for i, (opt, p) in enumerate(given):
        for opt2, p2 in given[i + 1:]:
            if p == STDOUT and p2 == STDOUT:
                raise UsageError(f"{opt} and {opt2} both write to standard output ('-')")
            if STDOUT not in (p, p2) and _same(Path(p), Path(p2)):
                raise UsageError(f"{opt} {p} and {opt2} {p2} are the same file: give each "
                                 f"output its own path")
        if p == STDOUT:
            continue
        for what, q in inputs.items():
            if q is not None and _same(Path(p), Path(q)):
                raise UsageError(f"{opt} {p} is the {what}: writing it would destroy the "
                                 f"input; choose another path")


def check_writable(path: Any) -> Path:
    """Fail early (DataError, exit 2) when ``path`` cannot be written: it is a directory,
    a component of its directory is a file or missing, or the directory refuses a new
    file (read-only, no permission; probed with a temporary file, removed at once)."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise DataError(f"cannot write {path}: it is a directory")
    if not parent.is_dir():
        for ancestor in [parent, *parent.parents]:
            if ancestor.exists():
                if not ancestor.is_dir():
                    raise DataError(f"cannot write {path}: {ancestor} is a file, not a "
                                    f"directory")
                break
        raise DataError(f"cannot write {path}: directory {parent} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=f"{TMP_PREFIX}probe-", dir=parent)
    except OSError as exc:
        raise DataError(f"cannot write {path}: directory {parent} refuses a new file "
                        f"({exc.strerror or exc})") from None
    os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(probe)
    return path


def write_all_atomic(outputs: Any) -> None:
    """Write several files all or nothing.

    ``outputs`` is a sequence of ``(path, content)`` (str or bytes; ``-`` writes to
    standard output last, after every file is in place). Every file is first staged in
    full next to its target (where disk, permission and rendering errors happen); only
    when all are staged are they renamed into place. On any error (or Ctrl-C) every
    staged file is removed and targets already renamed by this call that did not exist
    before are removed too.

    Raises
    ------
    DataError
        An OSError while writing (the message names the path).
    """
    files = [(check_writable(p), c) for p, c in outputs if str(p) != STDOUT]
    to_stdout = [c for p, c in outputs if str(p) == STDOUT]
    staged: list[StagedFile] = []
    placed: list[Path] = []
    current = None
    try:
        for path, content in files:
            current = path
            staged.append(StagedFile(path, content))
        existed = [path.exists() for path, _ in files]
        for stage, old in zip(staged, existed):
            current = stage.path
            stage.commit()
            if not old:
                placed.append(stage.path)
    except BaseException as exc:
        for stage in staged:
            stage.discard()
        for path in placed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        if isinstance(exc, OSError):
            raise DataError(f"cannot write {current}: {exc}") from None
        raise
    for content in to_stdout:
        sys.stdout.write(content if isinstance(content, str) else content.decode())
        sys.stdout.flush()
