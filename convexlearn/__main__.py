"""``python -m convexlearn``: the same as the ``convexlearn`` command."""

from .app.cli import run

run()
