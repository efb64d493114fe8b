"""The runner's parts one at a time, each expected value written out here: the tails it keeps of a script's
files, the live members of a process group, the capped result channel, the private side files, the launcher's
config for each device, and a local (``--trust-local``) run's stray processes and duration."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

import qbank
from qbank.verify import runner
from qbank.verify.runner import RunOptions, child_env, run_script

from ..capabilities import require


def repo_with(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    """A repository folder holding one verification script, ``verify/<name>``: (the repository, the script)."""
    root = tmp_path / "repo"
    (root / "verify").mkdir(parents=True)
    script = root / "verify" / name
    script.write_text(text)
    return root, script


# --- _tail ----------------------------------------------------------------------------------------------------


def test_tail_is_the_last_bytes_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"abcdefghij")
    assert runner._tail(path, 4) == "ghij"
    assert runner._tail(path, 10) == "abcdefghij"
    assert runner._tail(path, 50) == "abcdefghij"
    assert runner._tail(tmp_path / "missing.txt") == ""


# --- _group_alive ----------------------------------------------------------------------------------------------

LEADER = """
import os, sys, time
{child}
print(" ".join(map(str, pids)), flush=True)
time.sleep(60)
"""
SAME_GROUP = "pid = os.fork()\nif pid == 0:\n    time.sleep(60)\n    os._exit(0)\npids = [pid]"
# a child that exits at once and is never waited for: a zombie of the group
ZOMBIE = "pid = os.fork()\nif pid == 0:\n    os._exit(0)\ntime.sleep(0.5)\npids = [pid]"
# a child stopped under its tracer (the leader, by PTRACE_TRACEME): state "t", still alive
TRACED = (
    "import ctypes, signal\npid = os.fork()\nif pid == 0:\n    ctypes.CDLL(None).ptrace(0, 0, None, None)\n"
    "    os.kill(os.getpid(), signal.SIGSTOP)\n    os._exit(0)\npids = [pid]"
)
# a child in a process group of its own (same session): not a member of the leader's group
OTHER_GROUP = "pid = os.fork()\nif pid == 0:\n    os.setpgid(0, 0)\n    time.sleep(60)\n    os._exit(0)\npids = [pid]"


@pytest.fixture
def group() -> Iterator[Any]:
    """Start a session leader running ``child`` (the setup above); yield (leader pid, child pids); end both."""
    started: list[subprocess.Popen[bytes]] = []

    def start(child: str) -> tuple[int, list[int]]:
        proc = subprocess.Popen(
            [sys.executable, "-c", LEADER.format(child=child)], stdout=subprocess.PIPE, start_new_session=True
        )
        started.append(proc)
        assert proc.stdout is not None
        children = [int(x) for x in proc.stdout.readline().split()]
        return proc.pid, children

    yield start
    for proc in started:
        for pid in (proc.pid, *_children_of(proc.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _children_of(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _state(pid: int) -> str:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rfind(")") + 2]


def test_group_alive_lists_the_leader_and_its_child_and_leaves_them_running(group: Any) -> None:
    leader, (child,) = group(SAME_GROUP)
    assert sorted(runner._group_alive(leader)) == sorted([leader, child])
    # asking is signal 0: neither process was sent anything
    assert _state(leader) in "RS" and _state(child) in "RS"


def test_group_alive_leaves_out_zombies(group: Any) -> None:
    leader, (zombie,) = group(ZOMBIE)
    for _ in range(100):  # the child exits at once; its parent never waits for it
        if _state(zombie) == "Z":
            break
        time.sleep(0.05)
    assert _state(zombie) == "Z"
    assert runner._group_alive(leader) == [leader]


def test_group_alive_counts_a_process_stopped_under_a_tracer(group: Any) -> None:
    # "t" sorts after "Z": an ordering in place of the zombie test would drop it
    leader, (traced,) = group(TRACED)
    for _ in range(100):
        if _state(traced) == "t":
            break
        time.sleep(0.05)
    assert _state(traced) == "t"
    assert sorted(runner._group_alive(leader)) == sorted([leader, traced])


def test_group_alive_leaves_out_a_process_group_of_the_same_session(group: Any) -> None:
    leader, (other,) = group(OTHER_GROUP)
    for _ in range(100):
        if Path(f"/proc/{other}/stat").read_text().split(") ")[1].split()[2] == str(other):
            break
        time.sleep(0.05)
    assert runner._group_alive(leader) == [leader]
    assert runner._group_alive(other) == [other]


def test_group_alive_of_a_group_that_is_gone_is_empty() -> None:
    proc = subprocess.Popen([sys.executable, "-c", ""], start_new_session=True)
    proc.wait()
    assert runner._group_alive(proc.pid) == []


def test_group_alive_passes_over_a_process_that_ends_while_it_looks(
    group: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    leader, (child,) = group(SAME_GROUP)
    listdir = os.listdir

    def listing(path: str) -> list[str]:
        # 4194304 is past the kernel's largest pid_max: its /proc entry cannot be read
        return ["4194304", *listdir(path)] if path == "/proc" else listdir(path)

    monkeypatch.setattr(os, "listdir", listing)
    assert sorted(runner._group_alive(leader)) == sorted([leader, child])


# --- _Channel -------------------------------------------------------------------------------------------------


def channel_with(data: bytes, cap: int) -> runner._Channel:
    channel = runner._Channel(cap)
    writer = os.dup(channel.wfd)
    channel.start()
    os.write(writer, data)
    os.close(writer)
    return channel


def test_channel_reads_one_json_object_up_to_its_cap() -> None:
    data = b'{"status": {"ok": true}}'
    assert channel_with(data, cap=len(data)).message(wait=10) == {"status": {"ok": True}}


def test_channel_over_its_cap_gives_nothing() -> None:
    data = b'{"status": {"ok": true}}'
    channel = channel_with(data, cap=len(data) - 1)
    assert channel.message(wait=10) is None
    assert channel.oversize


def test_channel_over_its_cap_gives_nothing_even_when_the_part_that_fit_parses() -> None:
    channel = runner._Channel(10)
    writer = os.dup(channel.wfd)
    channel.start()
    os.write(writer, b'{"a": 1}')
    for _ in range(200):  # let the reader take the first piece on its own
        if bytes(channel.data) == b'{"a": 1}':
            break
        time.sleep(0.01)
    assert bytes(channel.data) == b'{"a": 1}'
    os.write(writer, b" " * 100)
    os.close(writer)
    assert channel.message(wait=10) is None


def test_channel_over_its_cap_keeps_draining_so_the_writer_finishes() -> None:
    channel = runner._Channel(10)
    writer = os.dup(channel.wfd)
    channel.start()
    data = b"x" * (1 << 20)  # sixteen times a pipe's buffer
    with os.fdopen(writer, "wb", buffering=0) as fh:
        written = fh.write(data)  # blocks until the reader has taken all but the last buffer, or fails if it left
    assert written == len(data)
    assert channel.message(wait=10) is None
    assert channel.oversize


def test_channel_of_something_else_than_an_object_gives_nothing() -> None:
    assert channel_with(b"[1, 2]", cap=100).message(wait=10) is None
    assert channel_with(b"{not json", cap=100).message(wait=10) is None


def test_channel_reader_never_keeps_the_process_alive() -> None:
    channel = runner._Channel(10)
    try:
        assert channel.thread.daemon
    finally:
        os.close(channel.rfd)
        os.close(channel.wfd)


# --- _side_files and _raw ------------------------------------------------------------------------------------


def test_side_files_are_private_to_the_runner(tmp_path: Path) -> None:
    fds = runner._side_files(tmp_path)
    for fd in fds:
        os.close(fd)
    for name in ("faults.txt", "progress.txt"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def raw_after(run_dir: Path, msg: dict[str, Any] | None, returncode: int = 0) -> runner.RawRun:
    """``runner._raw`` over a finished run's side files in ``run_dir`` (a process stand-in with ``returncode``)."""
    proc = cast("subprocess.Popen[bytes]", SimpleNamespace(returncode=returncode))
    return runner._raw(proc, run_dir, msg, timed_out=False, duration=1.0, stray=0)


