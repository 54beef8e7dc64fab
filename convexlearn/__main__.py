"""``python -m convexlearn``: the same as the ``convexlearn`` command."""

import sys

from .app.cli import main

sys.exit(main())
