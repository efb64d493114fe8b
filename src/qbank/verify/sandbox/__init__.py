"""The wall around verification scripts.

- :mod:`.bwrap`: the bubblewrap command line (pure), :mod:`.view`: what a script may see,
  :mod:`.seccomp`: the system-call filter, :mod:`.limits`: cgroups for the whole process tree,
  :mod:`.identity`: the unprivileged uid a job runs as, :mod:`.probe`: is the wall available here;
- :mod:`.layers`: the launcher's in-process layers (rlimits, audit hook; and for ``--trust-local`` only,
  the old home-made namespaces).
"""

from .layers import (
    CLONE_NEWNET,
    CLONE_NEWNS,
    AuditHook,
    SandboxError,
    SandboxExecError,
    SandboxNetworkError,
    SandboxReadError,
    SandboxWriteError,
    hide,
    install,
    readonly_bind,
    set_limits,
    unshare,
)

__all__ = [
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "AuditHook",
    "SandboxError",
    "SandboxExecError",
    "SandboxNetworkError",
    "SandboxReadError",
    "SandboxWriteError",
    "hide",
    "install",
    "readonly_bind",
    "set_limits",
    "unshare",
]