def test_raw_keeps_the_tails_and_the_last_cell_line(tmp_path: Path) -> None:
    (tmp_path / "stdout.txt").write_text("o" * 5000 + "END")
    (tmp_path / "stderr.txt").write_text("e" * 5000 + "ERR")
    (tmp_path / "faults.txt").write_text("f" * 9000 + "FAULT")
    (tmp_path / "progress.txt").write_text("3\n17\n42\n")
    msg = {"status": {"ok": True}, "record": {"claims": []}}
    raw = raw_after(tmp_path, msg)
    assert raw.stdout_tail == "o" * 3997 + "END"
    assert raw.stderr_tail == "e" * 3997 + "ERR"
    assert raw.faults == "f" * 7995 + "FAULT"
    assert (raw.last_cell_line, raw.status, raw.record) == (42, {"ok": True}, {"claims": []})


@pytest.mark.parametrize("status", [None, "started", ["ok"]])
def test_raw_keeps_a_record_only_beside_a_status(tmp_path: Path, status: Any) -> None:
    for name in ("stdout.txt", "stderr.txt", "faults.txt", "progress.txt"):
        (tmp_path / name).write_text("")
    raw = raw_after(tmp_path, {"status": status, "record": {"claims": []}})
    assert (raw.status, raw.record) == (None, None)


