"""Problem files: one TOML file per reference problem, validated, with its data loaded.

A problem file has five tables::

    name = "iris-setosa-versicolor"           # required
    description = "..."
    [data]      # path = "data/iris.csv" (relative to the file), label, classes, features,
                # standardize, feature_map = {kind = "poly", degree, gamma, coef0}
                # - or [data.generator] with kind = "xor" | "blobs" | "regression" | ...
    [model]     # kind = "svm" | "erm" | "halfspace" | "shattering" | "svr" | "one_class" |
                #        "nu_svc" | "nu_svr" | "svm_l2" | "crammer_singer" and its parameters
    [run]       # methods, tol, solver, solver_options, [run.options.<method>]
    [expect]    # facts established by the exact solver (see each model's adapter)

The keys of ``[model]`` and ``[expect]`` depend on the model kind and are declared by
its adapter in :mod:`convexlearn.app.adapters`. Every error names the file and, where it can,
the line: a TOML syntax error its line and column, an unknown key the valid ones, a
wrong type the key and the expected type, a bad CSV cell its line and column.

Data pipeline, in order: read (CSV or seeded generator) -> select the two classes ->
standardize (z = (x - mean) / std, population std; constant columns only centred) ->
explicit feature map. ``Dataset.sha256`` is a checksum of the arrays actually solved.
"""

from __future__ import annotations

from typing import Any

import hashlib
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConvexLearnError, ProblemFileError
from .adapters import adapter_for
from . import qp_adapters  # noqa: F401  (adds the kinds svr, one_class, nu_svc, nu_svr)
from . import linear_family_adapters  # noqa: F401  (adds svm_l2 and crammer_singer)
from .csvfile import CsvFile, check_delimiter, read_csv
from ..svmlight import looks_like_svmlight
from .generators import GENERATORS
from .schema import Dataset, FileContext, Key, Problem, is_number, read_toml, validate

__all__ = ["Key", "Problem", "Dataset", "ProblemFileError", "load_problem", "read_csv",
           "standardize", "find_problem_files", "load_dataset", "problem_from_csv",
           "MODEL_FLAGS"]

TOP_KEYS = {
    "name": Key("string", doc="short identifier"),
    "description": Key("string", "", "one or two sentences"),
    "data": Key("table", doc="where the samples come from"),
    "model": Key("table", doc="the problem to solve"),
    "run": Key("table", {}, doc="methods and tolerances"),
    "expect": Key("table", {}, doc="facts the solution must reproduce"),
}
DATA_KEYS = {
    "path": Key("string", None, "CSV file, relative to the problem file"),
    "label": Key("string", None, "label (or regression target) column"),
    "delimiter": Key("string", ",", "the CSV file's cell delimiter (one character)"),
    "classes": Key("list of labels", None, "the two classes to keep"),
    "features": Key("list of strings", None, "feature columns (default: all but the label)"),
    "standardize": Key("boolean", False, "z-score every feature"),
    "feature_map": Key("table", None, "explicit polynomial feature map"),
    "generator": Key("table", None, "seeded synthetic data instead of a file"),
}
FEATURE_MAP_KEYS = {
    "kind": Key("string", "poly"), "degree": Key("integer", 2),
    "gamma": Key("number", 1.0), "coef0": Key("number", 1.0),
}
RUN_KEYS = {
    "methods": Key("list of strings", None, "methods to run (default: the model's)"),
    "tol": Key("number", 1e-6, "tolerance of iterative methods and of the optimality check"),
    "solver": Key("string", None, "cvxpy solver of the exact methods"),
    "solver_options": Key("table", {}, "options passed to the cvxpy solver"),
    "options": Key("table", {}, "per-method options, e.g. [run.options.pegasos]"),
}


def _select_classes(y: np.ndarray, wanted: list, where: str) -> np.ndarray:
    """Boolean mask of the rows in the two ``wanted`` classes (matched by value)."""
    found = sorted(set(y.tolist()), key=str)
    if len(wanted) != 2 or wanted[0] == wanted[1]:
        raise ProblemFileError(f"{where}: 'data.classes' must name two distinct classes; "
                               f"got {wanted!r}")
    as_found = [float(c) if y.dtype.kind == "f" and is_number(c) else c for c in wanted]
    missing = [c for c in as_found if c not in found]
    if missing:
        raise ProblemFileError(f"{where}: class(es) {missing} not found in the label column; "
                               f"classes found: {found}")
    return np.isin(y, as_found)


