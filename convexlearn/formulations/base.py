"""What every exact formulation shares: the :class:`Formulation` record and one solve routine.

A formulation is the *meaning* of a problem (a cvxpy Problem with named variables,
constraints and parameters); :func:`solve_formulation` is *how* it is solved: solver
choice, tolerances, status mapping and provenance. cvxpy's status is never taken as a
verdict by itself: callers run the matching optimality check afterwards.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from ..errors import InfeasibleError, ParameterError, SolverError, UnboundedError

if TYPE_CHECKING:   # cvxpy (~0.4-0.8 s to import) is imported by the functions that use it
    import cvxpy as cp

__all__ = ["Formulation", "SolveInfo", "solve_formulation", "default_solver", "solver_version",
           "silence_highs_banner"]

#: cvxpy statuses (the values of cvxpy.OPTIMAL, ...; tests/formulations check them) after
#: which a point is available.
_WITH_POINT = {"optimal", "optimal_inaccurate"}
_INFEASIBLE = {"infeasible", "infeasible_inaccurate"}
_UNBOUNDED = {"unbounded", "unbounded_inaccurate"}

# Tight but reachable interior-point tolerances for reference solutions (Clarabel's
# defaults are 1e-8); the KKT check afterwards decides whether the point is trusted.
CLARABEL_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                    "tol_ktratio": 1e-8, "max_iter": 400}


@dataclass
class Formulation:
    """A declarative problem with handles on its parts.

    Attributes
    ----------
    problem : cvxpy.Problem
    variables : dict[str, cvxpy.Variable]
    constraints : dict[str, cvxpy.Constraint]
        Named constraints, for reading dual values.
    parameters : dict[str, cvxpy.Parameter]
        Named parameters (e.g. ``C`` or ``lam``), for re-solving without recompiling.
    name : str
        Human-readable name, used in messages ("SVM primal (slack form)").
    kind : str
        "qp", "lp" or "conic": which solver family fits.
    """

    problem: cp.Problem
    variables: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    name: str = ""
    kind: str = "qp"


@dataclass
class SolveInfo:
    """What happened in a cvxpy solve."""

    status: str          # "optimal" or "inaccurate" (cvxpy's optimal_inaccurate)
    cvxpy_status: str
    solver: str
    solver_version: str
    iterations: int | None
    time_s: float
    options: dict

    def provenance(self) -> dict:
        """``solver``, ``solver_version``, ``cvxpy_version``, ``cvxpy_status`` and
        ``solver_options`` of this solve.
        """
        import cvxpy as cp      # loaded already: this records a cvxpy solve
        return {"solver": self.solver, "solver_version": self.solver_version,
                "cvxpy_version": cp.__version__, "cvxpy_status": self.cvxpy_status,
                "solver_options": dict(self.options)}


@functools.lru_cache(maxsize=None)
def _installed() -> frozenset:
    # cp.installed_solvers() probes imports (~1 ms): once per process is enough.
    import cvxpy as cp
    return frozenset(cp.installed_solvers())


@functools.lru_cache(maxsize=None)
def solver_version(solver: str) -> str:
    """Installed version of a solver's Python package ("unknown" when not found)."""
    package = {"CLARABEL": "clarabel", "HIGHS": "highspy", "OSQP": "osqp", "SCS": "scs",
               "ECOS": "ecos", "SCIPY": "scipy"}.get(solver.upper(), solver.lower())
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


@functools.lru_cache(maxsize=None)
def silence_highs_banner() -> None:
    """Construct the process's first ``highspy.Highs`` with standard output sent to /dev/null.

    highspy 1.16 prints a copyright banner on standard output (from C++, file descriptor 1)
    the first time a Highs object is made in a process, before ``output_flag`` can be set;
    later objects are silent. Every HiGHS solve here (direct or through cvxpy) calls this
    first, so that a report printed to standard output holds only the report. Runs once
    (cached); a write of another thread during that construction would be lost too.
    """
    try:
        import highspy
    except ImportError:
        return
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:         # no standard output to protect (fd 1 closed)
        highspy.Highs()
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def default_solver(kind: str) -> str:
    """The solver used when none is named: HiGHS for LPs, Clarabel otherwise."""
    return "HIGHS" if kind == "lp" and "HIGHS" in _installed() else "CLARABEL"


def solve_formulation(form: Formulation, solver: str | None = None, *,
                      infeasible_message: str | None = None,
                      unbounded_message: str | None = None, **options) -> SolveInfo:
    """Solve ``form.problem`` and map cvxpy's status onto convexlearn's errors.

    Raises
    ------
    InfeasibleError, UnboundedError
        With the caller's message (which should say what infeasibility means here).
    SolverError
        When the solver fails or returns no point.
    ParameterError
        When the named solver is not installed.
    """
    solver = (solver or default_solver(form.kind)).upper()
    if solver not in _installed():
        raise ParameterError(f"solver {solver!r} is not installed; installed: "
                             f"{', '.join(sorted(_installed()))}")
    user_options = sorted(options)
    if solver == "CLARABEL":
        options = {**CLARABEL_OPTIONS, **options}
    elif solver == "HIGHS":
        silence_highs_banner()
    import cvxpy as cp
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # cvxpy warns on optimal_inaccurate; we report it through the status instead.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            form.problem.solve(solver=solver, **options)
    except TypeError as exc:
        # Clarabel and friends reject unknown keyword options with a TypeError.
        raise ParameterError(f"{solver} rejected an option among {user_options}: {exc}") from None
    except (cp.error.SolverError, ValueError) as exc:
        # cvxpy can also fail with a bare ValueError while unpacking a solver's bad point.
        raise SolverError(f"{solver} failed on the {form.name}: {exc}") from None
    elapsed = time.perf_counter() - start
    status = form.problem.status
    if status in _INFEASIBLE:
        raise InfeasibleError(infeasible_message or f"the {form.name} is infeasible "
                              f"({solver}: {status})")
    if status in _UNBOUNDED:
        raise UnboundedError(unbounded_message or f"the {form.name} is unbounded "
                             f"({solver}: {status})")
    if status not in _WITH_POINT:
        raise SolverError(f"{solver} returned status {status!r} on the {form.name}")
    stats = form.problem.solver_stats
    return SolveInfo(
        status="optimal" if status == "optimal" else "inaccurate",
        cvxpy_status=status, solver=solver, solver_version=solver_version(solver),
        iterations=getattr(stats, "num_iters", None), time_s=elapsed, options=options)
