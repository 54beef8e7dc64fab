"""``convexlearn verify MODEL --data FILE``: check a LIBSVM or LIBLINEAR model file, or a saved
convexlearn solution, against the certified optimum of the problem it claims to solve.

Exit codes: 0 the answer passes at ``--tol``; 1 it does not; 2 bad input (a file that
cannot be read, a model for other data, a model whose problem convexlearn cannot state).
The command never unpickles a file (unpickling runs code): scikit-learn models are
verified from Python, ``cl.verify(estimator, X, y)``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..errors import DataError

__all__ = ["add_verify_parser", "cmd_verify"]


def add_verify_parser(sub: Any) -> None:
    """The ``verify`` subcommand's parser (sets ``func`` to :func:`cmd_verify`)."""
    p = sub.add_parser("verify", help="verify a LIBSVM/LIBLINEAR model file or a saved "
                       "solution against the certified optimum",
                       description="Map MODEL to the problem it claims to solve on the "
                       "training data FILE, compute that problem's certified optimum and "
                       "report the gap, KKT violators, support-set and prediction "
                       "differences; exit 0 when it passes at --tol, 1 when not, 2 on bad "
                       "input.")
    p.add_argument("model", metavar="MODEL", help="a LIBSVM or LIBLINEAR model file, or a "
                   "convexlearn JSON solution (Solution.save)")
    p.add_argument("--data", required=True, metavar="FILE",
                   help="the training data: an svmlight/LIBSVM file, or a CSV file with "
                        "--label")
    p.add_argument("--label", metavar="COL", help="the label column of a CSV file")
    p.add_argument("--C", type=float, metavar="C", dest="C",
                   help="the C the model was trained with (model files do not record it; "
                        "LIBLINEAR needs it; a JSON solution's SVM takes it, default 1)")
    p.add_argument("--kernel", default="linear", metavar="K",
                   help="the SVM kernel of a JSON solution (default linear)")
    p.add_argument("--gamma", default="scale", metavar="G",
                   help="the kernel's gamma for a JSON solution (default 'scale')")
    p.add_argument("--tol", type=float, default=1e-6, metavar="T",
                   help="tolerance of the verdict (relative; default 1e-6)")
    p.add_argument("--json", metavar="OUT", help="also write the report as JSON; '-' is "
                   "standard output")
    p.set_defaults(func=cmd_verify)


def _read_data(path: str, label: str | None):
    from ..svmlight import looks_like_svmlight, read_svmlight
    if looks_like_svmlight(path):
        data = read_svmlight(path)
        return data.X, data.y
    if label is None:
        raise DataError(f"{path} is not in svmlight format: give the label column of the CSV "
                        f"file with --label")
    from .csvfile import CsvFile
    table = CsvFile(path)
    if label not in table.header:
        raise DataError(f"{path}: no column {label!r}; columns: {', '.join(table.header)}")
    return table.features_and_labels([h for h in table.header if h != label], label)


def _is_json(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(64).lstrip()[:1] == b"{"
    except OSError:
        return False


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify MODEL on --data; print the report; exit 0 pass, 1 fail."""
    from ..errors import ParameterError
    from ..svm import SVM
    from ..verification import verify
    from .commands import EXIT_EXPECTATION, EXIT_OK, check_files, text_out
    from .outputs import write_all_atomic

    if not args.tol > 0:
        raise ParameterError(f"--tol must be > 0; got {args.tol!r}")
    if args.C is not None and not args.C > 0:
        raise ParameterError(f"--C must be > 0; got {args.C!r}")
    check_files({"--json": args.json}, {"model": args.model, "data file": args.data})
    if not Path(args.model).is_file():
        raise DataError(f"{args.model}: no such model file")
    X, y = _read_data(args.data, args.label)
    if _is_json(args.model):
        gamma = args.gamma
        try:
            gamma = float(gamma)
        except ValueError:
            pass
        problem = SVM(X, y, C=1.0 if args.C is None else args.C, kernel=args.kernel,
                      gamma=gamma)
        report = verify(args.model, problem=problem, tol=args.tol)
    else:
        report = verify(args.model, X, y, C=args.C, tol=args.tol)
    out = text_out(args)
    n, d = X.shape
    print(f"{args.model} on {args.data} ({n} samples x {d} features)", file=out)
    print(report.summary(), file=out)
    if args.json is not None:
        write_all_atomic([(args.json, json.dumps(report.to_dict(), indent=1,
                                                 allow_nan=False) + "\n")])
    return EXIT_OK if report.passed else EXIT_EXPECTATION