@pytest.mark.parametrize("progress", [None, "", "cell\n"])
def test_raw_without_a_readable_progress_line_says_line_0(tmp_path: Path, progress: str | None) -> None:
    for name in ("stdout.txt", "stderr.txt", "faults.txt"):
        (tmp_path / name).write_text("")
    if progress is not None:
        (tmp_path / "progress.txt").write_text(progress)
    raw = raw_after(tmp_path, None, returncode=1)
    assert (raw.last_cell_line, raw.status, raw.record, raw.returncode) == (0, None, None, 1)


# --- _config and child_env by device ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "mem"),
    [
        (RunOptions(mem_bytes=123, threads=3), 123),
        (RunOptions(device="cuda", fake_cuda="Fake H100", mem_bytes=123, threads=3), 123),
        (RunOptions(device="cuda", mem_bytes=123, threads=3), None),  # a real GPU's memory is not the CPU's
    ],
    ids=["cpu", "fake-cuda", "cuda"],
)
def test_config_for_the_launcher(tmp_path: Path, options: RunOptions, mem: int | None) -> None:
    pkg = Path(qbank.__file__).resolve().parent
    root, script = tmp_path / "repo", tmp_path / "repo" / "verify" / "s.py"
    assert runner._config(script, root, "/run", "/run/work", 2.5, options) == {
        "script": str(script),
        "repo": str(root),
        "run_dir": "/run",
        "work_dir": "/run/work",
        "network": "auto",
        "fs": "auto",
        "mem_bytes": mem,
        "cpu_seconds": 9,  # int(2.5 * 3) + 2
        "fsize_bytes": 256 << 20,
        "output_cap": 1 << 20,
        "timeout": 2.5,
        "exclude": [str(pkg), sys.prefix, sys.base_prefix, str(root / ".git"), str(root / ".qbank")],
        "hide": [],
    }


def test_a_device_name_read_at_run_time_is_compared_by_value(tmp_path: Path) -> None:
    # `--device cpu` reaches the runner as the command line's own string, equal to "cpu" but not the same object
    cpu = "".join(["c", "pu"])
    options = RunOptions(device=cpu, mem_bytes=123)
    assert runner._config(tmp_path / "s.py", tmp_path, "/r", "/r/w", 1.0, options)["mem_bytes"] == 123
    assert child_env(tmp_path, tmp_path / "r", tmp_path / "w", options)["TRITON_INTERPRET"] == "1"


def test_a_cuda_device_read_at_run_time_is_compared_by_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "driver"
    lib.mkdir()
    (lib / "libcuda.so.1").write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(lib))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    env = child_env(tmp_path, tmp_path / "r", tmp_path / "w", RunOptions(device="".join(["cu", "da"])))
    assert (env["CUDA_VISIBLE_DEVICES"], env["TRITON_LIBCUDA_PATH"]) == ("0", str(lib.resolve()))


def test_config_gives_a_script_at_least_one_threads_cpu_time(tmp_path: Path) -> None:
    config = runner._config(tmp_path / "s.py", tmp_path, "/r", "/r/w", 10.0, RunOptions(threads=0))
    assert config["cpu_seconds"] == 12


def test_only_a_real_gpu_run_is_told_where_libcuda_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "driver"
    lib.mkdir()
    (lib / "libcuda.so.1").write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(lib))
    run, work = tmp_path / "run", tmp_path / "work"
    assert child_env(tmp_path, run, work, RunOptions(device="cuda"))["TRITON_LIBCUDA_PATH"] == str(lib.resolve())
    for options in (RunOptions(), RunOptions(device="cuda", fake_cuda="Fake H100")):
        assert "TRITON_LIBCUDA_PATH" not in child_env(tmp_path, run, work, options)


# --- a local run, end to end -----------------------------------------------------------------------------------

