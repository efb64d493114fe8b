"""The launcher: ``python -m qbank.verify.launch CONFIG.json`` runs one script inside the sandbox.

It applies limits and namespaces, arms the audit hook, runs the script cell by cell (capturing each
cell's output), and writes ``status.json`` (error, cells, files read, sandbox in force) and the API's
record into the run folder. It ends with ``os._exit`` so that threads or ``atexit`` handlers the script
left behind cannot keep it alive.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import faulthandler
import io
import json
import os
import resource
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from . import sandbox
from .cells import Cell, padded, split_cells

NETWORK_ERRNOS = {errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL}
WALLED_NETWORK_ERRNOS = {errno.ECONNREFUSED}  # under the wall the only network is the sandbox's own loopback


class Capture(io.TextIOBase):
    """A stream that appends to the current cell's outputs, up to a byte budget shared by all cells."""

    def __init__(self, name: str, state: dict[str, Any]) -> None:
        self.name_ = name
        self.state = state

    def writable(self) -> bool:
        """Always: this is an output stream."""
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """Text is kept as UTF-8."""
        return "utf-8"

    def write(self, s: str) -> int:
        """Keep ``s`` while the budget lasts; count what is dropped."""
        st = self.state
        size = len(s.encode("utf-8", "replace"))
        st["printed"] += size
        room = st["cap"] - st["kept"]
        if room <= 0:
            st["dropped"] += size
            return len(s)
        if size > room:
            s = s.encode("utf-8", "replace")[:room].decode("utf-8", "ignore")
            st["dropped"] += size - room
            size = room
        st["kept"] += size
        outputs: list[dict[str, str]] = st["outputs"]
        if outputs and outputs[-1]["name"] == self.name_:
            outputs[-1]["text"] += s
        else:
            outputs.append({"name": self.name_, "text": s})
        return len(s)


def _outside(path: Any, view: tuple[str, ...]) -> bool:
    """A path the sandbox does not show: outside every bind, or another process's /proc entry."""
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and int(parts[2]) != os.getpid():
        return True
    return not any(path == r or path.startswith(r.rstrip("/") + "/") for r in view)


VIEW: tuple[str, ...] = ()
"""The paths a script under bubblewrap can see (empty when the wall is not bubblewrap)."""


