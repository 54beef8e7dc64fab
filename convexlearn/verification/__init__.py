"""Verify anyone's answer: a fitted scikit-learn estimator, a LIBSVM or LIBLINEAR model
file, a convexlearn solution or raw arrays, mapped to the problem it claims to solve and
checked against that problem's certified optimum (docs/verify.md)."""

from .api import VerifyReport, verify
from .report import certified_optimum, clear_cache

__all__ = ["verify", "VerifyReport", "certified_optimum", "clear_cache"]
