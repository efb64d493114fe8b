"""The bubblewrap command line for one run, built from a plan (pure: no file is opened here).

The view a script gets holds only the plan's binds (read-only: the interpreter, its packages, qbank's
code, the repository's ``verify/``), a size-limited tmpfs as the run folder (also HOME and /tmp), a
private /proc and a minimal /dev, and on a GPU machine the NVIDIA device nodes. Every namespace is new,
capabilities are dropped, the session is new, nested user namespaces are disabled, and the seccomp
filter comes in on a file descriptor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BWRAP = "/usr/bin/bwrap"


@dataclass(frozen=True)
class Bind:
    """One read-only bind: from an open O_PATH descriptor (``fd``) or a path bwrap opens (``src``)."""

    dest: str
    src: str | None = None
    fd: int | None = None


@dataclass(frozen=True)
class Plan:
    """Everything the command line depends on."""

    command: tuple[str, ...]
    run_dir: str
    work_dir: str
    tmpfs_bytes: int
    seccomp_fd: int
    binds: tuple[Bind, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()
    """(target, link) pairs, e.g. ("usr/lib", "/lib") on a merged-/usr system."""
    env: tuple[tuple[str, str], ...] = ()
    devices: tuple[str, ...] = ()
    """Device nodes bound read-write (the NVIDIA ones on a GPU machine)."""
    keep_fds: tuple[int, ...] = field(default=())
    """Descriptors the launcher writes to (result pipe, faults, progress): documented, inherited as is."""


def argv(plan: Plan, bwrap: str = BWRAP) -> list[str]:
    """The full command line: bwrap, its options, ``--``, the launcher."""
    out = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]
    out += ["--cap-drop", "ALL", "--hostname", "qbank-verify", "--clearenv"]
    for key, value in plan.env:
        out += ["--setenv", key, value]
    out += ["--proc", "/proc", "--dev", "/dev"]
    for node in plan.devices:
        out += ["--dev-bind", node, node]
    for bind in plan.binds:
        if bind.fd is not None:
            out += ["--ro-bind-fd", str(bind.fd), bind.dest]
        elif bind.src is not None:
            out += ["--ro-bind", bind.src, bind.dest]
        else:
            raise ValueError(f"bind of {bind.dest} has neither a path nor a descriptor")
    for target, link in plan.symlinks:
        out += ["--symlink", target, link]
    out += ["--size", str(plan.tmpfs_bytes), "--tmpfs", plan.run_dir]
    out += ["--dir", plan.work_dir, "--dir", f"{plan.work_dir}/tmp"]
    if not any(b.dest.startswith("/tmp/") for b in plan.binds):  # else /tmp is a read-only folder
        out += ["--symlink", f"{plan.work_dir}/tmp", "/tmp"]
    out += ["--remount-ro", "/", "--seccomp", str(plan.seccomp_fd), "--chdir", plan.work_dir, "--"]
    return out + list(plan.command)


def ancestors(path: str) -> list[str]:
    """Every folder above ``path``, outermost first ("/a/b/c" -> ["/a", "/a/b"])."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def staging_argv(binds: tuple[Bind, ...], symlinks: tuple[tuple[str, str], ...], bwrap: str = BWRAP) -> list[str]:
    """As root only: a first bwrap (mount namespace, no user namespace) that shows the same sources under
    traversable folders (mode 755), so the job's unprivileged uid can bind them in the real wall.

    bwrap resolves bind sources as the uid it runs as; a venv under a mode-700 /root or a repository in a
    private temp folder is out of reach of that uid. This stage keeps CAP_SETUID/SETGID only (for the
    drop that follows), has its own /tmp, and binds the host /proc, which the wall needs to mount its
    own private one; the script never sees any of it.
    """
    out = [bwrap, "--die-with-parent", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    out += ["--bind", "/proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    out += ["--ro-bind", "/usr", "/usr"]  # bwrap, setpriv and their libraries for the drop that follows
    made: set[str] = set()
    for bind in binds:
        if bind.dest == "/usr" or bind.dest.startswith("/usr/"):
            continue
        for folder in ancestors(bind.dest):
            if folder not in made and not any(folder == b.dest for b in binds):
                made.add(folder)
                out += ["--perms", "0755", "--dir", folder]
        out += ["--ro-bind", bind.src or bind.dest, bind.dest]
    for target, link in symlinks:
        out += ["--symlink", target, link]
    return [*out, "--"]
