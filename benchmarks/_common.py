"""Small helpers shared by the benchmark scripts: timing and writing result tables.

The committed results in ``benchmarks/results/`` are written only when a script is run
with ``--record`` (``python benchmarks/bench_csv.py --record``); without it a script prints
its tables and leaves the recorded ones as they are (:func:`record_text`).
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
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


def best_of_quick(first: float, again, under: float = 0.1, repeats: int = 3) -> float:
    """Best seconds of a side whose first run took ``first``.

    A first run under ``under`` seconds is run again, ``repeats`` runs in all: single runs
    of millisecond problems on a shared machine move by tens of percent. ``again()`` runs
    the side once more on a new problem or estimator (nothing cached) and returns its
    seconds, or None when the run does not count (the loop stops there).
    """
    times = [first]
    while first < under and len(times) < repeats:
        seconds = again()
        if seconds is None:
            break
        times.append(seconds)
    return min(times)


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured markdown table."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


#: The command-line flag that lets a benchmark overwrite its file in benchmarks/results.
RECORD_FLAG = "--record"


def recording(argv: list[str] | None = None) -> bool:
    """True when the command line (``sys.argv``) asks to record the results."""
    return RECORD_FLAG in (sys.argv if argv is None else argv)


def record_text(path, text: str, argv: list[str] | None = None) -> str:
    """Write ``text`` to ``path`` atomically when :func:`recording`; otherwise print it and
    leave ``path`` untouched. Returns a line saying which."""
    path = str(path)
    if not recording(argv):
        print(text)
        return f"not recorded (run with {RECORD_FLAG} to write {os.path.relpath(path)})"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return f"written to {os.path.relpath(path)}"


def figure_dir() -> str:
    """Where a benchmark saves its figures: benchmarks/results when recording, else a new
    temporary directory."""
    return RESULTS if recording() else tempfile.mkdtemp(prefix="convexlearn-bench-")


def result_path(name: str) -> str:
    """benchmarks/results/<name>.md, the file :func:`write_result` writes."""
    return os.path.join(RESULTS, f"{name}.md")


def recorded_result(name: str) -> str:
    """The text of the recorded benchmarks/results/<name>.md, "" when there is none (a
    script that records one section apart keeps the others through it)."""
    path = result_path(name)
    return open(path).read() if os.path.exists(path) else ""


def write_result(name: str, title: str, body: str, argv: list[str] | None = None) -> str:
    """benchmarks/results/<name>.md with machine facts, written by :func:`record_text`
    (only with ``--record``); returns the line saying what happened."""
    path = result_path(name)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"# {title}\n\nRecorded {stamp} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}.\n\n{body}\n")
    return record_text(path, text, argv)


def proc_status_bytes(field: str) -> int:
    """A size field of /proc/self/status ("VmRSS", "VmHWM": the peak) in bytes; 0 where
    there is none (not Linux)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reset_peak_rss() -> bool:
    """Reset the peak resident set (VmHWM) of this process: writing 5 to clear_refs
    (Linux >= 4.0). False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False
