"""``python -m qbank.cli``: the ``qbank`` console script."""

import sys

from . import main

sys.exit(main())
