"""Child-side sandbox layers, applied by the launcher before a script runs.

- resource limits: address space, CPU seconds, file size, no core dumps;
- namespaces (Linux, root or user namespaces): a fresh network namespace (no interfaces up, so no
  network at all) and a mount namespace in which the repository is bind-mounted read-only;
- an audit hook (PEP 578) that refuses socket creation when no network namespace could be made,
  refuses writes outside the run folder, and records which repository files the script read.

The audit hook is a tripwire for honest mistakes, not a wall: ctypes can step around it. The
namespaces are enforced by the kernel.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
WRITE_EVENTS = {
    "os.remove",
    "os.rmdir",
    "os.mkdir",
    "os.rename",
    "os.symlink",
    "os.link",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.utime",
    "shutil.rmtree",
    "shutil.copyfile",
    "shutil.move",
}
# without a network namespace a program started by the script would have the network: refuse those too
EXEC_EVENTS = {"os.exec", "os.posix_spawn", "os.spawn", "os.system", "subprocess.Popen", "pty.spawn"}
SOCKET_EVENTS = {"socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo"}


class SandboxError(PermissionError):
    """Something the sandbox refuses."""


class SandboxNetworkError(SandboxError):
    """A socket was requested while network access is off."""


class SandboxWriteError(SandboxError):
    """A write outside the run folder."""


class SandboxReadError(SandboxError):
    """A read of a credential file of the user running qbank."""


class SandboxExecError(SandboxError):
    """A program started while only the in-interpreter network refusal stands guard."""


def set_limits(mem_bytes: int | None, cpu_seconds: int | None, fsize_bytes: int | None) -> None:
    """Apply address-space, CPU-time and file-size limits to this process and its children."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if mem_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    if cpu_seconds:
        # soft limit sends SIGXCPU (a traceback can be dumped); the hard one kills
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    if fsize_bytes:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_bytes, fsize_bytes))


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def unshare(flags: int) -> str | None:
    """Enter new namespaces; None on success, else why not.

    Root (CAP_SYS_ADMIN) gets them directly; anyone else tries through a user namespace, which most
    Linux kernels allow unprivileged users (and which keeps the same file access).
    """
    if not sys.platform.startswith("linux"):
        return "not Linux"
    libc = _libc()
    if libc.unshare(ctypes.c_int(flags)) == 0:
        return None
    why = os.strerror(ctypes.get_errno())
    if os.geteuid() != 0 and libc.unshare(ctypes.c_int(flags | CLONE_NEWUSER)) == 0:
        return None
    return why


def readonly_bind(path: str) -> str | None:
    """Inside a fresh mount namespace: make ``path`` a read-only bind mount of itself; None on success."""
    libc = _libc()
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    target = path.encode()
    steps = [
        (b"none", b"/", MS_REC | MS_PRIVATE),  # keep our mounts from propagating to the host
        (target, target, MS_BIND | MS_REC),
        (target, target, MS_BIND | MS_REMOUNT | MS_RDONLY),
    ]
    for src, dst, flags in steps:
        if libc.mount(src, dst, None, ctypes.c_ulong(flags), None) != 0:
            return os.strerror(ctypes.get_errno())
    return None


def hide(paths: list[str]) -> list[str]:
    """Inside a fresh mount namespace: cover credential folders with an empty tmpfs and files with /dev/null."""
    libc = _libc()
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    failed = []
    for path in paths:
        target = path.encode()
        if os.path.isdir(path):
            ok = libc.mount(b"tmpfs", target, b"tmpfs", ctypes.c_ulong(MS_RDONLY), None) == 0
        else:
            ok = libc.mount(b"/dev/null", target, None, ctypes.c_ulong(MS_BIND), None) == 0
        if not ok:
            failed.append(f"{path}: {os.strerror(ctypes.get_errno())}")
    return failed


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in roots)


@dataclass
class AuditHook:
    """State of the launcher's audit hook; ``armed`` turns enforcement on once the script starts."""

    repo: str
    run_dir: str
    excluded: tuple[str, ...]
    refuse_sockets: bool
    refuse_writes: bool
    hidden: tuple[str, ...] = ()
    armed: bool = False
    reads: set[str] = field(default_factory=set)
    writable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.writable = (self.run_dir, "/dev")

    def _path(self, raw: Any) -> str | None:
        if isinstance(raw, bytes):
            raw = os.fsdecode(raw)
        if not isinstance(raw, str):
            return None  # a file descriptor: already opened
        return os.path.realpath(raw)

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        """The hook itself: cheap for the events it ignores."""
        if not self.armed:
            return
        if event == "open":
            path = self._path(args[0])
            if path is None:
                return
            mode = args[1] if len(args) > 1 else None
            flags = args[2] if len(args) > 2 else 0
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(
                isinstance(flags, int) and flags & WRITE_FLAGS
            )
            if _inside(path, self.hidden):
                raise SandboxReadError(errno.EACCES, f"credential files are not readable by scripts: {path}")
            if writes:
                self._check_write(path)
            elif _inside(path, (self.repo,)) and not _inside(path, self.excluded):
                self.reads.add(path)
        elif event in WRITE_EVENTS:
            for raw in args[:2] if event in {"os.rename", "os.symlink", "os.link", "shutil.move"} else args[:1]:
                path = self._path(raw)
                if path is not None:
                    self._check_write(path)
        elif self.refuse_sockets and event in SOCKET_EVENTS:
            raise SandboxNetworkError(errno.EACCES, "network access is disabled for verification scripts")
        elif self.refuse_sockets and event in EXEC_EVENTS:
            raise SandboxExecError(errno.EACCES, "starting programs is refused when no network namespace is available")

    def _check_write(self, path: str) -> None:
        if self.refuse_writes and not _inside(path, self.writable):
            raise SandboxWriteError(errno.EACCES, f"writing outside the working directory is refused: {path}")


def install(hook: Callable[[str, tuple[Any, ...]], None]) -> None:
    """Install the audit hook for the rest of the process (hooks cannot be removed)."""
    sys.addaudithook(hook)
