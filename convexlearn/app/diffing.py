"""``convexlearn diff`` and ``solve --against``: a saved reference against another answer.

A file is a saved solution (``Solution.save``) or a ``solve --json`` record (several
solutions, one per method). Two runs are compared method by method (the methods both
hold); a saved solution against a run, against the run's reference (or ``--method``).

Each pair is compared by :func:`convexlearn.compare` and fails when

* the relative objective gap |F - F*| / max(|F*|, |F|) exceeds ``tol``, or
* ||w - w*|| > tol * ||w*|| (where both have w), or
* |b - b*| > tol * max(1, |b*|) (f is in margin units for a classifier: 1 is its scale).

Support-set differences are reported, never a failure on their own: the multipliers (and
so the support set) of an SVM need not be unique (duplicated samples share them).
Answers to different data (both carry the data's sha256 and they differ) are a usage
error.
"""

from __future__ import annotations

from typing import Any

import json
from pathlib import Path

import numpy as np

from ..compare import compare
from ..errors import DataError
from ..solution import Solution
from .outputs import UsageError

__all__ = ["load_answers", "diff_answers", "pairs"]


def load_answers(path: Any) -> tuple[dict[str, Solution], str | None]:
    """The solutions of a file (method -> Solution) and the reference method (a run's
    exact reference; the one method of a saved solution)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON file: {exc}") from None
    try:
        if isinstance(data, dict) and data.get("format") == "convexlearn.run":
            sols = {m: Solution.from_dict(d) for m, d in (data.get("solutions") or {}).items()}
            if not sols:
                raise DataError("the run record holds no solutions (written by an older "
                                "convexlearn? re-run solve --json)")
            return sols, data.get("reference")
        sol = Solution.from_dict(data)
        return {sol.method: sol}, sol.method
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None


def pairs(ref: dict[str, Solution], ref_method: str | None, other: dict[str, Solution],
          other_method: str | None, method: str | None) -> list[tuple[str, Solution, Solution]]:
    """(label, reference solution, other solution) to compare."""
    if method is not None:
        missing = [name for name, sols in (("reference", ref), ("other", other))
                   if method not in sols]
        if missing:
            raise UsageError(f"--method {method!r}: not in the {' and '.join(missing)} file "
                             f"(reference has {', '.join(ref)}; other has {', '.join(other)})")
        return [(method, ref[method], other[method])]
    common = [m for m in ref if m in other]
    if len(ref) > 1 and len(other) > 1 and common:
        return [(m, ref[m], other[m]) for m in common]
    return [(f"{other_method} vs {ref_method}", ref[ref_method], other[other_method])]


def _sha(sol: Solution):
    return sol.provenance.get("data_sha256")


def diff_answers(pairs_: list[tuple[str, Solution, Solution]],
                 tol: float) -> tuple[list[str], bool]:
    """Lines to print and whether every pair is within ``tol`` (see the module docstring)."""
    lines, ok = [], True
    for label, ref, other in pairs_:
        if _sha(ref) and _sha(other) and _sha(ref) != _sha(other):
            raise UsageError(f"{label}: the two answers are of different data (sha256 "
                             f"{_sha(ref)[:12]}... vs {_sha(other)[:12]}...): nothing to "
                             f"compare")
        cmp = compare(ref, other)
        fails = []
        if not cmp.relative_gap <= tol:
            fails.append(f"relative objective gap {cmp.relative_gap:.2e} > {tol:g}")
        if cmp.w_distance is not None:
            scale = max(float(np.linalg.norm(ref.w)), 2.2250738585072014e-308)
            if not cmp.w_distance <= tol * scale:
                fails.append(f"||w - w*|| = {cmp.w_distance:.2e} > {tol:g} x {scale:.3g}")
        if not cmp.b_difference <= tol * max(1.0, abs(float(ref.b))):
            fails.append(f"|b - b*| = {cmp.b_difference:.2e} > {tol:g} x "
                         f"{max(1.0, abs(float(ref.b))):.3g}")
        ok &= not fails
        lines.append(f"{'ok  ' if not fails else 'DIFF'} {label}")
        lines += ["  " + line for line in cmp.summary().splitlines()]
        lines += [f"  beyond tolerance: {f}" for f in fails]
    return lines, ok
