"""The error hierarchy of convexlearn.

Every error raised on purpose by the package derives from :class:`ConvexLearnError`,
which itself derives from :class:`ValueError` so that code written against
scikit-learn style ``except ValueError`` keeps working.

====================  =========================================================
class                 raised when
====================  =========================================================
DataError             the data are unusable (NaN, wrong shape, one class, ...)
ProblemFileError      a problem file or its CSV data is malformed (names file and line)
ParameterError        a parameter is out of range or unknown (C <= 0, kernel=...)
NotPSDError           a kernel matrix is clearly indefinite (not convex)
InfeasibleError       the problem has no feasible point (hard margin, non-separable)
UnboundedError        the problem is unbounded / has no finite minimizer
SolverError           a numerical solver failed to produce an answer
NotApplicableError    a method cannot solve this problem (Newton on hinge, ...)
====================  =========================================================

Messages name the thing that is wrong: the parameter and its value, the shape,
the labels found, the file, line and column.
"""

from __future__ import annotations

__all__ = [
    "ConvexLearnError",
    "DataError",
    "ProblemFileError",
    "ParameterError",
    "NotPSDError",
    "InfeasibleError",
    "UnboundedError",
    "SolverError",
    "NotApplicableError",
]


class ConvexLearnError(ValueError):
    """Root of every error convexlearn raises on purpose."""


class DataError(ConvexLearnError):
    """The input data cannot be used as given (shape, values, labels)."""


class ProblemFileError(DataError):
    """A problem file (or the data it names) is unusable; the message names file and line."""


class ParameterError(ConvexLearnError):
    """A parameter is unknown or outside its domain."""


class NotPSDError(DataError):
    """A kernel (Gram) matrix is indefinite beyond round-off.

    The smallest eigenvalue and the tolerance are carried in ``min_eigenvalue``
    and ``tolerance``.
    """

    def __init__(self, message: str, min_eigenvalue: float = float("nan"),
                 tolerance: float = float("nan")):
        super().__init__(message)
        self.min_eigenvalue = min_eigenvalue
        self.tolerance = tolerance


class InfeasibleError(ConvexLearnError):
    """The optimization problem has no feasible point."""


class UnboundedError(ConvexLearnError):
    """The optimization problem is unbounded or has no finite minimizer."""


class SolverError(ConvexLearnError):
    """A numerical solver failed (crashed, or returned no usable point)."""


class NotApplicableError(ConvexLearnError):
    """A method does not apply to the problem it was asked to solve.

    The message names the method, the problem and what the method needs.
    """
