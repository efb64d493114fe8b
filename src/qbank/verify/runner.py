"""Run one script in a fresh sandboxed subprocess and collect what it left: status, record, exit, output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import qbank

from .api import OUT_ENV
from .options import RunOptions

if TYPE_CHECKING:
    from .sandbox.limits import Cgroup

__all__ = ["RawRun", "RunOptions", "child_env", "run_script"]

ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
# credentials of the user running qbank, hidden from scripts (covered in the mount namespace, else refused)
SECRET_PATHS = (".aws", ".ssh", ".gnupg", ".docker", ".kube", ".config/gh", ".netrc", ".git-credentials", ".pypirc")
CUDA_ENV_ALLOW = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES")


# process groups of scripts running now, so an interrupted run can end them (they ignore the terminal's ^C)
LIVE: set[int] = set()
_LIVE_LOCK = threading.Lock()


def kill_all() -> None:
    """Kill the process groups of every script still running."""
    with _LIVE_LOCK:
        groups = list(LIVE)
    for pgid in groups:
        _killpg(pgid)


@dataclass
class RawRun:
    """What one subprocess left behind."""

    returncode: int | None
    timed_out: bool
    duration: float
    status: dict[str, Any] | None
    record: dict[str, Any] | None
    stderr_tail: str
    stdout_tail: str
    faults: str
    last_cell_line: int
    stray: int
    oom_kills: int = 0
    pids_limited: int = 0
    """How often the whole tree's process-count limit refused a fork (cgroup pids.events)."""
    env_keys: list[str] = field(default_factory=list)


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _group_alive(pgid: int) -> list[int]:
    """Live (non-zombie) processes still in the process group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return []
    alive = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry))
    return alive if os.path.isdir("/proc") else [pgid]


def secret_paths() -> list[str]:
    """Credential files and folders of the current user that exist (under ``$HOME``)."""
    home = os.environ.get("HOME")
    if not home:
        return []
    return [p for p in (os.path.join(home, rel) for rel in SECRET_PATHS) if os.path.lexists(p)]


def child_env(root: Path, run_dir: Path, work: Path, options: RunOptions) -> dict[str, str]:
    """The allowlisted environment a script sees: nothing of the parent's secrets or tokens."""
    from .facts import FACTS_ENV, FACTS_REL  # imports yaml: only when a script runs

    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    if options.device == "cuda" and not options.fake_cuda:
        env.update({k: os.environ[k] for k in CUDA_ENV_ALLOW if k in os.environ})
    src = Path(qbank.__file__).resolve().parent.parent
    env.update(
        {
            "HOME": str(work),
            "TMPDIR": str(work / "tmp"),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": os.pathsep.join([str(src), str(root / "verify" / "_lib")]),
            OUT_ENV: str(run_dir / "record.json"),
            FACTS_ENV: str(root / FACTS_REL),
            "QBANK_DEVICE": options.device,
            "OMP_NUM_THREADS": str(options.threads),
            "MKL_NUM_THREADS": str(options.threads),
        }
    )
    if options.fake_cuda:
        env["QBANK_FAKE_CUDA"] = options.fake_cuda
    if options.device == "cpu" or options.fake_cuda:
        # Triton kernels run through its interpreter: decided when @triton.jit decorates, so set before start
        env["TRITON_INTERPRET"] = "1"
    env["TRITON_CACHE_DIR"] = str(work / ".triton")  # in the run's tmpfs: nothing compiled outlives the run
    if options.device == "cuda" and not options.fake_cuda:
        from .sandbox.view import libcuda_dir

        found = libcuda_dir(os.environ.get("LD_LIBRARY_PATH"))
        if found:
            env["TRITON_LIBCUDA_PATH"] = found  # Triton would ask /sbin/ldconfig, outside the wall
    env.update(dict(options.extra_env))
    return env


def run_script(root: Path, script: Path, timeout: float, options: RunOptions) -> RawRun:
    """Run ``script`` once behind the wall (or, with ``trust_local``, the old layers); never raises for it."""
    root = root.resolve()
    host_dir = Path(tempfile.mkdtemp(prefix="qbank-verify-"))  # the runner's own: output, faults, progress
    try:
        if options.trust_local:
            return _run_local(root, script.resolve(), timeout, options, host_dir)
        return _run_bwrap(root, script.resolve(), timeout, options, host_dir)
    finally:
        shutil.rmtree(host_dir, ignore_errors=True)


