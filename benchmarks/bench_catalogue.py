"""Time every problem of the catalogue, method by method (what `convexlearn check` runs).

Run from the repository root: ``python benchmarks/bench_catalogue.py [--repeat 3]``.
Prints a table and, with --record, writes benchmarks/results/catalogue.md: per problem and method the
status, the relative gap to the exact reference and the best-of-``repeat`` solve time,
plus the wall time of the whole ``check`` (data loading and separability LPs included).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from convexlearn.app.catalogue import find_problem_files, load_problem
from convexlearn.app.runner import run_problem

from _common import record_text

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/catalogue.md (else print only)")
    args = parser.parse_args()
    files = find_problem_files([ROOT / "problems"])
    rows, walls = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        results = [run_problem(load_problem(f)) for f in files]
        walls.append(time.perf_counter() - start)
        rows.append(results)
    lines = [f"# Catalogue timings ({len(files)} problems, best of {args.repeat})", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; whole catalogue (in-process, after imports): "
             f"best {min(walls):.2f} s, worst {max(walls):.2f} s.", "",
             "| problem | method | status | gap to exact | time (s) |",
             "|---|---|---|---|---|"]
    for i, result in enumerate(rows[0]):
        for j, row in enumerate(result.rows):
            best = min(rep[i].rows[j].time_s for rep in rows)
            gap = "-" if row.gap is None else f"{row.gap:.1e}"
            lines.append(f"| {result.problem.name} | {row.method} | {row.status} | {gap} | "
                         f"{best:.4f} |")
    text = "\n".join(lines) + "\n"
    print(record_text(ROOT / "benchmarks" / "results" / "catalogue.md", text))


if __name__ == "__main__":
    main()