STRAY = """import os, time
pid = os.fork()
if pid == 0:
    time.sleep(60)
    os._exit(0)
print("child", pid, flush=True)
"""


def test_a_local_run_counts_its_stray_process_and_ends_it(tmp_path: Path) -> None:
    root, script = repo_with(tmp_path, "stray.py", STRAY)
    before = time.perf_counter()
    raw = run_script(root, script, 30, RunOptions(trust_local=True, static_check=False))
    took = time.perf_counter() - before
    assert (raw.returncode, raw.timed_out, raw.stray) == (0, False, 1), raw
    assert 0 < raw.duration <= took
    assert raw.status is not None
    child = int(raw.status["cells"][0]["outputs"][0]["text"].split()[-1])  # what the script printed
    for _ in range(100):  # killed with its group; reaped by whoever adopted it
        if not Path(f"/proc/{child}").exists() or _state(child) == "Z":
            break
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists() or _state(child) == "Z"


def test_a_local_run_that_leaves_nothing_behind_has_no_stray(tmp_path: Path) -> None:
    root, script = repo_with(tmp_path, "quiet.py", "print('done')\n")
    raw = run_script(root, script, 30, RunOptions(trust_local=True, static_check=False))
    assert (raw.returncode, raw.timed_out, raw.stray, raw.oom_kills, raw.pids_limited) == (0, False, 0, 0, 0), raw
    assert raw.status is not None
    assert raw.status["cells"][0]["outputs"] == [{"name": "stdout", "text": "done\n"}]


@pytest.mark.parametrize("trust_local", [False, True], ids=["bwrap", "local"])
def test_a_reader_still_draining_when_the_script_ends_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trust_local: bool
) -> None:
    """The reader thread may be behind when the script and its group are gone (the pipe holds up to a
    widened buffer): the runner waits for it (1 s) instead of reading an unfinished message as no result.
    A reader held 0.5 s after the end of the pipe stands in for a slow one, in both modes."""
    if not trust_local:
        require("bwrap")

    class SlowChannel(runner._Channel):
        def _read(self) -> None:
            super()._read()
            time.sleep(0.5)  # the pipe is drained; the thread ends 0.5 s later

    monkeypatch.setattr(runner, "_Channel", SlowChannel)
    root, script = repo_with(tmp_path, "quiet.py", "print('done')\n")
    raw = run_script(root, script, 30, RunOptions(trust_local=trust_local, static_check=False))
    assert (raw.returncode, raw.timed_out, raw.stray) == (0, False, 0), raw
    assert raw.status is not None, raw
    assert raw.status["cells"][0]["outputs"] == [{"name": "stdout", "text": "done\n"}]


def test_a_run_that_never_started_counts_no_oom_kill_and_no_refused_fork() -> None:
    raw = runner.RawRun(None, False, 0.0, None, None, "", "", "", 0, 0)
    assert (raw.oom_kills, raw.pids_limited, raw.env_keys) == (0, 0, [])


# --- the bubblewrap run ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "number"), [("SIGHUP", 1), ("SIGKILL", 9)])
def test_a_sandboxed_script_killed_by_a_signal_reports_the_signal(tmp_path: Path, name: str, number: int) -> None:
    """bwrap exits 128 + N when its child dies of signal N; with no message from the launcher, that is -N."""
    require("bwrap")
    root, script = repo_with(tmp_path, "killed.py", f"import os, signal\nos.kill(os.getpid(), signal.{name})\n")
    before = time.perf_counter()
    raw = run_script(root, script, 30, RunOptions(static_check=False))
    took = time.perf_counter() - before
    assert (raw.returncode, raw.timed_out, raw.status, raw.record, raw.stray) == (-number, False, None, None, 0)
    assert 0 < raw.duration <= took


def test_a_sandboxed_script_that_exits_128_is_not_read_as_a_signal(tmp_path: Path) -> None:
    """128 itself is an exit status, not 128 + a signal: only a status above it is turned into -N."""
    require("bwrap")
    root, script = repo_with(tmp_path, "exits.py", "import os\nos._exit(128)\n")
    raw = run_script(root, script, 30, RunOptions(static_check=False))
    assert (raw.returncode, raw.status) == (128, None)


class Stop(Exception):
    """Raised in place of starting the script: the test has what it looks at."""


def no_start(*args: Any, **kw: Any) -> Any:
    raise Stop


