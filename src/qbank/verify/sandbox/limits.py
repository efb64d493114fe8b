"""Limits for a run's whole process tree: a cgroup per job where the kernel lets us make one.

cgroup v1 (``/sys/fs/cgroup/pids`` and ``/sys/fs/cgroup/memory``) or v2 (``pids.max``/``memory.max`` in a
child of our own group). Without a writable cgroup the process count falls back to RLIMIT_NPROC under
the job's own uid (set by the launcher); RLIMIT_AS/CPU/FSIZE apply per process in every case.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

CGROOT = Path("/sys/fs/cgroup")
PIDS_MAX = 256


@dataclass
class Cgroup:
    """One job's groups (one per v1 controller, or one v2 group)."""

    dirs: list[Path] = field(default_factory=list)
    v2: bool = False

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join (all of them)."""
        return [str(d / "cgroup.procs") for d in self.dirs]

    def _read(self, name: str) -> str:
        for d in self.dirs:
            with contextlib.suppress(OSError):
                return (d / name).read_text()
        return ""

    def pids_limited(self) -> int:
        """How often a fork was refused at the process-count limit."""
        return _counter(self._read("pids.events"), "max")

    def oom_kills(self) -> int:
        """How often the kernel's OOM killer struck inside the group."""
        return _counter(self._read("memory.events" if self.v2 else "memory.oom_control"), "oom_kill")

    def pids(self) -> list[int]:
        """Processes in the group now."""
        out: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return sorted(out)

    def kill(self) -> None:
        """SIGKILL everything in the group (v2: cgroup.kill; v1: each pid, twice over for forks)."""
        if self.v2:
            with contextlib.suppress(OSError):
                (self.dirs[0] / "cgroup.kill").write_text("1")
        for _ in range(3):
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left, then remove the groups."""
        self.kill()
        for d in self.dirs:
            for attempt in range(50):  # EBUSY while the killed processes are still being torn down
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.002 * (attempt + 1))


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return 0


def _own_v2() -> Path | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return CGROOT / line[3:].lstrip("/")
    return None


def create(mem_bytes: int | None, pids_max: int = PIDS_MAX) -> Cgroup | None:
    """A fresh group with the limits set, or None when this machine gives us none."""
    name = f"qbank-verify-{secrets.token_hex(6)}"
    if (CGROOT / "pids" / "cgroup.procs").exists():  # v1
        group = Cgroup()
        try:
            pids = CGROOT / "pids" / name
            pids.mkdir()
            group.dirs.append(pids)
            (pids / "pids.max").write_text(str(pids_max))
            if mem_bytes and (CGROOT / "memory" / "cgroup.procs").exists():
                mem = CGROOT / "memory" / name
                mem.mkdir()
                group.dirs.append(mem)
                (mem / "memory.limit_in_bytes").write_text(str(mem_bytes))
        except OSError:
            group.remove()
            return None
        return group
    own = _own_v2()
    if own is None or not (own / "cgroup.subtree_control").exists():
        return None
    group = Cgroup(v2=True)
    try:
        d = own / name
        d.mkdir()
        group.dirs.append(d)
        (d / "pids.max").write_text(str(pids_max))
        if mem_bytes:
            (d / "memory.max").write_text(str(mem_bytes))
    except OSError:
        group.remove()
        return None
    return group


def join_prefix(group: Cgroup | None) -> list[str]:
    """A command prefix that moves the process into the group, then execs the rest (before any fork)."""
    if group is None:
        return []
    files = group.procs_files
    script = " && ".join(f'echo $$ > "${i + 1}"' for i in range(len(files)))
    return ["/bin/sh", "-c", f'{script} && shift {len(files)} && exec "$@"', "qbank-join", *files]
