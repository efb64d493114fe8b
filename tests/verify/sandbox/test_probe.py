"""The wall's availability probe with bubblewrap's start replaced: each answer it gives, and that it starts
bubblewrap once per path and leaves no descriptor open."""

from __future__ import annotations

import os
import subprocess
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qbank.verify.sandbox import probe, seccomp


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    probe._missing.cache_clear()
    yield
    probe._missing.cache_clear()


@pytest.fixture
def fake_bwrap(tmp_path: Path) -> str:
    path = tmp_path / "bwrap"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


class Starts:
    """subprocess.run as the probe calls it: records each call, answers with ``result`` or raises it."""

    def __init__(self, result: Any) -> None:
        self.result, self.calls = result, []  # type: ignore[var-annotated]

    def __call__(self, cmd: list[str], **kw: Any) -> Any:
        self.calls.append((cmd, kw))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


def done(code: int, stderr: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.CompletedProcess([], code, b"", stderr)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_one_start_per_path_and_nothing_left_open(fake_bwrap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    starts = Starts(done(0))
    monkeypatch.setattr(subprocess, "run", starts)
    before = open_fds()
    assert probe.missing(fake_bwrap) is None and probe.missing(fake_bwrap) is None
    assert len(starts.calls) == 1 and open_fds() == before
    os.fstat(0)  # standard input is still open
    cmd, kw = starts.calls[0]
    assert cmd[-2:] == ["--", "/usr/bin/true"] and fake_bwrap in cmd and kw["timeout"] == 30
    assert kw["env"] == {"PATH": "/usr/bin:/bin"} and len(kw["pass_fds"]) == 1


def test_a_file_that_is_not_executable_is_not_bubblewrap(tmp_path: Path) -> None:
    path = tmp_path / "bwrap"
    path.write_text("")
    path.chmod(0o644)
    assert probe.missing(str(path)) == f"bubblewrap is not installed ({path} is missing)"


def test_no_seccomp_no_wall(fake_bwrap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> bytes:
        raise seccomp.SeccompUnavailable("libseccomp is absent")

    monkeypatch.setattr(seccomp, "compile_filter", refuse)
    assert probe.missing(fake_bwrap) == "no seccomp filter: libseccomp is absent"


@pytest.mark.parametrize("failure", [OSError(8, "Exec format error"), subprocess.TimeoutExpired("bwrap", 30)])
def test_bubblewrap_that_cannot_start(fake_bwrap: str, monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    monkeypatch.setattr(subprocess, "run", Starts(failure))
    before = open_fds()
    assert probe.missing(fake_bwrap) == f"bubblewrap could not start: {failure}"
    assert open_fds() == before


@pytest.mark.parametrize(("code", "stderr", "why"), [
    (1, b"bwrap: setting up uid map: Permission denied\nbwrap: No permissions to create new namespace\n",
     "bwrap: No permissions to create new namespace"),
    (-9, b"", "no message"),  # killed by a signal: a negative status, and nothing said
])
def test_a_failed_start_says_its_last_line(
    fake_bwrap: str, monkeypatch: pytest.MonkeyPatch, code: int, stderr: bytes, why: str
) -> None:
    monkeypatch.setattr(subprocess, "run", Starts(done(code, stderr)))
    assert probe.missing(fake_bwrap) == (
        f"bubblewrap cannot build the sandbox here (user namespaces refused?): {why}")


def test_a_failed_write_closes_both_ends(fake_bwrap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def write(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    shim = types.SimpleNamespace(**{name: getattr(os, name) for name in ("pipe", "close", "path", "access", "X_OK")},
                                 write=write)
    monkeypatch.setattr(probe, "os", shim)
    before = open_fds()
    with pytest.raises(OSError, match="No space left"):
        probe.missing(fake_bwrap)
    assert open_fds() == before