def _config(script: Path, root: Path, run_dir: str, work: str, timeout: float, options: RunOptions) -> dict[str, Any]:
    pkg = Path(qbank.__file__).resolve().parent
    return {
        "script": str(script),
        "repo": str(root),
        "run_dir": run_dir,
        "work_dir": work,
        "network": options.network,
        "fs": options.fs,
        "mem_bytes": options.mem_bytes if options.device == "cpu" or options.fake_cuda else None,
        "cpu_seconds": int(timeout * max(1, options.threads)) + 2,
        "fsize_bytes": options.fsize_bytes,
        "output_cap": options.output_cap,
        "timeout": timeout,
        "exclude": [str(pkg), sys.prefix, sys.base_prefix, str(root / ".git"), str(root / ".qbank")],
        "hide": [],
    }


class _Channel:
    """The pipe the launcher sends status and record through; read here, capped, in a thread."""

    def __init__(self, cap: int) -> None:
        self.rfd, self.wfd = os.pipe()
        self.cap = cap
        self.data = bytearray()
        self.oversize = False
        self.thread = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        with os.fdopen(self.rfd, "rb", buffering=0) as fh:
            while chunk := fh.read(1 << 16):
                if len(self.data) + len(chunk) > self.cap:
                    self.oversize = True  # keep draining so the writer never blocks
                    continue
                self.data += chunk

    def start(self) -> None:
        os.close(self.wfd)
        self.thread.start()

    def close_unstarted(self) -> None:
        """Close both ends when the reader never started (the script's start failed); nothing once it has."""
        if self.thread.ident is None:
            os.close(self.rfd)
            os.close(self.wfd)

    def message(self, wait: float) -> dict[str, Any] | None:
        self.thread.join(wait)
        if self.thread.is_alive() or self.oversize:
            return None
        try:
            data = json.loads(bytes(self.data).decode("utf-8"))
        except ValueError:
            return None
        return data if isinstance(data, dict) else None


def _spawn(argv: list[str], env: dict[str, str], cwd: str, host_dir: Path, fds: list[int]) -> subprocess.Popen[bytes]:
    with (host_dir / "stdout.txt").open("wb") as out, (host_dir / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            pass_fds=fds,
        )
    with _LIVE_LOCK:  # registered as soon as it exists: an interrupt's kill_all must find it (_wait unregisters)
        LIVE.add(proc.pid)
    return proc


def _wait(proc: subprocess.Popen[bytes], timeout: float, kill: Any) -> bool:
    try:
        proc.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        kill()
        proc.wait()
        return True
    finally:
        with _LIVE_LOCK:
            LIVE.discard(proc.pid)


