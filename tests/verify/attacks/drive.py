"""Test-only entry point: ``qbank`` with the static check switched off, so an attack reaches the sandbox.

The static check (``qbank.verify.lint``) refuses every case of the sandbox suite before it runs; the
walls underneath must hold on their own too. The product has no flag for this on purpose: only this
file, which lives in the tests, turns it off. The harness runs each such case twice: through the real
CLI (the static check must refuse it) and through this driver (the sandbox must contain it).
"""

from __future__ import annotations

import dataclasses
import sys

from qbank.verify import options

if __name__ == "__main__":
    options.RunOptions.__init__.__defaults__ = tuple(  # type: ignore[misc]
        False if f.name == "static_check" else f.default
        for f in dataclasses.fields(options.RunOptions)
        if f.default is not dataclasses.MISSING
    )
    from qbank.cli import main

    sys.exit(main(sys.argv[1:]))
