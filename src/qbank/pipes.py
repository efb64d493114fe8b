"""Pipes between the build and its helpers, widened so a few pages fit in one."""

from __future__ import annotations

import contextlib
import fcntl

PIPE_SIZE = 1 << 20
"""Bytes a widened pipe holds (Linux's default most, ``/proc/sys/fs/pipe-max-size``): a few pages, so the build
hands a page over and renders on while the helper is still reading the last one."""


def widen(fd: int) -> None:
    """Let the pipe at ``fd`` hold ``PIPE_SIZE`` bytes; where the system refuses (not Linux, a lower limit) it
    keeps its size, and the writer only waits more."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