@pytest.mark.parametrize(
    ("options", "gpu"),
    [
        (RunOptions(), False),
        (RunOptions(device="cuda", fake_cuda="Fake H100"), False),
        (RunOptions(device="cuda"), True),
        (RunOptions(device="".join(["cu", "da"])), True),
    ],
    ids=["cpu", "fake-cuda", "cuda", "cuda-read-at-run-time"],
)
def test_only_a_real_gpu_run_sees_the_toolchain_and_the_gpu_devices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: RunOptions, gpu: bool
) -> None:
    from qbank.verify.sandbox import bwrap, limits, view

    seen: dict[str, Any] = {}
    build, argv = view.build, bwrap.argv

    def spy_build(*args: Any, **kw: Any) -> Any:
        seen["toolchain"] = kw["toolchain"]
        return build(*args, **{**kw, "toolchain": False})  # this machine may have no toolchain to show

    def spy_argv(plan: Any) -> list[str]:
        seen["devices"] = plan.devices
        return argv(plan)

    monkeypatch.setattr(limits, "create", lambda mem: None)  # no cgroup for a run that never starts
    monkeypatch.setattr(view, "build", spy_build)
    monkeypatch.setattr(view, "gpu_devices", lambda: ["/dev/nvidia0", "/dev/nvidiactl"])
    monkeypatch.setattr(bwrap, "argv", spy_argv)
    monkeypatch.setattr(runner, "_spawn", no_start)
    root, script = repo_with(tmp_path, "s.py", "x = 1\n")
    with pytest.raises(Stop):
        run_script(root, script, 30, options)
    devices = ("/dev/nvidia0", "/dev/nvidiactl") if gpu else ()
    assert seen == {"toolchain": gpu, "devices": devices}


@pytest.mark.parametrize("trust_local", [False, True], ids=["bwrap", "local"])
def test_the_result_channel_holds_eight_outputs_and_16_mib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trust_local: bool
) -> None:
    """The bound on the launcher's message (status with the kept output, and the record), in both modes:
    8 x output_cap + 16 MiB; a longer message is refused (test_channel_over_its_cap_gives_nothing)."""
    from qbank.verify.sandbox import limits

    caps: list[int] = []

    class Channel(runner._Channel):
        def __init__(self, cap: int) -> None:
            caps.append(cap)
            super().__init__(cap)

    monkeypatch.setattr(runner, "_Channel", Channel)
    monkeypatch.setattr(limits, "create", lambda mem: None)
    monkeypatch.setattr(runner, "_spawn", no_start)
    root, script = repo_with(tmp_path, "s.py", "x = 1\n")
    with pytest.raises(Stop):
        run_script(root, script, 30, RunOptions(output_cap=1000, trust_local=trust_local))
    assert caps == [8 * 1000 + 16 * 1024 * 1024]


@pytest.mark.parametrize(("uid", "nproc"), [(54321, 256), (None, None)], ids=["own-user", "no-user"])
def test_the_process_limit_is_set_only_for_a_run_under_its_own_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uid: int | None, nproc: int | None
) -> None:
    """A script switched to its own unprivileged user gets RLIMIT_NPROC of 256 (limits.PIDS_MAX); without a user
    of its own the limit would count the invoking user's processes too, so none is set."""
    import json

    from qbank.verify.sandbox import bwrap, identity, limits

    configs: list[dict[str, Any]] = []
    argv = bwrap.argv

    def spy_argv(plan: Any) -> list[str]:
        configs.append(json.loads(plan.command[-1]))
        return argv(plan)

    monkeypatch.setattr(identity, "job_uid", lambda: uid)
    monkeypatch.setattr(limits, "create", lambda mem: None)
    monkeypatch.setattr(bwrap, "argv", spy_argv)
    monkeypatch.setattr(runner, "_spawn", no_start)
    root, script = repo_with(tmp_path, "s.py", "x = 1\n")
    with pytest.raises(Stop):
        run_script(root, script, 30, RunOptions())
    assert [c["nproc"] for c in configs] == [nproc]


def test_a_run_folder_the_runner_cannot_remove_is_not_the_scripts_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    removed: list[str] = []
    rmtree = shutil.rmtree

    def refusing_rmtree(path: str | Path, ignore_errors: bool = False, **kw: Any) -> None:
        removed.append(str(path))
        if not ignore_errors:
            raise PermissionError(13, "Permission denied", str(path))
        rmtree(path, ignore_errors=True)

    monkeypatch.setattr(shutil, "rmtree", refusing_rmtree)
    root, script = repo_with(tmp_path, "quiet.py", "print('done')\n")
    raw = run_script(root, script, 30, RunOptions(trust_local=True, static_check=False))
    assert raw.returncode == 0
    assert len(removed) == 1 and Path(removed[0]).name.startswith("qbank-verify-")
    assert not Path(removed[0]).exists()


