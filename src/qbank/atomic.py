"""Whole-file writes: a reader sees the old file, the new one, or none — never half of one.

The bytes go to a temporary file beside the target (its name unique to this process and thread, so concurrent
writers never share it), created afresh with the requested mode, then renamed over the target. A failed write
removes the temporary file and raises.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` whole (temp file + rename); the file is created with ``mode`` (less umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.unlink(missing_ok=True)  # a leftover of a crashed writer must not keep its own mode
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
