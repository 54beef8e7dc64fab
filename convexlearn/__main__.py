"""``python -m convexlearn``: the same as the ``convexlearn`` command."""

import sys

from .cli import main

sys.exit(main())
