"""``python -m cfrkit``: the same command line as the ``cfrkit`` console script."""

import sys

from .cli import main

sys.exit(main())
