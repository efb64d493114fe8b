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
from typing import Any

import qbank

from .api import OUT_ENV
from .options import RunOptions

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


def _oom_kills() -> int:
    """The cgroup's OOM-kill counter, when the kernel exposes it (cgroup v2)."""
    try:
        for line in Path("/sys/fs/cgroup/memory.events").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


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
    env.update(dict(options.extra_env))
    return env


def run_script(root: Path, script: Path, timeout: float, options: RunOptions) -> RawRun:
    """Run ``script`` once in a fresh process group with limits; never raises for the script's sake."""
    root = root.resolve()
    run_dir = Path(tempfile.mkdtemp(prefix="qbank-verify-"))
    try:
        return _run(root, script.resolve(), timeout, options, run_dir)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _run(root: Path, script: Path, timeout: float, options: RunOptions, run_dir: Path) -> RawRun:
    work = run_dir / "work"
    (work / "tmp").mkdir(parents=True)
    pkg = Path(qbank.__file__).resolve().parent
    config = {
        "script": str(script),
        "repo": str(root),
        "run_dir": str(run_dir),
        "work_dir": str(work),
        "network": options.network,
        "fs": options.fs,
        "mem_bytes": options.mem_bytes if options.device == "cpu" or options.fake_cuda else None,
        "cpu_seconds": int(timeout * max(1, options.threads)) + 2,
        "fsize_bytes": options.fsize_bytes,
        "output_cap": options.output_cap,
        "timeout": timeout,
        "exclude": [str(pkg), sys.prefix, sys.base_prefix, str(root / ".git"), str(root / ".qbank")],
        "hide": secret_paths(),
    }
    (run_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    env = child_env(root, run_dir, work, options)
    oom_before = _oom_kills()
    start = time.perf_counter()
    timed_out = False
    with (run_dir / "stdout.txt").open("wb") as out, (run_dir / "stderr.txt").open("wb") as err:
        # files, not pipes: a grandchild holding a pipe open cannot make us hang
        proc = subprocess.Popen(
            [sys.executable, "-s", "-m", "qbank.verify.launch", str(run_dir / "config.json")],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        with _LIVE_LOCK:
            LIVE.add(proc.pid)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _killpg(proc.pid)
            proc.wait()
        finally:
            with _LIVE_LOCK:
                LIVE.discard(proc.pid)
    duration = time.perf_counter() - start
    stray = _group_alive(proc.pid)
    if stray:
        _killpg(proc.pid)
    status = _load(run_dir / "status.json")
    record = _load(run_dir / "record.json") if status is not None else None
    try:
        last = int((run_dir / "progress.txt").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        last = 0
    return RawRun(
        returncode=proc.returncode,
        timed_out=timed_out,
        duration=duration,
        status=status,
        record=record,
        stderr_tail=_tail(run_dir / "stderr.txt"),
        stdout_tail=_tail(run_dir / "stdout.txt"),
        faults=_tail(run_dir / "faults.txt", 8000),
        last_cell_line=last,
        stray=len(stray),
        oom_kills=_oom_kills() - oom_before,
        env_keys=sorted(env),
    )


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
