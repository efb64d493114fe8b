"""Is the wall available here? One real bubblewrap start (the same uid switch and filter as a run)."""

from __future__ import annotations

import functools
import os
import subprocess
from subprocess import TimeoutExpired  # by name: cosmic-ray cannot mutate a dotted name in an except tuple

from .bwrap import BWRAP

HOW_TO_FIX = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; `make test` does it as root) and allow "
    "unprivileged user namespaces (sysctl user.max_user_namespaces > 0; on Ubuntu 24.04+ also "
    "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`); or, only for your own scripts on your own "
    "machine, pass --trust-local"
)


def missing(bwrap: str = BWRAP) -> str | None:
    """Why scripts cannot run sandboxed here (None when they can); starts bwrap once, cached per path."""
    return _missing(bwrap)


@functools.lru_cache(maxsize=4)
def _missing(bwrap: str) -> str | None:
    from . import identity, seccomp

    if not os.path.isfile(bwrap) or not os.access(bwrap, os.X_OK):
        return f"bubblewrap is not installed ({bwrap} is missing)"
    try:
        bpf = seccomp.compile_filter()
    except seccomp.SeccompUnavailable as exc:
        return f"no seccomp filter: {exc}"
    rfd, wfd = os.pipe()
    try:
        os.write(wfd, bpf)
        os.close(wfd)
        wfd = -1
        cmd = [
            bwrap,
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
            "--seccomp",
            str(rfd),
            "--",
            "/usr/bin/true",
        ]
        try:
            proc = subprocess.run(
                [*identity.drop_prefix(identity.job_uid()), *cmd],
                pass_fds=(rfd,),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                env={"PATH": "/usr/bin:/bin"},
            )
        except (OSError, TimeoutExpired) as exc:
            return f"bubblewrap could not start: {exc}"
    finally:
        os.close(rfd)
        if wfd >= 0:
            os.close(wfd)
    if proc.returncode != 0:
        why = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot build the sandbox here (user namespaces refused?): {why}"
    return None
