"""The ``convexlearn`` command: solve a problem file, check the catalogue, test separability.

::

    convexlearn solve FILE [--methods M ...] [--json OUT] [--plot OUT.png] [--tol TOL] [--quiet]
    convexlearn check [PATHS ...] [--quiet]
    convexlearn separable DATA.csv --label COL [--classes A B] [--json OUT] [--quiet]

Exit codes (DESIGN.md section 3): 0 success; 1 an expectation of a problem file failed;
2 bad input or usage (file, data, parameter, unwritable output); 3 infeasible or
unbounded problem; 4 solver failure (including an exact answer that fails its own
optimality check, and any internal error). Errors go to stderr as ``convexlearn: error: <message>``; progress
goes to stderr only when it is a terminal and a run lasts more than a couple of seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

from ..errors import (ConvexLearnError, InfeasibleError, NotApplicableError, ParameterError,
                     SolverError, UnboundedError)

__all__ = ["main", "build_parser", "exit_code", "EXIT_OK", "EXIT_EXPECTATION", "EXIT_USAGE",
           "EXIT_INFEASIBLE", "EXIT_SOLVER"]

EXIT_OK, EXIT_EXPECTATION, EXIT_USAGE, EXIT_INFEASIBLE, EXIT_SOLVER = 0, 1, 2, 3, 4


def exit_code(exc: BaseException) -> int:
    """The exit code of an error (DESIGN.md section 3)."""
    if isinstance(exc, (InfeasibleError, UnboundedError)):
        return EXIT_INFEASIBLE
    if isinstance(exc, SolverError):
        return EXIT_SOLVER
    return EXIT_USAGE


class Progress:
    """One self-overwriting status line on stderr: only on a terminal, only after
    ``delay`` seconds (short runs stay silent), at most every ``interval`` seconds."""

    def __init__(self, quiet: bool, delay: float = 2.0, interval: float = 0.2):
        self.enabled = not quiet and sys.stderr.isatty()
        self.start, self.delay, self.interval = time.monotonic(), delay, interval
        self.last, self.shown = 0.0, False

    def __call__(self, message: str) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or now - self.last < self.interval:
            return
        self.last, self.shown = now, True
        sys.stderr.write(f"\r\033[K{message[:110]} ({now - self.start:.0f} s)")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


# ---------------------------------------------------------------------------- commands
def _iterative(methods) -> bool:
    return any(not m.startswith("exact") and m != "lp" for m in methods)


def cmd_solve(args) -> int:
    from .catalogue import load_problem
    from .report import check_writable, dumps, format_report, result_record, write_all_atomic
    from .runner import adapter_for, run_problem

    for out in (args.json, args.plot):        # fail before a long solve, not after
        if out is not None:
            check_writable(out)
    if args.tol is not None and not args.tol > 0:
        raise ParameterError(f"--tol must be > 0; got {args.tol!r}")
    problem = load_problem(args.file)
    if args.scheduler is not None:
        from .distributed import on_scheduler
        problem = on_scheduler(problem, args.scheduler)
    if args.plot is not None:
        methods = args.methods or problem.methods or adapter_for(problem.kind).default_methods
        if problem.data.X.shape[1] != 2 and not _iterative(methods):
            raise NotApplicableError(
                f"--plot: nothing to plot for {problem.name}: the decision boundary needs 2 "
                f"features (it has {problem.data.X.shape[1]}) and the convergence curves an "
                f"iterative method (methods: {', '.join(methods)})")
        from .figures import require_matplotlib
        require_matplotlib()                          # ImportError now, with the pip hint
    progress = Progress(args.quiet)
    try:
        result = run_problem(problem, methods=args.methods, tol=args.tol, progress=progress)
    finally:
        progress.clear()
    print(format_report(result))
    # Build every output in memory (the JSON text, the rendered PNG), then write them all
    # or nothing: a failure leaves no new file at all.
    outputs = []
    if args.json is not None:
        outputs.append((args.json, dumps(result_record(result))))
    if args.plot is not None:
        from .figures import figure_png, make_figure
        outputs.append((args.plot, figure_png(make_figure(result))))
    write_all_atomic(outputs)
    return EXIT_OK if result.passed else EXIT_EXPECTATION


def cmd_check(args) -> int:
    from .catalogue import find_problem_files, load_problem
    from .runner import run_problem

    files = find_problem_files(args.paths or ["problems"])
    failed, errors, start = [], [], time.monotonic()
    progress = Progress(args.quiet)
    for i, path in enumerate(files, start=1):
        t0 = time.monotonic()
        prefix = f"[{i}/{len(files)}] {path.name}"
        try:
            problem = load_problem(path)
            result = run_problem(problem, progress=lambda m: progress(f"{prefix}: {m}"))
        except ConvexLearnError as exc:
            progress.clear()
            errors.append(exit_code(exc))
            print(f"ERROR {path}: {exc}")
            continue
        except Exception as exc:              # a bug: report it, run the other problems
            progress.clear()
            errors.append(EXIT_SOLVER)
            print(f"ERROR {path}: internal error {type(exc).__name__}: {exc}")
            traceback.print_exc()
            continue
        progress.clear()
        bad = [c for c in result.checks if not c.passed]
        if bad:
            failed.append(path)
            print(f"FAIL  {problem.name} ({path})")
            for c in bad:
                print(f"      {c.name}: expected {c.expected}, got {c.actual}")
        elif not args.quiet:
            n = len(result.checks)
            print(f"ok    {problem.name}: {n} expectation{'s' * (n != 1)} met "
                  f"({time.monotonic() - t0:.1f} s)")
    print(f"{len(files) - len(failed) - len(errors)}/{len(files)} problems passed "
          f"({len(failed)} failed, {len(errors)} errors) in {time.monotonic() - start:.1f} s")
    if errors:
        return max(errors)
    return EXIT_EXPECTATION if failed else EXIT_OK


def cmd_separable(args) -> int:
    from .catalogue import load_dataset
    from ..halfspace import Halfspace
    from .report import check_writable, dumps, separability_record, write_atomic

    if args.json is not None:
        check_writable(args.json)
    data = load_dataset(args.data, args.label, classes=args.classes, features=args.features,
                        standardize=args.standardize)
    result = Halfspace(data.X, data.y, homogeneous=args.homogeneous).check()
    print(f"{args.data}: {data.X.shape[0]} samples x {data.X.shape[1]} features "
          f"({', '.join(data.feature_names[:6])}{', ...' if len(data.feature_names) > 6 else ''})")
    print(result.summary())
    if not result.verified:         # a certificate that fails its own check is no answer
        raise SolverError("the certificate failed its independent check (see above)")
    if args.json is not None:
        from .report import provenance_of_data
        record = {"data": provenance_of_data(data), **separability_record(result)}
        write_atomic(args.json, dumps(record))
    return EXIT_OK


# ------------------------------------------------------------------------------ parser
def _classes(value: str):
    """A class label from the command line: a number when it reads as one."""
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``solve``, ``check`` and ``separable`` commands.

    Each subcommand sets ``func`` (cmd_solve, cmd_check, cmd_separable), which :func:`main`
    calls with the parsed arguments.
    """
    from .. import __version__
    parser = argparse.ArgumentParser(
        prog="convexlearn",
        description="Solve convex learning problems exactly and iteratively, and verify every "
                    "answer against its optimality conditions.",
        epilog="exit codes: 0 ok, 1 an expectation failed, 2 bad input or usage, "
               "3 infeasible or unbounded, 4 solver failure")
    parser.add_argument("--version", action="version", version=f"convexlearn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("solve", help="solve one problem file and print the verified report",
                       description="Solve a problem file with its methods (exact and "
                       "iterative), print the table and check its expectations.")
    p.add_argument("file", metavar="FILE", help="problem file (TOML), e.g. problems/iris_setosa_versicolor.toml")
    p.add_argument("--methods", nargs="+", metavar="M",
                   help="methods to run instead of the file's (e.g. exact-dual smo pegasos)")
    p.add_argument("--json", metavar="OUT", help="also write the report as JSON, with provenance")
    p.add_argument("--plot", metavar="OUT.png",
                   help="also draw the boundary (2-D data) and convergence curves (needs "
                        "convexlearn[plot])")
    p.add_argument("--tol", type=float, metavar="TOL",
                   help="tolerance of iterative methods and of the optimality check "
                        "(default: the file's, else 1e-6)")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="solve on a Dask cluster: a scheduler address (tcp://host:8786) or "
                        "'local' (a LocalCluster here); see docs/distributed.md")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("check", help="run the catalogue and verify every expectation",
                       description="Solve every problem file and verify its expectations; "
                       "exit 1 if any fails.")
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="problem files or directories (default: problems/)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress messages; print only failures and the summary")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("separable", help="is a labeled CSV file linearly separable? (with proof)",
                       description="Decide whether two classes of a CSV file are linearly "
                       "separable and print the verified certificate either way.")
    p.add_argument("data", metavar="DATA.csv", help="CSV file with a header line")
    p.add_argument("--label", required=True, metavar="COL", help="the label column")
    p.add_argument("--classes", nargs=2, type=_classes, metavar=("A", "B"),
                   help="the two classes to compare (needed when the column has more)")
    p.add_argument("--features", nargs="+", metavar="COL",
                   help="feature columns (default: every column but the label)")
    p.add_argument("--standardize", action="store_true", help="z-score the features first")
    p.add_argument("--homogeneous", action="store_true",
                   help="hyperplanes through the origin (no intercept)")
    p.add_argument("--json", metavar="OUT", help="also write the answer as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=cmd_separable)
    return parser


def main(argv=None) -> int:
    """Run the command; return its exit code (argparse usage errors exit 2 themselves)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConvexLearnError as exc:
        print(f"convexlearn: error: {exc}", file=sys.stderr)
        return exit_code(exc)
    except ImportError as exc:
        print(f"convexlearn: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, with the shell's SIGPIPE status.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("convexlearn: interrupted", file=sys.stderr)
        return 130
    except Exception:
        # Not an error of the input but of convexlearn or a solver underneath it: exit 4
        # (Python's default 1 would read as "an expectation failed").
        traceback.print_exc()
        print("convexlearn: internal error (a bug: please report it with the traceback "
              "above)", file=sys.stderr)
        return EXIT_SOLVER


if __name__ == "__main__":
    sys.exit(main())
