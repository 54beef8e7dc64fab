"""The subcommands of ``convexlearn``: solve, check, list, diff, separable.

Each takes the parsed arguments and returns the exit code; errors are raised as
ConvexLearnError and mapped to exit codes by :func:`convexlearn.app.cli.main`. Every
output path is checked (not an input, not another output, writable) before any work, and
every output is written all or nothing after the work (:mod:`convexlearn.app.outputs`).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from typing import TextIO

from ..deprecation import renamed
from ..errors import ConvexLearnError, ParameterError, SolverError
from .outputs import STDOUT, UsageError, check_outputs, check_writable, write_all_atomic
from .progress import Progress, configure_logging

__all__ = ["cmd_solve", "cmd_check", "cmd_list", "cmd_diff", "cmd_predict", "cmd_separable",
           "exit_code",
           "EXIT_OK", "EXIT_EXPECTATION", "EXIT_USAGE", "EXIT_INFEASIBLE", "EXIT_SOLVER"]

EXIT_OK, EXIT_EXPECTATION, EXIT_USAGE, EXIT_INFEASIBLE, EXIT_SOLVER = 0, 1, 2, 3, 4


def exit_code(exc: BaseException) -> int:
    """The exit code of an error: 3 infeasible or unbounded, 4 solver failure, 2 otherwise."""
    from ..errors import InfeasibleError, UnboundedError
    if isinstance(exc, (InfeasibleError, UnboundedError)):
        return EXIT_INFEASIBLE
    if isinstance(exc, SolverError):
        return EXIT_SOLVER
    return EXIT_USAGE


def check_files(outputs: dict, inputs: dict) -> None:
    check_outputs(outputs, inputs)
    for option, path in outputs.items():
        if option == "--plot" and path == STDOUT:
            raise UsageError("--plot needs a file name (the image is not written to standard "
                             "output)")
        if option == "--plot" and path is not None:
            from .figures import check_plot_path
            check_plot_path(path)
        if path is not None and path != STDOUT:
            check_writable(path)


def _positive(name: str, value) -> None:
    if value is not None and not value > 0:
        raise ParameterError(f"{name} must be > 0; got {value!r}")


def text_out(args: argparse.Namespace) -> TextIO:
    """Where the human report goes: stderr when a JSON record goes to stdout."""
    return sys.stderr if getattr(args, "json", None) == STDOUT else sys.stdout


# ----------------------------------------------------------------------------- solve
def cmd_solve(args: argparse.Namespace) -> int:
    """Solve a problem file, print the report, write --json/--plot, compare --against."""
    from .report import dumps, format_report, result_record
    from .runner import adapter_for, run_problem

    _positive("--tol", args.tol)
    _positive("--against-tol", args.against_tol)
    if args.plot is not None and args.scheduler is not None:
        raise UsageError("--plot draws from the data in memory; run it without --scheduler")
    outputs = {"--json": args.json, "--plot": args.plot}
    inputs = {"problem file": args.file, "--against reference": args.against}
    check_files(outputs, inputs)              # fail before a long solve, not after
    reference = None
    if args.against is not None:
        from .diffing import load_answers
        reference = load_answers(args.against)
    problem = _problem_of(args)
    data_file = problem.data.source if problem.data.source_sha256 else None
    check_outputs(outputs, {"data file": data_file})
    if args.plot is not None:
        methods = args.methods or problem.methods or adapter_for(problem.kind).default_methods
        from .figures import check_plottable, require_matplotlib
        check_plottable(problem, methods)
        require_matplotlib()                          # ImportError now, with the pip hint
    progress = Progress(args.quiet)
    configure_logging(args.verbose, progress)
    from .distributed import dask_session, on_cluster
    try:
        with dask_session(args.scheduler, args.verbose) as client:
            result = run_problem(on_cluster(problem, client), methods=args.methods,
                                 tol=args.tol, progress=progress)
        result.problem = problem          # the in-memory data: the cluster is gone
    finally:
        progress.close()
    out = text_out(args)
    print(format_report(result), file=out)
    code = EXIT_OK if result.passed else EXIT_EXPECTATION
    if reference is not None:
        from .diffing import diff_answers, pairs
        refs, ref_method = reference
        mine = dict(result.solutions)
        for sol in mine.values():
            sol.provenance.setdefault("data_sha256", problem.data.sha256)
        lines, ok = diff_answers(pairs(refs, ref_method, mine, result.reference.method,
                                       None), args.against_tol)
        print(f"\nagainst {args.against} (tol {args.against_tol:g}):", file=out)
        print("\n".join(lines), file=out)
        if not ok:
            code = max(code, EXIT_EXPECTATION)
    # Build every output in memory, then write them all or nothing.
    files = []
    if args.json is not None:
        files.append((args.json, dumps(result_record(result))))
    if args.plot is not None:
        from .figures import figure_bytes, make_figure
        files.append((args.plot, figure_bytes(make_figure(result), args.plot)))
    write_all_atomic(files)
    return code


_CSV_FLAGS = ("label", "classes", "features", "standardize", "C", "kernel", "gamma", "degree",
              "coef0", "loss", "penalty", "lam", "p", "l1_ratio")


def _problem_of(args: argparse.Namespace):
    """The problem of ``solve FILE``: a problem file, or a CSV file with ``--label`` and
    the model's flags (:func:`~convexlearn.app.catalogue.problem_from_csv`)."""
    from pathlib import Path
    from .catalogue import MODEL_FLAGS, load_problem, problem_from_csv
    from .schema import CSV_NOT_TOML
    given = [f for f in _CSV_FLAGS if getattr(args, f, None) not in (None, False)]
    if not args.intercept:
        given.append("no_intercept")
    if args.delimiter != ",":
        given.append("delimiter")
    is_csv = Path(args.file).suffix.lower() in (".csv", ".tsv")
    if args.label is None and not is_csv:
        if given:
            raise UsageError(f"{', '.join('--' + f.replace('_', '-') for f in given)} "
                             f"apply only to a CSV data file (solve DATA.csv --label COL ...); "
                             f"{args.file} is read as a problem file (TOML), which sets "
                             f"them in its [data] and [model] tables")
        return load_problem(args.file)
    if args.label is None:
        raise UsageError(f"{args.file}: {CSV_NOT_TOML.format(path=args.file)}")
    model = {k: getattr(args, k) for kind in MODEL_FLAGS.values() for k in kind}
    return problem_from_csv(args.file, args.label, model, classes=args.classes,
                            features=args.features, standardize=args.standardize,
                            delimiter=args.delimiter, intercept=args.intercept)