def _scaling(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean_j, std_j) of :func:`standardize`: population std, 1 for a constant column."""
    sd = X.std(axis=0)
    return X.mean(axis=0), np.where(sd > 0, sd, 1.0)


def standardize(X: np.ndarray) -> np.ndarray:
    """z_ij = (x_ij - mean_j) / std_j with the population std; constant columns are only
    centred (dividing by zero would invent a scale)."""
    mean, sd = _scaling(X)
    return (X - mean) / sd


def _load_data(spec: dict, task: str, ctx: FileContext, classes_hint: str) -> Dataset:
    """Read or generate the samples, then select, standardize and map them."""
    if (spec["path"] is None) == (spec["generator"] is None):
        raise ctx.error(None, "[data] needs exactly one of 'path' (a CSV file) or "
                        "[data.generator]")
    if spec["generator"] is not None:
        data = _generate(spec["generator"], ctx)
        if spec["label"] or spec["features"] or spec["classes"]:
            raise ctx.error(None, "'label', 'features' and 'classes' apply to CSV files, "
                            "not to generated data")
    else:
        data = _from_csv(spec, task, ctx)
    if spec["classes"] is not None:
        keep = _select_classes(data.y, spec["classes"], f"{ctx.path}")
        data.X, data.y = data.X[keep], data.y[keep]
        data.classes = list(spec["classes"])
        data.transforms.append(f"classes {data.classes}")
    if task in ("classification", "multiclass"):     # multiclass: two classes or more
        if data.y is None:
            raise ctx.error(None, "this model needs labels: give the generator 'labels'")
        found = sorted(set(data.y.tolist()), key=str)
        if len(found) == 1:
            raise ctx.error(None, f"the label column {data.label!r} has one class only "
                            f"({found[0]!r}); a classifier needs two")
        if len(found) > 2 and task == "classification":
            raise ctx.error(None, f"the label column {data.label!r} has {len(found)} classes "
                            f"{found[:8]}; this model is binary: choose two with {classes_hint}")
    data.columns = list(data.feature_names)
    if spec["standardize"]:
        data.scaling = _scaling(data.X)
        data.X = standardize(data.X)
        data.transforms.append("standardized (z-score, population std)")
    if spec["feature_map"] is not None:
        fm = validate(spec["feature_map"], FEATURE_MAP_KEYS, "data.feature_map", ctx)
        if fm["kind"] != "poly":
            raise ctx.error("data.feature_map.kind", f"unknown feature map {fm['kind']!r}; "
                            "valid: 'poly'")
        from ..kernels import polynomial_features      # scipy: only when asked for
        data.X = polynomial_features(data.X, degree=fm["degree"], gamma=fm["gamma"],
                                     coef0=fm["coef0"])
        data.feature_map = {k: fm[k] for k in ("degree", "gamma", "coef0")}
        data.transforms.append(f"polynomial feature map (degree={fm['degree']}, "
                               f"gamma={fm['gamma']:g}, coef0={fm['coef0']:g})")
        data.feature_names = [f"phi{j}" for j in range(data.X.shape[1])]
    return data


def _from_svmlight(spec: dict, path: Path, ctx: FileContext) -> Dataset:
    """An svmlight / LIBSVM data file (the label is each line's first field)."""
    from ..data import dense_or_refuse
    from ..svmlight import read_svmlight
    if spec["features"]:
        raise ctx.error("data.features", f"{path.name} is in svmlight format: its features "
                        f"are numbered, not named; leave 'features' out")
    data = read_svmlight(path)
    X = dense_or_refuse(data.X, "a problem read from an svmlight file")
    return Dataset(X=X, y=data.y, feature_names=[f"x{j + 1}" for j in range(X.shape[1])],
                   label=spec["label"] or "label", source=str(path),
                   source_sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def _from_csv(spec: dict, task: str, ctx: FileContext) -> Dataset:
    path = ctx.path.parent / spec["path"]
    if looks_like_svmlight(path):
        return _from_svmlight(spec, path, ctx)
    try:
        check_delimiter(spec["delimiter"])
    except ProblemFileError as exc:
        raise ctx.error("data.delimiter", str(exc)) from None
    table = CsvFile(path, spec["delimiter"])
    header = table.header
    label = spec["label"]
    if task != "points" and label is None:
        raise ctx.error(None, "[data] needs 'label': the column holding the labels or targets")
    for name in [label] * (label is not None) + (spec["features"] or []):
        if name not in header:
            raise ctx.error("data.features" if name != label else "data.label",
                            f"column {name!r} not in {path.name}; columns: {', '.join(header)}")
    features = spec["features"] or [h for h in header if h != label]
    if not features:
        raise ctx.error(None, f"{path.name} has no feature column besides {label!r}")
    y = None
    if label is None:
        X = table.numeric(features)
    elif task == "regression":
        Xy = table.numeric(features + [label])         # one pass of numpy's parser
        X, y = Xy[:, :-1], Xy[:, -1]
    else:
        X, y = table.features_and_labels(features, label)
    return Dataset(X=X, y=y, feature_names=features, label=label, source=str(path),
                   source_sha256=table.sha256)


#: Largest generated data set: its float64 arrays, n x (d + 1) x 8 bytes, may not exceed it.
MAX_GENERATED_BYTES = 1 << 30


def _check_generated_size(kind: str, params: dict, ctx: FileContext) -> None:
    """Refuse, before any allocation, a generator whose arrays would exceed 1 GiB (or an
    n or d below 1), stating the estimate."""
    n, d = params.get("n"), params.get("d", 2 if kind == "xor" else 1)
    if n is None:
        return
    for key, value in (("n", n), ("d", d)):
        if value < 1:
            raise ctx.error(f"data.generator.{key}", f"'data.generator.{key}' must be >= 1; "
                            f"got {value}")
    size = 8 * n * (d + 1)
    if size > MAX_GENERATED_BYTES:
        raise ctx.error("data.generator.n", f"generator {kind!r} with n={n}, d={d} would "
                        f"allocate about {size / 1e9:.3g} GB (n x (d + 1) float64 values); "
                        f"generated data are limited to {MAX_GENERATED_BYTES / 2**30:g} GiB: "
                        f"lower n or d")


def _generate(table: dict, ctx: FileContext) -> Dataset:
    kind = table.get("kind")
    if kind not in GENERATORS:
        raise ctx.error("data.generator.kind", f"unknown generator {kind!r}; valid: "
                        f"{', '.join(sorted(GENERATORS))}")
    func, keys = GENERATORS[kind]
    schema = {"kind": Key("string"), **{k: Key(t, d) for k, (t, d) in keys.items()}}
    params = validate(table, schema, "data.generator", ctx)
    params.pop("kind")
    _check_generated_size(kind, params, ctx)
    X, y = func(**params)
    return Dataset(X=X, y=y, feature_names=[f"x{j}" for j in range(X.shape[1])],
                   label="y" if y is not None else None, seed=params.get("seed"),
                   source=f"generator {kind}({', '.join(f'{k}={v!r}' for k, v in params.items())})")


# ------------------------------------------------------------------------------ entry
def load_problem(path: Any) -> Problem:
    """Read, validate and load one problem file.

    Raises
    ------
    ProblemFileError
        Missing or unreadable file, TOML syntax, unknown key, wrong type, bad data file
        (each naming the file and, where known, the line).
    """
    path = Path(path)
    raw, ctx = read_toml(path)
    top = validate(raw, TOP_KEYS, "", ctx)
    model_table = dict(top["model"])
    kind = model_table.pop("kind", None)
    if kind is None:
        raise ctx.error(None, "[model] needs 'kind' (svm, erm, halfspace or shattering)")
    if not isinstance(kind, str):
        raise ctx.error("model.kind", f"key 'model.kind' must be a string (svm, erm, halfspace "
                        f"or shattering); got {type(kind).__name__} {kind!r}")
    adapter = adapter_for(kind, where=f"{path}, line {ctx.line_of('model.kind')}")
    model = validate(model_table, adapter.model_keys, "model", ctx)
    expect = validate(top["expect"], adapter.expect_keys, "expect", ctx)
    run = validate(top["run"], RUN_KEYS, "run", ctx)
    if not run["tol"] > 0:
        raise ctx.error("run.tol", f"'run.tol' must be > 0; got {run['tol']!r}")
    for method, options in run["options"].items():
        if not isinstance(options, dict):
            raise ctx.error(f"run.options.{method}", f"'run.options.{method}' must be a table")
    methods = run["methods"] or list(adapter.default_methods)
    stray = sorted(set(expect.get("max_gap") or {}) - set(methods))
    if stray:
        raise ctx.error("expect.max_gap", f"'expect.max_gap' names method(s) {stray} that "
                        f"[run] does not run (methods: {', '.join(methods)})")
    data_spec = validate(top["data"], DATA_KEYS, "data", ctx)
    try:
        task = adapter.task(model)
    except ConvexLearnError as exc:
        raise ctx.error("model.loss", str(exc)) from None
    dataset = _load_data(data_spec, task, ctx, "'classes = [a, b]' in [data]")
    return Problem(path=path, name=top["name"], description=top["description"], kind=kind,
                   model=model, data=dataset, methods=run["methods"], tol=float(run["tol"]),
                   solver=run["solver"], solver_options=run["solver_options"],
                   options=run["options"], expect=expect)


def load_dataset(path: Any, label: str, classes: Any = None, features: ArrayLike | None = None,
                 standardize: bool = False,
                 task: str = "classification", delimiter: str = ",") -> Dataset:
    """A user's CSV file as a Dataset (the ``convexlearn separable`` command)."""
    path = Path(path)
    spec = {**{k: key.default for k, key in DATA_KEYS.items()}, "path": path.name,
            "label": label, "classes": classes, "features": features,
            "standardize": standardize, "delimiter": delimiter}
    return _load_data(spec, task, FileContext(path, ""), "--classes A B")


#: The ``solve DATA.csv`` flags of each model kind (the rest of [model] keeps its default).
MODEL_FLAGS = {"svm": ("C", "kernel", "gamma", "degree", "coef0"),
               "erm": ("loss", "penalty", "lam", "p", "l1_ratio")}


class _Flags:
    """Error context of command-line flags: a bad value names its flag (``--C``), not a
    line of a file."""

    def __init__(self, path: Path):
        self.path = path

    def error(self, dotted: str | None, message: str) -> ConvexLearnError:
        from ..errors import ParameterError
        key = (dotted or "").split(".")[-1]
        message = message.replace(f"key {dotted!r}: ", "").replace(f"'{dotted}'",
                                                                      f"--{key}")
        return ParameterError(f"--{key.replace('_', '-')}: {message}" if key else message)


def problem_from_csv(path: Any, label: str | None, model: dict, *, classes: Any = None,
                     features: Any = None, standardize: bool = False,
                     delimiter: str = ",", intercept: bool = True) -> Problem:
    """``convexlearn solve DATA.csv --label COL [--C ..] [--loss ..]``: the problem a
    problem file would describe, from the command line. ``model`` holds the flags given
    (None for the others): an SVM unless ``loss`` is given, then regularized ERM; its
    method is ``exact``.

    Raises
    ------
    ParameterError
        No ``--label``, flags of both kinds, a bad value (naming its flag).
    """
    from ..errors import ParameterError
    path = Path(path)
    if label is None:
        raise ParameterError(f"{path}: solving a CSV file needs --label COL, the column of "
                             f"the labels (or regression targets); the columns are the "
                             f"file's header line")
    given = {k: v for k, v in model.items() if v is not None}
    kind = "erm" if "loss" in given else "svm"
    stray = sorted(set(given) - set(MODEL_FLAGS[kind]))
    if stray:
        flags = ", ".join("--" + k.replace("_", "-") for k in stray)
        raise ParameterError(f"{flags}: flag(s) of regularized ERM, which needs --loss "
                             f"(e.g. --loss logistic)" if kind == "svm" else
                             f"{flags}: SVM flag(s); with --loss the model is regularized "
                             f"ERM (--penalty, --lam)")
    adapter = adapter_for(kind)
    ctx = _Flags(path)
    table = validate({**given, "intercept": intercept}, adapter.model_keys, "model", ctx)
    task = adapter.task(table)
    dataset = load_dataset(path, label, classes=classes, features=features,
                           standardize=standardize, task=task, delimiter=delimiter)
    return Problem(path=path, name=path.stem, description="", kind=kind, model=table,
                   data=dataset, methods=None, tol=RUN_KEYS["tol"].default, solver=None,
                   solver_options={}, options={}, expect={})


def find_problem_files(paths: Any) -> list[Path]:
    """The ``*.toml`` files named by ``paths`` (files, or directories searched one level)."""
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(sorted(p.glob("*.toml")))
        elif p.exists():
            found.append(p)
        else:
            raise ProblemFileError(f"{p}: no such file or directory")
    if not found:
        raise ProblemFileError(f"no problem files (*.toml) in {', '.join(map(str, paths))}")
    return found
