"""The build's helpers run below the build's own process.

A build's own process renders every page, one after another: its time is the build's time. Its helpers (the
card workers, the page worker, the Pagefind service) have work that can wait a little: what they owe is
collected at the end of a pass or of the build. When they and the build share a core, the kernel shares it by
weight; at a niceness of ``NICE`` a helper gets about a quarter of a core the build wants as well, so the
build's process keeps a core nearly to itself and the helpers take the rest.
"""

from __future__ import annotations

import contextlib
import os

NICE = 5
"""How much lower a helper runs than the build (CFS weights 1024 against 335)."""


def lower_this_process() -> None:
    """Run the calling process (a worker, at its start) ``NICE`` below where it was; not an error where the
    system refuses."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(NICE)


def lower(pid: int) -> None:
    """Run a child process (a service just started) ``NICE`` below this one."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, 0) + NICE)
