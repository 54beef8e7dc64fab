"""Capabilities: what a loss or a penalty can give a solver or a certificate.

A catalogue entry (a :class:`~convexlearn.losses.Loss` or a
:class:`~convexlearn.penalties.Penalty`) declares the set of capability names it has;
solvers and certificates ask for capabilities (``has``), never for a name, and a solver
that cannot run says which capability is missing (``require``). So a loss or penalty
added to its catalogue reaches every solver whose needs it meets, and no other file
changes.

The shapes below say how the exact (cvxpy) formulation is written: a problem whose loss
and penalty both have one of :data:`QP_SHAPES` is a QP, any other a conic problem.
"""

from __future__ import annotations

from .errors import NotApplicableError

__all__ = ["Capable", "QP_SHAPES"]

#: Shapes of a loss (in f) or a penalty (in w) that a quadratic program represents.
QP_SHAPES = frozenset({"zero", "piecewise_linear", "quadratic", "piecewise_quadratic"})


class Capable:
    """Mixin of :class:`Loss` and :class:`Penalty`: capabilities declared and queried.

    A subclass sets ``KIND`` ("loss" or "penalty"), ``VOCABULARY`` (capability name ->
    what it provides, the only names ``has`` accepts: a misspelt name is an error, not a
    silent "no") and implements :meth:`capabilities`.
    """

    KIND = ""
    VOCABULARY: dict[str, str] = {}

    def capabilities(self) -> frozenset[str]:
        """The capability names this entry has."""
        raise NotImplementedError

    def label(self) -> str:
        """How messages name this entry, e.g. ``hinge`` or ``elastic_net(l1_ratio=0.5)``."""
        return getattr(self, "name", type(self).__name__)

    def has(self, *names: str) -> bool:
        """True when every capability in ``names`` is present."""
        caps = self.capabilities()
        if all(c in caps for c in names):
            return True
        unknown = [c for c in names if c not in self.VOCABULARY]
        if unknown:
            raise ValueError(f"unknown {self.KIND} capability {unknown}; known: "
                             f"{sorted(self.VOCABULARY)}")
        return False

    def require(self, method: str, problem: str, *names: str) -> None:
        """Raise NotApplicableError naming ``method``, ``problem`` and each capability in
        ``names`` this entry lacks (with what that capability provides)."""
        self.require_any(method, problem, names)

    def require_any(self, method: str, problem: str, *alternatives: tuple) -> None:
        """:meth:`require` for a method content with any one of several capability sets
        (e.g. least squares, or a bounded Hessian): the error lists what each one lacks."""
        if any(self.has(*need) for need in alternatives):
            return
        have = self.capabilities()
        options = [" and ".join(f"'{c}' ({self.VOCABULARY[c]})" for c in need
                                if c not in have) for need in alternatives]
        raise NotApplicableError(
            f"{method} cannot solve {problem}: it needs the {self.KIND} capability "
            f"{' or '.join(options)}, which the {self.label()} {self.KIND} lacks (it has: "
            f"{', '.join(sorted(have))})")
