"""A run's cgroup (``verify/sandbox/limits.py``) against a cgroup tree made of plain folders and files under
tmp_path (``CGROOT`` pointed there): what each answer reads, what ``create`` writes, and the join prefix run by
``/bin/sh``. Signals and sleeps go to recorders; no real cgroup is made."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from qbank.verify.sandbox import limits
from qbank.verify.sandbox.limits import Cgroup


def test_the_process_limit() -> None:
    assert limits.PIDS_MAX == 256
    assert Path("/sys/fs/cgroup") == limits.CGROOT


def _group(tmp_path: Path, *names: str, v2: bool = False) -> Cgroup:
    dirs = [tmp_path / n for n in names]
    for d in dirs:
        d.mkdir(parents=True)
    return Cgroup(dirs=dirs, v2=v2)


def test_procs_files_name_every_group(tmp_path: Path) -> None:
    group = _group(tmp_path, "pids/g", "memory/g")
    assert group.procs_files == [str(tmp_path / "pids/g/cgroup.procs"), str(tmp_path / "memory/g/cgroup.procs")]
    assert Cgroup().procs_files == [] and Cgroup().v2 is False


def test_counters_read_from_the_first_group_that_has_the_file(tmp_path: Path) -> None:
    group = _group(tmp_path, "pids/g", "memory/g")
    assert group.pids_limited() == 0 and group.oom_kills() == 0  # no file anywhere
    (tmp_path / "pids/g/pids.events").write_text("max 3\n")
    (tmp_path / "memory/g/pids.events").write_text("max 9\n")
    (tmp_path / "memory/g/memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert group.pids_limited() == 3
    assert group.oom_kills() == 2


def test_v2_counts_oom_kills_from_memory_events(tmp_path: Path) -> None:
    group = _group(tmp_path, "own/g", v2=True)
    d = tmp_path / "own/g"
    (d / "memory.oom_control").write_text("oom_kill 7\n")  # the v1 file: not read by a v2 group
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\noom_group_kill 0\n")
    (d / "pids.events").write_text("max 300\n")
    assert group.oom_kills() == 1
    assert group.pids_limited() == 300


@pytest.mark.parametrize(
    ("text", "key", "count"),
    [
        ("max 5", "max", 5),
        ("oom 1\noom_kill 4\n", "oom_kill", 4),
        ("oom_kill 4\noom_kill 6\n", "oom_kill", 4),  # the first line of the key
        ("max 5 6\nmax 7", "max", 7),  # three fields: not a counter line
        ("max\nmax 8", "max", 8),
        ("max x\nmax -1\nmax 9", "max", 9),
        ("maxi 5\nmax 0", "max", 0),
        ("oom_kill 3", "max", 0),
        ("", "max", 0),
    ],
)
def test_counter(text: str, key: str, count: int) -> None:
    assert limits._counter(text, key) == count


def test_pids_are_the_union_of_every_group_sorted(tmp_path: Path) -> None:
    group = _group(tmp_path, "pids/g", "memory/g", "other/g")
    (tmp_path / "pids/g/cgroup.procs").write_text("40\n7\n300\n")
    (tmp_path / "memory/g/cgroup.procs").write_text("7\n12\n")
    (tmp_path / "other/g/cgroup.procs").write_text("not-a-pid\n5\n")  # unreadable as pids: the rest skipped
    assert group.pids() == [7, 12, 40, 300]
    assert Cgroup(dirs=[tmp_path / "absent"]).pids() == []


@pytest.fixture
def signals(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    sent: list[tuple[int, int]] = []

    def kill(pid: int, sig: int) -> None:
        sent.append((pid, sig))
        if pid == 13:
            raise ProcessLookupError
        if pid == 14:
            raise PermissionError

    monkeypatch.setattr(os, "kill", kill)
    return sent


def test_kill_sends_sigkill_to_every_pid_three_times_over(tmp_path: Path, signals: list[tuple[int, int]]) -> None:
    group = _group(tmp_path, "pids/g")
    (tmp_path / "pids/g/cgroup.procs").write_text("14\n13\n12\n")
    group.kill()
    assert signals == [(12, 9), (13, 9), (14, 9)] * 3
    assert not (tmp_path / "pids/g/cgroup.kill").exists()  # v1 has no cgroup.kill


def test_v2_kill_writes_cgroup_kill_first(tmp_path: Path, signals: list[tuple[int, int]]) -> None:
    group = _group(tmp_path, "own/g", v2=True)
    group.kill()
    assert (tmp_path / "own/g/cgroup.kill").read_text() == "1"
    assert signals == []
    Cgroup(dirs=[tmp_path / "gone"], v2=True).kill()  # a group already gone: its write error is swallowed


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    return slept


def test_remove_removes_each_group(tmp_path: Path, signals: list[tuple[int, int]], sleeps: list[float]) -> None:
    group = _group(tmp_path, "pids/g", "memory/g")
    group.dirs.insert(1, tmp_path / "never-made")  # already gone: nothing to wait for
    group.remove()
    assert not (tmp_path / "pids/g").exists() and not (tmp_path / "memory/g").exists()
    assert sleeps == [] and signals == []


def test_remove_kills_first(
    tmp_path: Path, signals: list[tuple[int, int]], sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    group = _group(tmp_path, "pids/g")
    procs = tmp_path / "pids/g/cgroup.procs"
    procs.write_text("12\n")

    def torn_down(seconds: float) -> None:  # the killed process leaves; its group empties
        sleeps.append(seconds)
        procs.unlink()

    monkeypatch.setattr(time, "sleep", torn_down)
    group.remove()
    assert signals == [(12, 9)] * 3
    assert sleeps == [0.002] and not (tmp_path / "pids/g").exists()


def test_remove_waits_longer_each_time_while_busy(
    tmp_path: Path, signals: list[tuple[int, int]], sleeps: list[float]
) -> None:
    group = _group(tmp_path, "pids/g", "memory/g")
    (tmp_path / "pids/g/busy").write_text("")  # rmdir fails (not empty) as it does with EBUSY
    group.remove()
    assert sleeps == pytest.approx([0.002 * n for n in range(1, 51)])
    assert (tmp_path / "pids/g").exists() and not (tmp_path / "memory/g").exists()


def test_remove_stops_waiting_once_the_group_is_gone(
    tmp_path: Path, signals: list[tuple[int, int]], sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    group = _group(tmp_path, "pids/g")
    busy = tmp_path / "pids/g/busy"
    busy.write_text("")

    def wait(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 3:
            busy.unlink()

    monkeypatch.setattr(time, "sleep", wait)
    group.remove()
    assert sleeps == pytest.approx([0.002, 0.004, 0.006])
    assert not (tmp_path / "pids/g").exists()


# --- create


NAME = re.compile(r"qbank-verify-[0-9a-f]{12}")


@pytest.fixture
def v1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for controller in ("pids", "memory"):
        (tmp_path / controller).mkdir()
        (tmp_path / controller / "cgroup.procs").write_text("")
    monkeypatch.setattr(limits, "CGROOT", tmp_path)
    return tmp_path


def test_v1_group_with_both_limits(v1: Path) -> None:
    group = limits.create(1 << 30, pids_max=64)
    assert group is not None and group.v2 is False
    assert len(group.dirs) == 2
    pids, mem = group.dirs
    assert NAME.fullmatch(pids.name) and mem.name == pids.name
    assert pids.parent == v1 / "pids" and mem.parent == v1 / "memory"
    assert (pids / "pids.max").read_text() == "64"
    assert (mem / "memory.limit_in_bytes").read_text() == str(1 << 30)


def test_v1_group_defaults_to_pids_max(v1: Path) -> None:
    group = limits.create(None)
    assert group is not None
    assert [d.parent for d in group.dirs] == [v1 / "pids"]  # no memory limit asked: no memory group
    assert (group.dirs[0] / "pids.max").read_text() == "256"
    assert not list((v1 / "memory").glob("qbank-verify-*"))
    again = limits.create(0)
    assert again is not None and [d.parent for d in again.dirs] == [v1 / "pids"]
    assert again.dirs[0] != group.dirs[0]  # a fresh name each time


def test_v1_without_the_memory_controller(v1: Path) -> None:
    (v1 / "memory" / "cgroup.procs").unlink()
    group = limits.create(1 << 20)
    assert group is not None and [d.parent for d in group.dirs] == [v1 / "pids"]


def test_v1_failure_removes_what_was_made(v1: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    removed: list[list[Path]] = []
    monkeypatch.setattr(Cgroup, "remove", lambda self: removed.append(list(self.dirs)))
    monkeypatch.setattr(secrets, "token_hex", lambda n: "ab" * n)
    (v1 / "memory" / f"qbank-verify-{'ab' * 6}").write_text("")  # the memory group cannot be made
    assert limits.create(1 << 20) is None
    assert removed == [[v1 / "pids" / f"qbank-verify-{'ab' * 6}"]]


@pytest.fixture
def v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A v2 tree: this process's own group is /sys/fs/cgroup/job/a (from a fake /proc/self/cgroup)."""
    own = tmp_path / "cg" / "job" / "a"
    own.mkdir(parents=True)
    (own / "cgroup.subtree_control").write_text("pids memory\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text("1:name=systemd:/x\n0::/job/a\n")
    real = Path
    monkeypatch.setattr(limits, "Path", lambda p: proc if p == "/proc/self/cgroup" else real(p))
    monkeypatch.setattr(limits, "CGROOT", tmp_path / "cg")
    return own


def test_own_v2_group(v2: Path, tmp_path: Path) -> None:
    assert limits._own_v2() == v2
    (tmp_path / "proc-self-cgroup").write_text("0::/\n")
    assert limits._own_v2() == tmp_path / "cg"
    (tmp_path / "proc-self-cgroup").write_text("3:pids:/x\n10::/y\n")  # no unified line
    assert limits._own_v2() is None
    (tmp_path / "proc-self-cgroup").unlink()
    assert limits._own_v2() is None


def test_v2_group_with_both_limits(v2: Path) -> None:
    group = limits.create(1 << 30, pids_max=32)
    assert group is not None and group.v2 is True and len(group.dirs) == 1
    d = group.dirs[0]
    assert d.parent == v2 and NAME.fullmatch(d.name)
    assert (d / "pids.max").read_text() == "32"
    assert (d / "memory.max").read_text() == str(1 << 30)


def test_v2_group_without_a_memory_limit(v2: Path) -> None:
    group = limits.create(None)
    assert group is not None
    assert (group.dirs[0] / "pids.max").read_text() == "256"
    assert not (group.dirs[0] / "memory.max").exists()


def test_v2_without_delegation_or_own_group(v2: Path, tmp_path: Path) -> None:
    (v2 / "cgroup.subtree_control").unlink()
    assert limits.create(1 << 20) is None
    assert not list(v2.glob("qbank-verify-*"))
    (tmp_path / "proc-self-cgroup").write_text("")
    assert limits.create(1 << 20) is None


def test_v2_failure_removes_what_was_made(v2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    removed: list[list[Path]] = []
    monkeypatch.setattr(Cgroup, "remove", lambda self: removed.append(list(self.dirs)))
    monkeypatch.setattr(secrets, "token_hex", lambda n: "cd" * n)
    name = f"qbank-verify-{'cd' * 6}"
    write_text = Path.write_text

    def refuse_memory(self: Path, text: str) -> int:
        if self.name == "memory.max":  # the memory controller not enabled for the group: the write fails
            raise PermissionError(13, "Permission denied")
        return write_text(self, text)

    monkeypatch.setattr(Path, "write_text", refuse_memory)
    assert limits.create(1 << 20) is None
    assert removed == [[v2 / name]]
    assert (v2 / name / "pids.max").read_text() == "256"


def test_v1_is_preferred_when_both_are_there(v1: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "_own_v2", lambda: tmp_path)
    (tmp_path / "cgroup.subtree_control").write_text("")
    group = limits.create(None)
    assert group is not None and group.v2 is False


# --- joining


def test_no_group_no_prefix() -> None:
    assert limits.join_prefix(None) == []


def test_join_prefix_writes_its_pid_to_every_group_then_execs(tmp_path: Path) -> None:
    group = _group(tmp_path, "pids/g", "memory/g")
    files = group.procs_files
    prefix = limits.join_prefix(group)
    assert prefix == [
        "/bin/sh",
        "-c",
        'echo $$ > "$1" && echo $$ > "$2" && shift 2 && exec "$@"',
        "qbank-join",
        *files,
    ]
    out = subprocess.run([*prefix, "/bin/sh", "-c", "echo $$"], capture_output=True, text=True, check=True).stdout
    pid = out.strip()
    assert [Path(f).read_text() for f in files] == [f"{pid}\n", f"{pid}\n"]  # the same process, before exec


def test_join_prefix_of_one_group(tmp_path: Path) -> None:
    group = _group(tmp_path, "own/g", v2=True)
    assert limits.join_prefix(group) == [
        "/bin/sh",
        "-c",
        'echo $$ > "$1" && shift 1 && exec "$@"',
        "qbank-join",
        str(tmp_path / "own/g/cgroup.procs"),
    ]