def _kind(exc: BaseException, netns: bool) -> str:
    """A coarse class of the failure, so the runner can give each its own problem code."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, sandbox.SandboxNetworkError):
            return "network"
        if isinstance(cur, sandbox.SandboxWriteError):
            return "sandbox-write"
        if isinstance(cur, sandbox.SandboxReadError):
            return "sandbox-read"
        if isinstance(cur, sandbox.SandboxExecError):
            return "sandbox-exec"
        if isinstance(cur, OSError) and cur.errno == errno.EROFS:
            return "sandbox-write"
        if VIEW and isinstance(cur, OSError) and cur.errno in {errno.ENOENT, errno.EACCES, errno.EPERM}:
            if _outside(cur.filename, VIEW) or (cur.errno == errno.EACCES and cur.filename):
                return "sandbox-read"
            if cur.errno == errno.EPERM and not cur.filename:
                return "sandbox-denied"  # the seccomp filter (mount, setns, unix sockets, ptrace, ...)
        if (
            isinstance(cur, OSError)
            and netns
            and cur.errno in NETWORK_ERRNOS | (WALLED_NETWORK_ERRNOS if VIEW else set())
        ):
            return "network"
        cur = cur.__cause__ or cur.__context__
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, ImportError):
        return "import"
    if isinstance(exc, SyntaxError):
        return "syntax"
    if type(exc).__name__ == "VerifyUsageError":
        return "usage"
    return "exception"


def _error(exc: BaseException, script: str, repo: str, netns: bool) -> dict[str, Any]:
    """The error as data: the script's own line (deepest frame in the script), not the launcher's."""
    line, col, where = 0, 0, None
    if isinstance(exc, SyntaxError) and exc.filename == script:
        line, col = exc.lineno or 0, exc.offset or 0
    frames = traceback.extract_tb(exc.__traceback__)
    for fr in frames:
        if fr.filename == script:
            line = fr.lineno or line
    # a deeper frame in a local module (verify/_lib) says where inside it the error came from
    deeper = [fr for fr in frames if fr.filename.startswith(repo + os.sep) and fr.filename != script]
    if deeper and "site-packages" not in deeper[-1].filename:
        where = f"{os.path.relpath(deeper[-1].filename, repo)}:{deeper[-1].lineno}"
    shown = [fr for fr in frames if fr.filename != __file__]
    text = "".join(traceback.format_list(shown)) + "".join(traceback.format_exception_only(type(exc), exc))
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    if isinstance(exc, sandbox.SandboxError):
        message = f"sandbox: {exc.strerror}"
    return {
        "kind": _kind(exc, netns),
        "type": type(exc).__name__,
        "message": message,
        "line": line,
        "col": col,
        "where": where,
        "traceback": text[-8000:],
    }


def _device_stamp() -> dict[str, Any] | None:
    """Where CUDA kernel checks ran: GPU, compute capability, driver, torch and CUDA versions."""
    fake = os.environ.get("QBANK_FAKE_CUDA")
    if os.environ.get("QBANK_DEVICE") != "cuda" or "torch" not in sys.modules:
        return None
    import torch

    if fake:
        return {"gpu": fake, "capability": "9.0", "driver": "fake", "torch": torch.__version__, "cuda": "fake"}
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability(0)
    driver = "unknown"
    with contextlib.suppress(OSError):
        driver = Path("/proc/driver/nvidia/version").read_text().splitlines()[0]
    return {
        "gpu": torch.cuda.get_device_name(0),
        "capability": f"{major}.{minor}",
        "driver": driver,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }


def _local_modules(repo: str, excluded: tuple[str, ...]) -> set[str]:
    """Files of imported modules that live in the repository (verify/_lib and the like)."""
    out = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f:
            continue
        f = os.path.realpath(f)
        if f.startswith(repo + os.sep) and not any(f == e or f.startswith(e + os.sep) for e in excluded):
            out.add(f)
    return out


def run(config: dict[str, Any]) -> dict[str, Any]:
    """Run the configured script; returns the status to write."""
    status: dict[str, Any] = {"error": None, "cells": [], "exit": "normal"}
    faults = os.fdopen(config["faults_fd"], "w")  # a file of the runner's, outside the sandbox
    faulthandler.enable(file=faults)
    if hasattr(signal, "SIGXCPU"):
        faulthandler.register(signal.SIGXCPU, file=faults, chain=True)
    sandbox.set_limits(config.get("mem_bytes"), config.get("cpu_seconds"), config.get("fsize_bytes"))
    if config.get("nproc"):  # the job's own uid: a hard process-count limit for the whole tree
        resource.setrlimit(resource.RLIMIT_NPROC, (config["nproc"], config["nproc"]))
    if config.get("mode") == "bwrap":
        _watchdog(config, faults)
        return _run_walled(config, status)
    return _run_layers(config, status, faults)


def _watchdog(config: dict[str, Any], faults: Any) -> None:
    """Dump the script's stack shortly before the timeout, so the runner can say where it hung."""
    timeout = float(config.get("timeout") or 0)
    if timeout > 0:
        faulthandler.dump_traceback_later(max(timeout - min(1.0, timeout * 0.25), 0.05), file=faults, exit=False)


