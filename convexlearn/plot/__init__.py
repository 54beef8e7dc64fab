"""Plots of convexlearn's problems and answers (needs matplotlib: the ``plot`` extra).

Every function draws on a matplotlib ``ax`` (a new Figure when ``ax=None``, through the
object-oriented API: no pyplot, no global state, no display needed) and returns it:

* :func:`plot_decision` - a 2-D classifier's f = 0, margins f = +-1, support vectors;
* :func:`plot_separability` - the maximal-margin hyperplane, or the two convex hulls
  and the certificate's points meeting at a common point;
* :func:`plot_shattering` - a 2-D point set: a line for every labeling, or the
  labeling no line realizes with its certificate;
* :func:`plot_convergence` - relative suboptimality against the certified optimum;
* :func:`plot_path` - coefficients or objective along a regularization path.

matplotlib is imported when a function is called, never on ``import convexlearn``.
"""

from .convergence import plot_convergence, plot_path
from .decision import plot_decision
from .separability import plot_separability, plot_shattering

__all__ = ["plot_decision", "plot_separability", "plot_shattering", "plot_convergence",
           "plot_path"]
