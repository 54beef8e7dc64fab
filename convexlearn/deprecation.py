"""Renamed keywords: an old name keeps working for one release, with a warning naming the new one.

The public vocabulary (docs/conventions.md, "Names") is one word per idea across the
problem classes, the estimators, the CLI and the problem files; a renamed keyword goes
through :func:`renamed` so that every rename warns and refuses the same way.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .errors import ParameterError

__all__ = ["renamed"]


def renamed(where: str, old: str, new: str, old_value: Any, new_value: Any, *,
            default: Any = None, convert: Callable[[Any], Any] | None = None,
            note: str = "", stacklevel: int = 3) -> Any:
    """The value of keyword ``new``, taken from the deprecated ``old`` when the caller used it.

    Parameters
    ----------
    where : str
        The function, for messages ("SVM.solve").
    old, new : str
        The deprecated name and the name that replaces it.
    old_value : object
        What the caller passed as ``old``; None means "not passed".
    new_value : object
        What the caller passed as ``new`` (its ``default`` when not passed).
    default : object
        The default of ``new``: passing both names is refused only when ``new_value``
        differs from it (the caller cannot have meant both).
    convert : callable, optional
        Old meaning to new (``homogeneous`` -> ``intercept = not homogeneous``).
    note : str
        Appended to the warning (how the old value translates).
    stacklevel : int
        Frames between the caller's call and this function, plus one.

    Raises
    ------
    ParameterError
        Both names given.

    Warns
    -----
    DeprecationWarning
        ``old`` was used; the message names ``new``.
    """
    if old_value is None:
        return new_value
    if not _same(new_value, default):
        raise ParameterError(f"{where}: pass {new!r} only ({old!r} is its deprecated name)")
    warnings.warn(f"{where}: {old!r} is deprecated and will be removed in the next release; "
                  f"use {new!r}{note}", DeprecationWarning, stacklevel=stacklevel)
    return convert(old_value) if convert is not None else old_value


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)