@pytest.mark.parametrize("as_root", [True, False], ids=["root", "user"])
def test_a_cgroup_is_made_and_named_to_the_launcher_only_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_root: bool
) -> None:
    import json

    from qbank.verify.sandbox import bwrap, identity, limits

    made: list[int | None] = []
    configs: list[dict[str, Any]] = []
    argv = bwrap.argv

    def create(mem: int | None) -> limits.Cgroup:
        made.append(mem)
        return limits.Cgroup(dirs=[tmp_path / "cgroup"])  # never written: the run stops before it starts

    def spy_argv(plan: Any) -> list[str]:
        configs.append(json.loads(plan.command[-1]))
        return argv(plan)

    monkeypatch.setattr(identity, "is_root", lambda: as_root)
    monkeypatch.setattr(identity, "job_uid", lambda: 54321 if as_root else None)
    monkeypatch.setattr(limits, "create", create)
    monkeypatch.setattr(bwrap, "argv", spy_argv)
    monkeypatch.setattr(runner, "_spawn", no_start)
    root, script = repo_with(tmp_path, "s.py", "x = 1\n")
    with pytest.raises(Stop):
        run_script(root, script, 30, RunOptions(mem_bytes=123))
    assert made == ([123] if as_root else [])
    assert [c["cgroup"] for c in configs] == [as_root]


@pytest.mark.parametrize("trust_local", [False, True], ids=["bwrap", "local"])
def test_a_run_whose_start_fails_leaves_no_descriptor_and_no_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trust_local: bool
) -> None:
    """A start that raises (bubblewrap or the interpreter cannot be executed) closes every pipe and side file
    the run opened and removes the cgroup made for it (as root, where one is made)."""
    from qbank.verify.sandbox import identity, limits

    removed: list[limits.Cgroup] = []
    made: list[limits.Cgroup] = []

    def create(mem: int | None) -> limits.Cgroup:
        made.append(limits.Cgroup(dirs=[tmp_path / "cgroup"]))
        return made[-1]

    monkeypatch.setattr(identity, "is_root", lambda: True)
    monkeypatch.setattr(limits, "create", create)
    monkeypatch.setattr(limits.Cgroup, "remove", lambda self: removed.append(self))
    monkeypatch.setattr(runner, "_spawn", no_start)
    root, script = repo_with(tmp_path, "s.py", "x = 1\n")
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(Stop):
        run_script(root, script, 30, RunOptions(trust_local=trust_local, static_check=False))
    assert sorted(os.listdir("/proc/self/fd")) == before
    assert removed == made == ([] if trust_local else [limits.Cgroup(dirs=[tmp_path / "cgroup"])])


@pytest.mark.parametrize("trust_local", [False, True], ids=["bwrap", "local"])
def test_a_run_leaves_no_descriptor_open(tmp_path: Path, trust_local: bool) -> None:
    if not trust_local:
        require("bwrap")
    root, script = repo_with(tmp_path, "quiet.py", "print('done')\n")
    before = sorted(os.listdir("/proc/self/fd"))
    raw = run_script(root, script, 30, RunOptions(trust_local=trust_local, static_check=False))
    assert raw.returncode == 0
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_a_sandboxed_run_without_a_cgroup_counts_no_oom_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a cgroup (not root, or none to be had) nothing counts OOM kills: a SIGKILL is not one."""
    require("bwrap")
    from qbank.verify.sandbox import limits

    monkeypatch.setattr(limits, "create", lambda mem: None)
    root, script = repo_with(tmp_path, "killed.py", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    raw = run_script(root, script, 30, RunOptions(static_check=False))
    assert (raw.returncode, raw.oom_kills, raw.pids_limited) == (-9, 0, 0)


def test_kill_all_ends_every_live_script_group(group: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    first, (first_child,) = group(SAME_GROUP)
    second, (second_child,) = group(SAME_GROUP)
    monkeypatch.setattr(runner, "LIVE", {first, second})
    runner.kill_all()
    for pid in (first_child, second_child):
        for _ in range(100):
            if not Path(f"/proc/{pid}").exists() or _state(pid) == "Z":
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"