def _run_walled(config: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """Under bubblewrap: the kernel is the wall; the audit hook only names refused writes early."""
    global VIEW
    VIEW = tuple(config.get("view") or ())
    status["sandbox"] = {
        "network": "namespace",
        "fs": "bwrap+audit-hook",
        "notes": [] if config.get("cgroup") else ["no cgroup: process count limited by RLIMIT_NPROC"],
    }
    hook = sandbox.AuditHook(config["repo"], config["run_dir"], (config["script"],), False, True, ())
    return _execute(config, status, hook, True)


def _run_layers(config: dict[str, Any], status: dict[str, Any], faults: Any) -> dict[str, Any]:
    """``--trust-local``: the old home-made layers (namespaces when the kernel allows, the audit hook)."""
    script, repo, run_dir = config["script"], config["repo"], config["run_dir"]
    notes: list[str] = ["--trust-local: no bubblewrap wall"]
    net_mode, fs_mode = config.get("network", "auto"), config.get("fs", "auto")
    flags = (sandbox.CLONE_NEWNET if net_mode in {"auto", "namespace"} else 0) | (
        sandbox.CLONE_NEWNS if fs_mode in {"auto", "mount"} else 0
    )
    why = sandbox.unshare(flags) if flags else "not asked"
    netns = flags & sandbox.CLONE_NEWNET and why is None
    mounted = False
    if flags & sandbox.CLONE_NEWNS and why is None and run_dir.startswith(repo + os.sep):
        notes.append("the run folder lies inside the repository; no read-only mount")
    elif flags & sandbox.CLONE_NEWNS and why is None:
        ro = sandbox.readonly_bind(repo)
        mounted = ro is None
        if ro:
            notes.append(f"read-only bind of the repository failed: {ro}")
        notes.extend(sandbox.hide(config.get("hide", [])))
    elif flags:
        notes.append(f"namespaces unavailable: {why}")
    if net_mode == "namespace" and not netns:
        raise SystemExit(f"qbank launcher: a network namespace was required but unshare failed: {why}")
    if fs_mode == "mount" and not mounted:
        raise SystemExit(f"qbank launcher: a read-only mount was required but failed: {why}")
    # the watchdog is a thread, and a user namespace can only be entered single-threaded: start it after
    _watchdog(config, faults)
    refuse_sockets = not netns  # the in-interpreter refusal stands in when the kernel gives no namespace
    refuse_writes = fs_mode in {"auto", "audit"}
    status["sandbox"] = {
        "network": "namespace" if netns else "socket-refusal",
        "fs": "+".join(x for x in ("readonly-mount" if mounted else "", "audit-hook" if refuse_writes else "") if x),
        "notes": notes,
    }

    excluded = (*tuple(os.path.realpath(p) for p in config.get("exclude", [])), script)
    hidden = () if mounted else tuple(os.path.realpath(p) for p in config.get("hide", []))
    hook = sandbox.AuditHook(repo, run_dir, excluded, refuse_sockets, refuse_writes, hidden)
    return _execute(config, status, hook, bool(netns))


def _execute(config: dict[str, Any], status: dict[str, Any], hook: sandbox.AuditHook, netns: bool) -> dict[str, Any]:
    """Run the cells with the hook armed; fill in the status."""
    script, repo = config["script"], config["repo"]
    excluded = (*tuple(os.path.realpath(p) for p in config.get("exclude", [])), script)
    sandbox.install(hook)
    text = Path(script).read_text(encoding="utf-8")
    cells = split_cells(text)
    state: dict[str, Any] = {"cap": int(config.get("output_cap", 1 << 20)), "kept": 0, "dropped": 0, "printed": 0}
    out, err = Capture("stdout", state), Capture("stderr", state)
    main = types.ModuleType("__main__")
    main.__dict__.update({"__file__": script, "__builtins__": builtins})
    sys.modules["__main__"] = main
    sys.argv = [script]
    progress = os.fdopen(config["progress_fd"], "w", buffering=1)
    count = 0
    compiled: list[tuple[Cell, Any]] = []
    try:
        for cell in cells:
            code = compile(padded(cell), script, "exec") if cell.kind == "code" else None
            compiled.append((cell, code))
    except SyntaxError as exc:
        status["error"] = _error(exc, script, repo, bool(netns))
        compiled = []
    real_out, real_err = sys.stdout, sys.stderr
    hook.armed = True
    for cell, code in compiled:
        entry: dict[str, Any] = {"kind": cell.kind, "line": cell.line, "source": cell.source, "outputs": []}
        status["cells"].append(entry)
        if code is None:
            continue
        count += 1
        entry["execution_count"] = count
        progress.write(f"{cell.line}\n")
        state["outputs"] = entry["outputs"]
        sys.stdout, sys.stderr = out, err
        try:
            exec(code, main.__dict__)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                status["error"] = _error(exc, script, repo, bool(netns))
                status["error"].update(kind="exit", message=f"the script called sys.exit({exc.code!r})")
            status["exit"] = "sys.exit"
            break
        except BaseException as exc:
            status["error"] = _error(exc, script, repo, bool(netns))
            break
        finally:
            sys.stdout, sys.stderr = real_out, real_err
    hook.armed = False
    faulthandler.cancel_dump_traceback_later()
    status["output"] = {k: state[k] for k in ("printed", "kept", "dropped")}
    status["deps"] = sorted(
        os.path.relpath(p, repo) for p in hook.reads | _local_modules(repo, excluded) if os.path.isfile(p)
    )
    try:
        status["stamp"] = _device_stamp()
    except Exception as exc:  # the stamp is informative; never lose the result over it
        status["stamp"] = {"error": repr(exc)}
    if config.get("mode") == "bwrap":
        status["stray"] = len(_others())
    return status


def _others() -> list[int]:
    """Live processes of this PID namespace other than ours and bubblewrap's init (pid 1)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in {1, os.getpid()}:
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2 :].split()[:1] != ["Z"]:
            out.append(int(entry))
    return out


def main(argv: list[str]) -> None:
    """Entry point: read the config, run, write status and record, and leave at once."""
    config = json.loads(argv[1])
    os.chdir(config["work_dir"])
    status = run(config)
    api = sys.modules.get("qbank.verify.api")
    record = api.RECORD.to_json() if api is not None else {"api": 1, "values": [], "checks": []}
    data = json.dumps({"status": status, "record": record}).encode("utf-8")
    # the runner's pipe, not a file in a folder: the runner alone writes results and the cache
    with os.fdopen(config["result_fd"], "wb", buffering=0) as channel:
        view = memoryview(data)
        while view:
            view = view[channel.write(view) or 0 :]
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