# ----------------------------------------------------------------------------- check
def cmd_check(args: argparse.Namespace) -> int:
    """Run every problem file; exit 1 if an expectation fails, the worst error's code."""
    from .catalogue import find_problem_files, load_problem
    from .report import dumps
    from .runner import run_problem

    check_files({"--json": args.json}, {})
    files = find_problem_files(args.paths or ["problems"])
    out = text_out(args)
    failed, errors, records, start = [], [], [], time.monotonic()
    progress = Progress(args.quiet, total=len(files))
    configure_logging(args.verbose, progress)
    try:
        for i, path in enumerate(files, start=1):
            t0 = time.monotonic()
            progress.step = i
            record = {"file": str(path), "name": path.stem}
            try:
                problem = load_problem(path)
                record["name"] = problem.name
                result = run_problem(problem, progress=progress)
            except ConvexLearnError as exc:
                progress.clear()
                errors.append(exit_code(exc))
                print(f"ERROR {path}: {exc}", file=out)
                records.append({**record, "status": "error", "exit_code": exit_code(exc),
                                "error": str(exc)})
                continue
            except Exception as exc:              # a bug: report it, run the other problems
                progress.clear()
                errors.append(EXIT_SOLVER)
                print(f"ERROR {path}: internal error {type(exc).__name__}: {exc}", file=out)
                traceback.print_exc()
                records.append({**record, "status": "error", "exit_code": EXIT_SOLVER,
                                "error": f"internal error {type(exc).__name__}: {exc}"})
                continue
            progress.clear()
            bad = [c for c in result.checks if not c.passed]
            seconds = time.monotonic() - t0
            records.append({**record, "status": "failed" if bad else "ok",
                            "time_s": seconds, "checks": [vars(c) for c in result.checks]})
            if bad:
                failed.append(path)
                print(f"FAIL  {problem.name} ({path})", file=out)
                for c in bad:
                    print(f"      {c.name}: expected {c.expected}, got {c.actual}", file=out)
            elif not args.quiet:
                n = len(result.checks)
                print(f"ok    {problem.name}: {n} expectation{'s' * (n != 1)} met "
                      f"({seconds:.1f} s)", file=out)
    finally:
        progress.close()
    n_ok = len(files) - len(failed) - len(errors)
    print(f"{n_ok}/{len(files)} problems passed ({len(failed)} failed, {len(errors)} errors) "
          f"in {time.monotonic() - start:.1f} s", file=out)
    code = max(errors) if errors else (EXIT_EXPECTATION if failed else EXIT_OK)
    if args.json is not None:
        summary = {"format": "convexlearn.check", "format_version": 1, "exit_code": code,
                   "passed": n_ok, "failed": len(failed), "errors": len(errors),
                   "problems": records}
        write_all_atomic([(args.json, dumps(summary))])
    return code


