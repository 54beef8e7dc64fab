import os
import sys

from hypothesis import settings

# Property tests: a modest number of examples, no per-example deadline (cvxpy's first
# call compiles); CI gets the same profile, so the suite time is predictable.
settings.register_profile("convexlearn", max_examples=25, deadline=None)
settings.load_profile("convexlearn")

sys.path.insert(0, os.path.dirname(__file__))
