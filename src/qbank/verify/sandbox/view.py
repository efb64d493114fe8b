"""What a script may see: the interpreter, its packages, qbank's code and the repository's ``verify/``.

As root, paths the job's uid cannot traverse (a venv under a mode-700 /root) are made reachable by a
staging bwrap (see :func:`.bwrap.staging_argv`); bwrap's own ``--ro-bind-fd`` does not help there, since
it resolves the descriptor back to its path as the unprivileged uid.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .bwrap import Bind

SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/etc/ld.so.cache")
TOOLCHAIN = ("/usr/bin", "/bin", "/usr/include", "/usr/libexec")
"""What Triton's first compile on a GPU runs: ``gcc`` (with ``as``/``ld``) over C headers."""
LIBCUDA_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64",
                "/usr/lib/wsl/lib")  # fmt: skip


def libcuda_dir(extra: str | None = None) -> str | None:
    """The folder of the driver's ``libcuda.so.1`` (Triton otherwise asks ``/sbin/ldconfig``, which the wall
    does not show); ``extra`` is a colon-separated list searched first (``$LD_LIBRARY_PATH``)."""
    for folder in [*(extra or "").split(":"), *LIBCUDA_DIRS]:
        if folder and os.path.exists(os.path.join(folder, "libcuda.so.1")):
            return os.path.realpath(folder)
    return None


@dataclass
class View:
    """The binds of one run and the descriptors to close after it started."""

    binds: list[Bind] = field(default_factory=list)
    symlinks: list[tuple[str, str]] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)

    @property
    def roots(self) -> list[str]:
        """Every path the script can see (for telling 'outside the view' apart from a missing file)."""
        return [b.dest for b in self.binds] + [link for _, link in self.symlinks]

    def close(self) -> None:
        """Close the O_PATH descriptors (after bwrap has started)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


def _covered(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def wanted(repo: Path, src: Path) -> list[str]:
    """The paths to bind, outermost first, nested ones dropped (pure apart from realpath)."""
    paths = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, str(src), str(repo / "verify"))]
    paths.sort(key=len)
    out: list[str] = []
    for p in paths:
        if not _covered(p, out):
            out.append(p)
    return out


def build(repo: Path, src: Path, as_fds: bool = False, toolchain: bool = False) -> View:
    """Name (or, with ``as_fds``, open with O_PATH) every source; a missing one raises FileNotFoundError.

    ``toolchain`` (GPU runs only): also the C compiler and headers (read-only), which Triton needs to build
    its CUDA launcher the first time a kernel compiles, and the folder holding the driver's libcuda.
    """
    view = View()
    try:
        for path in SYSTEM_LIBS + (TOOLCHAIN if toolchain else ()):
            if os.path.islink(path):
                view.symlinks.append((os.readlink(path), path))
            elif os.path.exists(path):
                _add(view, path, as_fds)
        cuda_lib = libcuda_dir(os.environ.get("LD_LIBRARY_PATH")) if toolchain else None
        for path in [*wanted(repo, src), *([cuda_lib] if cuda_lib else [])]:
            if _covered(path, [b.dest for b in view.binds]):
                continue
            _add(view, path, as_fds)
    except BaseException:
        view.close()
        raise
    return view


def _add(view: View, path: str, as_fds: bool) -> None:
    if as_fds:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        view.fds.append(fd)
        view.binds.append(Bind(dest=path, fd=fd))
    else:
        view.binds.append(Bind(dest=path, src=path))


def gpu_devices(dev: str = "/dev") -> list[str]:
    """The NVIDIA device nodes of this machine (none on a CPU machine)."""
    try:
        names = sorted(os.listdir(dev))
    except OSError:
        return []
    out = [f"{dev}/{n}" for n in names if n.startswith("nvidia")]
    caps = Path(dev) / "nvidia-caps"
    if caps.is_dir():
        out += [str(p) for p in sorted(caps.iterdir())]
    return [p for p in out if not os.path.isdir(p)]