# ------------------------------------------------------------------------------ list
def cmd_list(args: argparse.Namespace) -> int:
    """The catalogue, one line per problem file: file, model, name and description."""
    from .catalogue import find_problem_files
    from .schema import read_toml

    rows = []
    for path in find_problem_files(args.paths or ["problems"]):
        raw, _ = read_toml(path)
        model = dict(raw.get("model") or {})
        kind = str(model.pop("kind", "?"))
        detail = {"svm": lambda: f"{model.get('kernel', 'linear')}, C={model.get('C', 1.0)}",
                  "erm": lambda: f"{model.get('loss', '?')} + {model.get('penalty', 'l2')}, "
                                 f"lam={model.get('lam', 0.1)}"}.get(kind, lambda: "")()
        rows.append((path.stem, f"{kind} ({detail})" if detail else kind,
                     " ".join(str(raw.get("description", "")).split())))
    width = max(len(r[0]) for r in rows)
    model_width = max(len(r[1]) for r in rows)
    for stem, model, description in rows:
        line = f"{stem.ljust(width)}  {model.ljust(model_width)}  {description}"
        print(line if args.long else line[:120].rstrip())
    return EXIT_OK


# ------------------------------------------------------------------------------ diff
def cmd_diff(args: argparse.Namespace) -> int:
    """Compare two saved answers; exit 1 when beyond ``--tol``."""
    from .diffing import diff_answers, load_answers, pairs

    _positive("--tol", args.tol)
    ref, ref_method = load_answers(args.reference)
    other, other_method = load_answers(args.other)
    lines, ok = diff_answers(pairs(ref, ref_method, other, other_method, args.method),
                             args.tol)
    print("\n".join(lines))
    print(f"{'within' if ok else 'BEYOND'} tolerance {args.tol:g}")
    return EXIT_OK if ok else EXIT_EXPECTATION


# --------------------------------------------------------------------------- predict
def cmd_predict(args: argparse.Namespace) -> int:
    """Apply a ``solve --json`` answer to a CSV file: decision values and labels, as CSV
    or JSON (``--format``, else the extension of ``--out``), written all or nothing."""
    from pathlib import Path
    from .predict import format_predictions, predict

    fmt = args.format or ("json" if Path(args.out).suffix.lower() == ".json" else "csv")
    check_files({"--out": args.out}, {"answer": args.answer, "data file": args.data})
    f, labels = predict(args.answer, args.data, delimiter=args.delimiter)
    write_all_atomic([(args.out, format_predictions(f, labels, fmt, args.answer, args.data))])
    return EXIT_OK


# ------------------------------------------------------------------------- separable
def cmd_separable(args: argparse.Namespace) -> int:
    """Decide the separability of two classes of a CSV file, with a verified certificate."""
    from .catalogue import load_dataset
    from ..halfspace import Halfspace
    from .report import dumps, provenance_of_data, separability_record

    check_files({"--json": args.json}, {"data file": args.data})
    from ..svmlight import looks_like_svmlight
    if args.label is None and not looks_like_svmlight(args.data):
        raise ParameterError(f"{args.data}: a CSV file needs --label COL (the label column); "
                             f"an svmlight file carries its labels")
    data = load_dataset(args.data, args.label, classes=args.classes, features=args.features,
                        standardize=args.standardize, delimiter=args.delimiter)
    progress = Progress(args.quiet)
    configure_logging(args.verbose, progress)
    progress("separability LP")
    try:
        intercept = renamed("convexlearn separable", "--homogeneous", "--no-intercept",
                            args.homogeneous or None, args.intercept, default=True,
                            convert=lambda h: not h)
        result = Halfspace(data.X, data.y, intercept=intercept).check()
    finally:
        progress.close()
    out = text_out(args)
    print(f"{args.data}: {data.X.shape[0]} samples x {data.X.shape[1]} features "
          f"({', '.join(data.feature_names[:6])}{', ...' if len(data.feature_names) > 6 else ''})",
          file=out)
    print(result.summary(), file=out)
    if not result.verified:         # a certificate that fails its own check is no answer
        raise SolverError("the certificate failed its independent check (see above)")
    if args.json is not None:
        record = {"data": provenance_of_data(data), **separability_record(result)}
        write_all_atomic([(args.json, dumps(record))])
    return EXIT_OK