def _raw(proc: subprocess.Popen[bytes], host_dir: Path, msg: dict[str, Any] | None, **kw: Any) -> RawRun:
    status = msg.get("status") if msg else None
    record = msg.get("record") if msg else None
    try:
        last = int((host_dir / "progress.txt").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        last = 0
    rc = proc.returncode
    return RawRun(
        returncode=rc,
        status=status if isinstance(status, dict) else None,
        record=record if isinstance(record, dict) and isinstance(status, dict) else None,
        stderr_tail=_tail(host_dir / "stderr.txt"),
        stdout_tail=_tail(host_dir / "stdout.txt"),
        faults=_tail(host_dir / "faults.txt", 8000),
        last_cell_line=last,
        **kw,
    )


def _side_files(host_dir: Path) -> tuple[int, int]:
    faults = os.open(host_dir / "faults.txt", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    progress = os.open(host_dir / "progress.txt", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    return faults, progress


SANDBOX_RUN = "/qbank/run"


def _run_bwrap(root: Path, script: Path, timeout: float, options: RunOptions, host_dir: Path) -> RawRun:
    from .sandbox import identity, limits

    config = _config(script, root, SANDBOX_RUN, f"{SANDBOX_RUN}/work", timeout, options)
    group = limits.create(config["mem_bytes"]) if identity.is_root() else None
    try:  # the cgroup goes whatever happens after it was made, a start that fails included
        return _run_bwrap_in(root, options, host_dir, config, group)
    finally:
        if group is not None:
            group.remove()


def _run_bwrap_in(
    root: Path, options: RunOptions, host_dir: Path, config: dict[str, Any], group: Cgroup | None
) -> RawRun:
    from .sandbox import bwrap, identity, limits, seccomp, view

    run_dir, work, timeout = config["run_dir"], config["work_dir"], float(config["timeout"])
    src = Path(qbank.__file__).resolve().parent.parent
    uid = identity.job_uid()
    gpu = options.device == "cuda" and not options.fake_cuda
    with contextlib.ExitStack() as opened:  # closed once bwrap has started, or when anything before fails
        seen = view.build(root, src, toolchain=gpu)
        opened.callback(seen.close)
        channel = _Channel(cap=8 * options.output_cap + (16 << 20))
        opened.callback(channel.close_unstarted)
        faults, progress = _side_files(host_dir)
        opened.callback(os.close, faults)
        opened.callback(os.close, progress)
        sr, sw = os.pipe()
        opened.callback(os.close, sr)
        try:
            os.write(sw, seccomp.compile_filter())
        finally:
            os.close(sw)
        config.update(
            mode="bwrap",
            view=[*seen.roots, run_dir, "/dev"],
            nproc=limits.PIDS_MAX if uid is not None else None,
            result_fd=channel.wfd,
            faults_fd=faults,
            progress_fd=progress,
            cgroup=group is not None,
        )
        env = child_env(root, Path(run_dir), Path(work), options)
        command = (sys.executable, "-s", "-m", "qbank.verify.launch", json.dumps(config))
        plan = bwrap.Plan(
            command=command,
            run_dir=run_dir,
            work_dir=work,
            tmpfs_bytes=options.fsize_bytes,
            seccomp_fd=sr,
            binds=tuple(seen.binds),
            symlinks=tuple(seen.symlinks),
            env=tuple(sorted(env.items())),
            devices=tuple(view.gpu_devices()) if gpu else (),
        )
        stage = bwrap.staging_argv(plan.binds, plan.symlinks) if uid is not None else []
        argv = [*limits.join_prefix(group), *stage, *identity.drop_prefix(uid), *bwrap.argv(plan)]
        fds = [*seen.fds, sr, channel.wfd, faults, progress]
        start = time.perf_counter()
        # the wrapper processes see no more than PATH: /proc of the sandbox's init holds nothing secret
        proc = _spawn(argv, {"PATH": "/usr/bin:/bin"}, "/", host_dir, fds)
        channel.start()

    def kill() -> None:
        _killpg(proc.pid)
        if group is not None:
            group.kill()

    timed_out = _wait(proc, timeout, kill)
    duration = time.perf_counter() - start
    kill()  # the namespace's init is gone with bwrap; anything that slipped into the group goes too
    msg = channel.message(wait=5.0)
    pids_limited = group.pids_limited() if group is not None else 0
    oom = group.oom_kills() if group is not None else 0
    if proc.returncode is not None and proc.returncode > 128 and msg is None:
        proc.returncode = -(proc.returncode - 128)  # bwrap reports a signal death as 128 + N
    status = msg.get("status") if msg else None
    stray = int(status.get("stray") or 0) if isinstance(status, dict) else 0
    return _raw(
        proc,
        host_dir,
        msg,
        timed_out=timed_out,
        duration=duration,
        stray=stray,
        oom_kills=oom,
        pids_limited=pids_limited,
        env_keys=sorted(env),
    )


def _run_local(root: Path, script: Path, timeout: float, options: RunOptions, host_dir: Path) -> RawRun:
    """``--trust-local``: the author's own scripts, unsandboxed but for the old in-process layers."""
    run_dir = host_dir / "run"
    work = run_dir / "work"
    (work / "tmp").mkdir(parents=True)
    config = _config(script, root, str(run_dir), str(work), timeout, options)
    config["hide"] = secret_paths()
    env = child_env(root, run_dir, work, options)
    with contextlib.ExitStack() as opened:  # closed once the launcher has started, or when its start fails
        channel = _Channel(cap=8 * options.output_cap + (16 << 20))
        opened.callback(channel.close_unstarted)
        faults, progress = _side_files(host_dir)
        opened.callback(os.close, faults)
        opened.callback(os.close, progress)
        config.update(mode="local", result_fd=channel.wfd, faults_fd=faults, progress_fd=progress)
        start = time.perf_counter()
        proc = _spawn(
            [sys.executable, "-s", "-m", "qbank.verify.launch", json.dumps(config)],
            env,
            str(work),
            host_dir,
            [channel.wfd, faults, progress],
        )
        channel.start()
    timed_out = _wait(proc, timeout, lambda: _killpg(proc.pid))
    duration = time.perf_counter() - start
    stray = _group_alive(proc.pid)
    if stray:
        _killpg(proc.pid)
    msg = channel.message(wait=1.0 if not stray else 5.0)
    return _raw(
        proc,
        host_dir,
        msg,
        timed_out=timed_out,
        duration=duration,
        stray=len(stray),
        oom_kills=0,
        env_keys=sorted(env),
    )


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
