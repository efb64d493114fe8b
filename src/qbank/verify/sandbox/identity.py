"""Who a sandboxed script runs as: never root. As root, a fresh unprivileged uid per job.

bubblewrap started by root maps the sandbox's uid to root outside (a root-only file bound in stays
readable), so a root qbank first drops to a dedicated uid/gid from a high range (no groups, no new
privileges) and lets bwrap make an unprivileged user namespace. One uid per job keeps RLIMIT_NPROC
per job. An unprivileged qbank runs bwrap as itself.
"""

from __future__ import annotations

import os
import secrets

UID_BASE = 0x5A000000  # far above any /etc/passwd entry and below the overflow and -1 ids
UID_SPAN = 0x00FFFFFF
SETPRIV = "/usr/bin/setpriv"


def is_root() -> bool:
    """Whether qbank runs as root (then scripts get a dedicated uid)."""
    return os.geteuid() == 0


def job_uid() -> int | None:
    """A fresh uid for one job when running as root, else None (run as ourselves)."""
    return UID_BASE + secrets.randbelow(UID_SPAN) if is_root() else None


def drop_prefix(uid: int | None) -> list[str]:
    """The command prefix that switches to ``uid`` (same gid, no groups, no new privileges)."""
    if uid is None:
        return []
    return [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
