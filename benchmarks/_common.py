"""Small helpers shared by the benchmark scripts: timing and writing result tables."""

from __future__ import annotations

import os
import platform
import time
from datetime import datetime, timezone

RESULTS = os.path.join(os.path.dirname(__file__), "results")


def best_time(func, repeat: int = 3):
    """Best wall-clock seconds over ``repeat`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured markdown table."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_result(name: str, title: str, body: str) -> str:
    """Write benchmarks/results/<name>.md atomically, with machine facts; return the path."""
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, f"{name}.md")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"# {title}\n\nRecorded {stamp} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}.\n\n{body}\n")
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path
