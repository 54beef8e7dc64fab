"""What ``convexlearn solve`` prints and writes: the table, the JSON record, atomic files.

The table has one line per method: status, objective, relative gap to the exact
reference ``(F - F*) / |F*|``, the largest scaled KKT residual (SVM) or the
distance of 0 to the subdifferential (ERM), support vectors free/bounded, iterations and
time. The JSON record holds the same facts plus provenance: package, Python, numpy,
cvxpy and solver versions, tolerances, seeds and sha256 checksums of the data.

The record's ``solutions`` hold every method's whole answer (``Solution.to_dict``: w,
alpha, b, xi, support, history, provenance, report), each readable by ``convexlearn.load``.
Files are written by :mod:`convexlearn.app.outputs`: all or nothing, never partial.
"""

from __future__ import annotations

from typing import Any

import json
import math
import platform
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from .outputs import check_writable, write_all_atomic

__all__ = ["format_table", "format_report", "result_record", "provenance", "write_atomic",
           "write_all_atomic", "check_writable", "dumps", "provenance_of_data",
           "separability_record", "RUN_FORMAT", "RUN_FORMAT_VERSION"]


def _fmt(value, spec: str = ".6g") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def format_table(rows: Any) -> str:
    """The per-method table, aligned; the exact reference is marked with '*', and the route
    the exact chain took is named beside it: "exact (exact-linear)".
    """
    header = ["method", "status", "cert. tol", "objective", "gap", "violation", "SV free/bnd",
              "iters", "time (s)"]
    lines = [header]
    mark = any(r.gap is not None for r in rows)       # a reference only where gaps exist
    for r in rows:
        sv = "-" if r.n_free is None else f"{r.n_free}/{r.n_bounded}"
        label = r.method if r.route is None else f"{r.method} ({r.route})"
        lines.append([label + (" *" if r.reference and mark else ""), r.status,
                      r.cert_tol or "-", _fmt(r.objective, ".10g"), _fmt(r.gap, ".1e"), _fmt(r.violation, ".1e"),
                      sv, _fmt(r.n_iter, "d"), _fmt(r.time_s, ".3f")])
    # Columns no method fills (gaps of a decision problem, SVs of ERM) are left out.
    keep = [j for j in range(len(header)) if j < 2 or any(line[j] != "-" for line in lines[1:])]
    lines = [[line[j] for j in keep] for line in lines]
    header = lines[0]
    widths = [max(len(line[j]) for line in lines) for j in range(len(header))]
    out = ["  ".join(cell.ljust(w) if j < 2 else cell.rjust(w)
                     for j, (cell, w) in enumerate(zip(line, widths))).rstrip()
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def format_report(result: Any) -> str:
    """The full text report of one run: header, table, separability, expectations."""
    p, d = result.problem, result.problem.data
    classes = ""
    if getattr(result.model, "label_map", None) is not None:
        classes = f", labels {result.model.label_map.describe()}"
    lines = [f"{p.name}: {p.description}".rstrip(": "),
             f"  data: {d.X.shape[0]} samples x {d.X.shape[1]} features from "
             f"{d.source}{classes}",
             *(f"  transform: {t}" for t in d.transforms),
             f"  model: {_model_text(result)}; tolerance {result.tol:g} (iterative methods "
             f"and their checks)",
             "", format_table(result.rows)]
    if any(r.gap is not None for r in result.rows):
        lines.append("  * exact reference F*; gap = (F - F*) / |F*|")
    if any(r.violation is not None for r in result.rows):
        lines.append("  violation = largest scaled KKT residual (SVM) or distance of 0 to dF "
                     "(ERM)")
    if any(r.cert_tol is not None for r in result.rows):
        lines.append("  cert. tol = the tolerance the status was decided at (relative); 'gap': "
                     "the relative duality gap, the KKT residuals within the run's tolerance")
    if result.facts:
        lines += ["", "facts: " + ", ".join(f"{k}={_value(v)}" for k, v in result.facts.items())]
    if result.separability is not None:
        lines += ["", "separability:",
                  *("  " + s for s in result.separability.summary().splitlines())]
    if result.checks:
        failed = [c for c in result.checks if not c.passed]
        lines += ["", f"expectations: {len(result.checks) - len(failed)}/{len(result.checks)} met"]
        for c in result.checks:
            lines.append(f"  {'ok  ' if c.passed else 'FAIL'} {c.name}: expected "
                         f"{_value(c.expected)}, got {_value(c.actual)}")
    return "\n".join(lines)


def _model_text(result) -> str:
    """The model's own description where it has one (SVM, ERM), else the file's keys."""
    describe = getattr(result.model, "describe", None)
    if callable(describe):
        return describe()
    p = result.problem
    return f"{p.kind} " + ", ".join(f"{k}={v}" for k, v in p.model.items())


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def provenance(result: Any) -> dict:
    """Versions, tolerances, seeds and checksums: enough to reproduce the run."""
    import cvxpy
    solvers = sorted({str(sol.provenance.get("solver")) for sol in result.solutions.values()
                      if getattr(sol, "provenance", {}).get("solver")})
    d = result.problem.data
    return {
        "convexlearn": _package_version("convexlearn"),
        "python": platform.python_version(), "numpy": np.__version__,
        "cvxpy": cvxpy.__version__,
        "solvers": {s: _solver_version(s) for s in solvers},
        "tolerance": result.tol,
        "solver_options": result.problem.solver_options,
        "method_options": result.problem.options,
        "seed": d.seed,
        "data_sha256": d.sha256, "source": d.source, "source_sha256": d.source_sha256,
        "problem_file": str(result.problem.path),
    }


def provenance_of_data(data: Any) -> dict:
    """Where a Dataset came from and its checksums, with the package versions."""
    import cvxpy
    return {"n_samples": data.X.shape[0], "n_features": data.X.shape[1],
            "features": data.feature_names, "label": data.label, "source": data.source,
            "transforms": data.transforms, "data_sha256": data.sha256,
            "source_sha256": data.source_sha256,
            "convexlearn": _package_version("convexlearn"), "cvxpy": cvxpy.__version__,
            "numpy": np.__version__, "python": platform.python_version()}


def _solver_version(solver: str) -> str:
    from ..formulations.base import solver_version
    return solver_version(solver)


def _jsonable(value):
    """numpy scalars/arrays, infinities and NaN into strict JSON values."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


#: The ``format`` field of a ``convexlearn solve --json`` record, and its version.
RUN_FORMAT, RUN_FORMAT_VERSION = "convexlearn.run", 1


def result_record(result: Any) -> dict:
    """The JSON record of one run: the table's facts, the checks, provenance, and every
    method's whole solution (``solutions``: method -> ``Solution.to_dict()``, with the
    data's sha256 added to each provenance so that a later diff can tell another problem).
    """
    p = result.problem
    ref = result.reference
    solutions = {}
    for method, sol in result.solutions.items():
        data = sol.to_dict()
        data["provenance"] = {**data["provenance"], "data_sha256": p.data.sha256,
                              "problem": p.name}
        solutions[method] = data
    record = {
        "format": RUN_FORMAT, "format_version": RUN_FORMAT_VERSION,
        "reference": None if ref is None else ref.method,
        "problem": {"name": p.name, "description": p.description, "file": str(p.path),
                    "kind": p.kind, "model": p.model},
        "data": {"n_samples": p.data.X.shape[0], "n_features": p.data.X.shape[1],
                 "classes": (result.model.label_map.classes.tolist()
                             if getattr(result.model, "label_map", None) is not None else None),
                 "transforms": p.data.transforms},
        "results": [{k: v for k, v in vars(row).items() if k != "history"}
                    for row in result.rows],
        "facts": result.facts,
        "expectations": [vars(c) for c in result.checks],
        "passed": result.passed,
        "provenance": provenance(result),
    }
    if result.separability is not None:
        record["separability"] = separability_record(result.separability)
    from .predict import predictor_record
    record["predictor"] = predictor_record(result)        # for `convexlearn predict`
    record = _jsonable(record)
    record["solutions"] = solutions          # already exact JSON data (tagged non-finite)
    return record


def separability_record(res: Any) -> dict:
    """The facts of a SeparabilityResult (verdict and certificate)."""
    return _jsonable({
        "separable": res.separable, "verified": res.verified, "homogeneous": res.homogeneous,
        "w": res.w, "b": res.b, "margin": res.margin, "certificate": res.certificate,
        "meeting_point": res.meeting_point, "min_total_slack": res.min_total_slack,
        "checks": [str(c) for c in res.checks], "notes": list(res.notes),
        "provenance": res.provenance})


def dumps(record: dict) -> str:
    """``record`` as strict JSON text, indented, with a final newline: numpy values become
    Python ones, NaN becomes null and +-inf the strings "inf" / "-inf".
    """
    return json.dumps(_jsonable(record), indent=2, allow_nan=False) + "\n"


def write_atomic(path: Any, content: Any) -> None:
    """Write one file atomically (see :func:`~convexlearn.app.outputs.write_all_atomic`)."""
    write_all_atomic([(path, content)])
