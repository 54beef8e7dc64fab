"""The ``convexlearn`` command: solve a problem file, check the catalogue, test separability.

::

    convexlearn solve FILE [--methods M ...] [--json OUT|-] [--plot OUT.png|svg|pdf] [--tol TOL]
                      [--scheduler ADDRESS] [--against REF.json [--against-tol TOL]]
                      [--quiet] [-v]
    convexlearn check [PATHS ...] [--json OUT|-] [--quiet] [-v]
    convexlearn list [PATHS ...] [--long]
    convexlearn solve DATA.csv --label COL [--C C] [--kernel K] [--gamma G]
                      [--loss L] [--penalty P] [--lam LAM] [...]
    convexlearn diff REF.json OTHER.json [--tol TOL] [--method M]
    convexlearn predict ANSWER.json DATA.csv [--out OUT.csv|OUT.json|-] [--format F]
    convexlearn separable DATA.csv --label COL [--classes A B] [--delimiter C] [--json OUT|-]
    convexlearn verify MODEL --data FILE [--label COL] [--C C] [--tol T] [--json OUT|-]

Exit codes: 0 success; 1 an expectation of a problem file failed;
2 bad input or usage (file, data, parameter, unwritable output); 3 infeasible or
unbounded problem; 4 solver failure (including an exact answer that fails its own
optimality check, and any internal error); 130 interrupted (Ctrl-C: no output file is
written). Errors go to stderr as ``convexlearn: error: <message>``; progress goes to
stderr only when it is a terminal and a run lasts more than a couple of seconds.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
import warnings
from typing import NoReturn

from ..errors import ConvexLearnError

from .commands import (EXIT_EXPECTATION, EXIT_INFEASIBLE, EXIT_OK, EXIT_SOLVER, EXIT_USAGE,
                       cmd_check, cmd_diff, cmd_list, cmd_predict, cmd_separable, cmd_solve,
                       exit_code)
from .progress import Progress, configure_logging
from .verify_cmd import add_verify_parser

__all__ = ["main", "run", "build_parser", "exit_code", "Progress", "EXIT_OK", "EXIT_EXPECTATION",
           "EXIT_USAGE", "EXIT_INFEASIBLE", "EXIT_SOLVER"]


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


def _common(p, quiet_help: str = "no progress messages") -> None:
    p.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log what runs on stderr (-v: routes and outcomes, -vv: details)")


def _delimiter(value: str) -> str:
    return {"\\t": "\t", "tab": "\t"}.get(value, value)


class _Formatter(argparse.HelpFormatter):
    """argparse's help, wrapped without breaking words at hyphens: method names such as
    exact-primal-hinge stay whole."""

    def _split_lines(self, text, width):
        import textwrap
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _number_or_name(value: str):
    """gamma from the command line: a number, else a name ('scale', 'auto')."""
    try:
        return float(value)
    except ValueError:
        return value


def _names(kind: str, distributed: bool = False) -> list[str]:
    """The method names of a model kind (on a dask array with ``distributed``)."""
    from .adapters import ADAPTERS
    from . import qp_adapters  # noqa: F401  (adds the kinds svr, one_class, nu_svc, nu_svr)
    from . import linear_family_adapters  # noqa: F401  (adds svm_l2 and crammer_singer)
    adapter = ADAPTERS[kind]
    return adapter.distributed_methods() if distributed else adapter.methods()


def _data_flags(p, label_required: bool) -> None:
    """The flags that read a CSV file: label, classes, features, delimiter, standardize."""
    p.add_argument("--label", required=label_required, metavar="COL",
                   help="the label column (regression target for a regression loss)")
    p.add_argument("--classes", nargs=2, type=_classes, metavar=("A", "B"),
                   help="the two classes to keep (needed when the column has more)")
    p.add_argument("--features", nargs="+", metavar="COL",
                   help="feature columns (default: every column but the label)")
    p.add_argument("--standardize", action="store_true", help="z-score the features first")
    p.add_argument("--delimiter", default=",", metavar="C",
                   help="the CSV file's cell delimiter, one character (default ','; "
                        "'\\t' or tab for tab)")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``solve``, ``check``, ``list``, ``diff`` and ``separable``
    commands.

    Each subcommand sets ``func`` (a function of :mod:`convexlearn.app.commands`), which
    :func:`main` calls with the parsed arguments.
    """
    from .. import __version__
    parser = argparse.ArgumentParser(
        prog="convexlearn",
        description="Solve convex learning problems exactly and iteratively, and verify every "
                    "answer against its optimality conditions.",
        epilog="exit codes: 0 ok, 1 an expectation failed (or a diff beyond its "
               "tolerance), 2 bad input or usage, 3 infeasible or unbounded, 4 solver "
               "failure, 130 interrupted")
    parser.add_argument("--version", action="version", version=f"convexlearn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("solve", help="solve a problem file (or a CSV file) and print the "
                       "verified report", formatter_class=_Formatter,
                       description="Solve a problem file with its methods (exact and "
                       "iterative), print the table and check its expectations; or solve "
                       "a CSV file as it is: convexlearn solve DATA.csv --label COL "
                       "[--C C] [--kernel K] (an SVM) or [--loss L --penalty P --lam LAM] "
                       "(regularized ERM). The problem-file format: docs/problem_files.md.")
    p.add_argument("file", metavar="FILE",
                   help="problem file (TOML), e.g. problems/iris_setosa_versicolor.toml, "
                        "or a CSV data file with --label")
    p.add_argument("--methods", nargs="+", metavar="M",
                   help="methods to run instead of the file's [run] methods (default: "
                        "exact). SVM: " + ", ".join(_names("svm")) + "; ERM: "
                        + ", ".join(_names("erm")) + "; with --scheduler, SVM: "
                        + ", ".join(_names("svm", True)) + "; ERM: "
                        + ", ".join(_names("erm", True)))
    p.add_argument("--json", metavar="OUT",
                   help="also write the report and every method's whole solution (w, alpha, "
                        "b, support, history, provenance) as JSON; '-' is standard output")
    p.add_argument("--plot", metavar="OUT.png",
                   help="also draw the boundary (2-D data) and convergence curves; the "
                        "extension names the format: .png, .svg or .pdf (needs "
                        "convexlearn[plot])")
    p.add_argument("--tol", type=float, metavar="TOL",
                   help="tolerance of iterative methods and of the optimality check "
                        "(default: the file's, else 1e-6)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="solve on a Dask cluster: a scheduler address (tcp://host:8786) or "
                        "'local' (a LocalCluster here); see docs/distributed.md")
    p.add_argument("--against", metavar="REF.json",
                   help="compare the answers with a saved reference (a solve --json record "
                        "or a saved solution); exit 1 beyond --against-tol")
    p.add_argument("--against-tol", type=float, default=1e-6, metavar="TOL",
                   help="relative tolerance of --against (default 1e-6)")
    _common(p)
    csv = p.add_argument_group("solving a CSV file (FILE is DATA.csv; no problem file)")
    _data_flags(csv, label_required=False)
    csv.add_argument("--no-intercept", dest="intercept", action="store_false",
                     help="no intercept b (default: an unpenalized intercept)")
    csv.add_argument("--C", type=float, metavar="C",
                     help="SVM: cost of the slack (default 1; inf for the hard margin)")
    csv.add_argument("--kernel", metavar="K", help="SVM: linear (default), rbf, poly or sigmoid")
    csv.add_argument("--gamma", type=_number_or_name, metavar="G",
                     help="SVM: kernel width, a number > 0, 'scale' (default) or 'auto'")
    csv.add_argument("--degree", type=int, metavar="D", help="SVM: poly degree (default 3)")
    csv.add_argument("--coef0", type=float, metavar="R",
                     help="SVM: constant of the poly and sigmoid kernels (default 0)")
    csv.add_argument("--loss", metavar="L",
                     help="regularized ERM instead of the SVM: the loss (logistic, squared, "
                          "hinge, ...)")
    csv.add_argument("--penalty", metavar="P",
                     help="ERM: none, l1, l2 (default), lp, elastic_net")
    csv.add_argument("--lam", type=float, metavar="LAM",
                     help="ERM: regularization weight (default 0.1)")
    csv.add_argument("--p", type=float, metavar="P", help="ERM: exponent of the lp penalty")
    csv.add_argument("--l1-ratio", dest="l1_ratio", type=float, metavar="R",
                     help="ERM: mixing of the elastic net, in [0, 1]")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("check", help="run the catalogue and verify every expectation",
                       description="Solve every problem file and verify its expectations; "
                       "exit 1 if any fails.")
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="problem files or directories (default: problems/)")
    p.add_argument("--json", metavar="OUT",
                   help="also write every problem's outcome as JSON; '-' is standard output")
    _common(p, quiet_help="no progress messages; print only failures and the summary")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("list", help="the catalogue, one line per problem file",
                       description="List the problem files: file, model, description.")
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="problem files or directories (default: problems/)")
    p.add_argument("--long", action="store_true", help="do not cut lines at 120 characters")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("diff", help="compare two saved answers (objective, w, support sets)",
                       description="Compare OTHER with the reference REF: relative objective "
                       "gap, ||w - w*||, |b - b*| and support-set differences; exit 1 when "
                       "the gap or a distance is beyond --tol.")
    p.add_argument("reference", metavar="REF.json",
                   help="a solve --json record or a saved solution (Solution.save)")
    p.add_argument("other", metavar="OTHER.json", help="the answer to compare with REF")
    p.add_argument("--tol", type=float, default=1e-6, metavar="TOL",
                   help="relative tolerance (default 1e-6): |F - F*| / max(|F*|, |F|), "
                        "||w - w*|| / ||w*||, |b - b*| / max(1, |b*|) (margin units)")
    p.add_argument("--method", metavar="M", help="compare this method's solutions only")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("predict", help="apply a saved answer (solve --json) to a CSV file",
                       description="Decision values f(x) and labels of every row of a CSV "
                       "file, by the answer a 'convexlearn solve ... --json' run saved (its "
                       "columns, standardization, feature map and classes are applied as "
                       "in training).")
    p.add_argument("answer", metavar="ANSWER.json", help="the record of solve --json")
    p.add_argument("data", metavar="DATA.csv", help="CSV file with a header line holding "
                   "the model's feature columns (other columns are ignored)")
    p.add_argument("--out", default="-", metavar="OUT",
                   help="where to write the predictions (default '-': standard output)")
    p.add_argument("--format", choices=("csv", "json"),
                   help="csv (decision,label per row) or json (default: the extension of "
                        "--out, else csv)")
    p.add_argument("--delimiter", default=",", metavar="C",
                   help="the CSV file's cell delimiter (default ','; '\\t' or tab for tab)")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("separable", help="is a labeled CSV file linearly separable? (with proof)",
                       description="Decide whether two classes of a CSV file are linearly "
                       "separable and print the verified certificate either way.")
    p.add_argument("data", metavar="DATA.csv",
                   help="CSV file with a header line, or an svmlight/LIBSVM data file")
    _data_flags(p, label_required=False)     # an svmlight file's label is its first field
    p.add_argument("--no-intercept", dest="intercept", action="store_false",
                   help="hyperplanes through the origin (b = 0)")
    p.add_argument("--homogeneous", action="store_true",
                   help="deprecated name of --no-intercept")
    p.add_argument("--json", metavar="OUT",
                   help="also write the answer as JSON; '-' is standard output")
    _common(p)
    p.set_defaults(func=cmd_separable)
    add_verify_parser(sub)
    return parser


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    """Run the command; return its exit code (argparse usage errors exit 2 themselves).

    Ctrl-C (SIGINT) and SIGTERM stop the run cleanly: staged outputs are removed, no file
    is written, the exit code is 130.
    """
    args = build_parser().parse_args(argv)
    if hasattr(args, "delimiter"):
        args.delimiter = _delimiter(args.delimiter)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(args)
    finally:
        configure_logging(0)              # the -v handler lives as long as the command
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def run() -> NoReturn:
    """The ``convexlearn`` command and ``python -m convexlearn``: :func:`main`, then exit.

    An interrupted run leaves at once with 130 (``os._exit`` after flushing the streams):
    a normal interpreter exit after a caught Ctrl-C could still end as "killed by SIGINT"
    (-2 to the parent) when the signal's exit status leaked past the handler or a second
    one arrived during the interpreter's shutdown, which the exit-code contract forbids.
    """
    # a renamed flag or problem-file key says so on stderr (Python hides the warning)
    warnings.filterwarnings("default", category=DeprecationWarning, module=r"convexlearn\.")
    code = main()
    if code == 130:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)
    sys.exit(code)


def _run(args) -> int:
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
        print("convexlearn: interrupted (no output written)", file=sys.stderr)
        return 130
    except Exception:
        # Not an error of the input but of convexlearn or a solver underneath it: exit 4
        # (Python's default 1 would read as "an expectation failed").
        traceback.print_exc()
        print("convexlearn: internal error (a bug: please report it with the traceback "
              "above)", file=sys.stderr)
        return EXIT_SOLVER


if __name__ == "__main__":
    run()
